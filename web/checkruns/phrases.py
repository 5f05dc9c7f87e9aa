"""Sentences written in every language at once, for results a page shows later in its own.

The checks word their failures with the kit's `_()` and `str.format` as they
happen, in one language. The dashboard shows one run to pages in English and
in Chinese alike, so the thread that drives its checks words each sentence in
every language of the lab at the moment it is written (EveryLanguage, chosen
for that thread's context alone with labs.term.i18n.use_translations): `_()`
there returns a Phrase, an English str that also holds its wording in every
other language, and whose
`format` and `+` keep all of them. A value that is not a Phrase (a run id,
what the tree said) goes into every language as it is.
"""

from __future__ import annotations

import gettext

from labs.term.i18n import ENGLISH, LANGUAGES, translation


def worded(value: object, language: str) -> object:
    """A value as a sentence in language shows it: a Phrase worded so, anything else as is."""
    return value.texts[language] if isinstance(value, Phrase) else value


class Phrase(str):
    """English text (its str value) that also knows its wording in the lab's other languages."""

    texts: dict[str, str]

    def __new__(cls, texts: dict[str, str]) -> Phrase:
        """A phrase from its wording per language; English is its value as a str."""
        phrase = super().__new__(cls, texts[ENGLISH])
        phrase.texts = texts
        return phrase

    def format(self, *args: object, **kwargs: object) -> Phrase:
        """str.format in every language, each Phrase argument worded in that language."""
        return Phrase(
            {
                language: text.format(
                    *(worded(a, language) for a in args),
                    **{name: worded(v, language) for name, v in kwargs.items()},
                )
                for language, text in self.texts.items()
            }
        )

    def __add__(self, other: str) -> Phrase:
        """Joined in every language."""
        return Phrase({lang: text + str(worded(other, lang)) for lang, text in self.texts.items()})

    def __radd__(self, other: str) -> Phrase:
        """Joined in every language, other first."""
        return Phrase({lang: str(worded(other, lang)) + text for lang, text in self.texts.items()})


def in_every_language(value: object) -> dict[str, str]:
    """A text's wording per language: a Phrase's own, or the same plain text in each."""
    if isinstance(value, Phrase):
        return dict(value.texts)
    return dict.fromkeys(LANGUAGES, "" if value is None else str(value))


class EveryLanguage(gettext.NullTranslations):
    """Translations whose every lookup is a Phrase worded in all the lab's languages."""

    def __init__(self) -> None:
        super().__init__()
        self._catalogs = {language: translation(language) for language in LANGUAGES}

    def gettext(self, message: str) -> str:
        """The message in every language."""
        return Phrase({lang: found.gettext(message) for lang, found in self._catalogs.items()})

    def ngettext(self, singular: str, plural: str, n: int) -> str:
        """The message for n in every language."""
        return Phrase(
            {lang: found.ngettext(singular, plural, n) for lang, found in self._catalogs.items()}
        )

    def pgettext(self, context: str, message: str) -> str:
        """The message, told apart by its context, in every language."""
        return Phrase(
            {lang: found.pgettext(context, message) for lang, found in self._catalogs.items()}
        )
