"""The lesson's state machine as the dashboard draws it: the allowlist the handout teaches.

The same data the checks judge every tree by (labs/checking/checks.py), never solution/'s:
the dashboard also runs in the learners' release, which has no solution
(tests/grading/test_release.py checks that the solution agrees with it).
"""

from __future__ import annotations

from labs.checking.checks import LESSON_MOVES as LESSON_ALLOWED_STATUSES

__all__ = ["LESSON_ALLOWED_STATUSES"]
