"""Typed results: tolerant where the spec is, strict where the checkout depends on a value."""
from __future__ import annotations

import dataclasses
from datetime import UTC, datetime
from decimal import Decimal

import pytest

from checkout.errors import UpstreamBadResponse
from checkout.upstream import (
    AssetPair,
    Carrier,
    KycDocument,
    KycRule,
    KycState,
    LegacyLimits,
    LegacyOrder,
    LegacyPrice,
    LegacyProviderCountry,
    Limits,
    OfframpCashout,
    OfframpChannelCountry,
    OfframpOrder,
    OfframpQuote,
    OfframpTypeCountry,
    OnrampCashout,
    OnrampCountry,
    OnrampOrder,
    OnrampQuote,
    Page,
    RequiredField,
    TransferInstructions,
    UserKycStatus,
    UserTokens,
    UtilAsset,
    UtilCountry,
    required_fields_from_json,
)
from checkout.upstream.types import address_used_from_json, camel, field_details_from_json

ONRAMP_CASHOUT = {
    "localCurrencyAmount": 1500, "totalAmountUsd": 11.54, "withdrawAmountUsd": 11.25,
    "totalAmountCrypto": 11.54, "withdrawAmountCrypto": 11.25, "feePercent": 2.5,
    "feePercentService": 1.5, "feePercentPartner": 1, "feeAmountUsd": 0.29,
    "feeAmountUsdService": 0.17, "feeAmountUsdPartner": 0.12, "feeAmountLocalCurrency": 37.5,
    "feeAmountLocalCurrencyService": 22.5, "feeAmountLocalCurrencyPartner": 15,
    "feeAmountCrypto": 0.29, "feeAmountCryptoService": 0.17, "feeAmountCryptoPartner": 0.12,
    "gasAmountUsd": 0.01, "gasAmountLocalCurrency": 1.3,
}
REQUIRED_FIELDS = {
    "phoneNumber": {"type": "phone", "label": "Phone number", "required": True},
    "bankCode": {"type": "enum", "label": "Bank", "required": True,
                 "options": [{"value": "011:02", "label": "First Bank of Nigeria"},
                             {"value": "058", "label": "GTBank"}]},
    "buyerBankAccountNumber": {"type": "string", "label": "Account number", "required": False},
}


def test_onramp_quote_reads_every_cashout_field_as_exact_decimals():
    quote = OnrampQuote.from_json({
        "quoteId": "q-1",
        "offer": {"countryIsoCode": "NG", "currencyIsoCode": "NGN", "exchangeRate": 1480.5,
                  "cryptoExchangeRate": 0.000675, "paymentChannel": "bank",
                  "requiredFields": REQUIRED_FIELDS},
        "cashout": ONRAMP_CASHOUT,
    })
    assert quote.quote_id == "q-1"
    assert quote.offer.exchange_rate == Decimal("1480.5")
    assert quote.offer.crypto_exchange_rate == Decimal("0.000675")
    cashout = quote.cashout
    for name, value in ONRAMP_CASHOUT.items():
        field = next(f for f in cashout.__dataclass_fields__ if camel(f) == name)
        assert getattr(cashout, field) == Decimal(str(value)), name
    assert cashout.gas_amount_usd == Decimal("0.01")            # not 0.01000000000000000020816...
    assert cashout.fee_percent_service + cashout.fee_percent_partner == cashout.fee_percent
    assert quote.raw["quoteId"] == "q-1"


def test_every_onramp_cashout_field_has_a_spec_name():
    names = {camel(f) for f in OnrampCashout.__dataclass_fields__ if f != "raw"}
    assert names == set(ONRAMP_CASHOUT)


@pytest.mark.parametrize("broken", [
    {"offer": {}, "cashout": {}},                              # no quoteId
    {"quoteId": "", "offer": {}, "cashout": {}},
    {"quoteId": "q", "cashout": {}},                           # no offer
    {"quoteId": "q", "offer": {}},                             # no cashout
    {"quoteId": "q", "offer": {}, "cashout": {"feePercent": "lots"}},
    {"quoteId": "q", "offer": {}, "cashout": {"feePercent": True}},
    {"quoteId": {"nested": 1}, "offer": {}, "cashout": {}},
    ["not", "an", "object"],
])
def test_quote_is_strict_about_what_an_order_needs(broken):
    with pytest.raises(UpstreamBadResponse):
        OnrampQuote.from_json(broken)


def test_required_fields_keep_the_upstream_order_and_options():
    fields = required_fields_from_json(REQUIRED_FIELDS)
    assert [f.name for f in fields] == ["phoneNumber", "bankCode", "buyerBankAccountNumber"]
    bank = fields[1]
    assert bank.type == "enum" and bank.label == "Bank" and bank.required
    assert [(o.value, o.label) for o in bank.options] == [("011:02", "First Bank of Nigeria"),
                                                          ("058", "GTBank")]
    assert fields[2].required is False


def test_required_field_reads_kyc_patterns_and_defaults():
    field = RequiredField.from_json({"type": "string", "label": "Voter ID",
                                     "format": "0000000000000000000",
                                     "regexp": "^[a-zA-Z0-9 ]{9,29}$", "regexpFlags": "i"},
                                    name="id_number")
    assert (field.format, field.regexp, field.regexp_flags) == (
        "0000000000000000000", "^[a-zA-Z0-9 ]{9,29}$", "i")
    bare = RequiredField.from_json({}, name="otpCode")
    assert (bare.type, bare.label, bare.required, bare.options) == ("string", "otpCode", True, [])


def test_required_fields_also_read_as_a_list_of_named_descriptors():
    fields = required_fields_from_json([{"name": "otpCode", "type": "string", "label": "Code"},
                                        {"key": "phoneNumber", "type": "phone"}])
    assert [f.name for f in fields] == ["otpCode", "phoneNumber"]
    with pytest.raises(UpstreamBadResponse):
        required_fields_from_json([{"type": "string"}])          # nameless
    with pytest.raises(UpstreamBadResponse):
        required_fields_from_json("phoneNumber")
    assert required_fields_from_json(None) == []


def test_onramp_order_is_tolerant_of_missing_fields_but_needs_an_id():
    order = OnrampOrder.from_json({"orderId": "o-9"})
    assert order.id == "o-9" and order.status is None and order.transfer_instructions is None
    assert OnrampOrder.from_json({"_id": "o-1", "orderId": "o-1"}).id == "o-1"
    with pytest.raises(UpstreamBadResponse, match="_id"):
        OnrampOrder.from_json({"status": "swap_initiated"})


def test_onramp_order_reads_spec_fields():
    order = OnrampOrder.from_json({
        "_id": "o-1", "orderId": "o-1", "status": "swap_initiated",
        "date": "2026-11-22T01:02:03.456Z", "phoneNumber": "254110611756",
        "email": "buyer@example.com", "localCurrencyAmount": 1300, "currencyIsoCode": "KES",
        "countryIsoCode": "KE", "paymentChannel": "mobile_money", "amount": 10,
        "amountCrypto": 9.74, "network": "CELO", "asset": "USDT", "address": "0xabc",
        "memo": "", "hash": None, "orderParams": "shop-1", "resumeUrl": "https://x/resume",
        "carrierId": "safaricom", "feePercent": 2.5, "feeAmountUsdService": 0.15,
        "gasAmountLocalCurrency": 1.3, "redirectUrl": "https://shop.test/back",
        "transferInstructions": {
            "type": "stk_push", "instructionsText": "Check your phone",
            "transferDetails": [], "fieldsToConfirmOrder": [],
            "isIntermediateActionAvailable": True, "intermediateActionMaxAttempts": 3,
            "intermediateActionAttempts": 1,
            "intermediateActionNextAttemptAvailableAt": "2026-11-22T01:03:03Z",
            "intermediateActionTimeoutMs": 60000},
    })
    assert order.date == datetime(2026, 11, 22, 1, 2, 3, 456000, tzinfo=UTC)
    assert order.amount_crypto == Decimal("9.74") and order.local_currency_amount == 1300
    assert order.fee_amount_usd_service == Decimal("0.15")
    assert order.carrier_id == "safaricom" and order.redirect_url == "https://shop.test/back"
    assert order.memo == "" and order.hash is None
    push = order.transfer_instructions
    assert push.type == TransferInstructions.STK_PUSH
    assert push.is_intermediate_action_available is True
    assert (push.intermediate_action_max_attempts, push.intermediate_action_attempts) == (3, 1)
    assert push.intermediate_action_timeout_ms == 60000
    assert push.intermediate_action_next_attempt_available_at.tzinfo is not None


def test_transfer_instruction_variants():
    manual = TransferInstructions.from_json({
        "type": "manual", "instructionsText": "Pay to this account",
        "warningText": "Use the narration",
        "transferDetails": [
            {"id": "recipientBankName", "label": "Bank", "value": "Wema"},
            {"id": "recipientBankAccountNumber", "label": "Account", "value": 1234567890,
             "description": "10 digits"},
            {"id": "amountToSend", "label": "Amount", "value": "15,000.00"}],
        "fieldsToConfirmOrder": {"buyerBankAccountNumber": {"type": "string",
                                                            "label": "Your account"}},
    })
    assert manual.warning_text == "Use the narration"
    assert manual.detail("recipientBankAccountNumber").value == "1234567890"
    assert manual.detail("recipientBankAccountNumber").description == "10 digits"
    assert manual.detail("nope") is None
    assert [f.name for f in manual.fields_to_confirm_order] == ["buyerBankAccountNumber"]

    redirect = TransferInstructions.from_json({"type": "redirect", "instructionsText": "Go",
                                               "paymentUrl": "https://pay.test/x",
                                               "redirectedToPaymentUrl": False})
    assert redirect.payment_url == "https://pay.test/x"
    assert redirect.redirected_to_payment_url is False and redirect.ussd_code is None

    ussd = TransferInstructions.from_json({"type": "ussd", "instructionsText": "Dial",
                                           "ussdCode": "*737*1*{pin}#"})
    assert ussd.ussd_code == "*737*1*{pin}#"

    otp = TransferInstructions.from_json({"type": "otp_stk_push", "instructionsText": "Code",
                                          "otpVerified": False,
                                          "intermediateActionNextAttemptAvailableAt":
                                              1_763_773_383_000})
    assert otp.otp_verified is False
    assert otp.intermediate_action_next_attempt_available_at.year == 2025

    assert TransferInstructions.from_json({"type": "crypto_deposit"}).type == "crypto_deposit"
    with pytest.raises(UpstreamBadResponse):
        TransferInstructions.from_json({"instructionsText": "untyped"})
    with pytest.raises(UpstreamBadResponse):
        TransferInstructions.from_json({"type": "manual",
                                        "transferDetails": [{"id": "x", "label": "X"}]})
    with pytest.raises(UpstreamBadResponse):
        TransferInstructions.from_json({"type": "stk_push", "intermediateActionAttempts": 1.5})


def test_page_of_orders():
    page = Page.from_json({"nextCursor": "abc", "list": [{"_id": "1"}, {"_id": "2"}]},
                          OnrampOrder.from_json)
    assert [o.id for o in page] == ["1", "2"] and len(page) == 2 and page.next_cursor == "abc"
    assert Page.from_json({"list": [], "nextCursor": ""}, OnrampOrder.from_json).next_cursor is None
    assert Page.from_json({}, OnrampOrder.from_json).items == []
    with pytest.raises(UpstreamBadResponse):
        Page.from_json({"list": {"_id": "1"}}, OnrampOrder.from_json)


def test_limits_and_availability():
    limits = Limits.from_json({"minUsd": 1, "maxUsd": 200, "minLocalCurrency": 1556,
                               "maxLocalCurrency": 311184, "minCrypto": 1, "maxCrypto": 200})
    assert limits.available and limits.max_local_currency == Decimal(311184)
    offramp = Limits.from_json({"minUsd": 1, "maxUsd": 500, "minLocalCurrency": 130,
                                "maxLocalCurrency": 65000})
    assert offramp.min_crypto is None and offramp.available
    zero = Limits.from_json({k: 0 for k in ("minUsd", "maxUsd", "minLocalCurrency",
                                            "maxLocalCurrency", "minCrypto", "maxCrypto")})
    assert not zero.available
    assert not Limits.from_json({"minUsd": 50, "maxUsd": 10, "minLocalCurrency": 1,
                                 "maxLocalCurrency": 2}).available
    with pytest.raises(UpstreamBadResponse, match="maxUsd"):
        Limits.from_json({"minUsd": 1, "minLocalCurrency": 1, "maxLocalCurrency": 2})


def test_reference_lists():
    assert AssetPair.list_from_json([{"network": "CELO", "asset": "CKES"}]) == [
        AssetPair(network="CELO", asset="CKES")]
    with pytest.raises(UpstreamBadResponse):
        AssetPair.list_from_json({"network": "CELO"})
    util = UtilAsset.from_json({"network": "TRON", "asset": "USDT", "canOfframp": True,
                                "canOnramp": False})
    assert util.can_offramp and not util.can_onramp

    onramp = OnrampCountry.from_json({
        "countryIsoCode": "NG", "currencyIsoCode": "NGN", "name": "Nigeria",
        "paymentChannels": [
            {"paymentChannel": "bank", "description": "Bank transfer", "requiresCarrier": False,
             "carriers": []},
            {"paymentChannel": "airtime", "description": "Airtime", "requiresCarrier": True,
             "carriers": [{"id": "c1", "name": "MTN", "code": "mtn"}]}]})
    airtime = onramp.payment_channels[1]
    assert airtime.requires_carrier and airtime.carriers == [Carrier(name="MTN", id="c1",
                                                                     code="mtn")]

    offramp = OfframpChannelCountry.from_json({
        "countryIsoCode": "KE", "currencyIsoCode": "KES", "name": "Kenya",
        "paymentChannels": [{"paymentChannel": "paybill", "name": "Paybill"}]})
    assert offramp.payment_channels[0].carriers == []

    typed = OfframpTypeCountry.from_json({
        "countryIsoCode": "KE", "currencyIsoCode": "KES", "name": "Kenya",
        "offrampTypes": [{"type": "mobile_money", "name": "M-PESA",
                          "carriers": [{"id": "saf", "name": "Safaricom"}]}]})
    assert typed.offramp_types[0].carriers[0].code is None
    with pytest.raises(UpstreamBadResponse):
        OnrampCountry.from_json({"currencyIsoCode": "NGN"})


def test_util_country_kyc_rules_with_an_infinite_max():
    country = UtilCountry.from_json({
        "countryIsoCode": "KE", "currencyIsoCode": "KES", "name": "Kenya",
        "basicDocuments": [{"type": "basic", "title": "National ID", "value": "NATIONAL_ID",
                            "requiredFields": {"id_number": {"type": "string", "label": "ID",
                                                             "regexp": "^[0-9]{1,9}$"}}}],
        "kycRules": {"onramp": [{"min": 0, "max": 100, "type": "none"},
                                {"min": 100, "max": "Infinity", "type": "basic"}],
                     "offramp": [{"min": 0, "max": 1000.5, "type": "basic"}]},
    })
    unbounded = country.kyc_rules.onramp[1]
    assert unbounded.max == float("inf") and unbounded.max == Decimal("Infinity")
    assert unbounded.max - Decimal(5) == Decimal("Infinity")    # Decimal arithmetic still works
    assert unbounded.covers(Decimal("1000000")) and not country.kyc_rules.onramp[0].covers(
        Decimal("100.01"))
    assert country.kyc_rules.offramp[0].max == Decimal("1000.5")
    assert country.advanced_documents == []
    document = country.basic_documents[0]
    assert document.value == "NATIONAL_ID" and document.required_fields[0].regexp == \
        "^[0-9]{1,9}$"
    assert KycRule.from_json({"type": "advanced"}).max == Decimal("Infinity")
    with pytest.raises(UpstreamBadResponse):
        KycRule.from_json({"type": "basic", "max": "Unlimited"})


def test_kyc_state_and_user_kyc_status():
    state = KycState.from_json({
        "kycUrl": "https://kyc.test/x", "offrampKycRules": [{"type": "basic", "minAmount": 0}],
        "onrampKycRules": [{"type": "advanced", "minAmount": 1000}], "passedKyc": False,
        "kycStatus": "pending", "kycStatusDescription": "Waiting", "reachedKycLimit": True,
        "documentTypes": [{"title": "BVN", "value": "BVN", "requiredFields": {}}]})
    assert state.onramp_kyc_rules[0].min_amount == Decimal(1000)
    assert state.reached_kyc_limit and not state.passed_kyc
    assert state.document_types == [KycDocument(title="BVN", value="BVN")]
    status = UserKycStatus.from_json({
        "passedKycType": "basic", "kycStatus": "approved", "reachedKycLimit": False,
        "basicDocuments": [], "advancedDocuments": [
            {"_id": "doc-1", "type": "advanced", "title": "Driver's licence",
             "value": "DRIVERS_LICENSE",
             "requiredFields": {"images": {"type": "smile-identity-images", "label": "Images"}}}]})
    assert status.advanced_documents[0].id == "doc-1"
    assert status.advanced_documents[0].required_fields[0].type == "smile-identity-images"


def test_user_tokens_are_not_in_repr():
    tokens = UserTokens.from_json({"accessToken": "eyJaccess.x.y", "refreshToken": "eyJrefresh.x.y"})
    assert tokens.access_token == "eyJaccess.x.y"
    assert "eyJ" not in repr(tokens)
    with pytest.raises(UpstreamBadResponse):
        UserTokens.from_json({"accessToken": "a"})


def test_offramp_quotes_of_both_variants():
    cashout = {"localCurrencyAmount": 1300, "usdAmount": 10, "cryptoAmount": 10,
               "feeAmountUsd": 0.25, "feeAmountUsdService": 0.15, "feeAmountUsdPartner": 0.1,
               "feeAmountLocalCurrency": 32.5, "feeAmountLocalCurrencyService": 19.5,
               "feeAmountLocalCurrencyPartner": 13, "feeAmountCrypto": 0.25,
               "feeAmountCryptoService": 0.15, "feeAmountCryptoPartner": 0.1}
    channel = OfframpQuote.from_json({
        "quoteId": "oq-1", "cashout": cashout,
        "offer": {"countryIsoCode": "KE", "currencyIsoCode": "KES", "exchangeRate": 130,
                  "paymentChannel": "mobile_money", "requiredFields": REQUIRED_FIELDS}})
    assert channel.quote_id == "oq-1" and channel.offer_id is None
    assert channel.cashout.fee_amount_local_currency_partner == Decimal(13)
    assert {camel(f) for f in OfframpCashout.__dataclass_fields__ if f != "raw"} == set(cashout)
    typed = OfframpQuote.from_json({
        "cashout": cashout,
        "offer": {"_id": "offer-7", "countryIsoCode": "KE", "currencyIsoCode": "KES",
                  "exchangeRate": 130, "type": "mobile_money", "requiredFields": {}}})
    assert typed.offer_id == "offer-7" and typed.quote_id is None
    assert typed.offer.type == "mobile_money"
    with pytest.raises(UpstreamBadResponse):
        OfframpQuote.from_json({"cashout": cashout, "offer": {"countryIsoCode": "KE"}})


def test_offramp_order_keeps_repeated_history_and_supplied_fields():
    order = OfframpOrder.from_json({
        "_id": "off-1", "offerId": "offer-7", "paymentType": "CRYPTO_WALLET", "network": "CELO",
        "asset": "USDT", "exchangeRate": 129.5, "fromAddress": "0xfrom", "toAddress": "0xto",
        "status": "transaction_confirmed", "createdAt": "2026-11-22T01:00:00Z",
        "expiresAt": "2026-11-22T02:00:00+00:00", "hash": "0xhash",
        "statusHistory": [{"status": "initiated", "changedAt": "2026-11-22T01:00:00Z"},
                          {"status": "initiated", "changedAt": "2026-11-22T01:00:00Z"},
                          {"status": "transaction_confirmed",
                           "changedAt": "2026-11-22T01:05:00Z"}],
        "requiredFields": {"phoneNumber": "254110611756"},
        "offerRequiredFields": [{"label": "Phone", "type": "phone", "value": "254110611756"}],
        "countryIsoCode": "KE", "currencyIsoCode": "KES", "userPhoneNumber": "254110611756",
        "userEmail": "seller@example.com", "orderParams": "shop-9",
        "cashout": {"localCurrencyAmount": 1295}})
    assert [s.status for s in order.status_history] == ["initiated", "initiated",
                                                         "transaction_confirmed"]
    assert order.expires_at - order.created_at == (datetime(2026, 1, 1, 1) -
                                                   datetime(2026, 1, 1))
    assert order.to_address == "0xto" and order.payment_type == "CRYPTO_WALLET"
    assert order.required_fields == {"phoneNumber": "254110611756"}
    assert order.offer_required_fields[0].label == "Phone"
    assert order.cashout.local_currency_amount == Decimal(1295)
    with pytest.raises(UpstreamBadResponse):
        OfframpOrder.from_json({"status": "initiated"})
    with pytest.raises(UpstreamBadResponse):
        OfframpOrder.from_json({"_id": "x", "createdAt": "yesterday"})


def test_legacy_types():
    price = LegacyPrice.from_json({"quoteId": "lq", "cryptoWithdrawAmount": 9.7,
                                   "localCurrencyAmount": 1500, "usdcTotalAmount": 10,
                                   "localCurrencyNetworkFeeAmount": 1.46})
    assert price.crypto_withdraw_amount == Decimal("9.7") and price.usdc_total_amount == 10
    assert price.local_currency_network_fee_amount == Decimal("1.46")
    with pytest.raises(UpstreamBadResponse):
        LegacyPrice.from_json({"localCurrencyAmount": 1})

    network_limits = {"cryptoLimits": {"min": 1, "max": 200},
                      "fees": {"feePercent": 2.5, "serviceFeePercent": 1.5,
                               "partnerFeePercent": 1, "gasAmount": 0.01, "minFee": 0.01},
                      "localCurrency": {"type": "fixed_list", "values": [100, 200.5]}}
    providers = LegacyProviderCountry.from_json({
        "countryIsoCode": "NG", "currencyIsoCode": "NGN",
        "providers": [{"name": "carrier", "description": "Airtime", "requiresCarrier": True,
                       "limits": {"CELO": network_limits},
                       "carriers": [{"id": "mtn", "name": "MTN",
                                     "limits": {"POLYGON": network_limits}}]}]})
    provider = providers.providers[0]
    assert provider.limits["CELO"].local_currency.values == [Decimal(100), Decimal("200.5")]
    assert provider.limits["CELO"].fees.min_fee == Decimal("0.01")
    assert provider.carriers[0].limits["POLYGON"].crypto_limits.max == 200

    limits = LegacyLimits.from_json({
        "cryptoLimits": {"min": 1, "max": 200},
        "localCurrencyLimits": {"type": "open_range", "min": 1556, "max": 311184, "step": 1,
                                "withCents": False},
        "fees": {"feePercent": 2.5}})
    assert limits.local_currency_limits.type == "open_range"
    assert limits.local_currency_limits.with_cents is False

    order = LegacyOrder.from_json({
        "_id": "lo-1", "walletType": "CELO", "asset": "USDT", "walletAddress": "0xabc",
        "createdAt": "2026-11-22T00:00:00Z", "gasUsdAmount": 0.01,
        "buySwap": {"_id": "bs", "amount": 150000, "status": "seller_confirmed",
                    "provider": "bank_transfer", "expiresAt": "2026-11-22T00:05:00Z"},
        "withdrawal": {"_id": "w", "status": "complete", "withdrawAmount": 10,
                       "withdrawCryptoAmount": 9.75, "transactionHash": "0xh"}})
    assert order.buy_swap.amount == 150000 and order.buy_swap.status == "seller_confirmed"
    assert order.withdrawal.withdraw_crypto_amount == Decimal("9.75")
    assert order.gas_usd_amount == Decimal("0.01")


def test_small_answers():
    assert address_used_from_json({"used": True}) is True
    with pytest.raises(UpstreamBadResponse):
        address_used_from_json({"used": "yes"})
    with pytest.raises(UpstreamBadResponse):
        address_used_from_json({})
    details = field_details_from_json({"details": [{"label": "Account name",
                                                    "value": "JOHN DOE"}]})
    assert [(d.label, d.value) for d in details] == [("Account name", "JOHN DOE")]


def test_raw_is_kept_but_not_compared_or_shown():
    a = AssetPair.from_json({"network": "CELO", "asset": "USDT", "extra": "x"})
    b = AssetPair(network="CELO", asset="USDT")
    assert a == b and a.raw["extra"] == "x" and "extra" not in repr(a)
    with pytest.raises(AttributeError):
        a.network = "BASE"                      # frozen


def test_every_type_reads_each_of_its_fields_by_its_annotation():
    """Every field of every type has a reader worked out from its annotation, so a field added
    with a type the reader does not know fails here rather than on the first live answer."""
    from checkout.upstream import types

    parsed = [cls for cls in vars(types).values()
              if isinstance(cls, type) and issubclass(cls, types.FromJson) and cls is not types.FromJson]
    assert len(parsed) > 40
    for cls in parsed:
        plan = dict(types._plan(cls))
        assert set(plan) == {f.name for f in dataclasses.fields(cls)} - {"raw"}, cls


def test_a_field_spelled_otherwise_is_read_under_its_own_key():
    order = OfframpOrder.from_json({"_id": "o-1", "offerId": "of-1"})
    assert (order.id, order.offer_id) == ("o-1", "of-1")
    with pytest.raises(UpstreamBadResponse, match="OfframpOrder: _id is missing"):
        OfframpOrder.from_json({"id": "o-1"})


@pytest.mark.parametrize("detail", [{"label": "Account name", "value": ""},
                                    {"label": "Account name", "value": None},
                                    {"label": "Account name"}])
def test_a_validated_field_without_a_value_reads_as_empty(detail):
    """validate-fields may name a detail it could not resolve: the answer is still read (the
    payee check shows what it has), never refused whole."""
    [found] = field_details_from_json({"details": [detail]})
    assert (found.label, found.value) == ("Account name", "")
