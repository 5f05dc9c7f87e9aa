"""The grading package's errors: a hand-in that cannot be graded, a migration, a criterion."""

from __future__ import annotations


class BrokenSubmissionError(Exception):
    """The submission cannot be graded at all: it does not unpack, or holds no tree."""


class MigrationFailedError(Exception):
    """The submission's migration could not be applied; the message says why."""


class CriterionFailedError(Exception):
    """The submission did not meet a criterion: a grade, not an error of the run."""
