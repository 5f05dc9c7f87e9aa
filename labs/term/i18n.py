"""The learner's language: English as written, Simplified Chinese from a gettext catalog.

Every sentence a learner reads is written in English in the code and looked up
in `labs/locale/<catalog>/LC_MESSAGES/lab.mo` when another language is chosen.
The choice comes from `--lang`, then `LAB_LANG`, then the usual locale
variables (`LANGUAGE`, `LC_ALL`, `LC_MESSAGES`, `LANG`); the dashboard uses the
browser's Accept-Language instead (see web/i18n.py).

Lines that programs read (the closing `N passed, N failed`, results.json) stay
in English whatever the language: graders and CI parse them.

The language is the process's: use() sets it for every thread. One thread
(or task) may look its messages up elsewhere with use_translations(), which
holds for its own context alone (a contextvars.ContextVar): the dashboard's
check run words its results in every language at once while the rest of the
dashboard speaks its own.
"""

from __future__ import annotations

import contextvars
import gettext
import os
from collections.abc import Mapping
from pathlib import Path

LOCALE_DIR = Path(__file__).resolve().parents[1] / "locale"
DOMAIN = "lab"
ENGLISH = "en"
CHINESE = "zh_CN"
LANGUAGES = (ENGLISH, CHINESE)
# Each language's catalog folder in labs/locale, named as Babel names the locale (zh_CN is
# Simplified Chinese, zh_Hans_CN in full), so the dashboard's Flask-Babel finds it too.
CATALOGS = {CHINESE: "zh_Hans_CN"}

# The variables that name a locale, most specific first, as gettext reads them.
LOCALE_VARIABLES = ("LAB_LANG", "LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")


def normalize(name: str) -> str | None:
    """Map a locale name (zh_CN.UTF-8, zh-Hans, en_US, C) to a language the lab has, or None."""
    base = name.strip().split(".")[0].split("@")[0].replace("-", "_").lower()
    if not base or base in ("c", "posix"):
        return None
    if base == "zh" or base.startswith(("zh_cn", "zh_hans", "zh_sg")):
        return CHINESE
    if base == "en" or base.startswith("en_"):
        return ENGLISH
    return None


def choose(explicit: str | None = None, environ: Mapping[str, str] = os.environ) -> str:
    """The language to speak: --lang if given, else the first locale variable the lab knows."""
    if explicit:
        chosen = normalize(explicit)
        if chosen is None:
            raise ValueError(f"unknown language {explicit!r}: choose one of {', '.join(LANGUAGES)}")
        return chosen
    for variable in LOCALE_VARIABLES:
        # LANGUAGE may list several, separated by colons: the first one the lab has wins.
        for name in environ.get(variable, "").split(":"):
            chosen = normalize(name)
            if chosen is not None:
                return chosen
    return ENGLISH


def translation(language: str) -> gettext.NullTranslations:
    """The catalog for a language; English (the source text) needs none."""
    if language == ENGLISH:
        return gettext.NullTranslations()
    return gettext.translation(
        DOMAIN, LOCALE_DIR, [CATALOGS.get(language, language)], fallback=True
    )


_process_translations: gettext.NullTranslations = translation(choose())
_active_language: str = choose()
# Translations chosen for one context (a thread, or a context it runs code in); None: the
# process's. A new thread starts with none chosen, whatever the thread that started it chose.
_context_translations: contextvars.ContextVar[gettext.NullTranslations | None] = (
    contextvars.ContextVar("translations", default=None)
)


def use(language: str) -> None:
    """Speak this language from now on, here and in the processes started from here.

    It is the process's language: every context that did not choose its own
    translations (use_translations) speaks it.
    """
    global _process_translations, _active_language
    _process_translations, _active_language = translation(language), language
    os.environ["LAB_LANG"] = language  # the check processes a command starts speak it too


def use_translations(translations: gettext.NullTranslations) -> None:
    """Look every message up in translations from now on, in the current context only.

    The rest of the process (other threads, other contexts) keeps the process's
    language. The dashboard's check run calls it in a context of its own
    (contextvars.copy_context().run) to word each message in every language at
    once (web/checkruns/phrases.py).
    """
    _context_translations.set(translations)


def _active() -> gettext.NullTranslations:
    """The translations of the current context, else the process's."""
    chosen = _context_translations.get()
    return _process_translations if chosen is None else chosen


def current() -> str:
    """The language in use."""
    return _active_language


def _(message: str) -> str:
    """Translate one message into the language in use."""
    return _active().gettext(message)


def N_(message: str) -> str:
    """Mark a message for translation where it is defined; _() translates it where it is shown."""
    return message


def ngettext(singular: str, plural: str, count: int) -> str:
    """Translate a message whose wording depends on a count."""
    return _active().ngettext(singular, plural, count)
