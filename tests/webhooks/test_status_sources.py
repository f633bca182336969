"""Each status an order reached keeps where it came from (the order's story in the merchant's desk
says it): a webhook, the reconciler, a status page's read, the host's own call."""
from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import select

from checkout import order_status
from checkout.webhooks.reconcile import check_order
from checkout.webhooks.store import signal_log_table

from .helpers import iso, order_payload, signed_webhook


def sources(app, order_id: str) -> dict[str, str | None]:
    c = signal_log_table.c
    with app.extensions["checkout"].engine.connect() as conn:
        return dict(conn.execute(select(c.status, c.source).where(c.order_id == order_id)).all())


def test_a_webhooks_status_says_it_came_from_a_webhook(app, receiver):
    receiver.post(signed_webhook(order_payload("ord_w", "deposit_awaiting")))
    receiver.process()
    assert sources(app, "ord_w") == {"deposit_awaiting": "webhook"}


def test_a_status_read_from_the_upstream_says_who_read_it(app, fake_upstream):
    state = app.extensions["checkout"]
    fake_upstream.orders["ord_r"] = {"_id": "ord_r", "status": "initiated"}
    check_order(state.order_statuses, "ord_r", "offramp")
    fake_upstream.orders["ord_r"] = {"_id": "ord_r", "status": "transaction_confirmed",
                                     "updatedAt": iso(datetime.now(UTC))}
    check_order(state.order_statuses, "ord_r", "offramp", source="desk")
    fake_upstream.orders["ord_h"] = {"_id": "ord_h", "status": "swap_initiated"}
    order_status.fetch_and_store(app, "ord_h", "onramp")
    fake_upstream.orders["ord_p"] = {"_id": "ord_p", "status": "swap_initiated"}
    state.order_statuses.current("ord_p", "onramp")
    assert sources(app, "ord_r") == {"deposit_awaiting": "reconciliation",
                                     "deposit_successful": "desk"}
    assert sources(app, "ord_h") == {"deposit_awaiting": "host"}
    assert sources(app, "ord_p") == {"deposit_awaiting": "page"}
