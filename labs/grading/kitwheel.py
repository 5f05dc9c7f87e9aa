"""The kit as a wheel, built from a copy of the project's files (never in the checkout itself)."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

from labs.trees.finding import REPO_ROOT
from labs.trees.regions import project_files


class WheelError(Exception):
    """pip could not build the kit's wheel; the message holds its last words."""


def build_wheel(out: Path, root: Path = REPO_ROOT) -> Path:
    """Build the kit's wheel into out (made if missing) with pip; return its path."""
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="lab-wheel-") as scratch:
        source = Path(scratch) / "src"
        for name in project_files(root):
            (source / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(root / name, source / name)
        done = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "-w", scratch, f"{source}/"],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        built = sorted(Path(scratch).glob("*.whl"))
        if done.returncode != 0 or len(built) != 1:
            raise WheelError(f"pip wheel failed (exit {done.returncode}): {done.stderr[-2000:]}")
        return Path(shutil.copy2(built[0], out / built[0].name))
