"""python -m labs <command>: the lab kit's commands, one module each."""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import os
import sys
from collections.abc import Iterable
from typing import Any

from labs.term import i18n
from labs.term.i18n import N_, _
from labs.version import version_text

CONSOLE_SCRIPT = "koda-lab"  # pyproject's [project.scripts] name for main()

# Each module here defines register(subparsers), adding one command.
COMMAND_MODULES = [
    "labs.commands.check",
    "labs.commands.selftest",
    "labs.commands.typecheck",
    "labs.commands.diff",
    "labs.commands.drift",
    "labs.commands.grade",
    "labs.commands.release",
    "labs.commands.autograder",
    "labs.commands.watch",
    "labs.commands.list",
    "labs.commands.race",
    "labs.commands.bench",
    "labs.commands.constraints",
    "labs.commands.hint",
    "labs.commands.reset",
    "labs.commands.review",
    "labs.commands.checklist",
    "labs.commands.doctor",
]


# argparse's own words, as Python 3.11's Lib/argparse.py spells them. argparse looks each one
# up through the module-level `_` and `ngettext` it imported from gettext;
# argparse_speaks_lab_language() points those two names at labs.term.i18n, so the lab's catalog
# translates them. Listing them here with N_() keeps them in the catalog when the messages are
# extracted. Left out: the errors a programmer meets while building a parser (conflicting
# option strings and the like), which a learner never sees, and argparse's one plural
# ("expected %s argument"), which only nargs=N uses.
ARGPARSE_MESSAGES = (
    # help
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("subcommands"),
    N_("show this help message and exit"),
    N_("show program's version number and exit"),
    # errors, printed as "<prog>: error: <message>"
    N_("%(prog)s: error: %(message)s\n"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("the following arguments are required: %s"),
    N_("one of the arguments %s is required"),
    N_("unrecognized arguments: %s"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("invalid %(type)s value: %(value)r"),
    N_("expected one argument"),
    N_("expected at most one argument"),
    N_("expected at least one argument"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("unexpected option string: %s"),
    N_("ignored explicit argument %r"),
    N_("not allowed with argument %s"),
    N_("unknown parser %(parser_name)r (choices: %(choices)s)"),
    N_("can't open '%(filename)s': %(error)s"),
    N_('argument "-" with mode %r'),
)


def argparse_speaks_lab_language() -> None:
    """Have argparse's own words (usage, options, its errors) come from the lab's catalog.

    argparse calls `_(...)` and `ngettext(...)` from its module's namespace; replacing those
    two names is the hook gettext-based translations of argparse use. In English the lab's
    catalog gives every message back unchanged, as argparse's default lookup does.
    """
    argparse._ = i18n._  # type: ignore[attr-defined]
    argparse.ngettext = i18n.ngettext  # type: ignore[attr-defined]


class DisplayWidthHelpFormatter(argparse.HelpFormatter):
    """argparse's help formatter, measuring text in terminal columns instead of characters.

    argparse wraps help with textwrap, which counts characters; a Chinese character takes two
    columns, so Chinese help would come out twice as wide as the terminal. The width tables
    (wcwidth) load when help or an error is first formatted, not on every start: `selftest`
    must start as fast as the tree's own imports allow.
    """

    def __init__(self, prog: str, *args: Any, **kwargs: Any) -> None:
        super().__init__(prog, *args, **kwargs)
        self._headings: list[str] = []

    def start_section(self, heading: str | None) -> None:
        """Open a section of the help, remembering its heading for format_help."""
        if heading:
            self._headings.append(heading)
        super().start_section(heading)

    def format_help(self) -> str:
        """The help, each section heading ending in the language's colon ("选项：")."""
        lines = super().format_help().split("\n")
        return "\n".join(
            _("{heading}:").format(heading=line[:-1])
            if line.endswith(":") and line[:-1] in self._headings
            else line
            for line in lines
        )

    def _split_lines(self, text: str, width: int) -> list[str]:
        """One argument's help, as lines of at most width columns."""
        from labs.term.columns import ColumnWrapper

        text = self._whitespace_matcher.sub(" ", text).strip()
        return ColumnWrapper(width).wrap(text)

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        """The description, as lines of at most width columns, each starting with indent."""
        from labs.term.columns import ColumnWrapper

        text = self._whitespace_matcher.sub(" ", text).strip()
        wrapper = ColumnWrapper(width, initial_indent=indent, subsequent_indent=indent)
        return "\n".join(wrapper.wrap(text))

    def _format_usage(
        self,
        usage: str | None,
        actions: Iterable[argparse.Action],
        groups: Iterable[argparse._MutuallyExclusiveGroup],
        prefix: str | None,
    ) -> str:
        """The usage lines, with continuation lines lined up under a prefix of any width.

        argparse measures the prefix ("usage: ") with len(); "用法：" has 3 characters but
        takes 6 columns. So the lines are laid out behind blanks as wide as the prefix,
        which are then replaced by the prefix itself.
        """
        import wcwidth

        shown = _("usage: ") if prefix is None else prefix
        blank = " " * wcwidth.width(shown)
        text = super()._format_usage(usage, actions, groups, blank)
        return shown + text[len(blank) :]


class LabArgumentParser(argparse.ArgumentParser):
    """An ArgumentParser whose help wraps by display width; its commands' parsers are one too.

    (add_subparsers makes each command's parser of the same class as the parser it is on.)
    """

    def __init__(self, **options: Any) -> None:
        options.setdefault("formatter_class", DisplayWidthHelpFormatter)
        super().__init__(**options)


def chosen_command(argv: list[str]) -> str | None:
    """The command named among the arguments (the first that is not an option), if any."""
    rest = iter(argv)
    for argument in rest:
        if argument == "--lang":
            next(rest, None)
        elif not argument.startswith("-"):
            return argument
    return None


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The top-level parser speaking the lab's language, with its commands registered.

    When argv names a command, only that command's module is imported: each
    command pays for its own libraries alone (`selftest` must start as fast
    as the tree's own imports allow). Otherwise every command is registered,
    for the top-level help and argparse's "invalid choice".
    """
    argparse_speaks_lab_language()
    # The console script names itself; `python -m labs` is argv[0] "__main__.py".
    script = os.path.basename(sys.argv[0])
    parser = LabArgumentParser(
        prog=script if script == CONSOLE_SCRIPT else "python -m labs",
        description=_("mini-koda day 8 lab kit: self-checks, instructor and grading tools"),
    )
    language = _("en or zh_CN (default: from LAB_LANG, LANGUAGE, LC_ALL or LANG)")
    parser.add_argument("--lang", metavar="LANG", help=language)
    parser.add_argument(
        "--version",
        action="version",
        version=version_text(),
        # Python 3.11's argparse words this help before any catalog is asked.
        help=_("show program's version number and exit"),
    )
    # prog given, as argparse would work it out from the usage (no positional comes before
    # the command), so building the parser formats nothing.
    commands = parser.add_subparsers(
        dest="command", required=True, metavar="COMMAND", prog=parser.prog
    )
    named = f"labs.commands.{chosen_command(argv)}" if argv is not None else None
    # The learners' release leaves out the instructors' commands (diff, drift): naming one
    # there registers every command, so argparse's "invalid choice" lists what there is.
    available = [name for name in COMMAND_MODULES if importlib.util.find_spec(name) is not None]
    for name in [named] if named in available else available:
        importlib.import_module(name).register(commands)
    # --lang after the command too (`labs hint --lang zh_CN`). SUPPRESS: when it is not given
    # there, the command's parser leaves alone the value given before the command.
    for command in commands.choices.values():
        command.add_argument("--lang", metavar="LANG", default=argparse.SUPPRESS, help=language)
    return parser


def _language_flag(argv: list[str]) -> str | None:
    """The value of --lang LANG or --lang=LANG among the arguments, before or after the command."""
    for position, argument in enumerate(argv):
        if argument == "--lang" and position + 1 < len(argv):
            return argv[position + 1]
        if argument.startswith("--lang="):
            return argument.partition("=")[2]
    return None


def main(argv: list[str] | None = None) -> int:
    """Parse the arguments and run the chosen command; return its exit code."""
    # The language is set before the parser is built, so --help speaks it too.
    argv = sys.argv[1:] if argv is None else argv
    wanted = _language_flag(argv)
    if wanted:
        try:
            i18n.use(i18n.choose(wanted))
        except ValueError as error:
            print(_("error: --lang: {error}").format(error=error), file=sys.stderr)
            return 2
    args = build_parser(argv).parse_args(argv)
    try:
        code: int = args.func(args)
    except KeyboardInterrupt:
        print(_("interrupted"), file=sys.stderr)
        return 130
    except BrokenPipeError:  # piped into `head`: stop printing quietly
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    return code
