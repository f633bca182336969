"""Per-app state of the sandbox, kept in ``app.extensions["sandbox"]``."""
from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Any

from flask import Flask, current_app

from .clock import Clock, Scheduler
from .orders import Order, OrderStore
from .webhooks import EVENT_AUTH, EVENT_KYC, WebhookSender, order_status_payload

log = logging.getLogger(__name__)

# Merchant id the sandbox's orders belong to (shown in legacy orders).
SANDBOX_MERCHANT_ID = "5f0c3a9b2d1e4f6a7b8c9d0e"

# WSGI environ key set by a checkout that embeds the sandbox and serves its pages: the absolute
# base under which browsers reach ``/sandbox/...`` (payment and resume pages, the console).
PUBLIC_BASE_ENVIRON = "checkout.sandbox.public_base"


@dataclass
class SandboxState:
    app: Flask                      # timers run outside any app context, yet need the app's KYC store
    clock: Clock
    scheduler: Scheduler
    webhooks: WebhookSender
    webhook_url: str | None
    webhook_events: frozenset[str]
    user_endpoints: bool
    orders: OrderStore = field(init=False)

    def __post_init__(self) -> None:
        self.orders = OrderStore(self.clock, self.scheduler, on_status_change=self._order_changed)

    def _order_changed(self, order: Order) -> None:
        """Send ``order-status-change`` for every status an order reaches (spec 6)."""
        if "order" not in self.webhook_events:
            return
        url = order.webhook_url or self.webhook_url
        if not url:
            return
        from .shapes import webhook_summary

        try:
            payload = order_status_payload(webhook_summary(order), self.user_kyc(order))
            self.webhooks.send(url, payload, order_id=order.id)
        except Exception:
            # A webhook that cannot be built or queued must not stop the order's state machine; the
            # delivery log shows the gap and the merchant can still poll the order.
            log.exception("sandbox: webhook for order %s (%s) not sent", order.id, order.status)

    def user_kyc(self, order: Order) -> dict[str, Any]:
        """``data.userKyc`` of a webhook: what the KYC module knows of the order's user, if anything."""
        from .kyc import webhook_user_kyc

        email = order.data.get("email") or order.data.get("userEmail")
        if not email:
            return {}
        try:
            return dict(webhook_user_kyc(email, self.app) or {})
        except Exception:       # a KYC lookup problem must never stop an order's webhook
            log.exception("sandbox: userKyc lookup failed")
            return {}

    def emit_kyc_event(self, payload: dict[str, Any]) -> None:
        self._emit(EVENT_KYC, payload)

    def emit_auth_event(self, payload: dict[str, Any]) -> None:
        self._emit(EVENT_AUTH, payload)

    def _emit(self, kind: str, payload: dict[str, Any]) -> None:
        # auth and kyc events are opt-in (spec 6.1, item 3).
        if kind in self.webhook_events and self.webhook_url:
            self.webhooks.send(self.webhook_url, payload, event=kind)

    def shutdown(self) -> None:
        self.scheduler.shutdown(wait=False)
        self.webhooks.close()


def current() -> SandboxState:
    state: SandboxState = current_app.extensions["sandbox"]
    return state
