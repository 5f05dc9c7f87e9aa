"""The languages the lab speaks, for tests that take the language as a parameter.

A test parametrized over LANGUAGES looks up what it expects through the lab's own
catalog with `worded`, so a third language is one more parameter, not one more file.
`worded` refuses a sentence a translated language's catalog lacks: gettext would
quietly hand back the English, and a page that fell back to English would pass.
"""

from __future__ import annotations

from labs.term import i18n
from tests.support.english import english_runs

LANGUAGES = i18n.LANGUAGES
# The languages worded from a catalog: in these no English sentence may be left.
TRANSLATED = tuple(language for language in LANGUAGES if language != i18n.ENGLISH)


def worded(language: str, msgid: str) -> str:
    """The sentence msgid as the lab words it in language, placeholders still in it."""
    text = i18n.translation(language).gettext(msgid)
    assert language == i18n.ENGLISH or text != msgid, f"the {language} catalog lacks {msgid!r}"
    return text


def page_tag(language: str) -> str:
    """The language as a page's <html lang> and hreflang name it: zh_CN is zh-CN."""
    return language.replace("_", "-")


def english_left(language: str, text: str) -> list[str]:
    """The runs of English words a reader of language would not expect: none, in English."""
    return [] if language == i18n.ENGLISH else english_runs(text)
