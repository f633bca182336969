"""A signed webhook for every order status change, delivered to a real receiver on 127.0.0.1."""
from __future__ import annotations

import json
import re

import pytest

from checkout.sandbox import credentials
from checkout.signature import verify

from ..support.sandbox_clock import advance
from ..support.waiting import wait_for
from .sandbox_support import EVM_ADDRESS, TX_HASH, Api, sandbox_factory  # noqa: F401
from .webhook_receiver import Receiver

SECRET = credentials.WEBHOOK_SECRET
LIFECYCLE = ["deposit_awaiting", "deposit_validating", "deposit_invalid", "deposit_canceled",
             "deposit_expired", "deposit_successful", "payout_pending", "payout_failed",
             "payout_successful", "refund_pending", "refund_failed", "refund_successful"]


@pytest.fixture
def receiver():
    server = Receiver()
    yield server
    server.stop()


def payloads(receiver: Receiver, path: str, order_id: str) -> list[dict]:
    found = []
    for item in receiver.at(path):
        verify(item.body, item.headers.get("X-Signature"), SECRET)     # raises if not signed
        payload = json.loads(item.body)
        if payload["data"]["order"]["_id"] == order_id:
            found.append(payload)
    # Deliveries run in parallel and may arrive out of order (spec 6.4): order them as a receiver
    # must, by the order's updatedAt (two changes within one millisecond keep the lifecycle order).
    return sorted(found, key=lambda p: (p["data"]["order"]["updatedAt"],
                                        LIFECYCLE.index(p["data"]["order"]["status"])))


def test_onramp_lifecycle_webhooks(sandbox_factory, receiver):
    app = sandbox_factory(SANDBOX_WEBHOOK_URL=receiver.url("/hooks"),
                          SANDBOX_WEBHOOK_ALLOW_LOOPBACK=True)
    api = Api(app)
    order = api.onramp_order(orderParams="cart-1")
    api.post("/api/onramp/order/confirm", {"orderId": order["orderId"]})
    advance(app, 600)
    wait_for(lambda: len(payloads(receiver, "/hooks", order["orderId"])) == 5, timeout=5)
    events = payloads(receiver, "/hooks", order["orderId"])
    assert [p["data"]["order"]["status"] for p in events] == [
        "deposit_awaiting", "deposit_validating", "deposit_successful", "payout_pending",
        "payout_successful"]
    last = events[-1]
    assert last["event"] == "order-status-change" and "userKyc" in last["data"]
    summary = last["data"]["order"]
    assert summary["type"] == "on_ramp" and summary["flow"] == "regular" and summary["source"] == "api"
    assert summary["merchantOrderParams"] == "cart-1" and summary["userEmail"] == "ada@example.com"
    assert summary["deposit"]["cashout"]["amountBeforeFees"] == order["localCurrencyAmount"]
    assert summary["deposit"]["currencyCode"] == "NGN" and summary["deposit"]["currencyType"] == "fiat"
    assert summary["payout"]["cashout"]["amountAfterFees"] == order["amountCrypto"]
    deposit_cashout = summary["deposit"]["cashout"]
    # Fees make the user pay more local money per dollar received than the plain rate.
    assert deposit_cashout["exchangeRateAfterFees"] > deposit_cashout["exchangeRate"] == 1480
    assert deposit_cashout["amountAfterFees"] < deposit_cashout["amountBeforeFees"]
    meta = summary["payout"]["transaction"]["meta"]
    assert meta["toAddress"] == EVM_ADDRESS and meta["transactionHash"].startswith("0x")
    assert "transferInstructions" not in summary and "expiresAt" not in summary
    first_meta = events[0]["data"]["order"]["payout"]["transaction"]["meta"]
    assert "transactionHash" not in first_meta


def test_per_order_url_overrides_the_global_one(sandbox_factory, receiver):
    app = sandbox_factory(SANDBOX_WEBHOOK_URL=receiver.url("/global"),
                          SANDBOX_WEBHOOK_ALLOW_LOOPBACK=True)
    api = Api(app)
    order = api.onramp_order(webhookUrl=receiver.url("/mine"))
    wait_for(lambda: payloads(receiver, "/mine", order["orderId"]), timeout=3)
    assert app.extensions["sandbox"].webhooks.drain(5)
    assert payloads(receiver, "/global", order["orderId"]) == []


def test_no_destination_no_delivery(sandbox_factory):
    app = sandbox_factory()
    api = Api(app)
    order = api.onramp_order()
    api.post("/api/onramp/order/confirm", {"orderId": order["orderId"]})
    advance(app, 600)
    assert api.get("/api/onramp/order", orderId=order["orderId"])["status"] == "complete"
    assert app.extensions["sandbox"].webhooks.deliveries() == []


def test_offramp_refund_webhooks(sandbox_factory, receiver):
    app = sandbox_factory(SANDBOX_WEBHOOK_URL=receiver.url("/hooks"),
                          SANDBOX_WEBHOOK_ALLOW_LOOPBACK=True)
    api = Api(app)
    order = api.offramp_typed_order(api.offramp_offer(sandboxOutcome="refund"))
    api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH})
    advance(app, 600)
    expected = ["deposit_awaiting", "deposit_validating", "deposit_validating", "deposit_successful",
                "payout_pending", "payout_failed", "refund_pending", "refund_successful"]
    wait_for(lambda: len(payloads(receiver, "/hooks", order["_id"])) == len(expected), timeout=5)
    events = payloads(receiver, "/hooks", order["_id"])
    assert [p["data"]["order"]["status"] for p in events] == expected
    summary = events[-1]["data"]["order"]
    assert summary["type"] == "off_ramp"
    assert summary["deposit"]["transaction"]["meta"] == {
        "transactionHash": TX_HASH, "fromAddress": EVM_ADDRESS, "toAddress": order["toAddress"]}
    assert summary["payout"]["cashout"]["amountAfterFees"] == order["cashout"]["localCurrencyAmount"]
    payout_cashout = summary["payout"]["cashout"]
    assert payout_cashout["exchangeRateAfterFees"] < payout_cashout["exchangeRate"]
    # Sent back to the wallet it came from, by a transaction of its own (not the deposit's).
    refund = summary["refund"]["transaction"]["meta"]
    assert refund["toAddress"] == EVM_ADDRESS
    assert re.fullmatch(r"0x[0-9a-f]{64}", refund["transactionHash"])
    assert refund["transactionHash"] != TX_HASH
    assert events[-2]["data"]["order"]["refund"]["transaction"]["meta"] == {
        "toAddress": EVM_ADDRESS}                       # none yet while it is being sent
    history = api.get(f"/api/offramp/order/{order['_id']}")["statusHistory"]
    assert len(history) == len(expected)


def test_underpayment_shows_what_arrived(sandbox_factory, receiver):
    app = sandbox_factory(SANDBOX_WEBHOOK_URL=receiver.url("/hooks"),
                          SANDBOX_WEBHOOK_ALLOW_LOOPBACK=True)
    api = Api(app)
    order = api.offramp_typed_order(api.offramp_offer(sandboxOutcome="underpayment"))
    api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH})
    advance(app, 600)
    wait_for(lambda: any(p["data"]["order"]["status"] == "deposit_invalid"
                         for p in payloads(receiver, "/hooks", order["_id"])), timeout=5)
    invalid = next(p for p in payloads(receiver, "/hooks", order["_id"])
                   if p["data"]["order"]["status"] == "deposit_invalid")
    assert invalid["data"]["order"]["deposit"]["cashout"]["amountBeforeFees"] == pytest.approx(
        order["cashout"]["cryptoAmount"] / 2)


def test_auth_and_kyc_events_are_opt_in(sandbox_factory, receiver):
    url = receiver.url("/events")
    plain = sandbox_factory(SANDBOX_WEBHOOK_URL=url, SANDBOX_WEBHOOK_ALLOW_LOOPBACK=True)
    plain.extensions["sandbox"].emit_kyc_event({"event": "kyc", "data": {}})
    plain.extensions["sandbox"].emit_auth_event({"event": "auth", "data": {}})
    assert plain.extensions["sandbox"].webhooks.deliveries() == []
    opted = sandbox_factory(SANDBOX_WEBHOOK_URL=url, SANDBOX_WEBHOOK_ALLOW_LOOPBACK=True,
                            SANDBOX_WEBHOOK_EVENTS=["order", "kyc"])
    opted.extensions["sandbox"].emit_kyc_event({"event": "kyc", "data": {"kycStatus": "approved"}})
    opted.extensions["sandbox"].emit_auth_event({"event": "auth", "data": {}})
    deliveries = opted.extensions["sandbox"].webhooks.deliveries()
    assert [d.event for d in deliveries] == ["kyc"]


def test_user_kyc_in_order_webhooks(sandbox_factory, receiver):
    app = sandbox_factory(SANDBOX_WEBHOOK_URL=receiver.url("/hooks"),
                          SANDBOX_WEBHOOK_ALLOW_LOOPBACK=True, SANDBOX_USER_ENDPOINTS=True)
    api = Api(app)
    email = "kyc-done@example.com"
    status = api.post("/api/user/kyc/status", {"email": email, "countryIsoCode": "NG"})
    bvn = next(d for d in status["basicDocuments"] if d["value"] == "BVN")
    api.post("/api/user/kyc/submit", {"email": email, "documentId": bvn["_id"], "userFields": {
        "first_name": "Ada", "last_name": "Obi", "dob": "1990-01-01T00:00:00.000Z",
        "email": email, "id_number": "12345678901"}})
    advance(app, 60)                                    # the review's minute
    assert api.post("/api/user/kyc/status", {"email": email, "countryIsoCode": "NG"})[
        "kycStatus"] == "approved"
    order = api.onramp_order(email=email)
    wait_for(lambda: payloads(receiver, "/hooks", order["orderId"]), timeout=3)
    user_kyc = payloads(receiver, "/hooks", order["orderId"])[0]["data"]["userKyc"]
    assert user_kyc["passedKycType"] == "basic" and user_kyc["passedKycHash"]
    stranger = api.onramp_order(email="nobody@example.com")
    wait_for(lambda: payloads(receiver, "/hooks", stranger["orderId"]), timeout=3)
    assert "passedKycType" not in payloads(receiver, "/hooks", stranger["orderId"])[0]["data"]["userKyc"]


def test_user_kyc_in_order_webhooks_after_a_submission_by_phone(sandbox_factory, receiver):
    """A user created by email, then KYC'd by phone with that email: their orders carry it."""
    app = sandbox_factory(SANDBOX_WEBHOOK_URL=receiver.url("/hooks"),
                          SANDBOX_WEBHOOK_ALLOW_LOOPBACK=True, SANDBOX_USER_ENDPOINTS=True)
    api = Api(app)
    email = "by-phone@example.com"
    api.post("/api/user/tokens", {"email": email, "countryIsoCode": "NG"})
    api.post("/api/kyc/submit", {"phone": "2348012345678", "idType": "BVN", "userFields": {
        "first_name": "Ada", "last_name": "Obi", "dob": "1990-01-01", "email": email,
        "id_number": "12345678901"}})
    advance(app, 60)                                    # the review's minute
    assert api.post("/api/user/kyc/status", {"email": email, "countryIsoCode": "NG"})[
        "kycStatus"] == "approved"
    order = api.onramp_order(email=email)
    wait_for(lambda: payloads(receiver, "/hooks", order["orderId"]), timeout=3)
    user_kyc = payloads(receiver, "/hooks", order["orderId"])[0]["data"]["userKyc"]
    assert user_kyc["passedKycType"] == "basic" and user_kyc["latestKycStatus"] == "approved"


def test_typed_offramp_webhooks_carry_an_empty_user_email(sandbox_factory, receiver):
    """The type-based create body has no email (spec 4.4); userEmail is required (spec 6.2)."""
    app = sandbox_factory(SANDBOX_WEBHOOK_URL=receiver.url("/hooks"),
                          SANDBOX_WEBHOOK_ALLOW_LOOPBACK=True)
    api = Api(app)
    order = api.offramp_typed_order()
    wait_for(lambda: payloads(receiver, "/hooks", order["_id"]), timeout=3)
    first = payloads(receiver, "/hooks", order["_id"])[0]["data"]
    assert first["order"]["userEmail"] == "" and first["userKyc"] == {}
