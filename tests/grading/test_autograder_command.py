"""python -m labs autograder PLATFORM OUT refuses an OUT it cannot write as promised."""

from __future__ import annotations

from pathlib import Path

import pytest

from labs.commands.autograder import AutograderError, write_autograder


@pytest.mark.parametrize(
    ("platform", "name", "message"),
    [
        ("classroom50", "used", "not an empty folder"),
        ("gradescope", "autograder.tar", "new .zip file"),
        ("gradescope", "taken.zip", "new .zip file"),
        ("moodle", "out", "no platform 'moodle'"),
    ],
    ids=["folder-in-use", "not-a-zip", "zip-exists", "unknown-platform"],
)
def test_an_out_that_cannot_be_written_as_promised_is_refused_untouched(
    tmp_path: Path, platform: str, name: str, message: str
) -> None:
    """A folder in use, a zip that is not new or not a zip, an unknown platform: refused."""
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "notes.txt").write_text("mine", encoding="utf-8")
    (tmp_path / "taken.zip").write_bytes(b"mine")
    before = sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*"))
    with pytest.raises(AutograderError, match=message):
        write_autograder(platform, tmp_path / name)
    assert sorted(p.relative_to(tmp_path) for p in tmp_path.rglob("*")) == before
    assert (tmp_path / "taken.zip").read_bytes() == b"mine"
