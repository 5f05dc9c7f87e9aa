// The dashboard's only script of its own. A check row that a poll brings again keeps the open
// state the reader gave it (htmx swaps the new row in place of the old one, closed), and a
// row that arrives open fetches its diagram as a row just opened does.
document.addEventListener("htmx:oobBeforeSwap", (event) => {
  const { target, fragment } = event.detail;
  const incoming = fragment && fragment.firstElementChild;
  if (target.matches("details[open]") && incoming && incoming.matches("details")) {
    incoming.setAttribute("open", "");
  }
});
document.addEventListener("htmx:load", (event) => {
  const row = event.detail.elt;
  if (row.matches && row.matches("details[open]") && row.querySelector(".diagram-slot")) {
    row.dispatchEvent(new Event("toggle"));
  }
});
