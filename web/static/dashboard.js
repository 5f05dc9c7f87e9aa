// The dashboard's only script of its own: a check row that a poll brings again keeps the open
// state the reader gave it (htmx swaps the new row in place of the old one, closed).
document.addEventListener("htmx:oobBeforeSwap", (event) => {
  const { target, fragment } = event.detail;
  const incoming = fragment && fragment.firstElementChild;
  if (target.matches("details[open]") && incoming && incoming.matches("details")) {
    incoming.setAttribute("open", "");
  }
});
