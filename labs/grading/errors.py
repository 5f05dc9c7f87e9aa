"""The grading package's errors: a hand-in, a migration, a criterion, an output, and a
database the grader may not grade on."""

from __future__ import annotations


class BrokenSubmissionError(Exception):
    """The submission cannot be graded at all: it does not unpack, or holds no tree."""


class MigrationFailedError(Exception):
    """The submission's migration could not be applied; the message says why."""


class CriterionFailedError(Exception):
    """The submission did not meet a criterion: a grade, not an error of the run."""


class OutputError(Exception):
    """A grade could not be written (or read back) safely: the message names the path and why."""


class GradingRefusedError(Exception):
    """The database cannot be graded on as given: the grading machine's failure, not the learner's.

    The message names what is missing and, where one command grants it, that command.
    """
