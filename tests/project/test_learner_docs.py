"""The learners' documents exist in English and Chinese, and the two say the same commands."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from labs.trees.finding import REPO_ROOT
from labs.trees.regions import regions_in
from tests.support.treesize import tree_sizes

# Each document a learner reads, and its Simplified Chinese version.
PAIRS = [
    ("labs/LEARNER_README.md", "labs/LEARNER_README.zh_CN.md"),
    ("labs/HANDOUT.md", "labs/HANDOUT.zh_CN.md"),
    ("MOCK.md", "MOCK.zh_CN.md"),
]
HEADING = re.compile(r"^(#+) ", re.MULTILINE)
FENCE = re.compile(r"^[ \t]*```[^\n]*\n.*?^[ \t]*```", re.MULTILINE | re.DOTALL)
INLINE_CODE = re.compile(r"`([^`]+)`")


def read(name: str) -> str:
    """A document of the project, its fenced blocks included."""
    return (REPO_ROOT / name).read_text(encoding="utf-8")


def inline_code(text: str) -> set[str]:
    """The `code` spans outside fenced blocks, a span wrapped across lines read as one line."""
    return {" ".join(span.split()) for span in INLINE_CODE.findall(FENCE.sub("", text))}


@pytest.mark.parametrize(("english", "chinese"), PAIRS, ids=lambda name: Path(name).name)
def test_the_chinese_document_has_the_same_sections(english: str, chinese: str) -> None:
    """Heading for heading, level for level: no section left untranslated or dropped."""
    assert HEADING.findall(read(chinese)) == HEADING.findall(read(english))


@pytest.mark.parametrize(("english", "chinese"), PAIRS, ids=lambda name: Path(name).name)
def test_the_chinese_document_gives_every_command_of_the_english(
    english: str, chinese: str
) -> None:
    """Every `code` span of the English (commands, files, names) is in the Chinese too."""
    missing = sorted(inline_code(read(english)) - inline_code(read(chinese)))
    assert not missing


@pytest.mark.parametrize(
    ("english", "chinese"), [PAIRS[0], PAIRS[2]], ids=lambda name: Path(name).name
)
def test_the_code_blocks_are_the_same_in_both_languages(english: str, chinese: str) -> None:
    """Commands and output samples are not translated: a change to one is a change to both."""
    assert FENCE.findall(read(chinese)) == FENCE.findall(read(english))


@pytest.mark.parametrize(("english", "chinese"), PAIRS, ids=lambda name: Path(name).name)
def test_each_document_links_the_other_language(english: str, chinese: str) -> None:
    """A reader who opened the wrong language finds the other one at the top."""
    head = {name: "\n".join(read(name).splitlines()[:10]) for name in (english, chinese)}
    assert Path(chinese).name.replace("LEARNER_README", "README") in head[english]
    assert Path(english).name.replace("LEARNER_README", "README") in head[chinese]


# The message given to Alembic's revision --autogenerate -m, in quotes (in TOML, escaped ones).
MIGRATION_MESSAGE = re.compile(r"revision --autogenerate -m \\?([\"'])(.*?)\\?\1")


def test_every_migration_command_in_the_repository_gives_the_same_message() -> None:
    """README, handouts, MOCK, the kit's messages and pages: one `-m` message for the migration."""
    from labs.trees.regions import project_files

    found: dict[str, set[str]] = {}
    for name in project_files():
        try:
            text = read(name)
        except (UnicodeDecodeError, OSError):
            continue
        if name.endswith((".po", ".pot")):  # a catalog wraps its strings: join them again
            text = text.replace('"\n"', "")
        for _quote, message in MIGRATION_MESSAGE.findall(text):
            found.setdefault(message, set()).add(name)
    assert len(found) == 1, found
    learners_read = {"README.md", "labs/HANDOUT.md", "labs/HANDOUT.zh_CN.md"}
    assert learners_read <= next(iter(found.values()))


def test_the_detector_sees_a_different_message() -> None:
    """Two wordings are two messages to the rule above, in Markdown and in TOML alike."""
    text = 'a `alembic revision --autogenerate -m "create tables"` b \\\n'
    text += 'no = "`alembic revision --autogenerate -m \\"sessions, runs\\"`"'
    assert [m for _q, m in MIGRATION_MESSAGE.findall(text)] == ["create tables", "sessions, runs"]


STEP = re.compile(r"^(\d+)\. (.*?)(?=^\d+\. |^#|\Z)", re.MULTILINE | re.DOTALL)
ON_POSTGRES = ("docker compose", "alembic ", "DATABASE_URL")
IN_MEMORY = ("shared/keys.py", "shared/states.py", "infra/memory.py")


@pytest.mark.parametrize("name", ["labs/HANDOUT.md", "labs/HANDOUT.zh_CN.md"])
def test_the_handout_fixes_the_in_memory_store_before_postgres(name: str) -> None:
    """As in the README: every step that edits the in-memory code comes before any Postgres step."""
    text = read(name)
    steps_heading = "## Steps" if name.endswith("HANDOUT.md") else "## 步骤"
    steps = STEP.findall(text.split(steps_heading)[1].split("\n## ")[0])
    assert len(steps) >= 5
    memory = [int(n) for n, body in steps if any(f"`{f}`" in body for f in IN_MEMORY)]
    postgres = [int(n) for n, body in steps if any(word in body for word in ON_POSTGRES)]
    assert memory and postgres
    assert max(memory) < min(postgres), (memory, postgres)


@pytest.mark.parametrize("name", ["README.md", *PAIRS[0], *PAIRS[1]])
def test_the_docs_say_the_tables_are_in_the_trees_schema(name: str) -> None:
    """psql's `\\d runs` finds nothing: each doc gives `\\d starter.runs` and the search_path."""
    text = read(name)
    assert "\\d starter.runs" in text and "SET search_path TO starter;" in text


# The handouts' "Reading the tree" table: one row per file of the starter, `path` | lines | ...
READING_ROW = re.compile(r"^\| `([^`]+\.py)` \| (\d+) \|", re.MULTILINE)
HANDOUTS = ["labs/HANDOUT.md", "labs/HANDOUT.zh_CN.md"]
# After the files with TODO regions, the lesson's reader meets the store and the gateway.
MET_NEXT = {"infra/store.py", "infra/sql.py", "gateway/routes.py", "gateway/requests.py"}


def reading_list(name: str) -> list[tuple[str, int]]:
    """The (file, lines) rows of a handout's "Reading the tree" section, in order.

    The Chinese section is the one at the same place among the headings as the English one.
    """
    position = heading_lines(read(HANDOUTS[0])).index("## Reading the tree")
    headings = heading_lines(read(name))
    text = read(name)
    start = text.index(headings[position] + "\n")
    end = text.index(headings[position + 1] + "\n", start)
    return [(path, int(lines)) for path, lines in READING_ROW.findall(text[start:end])]


def heading_lines(text: str) -> list[str]:
    """The document's heading lines, fenced blocks left out."""
    return [line for line in FENCE.sub("", text).splitlines() if HEADING.match(line)]


@pytest.mark.parametrize("name", HANDOUTS, ids=lambda name: Path(name).name)
def test_the_handout_lists_every_file_of_the_tree_with_its_current_line_count(name: str) -> None:
    """Each .py file of starter/ appears once, with the lines the tree-size test counts now."""
    listed = reading_list(name)
    assert len({path for path, _ in listed}) == len(listed), "a file is listed twice"
    assert dict(listed) == tree_sizes(REPO_ROOT / "starter")


def test_the_handout_lists_the_lessons_files_first() -> None:
    """The files holding TODO regions come first, then the store and gateway code they meet."""
    listed = [path for path, _ in reading_list(HANDOUTS[0])]
    with_regions = {region.path for region in regions_in(REPO_ROOT / "starter")}
    assert set(listed[: len(with_regions)]) == with_regions
    assert set(listed[len(with_regions) : len(with_regions) + len(MET_NEXT)]) == MET_NEXT


CLOCK = re.compile(r"\b(\d\d):(\d\d):(\d\d(?:\.\d+)?)\b")


@pytest.mark.parametrize("name", HANDOUTS)
def test_the_handout_shows_both_ways_the_time_bucket_fails(name: str) -> None:
    """Its example times do what it says: a retry 0.5 s apart across a minute is two keys, a
    second "yes" 30 s later in the same minute is one, and it names clientMessageId as the fix."""
    from solution.shared.keys import idempotency_key_for

    text = read(name)
    heading = "### What the time bucket gets wrong" if name.endswith("HANDOUT.md") else "### 时间桶"
    section = text.split(heading)[1].split("\n## ")[0].split("\n### ")[0]
    moments = [int(h) * 3600 + int(m) * 60 + float(s) for h, m, s in CLOCK.findall(section)]
    assert len(moments) == 4, moments
    retry, retried, first_yes, second_yes = moments
    assert 0 < retried - retried // 60 * 60 < retried - retry <= 1  # crosses a minute, in 1 s
    assert first_yes // 60 == second_yes // 60 and second_yes - first_yes >= 10
    day = 20_000 * 86_400  # a day in 2024: the examples' clock times fall anywhere in it

    def key(text: str, moment: float) -> str:
        return idempotency_key_for("s-1", None, text, now=day + moment)

    assert key("book me a flight", retry) != key("book me a flight", retried)
    assert key("yes", first_yes) == key("yes", second_yes)
    assert "clientMessageId" in section and "Idempotent-Replayed: true" in section
