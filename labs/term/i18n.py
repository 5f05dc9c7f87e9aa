"""The learner's language: English as written, Simplified Chinese from a gettext catalog.

Every sentence a learner reads is written in English in the code and looked up
in `labs/locale/<catalog>/LC_MESSAGES/lab.mo` when another language is chosen:
the terminal's, the dashboard's and the review's texts alike, with `{name}`
placeholders filled by str.format. The choice comes from `--lang`, then
`LAB_LANG`, then the usual locale variables (`LANGUAGE`, `LC_ALL`,
`LC_MESSAGES`, `LANG`); the dashboard uses the browser's Accept-Language
instead (see web/i18n.py).

Lines that programs read (the closing `N passed, N failed`, results.json) stay
in English whatever the language: graders and CI parse them.

The language is the process's: use() sets it for every thread. One context (a
thread, a task, a page being made) may speak another with speak(), which holds
for that context alone (a contextvars.ContextVar) until stop_speaking(): each
dashboard page speaks its reader's language, and the dashboard's check run
words its results in every language at once (use_translations), while the
rest of the process speaks its own.

A sentence kept to be shown later, perhaps in another language, is a Message:
its English msgid and its values, worded when it is shown.
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
# Each language's catalog folder in labs/locale, named as Babel (pybabel) names the locale: zh_CN
# is Simplified Chinese, zh_Hans_CN in full.
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
# The language and translations chosen for one context (a thread, a page being made); None:
# the process's. A new thread starts with none chosen, whatever the thread that started it chose.
_context_translations: contextvars.ContextVar[tuple[str, gettext.NullTranslations] | None] = (
    contextvars.ContextVar("translations", default=None)
)
Chosen = contextvars.Token[tuple[str, gettext.NullTranslations] | None]


def use(language: str) -> None:
    """Speak this language from now on, here and in the processes started from here.

    It is the process's language: every context that did not choose its own
    translations (use_translations) speaks it.
    """
    global _process_translations, _active_language
    _process_translations, _active_language = translation(language), language
    os.environ["LAB_LANG"] = language  # the check processes a command starts speak it too


def use_translations(translations: gettext.NullTranslations, language: str = ENGLISH) -> Chosen:
    """Look every message up in translations from now on, in the current context only.

    The rest of the process (other threads, other contexts) keeps the process's
    language. The dashboard's check run calls it in a context of its own
    (contextvars.copy_context().run) to word each message in every language at
    once (web/checkruns/phrases.py); language is what current() says meanwhile.
    """
    return _context_translations.set((language, translations))


def speak(language: str) -> Chosen:
    """Speak language in the current context only (a page being made), until stop_speaking."""
    return use_translations(translation(language), language)


def stop_speaking(chosen: Chosen) -> None:
    """The current context speaks what it spoke before speak() (or use_translations) again."""
    try:
        _context_translations.reset(chosen)
    except ValueError:  # chosen in another context: this one speaks the process's language
        _context_translations.set(None)


def _active() -> gettext.NullTranslations:
    """The translations of the current context, else the process's."""
    chosen = _context_translations.get()
    return _process_translations if chosen is None else chosen[1]


def current() -> str:
    """The language in use here: the current context's, else the process's."""
    chosen = _context_translations.get()
    return _active_language if chosen is None else chosen[0]


def _(message: str) -> str:
    """Translate one message into the language in use."""
    return _active().gettext(message)


def N_(message: str) -> str:
    """Mark a message for translation where it is defined; _() translates it where it is shown."""
    return message


def ngettext(singular: str, plural: str, count: int) -> str:
    """Translate a message whose wording depends on a count."""
    return _active().ngettext(singular, plural, count)


def pgettext(context: str, message: str) -> str:
    """Translate a message that context tells apart from the same words elsewhere."""
    return _active().pgettext(context, message)


class Message:
    """A sentence kept as data and worded when it is shown, in the language in use then.

    message is the English msgid, marked with N_() where it is written so the
    catalog has it; values fill its {name} placeholders, each worded too when
    it is a Message itself.
    """

    def __init__(self, message: str = "", **values: object) -> None:
        self.message = message
        self.values = values

    def __bool__(self) -> bool:
        """False for the empty message: nothing to say."""
        return bool(self.message)

    def __str__(self) -> str:
        """The sentence as plain text in the language in use."""
        if not self.message:
            return ""
        words = _(self.message)
        if not self.values:
            return words
        return words.format(**{name: str(value) for name, value in self.values.items()})

    def __repr__(self) -> str:
        """How a test or a debugger shows it."""
        return f"{type(self).__name__}({self.message!r}, **{self.values!r})"
