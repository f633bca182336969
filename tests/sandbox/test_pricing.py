"""Pricing: exact invariants of every quote (property tests) and every refusal (examples).

All comparisons go through ``Decimal(str(x))``: what is checked is the JSON number a merchant gets.
"""
from __future__ import annotations

from decimal import Decimal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkout.sandbox import pricing
from checkout.sandbox import reference as ref
from checkout.sandbox.pricing import PricingError

SETTINGS = settings(max_examples=200, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def dec(x) -> Decimal:
    assert isinstance(x, (int, float)) and not isinstance(x, bool), x
    return Decimal(str(x))


def unit(places: int) -> Decimal:
    return Decimal(1).scaleb(-places)


def agrees(a: Decimal, a_places: int, b: Decimal, b_places: int, b_per_a: Decimal) -> bool:
    """``a`` and ``b`` name the same value, within one unit of whichever was derived."""
    return (abs(a * b_per_a - b) <= unit(b_places)
            or abs(b / b_per_a - a) <= unit(a_places))


# --- corridors ------------------------------------------------------------------------------

ONRAMP_CORRIDORS = [
    (c.iso, ch.channel, k.code if k else None)
    for c in ref.COUNTRIES for ch in c.onramp if ch.limits.available
    for k in (ch.carriers if ch.requires_carrier else (None,) + ch.carriers)
]
OFFRAMP_CORRIDORS = [(c.iso, ch.channel) for c in ref.COUNTRIES for ch in c.offramp
                     if ch.limits.available]
LEGACY_CORRIDORS = [
    (c.iso, ref.legacy_provider_name(c.iso, ch.channel), k.id if k else None)
    for c in ref.COUNTRIES for ch in c.onramp if ch.limits.available
    for k in (ch.carriers if ch.requires_carrier else (None,))
]


@st.composite
def amount_between(draw, low, high, places: int) -> Decimal:
    scale = 10 ** places
    lo, hi = int(dec(low) * scale), int(dec(high) * scale)
    edge = draw(st.sampled_from(["min", "max", "any", "any"]))
    n = {"min": lo, "max": hi}.get(edge) or draw(st.integers(lo, hi))
    return Decimal(n).scaleb(-places)


# --- on-ramp ------------------------------------------------------------------------------------

def check_onramp_cashout(q: dict, iso: str, network: str, asset: str) -> None:
    c = ref.country(iso)
    rate, lp = c.usd_rate, c.currency_places
    k, cp, up = ref.crypto_per_usd(asset), ref.CRYPTO_PLACES, ref.USD_PLACES
    cash = {name: dec(v) for name, v in q["cashout"].items()}
    assert set(cash) == {
        "localCurrencyAmount", "totalAmountUsd", "withdrawAmountUsd", "totalAmountCrypto",
        "withdrawAmountCrypto", "feePercent", "feePercentService", "feePercentPartner",
        "feeAmountUsd", "feeAmountUsdService", "feeAmountUsdPartner", "feeAmountLocalCurrency",
        "feeAmountLocalCurrencyService", "feeAmountLocalCurrencyPartner", "feeAmountCrypto",
        "feeAmountCryptoService", "feeAmountCryptoPartner", "gasAmountUsd",
        "gasAmountLocalCurrency"}
    assert all(v >= 0 for v in cash.values())
    # fee total = service part + partner part, in every unit and for percents
    for total, service, partner in [
        ("feePercent", "feePercentService", "feePercentPartner"),
        ("feeAmountUsd", "feeAmountUsdService", "feeAmountUsdPartner"),
        ("feeAmountLocalCurrency", "feeAmountLocalCurrencyService",
         "feeAmountLocalCurrencyPartner"),
        ("feeAmountCrypto", "feeAmountCryptoService", "feeAmountCryptoPartner"),
    ]:
        assert cash[total] == cash[service] + cash[partner], total
    # before − fee − gas = after, exactly; gas is a separate network fee
    gas_usd = cash["gasAmountUsd"]
    assert gas_usd == ref.GAS_USD[network]
    gas_crypto = gas_usd * k          # exact by construction of the reference data
    assert (cash["totalAmountUsd"] - cash["feeAmountUsd"] - gas_usd
            == cash["withdrawAmountUsd"])
    assert (cash["totalAmountCrypto"] - cash["feeAmountCrypto"] - gas_crypto
            == cash["withdrawAmountCrypto"])
    assert cash["withdrawAmountCrypto"] > 0 and cash["withdrawAmountUsd"] > 0
    # every amount carries its unit's precision
    for name, v in cash.items():
        places = lp if "Local" in name else (cp if "Crypto" in name else up)
        if "Percent" not in name:
            assert v == v.quantize(unit(places)), name
    # the units agree at the quoted rates
    for usd_name, crypto_name in [
        ("totalAmountUsd", "totalAmountCrypto"), ("withdrawAmountUsd", "withdrawAmountCrypto"),
        ("feeAmountUsd", "feeAmountCrypto"), ("feeAmountUsdService", "feeAmountCryptoService"),
        ("feeAmountUsdPartner", "feeAmountCryptoPartner"),
    ]:
        assert agrees(cash[usd_name], up, cash[crypto_name], cp, k), usd_name
    for usd_name, local_name in [
        ("totalAmountUsd", "localCurrencyAmount"), ("feeAmountUsd", "feeAmountLocalCurrency"),
        ("feeAmountUsdService", "feeAmountLocalCurrencyService"),
        ("feeAmountUsdPartner", "feeAmountLocalCurrencyPartner"),
        ("gasAmountUsd", "gasAmountLocalCurrency"),
    ]:
        assert agrees(cash[usd_name], up, cash[local_name], lp, rate), usd_name
    # the fee is the schedule's: percent plus flat, never under the minimum
    fees = ref.onramp_channel(iso, q["offer"]["paymentChannel"]).fees
    assert cash["feePercent"] == fees.percent
    expected = max(cash["totalAmountUsd"] * fees.percent / 100 + fees.flat_local / rate,
                   fees.min_fee_usd)
    assert abs(cash["feeAmountUsd"] - expected) <= 2 * unit(up)
    assert cash["feeAmountUsd"] >= fees.min_fee_usd
    offer = q["offer"]
    assert (offer["countryIsoCode"], offer["currencyIsoCode"]) == (iso, c.currency)
    assert dec(offer["exchangeRate"]) == rate
    assert abs(dec(offer["cryptoExchangeRate"]) - rate / k) <= unit(cp)


onramp_case = st.tuples(st.sampled_from(ONRAMP_CORRIDORS), st.sampled_from(ref.ONRAMP_ASSETS),
                        st.sampled_from(["local", "crypto"]))


@SETTINGS
@given(case=onramp_case, data=st.data())
def test_onramp_quote_invariants(case, data):
    (iso, channel, carrier), pair, currency = case
    limits = pricing.onramp_limits(pair.network, iso, channel, pair.asset, carrier)
    if currency == "local":
        amount = data.draw(amount_between(limits["minLocalCurrency"], limits["maxLocalCurrency"],
                                          ref.country(iso).currency_places))
    else:
        amount = data.draw(amount_between(limits["minCrypto"], limits["maxCrypto"],
                                          ref.CRYPTO_PLACES))
    q = pricing.onramp_quote(pair.network, pair.asset, currency, str(amount), iso, channel,
                             carrier)
    check_onramp_cashout(q, iso, pair.network, pair.asset)
    cash = q["cashout"]
    if currency == "local":
        assert dec(cash["localCurrencyAmount"]) == amount
    else:
        assert dec(cash["withdrawAmountCrypto"]) == amount    # inverted exactly
        # Paying the local amount this quote asks for buys at least what it promised.
        if dec(cash["localCurrencyAmount"]) <= dec(limits["maxLocalCurrency"]):
            back = pricing.onramp_quote(pair.network, pair.asset, "local",
                                        cash["localCurrencyAmount"], iso, channel, carrier)
            k = ref.crypto_per_usd(pair.asset)
            slack = unit(ref.CRYPTO_PLACES) * (1 + k)
            assert dec(back["cashout"]["withdrawAmountCrypto"]) >= amount - slack


@SETTINGS
@given(case=st.tuples(st.sampled_from(ONRAMP_CORRIDORS), st.sampled_from(ref.ONRAMP_ASSETS)))
def test_onramp_limits_are_enforced_exactly_at_the_edges(case):
    (iso, channel, carrier), pair = case
    lim = pricing.onramp_limits(pair.network, iso, channel, pair.asset, carrier)
    lp = ref.country(iso).currency_places
    assert 0 < dec(lim["minUsd"]) < dec(lim["maxUsd"])
    assert 0 < dec(lim["minCrypto"]) < dec(lim["maxCrypto"])
    for currency, low, high, places in [
        ("local", lim["minLocalCurrency"], lim["maxLocalCurrency"], lp),
        ("crypto", lim["minCrypto"], lim["maxCrypto"], ref.CRYPTO_PLACES),
    ]:
        args = (pair.network, pair.asset, currency)
        for ok in (low, high):
            pricing.onramp_quote(*args, ok, iso, channel, carrier)
            assert pricing.check_onramp_amount(*args, ok, iso, channel, carrier) == dec(ok)
        for outside in (dec(low) - unit(places), dec(high) + unit(places)):
            if outside <= 0:
                continue
            with pytest.raises(PricingError) as err:
                pricing.onramp_quote(*args, str(outside), iso, channel, carrier)
            assert ref.country(iso).currency in err.value.message
            assert pair.asset in err.value.message
            with pytest.raises(PricingError):
                pricing.check_onramp_amount(*args, str(outside), iso, channel, carrier)


def test_onramp_limits_equal_quotes_at_the_bounds():
    lim = pricing.onramp_limits("POLYGON", "NG", "bank", "USDC")
    assert lim == {"minUsd": 1, "maxUsd": 200, "minLocalCurrency": 1480,
                   "maxLocalCurrency": 296000, "minCrypto": 0.965, "maxCrypto": 194.99}
    low = pricing.onramp_quote("POLYGON", "USDC", "local", 1480, "NG", "bank")["cashout"]
    assert low["withdrawAmountCrypto"] == lim["minCrypto"]
    # limits without an asset use the network's USDC; a carrier narrows the limits
    assert pricing.onramp_limits("POLYGON", "NG", "bank") == lim
    assert pricing.onramp_limits("POLYGON", "NG", "airtime", carrier_code="9MOBILE")["maxUsd"] == 20
    assert pricing.onramp_limits("POLYGON", "NG", "airtime")["maxUsd"] == 50


def test_worked_example_min_fee_and_exact_gas():
    # 1.48 USD worth of NGN at 2.5 %: 0.037 fee, split 1.5/1.0; the 0.01 gas is apart.
    cash = pricing.onramp_quote("POLYGON", "USDC", "local", 2190.4, "NG", "bank")["cashout"]
    assert cash["totalAmountUsd"] == 1.48
    assert cash["feeAmountUsd"] == 0.037
    assert (cash["feeAmountUsdService"], cash["feeAmountUsdPartner"]) == (0.0222, 0.0148)
    assert cash["withdrawAmountCrypto"] == 1.433
    assert cash["gasAmountLocalCurrency"] == 14.8
    # Kenya's bank channel adds a flat 30 KES to the partner's part.
    ke = pricing.onramp_quote("CELO", "CKES", "crypto", 1000, "KE", "bank")["cashout"]
    assert ke["withdrawAmountCrypto"] == 1000 and ke["feeAmountCryptoPartner"] == 30
    assert ke["feeAmountLocalCurrencyPartner"] == 30


def test_minimum_fee_applies():
    fees = ref.Fees(Decimal("0.5"), Decimal("0.5"), Decimal("0.01"))
    service, partner = pricing._fee_parts(Decimal("0.5"), fees, Decimal(0), fees.min_fee_usd)
    assert service + partner == Decimal("0.01") and service == partner
    # The zero-percent edge still charges the minimum, all of it as the service's.
    free = ref.Fees(Decimal(0), Decimal(0), Decimal("0.01"))
    assert pricing._fee_parts(Decimal(5), free, Decimal(0), Decimal("0.01")) == (
        Decimal("0.01"), Decimal(0))


# --- off-ramp -----------------------------------------------------------------------------------

def check_offramp_cashout(q: dict, iso: str, asset: str) -> None:
    c = ref.country(iso)
    rate, lp = c.usd_rate, c.currency_places
    k, cp, up = ref.crypto_per_usd(asset), ref.CRYPTO_PLACES, ref.USD_PLACES
    cash = {name: dec(v) for name, v in q["cashout"].items()}
    assert set(cash) == {
        "localCurrencyAmount", "usdAmount", "cryptoAmount", "feeAmountUsd", "feeAmountUsdService",
        "feeAmountUsdPartner", "feeAmountLocalCurrency", "feeAmountLocalCurrencyService",
        "feeAmountLocalCurrencyPartner", "feeAmountCrypto", "feeAmountCryptoService",
        "feeAmountCryptoPartner"}
    assert all(v >= 0 for v in cash.values()) and cash["localCurrencyAmount"] > 0
    for total, service, partner in [
        ("feeAmountUsd", "feeAmountUsdService", "feeAmountUsdPartner"),
        ("feeAmountLocalCurrency", "feeAmountLocalCurrencyService",
         "feeAmountLocalCurrencyPartner"),
        ("feeAmountCrypto", "feeAmountCryptoService", "feeAmountCryptoPartner"),
    ]:
        assert cash[total] == cash[service] + cash[partner], total
    assert agrees(cash["usdAmount"], up, cash["cryptoAmount"], cp, k)
    for usd_name, crypto_name in [("feeAmountUsd", "feeAmountCrypto"),
                                  ("feeAmountUsdService", "feeAmountCryptoService"),
                                  ("feeAmountUsdPartner", "feeAmountCryptoPartner")]:
        assert agrees(cash[usd_name], up, cash[crypto_name], cp, k)
        local_name = usd_name.replace("Usd", "LocalCurrency")
        assert agrees(cash[usd_name], up, cash[local_name], lp, rate)
    # What the user receives is what is left of what they paid, at the quoted rate.
    after_usd = cash["usdAmount"] - cash["feeAmountUsd"]
    assert agrees(after_usd, up, cash["localCurrencyAmount"], lp, rate)
    assert cash["cryptoAmount"] - cash["feeAmountCrypto"] > 0
    fees = ref.offramp_channel(iso, q["offer"].get("paymentChannel") or q["offer"]["type"]).fees
    expected = max(cash["usdAmount"] * fees.percent / 100 + fees.flat_local / rate,
                   fees.min_fee_usd)
    assert abs(cash["feeAmountUsd"] - expected) <= unit(up)
    assert dec(q["offer"]["exchangeRate"]) == rate


offramp_case = st.tuples(st.sampled_from(OFFRAMP_CORRIDORS), st.sampled_from(ref.OFFRAMP_ASSETS),
                         st.sampled_from(["local", "usd", "crypto"]),
                         st.sampled_from(["channel", "type"]))


@SETTINGS
@given(case=offramp_case, data=st.data())
def test_offramp_quote_invariants(case, data):
    (iso, channel), pair, currency, variant = case
    lim = pricing.offramp_limits(pair.network, pair.asset, iso, channel)
    assert lim == pricing.offramp_typed_limits(channel, iso)
    if currency == "local":
        amount = data.draw(amount_between(lim["minLocalCurrency"], lim["maxLocalCurrency"],
                                          ref.country(iso).currency_places))
    else:
        amount = data.draw(amount_between(lim["minUsd"], lim["maxUsd"], ref.USD_PLACES))
    if variant == "channel":
        q = pricing.offramp_quote(pair.network, pair.asset, currency, amount, iso, channel)
        assert q["offer"]["paymentChannel"] == channel and "type" not in q["offer"]
    else:
        q = pricing.offramp_typed_quote(pair.network, pair.asset, currency, amount, iso, channel)
        assert q["offer"]["type"] == channel and "paymentChannel" not in q["offer"]
    check_offramp_cashout(q, iso, pair.asset)
    fixed = {"local": "localCurrencyAmount", "usd": "usdAmount", "crypto": "cryptoAmount"}
    assert dec(q["cashout"][fixed[currency]]) == amount


@pytest.mark.parametrize("iso,channel", OFFRAMP_CORRIDORS)
def test_offramp_limits_are_enforced_exactly_at_the_edges(iso, channel):
    lim = pricing.offramp_limits("CELO", "USDC", iso, channel)
    lp = ref.country(iso).currency_places
    for currency, low, high, places in [
        ("usd", lim["minUsd"], lim["maxUsd"], ref.USD_PLACES),
        ("crypto", lim["minUsd"], lim["maxUsd"], ref.CRYPTO_PLACES),
        ("local", lim["minLocalCurrency"], lim["maxLocalCurrency"], lp),
    ]:
        for ok in (low, high):
            pricing.offramp_quote("CELO", "USDC", currency, ok, iso, channel)
            pricing.check_offramp_amount("CELO", "USDC", currency, ok, iso, channel)
        for outside in (dec(low) - unit(places), dec(high) + unit(places)):
            with pytest.raises(PricingError, match="minimum|maximum"):
                pricing.offramp_quote("CELO", "USDC", currency, str(outside), iso, channel)
    # the limit in local currency is what a quote at the USD limit pays out
    at_max = pricing.offramp_quote("CELO", "USDC", "usd", lim["maxUsd"], iso, channel)
    assert at_max["cashout"]["localCurrencyAmount"] == lim["maxLocalCurrency"]


@pytest.mark.parametrize("asset", ["USDC", "USDT"])
@pytest.mark.parametrize("iso,channel", OFFRAMP_CORRIDORS)
def test_offramp_local_bounds_pay_within_the_usd_bounds(iso, channel, asset):
    """Local → USD: a quote at minLocalCurrency (or maxLocalCurrency) pays between minUsd and
    maxUsd, and the local bounds are the tightest that do. USD → local: a quote at a USD bound pays
    out within one local unit of the local bound."""
    lim = pricing.offramp_limits("CELO", asset, iso, channel)
    assert lim == pricing.offramp_typed_limits(channel, iso, "CELO", asset)
    lp = unit(ref.country(iso).currency_places)
    min_usd, max_usd = dec(lim["minUsd"]), dec(lim["maxUsd"])
    min_local, max_local = dec(lim["minLocalCurrency"]), dec(lim["maxLocalCurrency"])
    for quote in (pricing.offramp_quote, pricing.offramp_typed_quote):
        low = quote("CELO", asset, "local", lim["minLocalCurrency"], iso, channel)["cashout"]
        high = quote("CELO", asset, "local", lim["maxLocalCurrency"], iso, channel)["cashout"]
        assert min_usd <= dec(low["usdAmount"]) <= dec(high["usdAmount"]) <= max_usd
        at_min = quote("CELO", asset, "usd", lim["minUsd"], iso, channel)["cashout"]
        at_max = quote("CELO", asset, "usd", lim["maxUsd"], iso, channel)["cashout"]
        assert min_local - lp <= dec(at_min["localCurrencyAmount"]) <= min_local
        assert dec(at_max["localCurrencyAmount"]) == max_local
    corridor = pricing.offramp_corridor("CELO", asset, iso, channel)
    # Tight at the minimum: one local unit less would pay less than minUsd.
    assert pricing._offramp_from_local(corridor, min_local - lp).usd.before < min_usd


def test_offramp_kenya_mobile_money_minimum_in_shillings_pays_at_least_a_dollar():
    lim = pricing.offramp_limits("CELO", "USDC", "KE", "mobile_money")
    assert (lim["minUsd"], lim["minLocalCurrency"]) == (1, 97.07)
    low = pricing.offramp_quote("CELO", "USDC", "local", 97.07, "KE", "mobile_money")["cashout"]
    assert dec(low["usdAmount"]) >= 1
    with pytest.raises(PricingError, match="below the minimum"):
        pricing.check_offramp_amount("CELO", "USDC", "local", "97.06", "KE", "mobile_money")


def test_offramp_worked_example_with_flat_fee():
    cash = pricing.offramp_quote("POLYGON", "USDT", "usd", 50, "KE", "paybill")["cashout"]
    # 1.5 % of 50 = 0.75 to the service, 30 KES = 0.232558.. USD (rounded up) to the partner.
    assert (cash["feeAmountUsdService"], cash["feeAmountUsdPartner"]) == (0.75, 0.232559)
    assert cash["feeAmountLocalCurrencyPartner"] == 30
    assert cash["localCurrencyAmount"] == 6323.24      # (50 − 0.982559) × 129, rounded down


# --- legacy -------------------------------------------------------------------------------------

legacy_case = st.tuples(st.sampled_from(LEGACY_CORRIDORS),
                        st.sampled_from([p for p in ref.ONRAMP_ASSETS]),
                        st.sampled_from(["local", "usdc"]))


@SETTINGS
@given(case=legacy_case, data=st.data())
def test_legacy_price_invariants(case, data):
    (iso, provider, carrier_id), pair, currency = case
    lim = pricing.legacy_limits(pair.network, iso, provider, pair.asset, carrier_id)
    local = lim["localCurrencyLimits"]
    if local["type"] == "fixed_list":
        if currency == "usdc":
            with pytest.raises(PricingError, match="fixed local amounts"):
                pricing.legacy_price(pair.network, pair.asset, "usdc", 1, iso, provider,
                                     carrier_id)
            return
        amount = dec(data.draw(st.sampled_from(local["values"])))
    elif currency == "local":
        amount = data.draw(amount_between(local["min"], local["max"],
                                          ref.country(iso).currency_places))
    else:
        amount = data.draw(amount_between(lim["cryptoLimits"]["min"], lim["cryptoLimits"]["max"],
                                          ref.CRYPTO_PLACES))
    p = {k: dec(v) for k, v in pricing.legacy_price(pair.network, pair.asset, currency,
                                                     str(amount), iso, provider,
                                                     carrier_id).items()}
    assert p["cryptoTotalAmount"] - p["cryptoFeeAmount"] - p["cryptoGasAmount"] == \
        p["cryptoWithdrawAmount"]
    assert p["totalAmount"] - p["feeAmount"] - p["networkFeeAmount"] == p["withdrawAmount"]
    assert p["feeAmount"] == p["serviceFeeAmount"] + p["partnerFeeAmount"]
    assert p["localCurrencyFeeAmount"] == (p["localCurrencyServiceFeeAmount"]
                                           + p["localCurrencyPartnerFeeAmount"])
    assert p["feePercent"] == p["serviceFeePercent"] + p["partnerFeePercent"]
    for old, new in [("usdcTotalAmount", "totalAmount"), ("usdcWithdrawAmount", "withdrawAmount"),
                     ("usdcFeeAmount", "feeAmount"), ("usdcGasAmount", "networkFeeAmount")]:
        assert p[old] == p[new]
    assert p["cryptoGasAmount"] == p["networkFeeAmount"] * ref.crypto_per_usd(pair.asset)
    fixed = "localCurrencyAmount" if currency == "local" else "cryptoWithdrawAmount"
    assert p[fixed] == amount
    # Legacy and channel-based prices are the same quote.
    channel = ref.LEGACY_PROVIDERS[provider]
    code = next((k.code for k in ref.onramp_channel(iso, channel).carriers if k.id == carrier_id),
                None)
    q = pricing.onramp_quote(pair.network, pair.asset, "local" if currency == "local" else "crypto",
                             str(amount), iso, channel, code)["cashout"]
    assert (dec(q["withdrawAmountCrypto"]), dec(q["feeAmountLocalCurrency"])) == (
        p["cryptoWithdrawAmount"], p["localCurrencyFeeAmount"])


def test_legacy_limits_shapes():
    bank = pricing.legacy_limits("CELO", "NG", "bank_transfer")
    assert bank["localCurrencyLimits"] == {"type": "open_range", "min": 1480, "max": 296000,
                                           "step": 1, "withCents": True}
    assert bank["fees"] == {"feePercent": 2.5, "serviceFeePercent": 1.5, "partnerFeePercent": 1,
                            "gasAmount": 0.01, "minFee": 0.01}
    assert bank["cryptoLimits"] == {"min": 0.965, "max": 194.99}
    ug = pricing.legacy_limits("CELO", "UG", "mobile_money")
    assert ug["localCurrencyLimits"]["withCents"] is False
    airtime = pricing.legacy_limits("CELO", "NG", "carrier")
    assert airtime["localCurrencyLimits"]["type"] == "fixed_list"
    assert airtime["localCurrencyLimits"]["values"] == [2000, 5000, 10000, 20000, 50000]
    nine = ref.onramp_channel("NG", "airtime").carrier("9MOBILE")
    narrow = pricing.legacy_limits("CELO", "NG", "carrier", carrier_id=nine.id)
    assert narrow["localCurrencyLimits"]["values"] == [2000, 5000, 10000, 20000]
    assert pricing.legacy_limits("ETHEREUM", "KE", "mpesa")["fees"]["gasAmount"] == 0.35
    closed = pricing.legacy_limits("CELO", "ZM", "bank_transfer")
    assert closed["cryptoLimits"] == {"min": 0, "max": 0}
    assert closed["localCurrencyLimits"]["max"] == 0


def test_legacy_airtime_only_at_denominations():
    mtn = ref.onramp_channel("NG", "airtime").carrier("MTN")
    p = pricing.legacy_price("CELO", "USDC", "local", 5000, "NG", "carrier", mtn.id)
    assert p["localCurrencyAmount"] == 5000
    with pytest.raises(PricingError, match="one of 2000, 5000"):
        pricing.legacy_price("CELO", "USDC", "local", 5001, "NG", "carrier", mtn.id)
    with pytest.raises(PricingError, match="carrierId is required"):
        pricing.legacy_price("CELO", "USDC", "local", 5000, "NG", "carrier")


def test_legacy_providers_shape():
    full = pricing.legacy_providers()
    ke = next(e for e in full if e["countryIsoCode"] == "KE")
    assert ke["currencyIsoCode"] == "KES"
    names = [p["name"] for p in ke["providers"]]
    assert names == ["mpesa", "carrier", "bank_transfer"]
    mpesa = ke["providers"][0]
    assert set(mpesa) == {"name", "description", "requiresCarrier", "limits", "carriers"}
    assert list(mpesa["limits"]) == list(ref.LEGACY_LIMIT_NETWORKS)
    assert set(mpesa["limits"]["TON"]) == {"cryptoLimits", "fees", "localCurrency"}
    carrier = next(p for p in ke["providers"] if p["name"] == "carrier")
    assert carrier["requiresCarrier"] and set(carrier["carriers"][0]) == {"id", "name", "limits"}
    fast = pricing.legacy_providers(include_limits=False)
    assert all("limits" not in p for e in fast for p in e["providers"])
    assert all("limits" not in k for e in fast for p in e["providers"] for k in p["carriers"])
    one = pricing.legacy_providers(network="ETHEREUM")
    assert list(one[0]["providers"][0]["limits"]) == ["ETHEREUM"]
    with pytest.raises(PricingError, match="NEAR"):
        pricing.legacy_providers(network="NEAR")


# --- refusals -----------------------------------------------------------------------------------

@pytest.mark.parametrize("call,message", [
    (lambda: pricing.onramp_quote("POLYGON", "USDC", "local", 2000, "XX", "bank"),
     "country 'XX' is not supported"),
    (lambda: pricing.onramp_quote("POLYGON", "USDC", "local", 2000, "NG", "paybill"),
     "paymentChannel 'paybill' is not offered for on-ramp in NG"),
    (lambda: pricing.onramp_quote("POLYGON", "USDC", "local", 2000, "NG", "airtime"),
     "carrierCode is required for airtime in NG"),
    (lambda: pricing.onramp_quote("POLYGON", "USDC", "local", 2000, "NG", "airtime", "VODA"),
     "carrierCode 'VODA' is not offered"),
    (lambda: pricing.onramp_quote("STELLAR", "USDT", "local", 2000, "NG", "bank"),
     "USDT on STELLAR is not supported for on-ramp"),
    (lambda: pricing.offramp_quote("SOLANA", "USDC", "usd", 20, "NG", "bank"),
     "USDC on SOLANA is not supported for off-ramp"),
    (lambda: pricing.onramp_quote("POLYGON", "USDC", "local", 1479.99, "NG", "bank"),
     "below the minimum: allowed from 1480 to 296000 NGN \\(0.965 to 194.99 USDC"),
    (lambda: pricing.onramp_quote("POLYGON", "USDC", "crypto", 195, "NG", "bank"),
     "above the maximum: allowed from 0.965 to 194.99 USDC \\(1480 to 296000 NGN"),
    (lambda: pricing.offramp_quote("POLYGON", "USDC", "usd", 501, "NG", "bank"),
     "above the maximum: allowed from 1 to 500 USD"),
    (lambda: pricing.onramp_quote("POLYGON", "USDC", "local", 2000, "ZM", "bank"),
     "bank in ZM is unavailable"),
    (lambda: pricing.offramp_quote("POLYGON", "USDC", "usd", 20, "ZM", "bank"),
     "bank in ZM is unavailable"),
    (lambda: pricing.onramp_quote("POLYGON", "USDC", "usd", 20, "NG", "bank"),
     "currency must be 'local' or 'crypto'"),
    (lambda: pricing.offramp_quote("POLYGON", "USDC", "eur", 20, "NG", "bank"),
     "currency must be 'local' or 'usd'"),
    (lambda: pricing.legacy_price("CELO", "USDC", "crypto", 20, "NG", "bank_transfer"),
     "currency must be 'usdc' or 'local'"),
    (lambda: pricing.legacy_price("CELO", "USDC", "local", 2000, "KE", "mobile_money"),
     "provider 'mobile_money' is not offered in KE \\(offered: mpesa, carrier, bank_transfer"),
    (lambda: pricing.legacy_price("CELO", "USDC", "local", 2000, "NG", "mpesa"),
     "provider 'mpesa' is not offered in NG"),
    (lambda: pricing.offramp_typed_quote("CELO", "USDC", "usd", 20, "NG", "paybill"),
     "type 'paybill' is not offered for off-ramp in NG"),
    (lambda: pricing.onramp_limits("NEAR", "NG", "bank"),
     "network 'NEAR' is not supported for on-ramp"),
    (lambda: pricing.onramp_quote("POLYGON", "USDC", "local", "2000.001", "NG", "bank"),
     "more than 2 decimal places for NGN"),
    (lambda: pricing.onramp_quote("POLYGON", "USDC", "local", "3700.5", "UG", "mobile_money",
                                  "MTN"),
     "more than 0 decimal places for UGX"),
    (lambda: pricing.onramp_quote("POLYGON", "USDC", "local", "1e40", "NG", "bank"),
     "above the maximum"),
])
def test_every_refusal_is_a_pricing_error_with_a_clear_message(call, message):
    with pytest.raises(PricingError, match=message) as err:
        call()
    assert err.value.message == str(err.value)


@pytest.mark.parametrize("bad", [0, -5, "0", "-1", "abc", "", None, True, float("nan"),
                                 float("inf"), "Infinity", "NaN", [], {}])
def test_amount_must_be_a_positive_finite_number(bad):
    with pytest.raises(PricingError, match="amount must be a positive number"):
        pricing.onramp_quote("POLYGON", "USDC", "local", bad, "NG", "bank")


def test_unavailable_corridor_limits_are_all_zero():
    assert pricing.onramp_limits("POLYGON", "ZM", "bank") == dict.fromkeys(
        ["minUsd", "maxUsd", "minLocalCurrency", "maxLocalCurrency", "minCrypto", "maxCrypto"], 0)
    assert set(pricing.offramp_typed_limits("bank", "ZM").values()) == {0}


def test_to_number_round_trips_and_refuses_lossy_values():
    assert pricing.to_number(Decimal("3700.000")) == 3700
    assert isinstance(pricing.to_number(Decimal("3700.000")), int)
    assert pricing.to_number(Decimal("0.123456")) == 0.123456
    with pytest.raises(ArithmeticError):
        pricing.to_number(Decimal("0.12345678901234567890"))
