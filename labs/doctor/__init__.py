"""`python -m labs doctor`: what a learner's or an instructor's machine has, and what to fix.

Each item is one Finding: ok, fix (something a command needs is missing:
the exit code is 1), warn (it works, but not as it should: grades may
differ, or something may log in that should not), or info (said for the
record). environment.py looks at the Python installation and the machine,
database.py at the server DATABASE_URL names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Verdict = Literal["ok", "fix", "warn", "info"]


@dataclass(frozen=True)
class Finding:
    """One line of the doctor's report."""

    verdict: Verdict
    text: str

    @property
    def needs_fixing(self) -> bool:
        """Whether something a command needs is missing."""
        return self.verdict == "fix"
