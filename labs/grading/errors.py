"""The grading package's errors: a hand-in that cannot be graded, a migration, a criterion,
and a database the grader may not grade on."""

from __future__ import annotations


class BrokenSubmissionError(Exception):
    """The submission cannot be graded at all: it does not unpack, or holds no tree."""


class MigrationFailedError(Exception):
    """The submission's migration could not be applied; the message says why."""


class CriterionFailedError(Exception):
    """The submission did not meet a criterion: a grade, not an error of the run."""


class GradingRefusedError(Exception):
    """The database cannot be graded on as given: the grading machine's failure, not the learner's.

    The message names what is missing and, where one command grants it, that command.
    """
