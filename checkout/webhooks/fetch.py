"""The full-order fetch, outside the acknowledgement path.

A webhook is a summary (no fees, no transfer instructions); every applied status move of an on-ramp
or off-ramp order sets ``fetch_due_at`` and bumps ``fetch_seq``. The dispatcher then claims due
orders (a conditional UPDATE that pushes ``fetch_due_at`` a lease ahead, so one worker asks), calls
the upstream's get-order endpoint through the app's order statuses
(:meth:`checkout.webhooks.orders.OrderStatuses.fetch_and_store`), and on a retryable failure tries
again after 1, 2, 4 ... seconds (at most ``MAX_BACKOFF``), up to ``CHECKOUT_WEBHOOK_FETCH_ATTEMPTS``
times, and never before the wait an upstream 429 asked for (the client refuses the call itself until
then: an attempt spent earlier would be wasted). Another 4xx is not retried. The status in the answer
is not applied here: while webhooks flow they alone order the status (see :mod:`checkout.order_status`).
"""
from __future__ import annotations

import logging
from datetime import timedelta

from sqlalchemy import select, update
from sqlalchemy.engine import Engine

from ..errors import UpstreamError, UpstreamRateLimited
from .orders import OrderStatuses
from .store import orders_table, utcnow, write_transaction

log = logging.getLogger(__name__)

LEASE = timedelta(seconds=120)          # longer than the client's own timeouts and retries
MAX_BACKOFF = 300.0


def fetch_due_orders(statuses: OrderStatuses, *, max_attempts: int, limit: int = 20) -> int:
    """Fetch the full orders that are due (each at most ``max_attempts`` times); return how many
    fetches were attempted."""
    engine = statuses.engine
    c = orders_table.c
    now = utcnow()
    with engine.connect() as conn:
        due = conn.execute(select(c.order_id, c.flow, c.fetch_seq)
                           .where(c.fetch_due_at.is_not(None), c.fetch_due_at <= now)
                           .order_by(c.fetch_due_at).limit(limit)).all()
    attempted = 0
    for order_id, flow, seq in due:
        with write_transaction(engine) as conn:
            claimed = conn.execute(
                update(orders_table)
                .where(c.order_id == order_id, c.fetch_due_at.is_not(None), c.fetch_due_at <= now)
                .values(fetch_due_at=utcnow() + LEASE, fetch_attempts=c.fetch_attempts + 1)
            ).rowcount
        if claimed != 1:
            continue
        attempted += 1
        try:
            statuses.fetch_and_store(order_id, flow, apply_status=False)
        except UpstreamError as exc:
            _failed(engine, order_id, seq, exc, max_attempts)
            continue
        except Exception as exc:  # never let one order stop the worker
            log.exception("full-order fetch of %s crashed", order_id)
            _failed(engine, order_id, seq, exc, max_attempts)
            continue
        with write_transaction(engine) as conn:
            # Done, unless a newer status move asked for another fetch meanwhile.
            conn.execute(update(orders_table)
                         .where(c.order_id == order_id, c.fetch_seq == seq)
                         .values(fetch_due_at=None, fetch_attempts=0, fetch_error=None))
    return attempted


def _failed(engine: Engine, order_id: str, seq: int, exc: Exception, max_attempts: int) -> None:
    c = orders_table.c
    with write_transaction(engine) as conn:
        attempts = conn.execute(select(c.fetch_attempts).where(c.order_id == order_id)).scalar()
        retry = bool(getattr(exc, "retryable", False)) and (attempts or 0) < max_attempts
        wait = min(2.0 ** max((attempts or 1) - 1, 0), MAX_BACKOFF)
        if isinstance(exc, UpstreamRateLimited) and exc.retry_after:
            wait = max(wait, exc.retry_after)
        log.warning("full-order fetch of %s failed (attempt %s%s): %r", order_id, attempts,
                    f", retry in {wait:g} s" if retry else ", giving up", exc)
        conn.execute(update(orders_table)
                     .where(c.order_id == order_id, c.fetch_seq == seq)
                     .values(fetch_due_at=utcnow() + timedelta(seconds=wait) if retry else None,
                             fetch_error=f"{type(exc).__name__}: {exc}"[:2000]))
