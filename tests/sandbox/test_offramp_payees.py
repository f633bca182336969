"""Off-ramp payee details: the carrier field, and validate-fields' three answers (found, not
verifiable, no such account), chosen by the documented magic suffixes."""
from __future__ import annotations

import pytest

from checkout.sandbox import payees
from checkout.sandbox import reference as ref

from .sandbox_support import EVM_ADDRESS, Api, api, sandbox_app, sandbox_factory  # noqa: F401

NG_BANK = {"bankCode": "011:02", "bankAccountNumber": "0123456789"}
OPAY = ref.carrier("NG", "OPAY", "OPay").id
MTN_NG = ref.carrier("NG", "MTN", "MTN").id


def offer(api: Api, country: str, offramp_type: str, amount: str = "10") -> dict:
    return api.offramp_offer(country=country, type=offramp_type, amount=amount)


def validate(api: Api, the_offer: dict, fields: dict, expect: int = 200) -> dict:
    return api.post("/api/offramp/validate-fields",
                    {"offerId": the_offer["offer"]["_id"], "requiredFields": fields}, expect=expect)


def create(api: Api, the_offer: dict, fields: dict, expect: int = 200) -> dict:
    body = {"offerId": the_offer["offer"]["_id"], "paymentType": "CRYPTO_WALLET",
            "network": "POLYGON", "asset": "USDC", "address": EVM_ADDRESS, "currency": "usd",
            "amount": float(the_offer["cashout"]["usdAmount"]), "requiredFields": fields}
    return api.post("/api/offramp/create-order", body, expect=expect)


# -- carriers ---------------------------------------------------------------------------------

def carrier_types() -> set[tuple[str, str]]:
    return {(c.iso, ch.channel) for c in ref.COUNTRIES for ch in c.offramp
            if ch.channel == "airtime" or (ch.channel == "mobile_money" and len(ch.carriers) > 1)}


def test_countries_list_carriers_of_the_types_that_have_them(api):
    for country in api.get("/api/offramp/countries"):
        for entry in country["offrampTypes"]:
            channel = ref.offramp_channel(country["countryIsoCode"], entry["type"])
            if channel.carriers:
                assert entry["carriers"] == [{"id": c.id, "name": c.name} for c in channel.carriers]
            else:
                assert "carriers" not in entry
    nigeria = next(c for c in api.get("/api/offramp/countries") if c["countryIsoCode"] == "NG")
    airtime = next(t for t in nigeria["offrampTypes"] if t["type"] == "airtime")
    assert [c["name"] for c in airtime["carriers"]] == ["MTN", "Airtel", "Glo", "9mobile"]


@pytest.mark.parametrize("country, offramp_type", sorted(
    {(c.iso, ch.channel) for c in ref.COUNTRIES for ch in c.offramp if ch.limits.available}))
def test_carrier_field_first_exactly_where_a_carrier_must_be_named(api, country, offramp_type):
    fields = offer(api, country, offramp_type)["offer"]["requiredFields"]
    channel = ref.offramp_channel(country, offramp_type)
    if (country, offramp_type) in carrier_types():
        assert list(fields)[0] == "carrierId"
        assert fields["carrierId"] == {
            "type": "enum", "label": "Mobile network", "required": True,
            "options": [{"value": c.id, "label": c.name} for c in channel.carriers]}
    else:
        assert "carrierId" not in fields


def test_kenya_mpesa_has_one_carrier_and_no_carrier_field(api):
    assert list(offer(api, "KE", "mobile_money")["offer"]["requiredFields"]) == ["phoneNumber"]
    assert list(offer(api, "KE", "airtime")["offer"]["requiredFields"]) == ["carrierId",
                                                                           "phoneNumber"]


def test_channel_based_offer_asks_for_the_carrier_too(api):
    quote = api.get("/api/offramp/best-offer", amount="10", currency="usd", countryIsoCode="NG",
                    paymentChannel="mobile_money", network="POLYGON", asset="USDC")
    assert list(quote["offer"]["requiredFields"]) == ["carrierId", "phoneNumber"]


def test_orders_carry_the_carrier_like_any_field(api):
    the_offer = offer(api, "NG", "airtime")
    missing = create(api, the_offer, {"phoneNumber": "2348012345678"}, expect=400)
    assert "requiredFields.carrierId is required (Mobile network)" in missing["message"]
    wrong = create(api, the_offer, {"carrierId": "MTN", "phoneNumber": "2348012345678"}, expect=400)
    assert "requiredFields.carrierId must be one of" in wrong["message"]
    order = create(api, the_offer, {"carrierId": MTN_NG, "phoneNumber": "2348012345678"})
    assert order["requiredFields"] == {"carrierId": MTN_NG, "phoneNumber": "2348012345678"}
    assert {"label": "Mobile network", "type": "enum", "value": "MTN"} in order["offerRequiredFields"]
    listed = api.get("/api/offramp/orders", limit=1)["list"][0]
    assert listed["requiredFields"]["carrierId"] == MTN_NG


# -- validate-fields: found, not verifiable, no such account ----------------------------------

def test_found_adds_the_account_name(api):
    details = validate(api, offer(api, "NG", "bank"), NG_BANK)["details"]
    assert details[:2] == [{"label": "Bank", "value": "First Bank of Nigeria"},
                           {"label": "Bank account number", "value": "0123456789"}]
    assert details[2]["label"] == "Account name" == payees.HOLDER_LABEL
    assert details[2]["value"] == payees.holder_name("0123456789")
    assert len(details) == 3
    field_labels = {d["label"] for d in details[:2]}
    assert details[2]["label"] not in field_labels


def test_found_for_mobile_money_with_its_carrier(api):
    details = validate(api, offer(api, "NG", "mobile_money"),
                       {"carrierId": OPAY, "phoneNumber": "2348012345678"})["details"]
    assert details == [{"label": "Mobile network", "value": "OPay"},
                       {"label": "Phone number", "value": "2348012345678"},
                       {"label": "Account name", "value": payees.holder_name("2348012345678")}]


@pytest.mark.parametrize("country, offramp_type, fields", [
    ("NG", "airtime", {"carrierId": MTN_NG, "phoneNumber": "2348012345678"}),
    ("KE", "paybill", {"shortCode": "888880", "accountNumber": "0123456789"}),
    # Magic values never make airtime or paybill fail: they have no holder to check.
    ("NG", "airtime", {"carrierId": MTN_NG, "phoneNumber": "234801234" + "0404"}),
    ("KE", "paybill", {"shortCode": "888880", "accountNumber": "123456" + "0404"}),
    ("NG", "bank", {"bankCode": "011:02", "bankAccountNumber": "012345" + payees.UNVERIFIABLE_SUFFIX}),
    ("KE", "mobile_money", {"phoneNumber": "25411061" + payees.UNVERIFIABLE_SUFFIX}),
])
def test_not_verifiable_echoes_the_fields_only(api, country, offramp_type, fields):
    the_offer = offer(api, country, offramp_type)
    details = validate(api, the_offer, fields)["details"]
    labels = [the_offer["offer"]["requiredFields"][name]["label"] for name in fields]
    assert [d["label"] for d in details] == labels
    assert "Account name" not in {d["label"] for d in details}
    create(api, the_offer, fields)          # an unverifiable account can still be paid


@pytest.mark.parametrize("country, offramp_type, fields, account, message", [
    ("NG", "bank", {"bankCode": "058:02"}, ("bankAccountNumber", "0123456789"),
     "No account with the number 0123450404 exists at Guaranty Trust Bank. "
     "Check the account number and the bank."),
    ("KE", "mobile_money", {}, ("phoneNumber", "254110611756"),
     "No M-PESA account is registered to the phone number 254110610404. Check the phone number."),
    ("NG", "mobile_money", {"carrierId": OPAY}, ("phoneNumber", "2348012345678"),
     "No OPay account is registered to the phone number 2348012340404. "
     "Check the phone number and the mobile network."),
])
def test_no_such_account_is_refused_in_plain_words(api, country, offramp_type, fields, account,
                                                   message):
    name, good = account
    missing = {**fields, name: good[:-4] + payees.NO_ACCOUNT_SUFFIX}
    the_offer = offer(api, country, offramp_type)
    assert validate(api, the_offer, missing, expect=400) == {"message": message}
    # The upstream takes no order for a payout it knows cannot be made; the offer stays usable.
    assert create(api, the_offer, missing, expect=400) == {"message": message}
    assert create(api, the_offer, {**fields, name: good})["status"] == "initiated"


def test_still_strict_about_everything_else(api, sandbox_factory):
    the_offer = offer(api, "NG", "bank")
    assert validate(api, {"offer": {"_id": "0" * 24}}, NG_BANK, expect=400) == {
        "message": "offerId is unknown"}
    assert "bankAccountNumber is required" in validate(
        api, the_offer, {"bankCode": "011:02"}, expect=400)["message"]
    assert "bankCode must be one of" in validate(
        api, the_offer, {"bankCode": "nope", "bankAccountNumber": "1"}, expect=400)["message"]
    assert "unknown field(s): phoneNumber" in validate(
        api, the_offer, {**NG_BANK, "phoneNumber": "2348012345678"}, expect=400)["message"]
    refused = api.post("/api/offramp/validate-fields",
                       {"offerId": the_offer["offer"]["_id"]}, expect=400)
    assert refused == {"message": "requiredFields is required"}
    create(api, the_offer, NG_BANK)
    assert "already been used" in validate(api, the_offer, NG_BANK, expect=400)["message"]


def test_holder_names_are_stable_and_differ_between_accounts():
    assert payees.holder_name("0123456789") == payees.holder_name("0123456789")
    names = {payees.holder_name(f"01234567{n:02d}") for n in range(20)}
    assert len(names) > 3


# -- account numbers: the partner's published format, and its payee check ---------------------

def test_offers_publish_each_countrys_bank_account_format(api):
    nigeria = offer(api, "NG", "bank")["offer"]["requiredFields"]["bankAccountNumber"]
    assert nigeria == {"type": "string", "label": "Bank account number", "required": True,
                       "format": "0000000000", "regexp": "^[0-9]{10}$"}
    kenya = offer(api, "KE", "bank", amount="20")["offer"]["requiredFields"]["bankAccountNumber"]
    assert kenya["regexp"] == "^[0-9]{10,16}$" and "format" not in kenya
    paybill = offer(api, "KE", "paybill")["offer"]["requiredFields"]
    assert paybill["shortCode"]["regexp"] == "^[0-9]{5,7}$"


NUBAN_REFUSED = ("requiredFields.bankAccountNumber has the wrong format: Bank account number must "
                 "match ^[0-9]{10}$ (format 0000000000)")


@pytest.mark.parametrize("account", [
    "abc", "12", "💸", "12345", "01234", "012345678", "01234567890", "0123 456789",
    "0123456789\n", "٠١٢٣٤٥٦٧٨٩",                   # Arabic-Indic digits are digits, not NUBAN's
])
def test_a_nigerian_account_number_that_is_not_a_nuban_is_refused_before_any_payee_check(
        api, account):
    the_offer = offer(api, "NG", "bank")
    fields = {"bankCode": "011:02", "bankAccountNumber": account}
    assert validate(api, the_offer, fields, expect=400) == {"message": NUBAN_REFUSED}
    assert create(api, the_offer, fields, expect=400) == {"message": NUBAN_REFUSED}
    # Nothing was created, and the offer is still good for the right number.
    assert api.get("/api/offramp/orders", limit=5)["list"] == []
    assert create(api, the_offer, NG_BANK)["status"] == "initiated"


@pytest.mark.parametrize("fields, message", [
    ({"shortCode": "12", "accountNumber": "0123456789"},
     "requiredFields.shortCode has the wrong format: Paybill number must match ^[0-9]{5,7}$"),
    ({"shortCode": "888880", "accountNumber": "💸"},
     "requiredFields.accountNumber has the wrong format: Account number must match "
     "^[A-Za-z0-9-]{1,20}$"),
])
def test_a_paybill_number_or_account_of_the_wrong_shape_is_refused(api, fields, message):
    the_offer = offer(api, "KE", "paybill")
    assert validate(api, the_offer, fields, expect=400) == {"message": message}
    assert create(api, the_offer, fields, expect=400) == {"message": message}


@pytest.mark.parametrize("country, account, message", [
    ("NG", "12345", "A Nigerian account number (NUBAN) has 10 digits; 12345 is not one. "
                    "Check the account number."),
    ("NG", "abcdefghij", "A Nigerian account number (NUBAN) has 10 digits; abcdefghij is not "
                         "one. Check the account number."),
    ("KE", "💸", "A Kenyan bank account number has 10 to 16 digits; 💸 is not one. "
                "Check the account number."),
])
def test_the_payee_check_refuses_a_number_the_bank_could_not_have_whatever_the_offer_says(
        country, account, message):
    # An offer whose descriptor states no format at all: the bank's own check still refuses.
    lax = {"bankCode": {"type": "string", "label": "Bank", "required": True},
           "bankAccountNumber": {"type": "string", "label": "Account number", "required": True}}
    with pytest.raises(payees.InvalidRequest) as refused:
        payees.check_payee("bank", {"bankCode": "011:02", "bankAccountNumber": account}, lax,
                           "Bank account", country)
    assert str(refused.value) == message
    # A number of the country's shape is checked as before.
    good = "0123456789"
    assert payees.check_payee("bank", {"bankCode": "011:02", "bankAccountNumber": good}, lax,
                              "Bank account", country) == payees.holder_name(good)
