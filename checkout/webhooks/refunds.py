"""What the upstream's webhooks told of an order's refund: the ``refund`` leg of their summary of
the order (spec 6.2: how much went back, where, by which transaction), read for its receipt.

It is read from the stored deliveries, not from the orders table: that table keeps the summary
of the status it holds, and the status may have come there first from a status page's read of
the upstream, which has no legs; a webhook of the same ``updatedAt`` then changes nothing there
(only a strictly newer one does), though it was stored like every verified delivery.
"""
from __future__ import annotations

import json
from typing import Any

from sqlalchemy import case, select
from sqlalchemy.engine import Engine

from .store import events_table

__all__ = ["REFUND_STATUSES", "refund_summary"]

REFUND_STATUSES = ("refund_pending", "refund_successful", "refund_failed")
LOOKED_AT = 10          # deliveries read at most: a few statuses, each maybe delivered twice


def refund_summary(engine: Engine, order_id: str) -> dict[str, Any] | None:
    """``data.order`` of the order's latest delivery with a refund status (of two at the same
    time, the one saying the refund is done), or None when no such delivery was stored."""
    e = events_table.c
    query = (select(e.body)
             .where(e.order_id == order_id, e.status.in_(REFUND_STATUSES))
             .order_by(e.updated_at.desc().nulls_last(),
                       case((e.status == "refund_successful", 0), else_=1), e.id.desc())
             .limit(LOOKED_AT))
    with engine.connect() as conn:
        bodies = conn.execute(query).scalars().all()
    for body in bodies:
        order = _order_of(body)
        if order is not None:
            return order
    return None


def _order_of(body: bytes) -> dict[str, Any] | None:
    try:
        payload = json.loads(body)
    except (ValueError, RecursionError):
        return None
    data = payload.get("data") if isinstance(payload, dict) else None
    order = data.get("order") if isinstance(data, dict) else None
    return order if isinstance(order, dict) else None
