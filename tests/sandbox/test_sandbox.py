"""The sandbox a submission's processes run in: its user, limits, folder, environment, output."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from labs.checking.protocol import HostSpec, StoreKind
from labs.grading.errors import BrokenSubmissionError
from labs.grading.hand_in import MAX_BYTES, take_in
from labs.sandbox.box import Finished, Sandbox
from labs.sandbox.launcher import SandboxedLauncher
from labs.sandbox.limits import SHM_SIZE, TMP_SIZE, Limits
from labs.sandbox.trampoline import network_namespaces
from labs.sandbox.users import UID_BASE, processes_of
from labs.trees.finding import REPO_ROOT
from labs.untrusted import clean_text
from tests.support.modes import ALL_MODES, Mode, offered, runner
from tests.support.processes import marked, started

ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(not ROOT, reason="a user per submission needs root")
DAEMON_MARK = "4242.25"  # the daemon's sleep, to find it among the machine's processes


def python(code: str) -> list[str]:
    """A command running code in this interpreter."""
    return [sys.executable, "-c", code]


def run_sandboxed(
    argv: list[str],
    *,
    timeout: float,
    env: dict[str, str] | None = None,
    limits: Limits | None = None,
) -> Finished:
    """Run one command in a sandbox of its own, removed after it."""
    with Sandbox(limits) as box:
        return box.run(argv, timeout=timeout, env=env)


@pytest.fixture
def open_dir() -> Iterator[Path]:
    """A folder any user may write in (pytest's own tmp_path is private to root)."""
    folder = Path(tempfile.mkdtemp(prefix="lab-sandbox-test-"))
    os.chmod(folder, 0o777)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def test_a_sandboxed_process_sees_only_the_environment_it_was_given(
    monkeypatch: pytest.MonkeyPatch, mode: Mode
) -> None:
    """CI secrets and another database URL in the grader's environment never reach the child."""
    monkeypatch.setenv("GITHUB_TOKEN", "ghp_secret")
    monkeypatch.setenv("PGPASSWORD", "hunter2")
    monkeypatch.setenv("DATABASE_URL", "postgresql://admin:pw@db/grades")
    done = run_sandboxed(
        python("import json, os; print(json.dumps(dict(os.environ)))"),
        timeout=30,
        env={"DB_SCHEMA": "mine"},
    )
    seen = json.loads(done.stdout)
    assert not {"GITHUB_TOKEN", "PGPASSWORD", "DATABASE_URL"} & seen.keys()
    assert seen["DB_SCHEMA"] == "mine"
    assert seen["HOME"] == seen["TMPDIR"]


def test_the_private_folder_is_the_home_the_temp_dir_and_the_cwd_and_only_its_own(
    mode: Mode,
) -> None:
    """HOME is mode 0700, owned by the sandbox's user, and is where the process starts."""
    code = "import os; s = os.stat('.'); print(os.getcwd(), oct(s.st_mode & 0o777), s.st_uid)"
    with Sandbox() as box:
        where, mode_bits, owner = box.run(python(code), timeout=30).stdout.split()
        assert (where, mode_bits) == (str(box.home), "0o700")
        assert int(owner) == (box.uid if box.uid is not None else os.geteuid())
    assert not box.home.exists()


@needs_root
def test_each_sandbox_runs_as_a_user_of_its_own_that_cannot_reach_another(mode: Mode) -> None:
    """Two sandboxes get two uids; one cannot list the other's private folder."""
    with Sandbox() as first, Sandbox() as second:
        assert first.uid != second.uid and None not in (first.uid, second.uid)
        code = (
            f"import os\ntry:\n os.listdir({str(second.home)!r}); print('read')\n"
            "except OSError: print('refused')"
        )
        assert first.run(python(code), timeout=30).stdout.strip() == "refused"
        assert first.isolation.own_user


SEEN = """
import json, os
def can(path, how):
    try:
        if how == "list":
            os.listdir(path)
        else:
            open(path, "a").close()
        return True
    except OSError:
        return False
print(json.dumps({
    "solution": can(SOLUTION, "list") and bool(os.listdir(SOLUTION)),
    "tests": can(TESTS, "list"),
    "other": can(OTHER, "list"),
    "kit_written": can(KIT, "append"),
    "pids": sorted(int(p) for p in os.listdir("/proc") if p.isdigit()),
}))
"""


def test_the_solution_other_sandboxes_and_the_kit_are_out_of_reach(mode: Mode) -> None:
    """The solution is not there (or empty), another sandbox is unreachable, the kit unwritable.

    With bwrap the repository's tests and every process but the sandbox's own
    are out of sight too.
    """
    with Sandbox() as first, Sandbox() as other:
        code = (
            f"SOLUTION = {str(REPO_ROOT / 'solution')!r}\nTESTS = {str(REPO_ROOT / 'tests')!r}\n"
            f"OTHER = {str(other.home)!r}\nKIT = {str(REPO_ROOT / 'labs' / '__init__.py')!r}\n"
            + SEEN
        )
        seen = json.loads(first.run(python(code), timeout=30).stdout)
    assert seen["solution"] is False
    assert seen["kit_written"] is False
    if ROOT or mode.bwrap:
        assert seen["other"] is False
    if mode.bwrap:
        assert seen["tests"] is False
        assert max(seen["pids"]) < 10  # its own PID namespace: bwrap's init, itself


def test_the_limits_apply_to_the_process(mode: Mode) -> None:
    """CPU seconds, address space and file size are the sandbox's, not the grader's."""
    space = 1536 * 1024 * 1024
    limits = Limits(
        cpu_seconds=7, address_space=space, fallback_address_space=space, file_size=3 * 1024 * 1024
    )
    code = (
        "import resource as r; print(*(r.getrlimit(k)[0] for k in "
        "(r.RLIMIT_CPU, r.RLIMIT_AS, r.RLIMIT_FSIZE)))"
    )
    done = run_sandboxed(python(code), timeout=30, limits=limits)
    assert done.stdout.split() == ["7", str(space), str(3 * 1024 * 1024)]


def test_a_file_past_the_size_limit_cannot_be_written(mode: Mode) -> None:
    """Filling the disk stops at the file size limit."""
    code = "open('big', 'wb').write(b'0' * 4_000_000)"
    done = run_sandboxed(python(code), timeout=30, limits=Limits(file_size=1024 * 1024))
    assert done.returncode is not None and done.returncode != 0, done
    assert "File too large" in done.stderr or "SIGXFSZ" in done.stderr or done.returncode < 0


def test_a_sandboxed_process_has_no_network(mode: Mode) -> None:
    """Connecting anywhere fails at once: the namespace has no route."""
    if not mode.bwrap and not network_namespaces():
        pytest.skip("no network namespaces on this machine without bwrap")
    code = (
        "import socket\ntry:\n socket.create_connection(('192.0.2.1', 80), timeout=2)\n"
        "except OSError as e: print(e.errno)"
    )
    assert run_sandboxed(python(code), timeout=30).stdout.strip() == "101"


def test_a_stderr_flood_is_kept_as_head_and_tail_only(mode: Mode) -> None:
    """200 MB on stderr leave at most the cap in the grader (head and tail), marked as cut."""
    code = (
        "import sys\nfor _ in range(200): sys.stderr.write('x' * 1_000_000)\n"
        "sys.stderr.write('END')"
    )
    limits = Limits(output_bytes=4096)
    done = run_sandboxed(python(code), timeout=120, limits=limits)
    assert done.returncode == 0
    assert len(done.stderr) < 4096 + 100
    assert done.stderr.startswith("x") and done.stderr.endswith("END")
    assert "bytes of output left out" in done.stderr


def test_a_process_that_runs_past_its_timeout_is_killed_with_its_group(mode: Mode) -> None:
    """An endless loop that started a child is reported as timed out; neither survives."""
    code = (
        "import subprocess, sys, time\n"
        f"subprocess.Popen(['sleep', '{DAEMON_MARK}1'])\ntime.sleep(60)"
    )
    with Sandbox() as box:
        done = box.run(python(code), timeout=2)
        assert done.timed_out
    assert marked(f"{DAEMON_MARK}1") == []


def test_a_double_forked_setsid_daemon_dies_with_its_sandbox(mode: Mode) -> None:
    """A process that left the session and outlived its parent is still killed with the sandbox."""
    if not ROOT and not mode.bwrap:
        pytest.skip("without root or bwrap a setsid daemon escapes (INSTRUCTORS.md says so)")
    code = f"""
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", "{DAEMON_MARK}"])
    os._exit(0)
time.sleep(120)
"""
    with Sandbox() as box:
        process = box.popen(python(code), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert started(DAEMON_MARK), "the daemon never started"
        process.kill()  # its parent is gone; the daemon lives on until the sandbox ends
        process.wait()
    assert marked(DAEMON_MARK) == []


def test_control_characters_and_escapes_are_stripped_from_untrusted_text() -> None:
    """ANSI sequences, CR, BEL, backspace and bidi overrides leave only the visible text."""
    hostile = "boom\x1b[2K\r\x1b[1Aada 110 110 ok\x07\x08\u202etxt\x1b]0;title\x07\x9b31m!"
    assert clean_text(hostile) == "boomada 110 110 oktxt!"
    assert clean_text("line one\r\nline two\n", keep_newlines=True) == "line one\nline two\n"


def test_the_launcher_starts_a_host_in_a_sandbox_and_kills_all_it_started(
    tmp_path: Path, open_dir: Path, mode: Mode
) -> None:
    """Over its two pipes the host answers as the sandbox's user; kill() leaves nothing behind."""
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "__init__.py").write_text("", encoding="utf-8")
    beat_dir = open_dir
    launcher = SandboxedLauncher(module="tests.grading.echo_host", expose=[REPO_ROOT / "tests"])
    host = launcher.launch(HostSpec(tree))
    try:
        host.send({"spawn": str(beat_dir / "beat")})
        answer = host.receive(30.0)
    finally:
        host.kill()
    assert answer["tree_files"] == ["__init__.py"]
    assert answer["home_mode"] == "0o700"
    assert "DATABASE_URL" not in answer["env"]
    if ROOT:
        assert answer["uid"] >= UID_BASE
        assert processes_of(answer["uid"]) == []
    if mode.bwrap or network_namespaces():
        assert answer["network"] is False


def test_the_host_is_given_the_submissions_credentials_never_the_drivers(
    tmp_path: Path, mode: Mode
) -> None:
    """On Postgres the launcher swaps the driver's URL and schema for the submission's own."""
    (tmp_path / "__init__.py").write_text("", encoding="utf-8")
    grader = "postgresql://grader:secret@/lab?host=/tmp/pg"
    tenant = "postgresql://grade_ada_1:pw@/lab?host=/tmp/pg"
    launcher = SandboxedLauncher(
        module="tests.grading.echo_host",
        database_url=tenant,
        schema="grade_ada_1",
        expose=[REPO_ROOT / "tests"],
    )
    spec = HostSpec(tmp_path, StoreKind.POSTGRES, grader, "public", "ada")
    assert launcher.host_spec(spec) == HostSpec(
        tmp_path, StoreKind.POSTGRES, tenant, "grade_ada_1", "ada"
    )
    host = launcher.launch(spec)
    try:
        host.send({})
        answer = host.receive(30.0)
    finally:
        host.kill()
    assert {"DATABASE_URL", "DB_SCHEMA"} <= set(answer["env"])
    assert answer["database_url"] == tenant
    assert answer["piped_url"] == tenant


def test_no_other_submission_reads_a_hosts_password_in_proc(tmp_path: Path, mode: Mode) -> None:
    """A classmate scanning every /proc/*/cmdline and /proc/*/environ never finds the password."""
    (tmp_path / "__init__.py").write_text("", encoding="utf-8")
    password = f"pw{os.getpid()}x{time.monotonic_ns()}"
    tenant = f"postgresql://grade_ada_1:{password}@/lab?host=/tmp/pg"
    launcher = SandboxedLauncher(
        module="tests.grading.echo_host",
        database_url=tenant,
        schema="grade_ada_1",
        expose=[REPO_ROOT / "tests"],
    )
    snoop = f"""
import os
wanted = {password[::-1]!r}[::-1].encode()
found = []
for pid in os.listdir("/proc"):
    for part in ("cmdline", "environ"):
        try:
            with open(f"/proc/{{pid}}/{{part}}", "rb") as f:
                found += [part] if wanted in f.read() else []
        except OSError:
            pass
print(sorted(set(found)) or "nothing")
"""
    host = launcher.launch(HostSpec(tmp_path, StoreKind.POSTGRES, tenant, "grade_ada_1", "ada"))
    try:
        host.send({})
        assert host.receive(30.0)["piped_url"] == tenant
        seen = run_sandboxed(python(snoop), timeout=60)
    finally:
        host.kill()
    assert seen.stdout.strip() == "nothing", seen.stderr


def test_a_folder_is_taken_in_without_following_links(tmp_path: Path) -> None:
    """A link to /dev/zero and one to a file outside are named in a note, never read."""
    hand_in = tmp_path / "hand-in"
    (hand_in / "tree").mkdir(parents=True)
    (hand_in / "tree" / "keys.py").write_text("KEY = 1\n", encoding="utf-8")
    (hand_in / "zero").symlink_to("/dev/zero")
    (hand_in / "tree" / "secret.py").symlink_to("/etc/shadow")
    intake = take_in(hand_in, tmp_path / "scratch")
    copied = sorted(p.relative_to(intake.root).as_posix() for p in intake.root.rglob("*"))
    assert copied == ["tree", "tree/keys.py"]
    assert "zero -> /dev/zero" in " ".join(intake.notes())
    assert "tree/secret.py -> /etc/shadow" in " ".join(intake.notes())


def zip_of(path: Path, entries: dict[str, bytes], *, link: str = "") -> Path:
    """A zip holding entries (and a symbolic link entry named link, to /dev/zero)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive:
        for name, data in entries.items():
            archive.writestr(name, data)
        if link:
            info = zipfile.ZipInfo(link)
            info.external_attr = 0o120777 << 16
            archive.writestr(info, "/dev/zero")
    return path


def test_a_zip_bomb_is_refused_before_anything_is_written(tmp_path: Path) -> None:
    """A zip whose Python unpacks past the limit is refused from its directory, naming it.

    (A large file that is not Python is left out unread instead: tests/grading/test_hand_in.py.)
    """
    bomb = zip_of(tmp_path / "bomb.zip", {"starter/big.py": b"\0" * (MAX_BYTES + 1)})
    assert bomb.stat().st_size < 1024 * 1024
    with pytest.raises(BrokenSubmissionError, match=r"more than 64 MB.*starter/big\.py"):
        take_in(bomb, tmp_path / "scratch")
    assert not any((tmp_path / "scratch").rglob("big.py"))


@pytest.mark.parametrize(
    ("name", "reason"),
    [("../escape.py", "outside its folder"), ("/etc/cron.d/x", "outside its folder")],
)
def test_a_zip_with_a_path_outside_its_folder_is_refused(
    tmp_path: Path, name: str, reason: str
) -> None:
    """Absolute paths and .. in a zip are refused, not cleaned up and extracted."""
    archive = zip_of(tmp_path / "evil.zip", {"starter/__init__.py": b"", name: b"x"})
    with pytest.raises(BrokenSubmissionError, match=reason):
        take_in(archive, tmp_path / "scratch")


def test_a_link_in_a_zip_is_named_and_not_written(tmp_path: Path) -> None:
    """A symbolic link entry is left out and reported with its target."""
    archive = zip_of(tmp_path / "link.zip", {"starter/__init__.py": b""}, link="starter/zero")
    intake = take_in(archive, tmp_path / "scratch")
    assert not (intake.root / "starter" / "zero").exists()
    assert "starter/zero -> /dev/zero" in " ".join(intake.notes())


def test_a_zip_with_too_many_entries_is_refused(tmp_path: Path) -> None:
    """Thousands of tiny entries are refused before any is extracted."""
    archive = zip_of(tmp_path / "many.zip", {f"f{n}.py": b"" for n in range(2001)})
    with pytest.raises(BrokenSubmissionError, match="more than 2000 files"):
        take_in(archive, tmp_path / "scratch")


MEMORY_HOG = """
import os, time
for _ in range(4):
    if os.fork() == 0:
        block = bytearray(200 * 1024 * 1024)
        for at in range(0, len(block), 4096):
            block[at] = 1
        time.sleep(30)
        os._exit(0)
time.sleep(30)
"""
FORK_STORM = """
import os, time
for _ in range(300):
    try:
        if os.fork() == 0:
            time.sleep(30)
            os._exit(0)
    except OSError:
        pass
time.sleep(30)
"""


def test_children_that_together_pass_the_memory_cap_stop_the_submission(mode: Mode) -> None:
    """Four children of 200 MB, each under every per-process limit: stopped at 512 MB together."""
    started = time.monotonic()
    done = run_sandboxed(python(MEMORY_HOG), timeout=60, limits=Limits(memory=512 * 1024 * 1024))
    assert "used more than 512 MB of memory" in done.stopped
    assert done.returncode is None and not done.timed_out
    assert time.monotonic() - started < 30


def test_forking_past_the_process_cap_stops_the_submission(mode: Mode) -> None:
    """300 sleeping children: the submission is stopped at its cap of 128, and none survives."""
    with Sandbox() as box:
        done = box.run(python(FORK_STORM), timeout=60)
        assert "more than 128 processes" in done.stopped
        if box.uid is not None:
            assert processes_of(box.uid) == []


# Writes 50 MB into /dev (bubblewrap's is a tmpfs half the machine's memory in size) and into
# /dev/shm, and says how each went: memory the sandbox's caps never counted.
DEV_FILLER = """
for path in ("/dev/lab-filler", "/dev/shm/lab-filler"):
    try:
        with open(path, "wb") as out:
            out.write(b"0" * 50_000_000)
        print(path, "written")
    except OSError as error:
        print(path, "refused", error.errno)
with open("/dev/null", "w") as null:
    null.write("still usable")
"""
BWRAP_MODES = [m for m in ALL_MODES if m.bwrap]


@pytest.mark.parametrize("bwrap_mode", BWRAP_MODES, ids=[m.name for m in BWRAP_MODES])
def test_bubblewraps_dev_holds_no_file_and_its_shm_is_small(bwrap_mode: Mode) -> None:
    """Issue 22: /dev is read-only (its devices still work) and /dev/shm is a small tmpfs of
    its own, as root and as an unprivileged grader alike."""
    if offered(bwrap_mode):
        pytest.skip(offered(bwrap_mode))
    code = (
        "import sys\nfrom labs.sandbox.box import Sandbox\n"
        "with Sandbox() as box:\n"
        f"    done = box.run([sys.executable, '-c', {DEV_FILLER!r}], timeout=60)\n"
        "print(done.stdout, done.stderr[-500:])\n"
    )
    with runner(bwrap_mode) as run:
        done = run.python("-c", code)
    said = dict(line.split(" ", 1) for line in done.stdout.splitlines() if line.startswith("/"))
    assert said.get("/dev/lab-filler", "").startswith("refused 30"), done.stdout + done.stderr
    assert said.get("/dev/shm/lab-filler", "").startswith("refused 28"), done.stdout + done.stderr


def test_what_a_sandbox_leaves_in_the_machines_scratch_folders_is_gone_after_it(
    mode: Mode,
) -> None:
    """Issue 22: files and a folder written to /tmp, /var/tmp and /dev/shm (a command's own
    tmpfs in every mode; without bubblewrap the machine's are swept of the uid's files too) do
    not outlive the run: not for the next submission to read, nor to fill the disk or the
    memory."""
    token = f"lab-left-{os.getpid()}-{time.monotonic_ns()}"
    places = [Path("/tmp") / token, Path("/var/tmp") / token, Path("/dev/shm") / token]
    code = (
        "import os, sys\n"
        f"for place in {[str(p) for p in places]!r}:\n"
        "    try:\n"
        "        os.makedirs(place + '/inside')\n"
        "        open(place + '/inside/data', 'wb').write(b'0' * 100_000)\n"
        "        print(place, 'written')\n"
        "    except OSError as error:\n"
        "        print(place, 'refused', error.errno)\n"
    )
    done = run_sandboxed(python(code), timeout=60)
    assert done.returncode == 0, done.stderr
    written = [line.split()[0] for line in done.stdout.splitlines() if line.endswith("written")]
    assert written or mode.bwrap, done.stdout  # without bwrap all three can be written
    try:
        assert [p for p in places if os.path.lexists(p)] == []
    finally:
        for place in places:
            shutil.rmtree(place, ignore_errors=True)


SCRATCH = ["/tmp", "/var/tmp", "/dev/shm"]
# Writes a file named NAME in each scratch folder, says how each went, then waits to be killed.
WRITE_AND_WAIT = """
import os, time
for place in PLACES:
    try:
        with open(os.path.join(place, NAME), "w") as out:
            out.write("mine")
        print(place, "written", flush=True)
    except OSError as error:
        print(place, "refused", error.errno, flush=True)
print("done", flush=True)
time.sleep(120)
"""
# Says, for each scratch folder, whether a file named NAME is there.
LOOK = "import os\nfor place in PLACES: print(place, os.path.exists(os.path.join(place, NAME)))"


def test_two_sandboxes_at_once_never_see_each_others_scratch_files(mode: Mode) -> None:
    """Each command has a /tmp, /var/tmp and /dev/shm of its own, without bwrap too: while it
    runs, what it wrote there is neither in the machine's folders nor in another sandbox's."""
    name = f"lab-scratch-{os.getpid()}-{time.monotonic_ns()}"
    setup = f"PLACES = {SCRATCH!r}\nNAME = {name!r}\n"
    try:
        with Sandbox() as first, Sandbox() as second:
            writer = first.popen(python(setup + WRITE_AND_WAIT), stderr=subprocess.DEVNULL)
            assert writer.stdout is not None
            said = []
            with writer.stdout as lines:
                while (line := lines.readline().decode().strip()) not in ("done", ""):
                    said.append(line)
                on_the_machine = [p for p in SCRATCH if os.path.lexists(f"{p}/{name}")]
                looked = second.run(python(setup + LOOK), timeout=60)
    finally:
        for place in SCRATCH:
            with contextlib.suppress(OSError):
                os.unlink(f"{place}/{name}")
    written = [line.split()[0] for line in said if line.endswith("written")]
    # bubblewrap shows no /var at all; the machine's three are covered without it.
    assert written == (["/tmp", "/dev/shm"] if mode.bwrap else SCRATCH), said
    assert on_the_machine == []
    assert looked.stdout.split() == [word for place in SCRATCH for word in (place, "False")]


# Writes a little more than each scratch folder's cap into it, and says how each went.
FILL_SCRATCH = """
import os
for place, size in SIZES:
    path = os.path.join(place, "lab-filler")
    try:
        with open(path, "wb") as out:
            for _ in range(size // 2**20 + 1):
                out.write(b"0" * 2**20)
        print(place, "written")
    except OSError as error:
        print(place, "refused", error.errno)
    finally:
        if os.path.exists(path):
            os.remove(path)
"""


def test_writing_past_a_scratch_folders_cap_is_refused(mode: Mode) -> None:
    """A command's /tmp and /var/tmp hold 64 MB and its /dev/shm 16 MB, without bwrap too:
    one more megabyte fails with ENOSPC, and the machine's disk and memory are not filled."""
    sizes = [("/tmp", TMP_SIZE), ("/var/tmp", TMP_SIZE), ("/dev/shm", SHM_SIZE)]
    done = run_sandboxed(python(f"SIZES = {sizes!r}\n" + FILL_SCRATCH), timeout=120)
    said = dict(line.split(" ", 1) for line in done.stdout.splitlines())
    expected = {"/tmp": "refused 28", "/dev/shm": "refused 28"}
    if not mode.bwrap:  # under bubblewrap there is no /var/tmp to write to
        expected["/var/tmp"] = "refused 28"
    assert {place: said.get(place) for place in expected} == expected, done.stdout + done.stderr


# Fills /tmp with 60 MB (under its cap of 64), then says so.
HOG_TMP = """
with open("/tmp/lab-hog", "wb") as out:
    for _ in range(60):
        out.write(b"0" * 2**20)
print("written")
"""


def test_what_a_command_writes_to_its_tmp_counts_against_its_memory_cap(mode: Mode) -> None:
    """Its /tmp is memory, counted in the submission's cgroup: 60 MB there under a cap of 40 MB
    stops it, where the machine's /tmp (a disk) would have taken them uncounted."""
    with Sandbox(Limits(memory=40 * 2**20)) as box:
        if box.cgroup is None:
            pytest.skip("no cgroup here: the watch counts processes' memory, not files")
        done = box.run(python(HOG_TMP), timeout=60)
        # The kernel's OOM killer may end it before the sandbox's watch looks: ask the cgroup.
        why = done.stopped or box.cgroup.tripped()
    assert "written" not in done.stdout
    assert "more than 40 MB of memory" in why, done.stdout + done.stderr


# Says what the command reaches: its home, the socket in a folder of its own, one in /tmp
# itself, and a file in a folder shown to it on purpose.
REACH = """
import json, os, socket
def greeting(path):
    try:
        with socket.socket(socket.AF_UNIX) as client:
            client.connect(path)
            return client.recv(100).decode()
    except OSError as error:
        return f"refused {error.errno}"
note = os.path.join(os.environ["HOME"], "note")
with open(note, "w") as out:
    out.write("kept")
with open(note) as back, open(SHOWN) as shown:
    print(json.dumps({
        "home": back.read(), "cwd": os.getcwd(), "shown": shown.read(),
        "folder": greeting(IN_FOLDER), "tmp": greeting(IN_TMP),
    }))
"""


@contextlib.contextmanager
def greeter(path: Path) -> Iterator[None]:
    """A Unix socket at path, which any user may connect to, that says hello to each caller."""
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    os.chmod(path, 0o777)
    server.listen()

    def serve() -> None:
        while True:
            try:
                connection, _ = server.accept()
            except OSError:
                return
            with connection:
                connection.sendall(b"hello")

    threading.Thread(target=serve, name="greeter", daemon=True).start()
    try:
        yield
    finally:
        with contextlib.suppress(OSError):
            server.shutdown(socket.SHUT_RDWR)  # wakes the accept
        server.close()
        path.unlink(missing_ok=True)


def test_a_command_still_reaches_its_home_its_database_socket_and_what_it_is_shown(
    mode: Mode,
) -> None:
    """Its own /tmp covers the machine's, not what the command needs from there: its home (its
    cwd), a database's socket folder named in a postgresql:// URL (a socket right in /tmp,
    too) and a folder the caller exposes are all still there."""
    folder = Path(tempfile.mkdtemp(prefix="lab-socket-test-"))
    shown = Path(tempfile.mkdtemp(prefix="lab-shown-test-"))
    port = next(p for p in range(41000 + os.getpid() % 9000, 60000) if not in_tmp(p).exists())
    try:
        folder.chmod(0o711)  # entered, not listed: as a cluster's socket folder
        shown.chmod(0o755)
        (shown / "data.txt").write_text("shown", encoding="utf-8")
        (shown / "data.txt").chmod(0o644)
        code = (
            f"IN_FOLDER = {str(folder / '.s.PGSQL.5432')!r}\nIN_TMP = {str(in_tmp(port))!r}\n"
            f"SHOWN = {str(shown / 'data.txt')!r}\n" + REACH
        )
        env = {
            "DATABASE_URL": f"postgresql://ada@/lab?host={folder}&port=5432",
            "OTHER_URL": f"postgresql://ada@/lab?host=/tmp&port={port}",
        }
        with (
            greeter(folder / ".s.PGSQL.5432"),
            greeter(in_tmp(port)),
            Sandbox(expose=[shown]) as box,
        ):
            done = box.run(python(code), timeout=60, env=env)
            home = str(box.home)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(shown, ignore_errors=True)
    seen = json.loads(done.stdout or "{}")
    assert seen == {
        "home": "kept",
        "cwd": home,
        "shown": "shown",
        "folder": "hello",
        "tmp": "hello",
    }, done.stderr


def in_tmp(port: int) -> Path:
    """Where a Postgres whose socket folder is /tmp itself listens on port."""
    return Path("/tmp") / f".s.PGSQL.{port}"


# Says which interpreter runs it, where it imports the kit from, and whether a file is there.
SEES_ITS_KIT = "import labs, os, sys; print(sys.prefix, labs.__file__, os.path.exists(sys.argv[1]))"


def test_an_interpreter_and_a_kit_under_tmp_still_run_in_the_sandbox(mode: Mode) -> None:
    """A grader run from a virtualenv and a copy of the kit in a private folder of /tmp (as a CI
    clone may be): its sandboxed commands still start that interpreter and import that kit,
    with /tmp their own, and the checkout's solution there stays out of sight."""
    scratch = Path(tempfile.mkdtemp(prefix="lab-kit-test-"))  # mode 0700, as mkdtemp makes it
    try:
        place = scratch / "place"
        place.mkdir(mode=0o755)
        venv = place / "venv"
        subprocess.run(
            [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
            check=True,
            capture_output=True,
        )
        kit = place / "kit"
        shutil.copytree(REPO_ROOT / "labs", kit / "labs", ignore=shutil.ignore_patterns("*.pyc"))
        answer = kit / "solution" / "answer.py"
        answer.parent.mkdir()
        answer.write_text("ANSWER = 42\n", encoding="utf-8")
        code = (
            "import sys\nfrom labs.sandbox.box import Sandbox\n"
            f"argv = [sys.executable, '-c', {SEES_ITS_KIT!r}, {str(answer)!r}]\n"
            "with Sandbox() as box:\n"
            "    done = box.run(argv, timeout=60)\n"
            "print(done.stdout.strip() or done.stderr[-1000:])\n"
        )
        done = subprocess.run(
            [str(venv / "bin" / "python"), "-c", code],
            cwd=kit,
            env={**os.environ, "PYTHONPATH": str(kit)},
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    expected = [str(venv), str(kit / "labs" / "__init__.py"), "False"]
    assert done.stdout.split() == expected, done.stdout + done.stderr


def test_the_checkouts_history_tests_and_other_trees_are_out_of_sight(mode: Mode) -> None:
    """Issue 22: `git show HEAD:solution/...` from a submission once gave it the answers in the
    mode without bubblewrap. Neither the repository's .git, nor its tests, nor the solution
    can be read from a sandbox, in any mode; the kit and the starter still can."""
    assert (REPO_ROOT / ".git").exists(), "the checkout has no history to hide"
    secrets = [REPO_ROOT / ".git" / "HEAD", REPO_ROOT / "tests" / "conftest.py"]
    secrets += [REPO_ROOT / "solution" / "shared" / "keys.py"]
    kit = [REPO_ROOT / "labs" / "__init__.py", REPO_ROOT / "starter" / "shared" / "keys.py"]
    code = (
        "import os\n"
        f"for path in {[str(p) for p in secrets + kit]!r}:\n"
        "    print(path, os.access(path, os.R_OK))\n"
    )
    done = run_sandboxed(python(code), timeout=60)
    readable = dict(line.rsplit(" ", 1) for line in done.stdout.splitlines())
    assert {str(p): readable.get(str(p)) for p in secrets} == dict.fromkeys(
        map(str, secrets), "False"
    )
    assert {str(p): readable.get(str(p)) for p in kit} == dict.fromkeys(map(str, kit), "True")
