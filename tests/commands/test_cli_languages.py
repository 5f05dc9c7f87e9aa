"""Every `python -m labs` command speaks the language asked for, its help and argparse's words too.

The rules tested, in each language the lab has: argparse's own words come from the lab's
catalog, and the help fits the formatter's width counted in terminal columns (a Chinese
character takes two). In a translated language, no run of three or more English words is
left outside code (flags, metavars, `code`, file names, $VARIABLES).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import wcwidth

from labs.checking.checks import CHECKS
from labs.checking.report import Report
from labs.checking.result import CheckResult
from labs.commands import diff, drift, release, review, typecheck
from labs.commands.cli import COMMAND_MODULES, build_parser, main
from labs.grading.actions import PLACEHOLDER_REPOSITORY
from labs.review import questions
from labs.review.rerun import summary_lines
from labs.review.selftest import selftest
from labs.term import i18n
from labs.trees.diff import tree_diff
from labs.trees.finding import REPO_ROOT, tree_root
from tests.support.english import english_runs
from tests.support.languages import LANGUAGES, TRANSLATED, english_left, worded

PROG = "python -m labs"
# argparse's words as each language shows them: the usage prefix, the options heading (its
# colon the language's own) and the -h line.
ARGPARSE_WORDS = {
    i18n.ENGLISH: ("usage: ", "\noptions:\n", "show this help message and exit"),
    i18n.CHINESE: ("用法：", "\n选项：\n", "显示这段帮助并退出"),
}
# A wrong --store choice, as argparse's error line says it in each language.
WRONG_CHOICE = {
    i18n.ENGLISH: f"{PROG} check: error: argument --store: invalid choice: 'sqlite'",
    i18n.CHINESE: f"{PROG} check：错误：参数 --store：无效的选择：'sqlite'",
}


def command_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    """Each registered command's own parser, by command name."""
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            return dict(action.choices)
    raise AssertionError("the parser has no commands")


def helps(language: str, columns: int, monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The top-level help and every command's help, in a language, for a terminal so wide."""
    monkeypatch.setenv("COLUMNS", str(columns))
    i18n.use(language)
    parser = build_parser()
    shown = {"": parser.format_help()}
    shown.update({name: sub.format_help() for name, sub in command_parsers(parser).items()})
    return shown


# One case per command that is registered: the list is the lab's own, not repeated here.
COMMANDS = ["", *(m.rsplit(".", 1)[1] for m in COMMAND_MODULES if importlib.util.find_spec(m))]


def test_every_module_listed_registers_its_command(
    speak: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The commands the tests walk are exactly those the parser has."""
    assert sorted(helps(i18n.ENGLISH, 80, monkeypatch)) == sorted(COMMANDS)


def test_the_detector_finds_english_in_the_english_help(
    speak: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rule can fail: every English help has runs of English words for it to find."""
    for command, text in helps(i18n.ENGLISH, 1000, monkeypatch).items():
        assert english_runs(text), command
    assert english_runs("用法：选项  show this help message and exit")
    assert not english_runs("--store postgres 使用的 Postgres URL（默认：$DATABASE_URL）")


@pytest.mark.parametrize("language", TRANSLATED)
@pytest.mark.parametrize("command", COMMANDS)
def test_a_translated_help_has_no_english_sentence(
    command: str, language: str, speak: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Description, each argument's help, usage and headings: the language, outside code."""
    text = helps(language, 1000, monkeypatch)[command]
    assert not english_runs(text), text


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("command", COMMANDS)
def test_argparse_own_words_are_in_the_language(
    command: str, language: str, speak: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """usage, options and the -h line come from the lab's catalog (English: as argparse writes
    them), headings end in the language's colon, and no other language's words are left."""
    text = helps(language, 80, monkeypatch)[command]
    usage, options, help_line = ARGPARSE_WORDS[language]
    assert text.startswith(f"{usage}{PROG}")
    assert options in text and help_line in text
    colon = options.strip()[-1]
    headings = re.findall(r"^\S.*[:：]$", text, re.M)
    assert all(heading.endswith(colon) for heading in headings), "a heading kept another colon"
    for other in LANGUAGES:
        if other != language:
            words = (*ARGPARSE_WORDS[other], worded(other, "positional arguments"))
            assert not [word for word in words if word.strip() in text], (other, text)


@pytest.mark.parametrize("columns", [80, 100])
@pytest.mark.parametrize("language", LANGUAGES)
def test_the_help_fits_the_width_in_terminal_columns(
    language: str, columns: int, speak: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No line is wider than argparse's width (two columns short of the terminal), a Chinese
    character counted as the two columns it takes."""
    for command, text in helps(language, columns, monkeypatch).items():
        widest = max(text.splitlines(), key=wcwidth.width)
        assert wcwidth.width(widest) <= columns - 2, (command, widest)


def test_a_long_chinese_usage_lines_up_under_the_program(
    speak: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """用法： takes 6 columns: the usage's next lines start under the first option."""
    lines = helps(i18n.CHINESE, 80, monkeypatch)["check"].splitlines()
    first = wcwidth.width(f"用法：{PROG} check ")
    assert lines[0].endswith("[-h] [--tree TREE] [--store {memory,postgres}]")
    assert lines[1].startswith(" " * first + "[") and lines[1][first - 1] == " "


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_wrong_choice_is_refused_in_the_language(
    language: str, speak: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """argparse's error line (prog, error, the argument, the choices) is in the language."""
    with pytest.raises(SystemExit) as exited:
        main(["--lang", language, "check", "--store", "sqlite"])
    said = capsys.readouterr().err
    assert exited.value.code == 2
    assert WRONG_CHOICE[language] in said
    assert said.startswith(ARGPARSE_WORDS[language][0]) and not english_left(language, said)


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_missing_argument_is_refused_in_the_language(
    language: str, speak: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """A command without its required argument says which one, in the language."""
    with pytest.raises(SystemExit):
        main(["--lang", language, "reset"])  # hint's number may be left out now; reset's not
    said = capsys.readouterr().err
    assert worded(language, "the following arguments are required: %s") % "check" in said
    assert not english_left(language, said)


def run_labs(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """`python -m labs ARGS` as a learner runs it, with only the given locale variables."""
    kept = {k: v for k, v in os.environ.items() if k not in i18n.LOCALE_VARIABLES}
    return subprocess.run(
        [sys.executable, "-m", "labs", *args],
        cwd=REPO_ROOT,
        env={**kept, "COLUMNS": "80", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("locale", [{"LANG": "zh_CN.UTF-8"}, {"LAB_LANG": "zh_CN"}])
def test_the_locale_alone_makes_the_help_chinese(locale: dict[str, str]) -> None:
    """LANG=zh_CN.UTF-8 (or LAB_LANG) is enough: no --lang needed."""
    done = run_labs("check", "--help", **locale)
    assert done.returncode == 0 and done.stdout.startswith("用法：python -m labs check")
    assert not english_runs(done.stdout)


def test_an_invalid_command_is_refused_in_chinese_from_the_shell() -> None:
    """The top-level parser's error, as a shell shows it, in Chinese."""
    done = run_labs("chek", LAB_LANG="zh_CN")
    assert done.returncode == 2
    assert "python -m labs：错误：参数 COMMAND：无效的选择：'chek'" in done.stderr


# The commands' own lines, beyond --help: in the language asked for, no English sentence left.


def test_diff_stat_and_headings_in_chinese(speak: None) -> None:
    """diff's headings and --stat totals are Chinese; the titles are the checks' Chinese ones."""
    i18n.use(i18n.CHINESE)
    found = tree_diff(tree_root("starter"), tree_root("solution"))
    stat = "\n".join(diff.render_stat(found))
    headings = [line for line in diff.render_hunks(found, False) if line.startswith("检查")]
    assert not english_runs(stat) and stat.splitlines()[-1].endswith("行")
    assert headings and not english_runs("\n".join(headings))
    assert {i18n._(check.title) for check in CHECKS} >= {h.partition("：")[2] for h in headings}


@pytest.mark.parametrize("language", LANGUAGES)
def test_drift_says_there_is_none_in_the_language(
    language: str, speak: None, capsys: pytest.CaptureFixture[str]
) -> None:
    """drift --no-checks on the real trees: one line, in the language."""
    i18n.use(language)
    args = argparse.Namespace(starter="starter", solution="solution", no_checks=True)
    assert drift.run(args) == 0
    said = capsys.readouterr().out
    none = worded(language, "no drift: the trees differ only inside the marked regions")
    assert said.startswith(none) and not english_left(language, said)


@pytest.mark.parametrize("language", LANGUAGES)
def test_release_refuses_a_folder_in_use_in_the_language(
    language: str, speak: None, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """release into a folder with files in it: the refusal is in the language."""
    (tmp_path / "notes.txt").write_text("mine", encoding="utf-8")
    i18n.use(language)
    args = argparse.Namespace(out=str(tmp_path), kit_repository=PLACEHOLDER_REPOSITORY, kit_ref="x")
    assert release.run(args) == 1
    said = capsys.readouterr().out
    refusal = worded(language, "{out} exists and is not an empty folder: choose a new one")
    assert refusal.format(out=tmp_path) in said and not english_left(language, said)


def test_watch_summary_in_chinese(speak: None) -> None:
    """watch's score line and its next step, failing and all passing, in Chinese."""
    i18n.use(i18n.CHINESE)
    failing = Report(
        "starter", "memory", [CheckResult(str(n), n, "", n != 3, 1.0) for n in range(1, 7)]
    )
    passing = Report(
        "starter", "memory", [CheckResult(str(n), n, "", True, 1.0) for n in range(1, 7)]
    )
    for outcomes in (failing, passing):
        lines = summary_lines("starter", outcomes)
        assert "项检查" in lines[0] and not english_runs("\n".join(lines))
    assert "检查 3" in summary_lines("starter", failing)[1]


@pytest.mark.parametrize(
    ("language", "two", "three"),
    [
        (i18n.ENGLISH, "starter and solution", "a, b and c"),
        (i18n.CHINESE, "starter 和 solution", "a, b 和 c"),
    ],
)
def test_typecheck_names_trees_as_the_language_joins_them(
    language: str, two: str, three: str, speak: None
) -> None:
    """The trees typecheck names are joined as the language joins them."""
    i18n.use(language)
    assert typecheck.named_together(["starter", "solution"]) == two
    assert typecheck.named_together(["a", "b", "c"]) == three


@pytest.mark.parametrize("language", LANGUAGES)
def test_selftest_without_a_store_says_so_in_the_language(
    language: str, speak: None, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """SELFTEST=1 with neither MOCK nor DATABASE_URL: the error names both, in the language."""
    monkeypatch.delenv("MOCK", raising=False)
    monkeypatch.delenv("DATABASE_URL", raising=False)
    i18n.use(language)
    assert selftest(tree_root("starter")) == 2
    said = capsys.readouterr().err
    error = worded(
        language,
        "error: set MOCK=1 to check against the in-memory store, or "
        "DATABASE_URL=postgresql://... to check against Postgres",
    )
    assert said.startswith(error) and not english_left(language, said)


def test_the_review_list_lines_up_in_terminal_columns(
    speak: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """review --list in Chinese: every question starts at the same column."""
    monkeypatch.setenv("LAB_STATE_DIR", str(tmp_path))
    i18n.use(i18n.CHINESE)
    review.print_list(questions.all_questions(), sys.stdout)
    lines = capsys.readouterr().out.splitlines()
    starts = {
        wcwidth.width(line[: line.index(q.question)])
        for line, q in zip(lines, questions.all_questions(), strict=True)
    }
    assert starts == {11 + 1 + 20 + 1 + 15 + 1}


def required_arguments(parser: argparse.ArgumentParser) -> list[str]:
    """Values for a command's required arguments: the first choice it accepts, else a word."""
    values: list[str] = []
    for action in parser._actions:
        value = str(next(iter(action.choices))) if action.choices else "x"
        if not action.option_strings and action.nargs not in ("?", "*"):
            values.append(value)  # a positional the command needs
        elif action.option_strings and action.required:
            values += [action.option_strings[0], value]
    return values


@pytest.mark.parametrize("command", COMMANDS[1:])
@pytest.mark.parametrize("where", ["before", "after"])
def test_lang_is_taken_before_or_after_every_command(
    command: str, where: str, speak: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`--lang zh_CN COMMAND ...` and `COMMAND ... --lang zh_CN` parse alike, for each command."""
    parser = build_parser()
    given = [command, *required_arguments(command_parsers(parser)[command])]
    argv = ["--lang", "zh_CN", *given] if where == "before" else [*given, "--lang", "zh_CN"]
    assert parser.parse_args(argv).lang == "zh_CN"
    assert parser.parse_args(given).lang is None


@pytest.mark.parametrize(
    "argv",
    [["hint", "--lang", "zh_CN"], ["--lang", "zh_CN", "hint"], ["hint", "4", "--lang=zh_CN"]],
    ids=" ".join,
)
def test_hint_speaks_chinese_with_lang_on_either_side(argv: list[str]) -> None:
    """python -m labs hint --lang zh_CN: the hint itself is Chinese, wherever --lang stands."""
    done = run_labs(*argv, LAB_LANG="en")
    assert done.returncode == 0, done.stderr
    assert re.search(r"检查 [34]，第 1/3 层提示", done.stdout)
    # The tree's own TODO lines are English, and so are their wrapped lines, hung below them.
    instructions = re.compile(r"TODO\(check \d\): .*(\n {6,}\S.*)*")
    assert not english_runs(instructions.sub("", done.stdout)), done.stdout


@pytest.mark.parametrize("language", LANGUAGES)
def test_labs_check_lines_its_titles_up_after_pass_and_fail(language: str) -> None:
    """通过 is two characters and 未通过 three: the titles after them still start in one column."""
    done = run_labs("--lang", language, "check", "--tree", "starter", MOCK="1")
    rows = [line for line in done.stdout.splitlines() if re.match(r"  [1-6] ", line)]
    assert len(rows) == 6, done.stdout
    marks = {row.split()[2] for row in rows}
    assert len(marks) == 2, rows  # both a pass and a fail are shown
    starts = {wcwidth.width(re.match(r"  \d \S \S+ +", row).group()) for row in rows}  # type: ignore[union-attr]
    assert len(starts) == 1, rows
