"""With JavaScript, a step's form is answered with the next page itself (checkout.htmx): that page
must show exactly what a full load of its address shows. A property of the step machinery, held
over every step of both flows: each walk below posts its steps boosted, and each page answered so
is compared with a reload of it (``boosted.Boosted``)."""
from __future__ import annotations

import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient

from .boosted import Boosted, BoostedFlow
from .conftest import AMOUNTS, CORRIDORS, EVM_ADDRESS, PHONES
from .test_kyc import NATIONAL_ID, review_kyc
from .test_offramp import Sale

OTHER_ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"


@pytest.fixture
def config(config: dict) -> dict:
    # The identity step asks the sandbox again at each look while a document is checked.
    config["CHECKOUT_KYC_POLL_SECONDS"] = 0
    return config


class BoostedSale(Boosted, Sale):
    """A sale with JavaScript."""


def text(response: Any) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)).split())


def reviewed_address(response: Any) -> str:
    match = re.search(r'data-testid="review-address">([^<]*)<', response.get_data(as_text=True))
    assert match, response.get_data(as_text=True)[:3000]
    return match.group(1)


@pytest.mark.parametrize("transfer", sorted(CORRIDORS))
def test_every_on_ramp_step_answered_in_place_shows_what_a_reload_shows(app: Flask,
                                                                         client: FlaskClient,
                                                                         transfer: str) -> None:
    flow = BoostedFlow(app, client)
    flow.start()
    review = flow.to_review(transfer)
    assert EVM_ADDRESS in text(review) and "ada@example.com" in text(review)
    # Changed from the review: the review shows the new address and e-mail, never the old.
    flow.get("/wallet")
    review = flow.follow(flow.wallet(address=OTHER_ADDRESS, email="grace@example.com"))
    assert reviewed_address(review) == OTHER_ADDRESS
    assert "grace@example.com" in text(review) and "ada@example.com" not in text(review)
    # The amount changed from the review: the steps after it again, then the review.
    flow.get("/choose")
    country = CORRIDORS[transfer]["countryIsoCode"]
    page = flow.follow(flow.choose(transfer, amount=str(int(AMOUNTS[country]) * 6 // 5)))
    assert page.request.path.endswith(("/wallet", "/details", "/review")), page.request.path
    steps = [address.rsplit("/", 1)[-1] for address, *_ in flow.compared]
    assert steps[0] == "wallet" and "review" in steps and len(steps) >= 4, steps


@pytest.mark.parametrize("language", ["en", "fr", "sw", "pt"])
def test_the_review_answered_in_place_shows_the_wallet_just_typed(app: Flask,
                                                                  client: FlaskClient,
                                                                  language: str) -> None:
    """The review a boosted wallet form is answered with: the address and e-mail just typed,
    never "None" (English in every language), then the changed ones, never the old."""
    flow = BoostedFlow(app, client)
    flow.start(locale=language)
    flow.follow(flow.choose())
    review = flow.follow(flow.wallet())
    assert f'<html lang="{language}">' in review.get_data(as_text=True)
    assert reviewed_address(review) == EVM_ADDRESS
    assert "ada@example.com" in text(review) and "None" not in text(review)
    flow.get("/wallet")
    review = flow.follow(flow.wallet(address=OTHER_ADDRESS, email="grace@example.com"))
    assert reviewed_address(review) == OTHER_ADDRESS
    assert "grace@example.com" in text(review)
    assert EVM_ADDRESS not in text(review) and "ada@example.com" not in text(review)


def test_the_identity_step_answered_in_place_shows_what_a_reload_shows(app: Flask,
                                                                       client: FlaskClient) -> None:
    """Kenya's M-PESA for 5,000 KES asks a basic identity check: the document's page, the
    "checking" page and the review after the approval, each answered in place."""
    flow = BoostedFlow(app, client)
    flow.start()
    flow.follow(flow.choose("stk_push", amount="5000"))
    flow.follow(flow.wallet())
    page = flow.follow(flow.details(phoneNumber=PHONES["KE"]))
    assert page.request.path.endswith("/kyc")
    pending = flow.follow(flow.post("/kyc", NATIONAL_ID))
    assert "We are checking your document" in text(pending)
    review_kyc(app)
    review = flow.follow(flow.get("/kyc"))
    assert review.request.path.endswith("/review")
    assert any(address.endswith("/kyc") for address, *_ in flow.compared)


def test_every_off_ramp_step_answered_in_place_shows_what_a_reload_shows(
        app: Flask, client: FlaskClient) -> None:
    sale = BoostedSale(app, client)
    sale.start()
    review = sale.to_review()
    assert EVM_ADDRESS in text(review) and "None" not in text(review)
    sale.get("/wallet")
    review = sale.landed(sale.post("/wallet", {"address": OTHER_ADDRESS}), "review")
    assert OTHER_ADDRESS in text(review) and EVM_ADDRESS not in text(review)
    assert [address.rsplit("/", 1)[-1] for address, *_ in sale.compared] == [
        "payout", "payee", "wallet", "review", "review"]
