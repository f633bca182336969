"""Deliveries the receiver refused (a bad signature, a body too large), kept without their body.

A refused delivery is never stored as an event nor acted on; but the merchant's desk shows how many
there were (its webhook health: a wrong ``CHECKOUT_WEBHOOK_SECRET`` refuses every delivery) and,
on an order's timeline, those whose body named that order. So a row keeps when, why, and the
order id the body claimed (read only when it is JSON; unverified, and said so where shown).

Anyone can post to the receiver. A flood of forgeries must cost the database next to nothing: each
process writes at most :data:`BURST` rows at once and one a second after that (a token bucket);
the refusals it does not write are counted into the next row it writes (``count``). A refusal is
written in a short transaction of its own, and never fails the answer: the database being down
loses the row, not the 401.
"""
from __future__ import annotations

import json
import logging
import threading
import time
from collections.abc import Callable
from datetime import UTC, datetime

from sqlalchemy.engine import Engine
from sqlalchemy.exc import SQLAlchemyError

from ..inputs import storable
from ..store.tables import refusals_table

__all__ = ["RefusalLog", "claimed_order", "SIGNATURE", "TOO_LARGE"]

log = logging.getLogger(__name__)

SIGNATURE, TOO_LARGE = "signature", "too_large"
BURST = 10                  # rows a process writes at once
PER_SECOND = 1.0            # and then, at most, each second


def claimed_order(body: bytes | None) -> str | None:
    """The order id a delivery's body names (``data.order._id``), if it is JSON that does."""
    if not body:
        return None
    try:
        payload = json.loads(body)
    except ValueError:
        return None
    order = ((payload.get("data") or {}) if isinstance(payload, dict) else {})
    order = order.get("order") if isinstance(order, dict) else None
    order_id = order.get("_id") if isinstance(order, dict) else None
    # Unverified: anything at all, a lone surrogate that no database can hold included.
    return order_id if isinstance(order_id, str) and 0 < len(order_id) <= 128 \
        and storable(order_id) else None


class RefusalLog:
    """This process's record of refused deliveries, for one app's database."""

    def __init__(self, engine: Engine, *, clock: Callable[[], float] = time.monotonic) -> None:
        self.engine = engine
        self.clock = clock
        self._lock = threading.Lock()
        self._tokens = float(BURST)
        self._filled_at = clock()
        self._unwritten = 0

    def note(self, reason: str, body: bytes | None = None) -> None:
        """One delivery refused for ``reason`` (:data:`SIGNATURE`, :data:`TOO_LARGE`)."""
        with self._lock:
            now = self.clock()
            self._tokens = min(BURST, self._tokens + (now - self._filled_at) * PER_SECOND)
            self._filled_at = now
            if self._tokens < 1:
                self._unwritten += 1
                return
            self._tokens -= 1
            count, self._unwritten = 1 + self._unwritten, 0
        try:
            with self.engine.begin() as conn:
                conn.execute(refusals_table.insert().values(
                    received_at=datetime.now(UTC), reason=reason, order_id=claimed_order(body),
                    count=count))
        except SQLAlchemyError as exc:
            log.debug("a refused webhook delivery was not recorded (%s)", type(exc).__name__)
