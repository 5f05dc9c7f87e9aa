"""The pictures in docs/ cannot go stale silently: each was made from files whose hashes the
manifest keeps, and a change to one of them names the picture to make again."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from PIL import Image

from labs.trees.finding import REPO_ROOT
from web import screenshots
from web.screenshots import COMMAND, MANIFEST, SHOTS, manifest, phone, picture, stale

from .browser import DOCS_CLIP, PHONE


def test_the_pictures_in_docs_were_made_from_the_current_sources() -> None:
    """Every picture's sources hash as the manifest says; else run the command that remakes them."""
    found = stale()
    assert found == {}, (
        f"pictures in docs/ were made from files that changed since: {found}. "
        f"Run `{COMMAND}` (headless Chromium, a throwaway Postgres) and commit docs/."
    )


def test_every_picture_in_docs_is_one_the_command_makes() -> None:
    """No picture in docs/ is left out of the manifest, and each is a screenful: a small
    laptop's, or a phone's for the pictures taken at a phone's width."""
    in_docs = {p.name for p in (REPO_ROOT / "docs").glob("dashboard-*.png")}
    assert in_docs == {picture(name).name for name in SHOTS}
    recorded = json.loads((REPO_ROOT / MANIFEST).read_text(encoding="utf-8"))
    assert set(recorded["shots"]) == set(SHOTS)
    assert any(phone(name) for name in SHOTS) and not all(phone(name) for name in SHOTS)
    for name in SHOTS:
        screen = PHONE if phone(name) else DOCS_CLIP
        with Image.open(picture(name)) as image:
            assert image.size == (screen["width"], screen["height"]), name


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A small project: two pictures sharing the common files, each with a template of its own."""
    monkeypatch.setattr(screenshots, "COMMON", ["base.html"])
    for name in ("base.html", "one.html", "two.html", "tree/a.py", "tree/b.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(f"{name}\n")
    (tmp_path / "docs").mkdir()
    for name in ("one", "two"):
        picture(name, tmp_path).write_bytes(b"png")
    return tmp_path


SMALL = {"one": ["one.html", "tree/**/*.py"], "two": ["two.html"]}


def write_manifest(root: Path) -> None:
    """Record the small project's sources as they are now."""
    (root / MANIFEST).write_text(json.dumps(manifest(root, SMALL)))


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        ("base.html", {"one", "two"}),
        ("one.html", {"one"}),
        ("two.html", {"two"}),
        ("tree/b.py", {"one"}),
    ],
)
def test_an_edited_source_makes_exactly_its_pictures_stale(
    project: Path, edit: str, expected: set[str]
) -> None:
    """Changing a file marks the pictures made from it, naming the file, and no others."""
    write_manifest(project)
    assert stale(project, SMALL) == {}
    (project / edit).write_text("changed\n")
    found = stale(project, SMALL)
    assert set(found) == expected and all(found[name] == [edit] for name in expected)


def test_a_new_or_removed_source_and_a_missing_picture_make_it_stale(project: Path) -> None:
    """A file added to or gone from a picture's sources counts, and so does a missing picture."""
    write_manifest(project)
    (project / "tree" / "c.py").write_text("new\n")
    (project / "tree" / "a.py").unlink()
    picture("two", project).unlink()
    found = stale(project, SMALL)
    assert found == {
        "one": ["tree/c.py (new)", "tree/a.py (removed)"],
        "two": ["docs/dashboard-two.png is missing"],
    }


def test_without_a_manifest_every_picture_is_stale(project: Path) -> None:
    """No manifest: nothing is known to be fresh."""
    assert set(stale(project, SMALL)) == {"one", "two"}
