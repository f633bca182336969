"""/api/offramp/*: both variants, validation, lifecycles with statusHistory, outcomes and filters."""
from __future__ import annotations

import pytest

from checkout.sandbox.orders import QUOTE_TTL

from ..support.sandbox_clock import advance
from .sandbox_support import (  # noqa: F401
    EVM_ADDRESS,
    OTHER_EVM_ADDRESS,
    TX_HASH,
    Api,
    api,
    sandbox_app,
    sandbox_factory,
)


def step_through(api: Api, order_id: str) -> list[str]:
    while api.sandbox_order(order_id)["pendingTimers"]:
        api.advance(order_id)
    return [entry["status"] for entry in api.get(f"/api/offramp/order/{order_id}")["statusHistory"]]


def test_reference_endpoints(api):
    assert len(api.get("/api/offramp/assets")) == 9
    assert api.get("/api/offramp/wallets") == api.get("/api/offramp/assets")
    channels = api.get("/api/offramp/payment-channels")
    kenya = next(c for c in channels if c["countryIsoCode"] == "KE")
    assert "paybill" in {ch["paymentChannel"] for ch in kenya["paymentChannels"]}
    countries = api.get("/api/offramp/countries")
    assert all("offrampTypes" in c for c in countries)


def test_limits_of_both_variants(api):
    channel = api.get("/api/offramp/limits", paymentChannel="mobile_money", countryIsoCode="KE",
                      network="CELO", asset="USDT")
    typed = api.get("/api/offramp/limits", type="mobile_money", country="KE")
    assert set(channel) == set(typed) == {"minUsd", "maxUsd", "minLocalCurrency", "maxLocalCurrency"}
    assert channel == typed
    assert "asset is required" in api.get("/api/offramp/limits", paymentChannel="bank",
                                          countryIsoCode="KE", network="CELO", expect=400)["message"]
    assert "country is required" in api.get("/api/offramp/limits", type="bank", expect=400)["message"]
    assert "not available for off-ramp" in api.get(
        "/api/offramp/limits", paymentChannel="bank", countryIsoCode="KE", network="SOLANA",
        asset="USDC", expect=400)["message"]


@pytest.mark.parametrize("params, message", [
    ({"amount": None}, "amount is required"),
    ({"amount": "abc"}, "amount must be a number"),
    ({"currency": "eur"}, "currency must be one of"),
    ({"type": "cash"}, "type must be one of"),
    ({"network": "TON", "asset": "USDT"}, "not available for off-ramp"),
    ({"country": "ng"}, "country must be"),
    ({"amount": "100000"}, "100000"),
])
def test_typed_best_offer_validation(api, params, message):
    query = {"amount": "20", "currency": "usd", "country": "NG", "type": "bank",
             "network": "POLYGON", "asset": "USDC", **params}
    query = {k: v for k, v in query.items() if v is not None}
    assert message in api.get("/api/offramp/best-offer", expect=400, **query)["message"]


def test_channel_best_offer_needs_channel_params(api):
    body = api.get("/api/offramp/best-offer", amount="10", currency="usd", network="CELO",
                   asset="USDT", expect=400)
    assert "countryIsoCode is required" in body["message"]


def test_offer_shapes(api):
    typed = api.offramp_offer()
    assert set(typed) == {"offer", "cashout"} and len(typed["offer"]["_id"]) == 24
    assert typed["offer"]["type"] == "bank"
    channel = api.get("/api/offramp/best-offer", amount="10", currency="usd",
                      countryIsoCode="KE", paymentChannel="mobile_money", network="CELO",
                      asset="USDT")
    assert set(channel) == {"quoteId", "offer", "cashout"}
    assert channel["offer"]["paymentChannel"] == "mobile_money"


def test_typed_order_lifecycle(api):
    offer = api.offramp_offer()
    order = api.offramp_typed_order(offer, orderParams="sale-9")
    assert order["status"] == "initiated" and order["offerId"] == offer["offer"]["_id"]
    assert order["paymentType"] == "CRYPTO_WALLET" and order["fromAddress"] == EVM_ADDRESS
    assert order["toAddress"].startswith("0x") and len(order["toAddress"]) == 42
    assert order["expiresAt"] > order["createdAt"]
    assert order["cashout"] == offer["cashout"]
    shown = {f["label"]: f["value"] for f in order["offerRequiredFields"]}
    assert shown["Bank"] == "First Bank of Nigeria"
    assert order["statusHistory"] == [{"status": "initiated", "changedAt": order["createdAt"]}]
    confirmed = api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH})
    assert confirmed["status"] == "awaiting_transaction_confirmation" and confirmed["hash"] == TX_HASH
    assert step_through(api, order["_id"]) == [
        "initiated", "awaiting_transaction_confirmation", "validating_transaction",
        "transaction_confirmed", "offramp_pending", "offramp_success"]
    again = api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH},
                     expect=400)
    assert "offramp_success" in again["message"]


@pytest.mark.parametrize("outcome, tail", [
    ("deposit_invalid", ["validating_transaction", "transaction_invalid"]),
    ("underpayment", ["validating_transaction", "transaction_invalid", "refunding", "refunded"]),
    ("overpayment", ["validating_transaction", "transaction_confirmed", "offramp_pending",
                     "offramp_success"]),
    ("payout_failed", ["validating_transaction", "transaction_confirmed", "offramp_pending",
                       "offramp_failed", "offramp_retry", "offramp_failed"]),
    ("refund", ["validating_transaction", "transaction_confirmed", "offramp_pending",
                "offramp_failed", "refunding", "refunded"]),
    ("expire", ["expired"]),
    ("transaction_failed", ["transaction_failed"]),
    ("refund_failed", ["validating_transaction", "transaction_confirmed", "offramp_pending",
                       "offramp_failed", "refunding", "refund_failed"]),
])
def test_forced_outcomes(api, outcome, tail):
    order = api.offramp_typed_order(api.offramp_offer(sandboxOutcome=outcome))
    api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH})
    assert step_through(api, order["_id"]) == ["initiated", "awaiting_transaction_confirmation", *tail]


def test_unpaid_order_expires(api):
    order = api.offramp_typed_order()
    assert step_through(api, order["_id"]) == ["initiated", "expired"]


def test_virtual_wallet_pays_by_itself(api):
    order = api.offramp_typed_order(paymentType="VIRTUAL_WALLET")
    # The merchant's balance pays it: a hash from the user is refused, and changes nothing.
    refused = api.post("/api/offramp/confirm-order",
                       {"orderId": order["_id"], "hash": "0x" + "ab" * 32}, expect=400)
    assert "merchant's balance" in refused["message"]
    api.advance(order["_id"])
    paid = api.get(f"/api/offramp/order/{order['_id']}")
    assert paid["status"] == "awaiting_transaction_confirmation" and paid["hash"].startswith("0x")


@pytest.mark.parametrize("overrides, message", [
    ({"offerId": "0" * 24}, "offerId is unknown"),
    ({"paymentType": "CASH"}, "paymentType must be one of"),
    ({"address": None}, "address is required"),
    ({"address": "0xnothex"}, "not a valid POLYGON address"),
    ({"amount": 21}, "amount does not match the quote"),
    ({"currency": "local"}, "currency does not match the quote"),
    ({"network": "CELO"}, "network does not match the quote"),
    ({"requiredFields": {"bankCode": "011:02"}}, "requiredFields.bankAccountNumber is required"),
    ({"requiredFields": {"bankCode": "999", "bankAccountNumber": "1"}},
     "requiredFields.bankCode must be one of"),
    ({"ip": "localhost"}, "ip must be an IPv4 address"),
    ({"email": "x@example.com"}, "unknown field(s) in body: email"),
])
def test_create_order_validation(api, overrides, message):
    offer = api.offramp_offer()
    body = {"offerId": offer["offer"]["_id"], "paymentType": "CRYPTO_WALLET", "network": "POLYGON",
            "asset": "USDC", "address": EVM_ADDRESS, "currency": "usd", "amount": 20,
            "requiredFields": {"bankCode": "011:02", "bankAccountNumber": "0123456789"}}
    body.update(overrides)
    body = {k: v for k, v in body.items() if v is not None}
    assert message in api.post("/api/offramp/create-order", body, expect=400)["message"]


def test_offer_is_single_use_and_expires(api):
    offer = api.offramp_offer()
    api.offramp_typed_order(offer)
    body = {"offerId": offer["offer"]["_id"], "paymentType": "CRYPTO_WALLET", "network": "POLYGON",
            "asset": "USDC", "address": EVM_ADDRESS, "currency": "usd", "amount": 20,
            "requiredFields": {"bankCode": "011:02", "bankAccountNumber": "0123456789"}}
    assert "already been used" in api.post("/api/offramp/create-order", body, expect=400)["message"]
    offer = api.offramp_offer()
    advance(api.app, QUOTE_TTL)                                   # the offer's ten minutes pass
    expired = api.post("/api/offramp/validate-fields",
                       {"offerId": offer["offer"]["_id"], "requiredFields": {}}, expect=400)
    assert expired == {"message": "The quote is expired"}


def test_confirm_order_validation(api):
    order = api.offramp_typed_order()
    assert "hash must be a transaction hash" in api.post(
        "/api/offramp/confirm-order", {"orderId": order["_id"], "hash": "0x12"}, expect=400)["message"]
    assert api.post("/api/offramp/confirm-order", {"orderId": "b" * 24, "hash": TX_HASH},
                    expect=404) == {"code": "ORDER_NOT_AVAILABLE"}
    assert api.get("/api/offramp/order/" + "b" * 24, expect=404) == {"code": "ORDER_NOT_AVAILABLE"}


def test_validate_fields(api):
    offer = api.offramp_offer()
    body = {"offerId": offer["offer"]["_id"],
            "requiredFields": {"bankCode": "011:02", "bankAccountNumber": "0123456789"}}
    details = api.post("/api/offramp/validate-fields", body)["details"]
    by_label = {d["label"]: d["value"] for d in details}
    assert by_label["Bank"] == "First Bank of Nigeria"
    assert by_label["Account name"]
    assert api.post("/api/offramp/validate-fields", body)["details"] == details      # stable
    bad = {"offerId": offer["offer"]["_id"], "requiredFields": {"bankCode": "011:02"}}
    assert "bankAccountNumber is required" in api.post("/api/offramp/validate-fields", bad,
                                                       expect=400)["message"]
    # Validating does not use the offer up.
    api.offramp_typed_order(offer)


def test_channel_based_order_via_sandbox_endpoint(api):
    order = api.offramp_channel_order(orderParams="payout-3")
    assert order["paymentChannel"] == "mobile_money" and "offerId" not in order
    assert order["userPhoneNumber"] == "254110611756" and order["userEmail"] == "kim@example.com"
    deposited = api.client.post(f"/sandbox/orders/{order['_id']}/deposit", json={})
    assert deposited.get_json()["status"] == "awaiting_transaction_confirmation"
    assert step_through(api, order["_id"])[-1] == "offramp_success"
    response = api.client.post("/sandbox/offramp/orders", json={"quoteId": "nope"})
    assert response.status_code == 400


def test_whole_lifecycle_runs_as_time_passes(api):
    order = api.offramp_typed_order()
    api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH})
    advance(api.app, 600)
    assert api.get(f"/api/offramp/order/{order['_id']}")["status"] == "offramp_success"


def test_list_filters(api):
    typed = api.offramp_typed_order(orderParams="t-1")
    virtual = api.offramp_typed_order(paymentType="VIRTUAL_WALLET", address=OTHER_EVM_ADDRESS)
    channel = api.offramp_channel_order(orderParams="c-1")
    api.post("/api/offramp/confirm-order", {"orderId": typed["_id"], "hash": TX_HASH})

    def ids(**filters) -> set[str]:
        return {o["_id"] for o in api.get("/api/offramp/orders", limit=100, **filters)["list"]}

    everything = {typed["_id"], virtual["_id"], channel["_id"]}
    assert ids() == everything
    assert ids(network="POLYGON") == {typed["_id"], virtual["_id"]}
    assert ids(asset="USDT") == {channel["_id"]}
    assert ids(fromAddress=OTHER_EVM_ADDRESS.upper().replace("0X", "0x")) == {virtual["_id"]}
    assert ids(userPhoneNumber="254110611756") == {channel["_id"]}
    assert ids(userEmail="KIM@example.com") == {channel["_id"]}
    assert ids(hash=TX_HASH) == {typed["_id"]}
    assert ids(countryIsoCode="KE") == {channel["_id"]}
    assert ids(paymentChannel="mobile_money") == {channel["_id"]}
    assert ids(orderParams="t-1") == {typed["_id"]}
    assert ids(status="awaiting_transaction_confirmation") == {typed["_id"]}
    assert ids(status="initiated") == {virtual["_id"], channel["_id"]}
    assert ids(paymentType="VIRTUAL_WALLET") == {virtual["_id"]}
    assert ids(offrampType="bank") == {typed["_id"], virtual["_id"]}
    for bad in ({"status": "done"}, {"paymentType": "x"}, {"network": "MARS"}, {"limit": 0},
                {"limit": 101}, {"limit": "ten"}, {"cursor": "!!"}):
        params = {"limit": 10, **bad}
        assert api.get("/api/offramp/orders", expect=400, **params)["message"]
    assert "limit is required" in api.get("/api/offramp/orders", expect=400)["message"]


def test_user_cancels_before_paying(api):
    order = api.offramp_typed_order()
    response = api.client.post(f"/sandbox/orders/{order['_id']}/reject", json={})
    assert response.get_json()["status"] == "cancelled"
    assert api.sandbox_order(order["_id"])["pendingTimers"] == []
    assert api.client.post(f"/sandbox/orders/{order['_id']}/reject", json={}).status_code == 400
    late = api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH},
                    expect=400)
    assert "cancelled" in late["message"]


@pytest.mark.parametrize("variant", ["typed", "channel"])
def test_crypto_is_not_an_offramp_currency(api, variant):
    """Spec 2.1 lists ``local`` and ``usd`` for off-ramp amounts, nothing else."""
    if variant == "typed":
        query = {"country": "NG", "type": "bank"}
    else:
        query = {"countryIsoCode": "KE", "paymentChannel": "mobile_money"}
    refused = api.get("/api/offramp/best-offer", expect=400, amount="20", currency="crypto",
                      network="POLYGON", asset="USDC", **query)
    assert set(refused) == {"message"} and "currency must be one of: local, usd" in refused["message"]
    offer = api.offramp_offer()
    body = {"offerId": offer["offer"]["_id"], "paymentType": "CRYPTO_WALLET", "network": "POLYGON",
            "asset": "USDC", "address": EVM_ADDRESS, "currency": "crypto", "amount": 20,
            "requiredFields": {"bankCode": "011:02", "bankAccountNumber": "0123456789"}}
    refused = api.post("/api/offramp/create-order", body, expect=400)
    assert set(refused) == {"message"} and "currency must be one of: local, usd" in refused["message"]


@pytest.mark.parametrize("country,channel", [("KE", "mobile_money"), ("KE", "bank"),
                                             ("GH", "bank"), ("ZM", "mobile_money"),
                                             ("SN", "mobile_money"), ("NG", "bank")])
def test_an_order_at_the_local_limits_pays_within_the_usd_limits(api, country, channel):
    """limits, best-offer and create-order agree: an order at minLocalCurrency (or at
    maxLocalCurrency) pays at least minUsd (at most maxUsd), and one unit outside is refused."""
    limits = api.get("/api/offramp/limits", type=channel, country=country)
    places = 0 if country == "SN" else 2
    one = 10 ** -places
    for amount in (limits["minLocalCurrency"], limits["maxLocalCurrency"]):
        offer = api.get("/api/offramp/best-offer", amount=str(amount), currency="local",
                        country=country, type=channel, network="POLYGON", asset="USDC")
        assert limits["minUsd"] <= offer["cashout"]["usdAmount"] <= limits["maxUsd"]
        fields = {name: descriptor["options"][0]["value"] if descriptor["type"] == "enum"
                  else "254110611756" if name == "phoneNumber" else "0123456789"
                  for name, descriptor in offer["offer"]["requiredFields"].items()}
        order = api.offramp_typed_order(offer, currency="local", amount=amount,
                                        requiredFields=fields)
        assert limits["minUsd"] <= order["cashout"]["usdAmount"] <= limits["maxUsd"]
        assert order["cashout"]["localCurrencyAmount"] == amount
    for outside in (round(limits["minLocalCurrency"] - one, places),
                    round(limits["maxLocalCurrency"] + one, places)):
        api.get("/api/offramp/best-offer", expect=400, amount=str(outside), currency="local",
                country=country, type=channel, network="POLYGON", asset="USDC")
