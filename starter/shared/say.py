"""What this service prints for a person at a terminal, in that person's language.

Only the lines the seed script, the worker and `python -m <tree>` print for a
reader go through _(). The lab kit's catalog (labs/locale) has them in
Simplified Chinese and picks the language as the kit does (--lang, LAB_LANG,
LANG, ...). A service deployed without the lab kit prints its English.

The errors the service raises and its HTTP answers stay in English: clients,
logs and the self-checks read them, and they match the code you are reading.
"""

from __future__ import annotations


def _(message: str) -> str:
    """The message in the reader's language, or as written when the lab kit is absent."""
    try:
        from labs.term.i18n import _ as translate
    except ImportError:  # deployed on its own, without the lab kit beside it
        return message
    return translate(message)
