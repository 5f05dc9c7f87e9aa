// The dashboard's only script of its own. A check row that a poll brings again keeps the open
// state the reader gave it (htmx swaps the new row in place of the old one, closed), and a
// row that arrives open fetches its diagram as a row just opened does. A box whose inside a
// poll draws again (the runs page's graph) keeps its open details the same way, by id.
document.addEventListener("htmx:oobBeforeSwap", (event) => {
  const { target, fragment } = event.detail;
  if (!fragment) {
    return;
  }
  const incoming = fragment.firstElementChild;
  if (target.matches("details[open]") && incoming && incoming.matches("details")) {
    incoming.setAttribute("open", "");
  }
  for (const open of target.querySelectorAll("details[open][id]")) {
    const same = fragment.querySelector(`#${CSS.escape(open.id)}`);
    if (same) {
      same.setAttribute("open", "");
    }
  }
});
document.addEventListener("htmx:load", (event) => {
  const row = event.detail.elt;
  if (row.matches && row.matches("details[open]") && row.querySelector(".diagram-slot")) {
    row.dispatchEvent(new Event("toggle"));
  }
  if (row.matches && row.matches("figure.sequence")) {
    showFirstMark(row);
  }
});
// A diagram wider than its box (a phone) scrolls sideways inside it: it opens at the first
// marked step (a replay, a refusal, an error, something let through), so the failure is in
// sight without scrolling.
function showFirstMark(figure) {
  const picture = figure.querySelector(".picture");
  const marked = figure.querySelector(
    ".arrow.replay line, .arrow.refused line, .arrow.error line, .arrow.through line",
  );
  if (!picture || !marked || picture.scrollWidth <= picture.clientWidth) {
    return;
  }
  const left = Math.min(marked.x1.baseVal.value, marked.x2.baseVal.value);
  picture.scrollLeft = Math.max(0, left - 24);
}
// The runs page: a poll or a button swaps rows in above the reader's place, and the rows may
// change height as they change state. The control the reader is on (or else the first row in
// sight) stays where it was on the screen: the page scrolls by what moved it. The browser's
// own scroll anchoring is off there (dashboard.css), as it would pick a row that a swap removes.
// The page scrolls by whole pixels while rows may move by fractions of one, so the place aimed
// at is kept from swap to swap for as long as the reader stays there: the leftovers never add up.
let runsKept = null;
let runsAim = null;
document.addEventListener("htmx:beforeSwap", () => {
  const live = document.getElementById("runs-live");
  runsKept = null;
  if (!live) {
    return;
  }
  const focused = document.activeElement;
  const reference =
    focused && focused.id && live.contains(focused)
      ? focused
      : [...live.querySelectorAll("#runs-body tr[id]")].find(
          (row) => row.getBoundingClientRect().top >= 0,
        );
  if (reference) {
    const top = reference.getBoundingClientRect().top;
    const stayed = runsAim && runsAim.id === reference.id && Math.abs(runsAim.top - top) < 1;
    runsKept = stayed ? runsAim : { id: reference.id, top };
  }
});
document.addEventListener("htmx:afterSwap", () => {
  const again = runsKept && document.getElementById(runsKept.id);
  if (again) {
    window.scrollBy(0, again.getBoundingClientRect().top - runsKept.top);
  }
  runsAim = again ? runsKept : null;
  runsKept = null;
});
