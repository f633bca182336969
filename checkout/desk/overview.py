"""How orders went over a period, for the desk's overview: orders by flow and status, money in
and out by currency, and the webhooks' health. (The funnel is :mod:`.funnel`'s; the partner's
health now is the readiness checks' and the breaker's, read at the edge.)

Money in is what customers paid for orders whose payment arrived (the status reached
``deposit_successful`` or any later one): local money for a purchase, crypto for a sale. Money
out is what they were paid for orders paid out (``payout_successful``): crypto for a purchase,
local money for a sale. Amounts are those the customer was shown (the desk's index of orders).
"""
from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal

from sqlalchemy import and_, func, select
from sqlalchemy.engine import Connection, Engine

from ..store.tables import (
    desk_orders_table,
    events_table,
    orders_table,
    outbox_table,
    refusals_table,
    signal_log_table,
)
from ..webhooks.store import aware

__all__ = ["StatusCount", "Money", "WebhookHealth", "Overview", "overview", "PAID_IN", "PAID_OUT"]

PAID_IN = frozenset({"deposit_successful", "payout_pending", "payout_successful",
                     "payout_failed", "refund_pending", "refund_successful", "refund_failed"})
PAID_OUT = frozenset({"payout_successful"})
LAG_SAMPLE = 1000           # the latest deliveries and signals the lags are measured on


@dataclass(frozen=True)
class StatusCount:
    flow: str | None
    status: str | None          # None: no status learnt yet
    count: int


@dataclass(frozen=True)
class Money:
    unit: str                   # a currency (ISO 4217) or a crypto asset
    crypto: bool
    paid_in: Decimal
    paid_out: Decimal


@dataclass(frozen=True)
class WebhookHealth:
    deliveries: int             # verified, distinct
    repeated: int               # the same delivery again
    refused: int
    processing_failed: int
    signals_failed: int         # order_status_changed and the others, in the period
    signals_waiting: int        # now, whenever owed
    processing_lag: float | None    # seconds, p95 of the latest deliveries
    signal_lag: float | None        # seconds from a status to the shop's code returning, p95


@dataclass(frozen=True)
class Overview:
    orders: list[StatusCount]
    money: list[Money]
    webhooks: WebhookHealth

    @property
    def total(self) -> int:
        return sum(row.count for row in self.orders)


def overview(engine: Engine, since: datetime, until: datetime) -> Overview:
    """The period [``since``, ``until``)."""
    with engine.connect() as conn:
        orders, money = _orders_and_money(conn, since, until)
        webhooks = _webhooks(conn, since, until)
    return Overview(orders, money, webhooks)


def _orders_and_money(conn: Connection, since: datetime,
                      until: datetime) -> tuple[list[StatusCount], list[Money]]:
    d, o = desk_orders_table.c, orders_table.c
    rows = conn.execute(
        select(d.flow, o.status, d.currency, d.asset, func.count(), func.sum(d.fiat_amount),
               func.sum(d.crypto_amount))
        .select_from(desk_orders_table.outerjoin(orders_table, o.order_id == d.order_id))
        .where(d.created_at >= since, d.created_at < until)
        .group_by(d.flow, o.status, d.currency, d.asset)).all()
    counts: dict[tuple[str | None, str | None], int] = {}
    sums: dict[tuple[str, bool], list[Decimal]] = {}
    for flow, status, currency, asset, count, fiat, crypto in rows:
        counts[(flow, status)] = counts.get((flow, status), 0) + int(count)
        # A purchase takes local money in and pays crypto out; a sale the other way round.
        legs = ((currency, False, fiat), (asset, True, crypto))
        taken, paid = legs if flow == "onramp" else legs[::-1]
        if status in PAID_IN and taken[0] and taken[2] is not None:
            sums.setdefault((taken[0], taken[1]), [Decimal(0), Decimal(0)])[0] += Decimal(taken[2])
        if status in PAID_OUT and paid[0] and paid[2] is not None:
            sums.setdefault((paid[0], paid[1]), [Decimal(0), Decimal(0)])[1] += Decimal(paid[2])
    orders = sorted((StatusCount(flow, status, count) for (flow, status), count in counts.items()),
                    key=lambda row: (row.flow or "", -row.count))
    money = [Money(unit, crypto, paid_in, paid_out)
             for (unit, crypto), (paid_in, paid_out) in sorted(sums.items())]
    return orders, money


def _webhooks(conn: Connection, since: datetime, until: datetime) -> WebhookHealth:
    e, r = events_table.c, refusals_table.c
    received = and_(e.received_at >= since, e.received_at < until)
    deliveries, repeated, failed = conn.execute(
        select(func.count(), func.coalesce(func.sum(e.duplicates), 0),
               func.count().filter(e.state == "failed")).where(received)).one()
    refused = conn.execute(select(func.coalesce(func.sum(r.count), 0))
                           .where(r.received_at >= since, r.received_at < until)).scalar_one()
    signals_failed = waiting = 0
    for table in (signal_log_table, outbox_table):
        t = table.c
        signals_failed += conn.execute(select(func.count()).where(
            t.state == "failed", t.created_at >= since, t.created_at < until)).scalar_one()
        waiting += conn.execute(select(func.count()).where(
            t.state.in_(("pending", "dispatching")))).scalar_one()
    processed = conn.execute(
        select(e.received_at, e.processed_at)
        .where(received, e.processed_at.is_not(None)).order_by(e.id.desc())
        .limit(LAG_SAMPLE)).all()
    s = signal_log_table.c
    dispatched = conn.execute(
        select(s.created_at, s.dispatched_at)
        .where(s.created_at >= since, s.created_at < until, s.dispatched_at.is_not(None))
        .order_by(s.id.desc()).limit(LAG_SAMPLE)).all()
    return WebhookHealth(int(deliveries), int(repeated), int(refused), int(failed),
                         int(signals_failed), int(waiting), _p95(processed), _p95(dispatched))


def _p95(pairs: Iterable[tuple[datetime, datetime]]) -> float | None:
    """The 95th percentile of the seconds from each pair's first time to its second."""
    lags = sorted(max(0.0, (aware(done) - aware(start)).total_seconds())
                  for start, done in pairs)
    if not lags:
        return None
    return lags[min(len(lags) - 1, math.ceil(0.95 * len(lags)) - 1)]
