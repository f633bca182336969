"""What the review showed is what the order charged, in every corridor of the sandbox, both flows.

For each corridor (a country and a way to pay or be paid), at an amount drawn from what it takes:
walk to the review, maybe let its price lapse before "Confirm", confirm, and read the order's
receipt (the upstream's own order). The receipt's amounts and fees are, to the unit, those of the
last review the user confirmed on. A price that lapsed is never charged unseen: "Confirm" then
creates nothing and shows the review again, with each amount that moved beside what it was.
"""
from __future__ import annotations

import itertools
import re
from decimal import ROUND_DOWN, Decimal
from typing import Any

import phonenumbers
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkout.journey import clock
from checkout.sandbox import reference
from checkout.views.receipts import receipt_url

from .conftest import EVM_ADDRESS, Flow

NETWORK, ASSET = "POLYGON", "USDC"


@pytest.fixture
def config(config: dict) -> dict:
    # One person walking every corridor, many times over: not what the launch limit is for.
    config["CHECKOUT_RATELIMIT_ENABLED"] = False
    return config


def corridors(flow: str) -> list[tuple[str, str, str | None]]:
    """(country, channel, carrier) of every corridor the sandbox prices now, one carrier each."""
    found = []
    for country in reference.COUNTRIES:
        for channel in (country.onramp if flow == "onramp" else country.offramp):
            if not channel.limits.available:
                continue
            needs = channel.requires_carrier if flow == "onramp" else channel.needs_carrier
            found.append((country.iso, channel.channel,
                          channel.carriers[0].code if needs else None))
    return found


def no_kyc_ceiling(iso: str, flow: str) -> Decimal:
    """The most, in USD, that a person can order there without an identity check."""
    country = reference.country(iso)
    assert country is not None
    rules = country.kyc_onramp if flow == "onramp" else country.kyc_offramp
    return next(rule.max for rule in rules if rule.type == "none" and rule.max is not None)


def local_amount(iso: str, channel: str, flow: str, share: float) -> str:
    """An amount of the corridor's currency inside its limits and under its KYC ceiling."""
    country = reference.country(iso)
    assert country is not None
    limits = (country.onramp_channel(channel) if flow == "onramp"
              else country.offramp_channel(channel)).limits
    low = max(limits.min_usd, Decimal(1)) * Decimal("1.2")
    high = min(limits.max_usd, no_kyc_ceiling(iso, flow)) * Decimal("0.9")
    usd = low + (high - low) * Decimal(str(share))
    places = Decimal(1).scaleb(-country.currency_places)
    return str((usd * country.usd_rate).quantize(places, rounding=ROUND_DOWN))


PEOPLE = itertools.count(1)


def phone(iso: str, person: int = 0) -> str:
    """A mobile number of ``iso``, another for each ``person``: orders add up, and a person's
    volume would soon call for the identity check this test does not walk through."""
    example = phonenumbers.example_number_for_type(iso, phonenumbers.PhoneNumberType.MOBILE)
    digits = str(example.national_number)
    for tail in range(person, person + 1000):
        example.national_number = int(digits[:-3] + f"{tail % 1000:03d}")
        if phonenumbers.is_valid_number(example):
            break
    return phonenumbers.format_number(example, phonenumbers.PhoneNumberFormat.E164)


def carrier_id(iso: str, channel: str, code: str) -> str:
    """What the off-ramp names a carrier by (its id: the type-based list gives no code)."""
    country = reference.country(iso)
    ref = country.offramp_channel(channel) if country else None
    assert ref is not None
    return next(c.id for c in ref.carriers if c.code == code)


def payout_form(iso: str, channel: str, carrier: str | None, person: int) -> dict[str, str]:
    """The payout details of the corridor, filled in as a user would."""
    country = reference.country(iso)
    ref = country.offramp_channel(channel) if country else None
    assert ref is not None
    form: dict[str, str] = {}
    for field in ref.required_fields:
        if field.type == "enum":
            wanted = carrier_id(iso, channel, carrier) if carrier else None
            form[field.name] = wanted or field.options[0].value
        elif field.type == "phone":
            form[field.name] = phone(iso, person)
        elif field.name in ("bankAccountNumber", "accountNumber"):
            form[field.name] = "0123456789"
        elif field.name == "shortCode":
            form[field.name] = "123456"
        else:
            raise AssertionError(f"no way to fill {field.name} of {iso} {channel}")
    return form


def amounts(html: str) -> dict[str, str]:
    """The price's rows (label: amount as shown), from a review or a receipt."""
    block = re.search(r'<dl class="details details--money"[^>]*>(.*?)</dl>', html, re.S)
    assert block, html[:4000]
    return dict(re.findall(r"<dt>([^<]+)</dt>\s*<dd[^>]*>([^<]+)</dd>", block.group(1)))


def number(text: str) -> Decimal:
    return Decimal(re.sub(r"[^0-9.]", "", text.replace(",", "")))


def walk_to_review(flow: Flow, iso: str, channel: str, carrier: str | None, amount: str) -> str:
    person = next(PEOPLE)
    claims: dict[str, Any] = {"network": NETWORK, "asset": ASSET, "amount": amount,
                              "currency": "local", "countryIsoCode": iso,
                              "paymentChannel": channel, "address": EVM_ADDRESS,
                              "email": f"buyer{person}@example.com"}
    if flow.name == "onramp":
        if carrier:
            claims["carrierCode"] = carrier
        claims["phoneNumber"] = phone(iso, person)
        page = flow.start(**claims)
        if 'name="buyerBankAccountNumber"' in page.get_data(as_text=True):
            page = flow.follow(flow.details(buyerBankAccountNumber="0123456789"))
    else:
        if carrier:
            claims["carrierCode"] = carrier_id(iso, channel, carrier)
        flow.start(**claims)
        page = flow.follow(flow.post("/payout", payout_form(iso, channel, carrier, person)))
        if page.request.path.endswith("/payee"):
            # The name is asked only where the partner cannot tell whose account it is.
            shown = (flow.session.payee or {}).get("for", "")
            page = flow.follow(flow.post("/payee", {"check": shown, "confirm": "yes",
                                                    "name": "Amina Okafor"}))
    html = page.get_data(as_text=True)
    # The review (at its own address, or at the session's when the launch answered every step).
    assert 'name="review_digest"' in html, (page.request.path, html[:3000])
    return html


def confirm_as_shown(flow: Flow, review: str, lapse: bool, monkeypatch: Any) -> str:
    """Confirm the review; when ``lapse``, its price has lapsed by then. The review the order was
    at last confirmed on."""
    if lapse:
        lapsed = flow.session.quote["fetched_at"] + flow.app.config["CHECKOUT_QUOTE_MAX_AGE"] + 1
        monkeypatch.setattr(clock, "now", lambda: lapsed)
        again = flow.post("/create", confirm_form(review))
        assert again.headers["Location"].endswith("/review"), again.headers.get("Location")
        assert flow.session.order_id is None            # nothing charged at a lapsed price
        renewed = flow.follow(again).get_data(as_text=True)
        moved = {label for label, value in amounts(renewed).items()
                 if amounts(review).get(label) != value}
        if moved:
            # Each amount that moved is shown beside what it was, before "Confirm" again.
            table = re.search(r'data-testid="price-change">(.*?)</table>', renewed, re.S)
            assert table, renewed[:4000]
            assert moved <= set(re.findall(r'<th scope="row">([^<]+)</th>', table.group(1)))
        review = renewed
    created = flow.post("/create", confirm_form(review))
    assert created.status_code == 303 and flow.session.order_id, created.get_data(as_text=True)
    return review


def confirm_form(review: str) -> dict[str, str]:
    found = dict(re.findall(r'name="(quote_id|review_digest)" value="([^"]+)"', review))
    assert len(found) == 2, review[:3000]
    return found


def receipt_of(flow: Flow) -> str:
    with flow.app.test_request_context():
        url = receipt_url(flow.session.order_id, flow.name, "en")
    page = flow.client.get(url)
    assert page.status_code == 200
    return page.get_data(as_text=True)


def check_charged_as_reviewed(app: Any, name: str, corridor: tuple[str, str, str | None],
                              share: float, lapse: bool, monkeypatch: Any) -> None:
    iso, channel, carrier = corridor
    with monkeypatch.context() as patch:
        flow = Flow(app, app.test_client(), name)
        review = walk_to_review(flow, iso, channel, carrier,
                                local_amount(iso, channel, name, share))
        confirmed = confirm_as_shown(flow, review, lapse, patch)
        reviewed, charged = amounts(confirmed), amounts(receipt_of(flow))
    rate = "Exchange rate"
    assert {k: v for k, v in charged.items() if k != rate} == \
        {k: v for k, v in reviewed.items() if k != rate}, corridor
    # The on-ramp's order carries no rate: the receipt's is the one its amounts imply, within
    # the rounding of those amounts (a unit of the currency's last place, over the crypto).
    assert rate in charged and rate in reviewed
    assert abs(number(charged[rate]) - number(reviewed[rate])) <= number(reviewed[rate]) / 1000, \
        (corridor, charged[rate], reviewed[rate])


EVERY_CORRIDOR = [pytest.param(flow, corridor,
                                id="-".join([flow, *(part for part in corridor if part)]))
                   for flow in ("onramp", "offramp") for corridor in corridors(flow)]


@pytest.mark.parametrize("name, corridor", EVERY_CORRIDOR)
@settings(max_examples=2, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(share=st.floats(0, 1), lapse=st.booleans())
def test_an_order_is_charged_as_reviewed(app, monkeypatch, name, corridor, share, lapse):
    check_charged_as_reviewed(app, name, corridor, share, lapse, monkeypatch)
