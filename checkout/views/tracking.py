"""Where an order stands for its pages, in the words of the webhook status set, and the events for
the parent page (a helper of the views: it reads the request, to know whether a page is framed).

Statuses are the webhook set of upstream-notes 4 (``deposit_awaiting`` ... ``refund_failed``). They are
read through the app's order statuses (``checkout.webhooks.orders.OrderStatuses``: the stored status
that webhooks keep, refreshed from the upstream when older than ``CHECKOUT_STATUS_MAX_AGE``).

Parent events: ``order-created`` once, ``status-changed`` once per new status, and exactly one of
``completed`` and ``failed`` per order. The session records what was emitted (a compare-and-set save),
so a reload, a second tab or a late poll never sends an event twice nor the other terminal event.

Events are recorded as sent only when a parent page can receive them (:func:`framing`): a page
opened top-level (the resume link on another device, a payment provider's return) has no parent,
and recording ``completed`` there would mean the merchant's framed page never gets it.

Which statuses end an order is the flow's to say (``Flow.terminal_event``):

- ``payout_successful`` -> ``completed`` (crypto delivered; local money paid out).
- On-ramp: ``deposit_invalid`` (the payment was refused) and every refund status (the money is on
  its way back, or stuck on its way back: the crypto will not come) -> ``failed``.
- Off-ramp: ``deposit_invalid`` and ``refund_successful`` (the crypto went back) -> ``failed``.
- ``payout_failed`` is retried by the upstream and may still succeed: no terminal event yet.
- ``deposit_expired`` and ``deposit_canceled`` are not final upstream (a late payment is still paid
  out), so no terminal event is sent for them: the page tells the user the order expired unpaid, and
  keeps checking, slowly, in case a payment arrives late.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime, tzinfo
from typing import Any

from flask import current_app, request
from flask_babel import gettext as _

from .. import order_status
from ..errors import UpstreamError
from ..htmx import from_htmx
from ..i18n import format_datetime
from ..security import event_target_origin
from ..sessions import CheckoutSession
from ..state import flow_of, get_state

log = logging.getLogger("checkout.tracking")

UNPAID_ENDED = frozenset({"deposit_expired", "deposit_canceled"})


# Set by checkout.js on its htmx requests when its page is inside a frame (window.parent !==
# window). fetch/XHR requests carry "Sec-Fetch-Dest: empty", so the browser cannot say it for them.
FRAMED_HEADER = "X-Checkout-Framed"

FRAMED, TOP_LEVEL, UNKNOWN = "framed", "top", "unknown"


def framing(session: CheckoutSession | None = None) -> str:
    """Whether this request's page is inside the merchant's frame: FRAMED, TOP_LEVEL or UNKNOWN.

    - A navigation says it with ``Sec-Fetch-Dest``: ``iframe`` is FRAMED; ``document`` (or anything
      else) is TOP_LEVEL. A browser that sends no fetch metadata (older Safari) is UNKNOWN: the
      page records nothing and lets its first htmx request (with checkout.js's header) decide.
    - An htmx request is FRAMED only with ``X-Checkout-Framed: 1`` (checkout.js sends it when
      framed), else TOP_LEVEL.
    - With no origin to post events to (several frame ancestors, no ``parentOrigin``) checkout.js
      posts nothing, so nothing counts as framed.
    """
    if session is not None and event_target_origin(session) is None:
        return TOP_LEVEL
    if from_htmx():
        return FRAMED if request.headers.get(FRAMED_HEADER) == "1" else TOP_LEVEL
    dest = request.headers.get("Sec-Fetch-Dest")
    if dest is None:
        return UNKNOWN
    return FRAMED if dest == "iframe" else TOP_LEVEL


@dataclass(frozen=True)
class OrderStatus:
    status: str | None
    tx_hash: str | None = None
    updated_at: datetime | None = None          # when the order reached this status
    order: Mapping[str, Any] | None = None      # the full order, as last read from the upstream
    # When the status was last known current (a webhook, an upstream read): older than the
    # refresh age means the upstream could not be asked just now (:func:`out_of_date`).
    confirmed_at: datetime | None = None


def last_read(seen: order_status.StoredOrder | None) -> tuple[Mapping[str, Any], datetime] | None:
    """The order as last read from the upstream (kept with its status) and when: what a page
    shows, saying so, while the upstream does not answer. None when it was never read."""
    if seen is None or not seen.full_order or seen.fetched_at is None:
        return None
    fetched_at = _aware(seen.fetched_at)
    assert fetched_at is not None
    return seen.full_order, fetched_at


def known_at_text(moment: datetime, zone: tzinfo | None = None) -> str:
    """What a page of an order says when the upstream cannot be asked, shown as last read: on
    the customer's clock, ``zone`` (the order's country's; by default the session's), as the
    page's other dates are."""
    return _("Our payment partner is not answering right now. These are the details as we "
             "last read them, at %(time)s.", time=format_datetime(moment, zone=zone))


def out_of_date(current: OrderStatus) -> datetime | None:
    """When the status shown was last confirmed, if the upstream could not confirm it since
    (a stored status is read again when older than CHECKOUT_STATUS_MAX_AGE): None while
    current."""
    if current.confirmed_at is None:
        return None
    max_age = float(current_app.config.get("CHECKOUT_STATUS_MAX_AGE", 30))
    age = (datetime.now(UTC) - current.confirmed_at).total_seconds()
    # A margin over the refresh age: a read under way in another request is not an outage.
    return current.confirmed_at if age > max(max_age * 2, 10.0) else None


def current_status(session: CheckoutSession) -> OrderStatus:
    """The order's status and crypto transaction hash, as fresh as the store allows."""
    if not session.order_id:
        return OrderStatus(None)
    return _status_of(session, get_state().order_statuses.current(session.order_id, session.flow))


def stored_order(session: CheckoutSession) -> order_status.StoredOrder | None:
    """The session's order as stored (no upstream call): read it before reading the order from
    the upstream, for :func:`status_after_read`."""
    assert session.order_id is not None
    return order_status.get(get_state().engine, session.order_id)


def status_after_read(session: CheckoutSession, order: Mapping[str, Any],
                      seen: order_status.StoredOrder | None,
                      read_at: datetime | None = None) -> OrderStatus:
    """The status of the order a page has just read from the upstream (``seen``: as stored
    before that read, which began at ``read_at``), stored as a status page's own read would
    store it: its status page then shows it without reading the order a second time."""
    assert session.order_id is not None
    stored = get_state().order_statuses.fetch_and_store(session.order_id, session.flow,
                                                        seen=seen, fetched=order,
                                                        read_at=read_at, source="page")
    return _status_of(session, stored)


def _status_of(session: CheckoutSession, stored: order_status.StoredOrder | None) -> OrderStatus:
    if stored is None:
        return OrderStatus(None)
    tx_hash = stored.hash or session.tx_hash
    if stored.status in flow_of(session).completed_statuses and not tx_hash:
        tx_hash = _hash_from_upstream(session)
    return OrderStatus(stored.status, tx_hash, stored.updated_at, stored.full_order,
                       _aware(stored.refreshed_at))


def _aware(moment: datetime | None) -> datetime | None:
    if moment is None or moment.tzinfo is not None:
        return moment
    return moment.replace(tzinfo=UTC)           # SQLite gives it back without its zone


def _hash_from_upstream(session: CheckoutSession) -> str | None:
    """Read the transaction hash once (a stored summary may lack it) and keep it."""
    order_id = session.order_id
    assert order_id is not None
    try:
        stored = get_state().order_statuses.fetch_and_store(order_id, session.flow,
                                                            apply_status=False)
    except UpstreamError as exc:
        log.warning("could not read the transaction hash: %r", exc)
        return None
    tx_hash = stored.hash if stored is not None else None
    if tx_hash:
        def keep(fresh: CheckoutSession) -> None:
            fresh.tx_hash = tx_hash

        get_state().sessions.update(session.id, keep)
    return tx_hash


@dataclass(frozen=True)
class ParentEvent:
    type: str
    key: str
    order: dict[str, Any]
    extra: dict[str, Any] | None = None


def due_once(session: CheckoutSession, event: ParentEvent) -> list[ParentEvent]:
    """``event`` if it was never sent for this session (then recorded as sent), else nothing.

    For requests to the parent page that must not be repeated: ``deposit-requested`` asks the
    shop to send crypto, and a second one could make it send twice.
    """
    sent: list[ParentEvent] = []

    def change(fresh: CheckoutSession) -> bool:
        sent.clear()
        events = fresh.events
        once = list(events.get("once") or [])
        if event.key in once:
            return False
        events["once"] = once + [event.key]
        fresh.events = events
        sent.append(event)
        return True

    get_state().sessions.update(session.id, change)
    return list(sent)


def due_events(session: CheckoutSession, status: str | None) -> list[ParentEvent]:
    """The parent events not sent yet for this order at ``status``; records them as sent."""
    if not session.order_id:
        return []
    order_id = session.order_id
    flow = flow_of(session)
    due: list[ParentEvent] = []

    def change(fresh: CheckoutSession) -> bool:
        due.clear()
        events = fresh.events
        order = {"id": order_id, "status": status}
        if not events.get("order_created"):
            events["order_created"] = True
            due.append(ParentEvent("order-created", f"order-created:{order_id}", order))
        seen = list(events.get("statuses") or [])
        if status and status not in seen:
            seen.append(status)
            events["statuses"] = seen
            due.append(ParentEvent("status-changed", f"status:{order_id}:{status}", order))
        terminal = flow.terminal_event(status)
        if terminal and not events.get("terminal"):
            events["terminal"] = terminal
            due.append(ParentEvent(terminal, f"terminal:{order_id}", order))
        if not due:
            return False
        fresh.events = events
        return True

    get_state().sessions.update(session.id, change)
    return list(due)
