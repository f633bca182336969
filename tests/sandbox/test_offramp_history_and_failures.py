"""Off-ramp: duplicate statusHistory entries in lists (spec 2.7), and the forced outcomes that end
in ``transaction_failed`` and ``refund_failed``, with their webhooks."""
from __future__ import annotations

import json

import pytest

from checkout.sandbox import credentials
from checkout.signature import verify

from ..support.sandbox_clock import advance
from .sandbox_support import TX_HASH, Api, api, sandbox_app, sandbox_factory  # noqa: F401
from .webhook_receiver import Receiver

HASH_RECEIVED = "awaiting_transaction_confirmation"


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.stop()


def confirmed_order(api: Api, outcome: str | None = None) -> dict:
    the_offer = api.offramp_offer(**({"sandboxOutcome": outcome} if outcome else {}))
    order = api.offramp_typed_order(the_offer)
    api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH})
    return order


def listed(api: Api, order_id: str) -> dict:
    return next(o for o in api.get("/api/offramp/orders", limit=100)["list"] if o["_id"] == order_id)


def single(api: Api, order_id: str) -> dict:
    return api.get(f"/api/offramp/order/{order_id}")


def run_to_rest(api: Api, order_id: str) -> None:
    while api.sandbox_order(order_id)["pendingTimers"]:
        api.advance(order_id)


# -- duplicate statusHistory entries, in lists only -------------------------------------------

def test_list_shows_the_hash_received_status_twice_once_the_watcher_took_it(api):
    order = confirmed_order(api)
    # Only the API has recorded the hash so far: no duplicate yet.
    assert [e["status"] for e in listed(api, order["_id"])["statusHistory"]] == [
        "initiated", HASH_RECEIVED]
    api.advance(order["_id"])           # the chain watcher picks the transaction up
    history = listed(api, order["_id"])["statusHistory"]
    assert [e["status"] for e in history] == [
        "initiated", HASH_RECEIVED, HASH_RECEIVED, "validating_transaction"]
    assert history[2]["changedAt"] == history[3]["changedAt"]      # stamped by the watcher
    assert history[1]["changedAt"] <= history[2]["changedAt"]
    # Never in the single-order read, which is the list's history without the repeat.
    one = single(api, order["_id"])["statusHistory"]
    assert [e["status"] for e in one] == ["initiated", HASH_RECEIVED, "validating_transaction"]
    assert history[:2] + history[3:] == one


def test_the_duplicate_is_deterministic_and_stays_through_the_lifecycle(api):
    order = confirmed_order(api)
    run_to_rest(api, order["_id"])
    first = listed(api, order["_id"])["statusHistory"]
    assert first == listed(api, order["_id"])["statusHistory"]
    assert [e["status"] for e in first] == [
        "initiated", HASH_RECEIVED, HASH_RECEIVED, "validating_transaction",
        "transaction_confirmed", "offramp_pending", "offramp_success"]
    assert len(single(api, order["_id"])["statusHistory"]) == len(first) - 1
    # Everything but the history is the same in both reads.
    assert {k: v for k, v in listed(api, order["_id"]).items() if k != "statusHistory"} == \
        {k: v for k, v in single(api, order["_id"]).items() if k != "statusHistory"}


@pytest.mark.parametrize("outcome", ["expire", "transaction_failed"])
def test_no_duplicate_when_the_watcher_never_validates(api, outcome):
    order = confirmed_order(api, outcome)
    run_to_rest(api, order["_id"])
    statuses = [e["status"] for e in listed(api, order["_id"])["statusHistory"]]
    assert statuses.count(HASH_RECEIVED) == 1
    assert statuses == [e["status"] for e in single(api, order["_id"])["statusHistory"]]


def test_unpaid_orders_have_no_duplicate(api):
    order = api.offramp_typed_order()
    assert listed(api, order["_id"])["statusHistory"] == single(api, order["_id"])["statusHistory"]


# -- transaction_failed and refund_failed -------------------------------------------------------

def test_transaction_failed_ends_the_order_without_a_refund(api):
    order = confirmed_order(api, "transaction_failed")
    api.advance(order["_id"])
    final = single(api, order["_id"])
    assert [e["status"] for e in final["statusHistory"]] == [
        "initiated", HASH_RECEIVED, "transaction_failed"]
    assert final["hash"] == TX_HASH
    summary = api.sandbox_order(order["_id"])
    assert summary["pendingTimers"] == [] and summary["webhookStatus"] == "deposit_invalid"
    # Final: nothing left to advance, and the order cannot be confirmed again.
    assert api.client.post(f"/sandbox/orders/{order['_id']}/advance", json={}).status_code == 400
    assert "transaction_failed" in api.post(
        "/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH}, expect=400)["message"]


def test_refund_failed_stays_until_the_console_retries_it(api):
    order = confirmed_order(api, "refund_failed")
    run_to_rest(api, order["_id"])
    assert single(api, order["_id"])["status"] == "refund_failed"
    assert api.sandbox_order(order["_id"])["pendingTimers"] == []
    page = api.client.get("/sandbox/orders").get_data(as_text=True)
    assert f"/sandbox/orders/{order['_id']}/retry-refund" in page

    retried = api.client.post(f"/sandbox/orders/{order['_id']}/retry-refund", json={})
    assert retried.status_code == 200
    # No status for "refund being retried" upstream: it stays refund_failed until the retry lands.
    assert retried.get_json()["status"] == "refund_failed"
    assert [t["name"] for t in retried.get_json()["pendingTimers"]] == ["refund"]
    again = api.client.post(f"/sandbox/orders/{order['_id']}/retry-refund", json={})
    assert again.status_code == 400 and "already being retried" in again.get_json()["message"]
    page = api.client.get("/sandbox/orders").get_data(as_text=True)
    assert f"/sandbox/orders/{order['_id']}/retry-refund" not in page

    api.advance(order["_id"])
    assert [e["status"] for e in single(api, order["_id"])["statusHistory"]][-3:] == [
        "refunding", "refund_failed", "refunded"]
    done = api.client.post(f"/sandbox/orders/{order['_id']}/retry-refund", json={})
    assert done.status_code == 400 and "only a failed refund" in done.get_json()["message"]


def test_retry_refund_by_form_and_only_for_offramp_orders(api):
    order = confirmed_order(api, "refund_failed")
    run_to_rest(api, order["_id"])
    form = api.client.post(f"/sandbox/orders/{order['_id']}/retry-refund", data={})
    assert form.status_code == 303 and form.headers["Location"].endswith(f"#{order['_id']}")
    cross = api.client.post(f"/sandbox/orders/{order['_id']}/retry-refund",
                            headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403
    onramp = api.onramp_order()
    assert api.client.post(f"/sandbox/orders/{onramp['orderId']}/retry-refund",
                           json={}).status_code == 404


def test_outcome_set_on_an_order_reaches_the_new_endings(api, sandbox_factory):
    order = api.offramp_typed_order()
    api.client.post(f"/sandbox/orders/{order['_id']}/outcome", json={"outcome": "refund_failed"})
    api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH})
    run_to_rest(api, order["_id"])
    assert single(api, order["_id"])["status"] == "refund_failed"
    configured = Api(sandbox_factory(SANDBOX_OUTCOME="transaction_failed"))
    other = confirmed_order(configured)
    run_to_rest(configured, other["_id"])
    assert single(configured, other["_id"])["status"] == "transaction_failed"


# -- webhooks: one per real status change --------------------------------------------------------

def webhook_statuses(receiver: Receiver, order_id: str) -> list[tuple[str, str, bool]]:
    found = []
    for item in receiver.at("/hooks"):
        verify(item.body, item.headers.get("X-Signature"), credentials.WEBHOOK_SECRET)
        summary = json.loads(item.body)["data"]["order"]
        if summary["_id"] == order_id:
            found.append((summary["updatedAt"], summary["status"], "refund" in summary))
    return sorted(found)


@pytest.mark.parametrize("outcome, expected", [
    ("deposit_success", ["deposit_awaiting", "deposit_validating", "deposit_validating",
                         "deposit_successful", "payout_pending", "payout_successful"]),
    ("transaction_failed", ["deposit_awaiting", "deposit_validating", "deposit_invalid"]),
    ("refund_failed", ["deposit_awaiting", "deposit_validating", "deposit_validating",
                       "deposit_successful", "payout_pending", "payout_failed", "refund_pending",
                       "refund_failed"]),
])
def test_one_webhook_per_real_status_change(sandbox_factory, receiver, outcome, expected):
    app = sandbox_factory(SANDBOX_WEBHOOK_URL=receiver.url("/hooks"),
                          SANDBOX_WEBHOOK_ALLOW_LOOPBACK=True)
    api = Api(app)
    order = confirmed_order(api, outcome)
    advance(app, 600)
    assert single(api, order["_id"])["status"] in (
        "offramp_success", "transaction_failed", "refund_failed")
    assert app.extensions["sandbox"].webhooks.drain(5)
    events = webhook_statuses(receiver, order["_id"])
    # Statuses that share a millisecond sort by the lifecycle, as the order reached them.
    assert sorted(s for _, s, _ in events) == sorted(expected)
    assert len(events) == len(single(api, order["_id"])["statusHistory"])
    # Spec 6.2: a refund leg only while refunding; none when nothing arrived.
    assert all(has_refund == (status in ("refund_pending", "refund_failed"))
               for _, status, has_refund in events)
