"""The off-ramp, step by step: amount, payout details, payee check, sending wallet, review, create,
deposit and its transaction hash, merchant-funded payouts; every bad input refused at its field."""
from __future__ import annotations

import json
import re
from typing import Any

import pytest
from flask import Flask
from flask.testing import FlaskClient
from markupsafe import escape

from checkout.addresses import eip55_checksum
from checkout.errors import UpstreamTimeout
from checkout.flows.offramp import fields_digest
from checkout.state import get_state

from .conftest import (
    EVM_ADDRESS,
    Flow,
    move_sandbox_order,
    order_reads,
    sandbox_order,
    stored_status,
    wait_for_stored_status,
)

NG_BANK = {"countryIsoCode": "NG", "paymentChannel": "bank", "network": "POLYGON",
           "asset": "USDC", "currency": "local", "amount": "20000"}
NG_ACCOUNT = {"bankCode": "011:02", "bankAccountNumber": "0123456789"}
FRAMED = {"Sec-Fetch-Dest": "iframe"}


class Sale(Flow):
    """One user selling crypto with the test client."""

    def __init__(self, app: Flask, client: FlaskClient) -> None:
        super().__init__(app, client, "offramp")

    def choose(self, transfer: str = "", **fields: Any) -> Any:
        form = {**NG_BANK, **fields}
        return self.post("/choose", {k: v for k, v in form.items() if v is not None})

    def payout(self, **fields: Any) -> Any:
        return self.post("/payout", {**NG_ACCOUNT, **fields})

    def payee(self, **form: Any) -> Any:
        """Submit the account check page as shown (it names the check it shows)."""
        shown = (self.session.payee or {}).get("for", "")
        return self.post("/payee", {"check": shown, **form})

    def to_review(self, **choose: Any) -> Any:                          # type: ignore[override]
        self.landed(self.choose(**choose), "payout")
        self.landed(self.payout(), "payee")
        self.landed(self.payee(confirm="yes"), "wallet")
        return self.landed(self.post("/wallet", {"address": EVM_ADDRESS}), "review")

    def to_deposit(self, **choose: Any) -> Any:
        if self.session_id is None:
            self.start()
        review = self.to_review(**choose)
        return self.landed(self.create(review), "deposit")


@pytest.fixture
def sale(app: Flask, client: FlaskClient) -> Sale:
    return Sale(app, client)


def calls_of(app: Flask, monkeypatch: Any, name: str) -> list[dict]:
    """Count the upstream client's ``name`` calls (still made for real)."""
    with app.app_context():
        client = get_state().upstream
    original = getattr(client, name)
    calls: list[dict] = []

    def counted(*args: Any, **kwargs: Any) -> Any:
        calls.append(kwargs)
        return original(*args, **kwargs)

    monkeypatch.setattr(client, name, counted)
    return calls


def events_in(html: str) -> dict[str, dict]:
    found = {}
    for kind, extra in re.findall(r'data-checkout-event="([^"]+)"[^>]*?(?:data-extra=\'([^\']*)\')?>',
                                  html):
        found[kind] = json.loads(extra.replace("&#34;", '"')) if extra else {}
    return found


# -- 1. amount ------------------------------------------------------------------------------------

def test_an_unsigned_sale_opens_at_the_amount_with_how_each_payout_works(sale):
    page = sale.start()
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "Sell crypto" in html and 'name="countryIsoCode"' in html
    sale.get("/choose", query_string={"countryIsoCode": "KE"}, headers={"HX-Request": "true"})
    html = sale.responses[-1].get_data(as_text=True)
    assert "How you get paid" in html
    for payout in ("mobile_money", "paybill", "bank", "airtime"):
        assert f'name="paymentChannel" value="{payout}"' in html
    assert "M-PESA Paybill" in html               # the upstream's own words, under the choice


def test_the_live_quote_shows_what_is_sent_the_fees_and_what_arrives(sale):
    sale.start()
    page = sale.get("/quote", query_string=NG_BANK, headers={"HX-Request": "true"})
    html = page.get_data(as_text=True)
    for label in ("You send", "Exchange rate", "Service fee", "Payment partner fee",
                  "You receive"):
        assert label in html
    assert "₦20,000.00" in html and "USDC" in html


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"paymentChannel": ""}, "paymentChannel", "Choose how you get paid"),
    ({"paymentChannel": "paybill"}, "paymentChannel", "Choose how you get paid"),
    ({"paymentChannel": "airtime"}, "carrierCode", "Choose your mobile network"),
    ({"network": "SOLANA"}, "network", "Choose a network"),
    ({"currency": "crypto"}, "currency", "local money or US dollars"),
    ({"amount": "10"}, "amount", "The minimum is"),
    ({"currency": "usd", "amount": "5000"}, "amount", "The maximum is"),
])
def test_bad_choices_are_refused_next_to_the_field(sale, change, field, message):
    sale.start()
    page = sale.choose(**change)
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert f'id="field-{field}-error"' in html and message in html
    assert sale.session.done == []


def test_an_amount_in_us_dollars_is_priced_in_dollars(sale):
    sale.start()
    sale.landed(sale.choose(currency="usd", amount="15"), "payout")
    record = sale.session.quote
    assert record["params"]["currency"] == "usd" and record["cashout"]["usdAmount"] == 15


# -- 2. payout details ----------------------------------------------------------------------------

def test_payout_details_are_the_offers_fields(sale):
    sale.start()
    page = sale.landed(sale.choose(), "payout")
    html = page.get_data(as_text=True)
    assert "Where should we pay you?" in html
    assert 'name="bankCode"' in html and "First Bank of Nigeria" in html
    assert 'name="bankAccountNumber"' in html


@pytest.mark.parametrize(("fields", "field", "message"), [
    ({"bankCode": ""}, "bankCode", "required"),
    ({"bankCode": "999:99"}, "bankCode", "Choose one of the options"),
    ({"bankAccountNumber": ""}, "bankAccountNumber", "required"),
])
def test_bad_payout_details_are_refused_at_their_field(sale, fields, field, message):
    sale.start()
    sale.landed(sale.choose(), "payout")
    page = sale.payout(**fields)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and f'id="field-{field}-error"' in html and message in html


NUBAN = "Enter your 10-digit Nigerian account number (NUBAN)."


def field_error(html: str, name: str) -> str | None:
    """The message shown under the field ``name``, if any."""
    match = re.search(rf'<p class="field-error" id="field-{name}-error">([^<]*)</p>', html)
    return match.group(1) if match else None


@pytest.mark.parametrize("account", ["abc", "12", "💸", "12345", "01234567890"])
def test_an_account_number_that_cannot_be_a_nuban_is_refused_at_its_field_and_never_checked(
        sale, monkeypatch, account):
    sale.start()
    sale.landed(sale.choose(), "payout")
    checks = calls_of(sale.app, monkeypatch, "offramp_validate_fields")
    creates = calls_of(sale.app, monkeypatch, "offramp_create_order")
    page = sale.payout(bankAccountNumber=account)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and field_error(html, "bankAccountNumber") == NUBAN
    assert field_error(html, "bankCode") is None
    assert "payout" not in sale.session.done and sale.session.fields == {}
    # The account check cannot be reached with it: the payout details come first.
    sale.landed(sale.get("/payee"), "payout")
    assert checks == [] and creates == []
    # Typed as people copy it from their banking app, it is the number's ten digits.
    sale.landed(sale.payout(bankAccountNumber="0123 456 789"), "payee")
    assert sale.session.fields["bankAccountNumber"] == "0123456789"
    assert [call["required_fields"]["bankAccountNumber"] for call in checks] == ["0123456789"]


@pytest.mark.parametrize(("locale", "message"), [
    ("fr", "Saisissez votre numéro de compte nigérian à 10 chiffres (NUBAN)."),
    ("sw", "Weka nambari yako ya akaunti ya Nigeria yenye tarakimu 10 (NUBAN)."),
    ("pt", "Introduza o seu número de conta nigeriano de 10 algarismos (NUBAN)."),
])
def test_the_account_numbers_message_is_in_the_pages_language(sale, locale, message):
    sale.start(locale=locale)
    sale.landed(sale.choose(), "payout")
    html = sale.payout(bankAccountNumber="12345").get_data(as_text=True)
    assert f'<html lang="{locale}">' in html
    assert field_error(html, "bankAccountNumber") == escape(message)


def _save_details(sale: Sale, **fields: str) -> None:
    """Payout details as a session saved them before today's rules (stored, never checked)."""
    def change(session):
        session.fields = {**session.fields, **fields}

    with sale.app.app_context():
        get_state().sessions.update(sale.session_id, change)


def test_saved_details_the_offers_rules_refuse_are_sent_back_to_their_field_not_to_the_partner(
        sale, monkeypatch):
    sale.start()
    sale.landed(sale.choose(), "payout")
    sale.landed(sale.payout(), "payee")
    _save_details(sale, bankAccountNumber="💸")
    checks = calls_of(sale.app, monkeypatch, "offramp_validate_fields")
    page = sale.landed(sale.get("/payee"), "payout")
    html = page.get_data(as_text=True)
    assert field_error(html, "bankAccountNumber") == NUBAN and 'value="💸"' in html
    assert checks == [] and "payout" not in sale.session.done


def test_no_order_is_created_for_saved_details_the_offers_rules_refuse(sale, monkeypatch):
    sale.start()
    review = sale.to_review()
    _save_details(sale, bankAccountNumber="12345")

    def as_if_confirmed(session):           # the payee confirmed for exactly these details
        session.payee = {**session.payee, "for": fields_digest(session)}

    with sale.app.app_context():
        get_state().sessions.update(sale.session_id, as_if_confirmed)
    creates = calls_of(sale.app, monkeypatch, "offramp_create_order")
    checks = calls_of(sale.app, monkeypatch, "offramp_validate_fields")
    # The review shown before no longer holds; the review now sends the user to the field.
    sale.landed(sale.create(review), "review")
    page = sale.landed(sale.get("/review"), "payout")
    assert field_error(page.get_data(as_text=True), "bankAccountNumber") == NUBAN
    assert creates == [] and checks == [] and sale.session.order_id is None


def test_a_mobile_money_number_is_read_for_the_country(sale):
    sale.start()
    sale.landed(sale.choose(countryIsoCode="KE", paymentChannel="mobile_money", network="CELO",
                            asset="USDT", amount="1000"), "payout")
    bad = sale.post("/payout", {"phoneNumber": "0241234567"})         # a Ghanaian number
    assert 'id="field-phoneNumber-error"' in bad.get_data(as_text=True)
    sale.landed(sale.post("/payout", {"phoneNumber": "0712 345 678"}), "payee")
    assert sale.session.fields == {"phoneNumber": "254712345678"}


def test_an_airtime_payout_takes_the_network_chosen_on_the_first_step(sale):
    sale.start()
    with sale.app.app_context():
        carriers = get_state().flows["offramp"].catalog().channel("NG", "airtime").carriers
    mtn = next(c for c in carriers if c.name == "MTN")
    page = sale.landed(sale.choose(paymentChannel="airtime", carrierCode=mtn.code,
                                   currency="local", amount="2000"), "payout")
    html = page.get_data(as_text=True)
    assert "Chosen in the first step." in html and 'name="carrierId"' in html
    # Even a forged form cannot change it: the first step's choice is what is sent.
    sale.landed(sale.post("/payout", {"carrierId": "forged", "phoneNumber": "08012345678"}),
                "payee")
    assert sale.session.fields == {"carrierId": mtn.code, "phoneNumber": "2348012345678"}


# -- 3. payee check ----------------------------------------------------------------------------------

def test_the_account_holder_found_is_confirmed_by_the_user(sale):
    sale.start()
    sale.landed(sale.choose(), "payout")
    page = sale.landed(sale.payout(), "payee")
    html = page.get_data(as_text=True)
    name = re.search(r'data-testid="payee-name">([^<]+)<', html).group(1)
    assert "We found this account" in html and "Yes, pay this account" in html
    sale.landed(sale.payee(confirm="yes"), "wallet")
    assert sale.session.payee["name"] == name and sale.session.payee["confirmed"]


def test_an_account_that_cannot_be_checked_asks_the_name_with_a_warning(sale):
    sale.start()
    sale.landed(sale.choose(), "payout")
    page = sale.landed(sale.payout(bankAccountNumber="0123450503"), "payee")
    html = page.get_data(as_text=True)
    assert "cannot confirm whose account this is" in html and 'name="name"' in html
    refused = sale.payee(name="  ")
    assert 'id="field-name-error"' in refused.get_data(as_text=True)
    sale.landed(sale.payee(name="Ada  Obi"), "wallet")
    review = sale.landed(sale.post("/wallet", {"address": EVM_ADDRESS}), "review")
    assert "Ada Obi" in review.get_data(as_text=True)
    assert "not checked" in review.get_data(as_text=True)


def test_details_the_upstream_refuses_send_the_user_back_to_correct_them(sale):
    sale.start()
    sale.landed(sale.choose(), "payout")
    sale.landed(sale.payout(bankAccountNumber="0123450404"), "payee")
    response = sale.get("/payee")
    page = sale.landed(response, "payout")
    html = page.get_data(as_text=True)
    assert "were not accepted" in html and "No account" in html
    assert "payout" not in sale.session.done
    # Corrected, the check runs again for the new details.
    page = sale.landed(sale.payout(bankAccountNumber="0123456789"), "payee")
    assert "We found this account" in page.get_data(as_text=True)


def test_the_payee_check_is_asked_once_per_set_of_details(sale, monkeypatch):
    sale.start()
    sale.landed(sale.choose(), "payout")
    calls = calls_of(sale.app, monkeypatch, "offramp_validate_fields")
    sale.landed(sale.payout(), "payee")
    sale.get("/payee")
    assert len(calls) == 1
    sale.landed(sale.payout(bankAccountNumber="0223456789"), "payee")
    assert len(calls) == 2


def test_no_order_is_created_for_details_whose_payee_was_not_confirmed(sale, monkeypatch):
    sale.start()
    review = sale.to_review()
    creates = calls_of(sale.app, monkeypatch, "offramp_create_order")

    def forget(session):
        session.payee = {**session.payee, "confirmed": False}

    with sale.app.app_context():
        get_state().sessions.update(sale.session_id, forget)
    response = sale.create(review)
    assert response.headers["Location"].endswith("/review") and creates == []
    # The review sends the user to confirm the payee again, saying why.
    page = sale.landed(sale.get("/review"), "payee")
    assert "Check who the money goes to" in page.get_data(as_text=True)
    assert "payee" not in sale.session.done and creates == []


# -- 4. sending wallet --------------------------------------------------------------------------------

def test_the_sending_wallet_is_checked_for_the_network(sale):
    sale.start()
    sale.landed(sale.choose(), "payout")
    sale.landed(sale.payout(), "payee")
    sale.landed(sale.payee(confirm="yes"), "wallet")
    page = sale.post("/wallet", {"address": EVM_ADDRESS.lower()[:-1] + "X"})
    assert 'id="field-address-error"' in page.get_data(as_text=True)
    html = sale.get("/wallet").get_data(as_text=True)
    assert "sent back to this address" in html


# -- 5. review and create ------------------------------------------------------------------------------

def test_review_shows_the_payout_the_payee_and_the_refund_address(sale):
    sale.start()
    review = sale.to_review()
    html = review.get_data(as_text=True)
    for text in ("You send", "You receive", "First Bank of Nigeria", "0123456789",
                 "Account holder", EVM_ADDRESS, "Confirm and sell"):
        assert text in html


def test_create_makes_one_type_based_order_with_what_was_reviewed(sale, monkeypatch):
    sale.start(orderParams="sale-42")
    review = sale.to_review()
    creates = calls_of(sale.app, monkeypatch, "offramp_create_order")
    sale.landed(sale.create(review), "deposit")
    again = sale.create(review)                          # a double click
    assert again.headers["Location"].endswith("/deposit")
    assert len(creates) == 1
    order = sandbox_order(sale.app, sale.session.order_id, "offramp")
    assert order.data["paymentType"] == "CRYPTO_WALLET" and order.data["orderParams"] == "sale-42"
    assert order.data["fromAddress"] == EVM_ADDRESS
    assert order.data["requiredFields"] == NG_ACCOUNT


def test_an_unanswered_create_is_only_looked_up_and_adopted(sale, monkeypatch):
    sale.start(orderParams="sale-7")
    review = sale.to_review()
    with sale.app.app_context():
        client = get_state().upstream
    original = client.offramp_create_order
    sent = []

    def timeout_after_creating(**kwargs):
        sent.append(original(**kwargs))
        raise UpstreamTimeout("read timeout")

    monkeypatch.setattr(client, "offramp_create_order", timeout_after_creating)
    response = sale.create(review)
    assert response.headers["Location"].endswith("/deposit")
    assert sale.session.order_id == sent[0].id and len(sent) == 1


# -- 6. deposit ---------------------------------------------------------------------------------------

def test_the_deposit_shows_where_what_and_by_when_with_a_wallet_qr_code(sale):
    page = sale.to_deposit()
    html = page.get_data(as_text=True)
    order = sandbox_order(sale.app, sale.session.order_id, "offramp")
    assert eip55_checksum(order.data["toAddress"]) in html and "Copy the address" in html
    assert "Send only USDC on Polygon" in html and "another network" in html
    assert "<svg" in html and "fills in the coin, the network, the amount" in html
    assert 'data-countdown-to="' in html and 'data-testid="order-deadline"' in html
    # By when, on the clock of the user's country (the sale is in Nigeria), saying so.
    deadline = re.search(r'data-testid="order-deadline">([^<]+)<', html).group(1)
    assert deadline.endswith("(Nigeria Time)"), deadline
    assert 'data-testid="order-reference"' in html and sale.session.order_id in html
    assert 'data-testid="test-wallet"' in html and "/checkout/sandbox/offramp/" in html
    assert 'data-deposit-form' in html and 'name="tx_hash"' in html


def test_the_deposit_after_create_shows_the_creates_answer_and_a_reload_asks_again(
        sale, monkeypatch):
    sale.start()
    review = sale.to_review()
    reads = order_reads(sale.app, monkeypatch, "offramp")
    page = sale.landed(sale.create(review), "deposit")
    order_id = sale.session.order_id
    assert reads == []
    order = sandbox_order(sale.app, order_id, "offramp")
    assert eip55_checksum(order.data["toAddress"]) in page.get_data(as_text=True)
    sale.get("/deposit")
    assert reads == [order_id]


def test_the_deposit_address_is_shown_and_copied_with_its_eip55_checksum(sale):
    """The upstream may give an EVM address in lower case: the user sees, copies and scans it in
    its mixed-case checksum form, which a wallet checks letter by letter; the shop is given the
    same (a wallet reads both forms as the same address)."""
    sale.client.environ_base["HTTP_SEC_FETCH_DEST"] = "iframe"
    html = sale.to_deposit().get_data(as_text=True)
    given = sandbox_order(sale.app, sale.session.order_id, "offramp").data["toAddress"]
    assert given == given.lower()           # the sandbox's deposit wallets are in lower case
    shown = eip55_checksum(given)
    assert shown != given
    assert re.search(r'data-testid="deposit-address">([^<]+)<', html).group(1) == shown
    assert f'data-copy="{shown}"' in html and given not in html
    assert events_in(html)["deposit-requested"]["deposit"]["address"] == shown


def test_a_deposit_page_of_an_order_that_moved_on_reads_it_once(sale, monkeypatch):
    """The crypto has arrived, and its webhook is late: the deposit page shows the status page
    from its own read of the order, stored (the status page that follows asks nothing)."""
    monkeypatch.setitem(sale.app.config, "CHECKOUT_STATUS_MAX_AGE", 30)    # as configured
    sale.to_deposit()
    order_id = sale.session.order_id
    wait_for_stored_status(sale.app, order_id, "deposit_awaiting")     # the creation's webhook
    move_sandbox_order(sale.app, order_id, "transaction_confirmed", "offramp", webhook=False)
    reads = order_reads(sale.app, monkeypatch, "offramp")
    page = sale.get("/deposit").get_data(as_text=True)
    assert 'data-deposit-form' not in page and 'id="order-status"' in page
    assert reads == [order_id] and stored_status(sale.app, order_id) == "deposit_successful"
    sale.get("/status")      # and the status page that follows asks nothing
    assert reads == [order_id]


def test_a_framed_deposit_asks_the_shop_once_to_send_from_its_wallet(sale):
    sale.client.environ_base["HTTP_SEC_FETCH_DEST"] = "iframe"
    page = sale.to_deposit()
    events = events_in(page.get_data(as_text=True))
    deposit = events["deposit-requested"]["deposit"]
    order = sandbox_order(sale.app, sale.session.order_id, "offramp")
    assert deposit["address"] == eip55_checksum(order.data["toAddress"])
    assert deposit["network"] == "POLYGON"
    assert deposit["asset"] == "USDC" and deposit["amount"] == str(order.data["cashout"]["cryptoAmount"])
    # The embedded sandbox is a testnet: Circle's USDC on Polygon Amoy.
    assert deposit["chainId"] == 80002
    assert deposit["tokenContract"] == "0x41E94Eb019C0762f9Bfcf9Fb1E58725BfB0e7582"
    again = sale.get("/deposit")
    assert "deposit-requested" not in events_in(again.get_data(as_text=True))


def test_a_top_level_deposit_page_asks_the_shop_nothing(sale):
    sale.to_deposit()
    html = sale.get("/deposit", headers={"Sec-Fetch-Dest": "document"}).get_data(as_text=True)
    assert "deposit-requested" not in html


@pytest.mark.parametrize("bad", ["", "0x1234", "not a hash", "0x" + "g" * 64])
def test_a_hash_that_cannot_be_one_is_refused_at_the_field(sale, monkeypatch, bad):
    sale.to_deposit()
    confirms = calls_of(sale.app, monkeypatch, "offramp_confirm_order")
    page = sale.landed(sale.post("/deposit/sent", {"tx_hash": bad}), "deposit")
    assert 'id="field-tx_hash-error"' in page.get_data(as_text=True) and confirms == []


def test_the_hash_confirms_the_order_once(sale, monkeypatch):
    sale.to_deposit()
    confirms = calls_of(sale.app, monkeypatch, "offramp_confirm_order")
    tx = "0x" + "ab" * 32
    page = sale.landed(sale.post("/deposit/sent", {"tx_hash": tx}), "status")
    html = page.get_data(as_text=True)
    assert "Your transaction was received" in html
    assert sale.landed(sale.post("/deposit/sent", {"tx_hash": tx}), "status")
    assert sale.landed(sale.post("/deposit/sent", {"tx_hash": "0x" + "cd" * 32}), "status")
    assert len(confirms) == 1
    assert sandbox_order(sale.app, sale.session.order_id, "offramp").data["hash"] == tx
    # The deposit page now only leads to the status.
    assert "Your order" in sale.get("/deposit").get_data(as_text=True)


def test_an_explorer_link_pasted_instead_of_the_hash_is_read(sale):
    sale.to_deposit()
    tx = "0x" + "12" * 32
    sale.landed(sale.post("/deposit/sent", {"tx_hash": f"https://polygonscan.com/tx/{tx}"}),
                "status")
    assert sandbox_order(sale.app, sale.session.order_id, "offramp").data["hash"] == tx


def test_an_unreachable_upstream_keeps_the_hash_for_another_try(sale, monkeypatch):
    sale.to_deposit()
    with sale.app.app_context():
        client = get_state().upstream
    original = client.offramp_confirm_order

    def down(**kwargs):
        raise UpstreamTimeout("read timeout")

    monkeypatch.setattr(client, "offramp_confirm_order", down)
    tx = "0x" + "ef" * 32
    page = sale.landed(sale.post("/deposit/sent", {"tx_hash": tx}), "deposit")
    html = page.get_data(as_text=True)
    assert "could not reach our payment partner" in html and f'value="{tx}"' in html
    monkeypatch.setattr(client, "offramp_confirm_order", original)
    sale.landed(sale.post("/deposit/sent", {"tx_hash": tx}), "status")


def test_the_test_wallets_hash_comes_back_filled_in(sale):
    sale.to_deposit()
    tx = "0x" + "34" * 32
    html = sale.get("/deposit", query_string={"txHash": tx}).get_data(as_text=True)
    assert f'value="{tx}"' in html


# -- 7. merchant-funded payouts -----------------------------------------------------------------------

def launch_status(app: Flask, client: FlaskClient, **claims: Any) -> int:
    from checkout import Checkout

    with app.test_request_context():
        try:
            url = Checkout.launch_url("offramp", **claims)
        except Exception:                       # refused in the merchant's code
            return 400
    return client.get(url).status_code


@pytest.mark.parametrize("claims", [
    {"paymentType": "VIRTUAL_WALLET"},
    {"paymentType": "VIRTUAL_WALLET", "amount": "1500", "currency": "local"},
    {"paymentType": "VIRTUAL_WALLET", "amount": "1500", "currency": "local", "lock": ["amount"],
     "network": "CELO"},
    {"paymentType": "PIGGY_BANK"},
])
def test_a_merchant_funded_payout_needs_a_locked_amount_and_the_merchants_wallet(app, client,
                                                                                 claims):
    assert launch_status(app, client, **claims) == 400


def test_an_onramp_token_cannot_ask_for_a_merchant_funded_payout(app):
    from checkout import Checkout
    from checkout.errors import LaunchTokenError

    with app.test_request_context(), pytest.raises(LaunchTokenError):
        Checkout.launch_url("onramp", paymentType="VIRTUAL_WALLET")


def test_an_unsigned_sale_is_always_paid_from_the_users_wallet(sale):
    sale.client.get("/checkout/offramp?paymentType=VIRTUAL_WALLET")
    sale.start()
    assert sale.session.claims.get("paymentType") is None


def test_a_merchant_funded_payout_has_no_wallet_and_no_deposit(sale, monkeypatch):
    page = sale.start(paymentType="VIRTUAL_WALLET", countryIsoCode="KE",
                      paymentChannel="mobile_money", network="CELO", asset="USDT",
                      amount="1500", currency="local", address=EVM_ADDRESS,
                      lock=["amount", "currency"])
    html = page.get_data(as_text=True)
    assert "Where should we pay you?" in html                       # amount passed over
    sale.landed(sale.post("/payout", {"phoneNumber": "0712345678"}), "payee")
    review = sale.landed(sale.payee(confirm="yes"), "review")
    html = review.get_data(as_text=True)
    assert "you send nothing" in html and "Confirm the payout" in html
    assert "You send from" not in html and 'data-testid="send-amount"' not in html
    page = sale.landed(sale.create(review), "status")
    order = sandbox_order(sale.app, sale.session.order_id, "offramp")
    assert order.data["paymentType"] == "VIRTUAL_WALLET"
    # The status page does not show the create's answer: it is not kept for it to linger.
    with sale.app.app_context():
        kept = get_state().just_created
    assert kept.take("offramp", order.id) is None and not kept.kept()
    html = page.get_data(as_text=True)
    assert "deposit-requested" not in html and "Waiting for your crypto" not in html
    assert "The shop is funding your payout" in html
    assert sale.get("/wallet").headers["Location"].endswith("/status")


def test_a_locked_amount_cannot_be_changed(sale):
    sale.start(countryIsoCode="NG", paymentChannel="bank", network="POLYGON", asset="USDC",
               amount="20000", currency="local", lock=["amount"])
    page = sale.get("/choose")
    assert "readonly" in page.get_data(as_text=True)
    forged = sale.choose(amount="900000")
    assert 'id="field-amount-error"' in forged.get_data(as_text=True)


# -- 8. status -------------------------------------------------------------------------------------

def test_the_timeline_collapses_a_status_listed_twice_in_a_row():
    from checkout.views.offramp import timeline

    order = {"statusHistory": [
        {"status": "initiated", "changedAt": "2026-11-22T10:00:00.000Z"},
        {"status": "awaiting_transaction_confirmation", "changedAt": "2026-11-22T10:01:00.000Z"},
        {"status": "awaiting_transaction_confirmation", "changedAt": "2026-11-22T10:01:10.000Z"},
        {"status": "validating_transaction", "changedAt": "2026-11-22T10:01:20.000Z"},
        {"status": "refund_failed"}, {"nonsense": 1}, "broken",
    ]}
    steps = timeline(order)
    assert [s["status"] for s in steps] == ["initiated", "awaiting_transaction_confirmation",
                                            "validating_transaction", "refund_failed"]
    assert steps[1]["at"] == "2026-11-22T10:01:00.000Z"
    assert all(s["text"] and s["text"] != s["status"] for s in steps)
    assert timeline(None) == [] and timeline({"statusHistory": "x"}) == []


def test_every_offramp_status_has_plain_words():
    from checkout.sandbox.orders import OFFRAMP_STATUSES
    from checkout.views.offramp import TIMELINE_TEXTS

    assert set(OFFRAMP_STATUSES) <= set(TIMELINE_TEXTS)


def test_a_status_that_has_not_moved_for_a_minute_says_it_can_take_a_while(sale):
    from datetime import UTC, datetime, timedelta

    from checkout.views.offramp import status_context
    from checkout.views.tracking import OrderStatus

    sale.to_deposit()
    long_ago = datetime.now(UTC) - timedelta(minutes=2)
    just_now = datetime.now(UTC)
    with sale.app.test_request_context():
        session = sale.session
        assert status_context(session, OrderStatus("payout_pending", None, long_ago))["calm"]
        assert not status_context(session, OrderStatus("payout_pending", None, just_now))["calm"]
        assert not status_context(session, OrderStatus("payout_successful", None, long_ago))["calm"]


@pytest.mark.parametrize(("status", "event"), [
    ("payout_successful", "completed"), ("deposit_invalid", "failed"),
    ("refund_successful", "failed"), ("refund_pending", None), ("refund_failed", None),
    ("payout_failed", None), ("deposit_expired", None),
])
def test_an_offramp_ends_for_the_shop_when_the_money_arrives_or_goes_back(status, event):
    from checkout.flows import OfframpFlow

    assert OfframpFlow.terminal_event(status) == event


def test_a_hash_given_after_the_order_expired_is_kept_for_support(sale, monkeypatch):
    sale.to_deposit()
    order = sandbox_order(sale.app, sale.session.order_id, "offramp")
    with sale.app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        from checkout.sandbox import orders as sandbox_orders
        from checkout.sandbox.state import current

        store = current().orders
        with store.lock:
            sandbox_orders._offramp_expire(store, order)
    tx = "0x" + "77" * 32
    page = sale.landed(sale.post("/deposit/sent", {"tx_hash": tx}), "status")
    html = page.get_data(as_text=True)
    assert "No transaction hash arrived in time" in html and tx in html
    assert sale.session.order_id in html


def test_a_new_price_for_the_same_details_keeps_the_confirmed_payee(sale):
    sale.start()
    sale.to_review()

    def drop_the_quote(session):            # as a create given up after its grace period does
        session.quote = None

    with sale.app.app_context():
        get_state().sessions.update(sale.session_id, drop_the_quote)
    page = sale.get("/review")
    assert page.status_code == 200 and "Confirm and sell" in page.get_data(as_text=True)
    assert sale.session.payee["confirmed"]
    # Opened directly, the check runs against a fresh offer rather than none.
    with sale.app.app_context():
        get_state().sessions.update(sale.session_id, drop_the_quote)
    assert "We found this account" in sale.get("/payee").get_data(as_text=True)


def test_a_confirmation_from_a_page_showing_another_account_confirms_nothing(sale):
    sale.start()
    sale.landed(sale.choose(), "payout")
    sale.landed(sale.payout(), "payee")
    shown = sale.session.payee["for"]                     # tab A shows this account
    sale.landed(sale.payout(bankAccountNumber="0223456789"), "payee")
    sale.get("/payee")                                    # tab B checks another one
    stale = sale.post("/payee", {"check": shown, "confirm": "yes"})
    assert "Your details changed" in stale.get_data(as_text=True)
    assert not sale.session.payee["confirmed"] and "payee" not in sale.session.done


def test_changing_the_payout_details_keeps_the_sending_wallet(sale):
    sale.start()
    sale.to_review()
    sale.landed(sale.payout(bankAccountNumber="0223456789"), "payee")
    # After the new account is confirmed, the wallet given before still holds: on to the review.
    sale.landed(sale.payee(confirm="yes"), "review")


def test_a_step_posted_while_the_order_exists_changes_nothing(sale):
    from checkout.errors import OrderUnderway
    from checkout.journey.steps import update_before_order

    sale.to_deposit()
    before = sale.session.quote
    response = sale.choose(amount="40000")                # a second tab, still on step one
    assert response.headers["Location"].endswith("/deposit")
    assert sale.session.quote == before
    # A save that passed the gate just before the order was attached is refused all the same.
    with sale.app.test_request_context(), pytest.raises(OrderUnderway):
        update_before_order(get_state().sessions, get_state().flows["offramp"].settings,
                            sale.session_id, lambda fresh: fresh.answer({"amount": "40000"}))
    assert sale.session.answers["amount"] == "20000"


def test_a_merchant_funded_order_takes_no_transaction_hash(sale, monkeypatch):
    sale.start(paymentType="VIRTUAL_WALLET", countryIsoCode="KE", paymentChannel="mobile_money",
               network="CELO", asset="USDT", amount="1500", currency="local",
               address=EVM_ADDRESS, lock=["amount", "currency"])
    sale.landed(sale.post("/payout", {"phoneNumber": "0712345678"}), "payee")
    review = sale.landed(sale.payee(confirm="yes"), "review")
    sale.landed(sale.create(review), "status")
    confirms = calls_of(sale.app, monkeypatch, "offramp_confirm_order")
    response = sale.post("/deposit/sent", {"tx_hash": "0x" + "cd" * 32})
    assert response.headers["Location"].endswith("/status") and confirms == []


def test_without_knowing_the_upstreams_chains_no_payment_request_is_made(sale):
    sale.app.config["CHECKOUT_TESTNET"] = None          # a real upstream that was not told
    sale.client.environ_base["HTTP_SEC_FETCH_DEST"] = "iframe"
    page = sale.to_deposit()
    html = page.get_data(as_text=True)
    assert "to fill in the address, then enter the amount" in html
    deposit = events_in(html)["deposit-requested"]["deposit"]
    assert "chainId" not in deposit and "tokenContract" not in deposit


def test_back_leads_to_the_step_before_in_this_journey(sale):
    sale.start()
    sale.landed(sale.choose(), "payout")
    sale.landed(sale.payout(), "payee")
    wallet = sale.landed(sale.payee(confirm="yes"), "wallet")
    assert f'href="/checkout/s/{sale.session_id}/payee"' in wallet.get_data(as_text=True)


def test_an_airtime_top_up_asks_no_account_holders_name(sale):
    sale.start()
    with sale.app.app_context():
        carrier = get_state().flows["offramp"].catalog().channel("NG", "airtime").carriers[0]
    sale.landed(sale.choose(paymentChannel="airtime", carrierCode=carrier.code, amount="2000"),
                "payout")
    page = sale.landed(sale.post("/payout", {"phoneNumber": "08012345678"}), "payee")
    html = page.get_data(as_text=True)
    assert 'name="name"' not in html and "top-up goes to the phone number" in html
    sale.landed(sale.payee(), "wallet")


def test_switching_the_amounts_unit_clears_the_number(sale):
    sale.start()
    page = sale.get("/choose", query_string={**NG_BANK, "currency": "usd"},
                    headers={"HX-Request": "true", "HX-Trigger-Name": "currency"})
    assert 'name="amount" type="text" value=""' in page.get_data(as_text=True)


def test_the_status_page_says_where_the_money_went(sale):
    sale.to_deposit()
    sale.landed(sale.post("/deposit/sent", {"tx_hash": "0x" + "ab" * 32}), "status")
    html = sale.get("/status").get_data(as_text=True)
    assert "Paid to" in html and "0123456789" in html and "Account holder" in html
