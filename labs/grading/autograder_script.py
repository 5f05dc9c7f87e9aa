"""mini-koda lab's autograder: written by `python -m labs autograder PLATFORM OUT`.

Classroom 50 runs it as `autograder.py` in the learner's checkout; Gradescope's
setup.sh and run_autograder run it as `autograder.py install` and
`autograder.py grade`. It needs the standard library only, and nothing of the
learner's is imported, read as configuration, or run outside the sandbox:

- it starts again at once with `python -I`, so neither the learner's folder
  nor any PYTHON* variable reaches sys.path;
- the rest runs as root (through `sudo -n` where the platform gives a user
  with sudo, as GitHub's runners do), from a folder the learner cannot write,
  with an environment of nothing but PATH, HOME, LANG and DATABASE_URL;
- the kit is the wheel beside this file, checked against its SHA-256, installed
  into a root-owned virtualenv of its own, each command there run with `-I`;
  bubblewrap is installed with apt where it is missing;
- each run grades into a new folder of its own, the learner's code only in the
  sandbox, which must be bubblewrap's (`--require-bwrap`: any other is refused,
  an infrastructure error), and the platform's files are copied from there:
  into the checkout by the unprivileged user that owns it (Classroom 50), into
  /autograder/results (Gradescope).

Exit 0: graded, whatever the score. Anything else: the grading machine failed.
"""

import os
import sys

if __name__ == "__main__" and not sys.flags.isolated:  # before anything else is imported
    os.execv(sys.executable, [sys.executable, "-I", os.path.abspath(__file__), *sys.argv[1:]])

import datetime
import hashlib
import json
import shutil
import subprocess
from pathlib import Path
from typing import Any

# Filled in by `python -m labs autograder`.
PLATFORM = "classroom50"
KIT_WHEEL = "mini_koda_lab-0.0.0-py3-none-any.whl"
KIT_SHA256 = "0" * 64
TREE = "starter"
KIT_ROOT = "/opt/koda-lab"
RESULTS_ROOT = "/var/lib/koda-lab-grading"
GRADESCOPE = "/autograder"

HERE = Path(__file__).resolve().parent
KEPT_ENV = ("DATABASE_URL", "LANG")
CONTEXT_ENV = ("CLASSROOM", "ASSIGNMENT", "SUBMISSION_TAG", "COMMIT_URL", "RELEASE_URL")
SAFE_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"


class Refused(Exception):
    """The autograder cannot grade here; the message says why."""


def say(text: str) -> None:
    """A line of the log: stderr, as stdout carries the root part's answer."""
    print(text, file=sys.stderr, flush=True)


def run(command: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """A command of the kit's, with the clean environment, its output in the log."""
    env = {"PATH": SAFE_PATH, "HOME": "/root", "LANG": "C.UTF-8"}
    env |= {name: os.environ[name] for name in KEPT_ENV if os.environ.get(name)}
    done = subprocess.run(command, cwd=cwd, env=env, capture_output=True, text=True, check=False)
    sys.stderr.write(done.stderr)
    return done


def private_folder(path: Path, mode: int) -> Path:
    """path made if missing, root's own with mode; a link or another user's folder is refused."""
    path.mkdir(mode=mode, parents=True, exist_ok=True)
    info = os.lstat(path)
    if os.path.islink(path) or info.st_uid != 0:
        raise Refused(f"{path} is a link or not root's: refusing to use it")
    os.chmod(path, mode)
    return path


def wheel_digest(wheel: Path) -> str:
    """The wheel's SHA-256."""
    digest = hashlib.sha256()
    with open(wheel, "rb") as source:
        for block in iter(lambda: source.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def install_bubblewrap() -> None:
    """bubblewrap from apt where the machine lacks it: grading refuses to run without it."""
    if shutil.which("bwrap", path=SAFE_PATH):
        return
    steps = [
        ["apt-get", "update", "-qq"],
        ["env", "DEBIAN_FRONTEND=noninteractive", "apt-get", "install", "-y", "-qq", "bubblewrap"],
    ]
    for step in steps:
        try:
            done = run(step, Path("/"))
        except OSError as error:
            raise Refused(f"no bubblewrap, and apt-get could not install it: {error}") from None
        if done.returncode != 0:
            command = " ".join(step[-5:])
            raise Refused(f"installing bubblewrap failed: {command} (exit {done.returncode})")


def install() -> Path:
    """The kit's virtualenv, root-owned, made once per wheel: its python."""
    install_bubblewrap()
    wheel = HERE / KIT_WHEEL
    if not wheel.is_file() or wheel_digest(wheel) != KIT_SHA256:
        raise Refused(f"{wheel} is missing or is not the kit this autograder was written for")
    os.umask(0o022)
    root = private_folder(Path(KIT_ROOT), 0o755)
    venv = root / KIT_SHA256[:16]
    python = venv / "bin" / "python"
    if (venv / "ready").is_file() and os.lstat(venv).st_uid == 0:
        return python
    shutil.rmtree(venv, ignore_errors=True)
    steps = [
        [sys.executable, "-I", "-m", "venv", str(venv)],
        [
            str(python),
            "-I",
            "-m",
            "pip",
            "install",
            "-q",
            "--no-cache-dir",
            "-c",
            str(HERE / "constraints.txt"),
            f"{wheel}[grading]",
        ],
        [str(python), "-I", "-m", "labs.grading.autograde", "prepare"],
    ]
    for step in steps:
        done = run(step, root)
        sys.stderr.write(done.stdout)
        if done.returncode != 0:
            raise Refused(
                f"installing the kit failed: {' '.join(step[:4])} (exit {done.returncode})"
            )
    (venv / "ready").write_text(KIT_SHA256 + "\n", encoding="utf-8")
    return python


def grade(tree: Path) -> tuple[int, Path | None]:
    """Grade tree as root into a fresh folder: the kit's exit code and that folder."""
    python = install()
    into = private_folder(Path(RESULTS_ROOT), 0o700)
    done = run(
        [
            str(python),
            "-I",
            "-m",
            "labs.grading.autograde",
            "grade",
            "--require-bwrap",
            "--tree",
            str(tree),
            "--into",
            str(into),
        ],
        into,
    )
    sys.stderr.write(done.stdout)
    lines = done.stdout.strip().splitlines()
    folder = Path(lines[-1]) if lines and lines[-1].startswith(str(into) + "/") else None
    return done.returncode, folder


def as_root(arguments: list[str]) -> subprocess.CompletedProcess[str]:
    """This script again, as root through sudo, with the clean environment."""
    env = [f"{name}={os.environ[name]}" for name in KEPT_ENV if os.environ.get(name)]
    command = ["sudo", "-n", "env", "-i", f"PATH={SAFE_PATH}", "HOME=/root", *env]
    command += [sys.executable, "-I", str(Path(__file__).resolve()), *arguments]
    return subprocess.run(command, cwd="/", capture_output=True, text=True, check=False)


def write_plain(path: Path, text: str) -> None:
    """Replace path with text: never through a link the learner left there."""
    if path.is_symlink() or path.exists():
        path.unlink()
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
    with os.fdopen(handle, "w", encoding="utf-8") as target:
        target.write(text)


def classroom50(arguments: list[str]) -> int:
    """Grade the checkout in the current folder; write result.json and release-body.md there."""
    checkout = Path.cwd()
    if os.geteuid() != 0:
        done = as_root(["--root-part", str(checkout)])
        sys.stderr.write(done.stderr)
        try:
            answer: dict[str, Any] = json.loads(done.stdout)
        except ValueError:
            say(f"autograder: the grading as root gave no answer (exit {done.returncode})")
            return done.returncode or 1
    else:
        answer = root_part(checkout)
    files: dict[str, str] = answer["files"]
    if "result.json" in files:
        files["result.json"] = with_run_context(files["result.json"])
    if "release-body.md" in files and os.environ.get("COMMIT_URL"):
        # Classroom 50's own variables: which commit of which assignment this feedback is for.
        graded = " ".join(os.environ.get(n, "") for n in ("ASSIGNMENT", "SUBMISSION_TAG"))
        files["release-body.md"] += f"\nGraded: {graded.strip()} at <{os.environ['COMMIT_URL']}>\n"
    for name, text in files.items():
        write_plain(checkout / name, text)
    return int(answer["code"])


def with_run_context(result: str) -> str:
    """result.json with the run's context that classroom50/result/v1 asks for, from its variables.

    The runner sets CLASSROOM, ASSIGNMENT, SUBMISSION_TAG, COMMIT_URL and RELEASE_URL (REVIEW_URL
    where it has one); a run without them is not Classroom 50's, an infrastructure error.
    """
    missing = [name for name in CONTEXT_ENV if not os.environ.get(name)]
    if missing:
        raise SystemExit(f"autograder: Classroom 50 did not set {', '.join(missing)}")
    document: dict[str, Any] = json.loads(result)
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    context = {
        "classroom": os.environ["CLASSROOM"],
        "assignment": os.environ["ASSIGNMENT"],
        "submission": os.environ["SUBMISSION_TAG"],
        "commit": os.environ["COMMIT_URL"],
        "release": os.environ["RELEASE_URL"],
        "review": os.environ.get("REVIEW_URL") or os.environ["COMMIT_URL"],
        "datetime": now,
    }
    return json.dumps({"schema": document.pop("schema"), **context, **document}, indent=2) + "\n"


def root_part(checkout: Path) -> dict[str, Any]:
    """As root: grade the checkout's tree; the Classroom 50 files' texts and the exit code."""
    os.chdir("/")
    code, folder = grade(checkout / TREE)
    files: dict[str, str] = {}
    if folder is not None:
        for name in ("result.json", "release-body.md"):
            if (folder / name).is_file():
                files[name] = (folder / name).read_text(encoding="utf-8")
    return {"code": code if files else code or 1, "files": files}


def gradescope(command: str) -> int:
    """setup.sh's `install`, run_autograder's `grade`: /autograder/submission into results."""
    os.chdir("/")
    if command == "install":
        install()
        return 0
    results = Path(GRADESCOPE) / "results"
    code, folder = grade(Path(GRADESCOPE) / "submission" / TREE)
    results.mkdir(parents=True, exist_ok=True)
    if folder is not None and (folder / "gradescope.json").is_file():
        shutil.copyfile(folder / "gradescope.json", results / "results.json")
        return 0
    failed = {
        "score": 0,
        "output": f"The grading machine failed (exit {code}): your instructor has the log.",
        "tests": [],
    }
    write_plain(results / "results.json", json.dumps(failed, indent=2) + "\n")
    return code or 1


def main(arguments: list[str]) -> int:
    """The platform's entry."""
    if arguments[:1] == ["--version"]:
        print(f"autograder.py ({PLATFORM}) for {KIT_WHEEL}")
        return 0
    try:
        if arguments[:1] == ["--root-part"] and os.geteuid() == 0:
            print(json.dumps(root_part(Path(arguments[1]))))
            return 0
        if PLATFORM == "gradescope":
            return gradescope(arguments[0] if arguments else "grade")
        return classroom50(arguments)
    except Refused as error:
        say(f"autograder: {error}")
        if arguments[:1] == ["--root-part"]:
            print(json.dumps({"code": 1, "files": {}}))
            return 0
        return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
