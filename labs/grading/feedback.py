"""A submission's own feedback: results.json v3, a short Markdown report, and JUnit XML.

`labs grade` writes one folder per submission beside the class table
(submissions/<name>/, the name in plain ASCII), and the pytest entry writes
the JUnit file when given `--junit PATH`. Every file is made from the Grade
and written by the kit's one writer (labs/checking/results_json.py, by way of
grading/outputs.py). Texts in a grade were cleaned of control characters
where they came from the learner's process; the XML also drops what XML 1.0
cannot hold, and the Markdown fences each message so that no text can end its
block early, and escapes the name and the notes it shows outside a fence.
"""

from __future__ import annotations

import json
import os
import re
import unicodedata
import xml.etree.ElementTree as ET
from pathlib import Path

from labs.checking.results_json import capped_output

from ..untrusted import markdown_text
from .criteria import CRITERIA, Grade
from .outputs import output_folder, write_safely
from .results import results_json

FOLDER = "submissions"
NOT_XML = re.compile("[^\t\n\r\x20-\ud7ff\ue000-\ufffd\U00010000-\U0010ffff]")


def folder_name(label: str, taken: set[str], place: int = 1) -> str:
    """A learner's feedback folder: the name in plain ASCII, else learner-NN; never one taken.

    The folders travel (zipped, copied to Windows, uploaded to a learning
    platform), where a name outside ASCII often turns to mojibake, so
    "José Núñez" becomes Jose_Nunez by dropping its accents (NFKD). A name
    with no Latin letter or digit (张伟) is known by its place in the class
    instead; grades.csv maps each learner to a folder. No separator, no leading
    dot or dash, and none that differs from another only in case.
    """
    plain = unicodedata.normalize("NFKD", label).encode("ascii", "ignore").decode("ascii")
    name = re.sub(r"[^A-Za-z0-9.-]+", "_", plain).strip("._-")[:80]
    if not re.search(r"[A-Za-z0-9]", name):
        name = f"learner-{place:02d}"
    stem, number = name, 1
    while name.casefold() in taken:
        number += 1
        name = f"{stem}_{number}"
    taken.add(name.casefold())
    return name


def folder_names(labels: list[str]) -> list[str]:
    """Each submission's feedback folder under submissions/, in the class's order."""
    taken: set[str] = set()
    return [folder_name(label, taken, place) for place, label in enumerate(labels, start=1)]


def markdown_report(grade: Grade) -> str:
    """The grade in a few lines: the score, the notes, then each failing row with its hint."""
    name = markdown_text(grade.submission)
    lines = [f"# {name}: {grade.score} / {grade.max_score} points", ""]
    if grade.note:
        lines += [f"Note: {markdown_text(grade.note)}", ""]
    failing = [(c, o) for c, o in grade.graded() if not o.passed]
    skipped = [c for c in CRITERIA if (o := grade.outcomes.get(c.key)) and o.status == "skip"]
    if not failing:
        lines += ["Every criterion graded passed.", ""]
    for criterion, outcome in failing:
        lines += [f"## {criterion.title} (0 / {criterion.points})", ""]
        lines += [*fenced(outcome.message or "(no message)"), ""]
        # A check's output is its trace (results.json has it); the typecheck's is mypy's errors.
        if criterion.check is None and outcome.output:
            lines += [*fenced(outcome.output), ""]
        if outcome.printed:
            lines += ["Your code printed:", "", *fenced(capped_output(outcome.printed)), ""]
    if skipped:
        reasons = sorted({markdown_text(grade.outcomes[c.key].message) for c in skipped})
        lines += [f"Not graded here ({len(skipped)} criteria): " + "; ".join(reasons), ""]
    passed = [c.key for c, o in grade.graded() if o.passed]
    if passed:
        lines += ["Passed: " + ", ".join(passed) + ".", ""]
    return "\n".join(lines)


def fenced(text: str) -> list[str]:
    """text as a Markdown code block whose fence is longer than any backtick run inside it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, text, fence]


def junit_xml(grade: Grade) -> str:
    """The grade as JUnit XML: a test case per criterion graded, skipped ones marked so."""
    graded = [c for c in CRITERIA if c.key in grade.outcomes]
    outcomes = [grade.outcomes[c.key] for c in graded]
    suites = ET.Element("testsuites")
    suite = ET.SubElement(
        suites,
        "testsuite",
        name=xml_text(f"mini-koda lab: {grade.submission}"),
        tests=str(len(graded)),
        failures=str(sum(o.status == "fail" for o in outcomes)),
        errors="0",
        skipped=str(sum(o.status == "skip" for o in outcomes)),
    )
    properties = ET.SubElement(suite, "properties")
    for name, value in (("score", grade.score), ("max_score", grade.max_score)):
        ET.SubElement(properties, "property", name=name, value=str(value))
    if grade.note:
        ET.SubElement(properties, "property", name="note", value=xml_text(grade.note))
    for criterion, outcome in zip(graded, outcomes, strict=True):
        case = ET.SubElement(
            suite, "testcase", classname=f"lab.{criterion.kind}", name=criterion.key
        )
        points = ET.SubElement(case, "properties")
        ET.SubElement(points, "property", name="title", value=criterion.title)
        earned = criterion.points if outcome.passed else 0
        ET.SubElement(points, "property", name="score", value=str(earned))
        ET.SubElement(points, "property", name="max_score", value=str(criterion.points))
        message = xml_text(outcome.message)
        if outcome.status == "fail":
            failure = ET.SubElement(case, "failure", message=message.split("\n")[0])
            failure.text = xml_text("\n".join(p for p in (outcome.message, outcome.output) if p))
        elif outcome.status == "skip":
            ET.SubElement(case, "skipped", message=message)
        if outcome.printed:  # what the learner's code printed, where JUnit keeps a test's output
            ET.SubElement(case, "system-out").text = xml_text(capped_output(outcome.printed))
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"


def xml_text(text: str) -> str:
    """text without the characters XML 1.0 cannot carry."""
    return NOT_XML.sub("\ufffd", text)


def write_feedback(grade: Grade, folder: Path) -> Path:
    """Write results.json, report.md and junit.xml into folder (made private, never a link)."""
    output_folder(folder)
    os.chmod(folder, 0o700)
    write_safely(folder / "results.json", json.dumps(results_json(grade), indent=2) + "\n")
    write_safely(folder / "report.md", markdown_report(grade))
    write_safely(folder / "junit.xml", junit_xml(grade))
    return folder


def write_class_feedback(grades: list[Grade], out: Path) -> list[Path]:
    """One feedback folder per submission under out/submissions/, in the grades' order."""
    names = folder_names([grade.submission for grade in grades])
    return [write_feedback(g, out / FOLDER / name) for g, name in zip(grades, names, strict=True)]
