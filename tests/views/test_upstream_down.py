"""An order's pages while the upstream does not answer: its last stored status and details, said
to be as last known and since when, never "Please try again"."""
from __future__ import annotations

import re

from checkout import order_status
from checkout.state import get_state

from ..support import outage
from ..support.waiting import wait_for
from .conftest import Flow
from .test_create import upstream

KNOWN_AT = "Our payment partner is not answering right now"


def text(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)))


def stored(flow: Flow):
    with flow.app.app_context():
        return order_status.get(get_state().engine, flow.session.order_id)


def upstream_down(flow: Flow) -> None:
    """The breakers open: every call refused at once, as while the upstream keeps failing."""
    outage.upstream_down(upstream(flow))


def test_the_pay_page_shows_the_details_last_read_and_says_so(app, flow):
    flow.start()
    flow.to_pay()
    # The order's webhook, and the full order read after it, are stored.
    wait_for(lambda: (row := stored(flow)) is not None and row.full_order, timeout=10)
    app.config["CHECKOUT_STATUS_MAX_AGE"] = 0
    upstream_down(flow)
    page = flow.get("/pay")
    assert page.status_code == 200
    body = text(page)
    assert "These are the details as we last read them, at" in body
    assert "Please try again" not in body
    assert "I have paid" in body and 'data-transfer-type="manual"' in page.get_data(as_text=True)


def test_the_status_page_shows_the_last_status_known_and_since_when(app, flow):
    flow.start()
    flow.to_pay()
    wait_for(lambda: stored(flow) is not None, timeout=10)
    app.config["CHECKOUT_STATUS_MAX_AGE"] = 0
    from datetime import timedelta

    from sqlalchemy import update

    from checkout.webhooks.store import orders_table, utcnow

    with app.app_context():
        with get_state().engine.begin() as conn:      # last confirmed a minute ago
            conn.execute(update(orders_table).values(refreshed_at=utcnow() - timedelta(minutes=1)))
    upstream_down(flow)
    for path in ("/status", "/status/live"):
        page = flow.get(path)
        assert page.status_code == 200, path
        body = text(page)
        assert "Waiting for your payment." in body
        assert f"{KNOWN_AT}, so this is where your order stood at" in body
    # Back: the status is confirmed again, and the note goes.
    outage.upstream_back(upstream(flow))
    assert KNOWN_AT not in text(flow.get("/status"))


def test_an_order_never_read_nor_stored_is_the_friendly_error(app, flow, monkeypatch):
    flow.start()
    flow.to_pay()
    with app.app_context():
        monkeypatch.setattr(order_status, "get", lambda engine, order_id: None)
    upstream_down(flow)
    page = flow.get("/pay")
    assert page.status_code == 502
    assert "Our payment partner is not answering right now" in text(page)
