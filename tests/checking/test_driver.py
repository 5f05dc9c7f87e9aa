"""The driver and the tree host: the verdict stays in the lab kit's process."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from labs.checking.driver import Driver
from labs.checking.errors import RefusedError
from labs.checking.launch import ExecLauncher, ForkLauncher
from labs.checking.protocol import HostSpec, StoreKind
from labs.checking.result import CheckResult
from labs.checking.runner import run_checks
from labs.checking.session import HostSession
from labs.trees.finding import REPO_ROOT, find_tree

FINAL_LINE = "{} passed, {} failed"


def copy_tree(source: str, target: Path) -> Path:
    """A copy of starter/ or solution/ at target, without bytecode."""
    shutil.copytree(REPO_ROOT / source, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


def lab_check(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """python -m labs check ARGS from the repository root."""
    environ = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "LAB_SEED")}
    environ.update({"PYTHONIOENCODING": "utf-8", **env})
    return subprocess.run(
        [sys.executable, "-m", "labs", "check", *args],
        cwd=REPO_ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=180,
    )


def verdicts(report_results: list[CheckResult]) -> dict[int, bool]:
    """Map check number to passed."""
    return {r.number: r.passed for r in report_results if r.number is not None}


def test_the_driver_never_imports_the_tree_it_checks(tmp_path: Path) -> None:
    """After a whole run, no module of the tree is loaded in the driver's process."""
    copy = copy_tree("solution", tmp_path / "mine")
    script = (
        "import sys\n"
        "from labs.checking.runner import run_checks\n"
        f"report = run_checks({str(copy)!r})\n"
        "report2 = run_checks('starter')\n"
        "loaded = [m for m in sys.modules if m.split('.')[0].startswith(('labtree_', 'starter'))]\n"
        "print(report.passed, report2.passed, loaded)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO_ROOT, capture_output=True, text=True, timeout=180
    )
    assert done.stdout.split() == ["6", "3", "[]"], done.stdout + done.stderr


def test_what_the_tree_prints_never_reaches_the_learner_as_a_verdict(tmp_path: Path) -> None:
    """A starter that prints a fake '6 passed' line and ANSI codes at import still scores 3 of 6."""
    copy = copy_tree("starter", tmp_path / "loud")
    with (copy / "__init__.py").open("a") as init:
        init.write(
            "import sys\n"
            "print('  3 ✓ PASS  forged\\n6 passed, 0 failed')\n"
            "sys.stderr.write('\\x1b[2J\\x1b[Hforged 6 passed, 0 failed\\n')\n"
        )
    done = lab_check("--tree", str(copy))
    assert done.stdout.splitlines()[-1] == FINAL_LINE.format(3, 3)
    assert "forged" not in done.stdout + done.stderr
    assert "\x1b" not in done.stdout + done.stderr
    assert done.returncode == 1


def test_answers_forged_by_the_tree_cannot_raise_its_verdict(tmp_path: Path) -> None:
    """A starter writing well-formed 'ok' answers into every pipe it finds passes nothing more."""
    copy = copy_tree("starter", tmp_path / "forger")
    with (copy / "__init__.py").open("a") as init:
        init.write(
            "import json, os\n"
            "lines = [json.dumps({'id': 'hello', 'ok': True, 'value': {'statuses': []}})]\n"
            "lines += [json.dumps({'id': format(n, '016x'), 'ok': True, 'value': None,\n"
            "          'events': []}) for n in range(50)]\n"
            "for fd in range(3, 40):\n"
            "    try:\n"
            "        os.write(fd, ('\\n'.join(lines) + '\\n').encode())\n"
            "    except OSError:\n"
            "        pass\n"
        )
    report = run_checks(str(copy), seed=11)
    assert report.passed <= 3
    assert not any(result.passed for result in report.results if result.number in (3, 4, 5))


def test_a_hung_check_fails_at_its_time_limit_and_the_rest_still_run(tmp_path: Path) -> None:
    """An endless loop in the key makes check 3 a failed row naming the limit; 4 to 6 still run."""
    copy = copy_tree("solution", tmp_path / "hang")
    keys = copy / "shared" / "keys.py"
    text = keys.read_text()
    keys.write_text(
        text.replace(
            "    if client_message_id is not None:\n",
            "    while client_message_id is not None:\n        pass\n"
            "    if client_message_id is not None:\n",
            1,
        )
    )
    done = lab_check("--tree", str(copy), "--check-timeout", "2")
    lines = done.stdout.splitlines()
    assert lines[-1] == FINAL_LINE.format(5, 1)
    assert any("3 ✗ FAIL" in line for line in lines)
    assert "the check to finish within 2 s" in done.stdout
    for number in (4, 5, 6):
        assert any(line.startswith(f"  {number} ✓ PASS") for line in lines)
    assert done.returncode == 1


def test_a_host_that_exits_mid_check_fails_that_check_only(tmp_path: Path) -> None:
    """os._exit inside the key function fails check 3 with the host's last words; the rest run."""
    copy = copy_tree("solution", tmp_path / "quitter")
    keys = copy / "shared" / "keys.py"
    keys.write_text(
        keys.read_text().replace(
            "    if client_message_id is not None:\n",
            "    if client_message_id is not None:\n"
            "        print('last words')\n"
            "        __import__('os')._exit(3)\n",
            1,
        )
    )
    report = run_checks(str(copy), seed=5)
    assert verdicts(report.results) == {1: True, 2: True, 3: False, 4: True, 5: True, 6: True}
    (three,) = [r for r in report.results if r.number == 3]
    assert "stopped answering" in three.got and "last words" in three.got


def test_the_same_seed_draws_the_same_inputs_and_another_seed_others() -> None:
    """--seed N repeats a run's texts and clientMessageIds; the header line names the seed."""

    def traced(seed: str) -> list[str]:
        done = lab_check("--tree", "solution", "--only", "3", "--trace", "--seed", seed)
        assert done.stdout.splitlines()[0].endswith(f"seed {seed}")
        return re.findall(r'"(?:message|clientMessageId)": "([^"]+)"', done.stdout)

    first, again, other = traced("7"), traced("7"), traced("8")
    assert first and first == again
    assert first != other


def test_lab_seed_in_the_environment_picks_the_seed_of_selftest() -> None:
    """LAB_SEED=N SELFTEST=1 prints seed N in the header."""
    environ = {k: v for k, v in os.environ.items() if k != "DATABASE_URL"}
    environ.update({"MOCK": "1", "SELFTEST": "1", "LAB_SEED": "4242", "PYTHONIOENCODING": "utf-8"})
    done = subprocess.run(
        [sys.executable, "-m", "solution"],
        cwd=REPO_ROOT,
        env=environ,
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.stdout.splitlines()[0].endswith("seed 4242")
    assert done.stdout.splitlines()[-1] == FINAL_LINE.format(6, 0)


@pytest.mark.parametrize("launcher", [ForkLauncher(), ExecLauncher()], ids=["fork", "exec"])
def test_both_launchers_give_the_starter_and_the_solution_their_verdicts(launcher: object) -> None:
    """The forked host and the exec'd `python -m labs.checking.host` agree: 1, 2, 6 (starter)."""
    starter = run_checks("starter", launcher=launcher, seed=3)  # type: ignore[arg-type]
    solution = run_checks("solution", launcher=launcher, seed=3)  # type: ignore[arg-type]
    assert verdicts(starter.results) == {1: True, 2: True, 3: False, 4: False, 5: False, 6: True}
    assert verdicts(solution.results) == dict.fromkeys(range(1, 7), True)


def test_the_host_refuses_an_unknown_operation_with_a_typed_error() -> None:
    """A request the protocol does not define comes back as an error answer, not a crash."""
    driver = Driver(find_tree("solution"), StoreKind.MEMORY, seed=1)
    try:
        session = driver.start()
        session.deadline = time.monotonic() + 60
        with pytest.raises(RefusedError) as refused:
            session.call("no_such_op")
        assert refused.value.type == "ValueError"
        assert session.call("key", session_id="s", client_message_id="c", message="m")
    finally:
        driver.close()


def test_the_exec_command_line_is_the_documented_one() -> None:
    """host_command builds `python -m labs.checking.host --tree ... --requests-fd N ...`."""
    from labs.checking.launch import host_command

    spec = HostSpec(Path("/t"), StoreKind.POSTGRES, "postgresql://x/y", "s", "labtree_1")
    assert host_command(spec, 5, 6, "py", 7) == [
        "py",
        "-m",
        "labs.checking.host",
        "--tree",
        "/t",
        "--store",
        "postgres",
        "--package",
        "labtree_1",
        "--database-url-fd",
        "7",
        "--schema",
        "s",
        "--requests-fd",
        "5",
        "--answers-fd",
        "6",
    ]


def test_rows_print_as_checks_finish_and_a_killed_driver_leaves_no_host(tmp_path: Path) -> None:
    """Check 2's row is printed while check 3 still hangs; killing the driver kills its host."""
    copy = copy_tree("solution", tmp_path / "hang")
    keys = copy / "shared" / "keys.py"
    keys.write_text(
        keys.read_text().replace(
            "    if client_message_id is not None:\n",
            "    while client_message_id is not None:\n        pass\n"
            "    if client_message_id is not None:\n",
            1,
        )
    )
    environ = {**os.environ, "PYTHONIOENCODING": "utf-8"}
    driver = subprocess.Popen(
        [sys.executable, "-m", "labs", "check", "--tree", str(copy), "--check-timeout", "120"],
        cwd=REPO_ROOT,
        env=environ,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert driver.stdout is not None
        for line in driver.stdout:
            if line.startswith("  2 "):
                break
        assert driver.poll() is None  # check 3 is still running: row 2 came out live
        hosts = subprocess.run(
            ["pgrep", "-P", str(driver.pid)], capture_output=True, text=True, check=False
        ).stdout.split()
        assert hosts
    finally:
        driver.kill()
        driver.wait()
        if driver.stdout is not None:
            driver.stdout.close()
    for _ in range(100):
        alive = [pid for pid in hosts if Path(f"/proc/{pid}").exists()]
        if not alive:
            break
        time.sleep(0.1)
    assert not alive


def test_a_host_command_never_carries_the_database_url() -> None:
    """Asked for a host with a database URL but no pipe for it, host_command refuses."""
    from labs.checking.launch import host_command

    spec = HostSpec(Path("/t"), StoreKind.POSTGRES, "postgresql://u:secret@/y", "s", "labtree_1")
    with pytest.raises(ValueError, match="pipe"):
        host_command(spec, 5, 6, "py")


@pytest.mark.parametrize(
    ("where", "old", "new", "lanes"),
    [
        (  # the store loops: the gateway's call into it never comes back
            "infra/memory.py",
            "        with self._lock:\n            self._session(session_id)",
            "        while input:\n            pass\n"
            "        with self._lock:\n            self._session(session_id)",
            ("gateway", "store"),
        ),
        (  # the key loops inside the gateway's route: the client's POST never comes back
            "shared/keys.py",
            "    if client_message_id is not None:\n",
            "    while client_message_id is not None:\n        pass\n"
            "    if client_message_id is not None:\n",
            ("client", "gateway"),
        ),
    ],
)
def test_a_hung_checks_trace_ends_with_the_call_that_never_came_back(
    tmp_path: Path, where: str, old: str, new: str, lanes: tuple[str, str]
) -> None:
    """The arrows a hung request recorded reach the driver before the host is stopped: the
    trace ends with the unanswered call, then an arrow back saying it was stopped."""
    copy = copy_tree("solution", tmp_path / "hang")
    path = copy / where
    assert old in path.read_text()
    path.write_text(path.read_text().replace(old, new, 1))
    report = run_checks(str(copy), seed=3, check_timeout=2, only={"3"})
    (result,) = report.results
    assert not result.passed and "within 2 s" in str(result.expected)
    *_before, call, stopped = result.events
    assert call.kind == "call" and (call.source, call.target) == lanes
    assert stopped.kind == "error" and (stopped.source, stopped.target) == lanes[::-1]
    assert stopped.text == "> 2 s (no answer: stopped at the time limit)"


CHURN = """

import threading as _threading
import time as _time

_shipped_key = idempotency_key_for


def idempotency_key_for(*args, **kwargs):  # a learner's key that starts and ends threads
    ends = _time.monotonic() + 0.3
    while _time.monotonic() < ends:
        worker = _threading.Thread(target=sum, args=([1, 2],))
        worker.start()
        worker.join()
    return _shipped_key(*args, **kwargs)
"""


def test_a_late_request_leaves_its_stacks_and_the_host_alive_while_threads_come_and_go(
    tmp_path: Path,
) -> None:
    """The stacks of a late request are printed mid-churn of threads: the host lives on."""
    copy = copy_tree("solution", tmp_path / "churn")
    with (copy / "shared" / "keys.py").open("a", encoding="utf-8") as keys:
        keys.write(CHURN)
    session = HostSession.start(
        ExecLauncher(), HostSpec(copy, StoreKind.MEMORY, package="labtree_churn")
    )
    try:
        for turn in range(12):
            session.deadline = time.monotonic() + 30
            session.process.send(
                {"id": str(turn), "op": "key", "stack_after": 0.05, "session_id": "s",
                 "client_message_id": None, "message": f"m{turn}"}
            )  # fmt: skip
            answer = session.process.receive(30)
            while answer.get("partial") is True:
                answer = session.process.receive(30)
            assert answer.get("ok") is True, (turn, session.process.stderr_tail())
        assert "idempotency_key_for" in session.process.stderr_tail()
    finally:
        session.kill()
