"""Review questions in the terminal, and the day's checklist verified by the lab itself."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from labs.review import checklist, questions, state
from labs.trees.finding import REPO_ROOT
from tests.support.migrations import migrate, unfixed_starter_migration
from tests.support.pgcluster import TempCluster, drop_database_of


@pytest.fixture(autouse=True)
def own_state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Every test keeps answers and marks in a state folder of its own."""
    folder = tmp_path / "state"
    monkeypatch.setenv("LAB_STATE_DIR", str(folder))
    return folder


def lab(*args: str, stdin: str = "", **env: str) -> subprocess.CompletedProcess[str]:
    """Run `python -m labs ARGS` from the project root with stdin fed and env added."""
    clean = {k: v for k, v in os.environ.items() if k not in ("MOCK", "DATABASE_URL")}
    return subprocess.run(
        [sys.executable, "-m", "labs", *args],
        cwd=REPO_ROOT,
        env={**clean, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def test_the_day_has_four_interview_questions_and_related_ones() -> None:
    """Four core questions (split, stateless, idempotent writes, keys) plus related ones."""
    found = questions.all_questions()
    assert [q.id for q in found if q.core] == ["split", "stateless", "idempotent", "keys"]
    assert len(found) > 4
    assert len({q.id for q in found}) == len(found)
    for question in found:
        assert question.analysis.strip() and len(question.key_points) >= 3


def test_the_idempotency_question_asks_the_check_then_insert_follow_up() -> None:
    """The follow-up on check-then-insert is asked, and the key points answer it."""
    question = questions.find("idempotent")
    assert "check" in question.follow_up and "insert" in question.follow_up
    assert any("Check-then-insert" in point for point in question.key_points)


def test_the_analysis_comes_only_after_the_learners_answer() -> None:
    """The answer prompt is printed before the analysis and the key points."""
    done = lab("review", "split", stdin="my answer\n\ng\n")
    assert done.returncode == 0, done.stderr
    out = done.stdout
    assert out.index("Your answer") < out.index("How to think it through") < out.index("Key points")


def test_the_answer_and_the_mark_are_kept_locally(own_state: Path) -> None:
    """What was typed and the mark chosen are saved in the state folder and listed after."""
    lab("review", "stateless", "keys", stdin="no state in the process\nany instance\n\ng\n\np\n")
    saved = questions.saved_answers()
    assert saved["stateless"].answer == "no state in the process\nany instance"
    assert saved["stateless"].mark == "got" and saved["keys"].mark == "partly"
    assert state.state_file().is_file() and state.state_file().is_relative_to(own_state)
    listing = lab("review", "--list").stdout
    assert "stateless" in listing and "got it" in listing and "partly" in listing


def test_input_ending_mid_answer_keeps_the_answer_and_stops() -> None:
    """End of input after an answer keeps it unmarked and asks nothing more."""
    done = lab("review", "split", "keys", stdin="half an answer")
    assert done.returncode == 0, done.stderr
    assert "[2/2]" not in done.stdout
    saved = questions.saved_answers()["split"]
    assert (saved.answer, saved.mark) == ("half an answer", "")


def test_an_unknown_question_is_refused_by_name() -> None:
    """review with a wrong id exits 2 and lists the ids there are."""
    done = lab("review", "nosuch")
    assert done.returncode == 2
    assert "nosuch" in done.stderr and "idempotent" in done.stderr


@pytest.mark.parametrize("got", [2, 3, 4])
def test_the_interview_item_needs_three_of_four_marked_got_it(got: int) -> None:
    """The checklist's interview item is verified from the learner's own marks."""
    core = [q.id for q in questions.all_questions() if q.core]
    for index, question_id in enumerate(core):
        questions.save(question_id, "answer", "got" if index < got else "partly")
    assert (checklist.verify_review("core").state == checklist.Finding.OK) == (got >= 3)


def test_the_starter_as_shipped_is_checked_and_the_unverifiable_said(own_state: Path) -> None:
    """On memory the lab runs the checks itself; Postgres and the typecheck say why not."""
    done = lab("checklist", "--quick")
    assert done.returncode == 1
    out = done.stdout
    assert "3 of 6 checks pass on the in-memory store; failing: 3, 4, 5" in out
    assert "not verifiable: DATABASE_URL is not set" in out
    assert "the typecheck was skipped" in out
    assert "0 of 6 done" in out
    assert "verifying" in done.stderr


def test_a_learner_ticks_what_only_they_can_judge() -> None:
    """--tick architecture marks that item done; an unknown item is refused by name."""
    done = lab("checklist", "--quick", "--tick", "architecture")
    assert "[x] architecture" in done.stdout
    refused = lab("checklist", "--tick", "nosuch")
    assert refused.returncode == 2 and "nosuch" in refused.stderr


def test_the_solution_on_postgres_ticks_the_lab_and_the_tables(solution_database: str) -> None:
    """Six checks on memory and Postgres, both constraints, the migration and the typecheck."""
    items = {
        item.id: item
        for item in checklist.checklist(
            checklist.Settings(tree="solution", database_url=solution_database)
        )
    }
    for item_id in ("lab", "tables"):
        assert [v.state for v in items[item_id].verifications] == [checklist.Finding.OK] * len(
            items[item_id].verifications
        ), items[item_id].verifications
        assert items[item_id].status == "done"
    said = " ".join(v.text for v in items["tables"].verifications)
    assert "runs (idempotency_key)" in said and "messages (run_id, seq)" in said


def test_a_starter_migration_without_the_constraints_is_named(
    pg_cluster: TempCluster, tmp_path: Path
) -> None:
    """The catalog check names both missing unique constraints of an unfixed schema."""
    name = f"koda_checklist_{uuid.uuid4().hex[:10]}"
    url = pg_cluster.create_database(name)
    try:
        unfixed_starter_migration(url, tmp_path)
        migrate(url, "starter", tmp_path)
        found = checklist.verify_constraints(checklist.Settings("starter", url))
    finally:
        drop_database_of(pg_cluster, name)
    assert found.state == checklist.Finding.NO
    assert "runs (idempotency_key)" in found.text and "messages (run_id, seq)" in found.text


def test_an_unreachable_database_is_not_verifiable_rather_than_failed() -> None:
    """A database that does not answer makes the catalog item unknown, with the reason."""
    settings = checklist.Settings("starter", "postgresql://koda:koda@127.0.0.1:9/koda")
    found = checklist.verify_constraints(settings)
    assert found.state == checklist.Finding.UNKNOWN and "could not be read" in found.text


def test_every_message_the_code_asks_for_is_in_the_texts() -> None:
    """Each message("section", "key") in the kit's code names an entry of messages.toml."""
    from labs.review import texts

    messages = texts.load("messages")
    used = set()
    for path in (REPO_ROOT / "labs").rglob("*.py"):
        used |= set(re.findall(r'message\(\s*"(\w+)",\s*"(\w+)"', path.read_text(encoding="utf-8")))
    assert used
    assert sorted(f"{s}.{k}" for s, k in used if k not in messages.get(s, {})) == []


@pytest.mark.parametrize("name", ["hints", "questions", "checklist", "messages"])
def test_the_texts_are_well_formed_format_strings(name: str) -> None:
    """Every text parses as a str.format template, so a translation can keep its fields."""
    from string import Formatter

    from labs.review import texts

    def strings(value: object) -> list[str]:
        if isinstance(value, str):
            return [value]
        if isinstance(value, dict):
            return [s for v in value.values() for s in strings(v)]
        if isinstance(value, list):
            return [s for v in value for s in strings(v)]
        return []

    found = strings(texts.load(name))
    assert found
    for text in found:
        list(Formatter().parse(text))  # raises ValueError on an unbalanced brace


def test_answers_saved_at_the_same_time_are_all_kept() -> None:
    """Many threads saving different questions at once lose none of them."""
    import threading

    ids = [q.id for q in questions.all_questions()]
    start = threading.Barrier(len(ids) * 4)

    def save(question_id: str, round_number: int) -> None:
        start.wait()
        questions.save(question_id, f"answer {round_number}", "partly")

    threads = [
        threading.Thread(target=save, args=(question_id, n))
        for n in range(4)
        for question_id in ids
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    saved = questions.saved_answers()
    assert sorted(saved) == sorted(ids)
    assert all(entry.mark == "partly" for entry in saved.values())


def test_a_partial_translation_falls_back_to_english_text_by_text(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A catalog with one question and one label translated shows them, and English elsewhere."""
    import gettext

    from labs.review import texts

    english = texts.load("questions", "en")
    keys = next(q for q in english["question"] if q["id"] == "keys")
    known = {
        (texts.context("questions"), english["labels"]["reveal"]): "REVEAL",
        (texts.context("questions"), keys["question"]): "KEYS?",
    }

    class TwoTexts(gettext.NullTranslations):
        def pgettext(self, context: str, message: str) -> str:
            return known.get((context, message), message)

    monkeypatch.setattr(texts, "translation", lambda language: TwoTexts())
    translated = texts.load("questions", "xx")
    assert translated["labels"]["reveal"] == "REVEAL"
    assert translated["labels"]["analysis"] == english["labels"]["analysis"]
    by_id = {q["id"]: q for q in translated["question"]}
    assert by_id["keys"]["question"] == "KEYS?"
    assert by_id["keys"]["key_points"] == keys["key_points"]
    assert [q["id"] for q in translated["question"]] == [q["id"] for q in english["question"]]


def read_until(fd: int, wanted: str, seen: bytearray, times: int = 1) -> str:
    """Read a child's output from fd until wanted has appeared so many times (or 60 s passed)."""
    import select
    import time

    deadline = time.monotonic() + 60
    while seen.decode(errors="replace").count(wanted) < times and time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            chunk = os.read(fd, 4096)
            if not chunk:
                break
            seen.extend(chunk)
    return seen.decode(errors="replace")


def test_at_a_terminal_a_mark_is_a_line_and_its_enter_ends_no_answer() -> None:
    """At a terminal, p then Enter marks the answer; the next question still waits for one."""
    import pty

    main, secondary = pty.openpty()
    review = subprocess.Popen(
        [sys.executable, "-m", "labs", "review", "split", "keys"],
        cwd=REPO_ROOT,
        env={**os.environ, "LAB_LANG": "en"},
        stdin=secondary,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert review.stdout is not None
    seen = bytearray()
    try:
        read_until(review.stdout.fileno(), "Your answer", seen)
        os.write(main, b"one process took too long\n\n")
        read_until(review.stdout.fileno(), "How did you do?", seen)
        os.write(main, b"p\n")  # what people type: the letter, then Enter
        said = read_until(review.stdout.fileno(), "[2/2]", seen)
        assert "Marked: partly." in said
        os.write(main, b"keys come from the request\n\n")
        read_until(review.stdout.fileno(), "How did you do?", seen, times=2)
        os.write(main, b"g\n")
        review.wait(timeout=60)
    finally:
        if review.poll() is None:
            review.kill()
        review.communicate(timeout=30)
        os.close(main)
        os.close(secondary)
    assert review.returncode == 0
    saved = questions.saved_answers()
    assert saved["split"].mark == "partly" and saved["split"].answer == "one process took too long"
    assert saved["keys"].mark == "got" and saved["keys"].answer == "keys come from the request"


def test_run_again_review_asks_only_the_questions_not_marked_yet() -> None:
    """After marking the first two, a new round starts at the third and says why."""
    everything = questions.all_questions()
    for question in everything[:2]:
        questions.save(question.id, "an answer", "got")
    done = subprocess.run(
        [sys.executable, "-m", "labs", "review"],
        cwd=REPO_ROOT,
        env={**os.environ, "LAB_LANG": "en"},
        input="",  # no answer at all: the first question asked reveals, then input ends
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    total = len(everything)
    assert f"2 of {total} questions are marked already" in done.stdout
    assert f"[3/{total}] " in done.stdout and f"[1/{total}] " not in done.stdout
    assert everything[2].question in done.stdout
