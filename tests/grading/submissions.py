"""Building learners' submissions for the grading tests: fixed, half-fixed and broken ones."""

from __future__ import annotations

import os
import re
import zipfile
from pathlib import Path

from labs.trees.finding import tree_root
from labs.trees.regions import copy_tree
from tests.support.solved import apply_solution

# A learner's migration as autogenerate writes it, cut down to the two constraints.
MIGRATION = '''"""learner's tables"""
from alembic import op
import sqlalchemy as sa

revision = "0001"
down_revision = None


def upgrade() -> None:
    op.create_table(
        "runs",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("idempotency_key", sa.Text(), nullable=False),
        sa.UniqueConstraint("idempotency_key", name="runs_idempotency_key_key"),
    )
    op.create_table(
        "messages",
        sa.Column("id", sa.Text(), nullable=False),
        sa.Column("run_id", sa.Text(), nullable=True),
        sa.Column("seq", sa.Integer(), nullable=False),
        sa.UniqueConstraint("run_id", "seq", name="messages_run_id_seq_key"),
    )


def downgrade() -> None:
    op.drop_table("messages")
    op.drop_table("runs")
'''


def starter_copy(folder: Path) -> Path:
    """A submission folder holding an untouched copy of the starter tree."""
    folder.mkdir(parents=True)
    return copy_tree(tree_root("starter"), folder / "starter")


def with_migration(tree: Path) -> None:
    """Give a submission the migration a learner generates, beside its tree."""
    versions = tree.parent / "migrations" / "versions" / tree.name
    versions.mkdir(parents=True)
    (versions / "0001_learner_tables.py").write_text(MIGRATION, encoding="utf-8")


def with_full_migration(tree: Path) -> None:
    """Give a submission the whole migration, as autogenerate writes it for the solved tree."""
    shipped = tree_root("solution").parent / "migrations" / "versions" / "solution"
    versions = tree.parent / "migrations" / "versions" / tree.name
    versions.mkdir(parents=True)
    for script in shipped.glob("*.py"):
        (versions / script.name).write_text(script.read_text(encoding="utf-8"), encoding="utf-8")


def fixed(folder: Path, checks: set[int] | None = None) -> Path:
    """A starter copy with the solution's regions applied (all, or those serving checks)."""
    tree = starter_copy(folder)
    apply_solution(tree, tree_root("solution"), checks)
    return folder


def replace_in(path: Path, pattern: str, replacement: str) -> None:
    """Edit one file of a submission the way a learner might have."""
    text = path.read_text(encoding="utf-8")
    changed = re.sub(pattern, replacement, text, count=1, flags=re.S)
    assert changed != text, f"{pattern!r} not found in {path}"
    path.write_text(changed, encoding="utf-8")


def with_syntax_error(folder: Path) -> Path:
    """A starter copy whose keys.py no longer parses."""
    tree = starter_copy(folder)
    replace_in(
        tree / "shared" / "keys.py", r"def idempotency_key_for\(", "def idempotency_key_for(("
    )
    return folder


# The endless loops of the hand-ins below wait rather than spin. Grading stops both kinds at its
# time limit (the sandbox's CPU limit is far above it), and a spinning one would take a core of
# the machine running the tests until then. Spinning loops stay where the spinning is the point:
# tests/checking/test_driver.py, test_failure_places.py and tests/sandbox/test_sandbox.py.


def with_endless_import(folder: Path) -> Path:
    """A starter copy that loops forever while importing the state machine."""
    tree = starter_copy(folder)
    replace_in(
        tree / "shared" / "states.py",
        r"(# TODO\(check 4\).*?\n)",
        r"\1import time\nwhile True:\n    time.sleep(0.05)\n",
    )
    return folder


def with_endless_transition(folder: Path) -> Path:
    """A starter copy that loops forever only when asked about a transition (check 4)."""
    tree = starter_copy(folder)
    replace_in(
        tree / "shared" / "states.py",
        r'(    """Say whether the allowlist.*?"""\n)',
        r"\1    import time\n\n    while True:\n        time.sleep(0.05)\n",
    )
    return folder


def with_deleted_file(folder: Path) -> Path:
    """A starter copy missing shared/keys.py."""
    tree = starter_copy(folder)
    (tree / "shared" / "keys.py").unlink()
    return folder


def zipped(folder: Path, archive: Path) -> Path:
    """The submission folder as a zip, the way a learning platform hands it in."""
    with zipfile.ZipFile(archive, "w") as out:
        for path in sorted(folder.rglob("*")):
            out.write(path, path.relative_to(folder))
    return archive


def not_a_zip(archive: Path) -> Path:
    """A file named .zip that is not one (an upload cut short)."""
    archive.write_bytes(b"PK\x03\x04 this upload was cut short")
    return archive


# The attacks of a hostile learner, each written inside a TODO region so that only grading
# (not the list of edits outside the regions) can stop it.


def with_region_code(folder: Path, code: str) -> Path:
    """A starter copy running code at import, from inside check 4's module-level region."""
    add_region_code(starter_copy(folder), code)
    return folder


def add_region_code(tree: Path, code: str) -> None:
    """Put code at the end of check 4's module-level region, where it runs at import."""
    states = tree / "shared" / "states.py"
    text = states.read_text(encoding="utf-8")
    assert "\n# END(check 4)" in text
    states.write_text(text.replace("\n# END(check 4)", "\n" + code + "\n# END(check 4)"), "utf-8")


FORGED_EVENTS = """
import json as _json, os as _os, sys as _sys
_lines = [{"event": "imported"}]
for _n in range(1, 7):
    _lines += [{"event": "started", "check": _n},
               {"event": "result", "check": _n, "test": {"status": "pass", "message": None}}]
_text = "".join(_json.dumps(_line) + "\\n" for _line in _lines).encode()
for _arg in _sys.argv[1:]:
    if _arg.endswith(".jsonl"):
        with open(_arg, "ab") as _forged:
            _forged.write(_text)
for _fd in range(3, 32):
    try:
        _os.write(_fd, _text)
    except OSError:
        pass
_os._exit(0)
"""

KIT_CLASS_PATCH = """
import labs.checking.result as _kit
_kit.CheckResult.passed = property(lambda self: True, lambda self, value: None)
"""

STDERR_FLOOD = """
import sys as _sys
for _ in range(100):
    _sys.stderr.write("\\x1b[31m" + "x" * 1_000_000)
"""


def escaping_daemon(heartbeat: Path) -> str:
    """Code that leaves a daemon behind (double fork, setsid) and then hangs the import.

    The daemon outlives the host's timeout if it can, and tries to wreck every
    other submission it can reach: their events, their trees, their folders.
    """
    return f"""
import glob as _glob, os as _os, time as _time
if _os.fork() == 0:
    _os.setsid()
    if _os.fork() == 0:
        _bad = '{{"event": "import-failed", "error": "SyntaxError: planted"}}\\n'
        while True:
            for _path in _glob.glob("/tmp/lab-*/**/*", recursive=True):
                try:
                    if _path.endswith(".jsonl"):
                        open(_path, "a").write(_bad)
                    elif _path.endswith(".py"):
                        open(_path, "w").write("raise SyntaxError('planted')\\n")
                except OSError:
                    pass
            open({str(heartbeat)!r}, "w").write(str(_time.time()))
            _time.sleep(0.1)
    _os._exit(0)
while True:
    _time.sleep(0.05)
"""


def with_ansi_exception(folder: Path) -> Path:
    """A starter copy whose key function raises an error full of terminal escapes."""
    tree = starter_copy(folder)
    escapes = r"\\x1b[2K\\r\\x1b[1Aada  110  110  ok ok ok\\x07\\x1b]0;pwned\\x07"
    replace_in(
        tree / "shared" / "keys.py",
        r"(# TODO\(check 3\)[^\n]*\n)",
        r"\1    raise ValueError(" + f'"{escapes}"' + ")\n",
    )
    return folder


def with_links_to_dev_zero(folder: Path) -> Path:
    """A starter copy with links to /dev/zero beside and inside the tree."""
    tree = starter_copy(folder)
    (folder / "zero").symlink_to("/dev/zero")
    (tree / "shared" / "zero.py").symlink_to("/dev/zero")
    return folder


def zip_bomb(archive: Path, size: int) -> Path:
    """A zip of a starter copy and one Python entry of `size` zero bytes, a few hundred KB packed.

    (Python, so intake counts it: a large file of another kind is left out unread.)
    """
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        out.writestr("starter/__init__.py", "")
        with out.open("starter/zeros.py", "w", force_zip64=True) as entry:
            block = b"\0" * (1024 * 1024)
            for _ in range(size // len(block) + 1):
                entry.write(block)
    return archive


# The attacks of the isolation issue: each the code a hostile learner put in a region (or the
# files they handed in), run end to end by tests/grading/test_attacks.py in every mode.


def with_marker(folder: Path, marker: str) -> Path:
    """A solved hand-in carrying a secret in a comment inside a region: a classmate's work."""
    fixed(folder)
    states = folder / "starter" / "shared" / "states.py"
    text = states.read_text(encoding="utf-8")
    states.write_text(text.replace("\n# END(check 4)", f"\n# {marker}\n# END(check 4)"), "utf-8")
    return folder


def vandal_daemon(mark: str) -> str:
    """Code that leaves a setsid daemon (a shell loop named mark) wrecking what it can reach."""
    loop = (
        "while :; do for f in /tmp/lab-*/*/*/*.py /tmp/lab-*/*/*.py; do "
        "echo 'raise SyntaxError(1)' > \"$f\" 2>/dev/null; done; sleep 0.1; done"
    )
    return f"""
import os as _os, time as _time
if _os.fork() == 0:
    _os.setsid()
    if _os.fork() == 0:
        _os.execv("/bin/sh", ["sh", "-c", {loop!r}, {mark!r}])
    _os._exit(0)
while True:
    _time.sleep(0.05)
"""


def borrowing_solution(repo_root: Path) -> str:
    """Code that puts the solution's modules in place of the tree's own, where it can find them."""
    return f"""
import importlib as _il, sys as _s
_s.path.insert(0, {str(repo_root)!r})
_pkg = __name__.rpartition(".")[0].rpartition(".")[0]
try:
    for _name in ("shared.states", "shared.keys", "infra.memory"):
        _s.modules[_pkg + "." + _name] = _il.import_module("solution." + _name)
    ALLOWED = _il.import_module("solution.shared.states").ALLOWED
except ImportError:
    pass
"""


KIT_ALLOWLIST = """
from labs.lesson.states import LESSON_MOVES as _moves
ALLOWED = {RunStatus(k): frozenset(RunStatus(t) for t in v) for k, v in _moves.items()}
"""


def snooping(markers: list[str]) -> str:
    """Code that reads every path in every process's argv, then fails at import saying what it saw.

    Its error message is the grade's note, so what it could read is in the class table.
    The markers are written into it backwards, so finding its own file finds none. The
    most specific paths are searched first; folders of more than 500 entries or more
    than 8 levels down are passed over, and the search stops after 2,000 files or 5,000
    folders, so it ends in about a second however busy the machine and however big
    the trees other processes name (a virtualenv, a repository, /).
    """
    backwards = [marker[::-1] for marker in markers]
    return f"""
import os as _os
_seen = set()
_paths = set()
for _pid in _os.listdir("/proc"):
    try:
        with open("/proc/" + _pid + "/cmdline", "rb") as _f:
            _paths.update(_a.decode(errors="replace") for _a in _f.read().split(b"\\0"))
    except OSError:
        pass
_system = ("/usr/", "/proc/", "/sys/", "/dev/", "/etc/", "/lib", "/bin/", "/sbin/", "/opt/")
_tops = sorted(
    (_p for _p in _paths if _p.startswith("/") and _p != "/" and not _p.startswith(_system)),
    key=lambda _p: (-_p.count("/"), _p),
)
_budget = {{"files": 2000, "folders": 5000}}


def _look(_path):
    _budget["files"] -= 1
    try:
        with open(_path, "rb") as _f:
            _text = _f.read(200000)
    except OSError:
        return
    _seen.update(_m[::-1] for _m in {backwards!r} if _m[::-1].encode() in _text)


def _search(_top):
    if _os.path.isfile(_top):
        _look(_top)
    for _root, _dirs, _files in _os.walk(_top):
        if min(_budget.values()) <= 0:
            return
        _budget["folders"] -= 1
        if len(_dirs) + len(_files) > 500 or _root.count("/") - _top.count("/") > 8:
            _dirs[:] = []  # a crowded or deep folder is a trap, not a classmate's work
            continue
        for _name in _files[: max(_budget["files"], 0)]:
            _look(_os.path.join(_root, _name))


for _top in _tops:
    if min(_budget.values()) <= 0:
        break
    _search(_top)
raise RuntimeError("snooped: " + (" ".join(sorted(_seen)) or "nothing"))
"""


def memory_hog(children: int, megabytes: int) -> str:
    """Code that starts children which each fill megabytes of memory and wait."""
    return f"""
import os as _os, time as _t
for _ in range({children}):
    if _os.fork() == 0:
        _b = bytearray({megabytes} * 1024 * 1024)
        for _i in range(0, len(_b), 4096):
            _b[_i] = 1
        _t.sleep(30)
        _os._exit(0)
_t.sleep(30)
"""


def fork_storm(count: int, mark: str) -> str:
    """Code that starts count sleeping children (named mark), each forked in turn."""
    return f"""
import os as _os, time as _t
for _ in range({count}):
    try:
        if _os.fork() == 0:
            _os.execv("/bin/sleep", ["sleep", {mark!r}])
    except OSError:
        pass
_t.sleep(30)
"""


# The attacks on the kit's checkout where it lies inside the grader's virtualenv (issue 22: the
# layout `pip install -e git+URL#egg=...` makes), run end to end by
# tests/grading/test_checkout_in_venv.py. Each looks for the checkout where any learner would
# (the folder above the kit's own package, the virtualenv's src/) and at the path it is given.
# git is told to trust any owner, so what stops it is the sandbox, never git's ownership check.
CHECKOUT_ROOTS = """
import glob as _glob, os as _os, subprocess as _sp, sys as _sys
import labs as _labs
_roots = sorted({_os.path.dirname(_os.path.dirname(_os.path.abspath(_labs.__file__))),
                 CHECKOUT, *_glob.glob(_os.path.join(_sys.prefix, "src", "*"))})


def _history(_root):
    _git = ["git", "-c", "safe.directory=*", "-C", _root, "show",
            "HEAD:solution/shared/states.py"]
    try:
        _done = _sp.run(_git, capture_output=True, timeout=30)
    except (OSError, _sp.SubprocessError):
        return ""
    return _done.stdout.decode(errors="replace")


def _read(_path):
    try:
        if _os.path.isdir(_path):
            return "\\n".join(_os.listdir(_path))
        with open(_path, encoding="utf-8", errors="replace") as _f:
            return _f.read()
    except OSError:
        return ""
"""


def checkout_roots(checkout: Path) -> str:
    """CHECKOUT_ROOTS, the checkout it is given named in it."""
    return CHECKOUT_ROOTS.replace("CHECKOUT", repr(str(checkout)))


PEEKING = """
_seen, _kit = set(), set()
for _root in _roots:
    if "SOLUTION(check 4)" in _history(_root):
        _seen.add("history")
    for _name, _path in ((".git", ".git/HEAD"), ("solution", "solution/shared/states.py"),
                         ("tests", "tests"), ("migrations", "migrations/versions/solution")):
        if _read(_os.path.join(_root, _path)):
            _seen.add(_name)
    for _name in ("labs", "starter"):
        if _os.access(_os.path.join(_root, _name, "__init__.py"), _os.R_OK):
            _kit.add(_name)
raise RuntimeError("peeked: " + (" ".join(sorted(_seen)) or "nothing")
                   + "; kit: " + (" ".join(sorted(_kit)) or "none"))
"""


def peeking_into_checkout(checkout: Path) -> str:
    """Code that fails at import naming what of the kit's checkout it could read, and the kit.

    What it reads: the instructors' history (`git show HEAD:solution/...`), the
    .git folder itself, the solution, the project's tests and the solution's
    migrations; and, to show it looked in the right place, the kit (labs/ and
    starter/). Its error message is the grade's note: "peeked: ...; kit: ...".
    """
    return checkout_roots(checkout) + PEEKING


COPYING = """
for _root in _roots:
    _text = _history(_root) or _read(_os.path.join(_root, "solution", "shared", "states.py"))
    if "# SOLUTION(check 4)" in _text:
        _region = _text.split("# SOLUTION(check 4)", 1)[1].split("# END(check 4)", 1)[0]
        exec(_region.partition("\\n")[2], globals())
        break
"""


def copying_from_checkout(checkout: Path) -> str:
    """Code that makes check 4's allowlist the solution's, wherever it can read that from the
    kit's checkout: its history first (`git show HEAD:solution/shared/states.py`), then the file.

    Put at the end of check 4's region, so reading the answer is the points of check 4.
    """
    return checkout_roots(checkout) + COPYING


def with_stub_hiding_errors(folder: Path) -> Path:
    """A solved hand-in with a type error in keys.py and a keys.pyi that says all is well."""
    fixed(folder)
    keys = folder / "starter" / "shared" / "keys.py"
    replace_in(
        keys,
        r"(    # SOLUTION\(check 3\)[^\n]*\n|    # TODO\(check 3\)[^\n]*\n)",
        r'\1    wrong: int = "text"\n',
    )
    (keys.parent / "keys.pyi").write_text(
        "def idempotency_key_for(session_id: str, client_message_id: str | None, "
        "message: str, now: float | None = ...) -> str: ...\n",
        encoding="utf-8",
    )
    return folder


def with_silenced_typecheck(folder: Path) -> Path:
    """A solved hand-in with type errors and `# mypy: ignore-errors` at column 0 in a region."""
    fixed(folder)
    states = folder / "starter" / "shared" / "states.py"
    text = states.read_text(encoding="utf-8")
    errors = "# mypy: ignore-errors\n_one: int = 'a'\n_two: str = 2\n"
    states.write_text(text.replace("\n# END(check 4)", "\n" + errors + "# END(check 4)"), "utf-8")
    return folder


def with_flask_stub(folder: Path) -> Path:
    """The starter with a flask/__init__.pyi that would break every import of Flask it reached."""
    tree = starter_copy(folder)
    (tree / "flask").mkdir()
    (tree / "flask" / "__init__.pyi").write_text("Flask: int\nrequest: int\n", encoding="utf-8")
    (folder / "flask").mkdir()
    (folder / "flask" / "__init__.pyi").write_text("Flask: int\n", encoding="utf-8")
    return folder


def with_undecodable_names(folder: Path) -> Path:
    """The starter with a file and a folder whose names are not UTF-8."""
    tree = starter_copy(folder)
    (tree / "shared" / os.fsdecode(b"notes-\xff\xfe.txt")).write_text("x", encoding="utf-8")
    (tree / os.fsdecode(b"caf\xe9")).mkdir()
    return folder


def nest(folder: Path, depth: int, leaf: str = "") -> None:
    """Folders d/d/... depth levels below folder, made one level at a time (no path too long),
    with an empty file named leaf at the bottom when one is named."""
    handle = os.open(folder, os.O_RDONLY | os.O_DIRECTORY)
    for _ in range(depth):
        os.mkdir("d", dir_fd=handle)
        below = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=handle)
        os.close(handle)
        handle = below
    if leaf:
        os.close(os.open(leaf, os.O_CREAT | os.O_WRONLY, dir_fd=handle))
    os.close(handle)


def with_deep_folder(folder: Path, depth: int) -> Path:
    """The starter with a folder nested depth levels deep."""
    nest(starter_copy(folder), depth)
    return folder


def with_empty_folders(folder: Path, count: int) -> Path:
    """The starter with count empty folders beside it."""
    starter_copy(folder)
    many = folder / "many"
    many.mkdir()
    for number in range(count):
        os.mkdir(many / str(number))
    return folder
