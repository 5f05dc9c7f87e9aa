"""The right Postgres port for each path: 5432 for a local server, 5508 only with compose."""

from __future__ import annotations

import re

import pytest
from flask.testing import FlaskClient

from labs.trees.finding import REPO_ROOT

from .pages import HTMX

# Where a learner reads the commands: the READMEs, the handout, MOCK.md (each in English and
# Chinese), the dashboard's pages.
DOCS = [
    *("README.md", "MOCK.md", "labs/HANDOUT.md", "labs/LEARNER_README.md"),
    *("MOCK.zh_CN.md", "labs/HANDOUT.zh_CN.md", "labs/LEARNER_README.zh_CN.md"),
]
TEMPLATES = sorted((REPO_ROOT / "web" / "templates").rglob("*.html"))


def paragraphs() -> list[tuple[str, int, str]]:
    """Every paragraph (lines between blank ones) of the learner-facing docs and templates,
    with the file and the line it starts on."""
    found = []
    for path in [*(REPO_ROOT / name for name in DOCS), *TEMPLATES]:
        start, lines = 1, []
        for number, line in enumerate([*path.read_text(encoding="utf-8").splitlines(), ""], 1):
            if line.strip():
                lines.append(line)
                continue
            if lines:
                found.append((str(path.relative_to(REPO_ROOT)), start, "\n".join(lines)))
            start, lines = number + 1, []
    return found


def test_port_5508_is_only_ever_named_with_compose() -> None:
    """A paragraph naming 5508 (compose's published port) says compose, or its .env file."""
    lonely = [
        f"{path}:{number}: {text}"
        for path, number, text in paragraphs()
        if "5508" in text and not re.search(r"compose|\.env", text, re.IGNORECASE)
    ]
    assert lonely == []


def test_the_readme_without_docker_section_uses_5432() -> None:
    """The no-Docker steps serve and connect on 5432 and never mention 5508."""
    readme = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
    section = readme.split("### Without Docker", 1)[1].split("\n### ", 1)[0]
    assert "localhost:5432" in section and "5508" not in section


@pytest.mark.parametrize("url", ["/database", "/race"])
def test_the_no_database_notice_gives_the_local_port_and_the_compose_one(
    client: FlaskClient, url: str
) -> None:
    """Without DATABASE_URL, the notice's command uses 5432 and ties 5508 to compose."""
    notice = re.search(r'id="no-database">(.*?)</p>', client.get(url, headers=HTMX).text, re.S)
    assert notice is not None
    text = " ".join(re.sub(r"<[^>]+>", " ", notice.group(1)).split())
    assert "DATABASE_URL=postgresql://koda:koda@localhost:5432/koda python -m web" in text
    assert re.search(r"docker compose up -d [^.;]*5508", text)
