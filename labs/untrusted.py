"""Text that comes from a learner's process: cleaned before it is shown, capped as it is read.

A learner's exception message, a folder name or a flood on stderr reaches
the grader's terminal table, CSV, Markdown and results.json. `clean_text`
takes out what could rewrite a terminal or hide in a cell; `CappedOutput`
keeps a child's stream as a head and a tail of bounded size.
"""

from __future__ import annotations

import re

# Terminal escapes (CSI, OSC, other ESC sequences), then any control character left.
ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\\\)?|\x1b[@-_]?|\x9b[0-?]*[ -/]*[@-~]"
)
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def clean_text(text: str, *, keep_newlines: bool = False) -> str:
    """Untrusted text made safe to print or write: no escapes, no control characters.

    A carriage return, a bell, a backspace or an ANSI sequence in a learner's
    exception message could rewrite a terminal table or a CSV cell; all go.
    Tabs become spaces; newlines stay only when asked for (multi-line output).
    """
    text = ESCAPES.sub("", text).replace("\t", " ")
    if not keep_newlines:
        text = text.replace("\r\n", " ").replace("\n", " ")
    return CONTROLS.sub("", text.replace("\r\n", "\n") if keep_newlines else text)


class CappedOutput:
    """A child's stream kept as head and tail up to a cap; the middle is counted, not kept."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0

    def feed(self, chunk: bytes) -> None:
        """Take one chunk read from the child."""
        room = self.cap - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        self.tail += chunk
        if len(self.tail) > self.cap:
            self.dropped += len(self.tail) - self.cap
            del self.tail[: len(self.tail) - self.cap]

    def text(self) -> str:
        """What was kept, decoded and cleaned of control characters (untrusted text)."""
        cut = f"\n[... {self.dropped} bytes not kept ...]\n" if self.dropped else ""
        raw = self.head.decode("utf-8", "replace") + cut + self.tail.decode("utf-8", "replace")
        return clean_text(raw, keep_newlines=True)
