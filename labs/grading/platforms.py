"""The grade in each grading platform's shape, from the kit's own results.json.

One grading run writes the kit's results.json (Exercism v3 with each test's
score and max_score, labs/grading/results.py); each platform reads its own
file, built here from that document and nothing else:

- Classroom 50 reads `result.json` (`classroom50/result/v1`: schema, score,
  max-score, and per test its test-name, passed, score and max-score; the
  autograder adds the run's context from Classroom 50's variables) and
  publishes `release-body.md` as the learner's feedback;
- Gradescope reads `/autograder/results/results.json` (per test its name,
  score, max_score, output and visibility; the total and an output the
  learner sees);
- a plain GitHub Actions job shows `summary.md` as its step summary.

Criteria not graded (no database, a grading machine's failure) are in none
of them: their points are in no score and no maximum, and the feedback says
why. A test results.json calls an error because it could not run against
the learner's tree (the tree did not import) is counted, as a failure.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

CLASSROOM50_FORMAT = "classroom50/result/v1"
VISIBLE = "visible"


def _tests(document: Mapping[str, Any]) -> Sequence[Mapping[str, Any]]:
    """The tests counted in the grade: those with points (results.py gives none to the rest)."""
    tests = document.get("tests", [])
    if not isinstance(tests, list):
        raise ValueError("results.json: tests is not a list")
    return [t for t in tests if "max_score" in t]


def _score(document: Mapping[str, Any]) -> tuple[int, int]:
    tests = _tests(document)
    return sum(int(t["score"]) for t in tests), sum(int(t["max_score"]) for t in tests)


def classroom50_result(document: Mapping[str, Any]) -> dict[str, object]:
    """Classroom 50's result.json: one test per criterion graded, with its points."""
    score, most = _score(document)
    return {
        "schema": CLASSROOM50_FORMAT,
        "score": score,
        "max-score": most,
        "tests": [
            {
                "test-name": str(test["name"]),
                "passed": test["status"] == "pass",
                "score": int(test["score"]),
                "max-score": int(test["max_score"]),
            }
            for test in _tests(document)
        ],
    }


def _output(test: Mapping[str, Any]) -> str:
    """What a test said (the kit's words), then what the learner's code printed during it."""
    printed = f"your code printed:\n{test['output']}" if test.get("output") else ""
    return "\n\n".join(text for text in (str(test.get("message") or ""), printed) if text)


def gradescope_results(document: Mapping[str, Any]) -> dict[str, object]:
    """Gradescope's results.json: each criterion's points and output, all visible to the learner."""
    score, _most = _score(document)
    return {
        "score": score,
        "output": feedback_markdown(document),
        "output_format": "md",
        "visibility": VISIBLE,
        "stdout_visibility": "hidden",
        "tests": [
            {
                "name": str(test["name"]),
                "score": int(test["score"]),
                "max_score": int(test["max_score"]),
                "status": "passed" if test["status"] == "pass" else "failed",
                "output": _output(test),
                "visibility": VISIBLE,
            }
            for test in _tests(document)
        ],
    }


def fenced(text: str) -> list[str]:
    """text as a Markdown code block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, text, fence]


def _cell(text: str) -> str:
    """Text safe inside a Markdown table cell: no pipe, no line break, no markup."""
    return re.sub(r"[|\n\r`<>*_\[\]]", " ", text).strip()


def points_table(document: Mapping[str, Any]) -> list[str]:
    """The criteria graded as a Markdown table, then the total."""
    score, most = _score(document)
    lines = ["| points | result | criterion |", "|---:|:---|:---|"]
    for test in _tests(document):
        result = "pass" if test["status"] == "pass" else "FAIL"
        points = f"{int(test['score'])} / {int(test['max_score'])}"
        lines.append(f"| {points} | {result} | {_cell(str(test['name']))} |")
    lines.append(f"| **{score} / {most}** | | total |")
    return lines


def feedback_markdown(document: Mapping[str, Any]) -> str:
    """What the learner reads: the points table, then what each failing criterion said."""
    score, most = _score(document)
    lines = [f"## mini-koda lab: {score} / {most} points", "", *points_table(document), ""]
    note = document.get("note") or document.get("message")
    if note:
        lines += ["Note:", "", *fenced(str(note)), ""]
    for test in _tests(document):
        if test["status"] != "pass":
            lines += [f"### {_cell(str(test['name']))}", "", *fenced(_output(test) or "failed"), ""]
    return "\n".join(lines)


def step_summary(document: Mapping[str, Any]) -> str:
    """The GitHub Actions job summary: the points table and the feedback."""
    return feedback_markdown(document)
