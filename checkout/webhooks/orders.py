"""The order status that the checkout's status pages read: what webhooks keep, asked of the
upstream only when it is older than ``CHECKOUT_STATUS_MAX_AGE`` seconds.

Browsers polling a status page therefore cost the upstream nothing while webhooks flow. When the
stored status is stale, one caller at a time (a conditional UPDATE of ``refreshed_at``) asks the
upstream's get-order endpoint, maps the order status to the webhook status set (notes 4, "Sandbox
mapping") and stores it under the same rule as webhooks:

* a fetch never rolls back a webhook: the fetched status is written only if the row has not moved
  since it was read before the fetch (``version``), and, when the upstream gives a time for it
  (``updatedAt``, or the last ``statusHistory`` entry of an off-ramp order), only if that time is
  newer than the stored ``status_updated_at``;
* an on-ramp order carries no time for its status. Its fetched status is "observed at fetch
  time": it is stored with ``status_updated_at`` = the time the fetch started, less
  ``CHECKOUT_STATUS_CLOCK_TOLERANCE`` seconds (2) for clock skew between the upstream and us (never
  earlier than the stored one). A webhook that happened after the fetch still wins; a late one
  from before it does not roll the status back (outside that small tolerance);
* the full-order fetch that follows a webhook (:mod:`checkout.webhooks.fetch`) stores the full
  order only: while webhooks flow, they alone move the status;
* a full order is stored only over one read earlier than it (``fetched_at`` is when the read
  began): a slow read that began before another's, and ends after it, does not put back what
  was (a receipt read before the payout, stored after the paid-out one);
* a status this order never had owes ``order_status_changed`` through the same UNIQUE
  (order_id, status) guard as webhooks, with ``event=None``.

A page that shows the whole order (a receipt: :meth:`OrderStatuses.kept_order`) is served the
order as last read, and reads it again only when that read is older than
``CHECKOUT_STATUS_MAX_AGE`` (one caller at a time: a conditional UPDATE of ``fetched_at``), and
never once it was read final: a final order does not change. Reloading receipts costs the
upstream at most one read per order and max age, whoever reloads them.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import and_, func, or_, select, update
from sqlalchemy.engine import Engine

from ..desk import index as desk_index
from ..errors import OrderNotAvailable, UpstreamError, UpstreamNotFound, UpstreamUnavailable
from .events import parse_datetime
from .processing import owe_status_signal
from .store import aware, dialect_insert, orders_table, utcnow, write_transaction

ONRAMP_TO_WEBHOOK: dict[str, str] = {
    "swap_initiated": "deposit_awaiting",
    "swap_buyer_confirmed": "deposit_validating",
    "swap_buyer_rejected": "deposit_canceled",
    "swap_expired": "deposit_expired",
    "swap_seller_rejected": "deposit_invalid",
    "swap_seller_confirmed": "deposit_successful",
    "pending": "payout_pending",
    "complete": "payout_successful",
    "failed": "payout_failed",
}

OFFRAMP_TO_WEBHOOK: dict[str, str] = {
    "initiated": "deposit_awaiting",
    "awaiting_transaction_confirmation": "deposit_validating",
    "validating_transaction": "deposit_validating",
    "transaction_failed": "deposit_invalid",
    "transaction_invalid": "deposit_invalid",
    "expired": "deposit_expired",
    "cancelled": "deposit_canceled",
    "transaction_confirmed": "deposit_successful",
    "offramp_pending": "payout_pending",
    "offramp_retry": "payout_pending",
    "offramp_success": "payout_successful",
    "offramp_failed": "payout_failed",
    "refunding": "refund_pending",
    "refunded": "refund_successful",
    "refund_failed": "refund_failed",
}

WEBHOOK_STATUSES = (
    "deposit_awaiting", "deposit_validating", "deposit_invalid", "deposit_canceled",
    "deposit_expired", "deposit_successful", "payout_pending", "payout_successful",
    "payout_failed", "refund_pending", "refund_successful", "refund_failed",
)
FINAL_STATUSES = ("payout_successful", "refund_successful")

# Where a stored status came from, kept with each status an order reached (its signal's row):
# a webhook, the reconciler, a status page's read of the order, a staff member's "check with the
# partner now" (the merchant's desk), the host's own call (checkout.order_status), another read.
SOURCES = ("webhook", "reconciliation", "page", "desk", "host", "create", "upstream")


@dataclass(frozen=True)
class StoredOrder:
    """An order as the checkout knows it."""

    order_id: str
    flow: str | None
    status: str                      # in the webhook status set
    previous_status: str | None
    updated_at: datetime | None      # the order's updatedAt of this status, when known
    source: str                      # "webhook" or "upstream"
    order_params: str | None
    summary: dict[str, Any] | None   # data.order of the last applied webhook
    full_order: dict[str, Any] | None  # the get-order answer: fees, transfer instructions
    fetched_at: datetime | None
    refreshed_at: datetime
    hash: str | None
    version: int

    @property
    def transaction_hash(self) -> str | None:
        return self.hash

    @property
    def final(self) -> bool:
        return self.status in FINAL_STATUSES


@dataclass(frozen=True)
class KeptOrder:
    """An order as last read from the upstream (its JSON, ``order``, read at ``read_at``), for
    a page that shows all of it; ``unanswered``: a read was due and the upstream did not answer
    it (the page says it shows the order as last read, and when)."""

    order: Mapping[str, Any]
    read_at: datetime
    unanswered: bool = False


def webhook_status_of(flow: str | None, order_status: str | None) -> str | None:
    """The webhook status for an on-ramp or off-ramp order status (None if unknown)."""
    table = ONRAMP_TO_WEBHOOK if flow == "onramp" else OFFRAMP_TO_WEBHOOK if flow == "offramp" \
        else {}
    return table.get(order_status or "")


def get(engine: Engine, order_id: str) -> StoredOrder | None:
    """The stored order, never asking the upstream."""
    with engine.connect() as conn:
        row = conn.execute(select(orders_table)
                           .where(orders_table.c.order_id == order_id)).first()
    return _to_stored(row) if row is not None else None


def count_by_status(engine: Engine) -> list[tuple[str | None, str, int]]:
    """(flow, status, how many) of the stored orders: one GROUP BY, a scan of the whole table
    (no index covers flow and status; the metrics endpoint caches the answer)."""
    o = orders_table.c
    with engine.connect() as conn:
        rows = conn.execute(select(o.flow, o.status, func.count())
                            .group_by(o.flow, o.status)).all()
    return [(flow, str(status), int(count)) for flow, status, count in rows]


class OrderStatuses:
    """The stored statuses of one app's orders, refreshed from its upstream: what status pages,
    the reconciler and the full-order fetches read and write (``checkout.order_status`` for the
    host's code). ``config`` is read at each call: a test or an operator may change
    ``CHECKOUT_STATUS_MAX_AGE`` on a running app. ``notify`` wakes the webhook dispatcher when a
    status owes a signal."""

    def __init__(self, engine: Engine, upstream: Any, config: Mapping[str, Any],
                 notify: Callable[[], None]) -> None:
        self.engine = engine
        self.upstream = upstream
        self.config = config
        self.notify = notify

    def current(self, order_id: str, flow: str, *, source: str = "page") -> StoredOrder | None:
        """The order's status for a status page: stored, refreshed from the upstream when stale.

        Returns None for an order neither stored nor known upstream. If the upstream cannot be
        asked, the stored status (however old) is returned; with nothing stored the upstream
        error is raised. ``source``: who asks (:data:`SOURCES`), kept with a status it learns.
        """
        max_age = timedelta(seconds=float(self.config.get("CHECKOUT_STATUS_MAX_AGE", 30)))
        stored = get(self.engine, order_id)
        now = utcnow()
        if stored is not None:
            if stored.refreshed_at > now - max_age:
                return stored
            if not _claim(self.engine, order_id, "refreshed_at", now, max_age):
                return get(self.engine, order_id)   # another request is asking right now
        try:
            return self.fetch_and_store(order_id, flow, seen=stored, source=source)
        except (OrderNotAvailable, UpstreamNotFound):
            return stored
        except UpstreamUnavailable:
            if stored is not None:
                # Not confirmed after all: the stored time stays the last confirmation, which
                # the pages show while the upstream does not answer (the breaker spares it the
                # polls).
                _release(self.engine, order_id, "refreshed_at", now, stored.refreshed_at)
                return stored
            raise
        except UpstreamError:
            if stored is not None:
                return stored       # it answered (a refusal): asked again after the max age
            raise

    def kept_order(self, order_id: str, flow: str, seen: StoredOrder | None) -> KeptOrder:
        """The whole order for a page that shows it (a receipt), as last read: read again (and
        stored, with its status, like a status page's read) only when the last read is older
        than ``CHECKOUT_STATUS_MAX_AGE`` and was not of a final order, by one caller at a time.

        ``seen`` is the order's row as the caller has just read it (None: nothing stored).
        Raises the upstream's error when nothing of the order was ever read.
        """
        max_age = timedelta(seconds=float(self.config.get("CHECKOUT_STATUS_MAX_AGE", 30)))
        now = utcnow()
        kept = _kept(seen)
        if kept is not None:
            final = webhook_status_of(flow, kept.order.get("status")) in FINAL_STATUSES
            if final or kept.read_at > now - max_age:
                return kept
            if not _claim(self.engine, order_id, "fetched_at", now, max_age):
                return kept         # another request is reading it right now
        try:
            full = _fetch_raw(self.upstream, order_id, flow)
        except (OrderNotAvailable, UpstreamNotFound):
            if kept is None:
                raise
            return kept
        except UpstreamUnavailable:
            if kept is None:
                raise
            # Not read after all: the time of the last read stays, as the page says.
            _release(self.engine, order_id, "fetched_at", now, kept.read_at)
            return replace(kept, unanswered=True)
        except UpstreamError:
            if kept is None:
                raise
            return replace(kept, unanswered=True)   # a refusal (a 429): asked again later
        self.fetch_and_store(order_id, flow, seen=seen, fetched=full, read_at=now, source="page")
        return KeptOrder(full, now)

    def fetch_and_store(self, order_id: str, flow: str, *, seen: StoredOrder | None = None,
                        apply_status: bool = True, fetched: Mapping[str, Any] | None = None,
                        read_at: datetime | None = None,
                        source: str = "upstream") -> StoredOrder | None:
        """Ask the upstream for the full order and store it (and its status, by the rules
        above).

        ``seen`` is the row as read before the fetch; None reads it now. Raises UpstreamError.
        ``source``: who asked (:data:`SOURCES`), kept with a status this read is the first to
        tell.

        ``fetched``: the order as the caller has just read it from the upstream (a page that
        needed it anyway), stored without asking again; ``read_at``: when that read began (by
        default, now). ``seen`` is then the row as read before that read, None if nothing was
        stored: a webhook stored after it must win over what it read.
        """
        engine = self.engine
        if seen is None and fetched is None:
            seen = get(engine, order_id)
        began = read_at if read_at is not None and fetched is not None else utcnow()
        full = dict(fetched) if fetched is not None else _fetch_raw(self.upstream, order_id, flow)
        secret = str(self.config.get("CHECKOUT_LAUNCH_SECRET") or "")
        if _store(engine, order_id, flow, full, seen, began, self._tolerance(), apply_status,
                  source, secret):
            self.notify()
        return get(engine, order_id)

    def _tolerance(self) -> timedelta:
        return timedelta(seconds=float(self.config.get("CHECKOUT_STATUS_CLOCK_TOLERANCE", 2)))


def _store(engine: Engine, order_id: str, flow: str, full: dict[str, Any],
           seen: StoredOrder | None, began: datetime, tolerance: timedelta,
           apply_status: bool, source: str, launch_secret: str) -> bool:
    """Store an order read from the upstream at ``began`` (and its status, by the rules above),
    and what it tells the merchant's desk (checkout.desk.index); True if a signal is owed."""
    observed = began - tolerance
    status = webhook_status_of(flow, full.get("status")) if apply_status else None
    status_time = _status_time(full)
    if status_time is None:
        status_time = observed if seen is None or seen.updated_at is None \
            else max(observed, seen.updated_at)
    tx_hash = full.get("hash") if isinstance(full.get("hash"), str) and full.get("hash") else None
    order_params = full.get("orderParams") if isinstance(full.get("orderParams"), str) else None
    now = utcnow()
    owed = False
    with write_transaction(engine) as conn:
        # The index's row first, as a webhook's processing writes them (checkout.webhooks.
        # processing): two transactions that wrote a new order's two rows in turns opposite
        # would each wait for the other's (a deadlock, and a customer's create answered 503).
        desk_index.record(conn, desk_index.facts_from_order(order_id, flow, full), launch_secret,
                          now)
        if seen is None and status is not None:
            inserted = conn.execute(
                dialect_insert(conn.dialect.name, orders_table).values(
                    order_id=order_id, flow=flow, status=status, previous_status=None,
                    status_updated_at=status_time, status_source="upstream",
                    order_params=order_params, summary=None, full_order=full, fetched_at=began,
                    hash=tx_hash, refreshed_at=now, version=1, fetch_due_at=None, fetch_seq=0,
                    fetch_attempts=0, created_at=now)
                .on_conflict_do_nothing(index_elements=["order_id"])
                .returning(orders_table.c.order_id)).first()
            if inserted is not None:
                owed = owe_status_signal(conn, order_id=order_id, status=status,
                                         previous_status=None, flow=flow,
                                         order_params=order_params, event_id=None, now=now,
                                         source=source)
        elif seen is not None and status is not None and status != seen.status:
            c = orders_table.c
            # Unchanged since read (version) and newer than what is stored: a fetch that started
            # before a webhook landed, or that saw an older picture, changes nothing.
            moved = conn.execute(
                update(orders_table)
                .where(and_(c.order_id == order_id, c.version == seen.version,
                            c.status != status,
                            or_(c.status_updated_at.is_(None),
                                c.status_updated_at < status_time)))
                .values(status=status, previous_status=c.status, status_source="upstream",
                        status_updated_at=status_time, version=c.version + 1)
                .returning(c.previous_status, c.flow, c.order_params)).first()
            if moved is not None:
                owed = owe_status_signal(conn, order_id=order_id, status=status,
                                         previous_status=moved.previous_status,
                                         flow=moved.flow or flow,
                                         order_params=moved.order_params or order_params,
                                         event_id=None, now=now, source=source)
        c = orders_table.c
        conn.execute(update(orders_table)
                     .where(c.order_id == order_id,
                            or_(c.fetched_at.is_(None), c.fetched_at <= began))
                     .values(full_order=full, fetched_at=began,
                             refreshed_at=now if apply_status else c.refreshed_at,
                             hash=tx_hash if tx_hash else c.hash))
    return owed


# Two kinds of turn on an order, each kept in a column of its row: ``refreshed_at``, its status's
# refresh (a status page's), and ``fetched_at``, the read of the whole order (a receipt's).

def _claim(engine: Engine, order_id: str, column: str, now: datetime,
           max_age: timedelta) -> bool:
    """The one turn due now in ``column``, if no other caller has claimed it (set to ``now``)."""
    turn = orders_table.c[column]
    with write_transaction(engine) as conn:
        return conn.execute(
            update(orders_table)
            .where(orders_table.c.order_id == order_id, turn <= now - max_age)
            .values({column: now})).rowcount == 1


def _release(engine: Engine, order_id: str, column: str, claimed: datetime,
             before: datetime) -> None:
    """Give back a turn claimed at ``claimed`` that learnt nothing: ``column`` as it was, unless
    something stored the order meanwhile (a webhook, another read)."""
    with write_transaction(engine) as conn:
        conn.execute(update(orders_table)
                     .where(orders_table.c.order_id == order_id,
                            orders_table.c[column] == claimed)
                     .values({column: before}))


def _kept(stored: StoredOrder | None) -> KeptOrder | None:
    if stored is None or not stored.full_order or stored.fetched_at is None:
        return None
    return KeptOrder(stored.full_order, stored.fetched_at)


def _fetch_raw(upstream: Any, order_id: str, flow: str) -> dict[str, Any]:
    if flow == "onramp":
        result = upstream.onramp_order(order_id=order_id)
    elif flow == "offramp":
        result = upstream.offramp_order(order_id)
    else:
        raise ValueError(f"no get-order endpoint for flow {flow!r}")
    raw = getattr(result, "raw", result)
    return dict(raw) if isinstance(raw, Mapping) else {}


def _status_time(full: Mapping[str, Any]) -> datetime | None:
    """The upstream's own time of the order's current status, when the order carries one."""
    updated = parse_datetime(full.get("updatedAt"))
    if updated is not None:
        return updated
    history = full.get("statusHistory")
    if isinstance(history, list):
        times = [parse_datetime(entry.get("changedAt")) for entry in history
                 if isinstance(entry, dict)]
        known = [t for t in times if t is not None]
        if known:
            return max(known)
    return None


def _to_stored(row: Any) -> StoredOrder:
    m = row._mapping
    return StoredOrder(
        order_id=m["order_id"], flow=m["flow"], status=m["status"],
        previous_status=m["previous_status"], updated_at=aware(m["status_updated_at"]),
        source=m["status_source"], order_params=m["order_params"], summary=m["summary"],
        full_order=m["full_order"], fetched_at=aware(m["fetched_at"]),
        refreshed_at=aware(m["refreshed_at"]), hash=m["hash"], version=m["version"])
