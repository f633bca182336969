"""The order's status: a page that updates itself until the order settles, and the return page.

``GET /s/<id>/status`` shows the order's status and polls ``/status/live`` every 3 seconds (htmx)
until a settled state; without JavaScript the page reloads itself (every 10 seconds) until then.
Parent events are recorded and rendered only when the page is framed (``Sec-Fetch-Dest: iframe``,
or for htmx checkout.js's ``X-Checkout-Framed``: see :func:`checkout.views.tracking.framing`); the same
session opened top-level elsewhere sends none.

``GET /s/<id>/return`` is where a payment provider sends the user back after a
``redirect`` payment. That page may be the top-level window (the user left the iframe to pay), so it
stands on its own, links back to the shop's ``returnUrl``, and sends no parent events: there is no
parent to receive them. The shop gets ``completed``/``failed`` when the checkout is framed again
(the same launch token reopens the same session at its status).
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, Generic, TypeVar

from flask import current_app, g, redirect, request, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from ..addresses import explorer_tx_url
from ..capabilities import OrderView, session_id_of
from ..errors import UpstreamUnavailable
from ..htmx import htmx_redirect, is_htmx, render
from ..public_address import external_url
from ..qr import qr_svg
from ..ratelimits import limited
from ..sessions import CheckoutSession
from ..state import flow_of
from ..urls import safe_external_url
from . import tracking
from .blueprint import bp
from .context import OrderViewNotFound, SessionNotFound, load_session, session_route
from .journey import status_context as flow_status_context

OrderT = TypeVar("OrderT")

POLL = "every 3s"
SLOW_POLL = "every 30s"      # an unpaid order that expired may still be paid late


@dataclass(frozen=True)
class OrderRead(Generic[OrderT]):
    """An order's page's read of it: ``order`` as the upstream gives it now, stored (``current``:
    its status so stored), or, while it does not answer, as last read (``known_at`` says when)."""

    order: OrderT
    current: tracking.OrderStatus | None
    known_at: datetime | None = None


def read_order(session: CheckoutSession, fetch: Callable[[str], OrderT],
               parse: Callable[[Any], OrderT]) -> OrderRead[OrderT] | None:
    """The session's order from the upstream, stored as its last known state (every read is:
    the page shows it again, saying when, once the upstream stops answering), or as last read
    while it does not answer; None when only its stored status is known (the caller then shows
    the status page, which says so). Raises the upstream's error when nothing of the order is
    kept, and a 429 (whose page says when to ask again)."""
    assert session.order_id is not None
    seen = tracking.stored_order(session)
    began = datetime.now(UTC)
    try:
        order = fetch(session.order_id)
    except UpstreamUnavailable:
        kept = tracking.last_read(seen)
        if kept is None:
            if seen is not None:
                return None
            raise
        return OrderRead(parse(kept[0]), None, kept[1])
    raw = getattr(order, "raw", None)
    current = tracking.status_after_read(session, raw, seen, began) if raw is not None else None
    return OrderRead(order, current)


def resume_context(session: CheckoutSession, provider_resume_url: str | None = None,
                   *, awaiting_payment: bool = True) -> dict[str, Any]:
    """Our resume link (with its QR code) and, while a payment page is still to be used, the
    payment provider's own resume link (``resumeUrl``)."""
    # None when no trusted public address is known: no resume link then (checkout.public_address).
    url = external_url("checkout.flow", session_id=session.id)
    order = session.order
    provider_url = None
    if awaiting_payment and order.get("transfer_type") == "redirect":
        # The upstream's link becomes a target="_top" link: only a safe one (checkout.urls).
        provider_url = safe_external_url(provider_resume_url or order.get("resume_url"),
                                         "resume")
    return {"url": url, "qr_svg": qr_svg(url) if url else None, "provider_url": provider_url}


def _poll_trigger(session: CheckoutSession, status: str | None) -> str | None:
    if status in flow_of(session).settled_statuses:
        return None
    if status in tracking.UNPAID_ENDED:
        return SLOW_POLL
    return POLL


def _no_script_refresh(session: CheckoutSession, status: str | None) -> str | None:
    """How often the page reloads itself without JavaScript (the no_script_refresh macro, less
    often than htmx asks since each time is a whole page): "slow" once an unpaid order expired,
    None once settled."""
    if status in flow_of(session).settled_statuses:
        return None
    return "slow" if status in tracking.UNPAID_ENDED else "usual"


def _context(session: CheckoutSession, *, framed: bool | None = None,
             message: str | None = None, current: tracking.OrderStatus | None = None,
             top_level: bool = False, returned: bool = False) -> dict[str, Any]:
    """The status block's context. Parent events are recorded (as sent) only for a framed page.

    ``framed=None`` asks the request (:func:`checkout.views.tracking.framing`); ``top_level=True`` marks
    a page that must never send events (its polls carry ``top=1``). ``returned`` marks the page
    a payment provider sends the user back to: there, an order still awaiting its payment is one
    whose payment is on its way, never one to pay again (its polls carry ``returned=1``).
    """
    framing = tracking.TOP_LEVEL if top_level else (
        tracking.framing(session) if framed is None
        else (tracking.FRAMED if framed else tracking.TOP_LEVEL))
    is_framed = framing == tracking.FRAMED
    current = current or tracking.current_status(session)
    events = tracking.due_events(session, current.status) if is_framed else []
    network = session.value("network")
    flow = flow_of(session)
    poll = _poll_trigger(session, current.status)
    if framing == tracking.UNKNOWN:
        # A browser without fetch metadata: ask once more at load, through htmx, whose request
        # checkout.js marks when the page is framed; the events come with that answer.
        poll = f"load, {poll}" if poll else "load"
    # Polls of a page known to be top-level say so (top=1): they never send events.
    poll_top = top_level or (framing == tracking.TOP_LEVEL and not is_htmx())
    status_text = flow.status_text(current.status, session)
    stale = tracking.out_of_date(current) if current.status not in flow.settled_statuses \
        else None
    if returned and current.status in (None, "deposit_awaiting"):
        status_text = _("Checking for your payment. This page updates by itself.")
    unpaid_ended = current.status in tracking.UNPAID_ENDED
    extra: dict[str, Any] = {}
    status_context = flow_status_context(session)
    if status_context is not None:
        extra = status_context(session, current)
    return {
        **extra,
        # Not "status": htmx.render takes that keyword as the HTTP status.
        "order_status": current.status, "tx_hash": current.tx_hash,
        "status_text": status_text, "order_id": session.order_id, "returned": returned,
        "explorer_url": explorer_tx_url(network, current.tx_hash,
                                        testnet=current_app.config["CHECKOUT_TESTNET"] is True),
        "completed": current.status in flow.completed_statuses,
        "failed": current.status in flow.failed_statuses,
        "unpaid_ended": unpaid_ended,
        # An order that ended unpaid can still be paid late, but the user may want a new one: an
        # unsigned session can start one here; a launched one goes back to the shop for it.
        "start_again_url": url_for(f"checkout.{session.flow}", locale=session.locale)
        if unpaid_ended and session.jti is None else None,
        "poll": poll, "events": events, "framed": is_framed,
        "refresh": _no_script_refresh(session, current.status),
        "poll_top": poll_top,
        "quote": session.quote or {}, "message": message,
        # The upstream could not be asked just now: the last status known, and since when.
        "known_at": stale,
        "return_url": session.claims.get("returnUrl"),
        # Where the block polls, and where the page reloads itself without JavaScript.
        "live_url": url_for("checkout.status_live", session_id=session.id,
                            top="1" if poll_top else None, returned="1" if returned else None),
        "page_url": url_for("checkout.payment_return" if returned else "checkout.status",
                            session_id=session.id),
    }


def show_status(session: CheckoutSession, *, message: str | None = None,
                current: tracking.OrderStatus | None = None) -> Response:
    """The status page of the session's order (``current``: its status, if the caller has just
    learnt it from the upstream)."""
    context = _context(session, message=message, current=current)
    return render("checkout/status/status.html", "checkout/status/_status.html",
                  resume=resume_context(session, awaiting_payment=context["order_status"] in (
                      None, "deposit_awaiting")), step="status", **context)


@bp.get("/s/<session_id>/status", endpoint="status")
@limited("page")
@session_route
def status(session: CheckoutSession) -> Response:
    """Where the order stands, updated live until it settles."""
    if not session.order_id:
        return redirect(url_for("checkout.flow", session_id=session.id), code=303)
    return show_status(session)


@bp.get("/s/<session_id>/status/live", endpoint="status_live")
@limited("poll")
@session_route
def status_live(session: CheckoutSession) -> Response:
    """The status block alone, for polling; on the pay page it moves on once the money is seen."""
    if not session.order_id:
        return htmx_redirect(url_for("checkout.flow", session_id=session.id))
    if request.args.get("from") == "pay":
        # The pay page's poll swaps nothing: record no event here, the status page will.
        current = tracking.current_status(session)
        if current.status not in (None, "deposit_awaiting"):
            return htmx_redirect(url_for("checkout.status", session_id=session.id))
        return render("checkout/status/_live.html", "checkout/status/_live.html",
                      **_context(session, framed=False, current=current))
    return render("checkout/status/_live.html", "checkout/status/_live.html",
                  **_context(session, top_level=request.args.get("top") == "1",
                             returned=request.args.get("returned") == "1"))


# Still answered for orders made before return addresses carried an order view token.
@bp.get("/s/<session_id>/return", endpoint="payment_return")
@limited("page")
@session_route
def payment_return(session: CheckoutSession) -> Response:
    """Back from a payment provider's page (often as the top-level window): the order's status."""
    if not session.order_id:
        return redirect(url_for("checkout.flow", session_id=session.id), code=303)
    context = _context(session, top_level=True, returned=True)
    # The user just paid on the provider's page: never invite them back to it.
    return render("checkout/status/return.html", "checkout/status/_status.html",
                  resume=resume_context(session, awaiting_payment=False), step="status",
                  **context)


def _order_view_session(token: str) -> CheckoutSession:
    """The session an order view token opens (set up for the locale and money formats like
    any session page), or the order view's own 404."""
    try:
        session = load_session(session_id_of(token) or "")
    except SessionNotFound:
        raise OrderViewNotFound() from None
    g.checkout_order_view = OrderView(session)
    if not session.order_id:
        raise OrderViewNotFound()
    return session


def _order_view_context(session: CheckoutSession, token: str) -> dict[str, Any]:
    """The return page's context with every address on the order view: nothing in it names
    the session (no resume link, no language form, no anti-forgery token)."""
    context = _context(session, top_level=True, returned=True)
    context.update(live_url=url_for("checkout.order_view_live", token=token),
                   page_url=url_for("checkout.order_view", token=token),
                   start_again_url=None, calm=False, resume=None)
    return context


@bp.get("/o/<token>", endpoint="order_view")
@limited("page")
def order_view(token: str) -> Response:
    """Back from a payment provider's page, by the address the provider was given: the order's
    status and the way back to the shop."""
    session = _order_view_session(token)
    return render("checkout/status/return.html", "checkout/status/_status.html",
                  step="status", **_order_view_context(session, token))


@bp.get("/o/<token>/live", endpoint="order_view_live")
@limited("poll")
def order_view_live(token: str) -> Response:
    """The order view's status block alone, for polling."""
    session = _order_view_session(token)
    return render("checkout/status/_live.html", "checkout/status/_live.html",
                  **_order_view_context(session, token))


# Templates pass every upstream link through this before it becomes an href (_pay.html).
bp.add_app_template_filter(safe_external_url, "checkout_external_url")
