"""The sandbox's reference data: exact asset lists of spec 2.1 and coherent country data."""
from __future__ import annotations

import dataclasses
from decimal import Decimal

import pytest
import re2

from checkout.sandbox import reference as ref
from checkout.sandbox.pricing import round_half

ONRAMP_SPEC = {
    ("USDC", n) for n in ("POLYGON", "CELO", "ETHEREUM", "BASE", "AVALANCHE", "SOLANA",
                          "OPTIMISM", "STELLAR", "BNB", "ARBITRUM")
} | {("USDC_E", "POLYGON"), ("CUSD", "CELO"), ("CKES", "CELO")} | {
    ("USDT", n) for n in ("POLYGON", "AVALANCHE", "CELO", "ETHEREUM", "TON", "SOLANA",
                          "OPTIMISM", "LISK", "BNB", "ARBITRUM")
}
OFFRAMP_SPEC = {("USDC", n) for n in ("POLYGON", "CELO", "ETHEREUM", "AVALANCHE")} | {
    ("CUSD", "CELO")} | {("USDT", n) for n in ("POLYGON", "AVALANCHE", "CELO", "ETHEREUM")}


def test_onramp_and_offramp_asset_lists_are_exactly_the_spec():
    assert len(ref.ONRAMP_ASSETS) == 23 and len(ref.OFFRAMP_ASSETS) == 9
    assert {(p.asset, p.network) for p in ref.ONRAMP_ASSETS} == ONRAMP_SPEC
    assert {(p.asset, p.network) for p in ref.OFFRAMP_ASSETS} == OFFRAMP_SPEC


def test_util_assets_flags_follow_spec_2_1():
    flags = {(a.asset, a.network): (a.can_offramp, a.can_onramp) for a in ref.UTIL_ASSETS}
    assert len(flags) == len(ref.UTIL_ASSETS), "no pair twice"
    for network in ref.UTIL_NETWORKS:       # NATIVE on every network, NEAR and TRON too
        assert flags[("NATIVE", network)] == (False, False)
    for pair in [("USDC", "ALGORAND"), ("USDC", "NEAR"), ("USDGLO", "POLYGON"),
                 ("USDGLO", "CELO"), ("USDC_E", "AVALANCHE")]:
        assert flags[pair] == (False, False)
    offramp = {("USDC", n) for n in ("POLYGON", "CELO", "ETHEREUM", "BASE", "AVALANCHE")} | {
        ("CUSD", "CELO"), ("CKES", "CELO"), ("CGHS", "CELO")} | {
        ("USDT", n) for n in ("POLYGON", "TRON", "AVALANCHE", "CELO", "ETHEREUM", "TON")}
    onramp_only = {("USDC_E", "POLYGON")} | {
        ("USDC", n) for n in ("SOLANA", "OPTIMISM", "STELLAR", "BNB", "ARBITRUM")} | {
        ("USDT", n) for n in ("SOLANA", "OPTIMISM", "LISK", "BNB", "ARBITRUM")}
    assert {p for p, f in flags.items() if f == (True, True)} == offramp
    assert {p for p, f in flags.items() if f == (False, True)} == onramp_only
    assert not [p for p, f in flags.items() if f == (True, False)]
    assert ref.UTIL_ASSETS[0].to_json() == {"network": "POLYGON", "asset": "USDC",
                                            "canOfframp": True, "canOnramp": True}


def test_reference_data_is_frozen():
    ng = ref.country("NG")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ng.name = "x"  # type: ignore[misc]
    with pytest.raises(TypeError):
        ref.USD_RATES["NGN"] = Decimal(1)  # type: ignore[index]
    assert isinstance(ng.onramp, tuple) and isinstance(ref.COUNTRIES, tuple)


@pytest.mark.parametrize("iso,currency,rate,places", [
    ("NG", "NGN", "1480", 2), ("KE", "KES", "129", 2), ("GH", "GHS", "15.5", 2),
    ("UG", "UGX", "3700", 0), ("TZ", "TZS", "2650", 0), ("ZA", "ZAR", "18.2", 2),
    ("ZM", "ZMW", "26.5", 2), ("SN", "XOF", "605", 0), ("CI", "XOF", "605", 0),
    ("BJ", "XOF", "605", 0), ("CM", "XAF", "605", 0),
])
def test_countries_have_realistic_currency_data(iso, currency, rate, places):
    c = ref.country(iso)
    assert (c.currency, c.usd_rate, c.currency_places) == (currency, Decimal(rate), places)
    assert ref.country(iso.lower()) is c
    assert c.onramp and c.offramp and c.basic_documents


def test_unknown_lookups_answer_none():
    assert ref.country("XX") is None and ref.country(None) is None  # type: ignore[arg-type]
    assert ref.onramp_channel("NG", "paybill") is None
    assert ref.offramp_channel("ZZ", "bank") is None
    assert ref.document_by_id("nope") is None


def test_nigeria_channels_and_carriers():
    airtime = ref.onramp_channel("NG", "airtime")
    assert airtime.requires_carrier
    assert [c.name for c in airtime.carriers] == ["MTN", "Airtel", "Glo", "9mobile"]
    assert airtime.carrier("GLO").name == "Glo" and airtime.carrier("nope") is None
    assert ref.onramp_channel("NG", "bank").required_fields == ()
    bank = ref.offramp_channel("NG", "bank")
    fields = ref.fields_json(bank.required_fields)
    assert list(fields) == ["bankCode", "bankAccountNumber"]
    assert fields["bankCode"]["type"] == "enum"
    assert {"value": "011:02", "label": "First Bank of Nigeria"} in fields["bankCode"]["options"]
    assert len(fields["bankCode"]["options"]) >= 4


def test_kenya_mpesa_paybill_and_flat_fee():
    ke = ref.country("KE")
    mpesa = ke.onramp_channel("mobile_money")
    assert mpesa.transfer_type == "stk_push"
    assert [(c.name, c.code) for c in mpesa.carriers] == [("Safaricom", "SAFARICOM")]
    assert ref.fields_json(mpesa.required_fields) == {
        "phoneNumber": {"type": "phone", "label": "Phone number", "required": True}}
    paybill = ke.offramp_channel("paybill")
    assert list(ref.fields_json(paybill.required_fields)) == ["shortCode", "accountNumber"]
    assert paybill.fees.flat_local == Decimal(30)
    assert all(ch.channel != "paybill" for c in ref.COUNTRIES for ch in c.onramp)


def test_every_transfer_instruction_type_occurs():
    kinds = {ch.transfer_type for c in ref.COUNTRIES for ch in c.onramp}
    assert kinds == {"manual", "redirect", "ussd", "stk_push", "otp_stk_push"}
    assert ref.onramp_channel("NG", "bank").transfer_type == "manual"
    assert ref.onramp_channel("GH", "bank").transfer_type == "redirect"
    assert ref.onramp_channel("NG", "airtime").transfer_type == "ussd"
    assert ref.onramp_channel("UG", "mobile_money").transfer_type == "otp_stk_push"


def test_fees_and_limits_are_sane_everywhere():
    unavailable = []
    for c in ref.COUNTRIES:
        for ch in c.onramp + c.offramp:
            f = ch.fees
            assert f.percent == f.service_percent + f.partner_percent
            assert f.min_fee_usd >= Decimal("0.01") and f.flat_local >= 0
            lim = ch.limits
            if not lim.available:
                unavailable.append((c.iso, ch.channel))
                assert lim.min_usd == lim.max_usd == 0
                continue
            assert 0 < lim.min_usd < lim.max_usd
            for k in ch.carriers:
                if k.limits:
                    assert 0 < k.limits.min_usd < k.limits.max_usd
    assert unavailable, "at least one corridor cannot be priced (notes 2)"


def test_gas_converts_exactly_into_every_pegged_asset():
    for network, gas in ref.GAS_USD.items():
        assert gas > 0
        for asset in ref.ASSET_PEGS:
            amount = gas * ref.crypto_per_usd(asset)
            assert round_half(amount, ref.CRYPTO_PLACES) == amount, (network, asset)
    assert ref.GAS_USD["ETHEREUM"] > ref.GAS_USD["POLYGON"]


def test_crypto_pegs():
    for asset in ("USDC", "USDC_E", "USDT", "CUSD", "USDGLO"):
        assert ref.crypto_per_usd(asset) == 1
    assert ref.crypto_per_usd("CKES") == ref.USD_RATES["KES"]
    assert ref.crypto_per_usd("CGHS") == ref.USD_RATES["GHS"]


def test_required_field_descriptor_shape():
    field = ref.RequiredField("x", "string", "X", regexp="^a$", regexp_flags="i", format="a")
    assert field.to_json() == {"type": "string", "label": "X", "required": True,
                               "format": "a", "regexp": "^a$", "regexpFlags": "i"}


@pytest.mark.parametrize("iso,value,good,bad", [
    ("KE", "NATIONAL_ID", "12345678", "1234567890"),
    ("KE", "PASSPORT", "AK1234567", "ak12"),
    ("NG", "VOTER_ID", "90f5b4a3c2 19283746", "short"),
    ("NG", "BVN", "22222222222", "2222222222"),
    ("NG", "NIN", "12345678901", "1234567890a"),
    ("NG", "DRIVERS_LICENSE", "abc-123456ab", "ab-123456"),
    ("GH", "PASSPORT", "g1234567", "1234567"),
    ("ZA", "NATIONAL_ID", "8001015009087", "800101500908"),
])
def test_kyc_document_patterns(iso, value, good, bad):
    doc = ref.country(iso).document_by_value(value)
    id_field = next(f for f in doc.required_fields if f.name == "id_number")
    options = re2.Options()
    options.case_sensitive = "i" not in (id_field.regexp_flags or "")
    pattern = re2.compile(id_field.regexp, options)
    assert pattern.search(good) and not pattern.search(bad)


def test_kyc_documents_have_stable_unique_ids_and_expected_fields():
    ids = [d.id for c in ref.COUNTRIES for d in c.documents]
    assert len(ids) == len(set(ids))
    for c in ref.COUNTRIES:
        values = [d.value for d in c.documents]
        assert len(values) == len(set(values)), c.iso
        for d in c.documents:
            names = [f.name for f in d.required_fields]
            assert names[:5] == ["first_name", "last_name", "dob", "email", "id_number"]
            assert ("images" in names) == (d.kind == "advanced")
            assert ref.document_by_id(d.id) == (c, d)
    ke_id = ref.country("KE").document_by_value("NATIONAL_ID")
    assert ke_id.to_json(with_id=True)["requiredFields"]["id_number"] == {
        "type": "string", "label": "ID number", "required": True, "format": "00000000",
        "regexp": "^[0-9]{1,9}$"}
    dl = ref.country("NG").document_by_value("DRIVERS_LICENSE")
    assert dl.kind == "advanced"
    assert dl.to_json()["requiredFields"]["images"]["type"] == "smile-identity-images"
    assert ref.stable_id("a", "b") == ref.stable_id("a", "b") != ref.stable_id("a", "c")


def _corridors(country: ref.Country, flow: str) -> list[tuple[str, ref.Limits]]:
    channels = country.onramp if flow == "onramp" else country.offramp
    return [(ch.channel, ch.limits) for ch in channels if ch.limits.available]


@pytest.mark.parametrize("country", ref.COUNTRIES, ids=lambda c: c.iso)
@pytest.mark.parametrize("flow", ["onramp", "offramp"])
def test_kyc_rules_make_every_level_reachable_inside_the_corridors(country, flow):
    """From 0, a cent between one rule's max and the next's min, levels rising one at a time, the
    advanced level exactly where the country has advanced documents; and every level's range
    overlaps some corridor's USD limits, so an order can need it."""
    rules = country.kyc_onramp if flow == "onramp" else country.kyc_offramp
    assert [r.type for r in rules] == (["none", "basic", "advanced"] if country.advanced_documents
                                       else ["none", "basic"])
    assert rules[0].min == 0
    for a, b in zip(rules, rules[1:], strict=False):
        assert a.max is not None and b.min - a.max == Decimal("0.01")
    corridors = _corridors(country, flow)
    assert corridors
    top = max(limits.max_usd for _, limits in corridors)
    # The last rule reaches the highest corridor limit: every order has a rule.
    assert rules[-1].max is None or rules[-1].max >= top
    for rule in rules:
        upper = rule.max if rule.max is not None else Decimal("Infinity")
        overlapping = [name for name, limits in corridors
                       if limits.min_usd <= upper and rule.min <= limits.max_usd]
        assert overlapping, (country.iso, flow, rule)


def test_kyc_rules_json_and_the_documented_kenyan_figures():
    kenya = next(e for e in ref.util_countries_json() if e["countryIsoCode"] == "KE")
    assert kenya["kycRules"]["onramp"] == [
        {"min": 0, "max": 14.99, "type": "none"}, {"min": 15, "max": 99.99, "type": "basic"},
        {"min": 100, "max": "Infinity", "type": "advanced"}]
    # Both kinds of top: open-ended ('Infinity') and a finite USD limit.
    tops = {(c.iso, flow): (c.kyc_onramp if flow == "onramp" else c.kyc_offramp)[-1].max
            for c in ref.COUNTRIES for flow in ("onramp", "offramp")}
    assert tops[("KE", "offramp")] == 500 and tops[("GH", "onramp")] == 300
    assert tops[("NG", "onramp")] is None
    assert ref.kyc_rules((0, "none"), (15, "basic"), top=40) == (
        ref.KycRule(Decimal(0), Decimal("14.99"), "none"),
        ref.KycRule(Decimal(15), Decimal(40), "basic"))


def test_which_advanced_documents_have_a_back():
    ng = ref.country("NG")
    licence, passport = ng.advanced_documents
    assert licence.has_back and licence.image_types == (0, 1, 5)
    assert not passport.has_back and passport.image_types == (0, 1)
    assert ref.country("KE").document_by_value("ALIEN_CARD").image_types == (0, 1, 5)
    assert ng.document_by_value("BVN").image_types == ()
    labels = {d.value: d.to_json()["requiredFields"]["images"]["label"]
              for d in ng.advanced_documents}
    assert "front and back" in labels["DRIVERS_LICENSE"] and "back" not in labels["PASSPORT"]


def test_list_shapes_of_spec_2_8():
    on = ref.onramp_payment_channels_json()
    ng = next(e for e in on if e["countryIsoCode"] == "NG")
    airtime = next(ch for ch in ng["paymentChannels"] if ch["paymentChannel"] == "airtime")
    assert set(airtime) == {"paymentChannel", "description", "requiresCarrier", "carriers"}
    assert set(airtime["carriers"][0]) == {"id", "name", "code"}
    off = ref.offramp_payment_channels_json()
    ke = next(e for e in off if e["countryIsoCode"] == "KE")
    assert {ch["paymentChannel"] for ch in ke["paymentChannels"]} >= {"mobile_money", "paybill"}
    typed = ref.offramp_countries_json()
    assert set(typed[0]["offrampTypes"][0]) <= {"type", "name", "carriers"}
    util = ref.util_countries_json()
    assert {e["countryIsoCode"] for e in util} >= {"NG", "KE", "GH", "UG", "TZ", "ZA", "ZM",
                                                   "SN", "CI", "BJ", "CM"}
    assert "_id" not in util[0]["basicDocuments"][0]
    carriers = ref.util_carriers_json()
    ng_carriers = next(e for e in carriers if e["countryIsoCode"] == "NG")["carriers"]
    assert {"name": "MTN", "code": "MTN"} in ng_carriers
    assert all(set(k) == {"name", "code"} for k in ng_carriers)


def test_phone_country_and_legacy_provider_names():
    assert ref.country_for_phone("2348012345678").iso == "NG"
    assert ref.country_for_phone("+254110611756").iso == "KE"
    assert ref.country_for_phone("15551234567") is None
    assert ref.legacy_provider_name("KE", "mobile_money") == "mpesa"
    assert ref.legacy_provider_name("UG", "mobile_money") == "mobile_money"
    assert ref.legacy_provider_name("NG", "airtime") == "carrier"
    assert ref.legacy_provider_name("NG", "bank") == "bank_transfer"
    assert ref.default_onramp_asset("TON") == "USDT"
    assert ref.default_onramp_asset("POLYGON") == "USDC"
    assert ref.default_onramp_asset("NEAR") is None


def test_offramp_carrier_field_where_a_network_must_be_named():
    airtime = ref.offramp_channel("NG", "airtime")
    assert airtime.needs_carrier and [f.name for f in airtime.required_fields] == [
        "carrierId", "phoneNumber"]
    carrier_field = ref.fields_json(airtime.required_fields)["carrierId"]
    assert carrier_field["label"] == "Mobile network" and carrier_field["type"] == "enum"
    assert [o["label"] for o in carrier_field["options"]] == ["MTN", "Airtel", "Glo", "9mobile"]
    assert airtime.payee_fields == (ref.PHONE,)
    # One M-PESA network in Kenya: nothing to choose. Several wallets in Ghana: choose one.
    assert not ref.offramp_channel("KE", "mobile_money").needs_carrier
    assert ref.offramp_channel("GH", "mobile_money").needs_carrier
    assert not ref.offramp_channel("KE", "paybill").needs_carrier
    assert not ref.offramp_channel("NG", "bank").needs_carrier
    # On-ramp channels keep their own carrier rule (carrierCode on best-offer).
    assert "carrierId" not in ref.fields_json(ref.onramp_channel("NG", "airtime").required_fields)


def test_the_documented_kyc_thresholds_are_the_reference_data():
    """docs/sandbox.md's table of thresholds says what reference.py holds."""
    from pathlib import Path

    doc = (Path(__file__).parents[2] / "docs" / "sandbox.md").read_text()
    table = doc.split("\n| country | on-ramp none / basic / advanced |", 1)[1].split("\n\n", 1)[0]
    rows = [[cell.strip().replace("*", "") for cell in line.strip("|").split("|")]
            for line in table.strip().splitlines()[2:]]

    def shown(rules: tuple[ref.KycRule, ...]) -> str:
        by_type = {r.type: f"{r.to_json()['min']}–{r.to_json()['max']}" for r in rules}
        return " / ".join(by_type.get(level, "—") for level in ("none", "basic", "advanced"))

    documented = {}
    for isos, onramp, offramp in rows:
        for iso in isos.split(", "):
            documented[iso] = (onramp, offramp)
    assert documented == {c.iso: (shown(c.kyc_onramp), shown(c.kyc_offramp))
                          for c in ref.COUNTRIES}
