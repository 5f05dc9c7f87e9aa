"""The grading modes this machine offers, and running a command in one of them.

    root-bwrap   as root, bwrap on PATH
    root-uid     as root, bwrap hidden from PATH (the uid-per-submission path)
    user-bwrap   as a throwaway unprivileged user, bwrap on PATH
    user-none    as that user, bwrap hidden: no isolation, so grading refuses

The unprivileged modes need root to make the user (and remove it after); the
root modes need root. As another user only that user's modes are offered.
The interpreter may live in a folder only root may enter (a pyenv in /root):
the command then runs in a mount namespace where that folder is covered and
only the interpreter's folder is bound back, as labs.sandbox.trampoline does.
"""

from __future__ import annotations

import contextlib
import os
import pwd
import secrets
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from labs.sandbox.trampoline import covers, trampoline
from labs.trees.finding import REPO_ROOT

ROOT = os.geteuid() == 0
HAS_BWRAP = shutil.which("bwrap") is not None


@dataclass(frozen=True)
class Mode:
    """One way of running the grader: who, and whether bwrap can be found."""

    name: str
    root: bool
    bwrap: bool


ALL_MODES = [
    Mode("root-bwrap", True, True),
    Mode("root-uid", True, False),
    Mode("user-bwrap", False, True),
    Mode("user-none", False, False),
]


def offered(mode: Mode) -> str:
    """Why this machine cannot run mode (empty when it can)."""
    if mode.bwrap and not HAS_BWRAP:
        return "bwrap is not installed"
    if mode.root and not ROOT:
        return "needs root"
    if not mode.root and ROOT and covers() is None:
        return "the interpreter cannot be shown to another user here"
    return ""


@contextlib.contextmanager
def hidden_bwrap(folder: Path) -> Iterator[str]:
    """A PATH holding every program of /usr/bin and /bin but bwrap (links in folder)."""
    folder.mkdir(parents=True, exist_ok=True)
    for source in ("/usr/local/bin", "/usr/bin", "/bin"):
        if not os.path.isdir(source) or os.path.islink(source):
            continue
        for name in os.listdir(source):
            target = folder / name
            if name != "bwrap" and not target.exists():
                target.symlink_to(os.path.join(source, name))
    os.chmod(folder, 0o755)
    yield str(folder)


@contextlib.contextmanager
def throwaway_user() -> Iterator[pwd.struct_passwd]:
    """A system user made for the test (no home, no shell), removed afterwards."""
    name = f"labt{secrets.token_hex(4)}"
    subprocess.run(
        ["useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
        check=True,
        capture_output=True,
    )
    try:
        yield pwd.getpwnam(name)
    finally:
        subprocess.run(["userdel", "--force", name], check=False, capture_output=True)


def open_folder(prefix: str, owner: int | None = None) -> Path:
    """A new folder others may read (and owner may write): for hand-ins and outputs."""
    folder = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(folder, 0o755)
    if owner is not None:
        os.chown(folder, owner, owner)
    return folder


def give_to(path: Path, uid: int) -> None:
    """Hand a file or folder and everything in it to uid (chown's walk: hand-ins may be deep)."""
    if os.lstat(path).st_uid != uid or path.is_dir():
        subprocess.run(["chown", "-R", "-h", f"{uid}:{uid}", str(path)], check=True)


@dataclass
class Runner:
    """Runs commands in one mode: as root or as its user, with or without bwrap on PATH."""

    mode: Mode
    user: pwd.struct_passwd | None
    path: str
    home: Path

    @property
    def uid(self) -> int:
        """The uid commands run as."""
        return self.user.pw_uid if self.user else os.geteuid()

    def command(self, argv: Sequence[str], *, no_new_privs: bool = True) -> list[str]:
        """argv as this mode runs it (through a trampoline to the user when not root)."""
        if self.user is None:
            return list(argv)
        plan = {
            "cover": covers() or [],
            "uid": self.user.pw_uid,
            "gid": self.user.pw_gid,
            "no_new_privs": no_new_privs,
            "umask": 0o022,  # a login shell's, as on GitHub's runners
        }
        return trampoline(plan, argv)

    def env(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        """The environment: this checkout's kit, the mode's PATH, a home of the mode's own."""
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "LAB_SANDBOX"))}
        env |= {"PATH": self.path, "HOME": str(self.home), "PYTHONPATH": str(REPO_ROOT)}
        env.pop("DATABASE_URL", None)
        return env | dict(extra or {})

    def run(
        self,
        argv: Sequence[str],
        *,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        timeout: float = 300,
        no_new_privs: bool = True,
    ) -> subprocess.CompletedProcess[str]:
        """Run a command to its end in this mode."""
        return subprocess.run(
            self.command(argv, no_new_privs=no_new_privs),
            cwd=cwd or self.home,
            env=self.env(env),
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
        )

    def python(self, *args: str, **options: object) -> subprocess.CompletedProcess[str]:
        """Run this interpreter with args in this mode."""
        return self.run([sys.executable, *args], **options)  # type: ignore[arg-type]


@contextlib.contextmanager
def runner(mode: Mode) -> Iterator[Runner]:
    """A Runner for mode: a throwaway user and a PATH without bwrap where the mode says."""
    with contextlib.ExitStack() as stack:
        user = None if mode.root else stack.enter_context(throwaway_user())
        scratch = Path(tempfile.mkdtemp(prefix="lab-mode-"))
        stack.callback(shutil.rmtree, scratch, True)
        os.chmod(scratch, 0o755)
        home = scratch / "home"
        home.mkdir()
        if user is not None:
            os.chown(home, user.pw_uid, user.pw_gid)
        path = os.environ.get("PATH", "/usr/bin:/bin")
        if not mode.bwrap:
            path = stack.enter_context(hidden_bwrap(scratch / "bin"))
        yield Runner(mode, user, path, home)


@contextlib.contextmanager
def sudo_runner() -> Iterator[Runner]:
    """A Runner for an unprivileged user with passwordless sudo, as on GitHub's runners.

    As root: a throwaway user and a sudoers drop-in for it, both removed after.
    As another user: that user, when `sudo -n true` works (else SudoMissingError).
    """
    if shutil.which("sudo") is None:
        raise SudoMissingError("sudo is not installed")
    with contextlib.ExitStack() as stack:
        scratch = Path(tempfile.mkdtemp(prefix="lab-sudo-"))
        stack.callback(shutil.rmtree, scratch, True)
        os.chmod(scratch, 0o755)
        home = scratch / "home"
        home.mkdir()
        user = None
        if ROOT:
            user = stack.enter_context(throwaway_user())
            dropin = Path("/etc/sudoers.d") / user.pw_name
            dropin.write_text(f"{user.pw_name} ALL=(ALL) NOPASSWD: ALL\n", encoding="utf-8")
            stack.callback(dropin.unlink, missing_ok=True)
            os.chmod(dropin, 0o440)
            os.chown(home, user.pw_uid, user.pw_gid)
        elif subprocess.run(["sudo", "-n", "true"], capture_output=True, check=False).returncode:
            raise SudoMissingError("this user has no passwordless sudo")
        mode = Mode("user-sudo", False, HAS_BWRAP)
        yield Runner(mode, user, os.environ.get("PATH", "/usr/bin:/bin"), home)


class SudoMissingError(Exception):
    """No user with passwordless sudo can be had here; the message says why."""
