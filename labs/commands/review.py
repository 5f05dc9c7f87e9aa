"""python -m labs review: the day's questions, your answer, then the analysis; mark how you did.

Answers are typed as lines (an empty line ends one), and so is the mark (g, p
or n, then Enter), so the Enter after a mark never ends the next answer. Run
again without question ids, it asks only the questions not marked yet.
"""

from __future__ import annotations

import argparse
import sys
from typing import TextIO

import wcwidth

from labs.term.i18n import _

from ..review import questions, state
from ..review.questions import Question
from ..review.texts import paragraph


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the review command."""
    parser = commands.add_parser(
        "review",
        help=_("answer the day's review questions, then compare with the key points"),
        description=_(
            "Ask the day's review questions one by one: type your own answer, then "
            "read the analysis and the key points and mark how you did (got it / partly / not "
            "yet). Answers and marks are kept on this machine, for this checkout of the lab "
            "alone."
        ),
    )
    parser.add_argument(
        "questions", nargs="*", metavar="ID", help=_("only these questions (default: all)")
    )
    parser.add_argument(
        "--list",
        action="store_true",
        help=_("list the questions and your marks, and ask nothing"),
    )
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    """List, or ask each chosen question in turn; 2 for an unknown question id."""
    try:
        chosen = [questions.find(name) for name in args.questions] or questions.all_questions()
    except KeyError as error:
        print(_("error: {error}").format(error=error.args[0]), file=sys.stderr)
        return 2
    notice = state.legacy_notice()
    if notice:
        print(notice, file=sys.stderr)
    if args.list:
        print_list(chosen, sys.stdout)
        return 0
    labels = questions.labels()
    print(labels["title"])
    print(wrap(labels["intro"]))
    marked = {key for key, saved in questions.saved_answers().items() if saved.mark}
    left = [q for q in chosen if q.id not in marked] if not args.questions else chosen
    if left and len(left) < len(chosen):
        done = len(chosen) - len(left)
        print(wrap(labels["resume"].format(marked=done, total=len(chosen), left=len(left))))
    for question in left or chosen:  # all marked: the whole round again
        if not ask(question, chosen.index(question) + 1, len(chosen), sys.stdin, sys.stdout):
            break
    print()
    print(
        labels["summary"].format(
            got=questions.core_got(),
            core=sum(q.core for q in questions.all_questions()),
            needed=questions.CORE_NEEDED,
        )
    )
    return 0


def wrap(text: str, indent: str = "") -> str:
    """Paragraphs rewrapped for the terminal."""
    return paragraph(text, indent=indent)


def print_list(chosen: list[Question], out: TextIO) -> None:
    """One line per question: its id, kind, your mark, and the question."""
    labels = questions.labels()
    saved = questions.saved_answers()
    for question in questions.all_questions():
        if question not in chosen:
            continue
        mark = saved.get(question.id, questions.Saved()).mark
        shown = labels[f"mark_{mark}"] if mark else labels["unanswered"]
        kind = labels["core"] if question.core else labels["related"]
        # Padded by terminal columns: a Chinese label takes two per character.
        columns = [
            wcwidth.ljust(question.id, 11),
            wcwidth.ljust(kind, 20),
            wcwidth.ljust(shown, 15),
        ]
        print(" ".join([*columns, question.question]), file=out)


def read_line(source: TextIO) -> str | None:
    """One line without its newline, or None at the end of input."""
    line = source.readline()
    return None if line == "" else line.rstrip("\n")


def ask(question: Question, number: int, total: int, source: TextIO, out: TextIO) -> bool:
    """Ask one question, reveal, take the mark; False when input ended (stop asking)."""
    labels = questions.labels()
    kind = labels["core"] if question.core else labels["related"]
    print(f"\n[{number}/{total}] ({kind}) {question.question}", file=out)
    if question.follow_up:
        print(f"  {labels['follow_up']}: {question.follow_up}", file=out)
    print(labels["answer_prompt"], file=out, flush=True)
    answer: list[str] = []
    while (line := read_line(source)) is not None and line.strip():
        answer.append(line)
    ended = line is None
    previous = questions.saved_answers().get(question.id, questions.Saved())
    text = "\n".join(answer) or previous.answer
    print(f"\n{labels['analysis']}:", file=out)
    print(wrap(question.analysis, "  "), file=out)
    print(f"\n{labels['key_points']}:", file=out)
    for point in question.key_points:
        print(wrap(point, "    ").replace("    ", "  - ", 1), file=out)
    if ended:
        if answer:
            questions.save(question.id, text, None)
        return False
    print(f"\n{labels['mark_prompt']}", file=out, flush=True)
    choice = read_line(source)  # a line, so its Enter is not the next answer's empty line
    keys = {"g": questions.Mark.GOT, "p": questions.Mark.PARTLY, "n": questions.Mark.NOT_YET}
    mark = keys.get((choice or "").strip().lower()[:1])
    if text or mark:
        questions.save(question.id, text, mark)
    said = (
        labels["mark_saved"].format(mark=labels[f"mark_{mark}"]) if mark else labels["not_marked"]
    )
    print(said, file=out)
    return choice is not None
