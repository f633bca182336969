"""The sandbox's order pages and actions, and the order store's answers to other modules."""
from __future__ import annotations

from .sandbox_support import EVM_ADDRESS, api, sandbox_app, sandbox_factory  # noqa: F401


def test_index_names_the_magic_values(api):
    page = api.client.get("/sandbox/")
    assert page.status_code == 200 and b"123456" in page.data and b"payout_failed" in page.data
    assert b"<script" not in page.data


def test_orders_page_lists_orders_with_forms(api):
    assert b"No orders yet" in api.client.get("/sandbox/orders").data
    order = api.onramp_order()
    page = api.client.get("/sandbox/orders").get_data(as_text=True)
    assert order["orderId"] in page and "swap_initiated" in page
    assert f'/sandbox/orders/{order["orderId"]}/outcome' in page
    assert f'/sandbox/orders/{order["orderId"]}/advance' in page
    assert "<script" not in page
    detail = api.client.get(f"/sandbox/orders/{order['orderId']}").get_data(as_text=True)
    assert "Narration" in detail and "swap_initiated" in detail


def test_form_actions_redirect_back(api):
    order = api.onramp_order()
    response = api.client.post(f"/sandbox/orders/{order['orderId']}/outcome",
                               data={"outcome": "deposit_invalid"})
    assert response.status_code == 303 and response.headers["Location"].endswith(
        f"/sandbox/orders#{order['orderId']}")
    api.post("/api/onramp/order/confirm", {"orderId": order["orderId"]})
    response = api.client.post(f"/sandbox/orders/{order['orderId']}/advance", data={})
    assert response.status_code == 303
    assert api.sandbox_order(order["orderId"])["status"] == "swap_seller_rejected"


def test_cross_site_posts_are_refused(api):
    order = api.onramp_order()
    for headers in ({"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}):
        response = api.client.post(f"/sandbox/orders/{order['orderId']}/advance", headers=headers)
        assert response.status_code == 403
    assert api.sandbox_order(order["orderId"])["status"] == "swap_initiated"
    same = api.client.post(f"/sandbox/orders/{order['orderId']}/reject",
                           headers={"Origin": "http://localhost"})
    assert same.status_code == 303


def test_json_views(api):
    order = api.onramp_order()
    listing = api.client.get("/sandbox/orders.json").get_json()
    assert [o["id"] for o in listing["orders"]] == [order["orderId"]]
    one = api.sandbox_order(order["orderId"])
    assert one["status"] == "swap_initiated" and one["webhookStatus"] == "deposit_awaiting"
    assert one["transferType"] == "manual" and {t["name"] for t in one["pendingTimers"]} == {"expiry"}
    assert api.client.get(f"/sandbox/orders/{'9' * 24}.json").status_code == 404


def test_deposit_action_needs_an_offramp_order(api):
    order = api.onramp_order()
    response = api.client.post(f"/sandbox/orders/{order['orderId']}/deposit", json={})
    assert response.status_code == 404
    offramp = api.offramp_typed_order()
    bad = api.client.post(f"/sandbox/orders/{offramp['_id']}/deposit", json={"hash": "nope"})
    assert bad.status_code == 400


def test_check_address_sees_order_addresses(api):
    def used(address: str) -> bool:
        return api.post("/api/util/check-address", {"address": address})["used"]

    assert used(EVM_ADDRESS) is False
    api.onramp_order()
    assert used(EVM_ADDRESS) is True and used(EVM_ADDRESS.lower()) is True
    other = "0x" + "1" * 40
    api.offramp_typed_order(address=other)
    assert used(other) is True


def test_volume_counts_live_orders_of_the_user(api):
    first = api.onramp_order(email="vol@example.com")
    api.onramp_order(email="someone@example.com")
    volume = api.store.volume_usd(email="VOL@example.com")
    assert volume == first["amount"]
    api.client.post(f"/sandbox/orders/{first['orderId']}/reject", json={})
    assert api.store.volume_usd(email="vol@example.com") == 0


def test_late_payment_revives_expired_orders(api):
    onramp = api.onramp_order(quote_params={"sandboxOutcome": "expire"})
    api.advance(onramp["orderId"])
    assert api.sandbox_order(onramp["orderId"])["status"] == "swap_expired"
    late = api.client.post(f"/sandbox/orders/{onramp['orderId']}/late-payment", json={})
    assert late.get_json()["status"] == "swap_buyer_confirmed"
    while api.sandbox_order(onramp["orderId"])["pendingTimers"]:
        api.advance(onramp["orderId"])
    assert api.statuses(onramp["orderId"]) == [
        "swap_initiated", "swap_expired", "swap_buyer_confirmed", "swap_seller_confirmed",
        "pending", "complete"]

    offramp = api.offramp_typed_order()
    api.client.post(f"/sandbox/orders/{offramp['_id']}/reject", json={})
    late = api.client.post(f"/sandbox/orders/{offramp['_id']}/late-payment", json={})
    assert late.get_json()["status"] == "awaiting_transaction_confirmation"
    while api.sandbox_order(offramp["_id"])["pendingTimers"]:
        api.advance(offramp["_id"])
    assert api.sandbox_order(offramp["_id"])["status"] == "offramp_success"

    live = api.onramp_order()
    refused = api.client.post(f"/sandbox/orders/{live['orderId']}/late-payment", json={})
    assert refused.status_code == 400
