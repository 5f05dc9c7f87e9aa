"""python -m labs doctor: what this machine has for the lab, and what to fix."""

from __future__ import annotations

import argparse
import os

from labs.doctor import Finding
from labs.doctor.database import database_findings
from labs.doctor.environment import environment_findings
from labs.term.i18n import N_, _

# The verdicts as printed, padded to one width in each language.
WORDS = {"ok": N_("ok"), "fix": N_("fix"), "warn": N_("warn"), "info": N_("info")}


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add the doctor command."""
    parser = commands.add_parser(
        "doctor",
        help=_("check this machine for the lab and say what to fix"),
        description=_(
            "Check what the lab's commands need, one line each: the type stubs mypy needs, the "
            "grading install and its pinned versions, DATABASE_URL and the role's privileges "
            "for grading, the server's auth method, roles and schemas interrupted grading runs "
            "left, the PostgreSQL server binaries, Chromium for the pictures, and what the "
            "sandbox can use (bwrap, cgroups). Exits 1 when something needed is missing."
        ),
    )
    parser.add_argument(
        "--database-url",
        default=os.environ.get("DATABASE_URL"),
        help=_("Postgres URL (default: $DATABASE_URL)"),
    )
    parser.add_argument(
        "--clean",
        action="store_true",
        help=_("remove the roles and schemas interrupted grading runs left on that database"),
    )
    parser.set_defaults(func=run)


def line(finding: Finding) -> str:
    """One finding as printed: its verdict, then what it says."""
    words = {key: _(word) for key, word in WORDS.items()}
    width = max(len(word) for word in words.values())
    return f"{words[finding.verdict]:<{width}}  {finding.text}"


def run(args: argparse.Namespace) -> int:
    """Print every finding; 1 when one says to fix something, else 0."""
    findings = environment_findings() + database_findings(args.database_url, clean=args.clean)
    for finding in findings:
        print(line(finding), flush=True)
    return 1 if any(f.needs_fixing for f in findings) else 0
