"""The dashboard's language: the browser's Accept-Language, or the one the learner picked.

The catalogs are the lab kit's own (labs/locale), so the terminal and the
dashboard say the same thing in the same words.

Most text is worded where a page is being made, with _(). Text kept and shown
later (a journal's detail, a notice, an error written by a thread) is kept as
a Sentence: its English msgid and its values, worded by each page that shows
it. Words the dashboard did not write (an exception's message, a program's
output) go into a sentence as Verbatim: never translated, shown as code.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlsplit

from flask import Flask, has_request_context, request
from flask_babel import Babel, get_locale, get_translations  # type: ignore[import-untyped]
from flask_babel import gettext as babel_gettext
from markupsafe import Markup, escape
from werkzeug.wrappers import Response

from labs.term.i18n import DOMAIN, ENGLISH, LANGUAGES, LOCALE_DIR, normalize

# The cookie that keeps a language picked with ?lang= across pages.
LANG_COOKIE = "lab_lang"


def select_language() -> str:
    """?lang= first, then the remembered pick, then the browser's preference, else English."""
    if not has_request_context():  # a thread with only the app's context: no page to speak to
        return ENGLISH
    for picked in (request.args.get("lang"), request.cookies.get(LANG_COOKIE)):
        if picked and (language := normalize(picked)) in LANGUAGES:
            return language
    for offered, _quality in request.accept_languages:
        if (language := normalize(offered)) is not None:
            return language
    return ENGLISH


def page_language() -> str:
    """The language the current page is shown in (en outside a request)."""
    return normalize(str(get_locale() or ENGLISH)) or ENGLISH


def _(message: str, **values: object) -> str:
    """A message in the page's language, its %(name)s filled from values.

    Not labs.term.i18n._: that one speaks the process's language, this one the page's
    (English outside a request, as in the demo executor's thread).
    """
    return str(babel_gettext(message, **values))


def translated(text: str) -> str:
    """A msgid kept as data (a check's title, an error's name) in the page's language, when the
    catalog has it; anything else as it is."""
    return str(get_translations().ugettext(text)) if text else text


class Verbatim:
    """Words shown as they were written, in a <code> element: never translated.

    An exception's message, a program's output, a message's content: the tree's
    or the learner's own words, in the language they were written in.
    """

    def __init__(self, text: str) -> None:
        self.text = text

    def __bool__(self) -> bool:
        """False when there is nothing to show."""
        return bool(self.text)

    def __str__(self) -> str:
        """The words as plain text."""
        return self.text

    def __html__(self) -> str:
        """The words in a template: escaped, in a <code> element."""
        return Markup("<code>%s</code>") % self.text

    def __repr__(self) -> str:
        """How a test or a debugger shows it."""
        return f"Verbatim({self.text!r})"


class Localized:
    """Text written in every language at once (a check run's words): shown in the page's
    language, escaped."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.texts = texts

    def __bool__(self) -> bool:
        """False when there is nothing to show in any language."""
        return any(self.texts.values())

    def __str__(self) -> str:
        """The text in the page's language (English where it has none)."""
        return self.texts.get(page_language()) or self.texts.get(ENGLISH, "")

    def __html__(self) -> str:
        """The text in a template, escaped."""
        return str(escape(str(self)))

    def __repr__(self) -> str:
        """How a test or a debugger shows it."""
        return f"Localized({self.texts!r})"


class Sentence:
    """A sentence kept as data and worded when a page shows it, in that page's language.

    message is the English msgid, marked with N_() where it is written so the
    catalog has it; values fill its %(name)s. A value may be a Verbatim (shown
    as code, as written) or another Sentence (worded too). Flask-Babel's
    lazy_gettext defers the wording the same way, but gives plain text: a
    template would escape the <code> of a Verbatim value instead of showing it.
    """

    def __init__(self, message: str = "", **values: object) -> None:
        self.message = message
        self.values = values

    def __bool__(self) -> bool:
        """False for the empty sentence: nothing to say."""
        return bool(self.message)

    def __str__(self) -> str:
        """The sentence as plain text in the page's language (English outside a request)."""
        if not self.message:
            return ""
        return _(self.message, **{name: str(value) for name, value in self.values.items()})

    def __html__(self) -> str:
        """The sentence in a template: escaped, its Verbatim values shown as code."""
        if not self.message:
            return ""
        words = escape(get_translations().ugettext(self.message))
        # Markup's % escapes each plain value and keeps the HTML of Verbatim and Sentence.
        return str(words % self.values) if self.values else str(words)

    def __repr__(self) -> str:
        """How a test or a debugger shows it."""
        return f"Sentence({self.message!r}, **{self.values!r})"


def language_url(language: str) -> str:
    """This page in another language: its address with every query value kept, lang set.

    The answer to a form posted without htmx names the page it came from (the
    Referer's path, when it is this dashboard's), never the POST's own address.
    """
    if request.method == "GET":
        path, values = request.path, request.args.to_dict(flat=False)
    else:
        referrer = urlsplit(request.referrer or "")
        same_site = not referrer.netloc or referrer.netloc == request.host
        path = referrer.path if same_site and referrer.path else "/"
        values = parse_qs(referrer.query) if same_site else {}
    values["lang"] = [language]
    return f"{path}?{urlencode(values, doseq=True)}"


def register_i18n(app: Flask) -> None:
    """Install gettext in the templates and remember a language picked with ?lang=."""
    Babel(
        app,
        locale_selector=select_language,
        default_domain=DOMAIN,
        default_translation_directories=str(LOCALE_DIR),
    )

    app.add_template_filter(translated, "translated")

    @app.context_processor
    def language() -> dict[str, object]:
        """The page's language, for <html lang>, and the language switch's addresses."""
        return {"lab_language": page_language(), "language_url": language_url}

    @app.after_request
    def remember_language(response: Response) -> Response:
        """Keep a language picked with ?lang= for the next pages."""
        picked = request.args.get("lang")
        if picked and normalize(picked) in LANGUAGES:
            response.set_cookie(LANG_COOKIE, normalize(picked) or ENGLISH, samesite="Lax")
        return response
