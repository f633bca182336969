"""/api/onramp/*: validation, quotes, orders, lifecycles, forced outcomes and transfer instructions."""
from __future__ import annotations

import pytest

from checkout.sandbox.orders import OUTCOMES, QUOTE_TTL
from checkout.sandbox.validation import MEMO_NETWORKS, ONRAMP_NETWORKS, InvalidRequest, check_memo

from ..support.sandbox_clock import advance
from .sandbox_support import (  # noqa: F401
    EVM_ADDRESS,
    HEADERS,
    Api,
    api,
    sandbox_app,
    sandbox_factory,
)

GOOD_QUOTE = {"network": "CELO", "asset": "USDC", "currency": "local", "amount": "5000",
              "countryIsoCode": "NG", "paymentChannel": "bank"}


# -- reference endpoints --------------------------------------------------------------------------

def test_assets_and_payment_channels(api):
    pairs = api.get("/api/onramp/assets")
    assert len(pairs) == 23 and {"network": "CELO", "asset": "CKES"} in pairs
    countries = api.get("/api/onramp/payment-channels")
    nigeria = next(c for c in countries if c["countryIsoCode"] == "NG")
    assert {ch["paymentChannel"] for ch in nigeria["paymentChannels"]} >= {"bank", "airtime"}


def test_limits(api):
    limits = api.get("/api/onramp/limits", network="CELO", countryIsoCode="NG",
                     paymentChannel="bank")
    assert set(limits) == {"minUsd", "maxUsd", "minLocalCurrency", "maxLocalCurrency",
                           "minCrypto", "maxCrypto"}
    assert 0 < limits["minUsd"] < limits["maxUsd"]


@pytest.mark.parametrize("params, message", [
    ({"network": None}, "network is required"),
    ({"network": "DOGE"}, "network must be one of"),
    ({"asset": "BTC"}, "asset must be one of"),
    ({"asset": "CKES", "network": "POLYGON"}, "not available on network"),
    ({"currency": "usd"}, "currency must be one of"),
    ({"amount": None}, "amount is required"),
    ({"amount": "-5"}, "amount must be a number"),
    ({"amount": "0"}, "amount must be greater than 0"),
    ({"amount": "1e9"}, "amount must be a number"),
    ({"amount": "nan"}, "amount must be a number"),
    ({"countryIsoCode": "nigeria"}, "countryIsoCode must be"),
    ({"countryIsoCode": "XX"}, "not supported"),
    ({"paymentChannel": "paybill"}, "paymentChannel must be one of"),
    ({"amount": "1"}, "1"),                              # below the corridor's minimum
    ({"sandboxOutcome": "jackpot"}, "sandboxOutcome must be one of"),
])
def test_best_offer_rejects_bad_input(api, params, message):
    query = {k: v for k, v in {**GOOD_QUOTE, **params}.items() if v is not None}
    body = api.get("/api/onramp/best-offer", expect=400, **query)
    assert message in body["message"]


def test_best_offer_shape(api):
    quote = api.onramp_quote()
    assert len(quote["quoteId"]) == 24 and int(quote["quoteId"], 16) >= 0
    assert quote["offer"]["currencyIsoCode"] == "NGN"
    assert quote["cashout"]["localCurrencyAmount"] == 5000


def test_repeated_parameter_is_refused(api):
    response = api.client.get("/api/onramp/best-offer?network=CELO&network=BASE", headers=HEADERS)
    assert response.status_code == 400 and "network" in response.get_json()["message"]


# -- create ---------------------------------------------------------------------------------------

def test_create_order_fields(api):
    quote = api.onramp_quote()
    order = api.onramp_order(quote, orderParams="cart-17")
    assert order["_id"] == order["orderId"] and len(order["_id"]) == 24
    assert order["status"] == "swap_initiated"
    assert order["localCurrencyAmount"] == 5000 and order["currencyIsoCode"] == "NGN"
    assert order["amount"] == quote["cashout"]["totalAmountUsd"]
    assert order["amountCrypto"] == quote["cashout"]["withdrawAmountCrypto"]
    assert order["feeAmountLocalCurrency"] == quote["cashout"]["feeAmountLocalCurrency"]
    assert order["orderParams"] == "cart-17" and order["address"] == EVM_ADDRESS
    assert order["date"].endswith("Z") and order["expiresAt"] > order["date"]


@pytest.mark.parametrize("overrides, message", [
    ({"quoteId": None}, "quoteId is required"),
    ({"quoteId": "0" * 24}, "quoteId is unknown"),
    ({"email": "not-an-email"}, "email must be an email address"),
    ({"email": None}, "email is required"),
    ({"userIp": "::1"}, "userIp must be an IPv4 address"),
    ({"userIp": "300.1.1.1"}, "userIp must be an IPv4 address"),
    ({"amount": 5001}, "amount does not match the quote"),
    ({"amount": "5000"}, "amount must be a JSON number"),
    ({"amount": 10 ** 400}, "amount must be a finite number"),
    ({"amount": True}, "amount must be a number"),
    ({"extraFields": {"phoneNumber": 5}}, "extraFields.phoneNumber must be a string"),
    ({"extraFields": "phone"}, "extraFields must be an object"),
    ({"network": "BASE"}, "network does not match the quote"),
    ({"asset": "USDT"}, "asset does not match the quote"),
    ({"currency": "crypto"}, "currency does not match the quote"),
    ({"address": "0x1234"}, "address is not a valid CELO address"),
    ({"address": "0x52908400098527886E0F7030069857D2E4169Ee7"}, "not a valid CELO address"),
    ({"memo": "123"}, "memo is not supported on CELO"),
    ({"surprise": 1}, "unknown field(s) in body: surprise"),
    ({"redirectUrl": "javascript:alert(1)"}, "redirectUrl must be an absolute"),
    ({"extraFields": {"phoneNumber": "1"}}, "extraFields has unknown field(s): phoneNumber"),
])
def test_create_order_rejects_bad_input(api, overrides, message):
    quote = api.onramp_quote()
    body = {"quoteId": quote["quoteId"], "network": "CELO", "asset": "USDC", "currency": "local",
            "amount": 5000, "email": "ada@example.com", "userIp": "203.0.113.7",
            "address": EVM_ADDRESS}
    body.update(overrides)
    body = {k: v for k, v in body.items() if v is not None}
    response = api.post("/api/onramp/order/create", body, expect=400)
    assert message in response["message"]


def test_malformed_json_body_is_400(api):
    response = api.client.post("/api/onramp/order/create", data="{nope", headers=HEADERS,
                               content_type="application/json")
    assert response.status_code == 400 and "not valid JSON" in response.get_json()["message"]
    response = api.client.post("/api/onramp/order/create", data="[]", headers=HEADERS,
                               content_type="application/json")
    assert response.status_code == 400 and "JSON object" in response.get_json()["message"]


def test_required_fields_of_the_offer_are_enforced(api):
    quote = api.onramp_quote(countryIsoCode="KE", paymentChannel="mobile_money", amount="1000")
    assert "phoneNumber" in quote["offer"]["requiredFields"]
    base = {"quote": quote, "quote_params": {"amount": "1000"}}
    response = api.client.post("/api/onramp/order/create", headers=HEADERS, json={
        "quoteId": quote["quoteId"], "network": "CELO", "asset": "USDC", "currency": "local",
        "amount": 1000, "email": "a@example.com", "userIp": "203.0.113.7"})
    assert response.status_code == 400
    assert "extraFields.phoneNumber is required" in response.get_json()["message"]
    order = api.onramp_order(**base, extraFields={"phoneNumber": "254110611756"})
    assert order["phoneNumber"] == "254110611756"


@pytest.mark.parametrize("network, asset, address, memo", [
    ("SOLANA", "USDC", "7EcDhSYGxXyscszYEp35KHN8vvw3svAuLKTzXwCFLtV", None),
    ("STELLAR", "USDC", "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ", "12345"),
    ("TON", "USDT", "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N", "shop-17"),
])
def test_addresses_of_other_networks(api, network, asset, address, memo):
    quote = api.onramp_quote(network=network, asset=asset)
    order = api.onramp_order(quote, network=network, asset=asset, address=address, memo=memo)
    assert order["address"] == address and order.get("memo") == memo


@pytest.mark.parametrize("network, asset, address", [
    ("SOLANA", "USDC", "0OIl" + "1" * 40),
    ("STELLAR", "USDC", "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGA"),
    ("TON", "USDT", "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2M"),
    ("CELO", "USDC", "GA7QYNF7SOWQ3GLR2BGMZEHXAVIRZA4KVWLTJJFC7MGXUA74P7UJVSGZ"),
])
def test_wrong_addresses_are_refused(api, network, asset, address):
    quote = api.onramp_quote(network=network, asset=asset)
    body = {"quoteId": quote["quoteId"], "network": network, "asset": asset, "currency": "local",
            "amount": 5000, "email": "a@example.com", "userIp": "203.0.113.7", "address": address}
    assert "not a valid" in api.post("/api/onramp/order/create", body, expect=400)["message"]


def test_quote_is_single_use(api):
    quote = api.onramp_quote()
    api.onramp_order(quote)
    body = {"quoteId": quote["quoteId"], "network": "CELO", "asset": "USDC", "currency": "local",
            "amount": 5000, "email": "a@example.com", "userIp": "203.0.113.7"}
    assert "already been used" in api.post("/api/onramp/order/create", body, expect=400)["message"]


def test_failed_create_does_not_use_up_the_quote(api):
    quote = api.onramp_quote()
    body = {"quoteId": quote["quoteId"], "network": "CELO", "asset": "USDC", "currency": "local",
            "amount": 4000, "email": "a@example.com", "userIp": "203.0.113.7"}
    api.post("/api/onramp/order/create", body, expect=400)
    api.onramp_order(quote)


def test_quote_expires(api):
    quote = api.onramp_quote()
    advance(api.app, QUOTE_TTL)                                   # the quote's ten minutes pass
    body = {"quoteId": quote["quoteId"], "network": "CELO", "asset": "USDC", "currency": "local",
            "amount": 5000, "email": "a@example.com", "userIp": "203.0.113.7"}
    assert api.post("/api/onramp/order/create", body, expect=400) == {"message": "The quote is expired"}


# -- get one --------------------------------------------------------------------------------------

def test_get_order_by_id_or_params(api):
    first = api.onramp_order(orderParams="ref-1")
    second = api.onramp_order(orderParams="ref-1")
    assert api.get("/api/onramp/order", orderId=first["orderId"])["_id"] == first["_id"]
    assert api.get("/api/onramp/order", orderParams="ref-1")["_id"] == second["_id"]     # newest
    not_available = {"code": "ORDER_NOT_AVAILABLE"}
    assert api.get("/api/onramp/order", orderId="f" * 24, expect=404) == not_available
    assert api.get("/api/onramp/order", orderParams="nope", expect=404) == not_available
    assert api.get("/api/onramp/order", orderId=first["orderId"], orderParams="other",
                   expect=404) == {"code": "ORDER_NOT_AVAILABLE"}
    assert "orderId or orderParams" in api.get("/api/onramp/order", expect=400)["message"]


def test_off_ramp_order_is_not_an_on_ramp_order(api):
    order = api.offramp_typed_order()
    answer = api.get("/api/onramp/order", orderId=order["_id"], expect=404)
    assert answer["code"] == "ORDER_NOT_AVAILABLE"


# -- lifecycles (real-time app, stepped with the sandbox's advance action) ------------------------

def step_through(api: Api, order_id: str) -> list[str]:
    while api.sandbox_order(order_id)["pendingTimers"]:
        api.advance(order_id)
    return api.statuses(order_id)


def test_manual_bank_order_lifecycle(api):
    order = api.onramp_order()
    instructions = order["transferInstructions"]
    assert instructions["type"] == "manual"
    details = {d["id"]: d["value"] for d in instructions["transferDetails"]}
    assert set(details) >= {"recipientBankName", "recipientBankAccountNumber",
                            "recipientBankAccountName", "amountToSend", "bankTransferNarration"}
    assert details["amountToSend"] == "5000 NGN"
    assert api.post("/api/onramp/order/confirm", {"orderId": order["orderId"]}) == "order confirmed"
    assert step_through(api, order["orderId"]) == [
        "swap_initiated", "swap_buyer_confirmed", "swap_seller_confirmed", "pending", "complete"]
    done = api.get("/api/onramp/order", orderId=order["orderId"])
    assert done["status"] == "complete" and done["hash"].startswith("0x")


def test_confirm_only_from_initiated(api):
    order = api.onramp_order()
    api.post("/api/onramp/order/confirm", {"orderId": order["orderId"]})
    again = api.post("/api/onramp/order/confirm", {"orderId": order["orderId"]}, expect=400)
    assert "swap_buyer_confirmed" in again["message"]
    assert api.post("/api/onramp/order/confirm", {"orderId": "a" * 24}, expect=404) == {
        "code": "ORDER_NOT_AVAILABLE"}
    assert api.post("/api/onramp/order/confirm", {}, expect=400)["message"] == "orderId is required"
    assert "unknown field" in api.post("/api/onramp/order/confirm",
                                       {"orderId": order["orderId"], "x": 1}, expect=400)["message"]


@pytest.mark.parametrize("outcome, final", [
    ("deposit_success", ["swap_seller_confirmed", "pending", "complete"]),
    ("payout_success", ["swap_seller_confirmed", "pending", "complete"]),
    ("overpayment", ["swap_seller_confirmed", "pending", "complete"]),
    ("deposit_invalid", ["swap_seller_rejected"]),
    ("underpayment", ["swap_seller_rejected"]),
    ("payout_failed", ["swap_seller_confirmed", "pending", "failed"]),
    ("refund", ["swap_seller_confirmed", "pending", "failed"]),
    ("expire", ["swap_expired"]),
    # On-ramp has no on-chain deposit and no refund statuses: the nearest endings.
    ("transaction_failed", ["swap_seller_rejected"]),
    ("refund_failed", ["swap_seller_confirmed", "pending", "failed"]),
])
def test_forced_outcomes_from_the_quote(api, outcome, final):
    order = api.onramp_order(quote_params={"sandboxOutcome": outcome})
    api.post("/api/onramp/order/confirm", {"orderId": order["orderId"]})
    assert step_through(api, order["orderId"]) == ["swap_initiated", "swap_buyer_confirmed", *final]
    assert api.sandbox_order(order["orderId"])["outcome"] == outcome


def test_outcome_set_on_the_order_and_by_config(api, sandbox_factory):
    order = api.onramp_order()
    response = api.client.post(f"/sandbox/orders/{order['orderId']}/outcome",
                               json={"outcome": "payout_failed"})
    assert response.get_json()["outcome"] == "payout_failed"
    api.post("/api/onramp/order/confirm", {"orderId": order["orderId"]})
    assert step_through(api, order["orderId"])[-1] == "failed"
    bad = api.client.post(f"/sandbox/orders/{order['orderId']}/outcome", json={"outcome": "x"})
    assert bad.status_code == 400

    other = Api(sandbox_factory(SANDBOX_OUTCOME="deposit_invalid"))
    order = other.onramp_order()
    other.post("/api/onramp/order/confirm", {"orderId": order["orderId"]})
    assert step_through(other, order["orderId"])[-1] == "swap_seller_rejected"


def test_unpaid_order_expires_and_buyer_can_reject(api):
    unpaid = api.onramp_order()
    assert step_through(api, unpaid["orderId"]) == ["swap_initiated", "swap_expired"]
    assert api.post("/api/onramp/order/confirm", {"orderId": unpaid["orderId"]}, expect=400)
    rejected = api.onramp_order()
    response = api.client.post(f"/sandbox/orders/{rejected['orderId']}/reject", json={})
    assert response.get_json()["status"] == "swap_buyer_rejected"
    assert api.sandbox_order(rejected["orderId"])["pendingTimers"] == []


def test_unpaid_order_expires_once_its_five_minutes_have_passed(api):
    order = api.onramp_order()
    advance(api.app, 299)
    assert api.get("/api/onramp/order", orderId=order["orderId"])["status"] == "swap_initiated"
    advance(api.app, 1)
    assert api.get("/api/onramp/order", orderId=order["orderId"])["status"] == "swap_expired"


def test_whole_lifecycle_runs_as_time_passes(api):
    order = api.onramp_order()
    api.post("/api/onramp/order/confirm", {"orderId": order["orderId"]})
    advance(api.app, 600)
    assert api.get("/api/onramp/order", orderId=order["orderId"])["status"] == "complete"
    history = api.sandbox_order(order["orderId"])["statusHistory"]
    stamps = [entry["changedAt"] for entry in history]
    assert stamps == sorted(stamps)


def test_advance_with_nothing_pending_is_400(api):
    order = api.onramp_order()
    step_through(api, order["orderId"])
    response = api.client.post(f"/sandbox/orders/{order['orderId']}/advance", json={})
    assert response.status_code == 400


# -- transfer instruction types -------------------------------------------------------------------

def test_redirect_payment_page(api):
    quote = api.onramp_quote(countryIsoCode="GH", paymentChannel="bank", amount="100")
    order = api.onramp_order(quote, quote_params={"amount": "100"},
                             redirectUrl="https://shop.example/back?o=1")
    instructions = order["transferInstructions"]
    assert instructions["type"] == "redirect" and instructions["redirectedToPaymentUrl"] is False
    page_path = instructions["paymentUrl"].removeprefix("http://localhost")
    page = api.client.get(page_path)
    assert page.status_code == 200 and b"<form" in page.data and b"<script" not in page.data
    assert api.get("/api/onramp/order", orderId=order["orderId"])["transferInstructions"][
        "redirectedToPaymentUrl"] is True
    paid = api.client.post(page_path, data={"action": "pay"})
    assert paid.status_code == 302 and paid.headers["Location"] == "https://shop.example/back?o=1"
    assert api.get("/api/onramp/order", orderId=order["orderId"])["status"] == "swap_buyer_confirmed"
    # Pressed again (a double tap, a tab left open): back to the shop as the first time, and the
    # order is paid once.
    again = api.client.post(page_path, data={"action": "pay"})
    assert again.status_code == 302 and again.headers["Location"] == "https://shop.example/back?o=1"
    assert api.statuses(order["orderId"]) == ["swap_initiated", "swap_buyer_confirmed"]


def test_redirect_payment_page_cancel(api):
    quote = api.onramp_quote(countryIsoCode="GH", paymentChannel="bank", amount="100")
    order = api.onramp_order(quote, quote_params={"amount": "100"})
    page_path = order["transferInstructions"]["paymentUrl"].removeprefix("http://localhost")
    cancelled = api.client.post(page_path, data={"action": "cancel"})
    assert cancelled.status_code == 200 and b"swap_buyer_rejected" in cancelled.data
    assert api.statuses(order["orderId"]) == ["swap_initiated", "swap_buyer_rejected"]
    assert api.client.post(page_path, data={"action": "steal"}).status_code == 400


def test_payment_page_only_for_redirect_orders(api):
    order = api.onramp_order()
    assert api.client.get(f"/sandbox/pay/{order['orderId']}").status_code == 400
    assert api.client.get(f"/sandbox/pay/{'0' * 24}").status_code == 404


def test_ussd_order(api):
    quote = api.onramp_quote(paymentChannel="airtime", carrierCode="MTN", amount="5000")
    order = api.onramp_order(quote, extraFields={"phoneNumber": "2348012345678"})
    instructions = order["transferInstructions"]
    assert instructions["type"] == "ussd" and "{pin}" in instructions["ussdCode"]
    api.post("/api/onramp/order/confirm", {"orderId": order["orderId"]})
    assert step_through(api, order["orderId"])[-1] == "complete"


@pytest.mark.parametrize("amount,whole,warned", [("80.50", "81", True), ("80", "80", False),
                                                  ("80.01", "81", True)])
def test_ussd_code_carries_whole_units_rounded_up(api, amount, whole, warned):
    """80.50 ZMW once became ``*737*000*8050*{pin}#`` (a hundred times the amount)."""
    quote = api.onramp_quote(countryIsoCode="ZM", paymentChannel="mobile_money", amount=amount,
                             carrierCode="MTN")
    order = api.onramp_order(quote, quote_params={"amount": amount},
                             extraFields={"phoneNumber": "260971234567"})
    instructions = order["transferInstructions"]
    assert instructions["type"] == "ussd"
    assert instructions["ussdCode"] == f"*737*000*{whole}*{{pin}}#"
    [detail] = instructions["transferDetails"]
    assert detail["id"] == "amountToSend" and detail["value"] == f"{whole} ZMW"
    assert ("warningText" in instructions) is warned
    if warned:
        assert f"{whole} ZMW" in instructions["warningText"] and amount in instructions["warningText"]


@pytest.mark.parametrize("network", sorted(set(ONRAMP_NETWORKS) - MEMO_NETWORKS))
def test_memo_is_refused_on_networks_without_memos(network):
    """``memo`` is a create key beyond spec 4.1's list (orders carry it, spec 2.4); on a network
    without memos it would be silently lost, so it is refused."""
    with pytest.raises(InvalidRequest, match=f"memo is not supported on {network}"):
        check_memo(network, "123")
    assert check_memo(network, None) is None


def push_quote(api: Api, **extra):
    return api.onramp_quote(countryIsoCode="KE", paymentChannel="mobile_money", amount="1000",
                            **extra)


def test_stk_push_is_approved_on_the_phone(api):
    order = api.onramp_order(push_quote(api), quote_params={"amount": "1000"},
                             extraFields={"phoneNumber": "254110611756"})
    instructions = order["transferInstructions"]
    assert instructions["type"] == "stk_push"
    assert instructions["intermediateActionAttempts"] == 1
    assert instructions["intermediateActionMaxAttempts"] == 3
    assert instructions["isIntermediateActionAvailable"] is False       # too early to retry
    assert instructions["intermediateActionNextAttemptAvailableAt"] > order["date"]
    assert instructions["intermediateActionTimeoutMs"] == 60_000
    api.advance(order["orderId"])                                       # the user approves
    assert api.statuses(order["orderId"]) == ["swap_initiated", "swap_buyer_confirmed"]


def test_stk_push_retries_within_limits(api):
    order = api.onramp_order(push_quote(api, sandboxOutcome="expire"),
                             quote_params={"amount": "1000"},
                             extraFields={"phoneNumber": "254110611756"})
    order_id = order["orderId"]
    # The next push is 30 s away: a retry right after the order is too early.
    early = api.post("/api/onramp/order/retry", {"orderId": order_id}, expect=400)
    assert "next push can be sent at" in early["message"]
    for attempt in (2, 3):
        advance(api.app, 30)                                # 30 s between pushes
        assert api.get("/api/onramp/order", orderId=order_id)["transferInstructions"][
            "isIntermediateActionAvailable"]
        retried = api.post("/api/onramp/order/retry", {"orderId": order_id})
        assert retried["transferInstructions"]["intermediateActionAttempts"] == attempt
    advance(api.app, 30)
    assert api.get("/api/onramp/order", orderId=order_id)["transferInstructions"][
        "isIntermediateActionAvailable"] is False
    beyond = api.post("/api/onramp/order/retry", {"orderId": order_id}, expect=400)
    assert "No push attempts left" in beyond["message"]


def test_retry_needs_a_push_order(api):
    order = api.onramp_order()
    assert "no phone push" in api.post("/api/onramp/order/retry", {"orderId": order["orderId"]},
                                       expect=400)["message"]


def otp_order(api: Api, **quote_extra) -> dict:
    quote = api.onramp_quote(countryIsoCode="GH", paymentChannel="mobile_money", amount="100",
                             carrierCode="MTN", **quote_extra)
    return api.onramp_order(quote, quote_params={"amount": "100"},
                            extraFields={"phoneNumber": "233241234567"})


def test_otp_then_push(api):
    order = otp_order(api)
    order_id = order["orderId"]
    instructions = order["transferInstructions"]
    assert instructions["type"] == "otp_stk_push" and instructions["otpVerified"] is False
    assert instructions["fieldsToConfirmOrder"][0]["name"] == "otpCode"
    assert instructions["intermediateActionAttempts"] == 0
    assert "OTP" in api.post("/api/onramp/order/confirm", {"orderId": order_id}, expect=400)["message"]
    wrong = api.post("/api/onramp/order/otp", {"orderId": order_id, "otp": "000000"}, expect=400)
    assert "2 attempt(s) left" in wrong["message"]
    verified = api.post("/api/onramp/order/otp", {"orderId": order_id, "otp": "123456"})
    assert verified["transferInstructions"]["otpVerified"] is True
    assert verified["transferInstructions"]["intermediateActionAttempts"] == 1
    assert "already been verified" in api.post("/api/onramp/order/otp",
                                               {"orderId": order_id, "otp": "123456"},
                                               expect=400)["message"]
    assert step_through(api, order_id)[-1] == "complete"


def test_otp_attempts_exhausted_expire_the_order(api):
    order_id = otp_order(api)["orderId"]
    for left in (2, 1):
        body = api.post("/api/onramp/order/otp", {"orderId": order_id, "otp": "999999"}, expect=400)
        assert f"{left} attempt(s) left" in body["message"]
    last = api.post("/api/onramp/order/otp", {"orderId": order_id, "otp": "999999"}, expect=400)
    assert "expired" in last["message"]
    assert api.get("/api/onramp/order", orderId=order_id)["status"] == "swap_expired"
    after = api.post("/api/onramp/order/otp", {"orderId": order_id, "otp": "123456"}, expect=400)
    assert "expired" in after["message"]


def test_otp_validation(api):
    order_id = otp_order(api)["orderId"]
    assert api.post("/api/onramp/order/otp", {"orderId": order_id},
                    expect=400)["message"] == "otp is required"
    assert api.post("/api/onramp/order/otp", {"orderId": order_id, "otp": 123456},
                    expect=400)["message"] == "otp must be a string"
    plain = api.onramp_order()
    assert "does not require an OTP" in api.post("/api/onramp/order/otp",
                                                 {"orderId": plain["orderId"], "otp": "123456"},
                                                 expect=400)["message"]


def test_every_outcome_is_known():
    assert set(OUTCOMES) == {"deposit_success", "deposit_invalid", "underpayment", "overpayment",
                             "payout_success", "payout_failed", "refund", "expire",
                             "transaction_failed", "refund_failed"}


def test_public_url_of_sandbox_pages(sandbox_factory):
    api = Api(sandbox_factory(SANDBOX_PUBLIC_URL="https://shop.example/sandbox-upstream/"))
    quote = api.onramp_quote(countryIsoCode="GH", paymentChannel="bank", amount="100")
    order = api.onramp_order(quote, quote_params={"amount": "100"})
    assert order["transferInstructions"]["paymentUrl"] == (
        f"https://shop.example/sandbox-upstream/sandbox/pay/{order['orderId']}")
    assert order["resumeUrl"] == f"https://shop.example/sandbox-upstream/sandbox/orders/{order['orderId']}"
