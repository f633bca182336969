"""The sandbox's test wallet page: the user sends an off-ramp deposit, the checkout confirms it."""
from __future__ import annotations

import re
from html import unescape
from urllib.parse import parse_qs, urlsplit

import pytest

from .sandbox_support import TX_HASH, Api, api, sandbox_app, sandbox_factory  # noqa: F401

RETURN = "http://localhost/checkout/s/abc/offramp/deposit"


def send_path(order_id: str) -> str:
    return f"/sandbox/offramp/{order_id}/send"


def tx_hash_of(location: str) -> str:
    [value] = parse_qs(urlsplit(location).query)["txHash"]
    return value


def test_page_shows_what_to_send_and_one_big_button(api):
    order = api.offramp_typed_order()
    page = api.client.get(send_path(order["_id"]), query_string={"return": RETURN})
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    amount = f'{order["cashout"]["cryptoAmount"]} USDC'
    assert amount in html and ">POLYGON<" in html and order["toAddress"] in html
    assert re.search(r'<button type="submit" class="primary">Send from the test wallet</button>', html)
    assert f'name="return" value="{RETURN}"' in html
    assert 'rel="stylesheet" href="/sandbox/sandbox.css"' in html
    assert 'name="viewport" content="width=device-width, initial-scale=1"' in html
    assert "<script" not in html and "<style" not in html and " style=" not in html


def test_send_makes_up_a_hash_and_goes_back_without_confirming(api):
    order = api.offramp_typed_order()
    sent = api.client.post(send_path(order["_id"]), data={"return": RETURN})
    assert sent.status_code == 303
    location = sent.headers["Location"]
    assert location.startswith(RETURN + "?txHash=0x")
    tx_hash = tx_hash_of(location)
    assert re.fullmatch(r"0x[0-9a-f]{64}", tx_hash)
    # Not confirmed: the checkout does that with the hash, as for a real wallet transfer.
    assert api.get(f"/api/offramp/order/{order['_id']}")["status"] == "initiated"
    assert api.sandbox_order(order["_id"])["testWalletHash"] == tx_hash
    assert tx_hash in api.client.get("/sandbox/orders").get_data(as_text=True)
    assert tx_hash in api.client.get(f"/sandbox/orders/{order['_id']}").get_data(as_text=True)
    confirmed = api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": tx_hash})
    assert confirmed["status"] == "awaiting_transaction_confirmation" and confirmed["hash"] == tx_hash


def test_a_second_press_sends_nothing_new(api):
    order = api.offramp_typed_order()
    first = api.client.post(send_path(order["_id"]), data={"return": RETURN})
    again = api.client.post(send_path(order["_id"]), data={"return": RETURN})
    assert tx_hash_of(again.headers["Location"]) == tx_hash_of(first.headers["Location"])
    html = api.client.get(send_path(order["_id"]), query_string={"return": RETURN}).get_data(
        as_text=True)
    assert "Sent. Transaction hash" in html and "Back with this transaction" in html
    assert "Send from the test wallet" not in html


def test_return_keeps_its_query_and_fragment_and_may_be_a_path(api):
    order = api.offramp_typed_order()
    sent = api.client.post(send_path(order["_id"]),
                           data={"return": "/checkout/s/abc?step=wait&txHash=old#top"})
    location = sent.headers["Location"]
    parts = urlsplit(location)
    assert (parts.scheme, parts.netloc, parts.path, parts.fragment) == (
        "http", "localhost", "/checkout/s/abc", "top")
    query = parse_qs(parts.query)
    assert query["step"] == ["wait"] and query["txHash"] != ["old"] and len(query["txHash"]) == 1
    # The return may also come in the query string of the post.
    other = api.offramp_typed_order()
    by_query = api.client.post(send_path(other["_id"]) + "?return=/done", data={})
    assert by_query.headers["Location"].startswith("http://localhost/done?txHash=0x")


@pytest.mark.parametrize("target", [
    "https://localhost/checkout",              # another scheme
    "http://localhost:8080/checkout",          # another port
    "http://evil.example/checkout",
    "//evil.example/checkout",
    "http://localhost@evil.example/",
    "http://user@localhost/checkout",
    "/\\evil.example/checkout",
    "javascript:alert(1)",
    "http://localhost/a b",
    "http://localhost:99999/",
])
def test_return_must_stay_on_the_same_origin(api, target):
    order = api.offramp_typed_order()
    page = api.client.get(send_path(order["_id"]), query_string={"return": target})
    assert page.status_code == 400 and "return must be a URL on this site" in page.get_json()["message"]
    post = api.client.post(send_path(order["_id"]), data={"return": target})
    assert post.status_code == 400
    assert "testWalletHash" not in api.store.get(order["_id"]).data


def test_the_default_port_is_the_same_origin(api):
    order = api.offramp_typed_order()
    sent = api.client.post(send_path(order["_id"]), data={"return": "http://localhost:80/back"})
    assert sent.status_code == 303 and sent.headers["Location"].startswith("http://localhost:80/back?")


def test_without_return_the_page_shows_the_hash(api):
    order = api.offramp_typed_order()
    sent = api.client.post(send_path(order["_id"]), data={})
    assert sent.status_code == 303 and sent.headers["Location"].endswith(send_path(order["_id"]))
    html = api.client.get(send_path(order["_id"])).get_data(as_text=True)
    assert api.sandbox_order(order["_id"])["testWalletHash"] in html
    assert "<form" not in html          # nothing left to press


def test_an_order_past_initiated_can_no_longer_be_paid(api):
    order = api.offramp_typed_order()
    api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH})
    html = api.client.get(send_path(order["_id"]), query_string={"return": RETURN}).get_data(
        as_text=True)
    assert "can no longer be paid (status: awaiting_transaction_confirmation)" in html
    assert "<form" not in html and f'href="{RETURN}"' in html
    refused = api.client.post(send_path(order["_id"]), data={"return": RETURN})
    assert refused.status_code == 400 and "can no longer be paid" in refused.get_json()["message"]
    cancelled = api.offramp_typed_order()
    api.client.post(f"/sandbox/orders/{cancelled['_id']}/reject", json={})
    assert api.client.post(send_path(cancelled["_id"]), data={}).status_code == 400


def test_virtual_wallet_orders_have_nothing_to_send(api):
    order = api.offramp_typed_order(paymentType="VIRTUAL_WALLET")
    html = api.client.get(send_path(order["_id"])).get_data(as_text=True)
    assert "merchant's virtual wallet" in unescape(html) and "<form" not in html
    assert api.client.post(send_path(order["_id"]), data={}).status_code == 400


def test_only_offramp_orders_and_only_same_site_posts(api):
    onramp = api.onramp_order()
    assert api.client.get(send_path(onramp["orderId"])).status_code == 404
    assert api.client.get(send_path("f" * 24)).get_json() == {"code": "ORDER_NOT_AVAILABLE"}
    order = api.offramp_typed_order()
    cross = api.client.post(send_path(order["_id"]), data={"return": RETURN},
                            headers={"Sec-Fetch-Site": "cross-site"})
    assert cross.status_code == 403
    assert "testWalletHash" not in api.store.get(order["_id"]).data


def test_links_stay_under_the_prefix_the_pages_are_mounted_at(api):
    """The checkout serves these pages under ``{prefix}/sandbox/`` (a script name)."""
    order = api.offramp_typed_order()
    page = api.client.get(send_path(order["_id"]), base_url="http://localhost/checkout",
                          query_string={"return": "/checkout/s/abc"})
    html = page.get_data(as_text=True)
    assert f'action="/checkout/sandbox/offramp/{order["_id"]}/send"' in html
    assert 'href="/checkout/sandbox/sandbox.css"' in html
    console = api.client.get("/sandbox/orders").get_data(as_text=True)
    assert f'href="{send_path(order["_id"])}"' in console
