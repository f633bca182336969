"""The order status that the checkout's pages and merchants' code read (public module).

``current(app, order_id, flow)`` is the stored status that webhooks keep, refreshed from the
upstream when older than ``CHECKOUT_STATUS_MAX_AGE``; see :mod:`checkout.webhooks.orders` for the
rules that keep a fetch from rolling a webhook back. Both calls take the host's app (or the
checkout's state) and use the order statuses built for it (``CheckoutState.order_statuses``).
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .state import CheckoutState, real_app, state_of
from .webhooks.orders import (
    FINAL_STATUSES,
    OFFRAMP_TO_WEBHOOK,
    ONRAMP_TO_WEBHOOK,
    WEBHOOK_STATUSES,
    OrderStatuses,
    StoredOrder,
    get,
    webhook_status_of,
)

__all__ = ["FINAL_STATUSES", "OFFRAMP_TO_WEBHOOK", "ONRAMP_TO_WEBHOOK", "WEBHOOK_STATUSES",
           "StoredOrder", "current", "fetch_and_store", "get", "webhook_status_of"]


def current(app_or_state: Any, order_id: str, flow: str) -> StoredOrder | None:
    """The order's status: stored, refreshed from the upstream when stale (None: not known)."""
    return _statuses(app_or_state).current(order_id, flow, source="host")


def fetch_and_store(app_or_state: Any, order_id: str, flow: str, *,
                    seen: StoredOrder | None = None, apply_status: bool = True,
                    fetched: Mapping[str, Any] | None = None) -> StoredOrder | None:
    """Ask the upstream for the full order now and store it; raises UpstreamError."""
    return _statuses(app_or_state).fetch_and_store(order_id, flow, seen=seen,
                                                   apply_status=apply_status, fetched=fetched,
                                                   source="host")


def _statuses(app_or_state: Any) -> OrderStatuses:
    if isinstance(app_or_state, CheckoutState):
        return app_or_state.order_statuses
    return state_of(real_app(app_or_state)).order_statuses
