"""results.json, Exercism's test-runner format version 3: the one writer the kit has.

`python -m labs check --json` writes one for a run of the checks (task_id =
check number); grading writes one per submission, each test with score and
max_score (the points Classroom 50, Gradescope and the Actions summary show).
Both build their tests here and write them here, with one output limit.
"""

from __future__ import annotations

import json
import os
import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from labs.term.i18n import _

# Exercism limits a test's output to this many characters, a truncation notice included.
OUTPUT_LIMIT = 500


def capped_output(text: str, limit: int = OUTPUT_LIMIT) -> str:
    """text within limit characters: when longer, its start and a line saying it was cut."""
    if len(text) <= limit:
        return text
    notice = _("Output was truncated. Please limit to {limit} chars").format(limit=limit)
    return text[: max(limit - len(notice) - 1, 0)] + "\n" + notice


class TestStatus(StrEnum):
    """v3's status of a test, and of a whole run."""

    PASS = "pass"
    FAIL = "fail"
    ERROR = "error"  # the test could not run (the tree did not import); a run: no test ran


@dataclass(frozen=True)
class TestEntry:
    """One entry of results.json's tests: a check's or a criterion's verdict."""

    name: str
    status: TestStatus
    message: str = ""  # why it failed or could not run: expected, got and hint, a line each
    output: str = ""  # what the learner's code printed during the test, never the kit's words
    test_code: str = ""  # what the test does, in a sentence
    task_id: int | None = None
    score: int | None = None  # the criterion's points, for a criterion counted in the grade
    max_score: int | None = None

    def as_json(self) -> dict[str, object]:
        """The entry as v3 spells it: empty texts are null, the output capped with a notice."""
        entry: dict[str, object] = {
            "name": self.name,
            "status": self.status,
            "message": self.message or None,
            "output": capped_output(self.output) or None,
            "test_code": self.test_code,
        }
        if self.score is not None:
            entry["score"] = self.score
        if self.max_score is not None:
            entry["max_score"] = self.max_score
        if self.task_id is not None:
            entry["task_id"] = self.task_id
        return entry


def results_document(
    tests: Sequence[TestEntry],
    *,
    message: str = "",
    extra: Mapping[str, object] | None = None,
) -> dict[str, object]:
    """The whole results.json, its status and top-level message as v3 rules them.

    status is "error" when no test ran (none at all, or every one an error),
    else "pass" when every test passed, else "fail". message is said only
    with "error", as v3 asks: why nothing ran (a run with no message gets a
    sentence saying so). extra holds fields beyond v3 (score, max_score,
    note, outside_regions), placed before the tests.
    """
    status = overall_status(tests)
    document: dict[str, object] = {"version": 3, "status": status}
    if status == TestStatus.ERROR:
        document["message"] = message or _("no test could run")
    document |= dict(extra or {})
    document["tests"] = [test.as_json() for test in tests]
    return document


def overall_status(tests: Sequence[TestEntry]) -> TestStatus:
    """v3's status of a run: error when no test ran, pass when all passed, else fail."""
    if all(test.status == TestStatus.ERROR for test in tests):
        return TestStatus.ERROR
    if all(test.status == TestStatus.PASS for test in tests):
        return TestStatus.PASS
    return TestStatus.FAIL


def write_results(document: Mapping[str, object], path: Path) -> None:
    """Write a results.json document to path (see write_text)."""
    write_text(json.dumps(document, indent=2) + "\n", path)


def write_text(text: str, path: Path, mode: int = 0o644) -> None:
    """Write text to path as UTF-8, never through a link, even one planted while writing.

    The text goes to a new file of a random name (O_EXCL | O_NOFOLLOW),
    opened through a descriptor of path's folder, then renamed over path: a
    rename replaces a link planted there, never what it points at. The
    folder must exist and be a real folder. OSError names the path and why.
    """
    try:
        folder = os.open(path.parent, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
    except OSError as error:
        raise OSError(error.errno, f"could not write {path}: {error.strerror}") from None
    temporary = f".{path.name}.{secrets.token_hex(8)}"
    try:
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
        handle = os.open(temporary, flags, mode, dir_fd=folder)
        with os.fdopen(handle, "w", encoding="utf-8", newline="") as out:
            out.write(text)
        os.rename(temporary, path.name, src_dir_fd=folder, dst_dir_fd=folder)
    except OSError as error:
        raise OSError(error.errno, f"could not write {path}: {error.strerror}") from None
    finally:
        os.close(folder)
