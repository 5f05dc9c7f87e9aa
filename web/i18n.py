"""The dashboard's language: the browser's Accept-Language, or the one the learner picked.

The catalogs are the lab kit's own (labs/locale), so the terminal and the
dashboard say the same thing in the same words.
"""

from __future__ import annotations

from flask import Flask, request
from flask_babel import Babel, get_locale  # type: ignore[import-untyped]
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


def register_i18n(app: Flask) -> None:
    """Install gettext in the templates and remember a language picked with ?lang=."""
    Babel(
        app,
        locale_selector=select_language,
        default_domain=DOMAIN,
        default_translation_directories=str(LOCALE_DIR),
    )

    @app.context_processor
    def language() -> dict[str, str]:
        """The page's language, for <html lang> and the language switch."""
        return {"lab_language": str(get_locale() or ENGLISH)}

    @app.after_request
    def remember_language(response: Response) -> Response:
        """Keep a language picked with ?lang= for the next pages."""
        picked = request.args.get("lang")
        if picked and normalize(picked) in LANGUAGES:
            response.set_cookie(LANG_COOKIE, normalize(picked) or ENGLISH, samesite="Lax")
        return response
