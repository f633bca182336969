"""Context of session pages: find the session, check the anti-forgery token, set the locale.

Every view under ``/s/<session_id>/...`` is wrapped in :func:`session_route`. The session is found
from the id in the path (never a cookie: browsers drop third-party cookies inside merchants'
iframes), and every POST must carry the session's anti-forgery token, either as the form field
``csrf_token`` or in the ``X-Checkout-CSRF`` header that ``base.html`` puts on every htmx request.
A cross-site form cannot know that token, and it lives nowhere but in our own pages.
"""
from __future__ import annotations

import hmac
from collections.abc import Callable
from functools import wraps
from typing import Any, TypeVar

from flask import g, has_request_context, request, url_for
from flask_babel import get_locale
from werkzeug.exceptions import BadRequest, NotFound

from .. import i18n
from ..inputs import first_unstorable, is_session_id, storable
from ..security import event_target_origin
from ..sessions import CheckoutSession
from ..state import flow_of, get_state
from .blueprint import bp

__all__ = ["session_route", "current_session", "CSRFError", "SessionNotFound", "ReceiptNotFound",
           "CSRF_FIELD", "CSRF_HEADER", "SESSION_HEADER"]

CSRF_FIELD = "csrf_token"
CSRF_HEADER = "X-Checkout-CSRF"
SESSION_HEADER = "X-Checkout-Session"
UNSAFE_METHODS = frozenset({"POST", "PUT", "PATCH", "DELETE"})

R = TypeVar("R")


class SessionNotFound(NotFound):
    """The session id is unknown or the session has expired (a friendly 404 page)."""

    description = "session-not-found"


class OrderViewNotFound(SessionNotFound):
    """An order view address (checkout.capabilities) that opens no order: its holder may have
    paid already, so the page never says to start again."""

    description = "order-view-not-found"


class ReceiptNotFound(NotFound):
    """A receipt address that opens no receipt: expired (``CHECKOUT_RECEIPT_DAYS``), altered,
    or for an order the upstream does not know."""

    description = "receipt-not-found"


class CSRFError(BadRequest):
    """A POST without the session's anti-forgery token (a friendly 400 page)."""

    description = "csrf"


def current_session() -> CheckoutSession | None:
    """The session of this request, once :func:`session_route` has found it."""
    session: CheckoutSession | None = g.get("checkout_session")
    return session


def saved(session: CheckoutSession) -> None:
    """``session`` was saved (its new version): while a request of it is served, its pages show
    it so from now on. A step's form saves what was typed and is answered with the next page in
    the same request (checkout.htmx): that page must show what was just saved, not the session
    as the request first read it (the review showed the address before the change)."""
    if not has_request_context():
        return
    shown = current_session()
    if shown is not None and shown.id == session.id and session.version > shown.version:
        g.checkout_session = session


def live_session(session_id: str) -> CheckoutSession | None:
    """The session for ``session_id`` unless it is gone or expired. An id without a session id's
    shape is not looked up."""
    session = get_state().sessions.get(session_id) if is_session_id(session_id) else None
    return None if session is None or session.expired else session


def load_session(session_id: str) -> CheckoutSession:
    """Find the session for ``session_id``, put it at ``g.checkout_session``, or 404."""
    session = live_session(session_id)
    if session is None:
        raise SessionNotFound()
    g.checkout_session = session
    # The locale may already have been chosen (e.g. by a before_request); choose again with
    # the session's own ``locale`` claim.
    i18n.set_session_locale()
    return session


def check_csrf(session: CheckoutSession) -> None:
    """Refuse a state-changing request that does not carry this session's token."""
    if request.method not in UNSAFE_METHODS:
        return
    sent = request.headers.get(CSRF_HEADER) or request.form.get(CSRF_FIELD) or ""
    if not hmac.compare_digest(sent.encode(), session.csrf_token.encode()):
        raise CSRFError()


class UnreadableInput(BadRequest):
    """A path, query or form value no database can store (a NUL, a lone surrogate, a control
    character): refused before it reaches anything (:mod:`checkout.inputs`)."""

    description = "unreadable-input"


def check_request_text() -> None:
    """Refuse a request whose path or query string carries text no database can store."""
    if not storable(request.path) or first_unstorable(request.args.items(multi=True)):
        raise UnreadableInput()


def check_form_text() -> None:
    """Refuse a form with a field no database can store (read after the body's size limit and
    the anti-forgery check)."""
    if request.method in UNSAFE_METHODS and first_unstorable(request.form.items(multi=True)):
        raise UnreadableInput()


def session_route(view: Callable[..., R]) -> Callable[..., R]:
    """Decorate a view of ``/s/<session_id>/...``: it is called as ``view(session, **kwargs)``.

    ``session_id`` is taken out of the URL arguments and replaced by the loaded
    :class:`~checkout.sessions.CheckoutSession` (also at ``g.checkout_session``). Unknown or
    expired sessions get the friendly 404 page; a POST without the anti-forgery token gets the
    friendly 400 page. Neither reaches the view.
    """

    @wraps(view)
    def wrapper(session_id: str, **kwargs: Any) -> R:
        session = load_session(session_id)
        check_csrf(session)
        check_form_text()
        return view(session, **kwargs)

    return wrapper


@bp.context_processor
def template_context() -> dict[str, Any]:
    """What ``base.html`` and every page need: the session, its tokens, the event target."""
    session = current_session()

    def step_position(step: str) -> tuple[int, Any] | None:
        """(number, step) of ``step`` among those this session goes through."""
        if session is None:
            return None
        return flow_of(session).journey.position(session, step)

    def step_back(step: str) -> str | None:
        """The URL of the step before ``step`` in this session's journey ("Back")."""
        if session is None:
            return None
        previous = flow_of(session).journey.previous(session, step)
        return url_for("checkout.step", session_id=session.id, step=previous) \
            if previous else None

    order_view = g.get("checkout_order_view")
    if order_view is not None:
        # The order view (checkout.capabilities): the page is built from the session, but
        # nothing of the session itself (its id, its token, its forms) may reach it.
        return {"checkout_session": None, "order_view": order_view, "csrf_token": None,
                "csrf_field": CSRF_FIELD, "parent_event_origin": None,
                "checkout_locale": get_locale()}
    return {
        "checkout_session": session,
        "order_view": None,
        "step_position": step_position,
        "step_back": step_back,
        "csrf_token": session.csrf_token if session is not None else None,
        "csrf_field": CSRF_FIELD,
        "parent_event_origin": event_target_origin(session),
        "checkout_locale": get_locale(),
    }


@bp.before_request
def start_request() -> None:
    """Begin every checkout request with no session and no locale chosen yet.

    ``g`` lives in the app context, which a request reuses when one is already pushed (as test
    tools do); a session or locale left from an earlier request must never leak into this one.
    """
    g.pop("checkout_session", None)
    g.pop("checkout_order_view", None)
    g.pop("checkout_page_locale", None)
    i18n.refresh()
    i18n.use_checkout_domain()
    check_request_text()

