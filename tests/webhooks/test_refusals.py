"""Refused deliveries are noted without their body (when, why, the order the body named), and a
flood of forgeries costs the database a few rows a second at most, each refusal still counted."""
from __future__ import annotations

from sqlalchemy import select

from checkout.store.tables import refusals_table
from checkout.webhooks.refusals import BURST, RefusalLog

from ..support.clock import Clock
from .helpers import order_payload, signed_webhook


def refusals(engine) -> list[dict]:
    with engine.connect() as conn:
        return [dict(row._mapping) for row in
                conn.execute(select(refusals_table).order_by(refusals_table.c.id))]


def test_a_forged_delivery_is_noted_without_its_body(app, receiver):
    forged = signed_webhook(order_payload("ord_forged", userEmail="eve@example.com"),
                            secret="not-the-webhook-secret")
    assert receiver.post(forged).status_code == 401
    assert receiver.post(signed_webhook(body=b"x" * (256 * 1024 + 1))).status_code == 413
    found = refusals(app.extensions["checkout"].engine)
    assert [(r["reason"], r["order_id"], r["count"]) for r in found] == \
        [("signature", "ord_forged", 1), ("too_large", None, 1)]
    assert "eve@example.com" not in repr(found)
    assert receiver.count_events() == 0


def test_a_flood_of_forgeries_writes_a_few_rows_and_counts_every_refusal(app):
    engine = app.extensions["checkout"].engine
    clock = Clock()
    log = RefusalLog(engine, clock=clock)
    for _ in range(500):
        log.note("signature", b"{}")
    assert len(refusals(engine)) == BURST
    clock.now += 1.0                        # a second later: one more row, the rest folded in
    log.note("signature", b"{}")
    found = refusals(engine)
    assert len(found) == BURST + 1
    assert sum(r["count"] for r in found) == 501


def test_a_forgery_naming_an_order_no_database_can_hold_is_refused_and_noted(app, receiver):
    """A lone surrogate for an order id (valid JSON, no text column's): still a 401, noted
    without the id, never the receiver's 500."""
    forged = signed_webhook(body=b'{"data": {"order": {"_id": "\\ud800"}}}', secret="forged")
    assert receiver.post(forged).status_code == 401
    found = refusals(app.extensions["checkout"].engine)
    assert [(r["reason"], r["order_id"]) for r in found] == [("signature", None)]
