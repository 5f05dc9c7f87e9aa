"""What a program outside this package uses of it: the kit's command line, for a program
that has options of its own (the dashboard's `python -m web`).

    LabArgumentParser              argparse in the learner's language, with --lang
    argparse_speaks_lab_language   argparse's own words (usage:, options:) translated
"""

from __future__ import annotations

from .cli import LabArgumentParser, argparse_speaks_lab_language

__all__ = ["LabArgumentParser", "argparse_speaks_lab_language"]
