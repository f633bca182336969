"""Forms built from required-field descriptors, and the step forms with locked claims."""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal
from typing import Any

import pytest

from checkout.forms import (
    clean_amount,
    clean_corridor,
    clean_required_fields,
    clean_wallet,
    compile_pattern,
    describe_format,
    input_type,
    normalise_phone,
    parse_amount,
)
from checkout.upstream.types import Carrier, Limits, required_fields_from_json

ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

DESCRIPTORS = {
    "phoneNumber": {"type": "phone", "label": "Phone number", "required": True},
    "bankCode": {"type": "enum", "label": "Bank", "required": True,
                 "options": [{"value": "011:02", "label": "First Bank of Nigeria"},
                             {"value": "058:01", "label": "GTBank"}]},
    "buyerBankAccountNumber": {"type": "string", "label": "Account number", "required": True,
                               "regexp": "^[0-9]{10}$"},
    "voterId": {"type": "string", "label": "Voter ID", "required": False,
                "regexp": "^[a-z0-9 ]{9,29}$", "regexpFlags": "i",
                "format": "0000000000000000000"},
    "email": {"type": "email", "label": "Email", "required": False},
    "dob": {"type": "date", "label": "Date of birth", "required": False},
}
GOOD = {"phoneNumber": "0801 234 5678", "bankCode": "011:02", "buyerBankAccountNumber": "0123456789"}


@dataclass
class FakeSession:
    claims: dict[str, Any] = field(default_factory=dict)
    locked: list[str] = field(default_factory=list)

    def is_locked(self, name: str) -> bool:
        return name in self.locked


def specs():
    return required_fields_from_json(DESCRIPTORS)


def test_good_values_are_cleaned():
    result = clean_required_fields(specs(), {**GOOD, "voterId": "abc DEF 123",
                                             "email": "Ada@Example.COM", "dob": "1990-02-01"},
                                   country="NG")
    assert result.ok, result.errors
    assert result.values == {"phoneNumber": "2348012345678", "bankCode": "011:02",
                             "buyerBankAccountNumber": "0123456789", "voterId": "abc DEF 123",
                             "email": "Ada@example.com", "dob": "1990-02-01"}


def test_optional_fields_may_be_left_empty_and_are_not_sent():
    result = clean_required_fields(specs(), GOOD, country="NG")
    assert result.ok
    assert "voterId" not in result.values and "email" not in result.values


@pytest.mark.parametrize(("name", "value", "message"), [
    ("phoneNumber", "", "required"),
    ("phoneNumber", "12", "not valid"),
    ("phoneNumber", "hello", "phone number"),
    # A Kenyan number for Nigeria, written either way: the message names the country and shows
    # a number of its shape.
    ("phoneNumber", "+254110611756", "Enter a phone number from Nigeria (for example 0802 123 4567)."),
    ("phoneNumber", "0712345678", "not valid in Nigeria. Check the number of digits (for example "
                                  "0802 123 4567)."),
    ("bankCode", "999:99", "Choose one of the options"),
    ("buyerBankAccountNumber", "12345", "Enter your 10-digit Nigerian account number (NUBAN)."),
    ("buyerBankAccountNumber", "x" * 300, "too long"),
    ("voterId", "ab", "0000000000000000000"),
    ("email", "not-an-email", "valid email"),
    ("dob", "01/02/1990", "YYYY-MM-DD"),
])
def test_bad_values_get_a_message_next_to_the_field(name, value, message):
    result = clean_required_fields(specs(), {**GOOD, name: value}, country="NG")
    assert not result.ok
    assert set(result.errors) == {name}
    assert message in result.errors[name]


# -- bank account numbers: the partner's rule and the country's own ------------------------------

# A descriptor that states no rule at all, as a partner's may: the national format still holds.
NO_RULE = required_fields_from_json({
    "bankCode": DESCRIPTORS["bankCode"],
    "bankAccountNumber": {"type": "string", "label": "Bank account number", "required": True}})


@pytest.mark.parametrize("account", [
    "abc", "12", "💸", "12345", "012345678", "01234567890", "0123456789💸", "abcdefghij",
    "٠١٢٣٤٥٦٧٨٩",                                   # digits, but not the ones a bank takes
])
def test_a_nigerian_account_number_is_a_nuban_even_when_the_offer_says_nothing(account):
    result = clean_required_fields(NO_RULE, {"bankCode": "011:02", "bankAccountNumber": account},
                                   country="NG")
    assert result.errors == {
        "bankAccountNumber": "Enter your 10-digit Nigerian account number (NUBAN)."}
    assert "bankAccountNumber" not in result.values


@pytest.mark.parametrize("typed", ["0123456789", "0123 456 789", " 0123-456-789 ", "0123.456.789"])
def test_an_account_number_grouped_as_people_copy_it_is_sent_as_its_digits(typed):
    for specs_ in (NO_RULE, required_fields_from_json({
            "bankCode": DESCRIPTORS["bankCode"],
            "bankAccountNumber": {"type": "string", "label": "Bank account number",
                                  "required": True, "regexp": "^[0-9]{10}$",
                                  "format": "0000000000"}})):
        result = clean_required_fields(specs_, {"bankCode": "011:02", "bankAccountNumber": typed},
                                       country="NG")
        assert result.ok, result.errors
        assert result.values["bankAccountNumber"] == "0123456789"


@pytest.mark.parametrize(("country", "account", "message"), [
    # Kenya has no national format: the partner's rule says what is wanted, in words.
    ("KE", "12", "Enter 10 to 16 digits."),
    ("KE", "01234567890123456", "Enter 10 to 16 digits."),
    ("KE", "💸", "Enter the account number with its digits (and letters, if it has any) only."),
    ("KE", "abc", "Enter 10 to 16 digits."),
])
def test_elsewhere_the_partners_rule_for_account_numbers_is_said_in_words(country, account,
                                                                          message):
    specs_ = required_fields_from_json({"bankAccountNumber": {
        "type": "string", "label": "Bank account number", "required": True,
        "regexp": "^[0-9]{10,16}$"}})
    result = clean_required_fields(specs_, {"bankAccountNumber": account}, country=country)
    assert result.errors == {"bankAccountNumber": message}
    ok = clean_required_fields(specs_, {"bankAccountNumber": "0123 4567 8901"}, country=country)
    assert ok.values == {"bankAccountNumber": "012345678901"}


def test_a_paybill_number_of_the_wrong_length_is_told_how_many_digits():
    specs_ = required_fields_from_json({"shortCode": {
        "type": "string", "label": "Paybill number", "required": True,
        "regexp": "^[0-9]{5,7}$"}})
    result = clean_required_fields(specs_, {"shortCode": "12"}, country="KE")
    assert result.errors == {"shortCode": "Enter 5 to 7 digits."}
    single = required_fields_from_json({"pin": {"type": "string", "regexp": "^[0-9]{1}$"}})
    assert clean_required_fields(single, {"pin": "12"}, country="KE").errors == {
        "pin": "Enter 1 digit."}


def test_case_insensitive_flag():
    assert compile_pattern("^[a-z]{3}$", "i").search("ABC")
    assert not compile_pattern("^[a-z]{3}$", None).search("ABC")


@pytest.mark.parametrize("pattern", [r"^(a)\1$", r"^(?=a).+$", "[unclosed"])
def test_patterns_re2_cannot_compile_are_ignored(pattern, caplog):
    assert compile_pattern(pattern, None) is None
    fields = required_fields_from_json({"x": {"type": "string", "regexp": pattern}})
    assert clean_required_fields(fields, {"x": "anything"}, country="NG").ok
    assert "re2" in caplog.text


def test_locked_phone_claim_wins_and_a_different_value_is_refused():
    session = FakeSession(claims={"phoneNumber": "2348012345678"}, locked=["phoneNumber"])
    same = clean_required_fields(specs(), {**GOOD, "phoneNumber": "08012345678"}, country="NG",
                                 session=session)
    assert same.ok and same.values["phoneNumber"] == "2348012345678"
    omitted = clean_required_fields(specs(), {**GOOD, "phoneNumber": ""}, country="NG",
                                    session=session)
    assert omitted.ok and omitted.values["phoneNumber"] == "2348012345678"
    forged = clean_required_fields(specs(), {**GOOD, "phoneNumber": "08099999999"}, country="NG",
                                   session=session)
    assert "cannot be changed" in forged.errors["phoneNumber"]
    assert forged.values["phoneNumber"] == "2348012345678"


def test_input_types():
    by_name = {s.name: input_type(s) for s in specs()}
    assert by_name["phoneNumber"] == "tel" and by_name["email"] == "email"
    assert by_name["dob"] == "date" and by_name["bankCode"] == "text"


@pytest.mark.parametrize(("value", "country", "expected"), [
    ("08012345678", "NG", "2348012345678"),
    ("+234 801 234 5678", "NG", "2348012345678"),
    ("0110 611756", "KE", "254110611756"),
])
def test_phone_normalisation(value, country, expected):
    assert normalise_phone(value, country) == expected


@pytest.mark.parametrize(("text", "locale", "expected"), [
    ("5000", "en", Decimal("5000")),
    ("1,500.50", "en", Decimal("1500.50")),
    ("1 500,50", "fr", Decimal("1500.50")),
    ("1\u202f500,50", "fr", Decimal("1500.50")),
    (" 25.5 ", "en_KE", Decimal("25.5")),
])
def test_amounts_in_the_users_locale(text, locale, expected):
    assert parse_amount(text, locale) == expected


@pytest.mark.parametrize("text", ["", "0", "-5", "abc", "1e5", "NaN", "Infinity", "1.2.3", "9" * 40,
                                  "5000 NGN"])
def test_bad_amounts(text):
    with pytest.raises(ValueError):
        parse_amount(text, "en")


LIMITS = Limits(min_usd=Decimal(1), max_usd=Decimal(200), min_local_currency=Decimal(1556),
                max_local_currency=Decimal(311184), min_crypto=Decimal(1), max_crypto=Decimal(200))
ONRAMP = ("local", "crypto")
CLOSED = Limits(min_usd=Decimal(0), max_usd=Decimal(0), min_local_currency=Decimal(0),
                max_local_currency=Decimal(0), min_crypto=Decimal(0), max_crypto=Decimal(0))


@pytest.mark.parametrize(("form", "field_name", "message"), [
    ({"currency": "local", "amount": "1000"}, "amount", "minimum"),
    ({"currency": "local", "amount": "400000"}, "amount", "maximum"),
    ({"currency": "crypto", "amount": "250"}, "amount", "maximum"),
    ({"currency": "crypto", "amount": "0.5"}, "amount", "minimum"),
    ({"currency": "usd", "amount": "50"}, "currency", "Choose what the amount is in"),
    ({"currency": "local", "amount": ""}, "amount", "Enter an amount"),
])
def test_amount_limits(form, field_name, message):
    result = clean_amount(form, FakeSession(), locale="en", currencies=ONRAMP, limits=LIMITS)
    assert message in result.errors[field_name]


def test_amount_within_limits_and_closed_corridor():
    good = clean_amount({"currency": "local", "amount": "5,000"}, FakeSession(), locale="en",
                        currencies=ONRAMP, limits=LIMITS, places={"local": 2})
    assert good.ok and good.values == {"currency": "local", "amount": "5000"}
    closed = clean_amount({"currency": "local", "amount": "5000"}, FakeSession(), locale="en",
                          currencies=ONRAMP, limits=CLOSED)
    assert "not available" in closed.errors["amount"]


def test_locked_decimal_amount_shown_as_is_is_not_a_change_in_french():
    session = FakeSession(claims={"amount": 12.5, "currency": "crypto"},
                          locked=["amount", "currency"])
    result = clean_amount({"amount": "12.5", "currency": "crypto"}, session, locale="fr",
                          currencies=ONRAMP, limits=LIMITS)
    assert result.ok and result.values["amount"] == "12.5"


def test_locked_amount():
    session = FakeSession(claims={"amount": 5000, "currency": "local"}, locked=["amount", "currency"])
    same = clean_amount({"amount": "5,000.00", "currency": "local"}, session, locale="en",
                        currencies=ONRAMP, limits=LIMITS)
    assert same.ok and same.values["amount"] == "5000"
    forged = clean_amount({"amount": "1", "currency": "crypto"}, session, locale="en",
                          currencies=ONRAMP, limits=LIMITS)
    assert set(forged.errors) == {"amount", "currency"}
    assert forged.values == {"amount": "5000", "currency": "local"}


@dataclass
class Channel:
    payment_channel: str
    requires_carrier: bool = False
    carriers: list = field(default_factory=list)


class Catalog:
    channels = {("NG", "bank"): Channel("bank"),
                ("NG", "airtime"): Channel("airtime", True, [Carrier(name="MTN", code="MTN")])}

    def country(self, code):
        return code if code in ("NG", "KE") else None

    def channel(self, country, channel):
        return self.channels.get((country, channel))

    def networks(self):
        return ["CELO", "SOLANA"]

    def supports(self, network, asset):
        return (network, asset) in {("CELO", "USDT"), ("CELO", "CKES"), ("SOLANA", "USDC")}


CORRIDOR = {"countryIsoCode": "NG", "paymentChannel": "bank", "network": "CELO", "asset": "USDT"}


def test_corridor_ok_and_carrier_dropped_when_not_needed():
    result = clean_corridor({**CORRIDOR, "carrierCode": "MTN"}, FakeSession(), Catalog())
    assert result.ok
    assert result.values == {**CORRIDOR, "carrierCode": None}


@pytest.mark.parametrize(("change", "field_name"), [
    ({"countryIsoCode": "ZZ"}, "countryIsoCode"),
    ({"paymentChannel": "paybill"}, "paymentChannel"),
    ({"paymentChannel": "airtime"}, "carrierCode"),
    ({"paymentChannel": "airtime", "carrierCode": "Glo"}, "carrierCode"),
    ({"network": "DOGE"}, "network"),
    ({"network": "SOLANA", "asset": "USDT"}, "asset"),     # an unsupported pair
])
def test_bad_corridors(change, field_name):
    result = clean_corridor({**CORRIDOR, **change}, FakeSession(), Catalog())
    assert field_name in result.errors


def test_an_empty_corridor_marks_every_field_to_fill_at_once():
    """The coin too, though whether a coin is offered depends on the network (the walk's user
    saw Country, Network and Amount marked, and the coin only after choosing a network)."""
    result = clean_corridor({}, FakeSession(), Catalog())
    assert set(result.errors) == {"countryIsoCode", "network", "asset"}
    assert result.errors["asset"] == "Choose a coin."
    only_coin = clean_corridor({**CORRIDOR, "asset": ""}, FakeSession(), Catalog())
    assert set(only_coin.errors) == {"asset"}


def test_locked_network_refuses_another_value():
    session = FakeSession(claims={"network": "CELO"}, locked=["network"])
    result = clean_corridor({**CORRIDOR, "network": "SOLANA", "asset": "USDC"}, session, Catalog())
    assert "cannot be changed" in result.errors["network"]
    assert result.values["network"] == "CELO"


def test_wallet_ok_normalises_and_notices_missing_checksum():
    result = clean_wallet({"address": ADDRESS.lower(), "email": "a@b.co"}, FakeSession(),
                          network="CELO")
    assert result.ok
    assert result.values == {"address": ADDRESS, "memo": "", "email": "a@b.co"}
    assert "checksum" in result.notices["address"]


@pytest.mark.parametrize(("form", "network", "field_name"), [
    ({"address": ADDRESS[:-1] + "E", "email": "a@b.co"}, "CELO", "address"),
    ({"address": "", "email": "a@b.co"}, "CELO", "address"),
    ({"address": ADDRESS, "email": ""}, "CELO", "email"),
    ({"address": ADDRESS, "email": "a@"}, "CELO", "email"),
    ({"address": ADDRESS, "email": "a@b.co"}, "SOLANA", "address"),
    ({"address": "GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7", "memo": "x" * 40,
      "email": "a@b.co"}, "STELLAR", "memo"),
])
def test_bad_wallets(form, network, field_name):
    assert field_name in clean_wallet(form, FakeSession(), network=network).errors


def test_locked_address_accepts_the_same_address_in_other_case_and_refuses_another():
    session = FakeSession(claims={"address": ADDRESS}, locked=["address"])
    assert clean_wallet({"address": ADDRESS.lower(), "email": "a@b.co"}, session,
                        network="CELO").ok
    other = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
    forged = clean_wallet({"address": other, "email": "a@b.co"}, session, network="CELO")
    assert "cannot be changed" in forged.errors["address"]
    assert forged.values["address"] == ADDRESS


def test_a_locked_address_invalid_for_the_network_is_reported():
    session = FakeSession(claims={"address": "not-an-address"}, locked=["address"])
    result = clean_wallet({"email": "a@b.co"}, session, network="CELO")
    assert "address" in result.errors


@pytest.mark.parametrize("claims", [{"amount": 100, "currency": "local"}, {"amount": 100}])
def test_locked_amount_keeps_its_currency_even_when_currency_is_not_locked(claims):
    # A session whose token locked the amount alone (before launch implied the currency lock):
    # 100 NGN must not become 100 USDT because the form says "crypto".
    session = FakeSession(claims=claims, locked=["amount"])
    forged = clean_amount({"amount": "100", "currency": "crypto"}, session, locale="en",
                          currencies=ONRAMP, limits=LIMITS)
    assert forged.errors.get("currency")
    assert forged.values["currency"] == "local" and forged.values["amount"] == "100"
    same = clean_amount({"amount": "100", "currency": "local"}, session, locale="en",
                        currencies=ONRAMP, limits=LIMITS, check_limits=False)
    assert same.ok and same.values["currency"] == "local"


def test_locked_currency_is_taken_from_the_claims_whatever_the_form_sends():
    session = FakeSession(claims={"currency": "crypto"}, locked=["currency"])
    for sent in ({"currency": "local"}, {"currency": "bogus"}, {}):
        result = clean_amount({"amount": "5", **sent}, session, locale="en", currencies=ONRAMP,
                              limits=LIMITS)
        assert result.values["currency"] == "crypto"
        assert ("currency" in result.errors) == bool(sent)


def test_a_document_number_typed_in_small_letters_is_taken_in_capitals():
    passport = required_fields_from_json({"id_number": {
        "type": "string", "label": "ID number", "required": True,
        "regexp": "^[A-Z0-9]{7,9}$", "format": "A0000000"}})
    result = clean_required_fields(passport, {"id_number": "ak1234567"}, country="KE")
    assert result.ok and result.values["id_number"] == "AK1234567"
    refused = clean_required_fields(passport, {"id_number": "ak-12"}, country="KE")
    assert refused.errors["id_number"] == (
        "This does not look right. Expected format: A0000000 (0: any digit, A: any letter)")


@pytest.mark.parametrize(("fmt", "said"), [
    ("00000000", "00000000 (0: any digit)"),
    ("ABC000000000", "ABC000000000 (0: any digit, A: any letter)"),
    ("YYYY-MM-DD", "YYYY-MM-DD"),
    (None, None),
])
def test_a_format_says_what_its_placeholders_stand_for(fmt, said):
    assert describe_format(fmt) == said
