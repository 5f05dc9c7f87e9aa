"""python -m labs autograder PLATFORM OUT: what a grading platform runs to grade the lab.

- `classroom50 OUT`: a folder to commit as CLASSROOM/autograders/ASSIGNMENT/
  in the course's Classroom 50 repository: autograder.py, the kit's wheel and
  the constraints its install is pinned to.
- `gradescope OUT.zip`: the zip to upload as a Gradescope programming
  assignment's autograder: setup.sh and run_autograder at its top, beside
  the same three files.

autograder.py is labs/grading/autograder_script.py with the wheel's name and
SHA-256 filled in; see that file for what it runs, and how, and
labs/INSTRUCTORS.md for each platform's steps.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import tempfile
import zipfile
from enum import StrEnum
from pathlib import Path

from labs.term.i18n import _

from ..grading.kitwheel import WheelError, build_wheel


class Platform(StrEnum):
    """A grading platform the kit writes an autograder for."""

    CLASSROOM50 = "classroom50"
    GRADESCOPE = "gradescope"


PLATFORMS = tuple(platform.value for platform in Platform)  # as the command line lists them
SCRIPT = "autograder.py"
GRADING = Path(__file__).resolve().parents[1] / "grading"
CONSTRAINTS = GRADING / "constraints.txt"
TEMPLATE = GRADING / "autograder_script.py"  # read as text: importing it would run it
SETUP_SH = """#!/usr/bin/env bash
# Gradescope runs this once, as root, when it builds the autograder's image (Ubuntu 24.04:
# its python3 is 3.12; the kit needs 3.11 or later).
set -euo pipefail
need=()
command -v bwrap >/dev/null || need+=(bubblewrap)
python3 -I -c 'import ensurepip, venv' 2>/dev/null || need+=(python3-venv)
compgen -G '/usr/lib/postgresql/*/bin/initdb' >/dev/null || need+=(postgresql)
if (( ${#need[@]} )); then
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq python3 "${need[@]}"
fi
cd /
python3 -I /autograder/source/autograder.py install
"""
RUN_AUTOGRADER = """#!/usr/bin/env bash
# Gradescope runs this for each submission, as root: /autograder/submission is graded into
# /autograder/results/results.json.
set -euo pipefail
cd /
exec python3 -I /autograder/source/autograder.py grade
"""


class AutograderError(Exception):
    """The autograder could not be written as promised; the message says why."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the autograder command."""
    parser = commands.add_parser(
        "autograder",
        help=_("write the autograder a grading platform runs (Classroom 50, Gradescope)"),
        description=_(
            "Write what a grading platform runs to grade the lab: for classroom50, a folder "
            "with autograder.py; for gradescope, a zip with setup.sh and run_autograder."
        ),
    )
    parser.add_argument("platform", choices=PLATFORMS, help=_("the grading platform"))
    parser.add_argument("out", metavar="OUT", help=_("the folder (classroom50) or zip to write"))
    parser.set_defaults(func=run)


def script_text(platform: str, wheel: Path, **places: str) -> str:
    """autograder.py for the platform and the wheel; places may move KIT_ROOT or RESULTS_ROOT."""
    digest = hashlib.sha256(wheel.read_bytes()).hexdigest()
    values = {"PLATFORM": platform, "KIT_WHEEL": wheel.name, "KIT_SHA256": digest, **places}
    text = TEMPLATE.read_text(encoding="utf-8")
    for name, value in values.items():
        text, count = re.subn(rf"^{name} = .*$", f"{name} = {value!r}", text, flags=re.M)
        if count != 1:
            raise AutograderError(f"{name} is not a setting of {SCRIPT}")
    return text


def write_autograder(platform: str, out: Path, wheel: Path | None = None, **places: str) -> Path:
    """Write the platform's autograder to out (a new or empty folder, or a new zip).

    The kit's wheel is built from this checkout unless one is given.
    """
    if platform not in PLATFORMS:
        raise AutograderError(f"no platform {platform!r}; choose from {', '.join(PLATFORMS)}")
    chosen = Platform(platform)
    if chosen is Platform.GRADESCOPE and (out.suffix != ".zip" or out.exists()):
        raise AutograderError(f"{out}: Gradescope takes a new .zip file")
    if chosen is Platform.CLASSROOM50 and out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise AutograderError(f"{out} exists and is not an empty folder: choose a new one")
    with tempfile.TemporaryDirectory(prefix="lab-autograder-") as scratch:
        files = Path(scratch) / "files"
        if wheel is None:
            wheel = build_wheel(files)
        else:
            files.mkdir()
            wheel = Path(shutil.copyfile(wheel, files / wheel.name))
        (files / SCRIPT).write_text(script_text(chosen.value, wheel, **places), encoding="utf-8")
        shutil.copyfile(CONSTRAINTS, files / "constraints.txt")
        if chosen is Platform.GRADESCOPE:
            (files / "setup.sh").write_text(SETUP_SH, encoding="utf-8")
            (files / "run_autograder").write_text(RUN_AUTOGRADER, encoding="utf-8")
            out.parent.mkdir(parents=True, exist_ok=True)
            with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
                for path in sorted(files.iterdir()):
                    info = zipfile.ZipInfo(path.name, (2026, 1, 1, 0, 0, 0))
                    info.external_attr = (0o755 if path.suffix in ("", ".sh") else 0o644) << 16
                    info.compress_type = zipfile.ZIP_DEFLATED
                    archive.writestr(info, path.read_bytes())
            return out
        out.mkdir(parents=True, exist_ok=True)
        for path in files.iterdir():
            shutil.copyfile(path, out / path.name)
    return out


def run(args: argparse.Namespace) -> int:
    """Write the autograder and say where it goes."""
    out = Path(args.out)
    try:
        write_autograder(args.platform, out)
    except (AutograderError, WheelError) as error:
        print(_("autograder: {error}").format(error=error))
        return 1
    where = {
        Platform.CLASSROOM50: _(
            "commit it as CLASSROOM/autograders/ASSIGNMENT/ (labs/INSTRUCTORS.md)"
        ),
        Platform.GRADESCOPE: _("upload it as the assignment's autograder (labs/INSTRUCTORS.md)"),
    }[Platform(args.platform)]
    print(_("wrote {out}: {where}").format(out=out, where=where))
    return 0
