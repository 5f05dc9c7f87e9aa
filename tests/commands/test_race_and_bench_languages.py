"""`python -m labs race` and `python -m labs bench` in each language: tables lined up, and no
English left in a translated one.

Everything here formats made-up outcomes and reports, so no database is needed. The
English renderings are pinned too: they are what the other tests and the handout quote.
"""

# ruff: noqa: E501  (the pinned English outputs are wider than a line of code)

from __future__ import annotations

import argparse
import re
from collections.abc import Callable
from functools import partial
from typing import Any

import pytest
import wcwidth

from labs.bench.memory import MemoryCost
from labs.bench.model import BenchReport
from labs.bench.report import format_report
from labs.bench.stats import Measurement, Tool
from labs.commands.cli import build_parser
from labs.commands.race import database_problem, format_outcome, within, wrapped
from labs.lesson.race import GUARDED, NAIVE, PathOutcome, RaceOutcome
from labs.term import i18n
from labs.term.i18n import _
from tests.support.english import english_runs
from tests.support.languages import LANGUAGES, TRANSLATED


def outcomes() -> list[RaceOutcome]:
    """Every shape the race can print: with and without a pause, both paths or the naive one,
    no duplicate, one duplicate, many."""
    found = []
    for delay_ms in (20.0, 0.0):
        for naive_rows in (32, 2, 1):
            naive = PathOutcome(NAIVE, 32, naive_rows, naive_rows)
            guarded = PathOutcome(GUARDED, 32, 1, 1)
            found.append(RaceOutcome(32, delay_ms, naive, guarded))
        found.append(RaceOutcome(32, delay_ms, PathOutcome(NAIVE, 32, 32, 32), None))
    return found


def measurement(part: str, clients: int, throughput: float, tool: Tool, **more: Any) -> Measurement:
    """A made-up measurement: 1 s window, p50 1 ms, p99 2 ms, no errors."""
    return Measurement(part, clients, int(throughput), 1.0, throughput, 1.0, 2.0, 0, tool, **more)


def full_report() -> BenchReport:
    """A report with every section the bench can print."""
    return BenchReport(
        machine={"cpus": 2, "python": "3.11.9", "postgres": "15.6", "platform": "Linux-6.1"},
        settings={
            "seconds": 1,
            "workers": 2,
            "threads": 8,
            "agent_seconds": 1.0,
            "step_seconds": {"making a scratch database": 1.2, "(a) raw": 2.0},
            "wall_seconds": 31.5,
        },
        raw_sql=[
            measurement("a", 1, 2000, "pgbench", cpu_ms={"postgres": 0.2}),
            measurement("a", 16, 8000, "pgbench", cpu_ms={"postgres": 0.1}),
        ],
        store=[
            measurement("b", 1, 1000, "python", cpu_ms={"client": 0.3}),
            measurement("b", 16, 3000, "python", cpu_ms={"client": 0.25, "postgres": 0.1}),
        ],
        floor_http=[
            measurement("c0", 1, 4000, "wrk", cpu_ms={"server": 0.1}),
            measurement("c0", 16, 6000, "wrk", cpu_ms={"server": 0.12}),
        ],
        flask_floor=[
            measurement("c1", 1, 2000, "wrk", cpu_ms={"server": 0.2}),
            measurement("c1", 16, 4000, "wrk", cpu_ms={"server": 0.4}),
        ],
        http=[
            measurement("c", 1, 500, "wrk"),
            measurement("c", 16, 2000, "wrk", cpu_ms={"postgres": 0.3, "server": 0.9}),
        ],
        tuned_http=[
            measurement("c-tuned", 1, 520, "wrk"),
            measurement("c-tuned", 16, 2400, "wrk"),
        ],
        open_http=[measurement("c", 32, 1000, "python", loop="open", rate=1000.0, late=12)],
        accept=[
            measurement("d-split", 64, 50, "python", loop="open", rate=50.0),
            measurement("d-inline", 64, 20, "python", loop="open", rate=50.0),
        ],
        cross_check=[measurement("c", 16, 1900, "python")],
        memory=[
            MemoryCost("create_run", 10, 10, 3.5),
            MemoryCost("append_message", 1500, 2000, 120.25),
        ],
        slow_runs_started={"split": 16, "inline": 9},
    )


def in_language(language: str, render: Callable[[], str]) -> str:
    """What a rendering function prints in a language."""
    i18n.use(language)
    return render()


# --- the detector -------------------------------------------------------------------------


def test_the_detector_finds_the_english_of_both_commands(speak: None) -> None:
    """Run on the English output (what Chinese showed before translation), the check fails."""
    for outcome in outcomes():
        assert english_runs(in_language(i18n.ENGLISH, partial(format_outcome, outcome)))
    assert english_runs(in_language(i18n.ENGLISH, lambda: format_report(full_report())))


# --- no English sentences in a translated language ---------------------------------------


@pytest.mark.parametrize("language", TRANSLATED)
@pytest.mark.parametrize("outcome", outcomes())
def test_the_race_speaks_the_language(speak: None, outcome: RaceOutcome, language: str) -> None:
    """Header, table and closing paragraphs: no run of 3+ English words."""
    shown = in_language(language, lambda: format_outcome(outcome))
    assert english_runs(shown) == [], shown


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_bench_report_speaks_the_language(speak: None, language: str) -> None:
    """Every section of the report: no run of 3+ English words."""
    shown = in_language(language, lambda: format_report(full_report()))
    assert english_runs(shown) == [], shown


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_race_errors_speak_the_language(speak: None, language: str) -> None:
    """Argument errors and the advice after libpq's own line."""
    import psycopg2

    i18n.use(language)
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        within(2, 64, int)("200")
    assert english_runs(str(raised.value)) == [] and "2" in str(raised.value)
    with pytest.raises(argparse.ArgumentTypeError) as raised:
        within(0, 1000, float)("soon")
    assert english_runs(str(raised.value)) == [] and "'soon'" in str(raised.value)
    full = database_problem(psycopg2.OperationalError("FATAL:  too many connections for role"))
    refused = database_problem(psycopg2.OperationalError("connection refused"))
    # libpq's line stays as libpq wrote it; what to try is in the language.
    assert english_runs(full.removeprefix("FATAL:  too many connections for role")) == []
    assert "--requests" in full
    assert english_runs(refused.removeprefix("connection refused")) == []


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("command", ["race", "bench"])
def test_the_help_of_race_and_bench_speaks_the_language(
    speak: None, command: str, language: str
) -> None:
    """The description and every option's help (argparse's own -h belongs to labs.commands.cli):
    English sentences in English (the detector finds them), none in a translated language."""
    i18n.use(language)
    parser = subparser(build_parser(), command)
    texts = [parser.description or ""] + [
        action.help or "" for action in parser._actions if action.dest != "help"
    ]
    assert bool(english_runs("\n".join(texts))) is (language == i18n.ENGLISH), texts


def subparser(parser: argparse.ArgumentParser, name: str) -> argparse.ArgumentParser:
    """The parser of one command."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            found = action.choices[name]
            assert isinstance(found, argparse.ArgumentParser)
            return found
    raise AssertionError(f"no command {name}")


# --- tables lined up by display width -----------------------------------------------------

# A cell: characters with at most single spaces inside; cells are two or more spaces apart.
CELL = re.compile(r"\S+(?: \S+)*")


def cell_ends(line: str) -> list[int]:
    """The terminal column at which each cell of a table line ends."""
    return [wcwidth.width(line[: cell.end()]) for cell in CELL.finditer(line)]


def race_table(shown: str) -> list[str]:
    """The race's table: the lines between the header's blank line and the next blank one."""
    return shown.split("\n\n")[1].splitlines()


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("outcome", outcomes())
def test_the_race_columns_end_at_the_same_terminal_column(
    speak: None, language: str, outcome: RaceOutcome
) -> None:
    """Each path's column ends at one column in every row (the first row has no label)."""
    table = race_table(in_language(language, lambda: format_outcome(outcome)))
    paths = 1 if outcome.guarded is None else 2
    assert len(table) == 4
    ends = {tuple(cell_ends(line)[-paths:]) for line in table}
    assert len(ends) == 1, table
    labels = [wcwidth.width(line) - wcwidth.width(line.lstrip()) for line in table[1:]]
    assert labels == [0, 0, 0]  # the labels start the line


def test_the_check_sees_a_column_padded_by_characters_not_columns() -> None:
    """str.rjust on Chinese cells leaves them a column short per character: caught."""
    rows = ["行数" + "32".rjust(10), "结果" + "一个运行".rjust(10)]
    assert len({cell_ends(row)[-1] for row in rows}) == 2
    fixed = ["行数" + wcwidth.rjust("32", 10), "结果" + wcwidth.rjust("一个运行", 10)]
    assert len({cell_ends(row)[-1] for row in fixed}) == 1


@pytest.mark.parametrize("language", LANGUAGES)
def test_the_bench_tables_line_up(speak: None, language: str) -> None:
    """The measurement table's six figure columns, the CPU lines' client counts and the
    memory lines' per-call figures each end at one terminal column."""
    shown = in_language(language, lambda: format_report(full_report()))
    lines = shown.splitlines()
    table = [
        line for line in lines if CELL.findall(line)[1:2] in (["pgbench"], ["python"], ["wrk"])
    ]
    assert len(table) == 12 + 1 + 1 + 2  # closed loop, open loop, cross-check, (d)
    figure_ends = {tuple(cell_ends(line)[1:7]) for line in table}
    assert len(figure_ends) == 1, table
    # The heads may touch ("tool clients"): find each one after the one before it.
    header, head_ends = lines[3], [0]
    for head in (_("tool"), _("clients"), _("ops/s"), "p50 ms", "p99 ms", _("errors")):
        head_ends.append(header.index(head, head_ends[-1]) + len(head))
    assert tuple(wcwidth.width(header[:end]) for end in head_ends[1:]) in figure_ends, header
    counts = [line for line in lines if re.match(r"    \(\w+\)", line)]
    assert len(counts) == 9  # one line per metered load: (a), (b), (c0) and (c1) twice, (c) once
    assert len({wcwidth.width(re.split(r"(?<=\d) ", line)[0]) for line in counts}) == 1, counts
    memory = [re.match(r"    (create_run|append_message) .*?[:：] +[\d.]+", line) for line in lines]
    ends = {wcwidth.width(found.group()) for found in memory if found}
    assert len(ends) == 1 and sum(1 for found in memory if found) == 2


def test_wrapping_breaks_chinese_between_characters_and_keeps_flags_whole() -> None:
    """A long Chinese line fills the width (no short line before a run without spaces)."""
    text = "没有暂停时，SELECT 与 INSERT 之间的窗口只有一次往返那么宽，" * 3 + "--delay-ms 20。"
    lines = wrapped(text)
    assert all(wcwidth.width(line) <= 88 for line in lines)
    assert all(wcwidth.width(line) >= 80 for line in lines[:-1]), lines
    assert "".join(lines).replace(" ", "") == text.replace(" ", "")
    assert not any(line.startswith(("，", "。")) for line in lines)
    assert "--delay-ms" in "\n".join(lines)


# --- the English output, pinned -----------------------------------------------------------

ENGLISH_RACE = """\
32 concurrent identical requests, one idempotency key, 20 ms pause between check and insert (--delay-ms)

                                       naive check-then-insert   unique constraint (ON CONFLICT)
rows holding the key                                        32                                 1
different runIds answered                                   32                                 1
outcome                                      31 duplicate rows            one run, no duplicates

The pause holds the window between SELECT and INSERT open, so the naive path
loses every time; with --delay-ms 0 it still loses, only less predictably.
The constraint path takes the same pause and still ends with one row: the database,
not the check, decides."""

ENGLISH_NAIVE_RACE = """\
32 concurrent identical requests, one idempotency key, no pause between check and insert (--delay-ms)

                                       naive check-then-insert
rows holding the key                                        32
different runIds answered                                   32
outcome                                      31 duplicate rows

With no pause the window between SELECT and INSERT is only a round trip wide,
so the naive path loses less predictably; --delay-ms 20 holds it open.
Run without --naive to see the unique constraint keep one row under the same load."""

ENGLISH_REPORT = """\
machine: 2 cores, Python 3.11.9, Postgres 15.6 (Linux-6.1)
windows: 1 s measured per load; gunicorn gthread 2 processes x 8 threads for (c0), (c1), (c) and (c-tuned)

part                                        tool clients     ops/s    p50 ms    p99 ms  errors
(a) raw INSERT ... ON CONFLICT           pgbench       1      2000      1.00      2.00       0
(a) raw INSERT ... ON CONFLICT           pgbench      16      8000      1.00      2.00       0
(b) SqlStore.create_run                   python       1      1000      1.00      2.00       0
(b) SqlStore.create_run                   python      16      3000      1.00      2.00       0
(c0) gunicorn, app does nothing              wrk       1      4000      1.00      2.00       0
(c0) gunicorn, app does nothing              wrk      16      6000      1.00      2.00       0
(c1) gunicorn, Flask parses, no store        wrk       1      2000      1.00      2.00       0
(c1) gunicorn, Flask parses, no store        wrk      16      4000      1.00      2.00       0
(c) POST /chat via gunicorn                  wrk       1       500      1.00      2.00       0
(c) POST /chat via gunicorn                  wrk      16      2000      1.00      2.00       0
(c-tuned) hand-tuned POST /chat              wrk       1       520      1.00      2.00       0
(c-tuned) hand-tuned POST /chat              wrk      16      2400      1.00      2.00       0

open loop (latency from each request's intended send time):
(c) POST /chat via gunicorn @1000/s       python      32      1000      1.00      2.00       0  late 12

cross-check, the same loads from the Python generator:
(c) POST /chat via gunicorn               python      16      1900      1.00      2.00       0

b/a throughput ratio: 1 client: 0.50, 16 clients: 0.38
c/a throughput ratio: 1 client: 0.25, 16 clients: 0.25
c0/a throughput ratio: 1 client: 2.00, 16 clients: 0.75
c/c0 throughput ratio: 1 client: 0.12, 16 clients: 0.33
c/c1 throughput ratio: 1 client: 0.25, 16 clients: 0.50
c/c-tuned throughput ratio: 1 client: 0.96, 16 clients: 0.83
target b/a >= 0.45 at 1 client(s): met

per request at one client (ms): database 0.500, store 0.500, http server 0.250, flask 0.250, route 0.500, total 2.000
CPU per request at 16 clients (ms): database 0.300, store 0.250, http server 0.120, flask 0.280, route 0.250, total 1.200

CPU per operation (ms), by process:
    (a) raw INSERT ... ON CONFLICT           1 clients: postgres 0.200
    (a) raw INSERT ... ON CONFLICT          16 clients: postgres 0.100
    (b) SqlStore.create_run                  1 clients: client 0.300
    (b) SqlStore.create_run                 16 clients: client 0.250, postgres 0.100
    (c0) gunicorn, app does nothing          1 clients: server 0.100
    (c0) gunicorn, app does nothing         16 clients: server 0.120
    (c1) gunicorn, Flask parses, no store    1 clients: server 0.200
    (c1) gunicorn, Flask parses, no store   16 clients: server 0.400
    (c) POST /chat via gunicorn             16 clients: postgres 0.300, server 0.900

(d) accept latency while 16 slow agent runs (1.0 s each) are in flight, gunicorn 1 process x 16 threads:
(d) split: runs in workers @50/s          python      64        50      1.00      2.00       0
(d) inline: runs in handler @50/s         python      64        20      1.00      2.00       0
    slow runs started: split 16, inline 9

memory store, per call (us):
    create_run       at      10 rows:       3.5
    append_message   at   1,500 rows:     120.2 (fill stopped at 1,500 of 2,000 rows: time budget)

time per step (s): 1.2, 2.0

total wall time 31.5 s"""


def test_the_english_race_output_is_unchanged(speak: None) -> None:
    """The English race reads exactly as before the translation, both shapes."""
    both, naive_only = outcomes()[0], outcomes()[7]
    assert in_language(i18n.ENGLISH, lambda: format_outcome(both)) == ENGLISH_RACE
    assert in_language(i18n.ENGLISH, lambda: format_outcome(naive_only)) == ENGLISH_NAIVE_RACE


def test_the_english_bench_report_is_unchanged(speak: None) -> None:
    """The English report reads exactly as before the translation, every section."""
    assert in_language(i18n.ENGLISH, lambda: format_report(full_report())) == ENGLISH_REPORT


@pytest.mark.parametrize("language", TRANSLATED)
def test_the_path_names_stay_english_as_data(speak: None, language: str) -> None:
    """The outcome keeps the English names (the dashboard reads them); only the table translates."""
    i18n.use(language)
    assert (NAIVE, GUARDED) == ("naive check-then-insert", "unique constraint (ON CONFLICT)")
    shown = format_outcome(outcomes()[0])
    assert NAIVE not in shown and i18n._(NAIVE) in shown
