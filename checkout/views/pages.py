"""Error pages in the checkout's chrome: never a traceback, never a blank iframe.

A full page for normal requests, with the real status code. For htmx requests, a small error box
with a retry button and status 200, because htmx 2 swaps nothing on 4xx/5xx and the user would be
left looking at a page that silently did nothing.

"Too many requests" (our limits, :mod:`checkout.ratelimits`, or the upstream's 429) is the one
error answered with its real status to htmx too: 429 with ``Retry-After``, which ``base.html``'s
htmx configuration swaps like a 2xx. The page says in words when to try again and offers a link,
never an automatic retry.
"""
from __future__ import annotations

import logging
import math
from urllib.parse import urlsplit

from flask import Response, current_app, g, jsonify, request, url_for
from flask_babel import gettext, ngettext
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.exceptions import HTTPException

from .. import i18n
from ..errors import SessionConflict, UpstreamCircuitOpen, UpstreamError, UpstreamRateLimited
from ..htmx import add_vary, from_htmx, is_boosted, is_htmx, render
from ..inputs import is_session_id
from ..journey.creation import short_id
from ..logs import reraised
from ..ratelimits import RateLimited
from ..state import get_state
from ..store import availability_of, database_failure
from ..upstream.transport import RATE_LIMIT_WAIT
from .blueprint import bp
from .context import (
    CSRFError,
    OrderViewNotFound,
    ReceiptNotFound,
    SessionNotFound,
    UnreadableInput,
    live_session,
)

log = logging.getLogger(__name__)


def _same_origin(url: str | None) -> str | None:
    """``url`` if it is on our own origin (the page htmx was on), else None."""
    if not url:
        return None
    parts, ours = urlsplit(url), urlsplit(request.host_url)
    if (parts.scheme, parts.netloc) != (ours.scheme, ours.netloc):
        return None
    return url


def _session_id_in_path() -> str | None:
    """The session id of a ``{prefix}/s/<id>/...`` address, when it looks like one."""
    prefix = current_app.config["CHECKOUT_URL_PREFIX"].rstrip("/") + "/s/"
    if not request.path.startswith(prefix):
        return None
    candidate = request.path[len(prefix):].split("/", 1)[0]
    return candidate if is_session_id(candidate) else None


def default_retry_url() -> str | None:
    """Where "Try again" goes: the page the user was on, else the session's page."""
    if g.get("checkout_order_view") is not None:
        # The order view (checkout.capabilities) knows the session but must never name it: try
        # the order view's own address again.
        return request.full_path.rstrip("?") if request.method == "GET" else None
    if from_htmx():
        current = _same_origin(request.headers.get("HX-Current-URL"))
        if current:
            return current
    session = g.get("checkout_session")
    if session is not None:
        return url_for("checkout.flow", session_id=session.id)
    in_path = _session_id_in_path()
    if in_path is not None:
        # No view ran (e.g. a POST-only address opened by a reload or a bookmark): the way on is
        # the session's own page, which shows the order where it stands.
        return url_for("checkout.flow", session_id=in_path)
    if request.method == "GET" and request.endpoint not in (None, "checkout.not_found"):
        return request.full_path.rstrip("?")
    return None


def render_error(status: int, message: str, *, title: str | None = None,
                 retry_url: str | None = None, use_default_retry: bool = True) -> Response:
    """The friendly error page (or, for htmx, the error box) with ``message``."""
    if retry_url is None and use_default_retry:
        retry_url = default_retry_url()
    context = {"error_status": status, "title": title or gettext("Something went wrong"),
               "message": message, "retry_url": retry_url}
    response = render("checkout/error.html", "checkout/_error_box.html",
                      status=200 if is_htmx() else status, **context)
    if is_boosted():
        # A boosted form's answer replaces the page (checkout.js swaps error pages in too): the
        # address stays where the user was, as for a plain form's error page, so that a reload
        # or "Try again" opens that page rather than the failure.
        response.headers["HX-Push-Url"] = "false"
    return response


@bp.errorhandler(HTTPException)
def handle_http_error(exc: HTTPException) -> Response:
    status = exc.code or 500
    if isinstance(exc, OrderViewNotFound):
        # Its holder is back from a payment page: "start again" could make a second payment.
        return render_error(404, gettext(
            "This checkout was not found or has expired. If you have paid, your payment is not "
            "lost: go back to the shop to see your order."),
            title=gettext("Checkout not found"), use_default_retry=False)
    if isinstance(exc, ReceiptNotFound):
        return render_error(404, gettext(
            "This receipt link has expired or is not valid. Your order is not affected: the "
            "shop can send you a new link."), title=gettext("Receipt not found"),
            use_default_retry=False)
    if isinstance(exc, SessionNotFound):
        return render_error(404, gettext(
            "This checkout was not found or has expired. Please go back to the shop and start "
            "again."), title=gettext("Checkout not found"), use_default_retry=False)
    if isinstance(exc, UnreadableInput):
        # Never back to the address itself (it is what cannot be read): a form of a session
        # found goes back to the session's page, where the user can type it again.
        session = g.get("checkout_session")
        back = url_for("checkout.flow", session_id=session.id) \
            if session is not None and g.get("checkout_order_view") is None else None
        return render_error(400, gettext("Your request could not be understood."),
                            title=gettext("Please try again"), retry_url=back,
                            use_default_retry=False)
    if isinstance(exc, CSRFError):
        return render_error(400, gettext(
            "We could not verify that this request came from this checkout page. Please "
            "reload the page and try again."), title=gettext("Please try again"))
    if status == 404:
        return render_error(404, gettext("There is no page at this address."),
                            title=gettext("Page not found"), use_default_retry=False)
    if status == 405:
        return render_error(405, gettext("This page cannot be used this way."),
                            title=gettext("Please try again"))
    if status < 500:
        return render_error(status, gettext("Your request could not be understood."),
                            title=gettext("Please try again"))
    return handle_server_error(exc)


def route_for_log() -> str:
    """The matched URL rule (``/checkout/s/<session_id>/pay``), never the path itself.

    The path holds the session id (a bearer secret: it opens the order) and the query string may
    hold a launch token; logs are read by more people, and kept longer, than either may be.
    """
    rule = request.url_rule
    if rule is not None:
        return rule.rule
    return request.endpoint or "(no route)"


# -- too many requests --------------------------------------------------------------------------------

QUOTE_ENDPOINT = "checkout.quote"
# Seconds, for an UpstreamRateLimited that carries no wait of its own (the client's always does).
UPSTREAM_WAIT = RATE_LIMIT_WAIT


def try_again_in(seconds: float) -> str:
    """When to try again, in words: seconds up to a minute and a half, then whole minutes."""
    wait = max(1, math.ceil(seconds))
    if wait <= 90:
        return ngettext("Try again in %(num)d second.", "Try again in %(num)d seconds.", wait)
    minutes = math.ceil(wait / 60)
    return ngettext("Try again in %(num)d minute.", "Try again in %(num)d minutes.", minutes)


def too_many_requests_text(seconds: float, *, upstream: bool) -> str:
    """What the user reads: who is busy, and when to try again."""
    if upstream:
        reason = gettext("Our payment partner is receiving too many requests right now.")
    else:
        reason = gettext("There have been too many requests from this connection in a short "
                         "time.")
    return f"{reason} {try_again_in(seconds)}"


def _wants_json() -> bool:
    accepted = request.accept_mimetypes
    return accepted.best_match(["text/html", "application/json"]) == "application/json" \
        and accepted["application/json"] > accepted["text/html"]


def _load_session_for_page() -> None:
    """Our limits refuse a request before its view has found the session: find it here, so that
    the page is in the session's language and framed by the session's parent (a primary-key
    read; an unknown or expired id is simply not used)."""
    if g.get("checkout_session") is not None:
        return
    session_id = (request.view_args or {}).get("session_id")
    session = live_session(session_id) if isinstance(session_id, str) else None
    if session is not None:
        g.checkout_session = session
        i18n.set_session_locale()


def render_too_many_requests(seconds: float, *, upstream: bool) -> Response:
    """429 with ``Retry-After``: the page (or the htmx box) that says when to try again; the
    live price's own holder for the price; JSON for a client that asks only for JSON."""
    wait = max(1, math.ceil(seconds))
    message = too_many_requests_text(wait, upstream=upstream)
    response: Response
    if _wants_json():
        response = jsonify(error="too_many_requests", retry_after=wait)
    elif request.endpoint == QUOTE_ENDPOINT:
        # In place of the price, where the user is looking (#quote-message stays the field's
        # description); never the box, whose alert role would nest in the price's live region.
        template = "checkout/journey/_quote.html"
        response = render(template, template, message=message, breakdown=None, retry=False)
    else:
        response = render_error(429, message, title=gettext("Please wait a moment"))
    response.status_code = 429
    response.headers["Retry-After"] = str(wait)
    return add_vary(response)


@bp.errorhandler(RateLimited)
def handle_rate_limited(exc: RateLimited) -> Response:
    """One of our limits refused the request (checkout.ratelimits)."""
    _load_session_for_page()
    get_state().metrics.rate_limited(exc.limit_name)
    return render_too_many_requests(exc.seconds, upstream=False)


@bp.errorhandler(UpstreamError)
def handle_upstream_error(exc: UpstreamError) -> Response:
    # repr() of our upstream errors carries no credential (see checkout.errors). A call the
    # breaker refused is no new news: its opening was logged once (checkout.upstream.breaker).
    log.log(logging.DEBUG if isinstance(exc, UpstreamCircuitOpen) else logging.WARNING,
            "upstream error on %s %s: %r", request.method, route_for_log(), exc)
    if isinstance(exc, UpstreamRateLimited):
        return render_too_many_requests(exc.retry_after or UPSTREAM_WAIT, upstream=True)
    if exc.retryable:
        message = gettext("Our payment partner is not answering right now. Please try again in "
                          "a moment.")
    else:
        message = gettext("Our payment partner could not handle this request. Please try again, "
                          "or go back to the shop.")
    return render_error(502, message, title=gettext("Please try again"))


# Seconds a page refused for a database that does not answer asks to wait (Retry-After): the
# process tries the database again each second (checkout.store.availability).
DATABASE_WAIT_HINT = 5


# A wait on the database refused or run out (OperationalError), or no pooled connection came in
# time (TimeoutError): the database, not the page, failed.
@bp.errorhandler(OperationalError)
@bp.errorhandler(PoolTimeout)
def handle_database_unavailable(exc: SQLAlchemyError) -> Response:
    """The checkout's database did not answer in the request's time, or is known not to: "try
    again in a moment" (503), nothing saved by this request. One warning line per outage (the
    first page it cost), not a traceback per page."""
    availability = availability_of(get_state().engine)
    log.log(logging.WARNING if availability.first_of_kind("page") else logging.DEBUG,
            "checkout page answered 503 on %s %s: database unavailable (%s)",
            request.method, route_for_log(), database_failure(exc))
    response = render_error(503, gettext(
        "We cannot reach our records right now. Nothing was lost: please try again in a "
        "moment."), title=gettext("Please try again"))
    response.headers["Retry-After"] = str(DATABASE_WAIT_HINT)
    return response


@bp.errorhandler(SessionConflict)
def handle_session_conflict(exc: SessionConflict) -> Response:
    """A session that kept changing under a request's save (other tabs saving at the same moment,
    again and again) or that is gone (expired and purged meanwhile): nothing of this request was
    saved. Not a fault of ours to log with a traceback, nor a 500: the session's page, checked again,
    or the page of a checkout that no longer exists."""
    session = live_session(str(exc.args[0]) if exc.args else "")
    if session is None:
        return handle_http_error(SessionNotFound())
    log.warning("session %s kept changing under %s %s: nothing saved, answered 409",
                short_id(session.id), request.method, route_for_log())
    return render_error(409, gettext("Your details changed. Check them again."),
                        title=gettext("Please try again"),
                        retry_url=url_for("checkout.flow", session_id=session.id))


@bp.errorhandler(500)
def handle_server_error(exc: BaseException) -> Response:
    original = getattr(exc, "original_exception", None) or exc
    log.error("checkout error on %s %s", request.method, route_for_log(), exc_info=original)
    return render_error(500, gettext("Something went wrong on our side. Please try again."))


@bp.errorhandler(Exception)
def handle_unexpected_error(exc: Exception) -> Response:
    """Any other exception in a checkout route: our 500 page, logged by route.

    Without this handler Flask's own ``log_exception`` would log it as "Exception on <path>",
    session id included. Where Flask would re-raise (testing, debug), re-raise it untouched.
    """
    if reraised(current_app):
        raise exc
    return handle_server_error(exc)
