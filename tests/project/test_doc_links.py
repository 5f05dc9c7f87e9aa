"""Every link in the project's documents leads somewhere: a file that exists, a heading it has."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from labs.trees.finding import REPO_ROOT

# The learners' READMEs are written for the release's root, where they become README.md and
# README.zh_CN.md; tests/grading/test_release.py follows their links there.
DOCUMENTS = sorted(
    str(path.relative_to(REPO_ROOT))
    for path in [
        *REPO_ROOT.glob("*.md"),
        *(REPO_ROOT / "labs").glob("*.md"),
        *(REPO_ROOT / "deploy").glob("*.md"),
    ]
    if not path.name.startswith("LEARNER_README")
)
FENCE = re.compile(r"^[ \t]*```[^\n]*\n.*?^[ \t]*```", re.MULTILINE | re.DOTALL)
LINK = re.compile(r"\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#+ (.+)$", re.MULTILINE)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"`([^`]*)`", r"\1", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(text: str) -> set[str]:
    """The anchors of a Markdown text's headings, fenced blocks left out."""
    return {slug(heading) for heading in HEADING.findall(FENCE.sub("", text))}


def broken_links(document: Path) -> list[str]:
    """Each relative link of the document whose file or heading is not there."""
    text = document.read_text(encoding="utf-8")
    broken = []
    for target in LINK.findall(FENCE.sub("", text)):
        if "://" in target or target.startswith("mailto:"):
            continue
        name, _, anchor = target.partition("#")
        linked = (document.parent / name).resolve() if name else document
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif (
            anchor
            and linked.suffix == ".md"
            and anchor not in anchors(linked.read_text(encoding="utf-8"))
        ):
            broken.append(f"{target}: no such heading")
    return broken


def test_the_documents_are_found() -> None:
    """The list holds the READMEs, the guides and the learners' documents."""
    wanted = {"README.md", "CONTRIBUTING.md", "CHANGELOG.md", "deploy/README.md"}
    assert wanted | {"labs/HANDOUT.md", "labs/INSTRUCTORS.md"} <= set(DOCUMENTS)


@pytest.mark.parametrize("name", DOCUMENTS)
def test_every_link_in_a_document_resolves(name: str) -> None:
    """A link names a file of the repository, and an #anchor a heading of that file."""
    assert broken_links(REPO_ROOT / name) == []


def test_a_missing_file_and_a_missing_heading_are_both_found(tmp_path: Path) -> None:
    """The reader sees a link to nowhere and an anchor no heading has, and passes good ones."""
    (tmp_path / "other.md").write_text("# The `labs` kit, step by step\n", encoding="utf-8")
    document = tmp_path / "doc.md"
    document.write_text(
        "## Two languages\n[a](other.md#the-labs-kit-step-by-step) [b](#two-languages)\n"
        "[c](gone.md) [d](other.md#nowhere) [e](https://example.com/x)\n"
        "```\n[f](inside-a-fence.md)\n```\n",
        encoding="utf-8",
    )
    assert broken_links(document) == ["gone.md: no such file", "other.md#nowhere: no such heading"]
