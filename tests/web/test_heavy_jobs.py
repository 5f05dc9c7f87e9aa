"""One heavy job per kind at a time, and a process's output held in a capped buffer."""

from __future__ import annotations

from pathlib import Path

import pytest

from labs.term import i18n
from labs.untrusted import CappedOutput
from web.checkruns import check_run
from web.checkruns.check_run import start_checks
from web.safety.jobs import BusyError, HeavyJobs

from .conftest import make_app
from .pages import HTMX, form_error

UNREACHABLE = "postgresql://lab:lab@127.0.0.1:1/lab"
RACE = {"requests": "4", "delay_ms": "0"}


def pattern(size: int) -> bytes:
    """size bytes where every position can be told apart from its neighbours."""
    return bytes(i % 251 for i in range(size))


@pytest.mark.parametrize("total", [0, 1, 999, 1000, 1001, 4096, 100_000])
@pytest.mark.parametrize("chunk", [1, 7, 500, 65536])
def test_a_capped_buffer_keeps_the_head_and_the_tail(total: int, chunk: int) -> None:
    """However the output is cut into chunks, the first and last halves of the limit stay."""
    limit = 1000
    data = pattern(total)
    buffer = CappedOutput(limit)
    for start in range(0, total, chunk):
        buffer.feed(data[start : start + chunk])
        assert buffer.held <= limit
    assert buffer.dropped == max(0, total - limit)
    if total <= limit:
        assert buffer.text() == data.decode("utf-8", "replace")
    else:
        expected = (
            data[: limit // 2].decode("utf-8", "replace")
            + f"\n… {total - limit} bytes of output left out …\n"
            + data[-(limit - limit // 2) :].decode("utf-8", "replace")
        )
        assert buffer.text() == expected


# Put before the starter's key line: the host floods its stderr, then dies.
CRASH = (
    "    import os, sys\n"
    "    sys.stderr.write('FIRST LINE\\n' + 'noise ' * 500_000 + '\\nLAST WORDS')\n"
    "    sys.stderr.flush()\n"
    "    os._exit(3)\n"
)


def test_a_tree_host_that_floods_and_crashes_is_a_failed_row_with_its_output_capped(
    tree_copy: Path,
) -> None:
    """A host that dies after megabytes of stderr: the rows that ran into it quote a short
    piece of its last output, never all of it, and the checks after it run on a new host."""
    keys = tree_copy / "shared" / "keys.py"
    shipped = keys.read_text()
    line = '    material = f"{session_id}\\x1f{time.time_ns()}"\n'
    assert line in shipped, "the starter's key line moved: update this test"
    keys.write_text(shipped.replace(line, CRASH + line))
    run = start_checks("starter", str(tree_copy), "memory", database_url=None, timeout=120)
    assert run.wait(180)
    assert not run.error  # the run itself finished: each check has its verdict
    crashed = [row for row in run.six if "stopped answering" in str(row.message)]
    assert crashed, [str(row.message) for row in run.six]
    said = str(crashed[0].message)  # worded when shown: in English outside a page
    assert "its last output: " in said and "noise" in said and "FIRST LINE" not in said
    assert len(said) < 1000
    assert run.six[1].status == "pass"  # check 2 never makes a key: a new host served it


def test_a_bug_that_stops_the_checks_is_a_visible_error_not_a_hung_run(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An exception out of run_checks ends the run: the first row and the notice name it,
    the other rows say the reason is above them, and the dashboard speaks as before."""

    def broken(*args: object, **kwargs: object) -> None:
        raise RuntimeError("a bug in the kit")

    monkeypatch.setattr(check_run, "run_checks", broken)
    run = start_checks("starter", "starter", "memory", database_url=None, timeout=60)
    assert run.wait(30)
    said = str(run.error)  # worded when shown: in English outside a page
    assert said == "the checks could not run: RuntimeError: a bug in the kit"
    assert [row.status for row in run.six] == ["fail"] * 6
    assert str(run.six[0].message) == said
    assert str(run.six[1].message) == "not run: the reason is above the rows"
    assert type(i18n._("the check to run to the end")) is str


def test_a_kind_holds_one_job_and_frees_it_after() -> None:
    """A second claim of a kind is BusyError naming the first; another kind is independent."""
    jobs = HeavyJobs()
    with jobs.hold("race", "32 requests"):
        with pytest.raises(BusyError, match=r"a race is already going \(32 requests"):
            jobs.claim("race", "8 requests")
        jobs.claim("checks", "starter")  # a check run may go beside a race
    jobs.claim("race", "8 requests")
    assert jobs.going("race") == "8 requests" and jobs.going("checks") == "starter"


def test_a_second_race_is_refused_while_one_goes_on() -> None:
    """With a race going, another is a 409 saying so; once it ends, the next one runs."""
    for app in make_app(DATABASE_URL=UNREACHABLE):
        client = app.test_client()
        jobs: HeavyJobs = app.extensions["mini_koda_lab"].jobs
        jobs.claim("race", "a race from another tab")
        busy = client.post("/race", data=RACE, headers=HTMX)
        assert busy.status_code == 409
        said = " ".join(form_error(busy.text).split())
        assert said.startswith("Nothing was raced: a race is already going")
        assert "a race from another tab" in said and "one at a time" in said
        jobs.release("race")
        for _ in range(2):  # a race that failed frees the slot too
            answer = client.post("/race", data=RACE, headers=HTMX)
            assert answer.status_code == 503 and "Connection refused" in form_error(answer.text)
