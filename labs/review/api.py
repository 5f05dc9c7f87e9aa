"""What a program outside this package uses of it: the day's review questions, its checklist,
and their texts, as the dashboard's Review page shows them.

    questions    the questions, the learner's saved answers and marks
    checklist    the checklist's items, verified against a tree
    texts        the texts of both, in the language in use
"""

from __future__ import annotations

from . import checklist, questions, texts

__all__ = ["checklist", "questions", "texts"]
