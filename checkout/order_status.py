"""The order status that the checkout's pages and merchants' code read (public module).

``current(app, order_id, flow)`` is the stored status that webhooks keep, refreshed from the
upstream when older than ``CHECKOUT_STATUS_MAX_AGE``; see :mod:`checkout.webhooks.orders` for the
rules that keep a fetch from rolling a webhook back.
"""
from __future__ import annotations

from .webhooks.orders import (
    FINAL_STATUSES,
    OFFRAMP_TO_WEBHOOK,
    ONRAMP_TO_WEBHOOK,
    WEBHOOK_STATUSES,
    StoredOrder,
    current,
    fetch_and_store,
    get,
    webhook_status_of,
)

__all__ = ["FINAL_STATUSES", "OFFRAMP_TO_WEBHOOK", "ONRAMP_TO_WEBHOOK", "WEBHOOK_STATUSES",
           "StoredOrder", "current", "fetch_and_store", "get", "webhook_status_of"]
