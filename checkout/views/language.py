"""The user's language, changed on any page of a session without losing the step.

``POST /s/<id>/language`` keeps the language chosen in the session (it wins over the launch
token's ``locale``, ``?locale=`` and the browser's languages: see :mod:`checkout.i18n`) and sends the
user back, with a redirect, to the page they were on. A form, not a script: it works without
JavaScript and by keyboard alone.
"""
from __future__ import annotations

import re
from urllib.parse import urljoin, urlsplit

from flask import redirect, request, url_for
from werkzeug.wrappers import Response

from ..i18n import SUPPORTED_LANGUAGES
from ..ratelimits import limited
from ..sessions import CheckoutSession
from ..state import get_state
from .blueprint import bp
from .context import session_route

# Each language in its own words: a user who cannot read the page can still find theirs.
LANGUAGE_NAMES = {"en": "English", "fr": "Français", "sw": "Kiswahili", "pt": "Português"}

# A percent-encoded dot is a dot (RFC 3986 6.2.2.2; browsers resolve "%2e%2e" as ".."); an
# encoded slash or backslash has no place in a page's address.
_ENCODED_DOT = re.compile("%2e", re.IGNORECASE)
_ENCODED_SEPARATOR = re.compile("%(2f|5c)", re.IGNORECASE)
# Only for urljoin to resolve a path against: never shown, never requested.
_SOME_ORIGIN = "http://checkout.invalid"


def back_to(session: CheckoutSession, sent: str | None) -> str:
    """The page to go back to: one of this session's own pages, else the session's current one.

    ``sent`` is compared as the browser will read it: ``%2e`` is a dot, dot segments are resolved
    (``/s/<id>/../../account`` is not under ``/s/<id>/``), and a backslash is a slash to it, so
    any is refused. What is sent back is that resolved path, the one compared.
    """
    home = url_for("checkout.flow", session_id=session.id)
    if not sent or "\\" in sent or not all(ch.isprintable() for ch in sent):
        return home
    parts = urlsplit(sent)
    if parts.scheme or parts.netloc or not parts.path.startswith("/") \
            or _ENCODED_SEPARATOR.search(parts.path):
        return home
    path = urlsplit(urljoin(_SOME_ORIGIN, _ENCODED_DOT.sub(".", parts.path))).path
    if not path.startswith(home) or "//" in path:
        return home
    return f"{path}?{parts.query}" if parts.query else path


@bp.post("/s/<session_id>/language", endpoint="language")
@limited("form")
@session_route
def choose_language(session: CheckoutSession) -> Response:
    """Keep the language the user chose for this session, then back to their page."""
    chosen = request.form.get("language")
    if chosen in SUPPORTED_LANGUAGES:
        def change(fresh: CheckoutSession) -> None:
            fresh.language = chosen

        session = get_state().sessions.update(session.id, change)
    return redirect(back_to(session, request.form.get("next")), code=303)


@bp.context_processor
def language_menu() -> dict[str, dict[str, str]]:
    return {"language_names": LANGUAGE_NAMES}
