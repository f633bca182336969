"""Typed amounts: the locale's reading, a question for any other, the currency's decimals."""
from __future__ import annotations

from decimal import Decimal

import pytest
from babel.numbers import format_decimal
from flask import Flask
from flask_babel import Babel
from hypothesis import given, settings
from hypothesis import strategies as st

from checkout.typed_amounts import (
    AmountError,
    amount_for_input,
    currency_places,
    parse_amount,
)

LOCALES = ["en", "en_NG", "sw_KE", "fr", "fr_SN", "pt", "pt_MZ", "pt_AO"]


@pytest.fixture(autouse=True)
def request_context():
    app = Flask(__name__)
    Babel(app)
    with app.test_request_context():
        yield


@pytest.mark.parametrize(("text", "locale", "places", "expected"), [
    ("5000", "en", 2, Decimal("5000")),
    ("1,500.50", "en", 2, Decimal("1500.50")),
    ("1,500", "en", 2, Decimal("1500")),        # 1.500 shillings is not a way to write a price
    ("1 500", "en", 2, Decimal("1500")),        # spaces group in every language
    ("1 500,50", "fr", 2, Decimal("1500.50")),
    ("1\u202f500", "fr_SN", 0, Decimal("1500")),
    ("1.500", "pt", 2, Decimal("1500")),
    ("1 500,5", "pt_MZ", 2, Decimal("1500.5")),
    ("0,000001", "pt_AO", 6, Decimal("0.000001")),
    (".5", "en", 6, Decimal("0.5")),
    (" 25.5 ", "en_KE", 2, Decimal("25.5")),
    ("5000.00", "en", 0, Decimal("5000.00")),   # zeros after the mark are not decimals
])
def test_the_locales_own_way_is_read(text, locale, places, expected):
    assert parse_amount(text, locale, places) == expected


@pytest.mark.parametrize(("text", "locale", "places", "message"), [
    ("12,5", "en", 2, "Did you mean 12.5?"),
    ("12.5", "pt", 2, "Did you mean 12,5?"),
    ("12.5", "pt_MZ", 2, "Did you mean 12,5?"),
    ("12.5", "fr", 2, "Did you mean 12,5?"),
    ("1,500", "en", 6, "Did you mean 1.5 or 1,500?"),     # USDC: both are amounts
    ("1.500", "fr", 0, "Did you mean 1\u202f500?"),
    ("12.500", "fr", 6, "Did you mean 12,5 or 12\u202f500?"),
    ("1,234", "pt", 2, "Did you mean 1.234?"),
    ("1.500,50", "en", 2, "Did you mean 1,500.5?"),
    ("-5", "en", 2, "The amount cannot be negative."),
    ("\u22125", "en", 2, "The amount cannot be negative."),
    ("0", "en", 2, "greater than zero"),
    ("5000.555", "en", 2, "Use at most 2 decimals."),
    ("0.0000001", "en", 6, "Use at most 6 decimals."),
    ("1500.5", "en", 0, "whole units"),
    ("", "en", 2, "Enter an amount."),
    ("abc", "en", 2, "Enter the amount in digits, for example 5,000."),
    ("5000 NGN", "en", 2, "in digits"),
    ("1e5", "en", 2, "in digits"),
    ("NaN", "en", 2, "in digits"),
    ("1.2.3", "en", 2, "in digits"),
    ("9" * 40, "en", 2, "in digits"),
    ("1,50,000", "en", 2, "in digits"),
])
def test_anything_else_is_a_message(text, locale, places, message):
    with pytest.raises(AmountError, match=message.replace(".", r"\.").replace("?", r"\?")):
        parse_amount(text, locale, places)


CONVENTIONS = ["en", "fr", "pt", "pt_MZ", "sw"]


@settings(max_examples=400, deadline=None)
@given(places=st.sampled_from([0, 2, 6]), written_in=st.sampled_from(CONVENTIONS),
       read_in=st.sampled_from(LOCALES), grouped=st.booleans(),
       number=st.decimals(min_value=Decimal("0.000001"), max_value=Decimal(10) ** 9,
                          places=6, allow_nan=False, allow_infinity=False))
def test_an_amount_written_any_way_is_read_right_or_questioned(places, written_in, read_in,
                                                               grouped, number):
    """Never a different number in silence: whatever convention the user writes in, the amount
    read is the amount meant, or the user is asked."""
    meant = number.quantize(Decimal(1).scaleb(-places)).normalize()
    if meant <= 0:
        return
    decimals = max(0, -int(meant.as_tuple().exponent))
    pattern = ("#,##0" if grouped else "0") + ("." + "0" * decimals if decimals else "")
    text = format_decimal(meant, format=pattern, locale=written_in)
    try:
        read = parse_amount(text, read_in, places)
    except AmountError:
        return
    assert read == meant, (text, written_in, read_in)


@settings(max_examples=300, deadline=None)
@given(text=st.text(alphabet="0123456789.,  \u00a0\u202f-", max_size=20),
       locale=st.sampled_from(LOCALES), places=st.sampled_from([None, 0, 2, 6]))
def test_any_typing_is_an_amount_or_a_message(text, locale, places):
    try:
        read = parse_amount(text, locale, places)
    except AmountError as error:
        assert str(error)
        return
    assert read > 0
    if places is not None:
        assert -read.normalize().as_tuple().exponent <= places


@pytest.mark.parametrize(("currency", "places"), [
    ("XOF", 0), ("XAF", 0), ("UGX", 0), ("TZS", 0), ("KES", 2), ("NGN", 2), ("ZAR", 2)])
def test_currency_places_are_what_people_pay_in(currency, places):
    assert currency_places(currency) == places


@pytest.mark.parametrize(("value", "locale", "shown"), [
    ("1500.5", "fr", "1500,5"), ("1500", "pt_MZ", "1500"), ("1500.50", "en", "1500.50"),
    ("0.000001", "sw", "0.000001")])
def test_a_saved_amount_is_shown_to_be_typed_back(value, locale, shown):
    assert amount_for_input(Decimal(value), locale) == shown
    assert parse_amount(shown, locale, 6) == Decimal(value)
