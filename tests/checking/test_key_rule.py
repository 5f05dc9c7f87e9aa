"""Check 3 tests the key's whole rule: the tree's own window, and keys from a second process."""

from __future__ import annotations

import re
import shutil
import time
from pathlib import Path

import pytest

from labs.checking.errors import RefusedError
from labs.checking.launch import ExecLauncher, ForkLauncher
from labs.checking.protocol import KEYS_ONLY, HostSpec, HostStore, StoreKind
from labs.checking.runner import run_checks
from labs.checking.session import HostSession
from labs.trees.finding import REPO_ROOT, find_tree

KEYS = "shared/keys.py"
WINDOW = "TIME_BUCKET_SECONDS = 60"


def solution_copy(folder: Path, old: str = "", new: str = "", window: int = 60) -> Path:
    """A copy of the solution with one edit to its keys.py and its own TIME_BUCKET_SECONDS."""
    tree = folder / "solution_copy"
    shutil.copytree(REPO_ROOT / "solution", tree, ignore=shutil.ignore_patterns("__pycache__"))
    path = tree / KEYS
    text = path.read_text(encoding="utf-8").replace(WINDOW, f"TIME_BUCKET_SECONDS = {window}")
    if old:
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    path.write_text(text, encoding="utf-8")
    return tree


def check_3(tree: Path, launcher: object = None) -> tuple[bool, str]:
    """Check 3's verdict on the tree, and what it expected when it failed."""
    report = run_checks(str(tree), only={"3"}, launcher=launcher)  # type: ignore[arg-type]
    (result,) = report.results
    return result.passed, result.expected


@pytest.mark.parametrize("window", [10, 600])
def test_the_window_is_the_trees_own_time_bucket_seconds(tmp_path: Path, window: int) -> None:
    """A correct key over a 10 s or a 600 s window passes: the check samples the tree's window."""
    assert check_3(solution_copy(tmp_path, window=window)) == (True, "")


def test_a_window_narrower_than_the_one_the_tree_declares_fails(tmp_path: Path) -> None:
    """Declaring 600 s and bucketing by 60 s: the same text within the window is a new run."""
    bucket = "bucket = int(moment // TIME_BUCKET_SECONDS)"
    tree = solution_copy(tmp_path, bucket, "bucket = int(moment // 60)", window=600)
    passed, expected = check_3(tree)
    assert not passed
    assert "within 600 s" in expected


@pytest.mark.parametrize(
    "branch",
    [
        ('f"client\\x1f{session_id}\\x1f{client_message_id}"', "hash(client_message_id)"),
        ('f"text\\x1f{session_id}\\x1f{bucket}\\x1f{message}"', "hash(message)"),
    ],
    ids=["with-a-client-id", "without"],
)
@pytest.mark.parametrize("launcher", [ForkLauncher, ExecLauncher], ids=["fork", "exec"])
def test_a_key_salted_per_process_fails_with_either_launcher(
    tmp_path: Path, branch: tuple[str, str], launcher: type
) -> None:
    """hash() in either branch differs in the second process, even when the host is a fork."""
    material, salted = branch
    new = re.sub(r"\{(client_message_id|message)\}", "{" + salted + "}", material)
    passed, expected = check_3(solution_copy(tmp_path, material, new), launcher())
    assert not passed
    assert expected == "the same key from a second gateway process for the same request"


def test_a_keys_host_computes_keys_and_nothing_else() -> None:
    """The second process answers key and batch, and refuses the gateway and the store."""
    tree = find_tree("solution")
    spec = HostSpec(tree.root, KEYS_ONLY, package=tree.package)
    session = HostSession.start(ExecLauncher(), spec)
    try:
        session.deadline = time.monotonic() + 30
        assert session.hello["time_bucket_seconds"] == 60
        key = session.call("key", session_id="s", client_message_id="c", message="m")
        assert re.fullmatch(r"[0-9a-f]{64}", key)
        with pytest.raises(RefusedError, match="keys only"):
            session.call("http", method="POST", path="/chat", body={})
        with pytest.raises(RefusedError, match="keys only"):
            session.call("open_store")
    finally:
        session.kill()


# What each clock call reads, in place of the key: time.time, time.time_ns, datetime.now, gmtime.
RETURN = "    return hashlib.sha256(material.encode()).hexdigest()"
READINGS = """\
    import calendar
    import datetime

    now_utc = datetime.datetime.now(datetime.UTC).timestamp()
    return f"{time.time()} {time.time_ns() / 1e9} {now_utc} {calendar.timegm(time.gmtime())}\""""
MOMENT = 1_000_000_000.0  # 2001-09-09T01:46:40Z


def readings(session: HostSession) -> list[float]:
    """What the tree's clock calls read in the host, through its (edited) key."""
    said = session.call("key", session_id="s", client_message_id=None, message="m")
    return [float(value) for value in str(said).split()]


@pytest.mark.parametrize("store", [StoreKind.MEMORY, KEYS_ONLY])
def test_the_clock_op_moves_every_clock_call_of_the_host(tmp_path: Path, store: HostStore) -> None:
    """time.time, time.time_ns, datetime.now and time.gmtime all read the moment the driver
    set, in the host and in the keys-only second process; null gives the real clock back."""
    tree = find_tree(str(solution_copy(tmp_path, RETURN, READINGS)))
    launcher = ForkLauncher() if store == StoreKind.MEMORY else ExecLauncher()
    session = HostSession.start(launcher, HostSpec(tree.root, store, package=tree.package))
    try:
        session.deadline = time.monotonic() + 30
        session.call("clock", at=MOMENT)
        assert readings(session) == [MOMENT] * 4
        session.call("clock", at=MOMENT + 90)
        assert readings(session) == [MOMENT + 90] * 4
        session.call("clock", at=None)
        assert all(reading > MOMENT + 1e8 for reading in readings(session))
        with pytest.raises(RefusedError, match="not a moment"):
            session.call("clock", at="soon")
    finally:
        session.kill()


def test_each_check_starts_on_the_real_clock(tmp_path: Path) -> None:
    """A check that failed with the clock moved leaves it moved; the next open_store resets it."""
    tree = find_tree(str(solution_copy(tmp_path, RETURN, READINGS)))
    session = HostSession.start(
        ForkLauncher(), HostSpec(tree.root, StoreKind.MEMORY, package=tree.package)
    )
    try:
        session.deadline = time.monotonic() + 30
        session.call("clock", at=MOMENT)
        session.call("open_store")
        assert all(reading > MOMENT + 1e8 for reading in readings(session))
    finally:
        session.kill()


@pytest.mark.parametrize(
    ("old", "new", "passes", "expected"),
    [
        ("time.time() if now is None else now", "time.time()", True, ""),
        (
            "bucket = int(moment // TIME_BUCKET_SECONDS)",
            "bucket = int(moment // 3600)",
            False,
            "the same text 60 s and 120 s later to be a new message each time",
        ),
        (
            "\\x1f{message}",
            "\\x1f{message.casefold()}",
            False,
            "another key for a text that differs only in case or spacing",
        ),
        (
            "\\x1f{message}",
            "\\x1f{' '.join(message.split())}",
            False,
            "another key for a text that differs only in case or spacing",
        ),
        (
            "\\x1f{client_message_id}",
            "\\x1f{client_message_id}\\x1f{int(time.time() // 60)}",
            False,
            "with a clientMessageId, time plays no part",
        ),
    ],
    ids=[
        "reads-the-wall-clock",
        "hour-long-window",
        "folds-case",
        "collapses-spaces",
        "client-id-reads-the-clock",
    ],
)
def test_check_3_judges_the_key_on_the_hosts_moved_clock(
    tmp_path: Path, old: str, new: str, passes: bool, expected: str
) -> None:
    """The key is asked at moments the check sets on the host's clock, whichever clock call it
    makes: a correct key that ignores `now` passes; a window of an hour, a folded text or a
    clientMessageId key holding the time fails, on every seed."""
    tree = solution_copy(tmp_path, old, new)
    for seed in (1, 2, 3):
        report = run_checks(str(tree), only={"3"}, seed=seed)
        (result,) = report.results
        assert result.passed is passes, (seed, result.expected, result.got)
        assert expected in result.expected
