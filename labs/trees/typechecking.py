"""mypy over a tree: the kit's settings, and the one command line that reads them.

The settings are pyproject.toml's [tool.mypy], shipped with the kit as
labs/mypy.toml, since an installed kit has no pyproject.toml
(tests/project/test_installs.py keeps the two the same). `python -m labs
typecheck` and grading's typecheck both read that file, never a tree's own.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

from .finding import REPO_ROOT

MYPY_SETTINGS = REPO_ROOT / "labs" / "mypy.toml"


def mypy_command(trees: Sequence[str | Path], cache: Path | None = None) -> list[str]:
    """mypy --strict over these trees with the kit's settings (and a cache of their own)."""
    cache_dir = ["--cache-dir", str(cache)] if cache is not None else []
    return [
        sys.executable,
        "-m",
        "mypy",
        "--config-file",
        str(MYPY_SETTINGS),
        *cache_dir,
        # mypy.toml says both too; given here as well, they hold whatever per-module section
        # the settings file may gain, so a grade is always strict.
        "--strict",
        "--disallow-any-explicit",
        *map(str, trees),
    ]
