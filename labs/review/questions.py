"""The day's review questions and the learner's own answers and marks, kept locally."""

from __future__ import annotations

import time
from dataclasses import dataclass
from enum import StrEnum
from typing import Literal

from . import state, texts


class Mark(StrEnum):
    """How the learner marked their own answer, after reading the analysis."""

    GOT = "got"
    PARTLY = "partly"
    NOT_YET = "not_yet"


MARKS: tuple[Mark, ...] = tuple(Mark)
CORE_NEEDED = 3  # the checklist: at least three of the four interview questions


@dataclass(frozen=True)
class Question:
    """One review question, the analysis to reveal after answering, and its key points."""

    id: str
    core: bool
    question: str
    follow_up: str
    analysis: str
    key_points: tuple[str, ...]


@dataclass(frozen=True)
class Saved:
    """What the learner wrote for a question and how they marked it ("" when not yet)."""

    answer: str = ""
    mark: Mark | Literal[""] = ""
    at: str = ""


def labels() -> dict[str, str]:
    """The review's fixed texts (prompts, headings, mark names under "marks")."""
    data = texts.load("questions")
    return {**data["labels"], **{f"mark_{k}": v for k, v in data["marks"].items()}}


def all_questions() -> list[Question]:
    """Every question, in the order a learner meets them."""
    return [
        Question(
            id=entry["id"],
            core=bool(entry.get("core", False)),
            question=entry["question"],
            follow_up=entry.get("follow_up", ""),
            analysis=entry["analysis"],
            key_points=tuple(entry["key_points"]),
        )
        for entry in texts.load("questions")["question"]
    ]


def find(question_id: str) -> Question:
    """The question with this id, or KeyError with a message naming the choices."""
    for question in all_questions():
        if question.id == question_id:
            return question
    choices = ", ".join(q.id for q in all_questions())
    raise KeyError(labels()["unknown"].format(name=question_id, choices=choices))


def saved_answers() -> dict[str, Saved]:
    """The learner's saved answers and marks, by question id."""
    found: dict[str, Saved] = {}
    for question_id, entry in state.section(state.load_state(), "review").items():
        if isinstance(entry, dict):
            mark = entry.get("mark", "")
            found[question_id] = Saved(
                answer=str(entry.get("answer", "")),
                mark=Mark(mark) if mark in MARKS else "",
                at=str(entry.get("at", "")),
            )
    return found


def save(question_id: str, answer: str, mark: str | None) -> Saved:
    """Keep the learner's answer and mark (None keeps the mark as it was); return them."""
    if mark is not None and mark not in MARKS:
        raise ValueError(f"mark must be one of {', '.join(MARKS)}, not {mark!r}")
    find(question_id)
    with state.editing() as data:
        entry = state.section(data, "review", question_id)
        entry["answer"] = answer
        if mark is not None:
            entry["mark"] = mark
        entry["at"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
    return saved_answers()[question_id]


def core_got() -> int:
    """How many of the day's interview questions the learner marked "got it"."""
    marks = saved_answers()
    return sum(1 for q in all_questions() if q.core and marks.get(q.id, Saved()).mark == Mark.GOT)
