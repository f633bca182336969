"""What status pages read: the webhook-kept status, the upstream asked only when it is stale."""
from __future__ import annotations

from datetime import timedelta

import pytest
from sqlalchemy import select, update

from checkout import order_status
from checkout.errors import UpstreamRateLimited, UpstreamUnavailable
from checkout.webhooks.store import orders_table, utcnow

from .helpers import T0, iso, order_payload, signed_webhook


def _age(app, order_id, seconds):
    """Pretend the stored status was last confirmed ``seconds`` ago."""
    with app.extensions["checkout"].engine.begin() as conn:
        conn.execute(update(orders_table).where(orders_table.c.order_id == order_id)
                     .values(refreshed_at=utcnow() - timedelta(seconds=seconds)))


def test_fresh_webhook_status_costs_the_upstream_nothing(app, receiver, fake_upstream):
    receiver.post(signed_webhook(order_payload("o1", "deposit_validating")))
    receiver.process()
    for _ in range(20):                       # twenty browsers polling
        stored = order_status.current(app, "o1", "onramp")
        assert stored.status == "deposit_validating" and stored.source == "webhook"
    assert fake_upstream.calls == []


def test_stale_status_is_refreshed_from_the_upstream_once(app, receiver, recorder, fake_upstream):
    receiver.post(signed_webhook(order_payload("o1", "deposit_validating")))
    receiver.process()
    fake_upstream.orders["o1"] = {"_id": "o1", "status": "complete", "hash": "0xabc",
                                  "feeAmountUsd": 0.25, "date": iso(T0)}
    _age(app, "o1", app.config["CHECKOUT_STATUS_MAX_AGE"] + 1)
    stored = order_status.current(app, "o1", "onramp")
    assert (stored.status, stored.previous_status, stored.source) == \
        ("payout_successful", "deposit_validating", "upstream")
    assert stored.transaction_hash == "0xabc" and stored.full_order["feeAmountUsd"] == 0.25
    assert order_status.current(app, "o1", "onramp").status == "payout_successful"
    assert fake_upstream.calls == ["o1"]
    receiver.process()
    assert recorder.statuses() == [("o1", "deposit_validating"), ("o1", "payout_successful")]
    assert recorder.of("order_status_changed")[1]["event"] is None
    # The webhook of that status arrives later: stored, but no second signal.
    receiver.post(signed_webhook(order_payload("o1", "payout_successful",
                                               updated_at=utcnow() + timedelta(seconds=1))))
    receiver.process()
    assert order_status.get(app.extensions["checkout"].engine, "o1").source == "webhook"
    assert recorder.status_counts()[("o1", "payout_successful")] == 1


def test_a_late_webhook_from_before_a_fetch_does_not_roll_it_back(app, receiver, recorder,
                                                                    fake_upstream):
    receiver.post(signed_webhook(order_payload("o1", "deposit_awaiting")))
    receiver.process()
    fake_upstream.orders["o1"] = {"_id": "o1", "status": "pending"}      # payout_pending
    _age(app, "o1", 3600)
    assert order_status.current(app, "o1", "onramp").status == "payout_pending"
    # deposit_successful happened a minute before the fetch; its webhook was delayed.
    receiver.post(signed_webhook(order_payload("o1", "deposit_successful",
                                               updated_at=utcnow() - timedelta(minutes=1))))
    receiver.process()
    assert order_status.get(app.extensions["checkout"].engine, "o1").status == "payout_pending"
    assert recorder.statuses() == [("o1", "deposit_awaiting"), ("o1", "payout_pending")]


def test_a_fetch_never_rolls_back_a_webhook_that_landed_during_it(app, receiver, fake_upstream):
    receiver.post(signed_webhook(order_payload("o1", "deposit_awaiting")))
    receiver.process()
    fake_upstream.orders["o1"] = {"_id": "o1", "status": "swap_buyer_confirmed"}   # validating

    def webhook_lands_meanwhile():
        fake_upstream.during_fetch = None
        receiver.post(signed_webhook(order_payload("o1", "deposit_successful",
                                                   updated_at=T0 + timedelta(minutes=1))))
        receiver.process()

    fake_upstream.during_fetch = webhook_lands_meanwhile
    _age(app, "o1", 3600)
    stored = order_status.current(app, "o1", "onramp")
    assert stored.status == "deposit_successful"


def test_a_slow_read_never_puts_back_an_older_order_than_one_stored_meanwhile(app, receiver,
                                                                              fake_upstream):
    """A full-order fetch that began while the order was being paid out, and ends after a page
    stored it paid out: the paid-out order stays (a receipt of a final order never reads it
    again, so an older one put back would stay for good)."""
    receiver.post(signed_webhook(order_payload("o1", "payout_pending")))
    receiver.process()
    fake_upstream.orders["o1"] = {"_id": "o1", "status": "pending"}
    paid_out = {"_id": "o1", "status": "complete", "hash": "0xabc"}

    def a_page_reads_it_paid_out_meanwhile():
        fake_upstream.during_fetch = None
        seen = order_status.get(app.extensions["checkout"].engine, "o1")
        order_status.fetch_and_store(app, "o1", "onramp", seen=seen, fetched=paid_out)

    fake_upstream.during_fetch = a_page_reads_it_paid_out_meanwhile
    order_status.fetch_and_store(app, "o1", "onramp", apply_status=False)
    stored = order_status.get(app.extensions["checkout"].engine, "o1")
    assert stored.full_order == paid_out and stored.status == "payout_successful"


def test_offramp_history_time_orders_a_fetch_against_webhooks(app, receiver, fake_upstream):
    receiver.post(signed_webhook(order_payload("o2", "payout_pending", order_type="off_ramp",
                                               updated_at=T0 + timedelta(minutes=10))))
    receiver.process()
    # The upstream answers with an older picture (a lagging replica): not applied.
    fake_upstream.orders["o2"] = {"_id": "o2", "status": "transaction_confirmed", "statusHistory": [
        {"status": "initiated", "changedAt": iso(T0)},
        {"status": "transaction_confirmed", "changedAt": iso(T0 + timedelta(minutes=5))}]}
    _age(app, "o2", 3600)
    assert order_status.current(app, "o2", "offramp").status == "payout_pending"
    fake_upstream.orders["o2"]["status"] = "offramp_success"
    fake_upstream.orders["o2"]["statusHistory"].append(
        {"status": "offramp_success", "changedAt": iso(T0 + timedelta(minutes=11))})
    _age(app, "o2", 3600)
    stored = order_status.current(app, "o2", "offramp")
    assert stored.status == "payout_successful"
    assert stored.updated_at == T0 + timedelta(minutes=11)


def test_unknown_order_is_fetched_and_stored(app, fake_upstream, recorder, receiver):
    assert order_status.current(app, "nope", "onramp") is None
    fake_upstream.orders["o3"] = {"_id": "o3", "status": "swap_initiated", "orderParams": "ref"}
    stored = order_status.current(app, "o3", "onramp")
    assert (stored.status, stored.order_params) == ("deposit_awaiting", "ref")
    receiver.process()
    assert recorder.statuses() == [("o3", "deposit_awaiting")]


def test_upstream_down_returns_the_stored_status_or_raises(app, receiver, fake_upstream):
    fake_upstream.failures = 10
    with pytest.raises(UpstreamUnavailable):
        order_status.current(app, "o4", "onramp")
    receiver.post(signed_webhook(order_payload("o4", "deposit_awaiting")))
    receiver.process()
    _age(app, "o4", 3600)
    assert order_status.current(app, "o4", "onramp").status == "deposit_awaiting"


@pytest.mark.parametrize("flow, mapping", [("onramp", order_status.ONRAMP_TO_WEBHOOK),
                                           ("offramp", order_status.OFFRAMP_TO_WEBHOOK)])
def test_every_order_status_maps_into_the_webhook_set(flow, mapping):
    assert set(mapping.values()) <= set(order_status.WEBHOOK_STATUSES)
    for upstream_status, webhook_status in mapping.items():
        assert order_status.webhook_status_of(flow, upstream_status) == webhook_status


def test_full_order_is_fetched_after_the_ack_with_retries(app, receiver, fake_upstream):
    app.config["CHECKOUT_WEBHOOK_FETCH_ORDERS"] = True
    fake_upstream.orders["o5"] = {"_id": "o5", "status": "swap_initiated",
                                  "transferInstructions": {"type": "manual"}}
    fake_upstream.failures = 2
    assert receiver.post(signed_webhook(order_payload("o5", "deposit_awaiting"))).status_code == 200
    assert fake_upstream.calls == []          # the acknowledgement never waits on the upstream
    engine = app.extensions["checkout"].engine
    for attempt in range(3):
        receiver.process()
        assert len(fake_upstream.calls) == attempt + 1
        row = order_status.get(engine, "o5")
        if attempt < 2:
            assert row.full_order is None
            _make_fetch_due(app, "o5")        # skip the backoff wait
    assert row.full_order["transferInstructions"] == {"type": "manual"}
    receiver.process()
    assert len(fake_upstream.calls) == 3      # done: not fetched again


def test_a_fetch_told_to_wait_comes_back_after_the_wait(app, receiver, fake_upstream,
                                                        monkeypatch):
    app.config["CHECKOUT_WEBHOOK_FETCH_ORDERS"] = True
    fake_upstream.orders["o6"] = {"_id": "o6", "status": "swap_initiated"}

    def busy(order_id=None, order_params=None):
        limited = UpstreamRateLimited("too many requests", status=429)
        limited.retry_after = 90.0
        raise limited

    monkeypatch.setattr(fake_upstream, "onramp_order", busy)
    receiver.post(signed_webhook(order_payload("o6", "deposit_awaiting")))
    before = utcnow()
    receiver.process()
    row = _order_row(app, "o6")
    assert row.fetch_attempts == 1 and "UpstreamRateLimited" in row.fetch_error
    due = row.fetch_due_at.replace(tzinfo=None)        # SQLite gives it back without its zone
    assert due - before.replace(tzinfo=None) >= timedelta(seconds=89)   # the upstream's 90, not 1


def _order_row(app, order_id):
    with app.extensions["checkout"].engine.connect() as conn:
        return conn.execute(select(orders_table).where(orders_table.c.order_id == order_id)).one()


def _make_fetch_due(app, order_id):
    with app.extensions["checkout"].engine.begin() as conn:
        conn.execute(update(orders_table).where(orders_table.c.order_id == order_id)
                     .values(fetch_due_at=utcnow() - timedelta(seconds=1)))
