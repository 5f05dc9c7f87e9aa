"""Single keys at a terminal (watch's q, r and h): a key counts when pressed, without Enter.

The terminal is put in cbreak mode only while keys are awaited, and only when
the stream is a terminal; from a pipe or a file (a script, a test) nothing changes.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import TextIO


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
