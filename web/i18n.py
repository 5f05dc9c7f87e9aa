"""The dashboard's language: the browser's Accept-Language, or the one the learner picked.

The words are the lab kit's own (labs.term.i18n and its catalogs in
labs/locale), so the terminal and the dashboard say the same thing in the same
words: each request speaks its page's language (labs.term.i18n.speak, for that
request's context alone) from its first line to its last, and templates call
the same gettext, with {name} placeholders filled from the values given.

Most text is worded where a page is being made, with _(). Text kept and shown
later (a journal's detail, a notice, an error written by a thread) is kept as
a Sentence: its English msgid and its values, worded by each page that shows
it. Words the dashboard did not write (an exception's message, a program's
output) go into a sentence as Verbatim: never translated, shown as code.
"""

from __future__ import annotations

from urllib.parse import parse_qs, urlencode, urlsplit

from flask import Flask, g, has_request_context, request
from jinja2.nodes import EvalContext
from jinja2.utils import pass_eval_context
from markupsafe import Markup, escape
from werkzeug.wrappers import Response

from labs.term import i18n
from labs.term.i18n import ENGLISH, LANGUAGES, Message, normalize

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


def speak_the_pages_language() -> None:
    """From now to the request's end, everything said in this request's context is in its
    page's language: the kit's texts too (the review's, say). Once per request, at its start,
    or at the first word said when the request context was made without one (a test's)."""
    if "lab_language" not in g:
        g.lab_language = i18n.speak(select_language())


def page_language() -> str:
    """The language the current page is shown in (en outside a request)."""
    if not has_request_context():
        return ENGLISH
    speak_the_pages_language()
    return i18n.current()


def words(message: str) -> str:
    """A msgid in the page's language; outside a request (a thread's), as written."""
    if not has_request_context():
        return message
    speak_the_pages_language()
    return i18n._(message)


def _(message: str, **values: object) -> str:
    """A message in the page's language, its {name} placeholders filled from values."""
    said = words(message)
    return said.format(**values) if values else said


@pass_eval_context
def template_gettext(context: EvalContext, message: str, **values: object) -> str:
    """_() in a template: where the template escapes, the translation is trusted as HTML (it
    may hold <code>), and each value is escaped unless it is Markup already, as Jinja's own
    gettext does."""
    said = words(message)
    if context.autoescape:
        return Markup(said).format(**values) if values else Markup(said)
    return said.format(**values) if values else said


@pass_eval_context
def template_ngettext(
    context: EvalContext, singular: str, plural: str, count: int, **values: object
) -> str:
    """ngettext() in a template, its {count} and other placeholders filled as _() fills them."""
    if has_request_context():
        speak_the_pages_language()
        said = i18n.ngettext(singular, plural, count)
    else:
        said = singular if count == 1 else plural
    if context.autoescape:
        return Markup(said).format(count=count, **values)
    return said.format(count=count, **values)


def translated(text: str) -> str:
    """A msgid kept as data (a check's title, an error's name) in the page's language, when the
    catalog has it; anything else as it is."""
    return words(text) if text else text


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

    def __html__(self) -> Markup:
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

    def __html__(self) -> Markup:
        """The text in a template, escaped."""
        return escape(str(self))

    def __repr__(self) -> str:
        """How a test or a debugger shows it."""
        return f"Localized({self.texts!r})"


class Sentence(Message):
    """A Message (labs.term.i18n) worded in the page's language, that a template shows as HTML:
    its words escaped, a Verbatim value shown as code, a Sentence value as its own HTML."""

    def __str__(self) -> str:
        """The sentence as plain text in the page's language (as written outside a request)."""
        if not self.message:
            return ""
        return _(self.message, **{name: str(value) for name, value in self.values.items()})

    def __html__(self) -> Markup:
        """The sentence in a template: escaped, its Verbatim values shown as code."""
        if not self.message:
            return Markup()
        said = escape(words(self.message))
        # Markup's format escapes each plain value and keeps the HTML of Verbatim and Sentence
        # (each gives Markup: a plain str from __html__ would be escaped a second time).
        return said.format(**self.values) if self.values else said


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
    """Speak each request's language, give templates the kit's gettext, and remember a language
    picked with ?lang=."""
    app.jinja_env.add_extension("jinja2.ext.i18n")
    app.jinja_env.install_gettext_callables(  # type: ignore[attr-defined]
        gettext=template_gettext, ngettext=template_ngettext, newstyle=False
    )
    app.add_template_filter(translated, "translated")

    # Every word of a request in its page's language, in that request's context alone.
    app.before_request(speak_the_pages_language)

    @app.teardown_request
    def stop_speaking_it(_error: BaseException | None) -> None:
        """Once the page is made, the thread speaks its own language again (the next request of
        a server thread, or a test, must not inherit this page's)."""
        chosen = g.pop("lab_language", None)
        if chosen is not None:
            i18n.stop_speaking(chosen)

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
