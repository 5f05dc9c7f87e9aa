"""Single keys at a terminal: a key counts when pressed, without Enter.

The terminal is put in cbreak mode only while a key is awaited, and only when
the stream is a terminal. From a pipe or a file (a script, a test) the same
prompts read lines instead, so piped answers still work.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TextIO

END_OF_INPUT = "\x04"  # Ctrl-D, which cbreak mode passes through as a character


def is_terminal(stream: TextIO) -> bool:
    """Whether the stream is a terminal a person types at."""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no such method, or closed
        return False


@contextlib.contextmanager
def single_keys(stream: TextIO) -> Iterator[None]:
    """Let keys arrive one at a time without Enter, when stream is a terminal; restore after."""
    try:
        import termios
        import tty

        descriptor = stream.fileno()
        if not stream.isatty():
            raise OSError("not a terminal")
        saved = termios.tcgetattr(descriptor)
    except (ImportError, OSError, ValueError, AttributeError):  # a pipe, a file, Windows
        yield
        return
    # TCSANOW, not setcbreak's default TCSAFLUSH: a key typed just before this keeps.
    tty.setcbreak(descriptor, termios.TCSANOW)
    try:
        yield
    finally:
        termios.tcsetattr(descriptor, termios.TCSADRAIN, saved)


def read_choice(stream: TextIO) -> str | None:
    """The answer to a one-key prompt, or None at the end of input.

    At a terminal: the key pressed, at once. From a pipe or a file: the first
    character of the next line. Enter alone (or an empty line) gives "".
    """
    if is_terminal(stream):
        with single_keys(stream):
            key = stream.read(1)
        return None if key in ("", END_OF_INPUT) else key.strip()
    line = stream.readline()
    return None if line == "" else line.strip()[:1]
