"""The user's language, changed on any page of a session without losing the step.

``POST /s/<id>/language`` keeps the language chosen in the session (it wins over the launch
token's ``locale``, ``?locale=`` and the browser's languages: see :mod:`checkout.i18n`) and sends the
user back, with a redirect, to the page they were on. A form, not a script: it works without
JavaScript and by keyboard alone.
"""
from __future__ import annotations

from flask import Blueprint, redirect, request, url_for
from werkzeug.wrappers import Response

from ..i18n import SUPPORTED_LANGUAGES
from ..sessions import CheckoutSession
from ..state import get_state
from .context import session_route

# Each language in its own words: a user who cannot read the page can still find theirs.
LANGUAGE_NAMES = {"en": "English", "fr": "Français", "sw": "Kiswahili", "pt": "Português"}


def back_to(session: CheckoutSession, sent: str | None) -> str:
    """The page to go back to: one of this session's own pages, else the session's current one."""
    home = url_for("checkout.flow", session_id=session.id)
    if sent and sent.startswith(home) and "//" not in sent and "\\" not in sent \
            and all(ch.isprintable() for ch in sent):
        return sent
    return home


@session_route
def choose_language(session: CheckoutSession) -> Response:
    """Keep the language the user chose for this session, then back to their page."""
    chosen = request.form.get("language")
    if chosen in SUPPORTED_LANGUAGES:
        def change(fresh: CheckoutSession) -> None:
            fresh.language = chosen

        session = get_state().sessions.update(session.id, change)
    return redirect(back_to(session, request.form.get("next")), code=303)


def init(bp: Blueprint) -> None:
    bp.add_url_rule("/s/<session_id>/language", "language", choose_language, methods=["POST"])
    bp.context_processor(lambda: {"language_names": LANGUAGE_NAMES})
