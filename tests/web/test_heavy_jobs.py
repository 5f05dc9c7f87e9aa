"""One heavy job per kind at a time, and a child's output held in a capped buffer."""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from labs.untrusted import CappedOutput
from web.checkruns import check_run
from web.checkruns.check_run import start_checks
from web.checkruns.child import Child
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


def test_a_flooding_child_is_read_whole_but_held_capped() -> None:
    """A child writing 20 MB is read to its end; only the limit stays, head and tail."""
    flood = (
        "import sys; out = sys.stdout.buffer; out.write(b'HEAD'); "
        "[out.write(b'x' * 1_000_000) for _ in range(20)]; out.write(b'TAIL'); "
        "sys.stderr.write('E' * 10)"
    )
    child = Child([sys.executable, "-c", flood], cwd=Path.cwd(), env=os.environ, output_limit=512)
    assert child.finish() == 0
    assert child.stdout.held == 512 and child.stdout.dropped == 20_000_008 - 512
    said = child.stdout.text()
    assert said.startswith("HEAD") and said.endswith("TAIL") and "bytes of output left out" in said
    assert child.stderr.text() == "E" * 10


def test_killing_a_child_kills_what_it_started() -> None:
    """kill() reaches the child's own children (the tree's host), not only the child."""
    parent = (
        "import subprocess, sys; "
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)']); "
        "print(p.pid, flush=True); p.wait()"
    )
    child = Child([sys.executable, "-c", parent], cwd=Path.cwd(), env=os.environ)
    deadline = time.monotonic() + 30
    while not child.stdout.text().strip() and time.monotonic() < deadline:
        time.sleep(0.02)
    grandchild = int(child.stdout.text())
    child.kill()
    child.finish()
    while time.monotonic() < deadline:
        try:
            os.kill(grandchild, 0)
        except ProcessLookupError:
            return
        time.sleep(0.02)
    pytest.fail(f"process {grandchild}, started by the killed child, still runs")


def test_a_check_process_that_floods_and_crashes_is_a_failed_row_with_its_output_capped(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A crash after megabytes of stderr: the row quotes its start and end, the rest left out."""
    crash = (
        "import sys, os; sys.stderr.write('FIRST LINE\\n' + 'noise ' * 500_000 + '\\nLAST WORDS'); "
        "sys.stderr.flush(); os._exit(3)"
    )
    monkeypatch.setattr(check_run, "check_command", lambda *_: [sys.executable, "-c", crash])
    run = start_checks(
        "starter", "starter", "memory", database_url=None, timeout=60, output_limit=256
    )
    assert run.wait(120)
    said = str(run.error)  # worded when shown: in English outside a page
    assert "exit code 3" in said and "bytes of output left out" in said
    assert "FIRST LINE" in said and said.endswith("LAST WORDS")
    assert len(said) < 1000
    assert run.six[0].status == "fail" and run.six[0].message == run.error


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
