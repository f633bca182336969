"""The checkout's signals (blinker, as Flask's own), sent with the Flask app as ``sender``.

Connect a receiver to fulfil orders::

    from checkout.signals import order_status_changed

    @order_status_changed.connect_via(app)
    def fulfil(sender, order_id, status, previous_status, flow, order_params, event, **extra):
        if status == "payout_successful":
            ...

``order_status_changed``
    an order reaches a status newer (by the order's ``updatedAt``) than the one stored; once per
    order and status. kwargs: ``order_id, status, previous_status, flow, order_params, event``
    (``event`` is the webhook payload, or None when the status was learnt by asking the upstream).
``webhook_received``
    any verified webhook is stored, duplicates included. kwargs: ``event``.
``kyc_event``, ``auth_event``
    a verified ``kyc`` or ``auth`` webhook arrives (once per distinct event). kwargs: ``event``.

Receivers run after the webhook has been acknowledged, on the checkout's dispatcher thread (see
:mod:`checkout.webhooks.dispatcher`), never inside the upstream's request.
"""
from __future__ import annotations

from blinker import Namespace

_signals = Namespace()

order_status_changed = _signals.signal("order-status-changed", doc=(
    "An order reached a status newer (by the order's updatedAt) than the one stored; once per "
    "order and status. kwargs: order_id, status, previous_status, flow, order_params, event."))
webhook_received = _signals.signal("webhook-received", doc=(
    "A verified webhook was stored (duplicates included). kwargs: event."))
kyc_event = _signals.signal("kyc-event", doc="A verified `kyc` webhook. kwargs: event.")
auth_event = _signals.signal("auth-event", doc="A verified `auth` webhook. kwargs: event.")

__all__ = ["order_status_changed", "webhook_received", "kyc_event", "auth_event"]
