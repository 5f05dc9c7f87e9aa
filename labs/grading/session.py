"""What every grading run does first, whichever way it was started.

`python -m labs grade` (a class), the pinned pytest entry and its plugin (one
tree), and a platform's autograde run all grade in English (grades are records
an instructor compares and programs read), keep what they write to the grader
(GRADER_UMASK), and refuse to start where the machine gives the learner's code
no sandbox, or not the one asked for.
"""

from __future__ import annotations

import os

from labs.sandbox.limits import Isolation
from labs.sandbox.modes import allow_unsafe, require_isolation
from labs.term import i18n

from .outputs import GRADER_UMASK


def begin_grading(*, unsafe: bool = False, bwrap: bool = False) -> Isolation:
    """Set this process up to grade; return the isolation it grades with.

    unsafe allows grading without a sandbox (the instructor's call); bwrap
    (--require-bwrap) asks for bubblewrap's mode. NoIsolationError when the
    machine gives what neither allows.
    """
    i18n.use(i18n.ENGLISH)
    os.umask(GRADER_UMASK)
    allow_unsafe(unsafe)
    return require_isolation(bwrap=bwrap)
