"""What the class got wrong, for the next lecture: failing hand-ins grouped by the rule broken.

Each failing criterion names the rules it saw broken (Outcome.rules: the
checks' own, labs/checking/rules.py, and the migration's, typecheck's and
--strict's, rules.py), so the grouping is the checks' verdict itself, never a
reading of its words; a failure that names none falls under its kind's rule.
A hand-in is listed once under each rule it broke, on memory or on Postgres
alike. The rules most broken come first, ties by the rule's id, the learners
under each in the class's order: the same grades give the same bytes.
Hand-ins that could not be graded at all, and criteria the grading machine
failed to grade, are listed apart: they say nothing about the lesson.

Names are the learners' own, as written: Markdown-escaped in class-report.md
(labs.untrusted.markdown_text, and a backslash before what would begin a
heading or a list), cleaned of escapes and control characters on a terminal.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from labs.checking.rules import Rule
from labs.term.i18n import _

from ..untrusted import clean_text, markdown_text
from .criteria import Grade
from .outputs import write_safely
from .rules import for_kind

CLASS_REPORT = "class-report.md"
RULES_SHOWN = 5  # on the terminal; the file has them all
NAMES_SHOWN = 3
# What would make a list item's text a heading, a rule or another list, at its start.
LEADING_MARK = re.compile(r"^[#+=-]")
LEADING_NUMBER = re.compile(r"^(\d+)(?=[.)])")


@dataclass(frozen=True)
class Mistake:
    """One rule, and the hand-ins that broke it, in the class's order."""

    rule: Rule
    learners: tuple[str, ...]


@dataclass(frozen=True)
class ClassReport:
    """The class's mistakes, most common first, and the hand-ins that say nothing of them."""

    total: int
    mistakes: tuple[Mistake, ...]
    clean: tuple[str, ...]  # graded, and broke no rule
    could_not_grade: tuple[tuple[str, str], ...]  # each hand-in with why
    not_graded: tuple[tuple[str, str], ...]  # each hand-in with the criteria left, and why


def rules_broken(grade: Grade) -> list[Rule]:
    """The rules a graded hand-in broke, each once, in the order of the criteria."""
    found: dict[str, Rule] = {}
    for criterion, outcome in grade.graded():
        if outcome.status == "fail":
            for rule in outcome.rules or (for_kind(criterion.kind),):
                found.setdefault(rule.id, rule)
    return list(found.values())


def could_not_be_graded(grade: Grade) -> bool:
    """Broken before any check could judge it: no tree, a bad zip, a tree that does not import.

    A hand-in whose checks ran and named a rule (an endless loop in one
    check, say) was graded, and is listed under that rule.
    """
    checks = [outcome for criterion, outcome in grade.graded() if criterion.kind == "memory"]
    return bool(grade.broken) and not any(outcome.rules for outcome in checks)


def class_report(grades: list[Grade]) -> ClassReport:
    """The class's grades grouped by the rule each hand-in broke, most common first."""
    rules: dict[str, Rule] = {}
    learners: dict[str, list[str]] = {}
    clean: list[str] = []
    apart: list[tuple[str, str]] = []
    for grade in grades:
        if could_not_be_graded(grade):
            apart.append((grade.submission, grade.broken))
            continue
        broken = rules_broken(grade)
        if not broken:
            clean.append(grade.submission)
        for rule in broken:
            rules.setdefault(rule.id, rule)
            learners.setdefault(rule.id, []).append(grade.submission)
    ranked = sorted(learners, key=lambda rule_id: (-len(learners[rule_id]), rule_id))
    return ClassReport(
        total=len(grades),
        mistakes=tuple(Mistake(rules[r], tuple(learners[r])) for r in ranked),
        clean=tuple(clean),
        could_not_grade=tuple(apart),
        not_graded=tuple(
            left_ungraded(g) for g in grades if g.not_graded() and not could_not_be_graded(g)
        ),
    )


def left_ungraded(grade: Grade) -> tuple[str, str]:
    """A hand-in the grading machine failed on some criteria: which, and the first reason."""
    failed = grade.not_graded()
    keys = ", ".join(criterion.key for criterion, _outcome in failed)
    return grade.submission, f"{keys}: {failed[0][1].message}"


def listed(name: str) -> str:
    """A list item showing text as written: escaped, and never read as a heading or a list."""
    text = LEADING_NUMBER.sub(r"\1\\", LEADING_MARK.sub(r"\\\g<0>", markdown_text(name)))
    return f"- {text}"


def markdown(report: ClassReport) -> str:
    """class-report.md: a section per rule broken, most common first, then the hand-ins apart."""
    graded = report.total - len(report.could_not_grade)
    wrong = graded - len(report.clean)
    title, none_broken = _("What the class got wrong"), _("Broke no rule")
    lines = [f"# {title}", ""]
    lines += [
        _(
            "Hand-ins graded: {graded} of {total}; {wrong} broke at least one rule, "
            "{clean} broke none."
        ).format(graded=graded, total=report.total, wrong=wrong, clean=len(report.clean)),
        "",
        _(
            "Each heading is a rule the checks judged and how many hand-ins broke it, the most "
            "broken first. A check stops at the first step that fails, so a hand-in is listed "
            "under the rules that step showed; fixed, it may show another."
        ),
        "",
    ]
    for mistake in report.mistakes:
        lines += [f"## {len(mistake.learners)} · {markdown_text(mistake.rule.shown())}", ""]
        lines += [*(listed(name) for name in mistake.learners), ""]
    if report.clean:
        lines += [f"## {none_broken} ({len(report.clean)})", ""]
        lines += [*(listed(name) for name in report.clean), ""]
    for heading, why_apart, apart in (
        (
            _("Could not be graded"),
            _("Nothing of the lesson was judged: see each one's note in grades.csv."),
            report.could_not_grade,
        ),
        (
            _("Not graded on some criteria"),
            _("The grading machine failed, not the learner: these criteria count neither way."),
            report.not_graded,
        ),
    ):
        if apart:
            lines += [f"## {heading} ({len(apart)})", "", why_apart, ""]
            lines += [*(f"{listed(name)}: {markdown_text(why)}" for name, why in apart), ""]
    return "\n".join(lines)


def names(learners: tuple[str, ...] | list[str]) -> str:
    """The first few names, cleaned for a terminal, and an ellipsis for the rest."""
    shown = [clean_text(name, 40) for name in learners[:NAMES_SHOWN]]
    return ", ".join(shown) + (", …" if len(learners) > NAMES_SHOWN else "")


def terminal_lines(report: ClassReport, path: Path) -> list[str]:
    """The short version for the end of `labs grade`: the commonest rules, and who is apart."""
    if not (report.mistakes or report.could_not_grade or report.not_graded):
        return [_("What the class got wrong: nothing, every hand-in passed what was graded.")]
    lines = [
        _("What the class got wrong, most common first (every learner under each: {path}):").format(
            path=clean_text(path)
        )
    ]
    width = max((len(str(len(m.learners))) for m in report.mistakes), default=1)
    for mistake in report.mistakes[:RULES_SHOWN]:
        count = str(len(mistake.learners)).rjust(width)
        rule = clean_text(mistake.rule.shown())
        lines.append(f"  {count}  {rule} ({names(mistake.learners)})")
    if len(report.mistakes) > RULES_SHOWN:
        more = len(report.mistakes) - RULES_SHOWN
        lines.append("  " + _("… and {count} more in the file").format(count=more))
    if report.could_not_grade:
        apart = [name for name, _why in report.could_not_grade]
        lines.append("  " + _("could not be graded: {names}").format(names=names(apart)))
    if report.not_graded:
        apart = [name for name, _why in report.not_graded]
        lines.append(
            "  "
            + _("not graded on some criteria (the grading machine failed): {names}").format(
                names=names(apart)
            )
        )
    return lines


def write_class_report(grades: list[Grade], out: Path) -> ClassReport:
    """Write out/class-report.md (as outputs.py writes: never through a link); return the report."""
    report = class_report(grades)
    write_safely(out / CLASS_REPORT, markdown(report))
    return report
