"""What ``flask checkout orders list | show`` read: the upstream's order lists (every family, walked
by cursor) and, for one order, what the checkout stored about it (status, webhook deliveries,
signals fired, what staff did from the merchant's desk).

The families: ``onramp`` (``/api/onramp/orders``), ``offramp`` (``/api/offramp/orders``, shared by
the channel-based and the type-based variants: ``variant`` tells them apart) and ``legacy`` (the
pay-widget family, ``/api/pay-widget-merchant/orders``). The legacy family may list the same orders
as the on-ramp one (the sandbox's does): with ``--flow all`` an id is listed once, under the first
family that lists it.

List rows carry no user email or phone number (``show`` prints the upstream's full order, which
has them, for the operator who asked about that one order).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.engine import Engine

from ..errors import OrderNotAvailable, UpstreamNotFound, UpstreamRejected
from ..store.tables import desk_actions_table
from ..upstream import types as t
from ..upstream.client import MAX_PAGE_SIZE, UpstreamClient
from .orders import OFFRAMP_TO_WEBHOOK, webhook_status_of
from .store import aware, events_table, orders_table, outbox_table, signal_log_table, utcnow

FAMILIES = ("onramp", "offramp", "legacy")

# The keys of a list row, in this order (CSV columns and JSON object keys).
ROW_KEYS = ("id", "flow", "variant", "status", "storedStatus", "amount", "currency", "asset",
            "network", "orderParams", "createdAt", "updatedAt")


@dataclass(frozen=True)
class OrderRow:
    id: str
    flow: str
    variant: str | None
    status: str | None
    amount: Decimal | None
    currency: str | None
    asset: str | None
    network: str | None
    order_params: str | None
    created_at: datetime | None
    updated_at: datetime | None
    stored_status: str | None = None     # set only when it differs from the upstream's status

    def as_dict(self) -> dict[str, str | None]:
        values = (self.id, self.flow, self.variant, self.status, self.stored_status,
                  None if self.amount is None else str(self.amount), self.currency, self.asset,
                  self.network, self.order_params, _iso(self.created_at), _iso(self.updated_at))
        return dict(zip(ROW_KEYS, values, strict=True))


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.isoformat()


def _onramp_row(o: t.OnrampOrder) -> OrderRow:
    return OrderRow(o.id, "onramp", None, o.status, o.local_currency_amount, o.currency_iso_code,
                    o.asset, o.network, o.order_params, o.created_at or o.date, o.updated_at)


def _offramp_row(o: t.OfframpOrder) -> OrderRow:
    typed = o.offer_id is not None or o.payment_type is not None
    cashout = o.cashout
    return OrderRow(o.id, "offramp", "type" if typed else "channel", o.status,
                    cashout.local_currency_amount if cashout else None, o.currency_iso_code,
                    o.asset, o.network, o.order_params, o.created_at, o.updated_at)


def legacy_status(o: t.LegacyOrder) -> str | None:
    """The buy swap's status, and the withdrawal's after a slash once there is one."""
    buy = o.buy_swap.status if o.buy_swap else None
    withdrawal = o.withdrawal.status if o.withdrawal else None
    if withdrawal:
        return f"{buy or '-'}/{withdrawal}"
    return buy


def _legacy_row(o: t.LegacyOrder) -> OrderRow:
    amount = o.buy_swap.amount if o.buy_swap else None     # cents of the local currency
    order_params = o.raw.get("orderParams")
    return OrderRow(o.id, "legacy", None, legacy_status(o),
                    None if amount is None else amount / 100, None, o.asset, o.wallet_type,
                    order_params if isinstance(order_params, str) else None, o.created_at, None)


@dataclass(frozen=True)
class ListFilter:
    statuses: frozenset[str] = frozenset()
    older_than: timedelta | None = None
    newer_than: timedelta | None = None
    order_params: str | None = None

    def keeps(self, row: OrderRow, now: datetime) -> bool:
        # A status is named in the upstream's words of the order's family (offramp_success) or
        # in the webhook words that signals and webhooks use for both flows (payout_successful).
        if self.statuses and not (row.status in self.statuses
                                  or webhook_status_of(row.flow, row.status) in self.statuses
                                  or (row.status or "").split("/")[-1] in self.statuses
                                  or (row.status or "").split("/")[0] in self.statuses):
            return False
        if self.order_params is not None and row.order_params != self.order_params:
            return False
        if self.older_than is not None or self.newer_than is not None:
            if row.created_at is None:
                return False
            age = now - aware(row.created_at)
            if self.older_than is not None and age < self.older_than:
                return False
            if self.newer_than is not None and age > self.newer_than:
                return False
        return True


def _family_rows(client: UpstreamClient, family: str, page_size: int, wanted: ListFilter,
                 only_family: bool) -> Iterator[OrderRow]:
    if family == "onramp":
        return map(_onramp_row, client.iter_onramp_orders(page_size))
    if family == "legacy":
        return map(_legacy_row, client.iter_legacy_orders(page_size))
    # The off-ramp list filters by orderParams upstream, and by one status when only off-ramp
    # orders are listed (it refuses a status of another family's: 400).
    filters: dict[str, object] = {}
    one = next(iter(wanted.statuses)) if len(wanted.statuses) == 1 else None
    # Only an off-ramp status word goes upstream: a webhook word may stand for several
    # (payout_pending is offramp_pending or offramp_retry), and is filtered here.
    if only_family and one in OFFRAMP_TO_WEBHOOK:
        filters["status"] = one
    if wanted.order_params is not None:
        filters["order_params"] = wanted.order_params
    return map(_offramp_row, client.iter_offramp_orders(page_size, **filters))


def list_orders(client: UpstreamClient, engine: Engine, families: Sequence[str], wanted: ListFilter,
                *, limit: int, page_size: int = MAX_PAGE_SIZE,
                now: datetime | None = None) -> list[OrderRow]:
    """At most ``limit`` orders of these families that pass ``wanted``, each family's list walked
    page after page (newest first, as the upstream lists them). Raises ``UpstreamError``."""
    now = now or utcnow()
    rows: list[OrderRow] = []
    seen: set[str] = set()
    for family in families:
        for row in _family_rows(client, family, page_size, wanted,
                                   only_family=len(families) == 1):
            if row.id in seen or not wanted.keeps(row, now):
                continue
            seen.add(row.id)
            rows.append(row)
            if len(rows) >= limit:
                break
        if len(rows) >= limit:
            break
    stored = stored_statuses(engine, [row.id for row in rows])
    # The checkout stores webhook words: offramp_success stored as payout_successful is the same.
    return [row if stored.get(row.id) in (None, row.status,
                                          webhook_status_of(row.flow, row.status))
            else replace(row, stored_status=stored[row.id]) for row in rows]


def stored_statuses(engine: Engine, order_ids: Sequence[str]) -> dict[str, str]:
    found: dict[str, str] = {}
    with engine.connect() as conn:
        for start in range(0, len(order_ids), 500):
            chunk = order_ids[start:start + 500]
            found.update((r.order_id, r.status) for r in conn.execute(
                select(orders_table.c.order_id, orders_table.c.status)
                .where(orders_table.c.order_id.in_(chunk))))
    return found


# -- one order --------------------------------------------------------------------------------

@dataclass
class OrderReport:
    order_id: str
    stored: dict[str, Any] | None = None
    family: str | None = None
    upstream: Mapping[str, Any] | None = None
    upstream_error: str | None = None
    deliveries: list[dict[str, Any]] = field(default_factory=list)
    signals: list[dict[str, Any]] = field(default_factory=list)
    # What staff did to it from the merchant's desk (checkout.desk.actions): the audit trail.
    actions: list[dict[str, Any]] = field(default_factory=list)

    @property
    def found(self) -> bool:
        return bool(self.stored or self.upstream is not None or self.deliveries or self.signals
                    or self.actions)

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.order_id, "stored": self.stored, "flow": self.family,
                "upstream": self.upstream, "upstreamError": self.upstream_error,
                "deliveries": self.deliveries, "signals": self.signals,
                "deskActions": self.actions}


def _lookups(client: UpstreamClient) -> dict[str, Callable[[str], t.OnrampOrder | t.OfframpOrder
                                                              | t.LegacyOrder]]:
    return {"onramp": lambda order_id: client.onramp_order(order_id=order_id),
            "offramp": lambda order_id: client.offramp_order(order_id),
            "legacy": lambda order_id: client.legacy_order(order_id=order_id)}


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return aware(value).isoformat()
    return value


def _row_dict(row: Any, columns: Sequence[str]) -> dict[str, Any]:
    return {name: _jsonable(getattr(row, name)) for name in columns}


def order_report(client: UpstreamClient, engine: Engine, order_id: str) -> OrderReport:
    """Everything known about one order. The upstream is asked in the stored flow's family first,
    then in the others; a 404 from all of them means the upstream does not know it. Other upstream errors
    raise (``UpstreamError``)."""
    report = OrderReport(order_id)
    with engine.connect() as conn:
        stored = conn.execute(select(orders_table).where(orders_table.c.order_id == order_id)).first()
        if stored is not None:
            report.stored = _row_dict(stored, (
                "flow", "status", "previous_status", "status_updated_at", "status_source",
                "order_params", "refreshed_at", "fetched_at", "fetch_error"))
        events = conn.execute(select(events_table).where(events_table.c.order_id == order_id)
                              .order_by(events_table.c.id)).all()
        report.deliveries = [_row_dict(e, (
            "id", "received_at", "last_seen_at", "event_type", "status", "updated_at", "state",
            "outcome", "duplicates", "attempts", "error")) for e in events]
        for s in conn.execute(select(signal_log_table)
                              .where(signal_log_table.c.order_id == order_id)
                              .order_by(signal_log_table.c.id)):
            report.signals.append({"signal": "order_status_changed",
                                   **_row_dict(s, ("status", "previous_status", "event_id",
                                                   "source", "created_at", "state",
                                                   "dispatched_at", "attempts", "error"))})
        report.actions = [_row_dict(a, ("at", "staff", "role", "action", "outcome", "detail"))
                          for a in conn.execute(select(desk_actions_table)
                                                .where(desk_actions_table.c.order_id == order_id)
                                                .order_by(desk_actions_table.c.id))]
        event_ids = [e.id for e in events]
        if event_ids:
            for s in conn.execute(select(outbox_table)
                                  .where(outbox_table.c.event_id.in_(event_ids))
                                  .order_by(outbox_table.c.id)):
                report.signals.append({"signal": s.signal, "duplicate": bool(s.duplicate),
                                       **_row_dict(s, ("event_id", "created_at", "state",
                                                       "dispatched_at", "attempts", "error"))})
    lookups = _lookups(client)
    first = report.stored.get("flow") if report.stored else None
    order = [first] if first in lookups else []
    for family in (*order, *(f for f in FAMILIES if f != first)):
        try:
            found = lookups[family](order_id)
        except (UpstreamNotFound, OrderNotAvailable):
            continue                    # not this family's (ORDER_NOT_AVAILABLE is a 404 too)
        except UpstreamRejected as exc:
            if exc.status == 404:
                continue
            raise
        report.family, report.upstream = family, dict(found.raw)
        break
    return report


__all__ = ["FAMILIES", "ROW_KEYS", "ListFilter", "OrderRow", "OrderReport", "list_orders",
           "order_report", "stored_statuses"]
