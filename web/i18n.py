"""The dashboard's language: the browser's Accept-Language, or the one the learner picked.

The catalogs are the lab kit's own (labs/locale), so the terminal and the
dashboard say the same thing in the same words.
"""

from __future__ import annotations

from flask import Flask, request
from flask_babel import Babel, get_locale, get_translations  # type: ignore[import-untyped]
from flask_babel import gettext as babel_gettext
from werkzeug.wrappers import Response

from labs.i18n import DOMAIN, ENGLISH, LANGUAGES, LOCALE_DIR, normalize

# The cookie that keeps a language picked with ?lang= across pages.
LANG_COOKIE = "lab_lang"


def select_language() -> str:
    """?lang= first, then the remembered pick, then the browser's preference, else English."""
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

    Not labs.i18n._: that one speaks the process's language, this one the page's
    (English outside a request, as in the demo executor's thread).
    """
    return str(babel_gettext(message, **values))


def translated(text: str) -> str:
    """Text kept as data (a journal detail) in the page's language, when the catalog has it."""
    return str(get_translations().ugettext(text)) if text else text


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
    def language() -> dict[str, str]:
        """The page's language, for <html lang> and the language switch."""
        return {"lab_language": page_language()}

    @app.after_request
    def remember_language(response: Response) -> Response:
        """Keep a language picked with ?lang= for the next pages."""
        picked = request.args.get("lang")
        if picked and normalize(picked) in LANGUAGES:
            response.set_cookie(LANG_COOKIE, normalize(picked) or ENGLISH, samesite="Lax")
        return response
