"""Text that comes from a learner's process: capped as it is read, cleaned before it is shown.

A learner's exception message, a folder name or a flood on stderr reaches
the grader's terminal table, CSV, Markdown and results.json, the CLI's
failure lines and the dashboard's pages. `CappedOutput` keeps a child's
stream as a head and a tail of bounded size, for the kit and the dashboard
alike; `clean_text` takes out what could rewrite a terminal, hide in a cell,
make text read differently from what it is, or fail to encode.
"""

from __future__ import annotations

import re
import threading

# Terminal escapes: CSI (ESC [ or the one-byte CSI), OSC up to BEL or ST (ESC \ or the
# one-byte ST) or to the end, then any other two-character ESC sequence.
ESCAPES = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]"
    r"|\x9b[0-?]*[ -/]*[@-~]"
    r"|(?:\x1b\]|\x9d)[^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
)
# Control characters (C0 but the newline, DEL, C1), and the marks, embeddings, overrides
# and isolates of bidirectional text, which can make a line read differently from what it is.
CONTROLS = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]")
# Line and paragraph separators, which some terminals and viewers treat as newlines.
SEPARATORS = re.compile("[\u2028\u2029\x85]")
# Half of a UTF-16 pair on its own: JSON can carry one, and no file or terminal can encode it.
# Those from U+DC80 to U+DCFF are how Python keeps the bytes of a name that is not UTF-8.
SURROGATES = re.compile("[\ud800-\udfff]")
# What Markdown reads as markup in running text or a table cell: HTML, entities, links and
# images, emphasis, code and strikethrough, the cell's edge, and a backslash that escapes.
MARKUP = re.compile(r"[<>&\[\]*_`~|]|\\(?=[!-/:-@\[-`{-~])")


def _escaped(match: re.Match[str]) -> str:
    """A byte of a non-UTF-8 name as \\xNN; any other lone surrogate as U+FFFD."""
    code = ord(match.group())
    return f"\\x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else "\ufffd"


def clean_text(text: object, limit: int | None = None, *, keep_newlines: bool = False) -> str:
    """Untrusted text made safe to print or write: no escapes, no control characters.

    A carriage return, a bell, a backspace or an ANSI sequence in a learner's
    exception message could rewrite a terminal table or a CSV cell; a bidi
    override could make it read backwards; a lone surrogate would fail to
    encode. All go: a byte of a file name that is not UTF-8 (which Python
    keeps as a surrogate) is written as `\\xNN`, any other lone surrogate
    becomes U+FFFD. Tabs become spaces;
    newlines stay only when asked for (multi-line output), else each becomes a
    space. With a limit, longer text is cut to that many characters, the
    last one an ellipsis.
    """
    value = SURROGATES.sub(_escaped, str(text))
    value = ESCAPES.sub("", value).replace("\t", " ").replace("\r\n", "\n")
    value = SEPARATORS.sub("\n", value)
    if not keep_newlines:
        value = value.replace("\n", " ")
    value = CONTROLS.sub("", value)
    return clip(value, limit) if limit is not None else value


def markdown_text(text: object) -> str:
    """Untrusted text as Markdown that shows it as written: one line, no HTML, link or cell break.

    Cleaned as clean_text cleans, then every character Markdown reads as
    markup gets a backslash, CommonMark's escape for ASCII punctuation: a
    name like `<img src=x onerror=…>` shows as written instead of running, a
    `|` stays inside its table cell, `![x](url)` fetches nothing. A backslash
    is doubled only before punctuation, where it would escape the next character.
    """
    return MARKUP.sub(r"\\\g<0>", clean_text(text))


def clip(text: str, limit: int) -> str:
    """text cut to at most limit characters, the last one an ellipsis when it was cut."""
    if limit < 1:
        return ""
    return text if len(text) <= limit else text[: limit - 1] + "…"


class CappedOutput:
    """The head and the tail of a child's byte stream, the middle dropped past a limit.

    The first limit/2 bytes stay, then only the newest limit/2: memory stays
    bounded however much the child writes, and both the start of its output
    and the traceback it ended with are kept. Safe to feed from one thread
    and read from another.
    """

    def __init__(self, limit: int) -> None:
        if limit < 2:
            raise ValueError(f"limit must be at least 2 bytes, not {limit}")
        self.limit = limit
        self._head = bytearray()
        self._tail = bytearray()
        self.dropped = 0  # bytes left out between head and tail
        self._lock = threading.Lock()

    @property
    def held(self) -> int:
        """How many bytes the buffer holds now (never more than limit)."""
        return len(self._head) + len(self._tail)

    def feed(self, data: bytes) -> None:
        """Take one chunk read from the child."""
        with self._lock:
            room = self.limit // 2 - len(self._head)
            if room > 0:
                self._head += data[:room]
                data = data[room:]
            keep = self.limit - self.limit // 2
            if len(data) >= keep:
                self.dropped += len(self._tail) + len(data) - keep
                self._tail[:] = data[-keep:]
                return
            self._tail += data
            excess = len(self._tail) - keep
            if excess > 0:
                del self._tail[:excess]
                self.dropped += excess

    def text(self) -> str:
        """Everything kept, decoded, with a line saying how much was left out (untrusted text)."""
        with self._lock:
            head, tail, dropped = bytes(self._head), bytes(self._tail), self.dropped
        said = head.decode("utf-8", "replace")
        if dropped:
            said += f"\n… {dropped} bytes of output left out …\n"
        return said + tail.decode("utf-8", "replace")

    def last(self, size: int) -> str:
        """The newest size bytes kept, decoded: where a crash's traceback is (untrusted text)."""
        with self._lock:
            kept = bytes(self._tail) if self.dropped else bytes(self._head + self._tail)
        return kept[-size:].decode("utf-8", "replace") if size > 0 else ""
