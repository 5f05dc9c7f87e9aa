"""What the class got wrong: each failure names the rule it broke, and the report groups by it."""

from __future__ import annotations

import ast
import os
import re
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from labs.checking import rules
from labs.checking.launch import ForkLauncher
from labs.checking.rules import Rule, lets, refuses
from labs.checking.runner import run_checks
from labs.grading import rules as graded_rules
from labs.grading.batch import broken_grade
from labs.grading.class_report import CLASS_REPORT, class_report, markdown, terminal_lines
from labs.grading.criteria import CRITERIA, Grade, Outcome
from labs.grading.grader import Grader
from labs.grading.indexes import PgIndex, judge_indexes
from labs.lesson.states import LESSON_MOVES, STATUSES
from labs.lesson.uniqueness import UNIQUENESSES
from labs.pg.cluster import TempCluster
from labs.trees.finding import REPO_ROOT
from labs.untrusted import markdown_text
from tests.grading import submissions as make
from tests.grading.mistakes.catalogue import (
    CATALOGUE,
    LESSON,
    STATES,
    Answer,
    allowlist,
    body,
    build,
)

CHECKS = REPO_ROOT / "labs" / "checking" / "checks"
FORBIDDEN = [(c, t) for c in STATUSES for t in STATUSES if t not in LESSON_MOVES[c]]
ALLOWED = [(c, t) for c in STATUSES for t in STATUSES if t in LESSON_MOVES[c]]

# The rule each mistake of the catalogue breaks on memory, as its failing check names it.
EXPECTED: dict[str, set[str]] = {
    "key-hashes-time-even-with-a-client-id": {"3.client-key-time"},
    "key-not-scoped-to-the-session": {"3.client-key-session"},
    "key-ignores-the-client-id": {"3.client-key-time", "3.client-key-client-id"},
    "random-key": {"3.key-stable"},
    "key-special-cases-the-checks-literals": {"3.client-key-time"},
    "key-lookup-outside-the-lock": {"3.race-one-run"},
    "key-looked-up-in-the-gateway": {"3.race-one-run"},
    "key-client-id-branch-reads-the-clock": {"3.client-key-time"},
    "store-finds-the-run-by-its-text": {"3.other-client-id-new-run"},
    "store-says-created-for-a-held-run": {"3.replay-reported"},
    "text-key-holds-the-moment-not-its-window": {"3.text-key-window"},
    "text-key-takes-the-clock-modulo-the-window": {"3.text-key-window", "3.text-key-later-window"},
    "text-key-holds-the-windows-length-not-its-number": {"3.text-key-later-window"},
    "text-key-scoped-by-the-session-ids-first-characters": {"3.text-key-session"},
    "text-key-leaves-the-text-out": {"3.text-key-text"},
    "text-key-shortens-the-text-with-hash": {"3.key-per-process"},
    "text-key-reads-the-clock-in-nanoseconds": {"3.text-key-window", "3.key-now"},
    "text-key-windows-an-hour-long": {"3.text-key-later-window"},
    "text-key-folds-case": {"3.text-key-as-sent"},
    "text-key-collapses-spaces": {"3.text-key-as-sent"},
    "allowlist-without-pending-to-failed": {"4.refuses:pending->failed"},
    "allowlist-with-done-to-running": {"4.lets:done->running"},
    "allowlist-with-cancelled-to-pending": {"4.lets:cancelled->pending"},
    "allowlist-with-streaming-to-running": {"4.lets:streaming->running"},
    "a-refused-move-still-writes": {"4.refused-move-writes"},
    "store-unique-on-seq-alone": {"5.seq-per-run"},
}
MISTAKES = [pytest.param(a, id=a.name) for a in CATALOGUE if a.memory_fails]
# What the driver names when a check could not judge the rule: never a mistake's verdict.
NOT_A_RULE = re.compile(r"\.(did-not-finish|host-stopped|raised|unreadable)$")


def memory_rules(tree: Path, checks: set[int], seed: int) -> dict[int, set[str]]:
    """The rule ids each failing check names, the tree's host forked (fast), on memory."""
    report = run_checks(
        str(tree), seed=seed, only={str(n) for n in checks}, launcher=ForkLauncher()
    )
    assert not report.error, report.error
    return {r.number or 0: {rule.id for rule in r.rules} for r in report.results if not r.passed}


# --- each failure names its rule -------------------------------------------------------------


def called(node: ast.Call) -> str:
    """The name a call is made by: expect, expect_all, CheckFailedError."""
    return node.func.id if isinstance(node.func, ast.Name) else ""


@pytest.mark.parametrize("module", sorted(CHECKS.glob("[!_]*.py")), ids=lambda p: p.name)
def test_every_failure_a_check_can_raise_names_the_rule_it_broke(module: Path) -> None:
    """Each expect(...) says rule=, each CheckFailedError(...) its rules, each expect_all
    entry ends with its rule: no failure of the six leaves its rule to a message's words."""
    unnamed = []
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if not isinstance(node, ast.Call):
            continue
        keywords = {k.arg for k in node.keywords}
        if called(node) == "expect" and "rule" not in keywords:
            unnamed.append(node.lineno)
        if called(node) == "CheckFailedError" and len(node.args) < 4 and "rules" not in keywords:
            unnamed.append(node.lineno)
        if called(node) == "expect_all":
            unnamed += [
                e.lineno
                for e in node.args[1:]
                if not (isinstance(e, ast.Tuple) and len(e.elts) == 4)
            ]
    assert unnamed == [], f"{module.name}: failures without a rule at lines {unnamed}"


def test_every_rule_has_an_id_of_its_own_and_a_title_that_reads_whole() -> None:
    """Fixed rules, one per pair of states, field and check: no two share an id, no title
    keeps a {placeholder}."""
    found = [
        value
        for module in (rules, graded_rules)
        for value in vars(module).values()
        if isinstance(value, Rule)
    ]
    found += [lets(c, t) for c, t in FORBIDDEN] + [refuses(c, t) for c, t in ALLOWED]
    found += [rules.refuses_missing(field) for field in ("sessionId", "message")]
    for check in ("1", "2", "3", "4", "5", "6"):
        found += [rules.did_not_finish(check), rules.host_stopped(check)]
        found += [rules.raised(check), rules.unreadable(check)]
    found += [graded_rules.lacks(need) for need in UNIQUENESSES]
    assert len({rule.id for rule in found}) == len(found)
    assert not [rule for rule in found if re.search(r"[{}]", rule.shown())]


@pytest.mark.slow
@pytest.mark.parametrize("answer", MISTAKES)
def test_each_mistake_of_the_catalogue_names_the_rule_it_broke(
    tmp_path: Path, answer: Answer
) -> None:
    """The same rules on two seeds, the catalogue's where it says, never "could not judge"."""
    tree = build(answer, tmp_path / answer.name)
    first = memory_rules(tree, set(answer.memory_fails), seed=11)
    assert first == memory_rules(tree, set(answer.memory_fails), seed=2_000_003)
    assert set(first) == set(answer.memory_fails)
    named = set().union(*first.values())
    assert named and not [rule for rule in named if NOT_A_RULE.search(rule)]
    if answer.name in EXPECTED:
        assert named == EXPECTED[answer.name]


@pytest.mark.parametrize(("current", "target"), ALLOWED)
def test_each_move_the_lesson_allows_refused_is_a_group_of_its_own(
    tmp_path: Path, current: str, target: str
) -> None:
    """An allowlist missing one of the lesson's ten moves names that move, and only it."""
    edges = {**LESSON, current: " ".join(t for t in LESSON[current].split() if t != target)}
    answer = Answer("missing-move", "", (body(STATES, 4, allowlist(**edges)),))
    tree = build(answer, tmp_path / "hand-in")
    assert memory_rules(tree, {4}, seed=5) == {4: {refuses(current, target).id}}


@pytest.mark.parametrize("current", STATUSES)
def test_each_move_the_lesson_refuses_that_goes_through_is_a_group_of_its_own(
    tmp_path: Path, current: str
) -> None:
    """An allowlist letting a status move anywhere names each move the lesson refuses from
    there, and only those: over the six statuses, every one of the 26 such moves."""
    edges = {**LESSON, current: " ".join(STATUSES)}
    answer = Answer("moves-anywhere", "", (body(STATES, 4, allowlist(**edges)),))
    tree = build(answer, tmp_path / "hand-in")
    expected = {lets(c, t).id for c, t in FORBIDDEN if c == current}
    assert memory_rules(tree, {4}, seed=5) == {4: expected}


def test_an_allowlist_that_refuses_nothing_is_one_group_not_26(tmp_path: Path) -> None:
    """The starter as shipped lets every move through: one rule says so, not each move's."""
    tree = make.starter_copy(tmp_path / "hand-in")
    assert memory_rules(tree, {4}, seed=5) == {4: {rules.LETS_EVERY_MOVE.id}}


def index(table: str, columns: tuple[str, ...], **flags: bool) -> PgIndex:
    """A unique index of the catalog as judge_indexes reads it."""
    return PgIndex(
        table=table,
        name=f"{table}_{'_'.join(columns) or 'expr'}_key",
        unique=flags.get("unique", True),
        partial=flags.get("partial", False),
        immediate=flags.get("immediate", True),
        valid=True,
        columns=columns,
        definition="",
    )


RUNS_KEY = index("runs", ("idempotency_key",))
MESSAGES_KEY = index("messages", ("run_id", "seq"))
LACKS_RUNS, LACKS_MESSAGES = (graded_rules.lacks(need).id for need in UNIQUENESSES)


@pytest.mark.parametrize(
    ("indexes", "expected"),
    [
        ([RUNS_KEY, MESSAGES_KEY], set()),
        ([MESSAGES_KEY], {LACKS_RUNS}),
        ([RUNS_KEY], {LACKS_MESSAGES}),
        ([RUNS_KEY, index("messages", ("seq",))], {LACKS_MESSAGES}),
        ([RUNS_KEY, index("messages", ("run_id", "seq"), partial=True)], {LACKS_MESSAGES}),
        ([RUNS_KEY, index("messages", ("run_id", "seq"), immediate=False)], {LACKS_MESSAGES}),
        ([RUNS_KEY, index("messages", ("", "seq"))], {LACKS_MESSAGES}),
        ([index("runs", ("idempotency_key",), partial=True), MESSAGES_KEY], {LACKS_RUNS}),
        ([], {LACKS_RUNS, LACKS_MESSAGES}),
    ],
    ids=[
        "both",
        "no-runs-key",
        "no-messages-key",
        "seq-alone",
        "partial",
        "deferrable",
        "expression",
        "partial-runs",
        "none",
    ],
)
def test_the_migration_names_each_uniqueness_it_lacks(
    indexes: list[PgIndex], expected: set[str]
) -> None:
    """Whatever stands in its place, a missing (run_id, seq) or key uniqueness is its rule."""
    outcome = judge_indexes(indexes)
    assert outcome.passed == (not expected)
    assert {rule.id for rule in outcome.rules} == expected


# Which uniqueness each migration mistake of the catalogue leaves Postgres without.
MIGRATION_EXPECTED: dict[str, set[str]] = {
    "schema-unique-on-seq-alone": {LACKS_MESSAGES},
    "partial-unique-index-on-messages": {LACKS_MESSAGES},
    "partial-unique-index-on-runs": {LACKS_RUNS},
    "migration-without-constraints": {LACKS_RUNS, LACKS_MESSAGES},
}
MIGRATION_MISTAKES = [pytest.param(a, id=a.name) for a in CATALOGUE if not a.migration_passes]


@pytest.mark.slow
@pytest.mark.parametrize("answer", MIGRATION_MISTAKES)
def test_a_graded_migration_names_the_uniqueness_it_lacks(
    tmp_path: Path, pg_cluster: TempCluster, answer: Answer
) -> None:
    """Graded as `labs grade` grades it (its own migration run on a throwaway cluster), the
    criterion names each uniqueness missing, and the class report groups by it."""
    tree = build(answer, tmp_path / answer.name)
    criterion = next(c for c in CRITERIA if c.key == "migration")
    outcome = Grader(tree).outcome(criterion)
    named = {rule.id for rule in outcome.rules}
    assert outcome.status == "fail" and named <= {LACKS_RUNS, LACKS_MESSAGES}
    if answer.name in MIGRATION_EXPECTED:
        assert named == MIGRATION_EXPECTED[answer.name]
    report = class_report([Grade(answer.name, {criterion.key: outcome})])
    assert [m.rule.id for m in report.mistakes] == sorted(named) or ["migration.other"]


# --- the class report ------------------------------------------------------------------------


def failing(*broken: Rule) -> Outcome:
    """A failed criterion naming these rules (none: a failure that names no rule)."""
    return Outcome("fail", "expected: …\ngot:      …", rules=broken)


DONE_RUNNING = lets("done", "running")
NO_SESSION = rules.CLIENT_KEY_SESSION


def a_class() -> list[Grade]:
    """Seven hand-ins: two mistakes broken by three and two, one on memory and Postgres both,
    a tie, a typecheck failure naming no rule, a clean one, a broken one, one not graded."""
    return [
        Grade("zoe", {"memory-4": failing(DONE_RUNNING), "postgres-4": failing(DONE_RUNNING)}),
        Grade("张伟", {"memory-4": failing(DONE_RUNNING), "memory-3": failing(NO_SESSION)}),
        Grade("ada", {"memory-1": Outcome("pass"), "typecheck": failing()}),
        Grade("ben", {"memory-3": failing(NO_SESSION), "memory-4": failing(DONE_RUNNING)}),
        Grade("cho", {"memory-1": Outcome("pass"), "migration": Outcome("pass")}),
        broken_grade("hal", "the zip does not unpack"),
        Grade("eli", {"memory-5": failing(rules.SEQ_PER_RUN), "postgres-1": Outcome("error", "x")}),
    ]


def test_hand_ins_are_grouped_by_the_rule_they_broke_most_common_first() -> None:
    """Counted once per hand-in, memory and Postgres alike; ties by the rule's id; learners
    in the class's order; a failure naming no rule under its kind's; broken ones apart."""
    report = class_report(a_class())
    assert [(m.rule.id, m.learners) for m in report.mistakes] == [
        (DONE_RUNNING.id, ("zoe", "张伟", "ben")),
        (NO_SESSION.id, ("张伟", "ben")),
        (rules.SEQ_PER_RUN.id, ("eli",)),
        (graded_rules.TYPECHECK.id, ("ada",)),
    ]
    assert report.clean == ("cho",)
    assert report.could_not_grade == (("hal", "the zip does not unpack"),)
    assert [name for name, _why in report.not_graded] == ["eli"]


def test_a_hand_in_whose_checks_ran_is_never_set_apart_as_ungraded() -> None:
    """An endless loop in one check still names its rule: the hand-in is in the groups."""
    hung = Grade("fay", {"memory-4": failing(rules.did_not_finish("4"))}, broken="timed out")
    report = class_report([hung])
    assert report.could_not_grade == ()
    assert [m.rule.id for m in report.mistakes] == ["4.did-not-finish"]


def test_the_report_reads_the_rule_and_the_learners_under_it() -> None:
    """class-report.md: a heading per rule with its count, every learner as a list item."""
    text = markdown(class_report(a_class()))
    assert "## 3 · the allowlist lets done → running\n\n- zoe\n- 张伟\n- ben\n" in text
    assert "## 2 · with a clientMessageId, the key ignores the session\n" in text
    assert "## Could not be graded (1)" in text and "- hal: the zip does not unpack" in text
    assert "## Not graded on some criteria (1)" in text
    assert text.index("## 3 ·") < text.index("## 2 ·") < text.index("## Could not")


HOSTILE = [
    "# a heading",
    "1. a list",
    "- a dash",
    "<img src=x onerror=alert(1)>",
    "a | b",
    "![pixel](http://tracker.example/p.png)",
    "`code` **bold** _em_",
    "\x1b[2J\x1b]0;pwned\x07\rsly\u202eevil",
]


def test_every_name_shows_as_written_and_starts_nothing() -> None:
    """No name becomes markup, a heading or another list; the terminal gets no escape."""
    grades = [Grade(name, {"memory-4": failing(DONE_RUNNING)}) for name in HOSTILE]
    report = class_report(grades)
    items = [line for line in markdown(report).splitlines() if line.startswith("- ")]
    assert len(items) == len(HOSTILE)
    for name, item in zip(HOSTILE, items, strict=True):
        text = item.removeprefix("- ")
        assert re.sub(r"\\(.)", r"\1", text) == re.sub(r"\\(.)", r"\1", markdown_text(name))
        assert not re.match(r"[#+=-]|\d+[.)]", text), item
        assert not re.search(r"(?<!\\)[<>\[\]`*_|]", text), item
    for line in terminal_lines(report, Path("out") / CLASS_REPORT):
        assert not re.search("[\x00-\x1f\x7f-\x9f\u202a-\u202e]", line), repr(line)


def test_the_same_grades_give_the_same_bytes_in_any_process() -> None:
    """Hash seeds differ between processes, and the outcomes come in another order: one file."""
    script = (
        "from labs.grading.class_report import class_report, markdown\n"
        "from tests.grading.test_class_report import a_class\n"
        "grades = a_class()\n"
        "for g in grades:\n"
        "    g.outcomes = dict(reversed(list(g.outcomes.items())))\n"
        "print(markdown(class_report(grades)), end='')\n"
    )
    made = {
        subprocess.run(
            [sys.executable, "-c", script],
            cwd=REPO_ROOT,
            env={**os.environ, "PYTHONHASHSEED": seed, "PYTHONPATH": str(REPO_ROOT)},
            capture_output=True,
            text=True,
            timeout=60,
            check=True,
        ).stdout
        for seed in ("1", "2", "3")
    }
    assert made == {markdown(class_report(a_class()))}


@pytest.mark.slow
def test_labs_grade_writes_the_class_report_and_ends_with_its_short_version(
    tmp_path: Path,
) -> None:
    """A class graded end to end: the groups come from the checks' verdicts, the learners
    under each, the broken hand-in apart; the terminal's last lines say the same, shorter."""
    by_name = {a.name: a for a in CATALOGUE}
    hand_ins = tmp_path / "hand-ins"
    for folder, mistake in (
        ("张伟", "allowlist-with-done-to-running"),
        ("# José | b", "allowlist-with-done-to-running"),
        ("ada", "key-not-scoped-to-the-session"),
        ("ben", "key-from-a-uuid5"),
    ):
        build(by_name[mistake], hand_ins / folder)
    make.not_a_zip(hand_ins / "hal.zip")
    out = tmp_path / "out"
    class_of = sorted(map(str, hand_ins.iterdir()))
    done = subprocess.run(
        [sys.executable, "-m", "labs", "grade", *class_of, "--out", str(out), "--jobs", "2"],
        cwd=REPO_ROOT,
        env={k: v for k, v in os.environ.items() if k != "DATABASE_URL"},
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    report = out / CLASS_REPORT
    assert stat.S_IMODE(os.lstat(report).st_mode) == 0o600
    text = report.read_text(encoding="utf-8")
    sections = re.findall(r"^## (.*)\n\n((?:- .*\n)+)", text, flags=re.M)
    assert sections[:3] == [
        ("2 · the allowlist lets done → running", "- \\# José \\| b\n- 张伟\n"),
        ("1 · with a clientMessageId, the key ignores the session", "- ada\n"),
        ("Broke no rule (1)", "- ben\n"),
    ]
    assert len(sections) == 3  # then the one set apart, below a sentence saying why
    assert re.search(r"^## Could not be graded \(1\)\n\n.+\n\n- hal: .+\n$", text, flags=re.M)
    assert done.stdout.splitlines()[-4:] == [
        f"What the class got wrong, most common first (every learner under each: {report}):",
        "  2  the allowlist lets done → running (# José | b, 张伟)",
        "  1  with a clientMessageId, the key ignores the session (ada)",
        "  could not be graded: hal",
    ]
