"""Builders for signed deliveries, a recorder of signals, a fake upstream for get-order."""
from __future__ import annotations

import json
import threading
from collections import Counter
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from checkout import signals
from checkout.errors import OrderNotAvailable, UpstreamUnavailable
from checkout.sandbox.credentials import WEBHOOK_SECRET as SANDBOX_WEBHOOK_SECRET
from checkout.signature import sign

WEBHOOK_PATH = "/checkout/webhooks"
T0 = datetime(2026, 11, 22, 1, 0, 0, tzinfo=UTC)


def iso(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + \
        f"{moment.microsecond // 1000:03d}Z"


def order_payload(order_id: str = "ord_1", status: str = "deposit_awaiting", *,
                  updated_at: datetime | None = None, order_type: str = "on_ramp",
                  order_params: str | None = "shop-ref-1", tx_hash: str | None = None,
                  **order_fields: Any) -> dict[str, Any]:
    """An ``order-status-change`` event shaped as spec 6.2."""
    updated_at = updated_at or T0
    payout: dict[str, Any] = {"paymentChannel": "bank", "currencyType": "crypto",
                              "currencyCode": "USDC"}
    if tx_hash:
        payout["transaction"] = {"meta": {"transactionHash": tx_hash}}
    order = {
        "_id": order_id, "userId": "usr_1", "userEmail": "buyer@example.com",
        "countryIsoCode": "NG", "flow": "regular", "type": order_type, "source": "api",
        "status": status,
        "deposit": {"paymentChannel": "bank", "currencyType": "fiat", "currencyCode": "NGN"},
        "payout": payout, "createdAt": iso(T0), "updatedAt": iso(updated_at),
    }
    if order_params is not None:
        order["merchantOrderParams"] = order_params
    order.update(order_fields)
    return {"event": "order-status-change", "data": {"order": order, "userKyc": {}}}


@dataclass
class Delivery:
    body: bytes
    headers: dict[str, str]


def signed_webhook(payload: dict[str, Any] | None = None, *, body: bytes | None = None,
                   secret: str = SANDBOX_WEBHOOK_SECRET, signature: str | None = None,
                   drop_signature: bool = False, **order_overrides: Any) -> Delivery:
    """A delivery as the upstream sends it: compact JSON, signed over the exact bytes.

    ``body`` replaces the serialised payload; ``signature`` replaces the computed header;
    other keyword arguments go to :func:`order_payload`.
    """
    if body is None:
        body = json.dumps(payload if payload is not None else order_payload(**order_overrides),
                          separators=(",", ":")).encode()
    headers = {"Content-Type": "application/json", "User-Agent": "upstream-webhooks/1"}
    if not drop_signature:
        headers["x-signature"] = signature if signature is not None else sign(body, secret)
    return Delivery(body=body, headers=headers)


class Recorder:
    """Every signal the checkout sends for one app, in order (thread-safe)."""

    def __init__(self, app: Any) -> None:
        self.app = app
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self._lock = threading.Lock()
        self.fail_next_status: int = 0
        for name in ("order_status_changed", "webhook_received", "kyc_event", "auth_event"):
            getattr(signals, name).connect(self._receiver(name), sender=app, weak=False)

    def _receiver(self, name: str):
        def receive(sender: Any, **kwargs: Any) -> None:
            assert sender is self.app
            with self._lock:
                if name == "order_status_changed" and self.fail_next_status:
                    self.fail_next_status -= 1
                    raise RuntimeError("merchant database down")
                self.calls.append((name, kwargs))
        return receive

    def of(self, name: str) -> list[dict[str, Any]]:
        with self._lock:
            return [kwargs for signal, kwargs in self.calls if signal == name]

    def statuses(self) -> list[tuple[str, str]]:
        return [(c["order_id"], c["status"]) for c in self.of("order_status_changed")]

    def status_counts(self) -> Counter:
        return Counter(self.statuses())

    def disconnect(self) -> None:
        for name in ("order_status_changed", "webhook_received", "kyc_event", "auth_event"):
            sig = getattr(signals, name)
            for receiver in list(sig.receivers_for(self.app)):
                sig.disconnect(receiver, sender=self.app)


@dataclass
class FakeOrder:
    raw: dict[str, Any]


def use_upstream(app, upstream) -> None:
    """``app`` calls ``upstream`` instead of its own: the client the state holds, and the order
    statuses (and so the reconciler) built with it. The flows and the KYC standing keep theirs:
    these tests create no order and read no KYC standing."""
    state = app.extensions["checkout"]
    state.upstream = upstream
    state.order_statuses.upstream = upstream


@dataclass
class FakeUpstream:
    """get-order endpoints of the upstream, with a call log and scripted failures."""

    orders: dict[str, dict[str, Any]] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    failures: int = 0
    during_fetch: Any = None     # called inside the fetch, e.g. to race a webhook

    def _get(self, order_id: str) -> FakeOrder:
        self.calls.append(order_id)
        if self.during_fetch is not None:
            self.during_fetch()
        if self.failures:
            self.failures -= 1
            raise UpstreamUnavailable("503 from upstream", status=503)
        if order_id not in self.orders:
            raise OrderNotAvailable("order not available", status=404)
        return FakeOrder(dict(self.orders[order_id]))

    def onramp_order(self, order_id: str | None = None, order_params: str | None = None):
        return self._get(order_id)

    def offramp_order(self, id: str):
        return self._get(id)


def history(order_id: str, statuses: list[str], start: datetime = T0,
            step: timedelta = timedelta(seconds=7)) -> list[dict[str, Any]]:
    """One payload per status, each later than the one before."""
    return [order_payload(order_id, status, updated_at=start + step * (i + 1))
            for i, status in enumerate(statuses)]


# Transitions of the webhook status set (upstream notes 4), including late payments after canceled or
# expired; the storm test and bench/webhook_ack.py walk them to make order histories.
NEXT_STATUSES = {
    "deposit_awaiting": ["deposit_validating", "deposit_canceled", "deposit_invalid",
                         "deposit_expired"],
    "deposit_validating": ["deposit_successful", "deposit_invalid", "deposit_canceled",
                           "deposit_expired"],
    "deposit_canceled": ["deposit_successful"],
    "deposit_expired": ["deposit_successful"],
    "deposit_invalid": [],
    "deposit_successful": ["payout_pending"],
    "payout_pending": ["payout_successful", "payout_failed"],
    "payout_failed": ["payout_successful", "refund_pending"],
    "refund_pending": ["refund_successful", "refund_failed"],
    "refund_failed": ["refund_successful"],
    "payout_successful": [],
    "refund_successful": [],
}
