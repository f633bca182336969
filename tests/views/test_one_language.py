"""Every page in one language: on French, Swahili and Portuguese pages, no English left, neither
the checkout's own (its catalogue's) nor what the upstream writes (its ways to pay, its payout
names, its field labels, its transfer instructions).

The sandbox's catalogue is what the upstream is known to send: every text of it is said in the
page's language (checkout.upstream_phrases and the labels known by name in
checkout.upstream_text), and walking both flows through every page finds none of it in English.

The walk visits every state the browser's accessibility walk does (tests/browser/
test_accessibility.py, in English there), and more: each page declares its language and refers to
no element it does not have.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from html.parser import HTMLParser
from types import SimpleNamespace
from typing import Any

import pytest
from babel.messages.pofile import read_po
from babel.numbers import format_currency
from flask import Flask
from flask.testing import FlaskClient
from markupsafe import escape

from checkout.i18n import TRANSLATIONS, babel_locale
from checkout.sandbox import kyc, payees, reference, transfer
from checkout.state import get_state
from checkout.upstream_phrases import SENTENCES_WITH_FIGURES, TEXTS
from checkout.upstream_text import (
    as_sent,
    detail_description,
    detail_label,
    document_title,
    field_label,
    in_page_language,
    instructions_text,
    payee_label,
    reason_text,
    warning_text,
)

from ..support.portuguese import brazilian_forms
from ..support.sandbox_clock import advance
from .conftest import AMOUNTS, CORRIDORS, EVM_ADDRESS, PHONES, Flow, wait_for_stored_status

LANGUAGES = ("fr", "sw", "pt")
# Names that every language writes as they are.
SAID_THE_SAME = {"M-PESA"}


# -- what the sandbox can send ----------------------------------------------------------------------

def _instructions_of_every_kind() -> Iterator[dict[str, Any]]:
    """``transferInstructions`` of every type in every state the sandbox writes them in: bank and
    wallet details, a whole and a fractional amount (the USSD warning), before and after an OTP."""
    now = datetime(2026, 11, 22, 9, 0, tzinfo=UTC)
    store = SimpleNamespace(clock=SimpleNamespace(now=lambda: now, sleep_seconds=lambda s: s))
    for kind in ("manual", "redirect", "ussd", "stk_push", "otp_stk_push"):
        for channel in ("bank", "mobile_money"):
            for amount in (5000, 5000.5):
                for verified in (False, True):
                    order = SimpleNamespace(
                        status="swap_initiated",
                        transfer=transfer.TransferState(
                            type=kind, reference="AB12CD34", otp_verified=verified,
                            payment_url="https://pay.example/x"),
                        data={"localCurrencyAmount": amount, "currencyIsoCode": "NGN",
                              "countryIsoCode": "NG", "paymentChannel": channel})
                    yield transfer.instructions(store, order)     # type: ignore[arg-type]


def sandbox_texts() -> list[tuple[str, Any, str]]:
    """Every text of the sandbox's catalogue as (kind, key the checkout may know it by, text)."""
    found: list[tuple[str, Any, str]] = []

    def fields(specs: tuple[reference.RequiredField, ...]) -> None:
        found.extend(("field", spec.name, spec.label) for spec in specs)

    for country in reference.COUNTRIES:
        for onramp in country.onramp:
            found.append(("description", None, onramp.description))
            fields(onramp.required_fields)
        for offramp in country.offramp:
            found.append(("description", None, offramp.name))
            fields(offramp.required_fields)
            if offramp.carriers:                    # a network to choose, wherever it is asked
                fields((reference.carrier_field(offramp.carriers),))
        for document in country.documents:
            found.append(("document", document.type, document.title))
            fields(document.required_fields)
    found.append(("payee", None, payees.HOLDER_LABEL))
    found.extend(("kyc reason", None, reason) for reason in kyc.REASONS)
    for instructions in _instructions_of_every_kind():
        found.append(("instructions", instructions["type"], instructions["instructionsText"]))
        if instructions.get("warningText"):
            found.append(("warning", instructions, instructions["warningText"]))
        for detail in instructions["transferDetails"]:
            found.append(("detail", detail["id"], detail["label"]))
            if detail.get("description"):
                found.append(("detail description", detail["id"], detail["description"]))
        for field in instructions["fieldsToConfirmOrder"]:
            found.append(("field", field["name"], field["label"]))
    return found


def _warning_of(instructions: dict[str, Any]) -> Any:
    details = [SimpleNamespace(**detail) for detail in instructions["transferDetails"]]
    return SimpleNamespace(warning_text=instructions.get("warningText"), transfer_details=details)


def as_the_page_says(kind: str, key: Any, text: str) -> tuple[str, str]:
    """What a page shows for ``text`` (in the request's language), and what it keeps beside it
    as the upstream wrote it (nothing when it is said in the page's language)."""
    if kind == "field":
        return str(field_label(key, text)), ""
    if kind == "document":
        return str(document_title(key, text)), ""
    if kind == "detail":
        return str(detail_label(key, text)), ""
    if kind == "detail description":
        return str(detail_description(key, text)), ""
    if kind == "payee":
        return str(payee_label(text)), ""
    if kind == "instructions":
        said, beside = instructions_text(key, text)
        return str(said), str(beside)
    if kind == "warning":
        said, beside = warning_text(_warning_of(key))
        return str(said), str(beside)
    if kind == "kyc reason":
        said, beside = reason_text(text)
        return str(said), str(beside)
    return str(in_page_language(text)), ""


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_text_the_sandbox_can_send_is_said_in_the_pages_language(app, language):
    """A new text in the sandbox's catalogue without an entry here fails this test."""
    texts = sandbox_texts()
    assert len(texts) > 60
    with app.test_request_context(f"/checkout/offramp?locale={language}"):
        app.preprocess_request()
        untranslated = []
        for kind, key, text in texts:
            said, beside = as_the_page_says(kind, key, text)
            assert said and 'lang="en"' not in said, (kind, key, text, said)
            # A rejection's reason keeps the partner's words below it: what the user quotes.
            kept = str(as_sent(text)) if kind == "kyc reason" else ""
            assert beside == kept, (kind, key, text, beside)
            if said == str(escape(text)) and text not in SAID_THE_SAME:
                untranslated.append((kind, key, text))
        assert not untranslated


def test_an_english_page_shows_the_tables_texts_as_they_were_sent(app):
    """Each text is its own message id: nothing changes on an English page but its figures."""
    assert all(str(said) == text for text, said in TEXTS.items())
    with app.test_request_context("/checkout/offramp?locale=en"):
        app.preprocess_request()
        for kind, _key, text in sandbox_texts():
            if kind == "description":
                assert str(in_page_language(text)) == str(escape(text))


# -- walking every page ---------------------------------------------------------------------------------

class _Text(HTMLParser):
    """What a reader of the page reads: text, and the labels of controls."""

    def __init__(self) -> None:
        super().__init__()
        self.read: list[str] = []
        self.skip = 0

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag in ("script", "style"):
            self.skip += 1
        self.read.extend(" ".join(value.split()) for name, value in attrs
                         if name in ("aria-label", "title", "placeholder") and value)

    def handle_endtag(self, tag: str) -> None:
        if tag in ("script", "style"):
            self.skip -= 1

    def handle_data(self, data: str) -> None:
        if not self.skip and data.strip():
            self.read.append(" ".join(data.split()))


def english_of_the_sandbox() -> tuple[set[str], set[str]]:
    """The sandbox's English that must not be read on a page in another language: short texts
    (one or two words: a label) as whole texts, longer ones as their runs of three words or more
    between figures. Names said the same in every language (M-PESA) are left out, and so are
    documents' titles (the KYC step's, some already in French)."""
    whole: set[str] = set()
    runs: set[str] = set()
    for kind, _key, text in sandbox_texts():
        if text in SAID_THE_SAME or kind == "document":
            continue
        if len(text.split()) <= 2:
            whole.add(text)
            continue
        for run in re.split(r"[0-9][0-9.,]*|\b[A-Z]{3}\b|\{\w+\}", text):
            run = " ".join(run.strip(" .,:;").split())
            if len(run.split()) >= 3:
                runs.add(run)
    for key in SENTENCES_WITH_FIGURES:
        runs.update(" ".join(run.strip(" .,:;").split()) for run in re.split(r"\{\w+\}", key)
                    if len(run.split()) >= 3)
    return whole, runs


def runs_of(text: str, pattern: str) -> set[str]:
    """The runs of three words or more of ``text`` between what ``pattern`` matches."""
    runs = (" ".join(run.strip(" .,:;").split()) for run in re.split(pattern, text))
    return {run for run in runs if len(run.split()) >= 3}


@cache
def english_of_the_checkout(language: str) -> tuple[frozenset[str], frozenset[str]]:
    """The checkout's own English that ``language``'s catalogue does not say the same (or does
    not say at all: a missing translation shows the English): its short texts (one or two words)
    as whole texts, longer ones as their runs of three words or more between the values put in
    them."""
    with open(TRANSLATIONS / language / "LC_MESSAGES" / "messages.po", "rb") as po:
        catalogue = read_po(po)
    whole: set[str] = set()
    runs: set[str] = set()
    for message in catalogue:
        if not message.id:
            continue
        ids = message.id if isinstance(message.id, tuple) else (message.id,)
        said = message.string if isinstance(message.string, tuple) else (message.string or "",)
        for english in ids:
            if english in said:
                continue                # said the same (a name, a code)
            if len(english.split()) <= 2 and not re.search(r"%\(|\{", english):
                whole.add(" ".join(english.split()))
            else:
                runs |= runs_of(english, r"%\(\w+\)[sd]|\{\w+\}|<[^>]+>")
    return frozenset(whole), frozenset(runs)


def dangling(html: str) -> list[str]:
    """What the page's ARIA references name that it does not have (a whole page only)."""
    ids = set(re.findall(r'\sid="([^"]+)"', html))
    named = re.findall(r'aria-(?:describedby|labelledby|controls)="([^"]*)"', html)
    return sorted({ref for refs in named for ref in refs.split() if ref not in ids})


class Walk:
    """Every page a flow shows, kept as it was read, in one language."""

    def __init__(self, app: Flask, client: FlaskClient, language: str) -> None:
        self.app, self.client, self.language = app, client, language
        self.pages: dict[str, str] = {}

    def read(self, name: str, response: Any) -> Any:
        assert response.status_code == 200, (name, response.status_code)
        self.pages[name] = response.get_data(as_text=True)
        return response

    def start(self, flow: Flow, name: str) -> Flow:
        self.read(f"{name}: amount", flow.start(locale=self.language))
        return flow

    def countries(self, flow: Flow, name: str) -> None:
        for country in reference.COUNTRIES:
            self.read(f"{name}: ways to pay in {country.iso}",
                      flow.get("/choose", query_string={"countryIsoCode": country.iso},
                               headers={"HX-Request": "true"}))


def _buy(walk: Walk, transfer_type: str, *, to_the_end: bool = False, **choose: Any) -> None:
    """One purchase through every page: amount, quote, wallet, details, review, pay, status; to
    the end, a price under the minimum, a refused wallet, the status paid out and the receipt."""
    name = f"on-ramp {transfer_type} {choose}"
    flow = walk.start(Flow(walk.app, walk.client), name)
    corridor = {**CORRIDORS[transfer_type], **choose}
    asked = {**corridor, "network": "CELO", "asset": "USDT", "currency": "local"}
    walk.read(f"{name}: quote", flow.get("/quote", query_string={
        **asked, "amount": choose.get("amount") or AMOUNTS[corridor["countryIsoCode"]]},
        headers={"HX-Request": "true"}))
    if to_the_end:
        walk.read(f"{name}: quote under the minimum", flow.get(
            "/quote", query_string={**asked, "amount": "1"}, headers={"HX-Request": "true"}))
    page = walk.read(f"{name}: wallet", flow.follow(flow.choose(transfer_type, **choose)))
    if to_the_end:
        refused = walk.read(f"{name}: wallet refused", flow.post("/wallet", {"address": "0x123"}))
        assert "field--invalid" in refused.get_data(as_text=True)
    # A buyer of their own each time: the sandbox adds a buyer's orders up towards KYC levels.
    buyer = f"buyer{len(walk.pages)}@example.com"
    page = walk.read(f"{name}: after the wallet", flow.follow(flow.wallet(email=buyer)))
    if page.request.path.endswith("/details"):
        country = corridor["countryIsoCode"]
        details = ({"buyerBankAccountNumber": "62001122334"} if country == "ZA"
                   else {"phoneNumber": PHONES[country]})
        page = walk.read(f"{name}: review", flow.follow(flow.details(**details)))
    assert page.request.path.endswith("/review"), page.request.path
    pay = walk.read(f"{name}: pay", flow.follow(flow.create(page)))
    if transfer_type == "otp_stk_push":
        walk.read(f"{name}: pay after the code",
                  flow.follow(flow.post("/pay/otp", {"otp": transfer.SANDBOX_OTP})))
    elif 'action="' + flow.base + '/pay/confirm"' in pay.get_data(as_text=True):
        flow.post("/pay/confirm", {})
    walk.read(f"{name}: status", flow.get("/status"))
    if to_the_end:
        _paid_out(walk, flow, name)


def _paid_out(walk: Walk, flow: Flow, name: str) -> None:
    """The order's status once paid out (the upstream's minutes passed), and its receipt."""
    from .test_receipts import receipt_link

    advance(walk.app, 600)
    # Its webhooks stored and processed meanwhile (the dispatcher's thread): the page's read of
    # the order is then the one stored.
    wait_for_stored_status(walk.app, flow.session.order_id, "payout_successful")
    status = walk.read(f"{name}: status, paid out", flow.get("/status"))
    assert 'data-status="payout_successful"' in status.get_data(as_text=True), name
    walk.read(f"{name}: receipt",
              walk.client.get(receipt_link(status.get_data(as_text=True)).replace("&amp;", "&")))


def _carrier(app: Flask, country: str, payout: str) -> str:
    with app.app_context():
        return get_state().flows["offramp"].catalog().channel(country, payout).carriers[0].code


def _sell(walk: Walk, payout: dict[str, str], choose: dict[str, str], *,
          to_the_end: bool = False) -> None:
    """One sale: amount, payout details, payee check; to the end, wallet, review, deposit and
    status too."""
    from .test_offramp import Sale

    name = f"off-ramp {choose}"
    sale = Sale(walk.app, walk.client)
    walk.start(sale, name)
    walk.read(f"{name}: payout", sale.landed(sale.choose(**choose), "payout"))
    details = sale.post("/payout", payout) if payout else sale.payout()
    payee = walk.read(f"{name}: payee", sale.landed(details, "payee"))
    if not to_the_end:
        return
    confirm = {"confirm": "yes"} if "payee-name" in payee.get_data(as_text=True) else {}
    walk.read(f"{name}: wallet", sale.landed(sale.payee(**confirm), "wallet"))
    review = walk.read(f"{name}: review",
                       sale.landed(sale.post("/wallet", {"address": EVM_ADDRESS}), "review"))
    walk.read(f"{name}: deposit", sale.landed(sale.create(review), "deposit"))
    walk.read(f"{name}: status", sale.get("/status"))
    sale.post("/deposit/sent", {"tx_hash": "0x" + "5e" * 32})
    _paid_out(walk, sale, name)


def _verify(walk: Walk) -> None:
    """The identity step through every state a user sees: the documents, a form with photos to
    take, the page waiting for the phone, under review, and refused with the partner's reason."""
    from checkout.sandbox.kyc import REASON_DETAILS_MISMATCH

    from .test_kyc import PERSON, alien_card, reject_under_review, to_kyc

    name = "identity"
    walk.app.config["CHECKOUT_KYC_POLL_SECONDS"] = 0    # each look asks the partner again
    flow = Flow(walk.app, walk.client)
    walk.read(f"{name}: documents", to_kyc(flow, "15000", locale=walk.language))
    form = walk.read(f"{name}: form with photos", flow.get("/kyc?document=ALIEN_CARD"))
    handoff = re.search(r'href="([^"]*handoff=1[^"]*)"', form.get_data(as_text=True))
    assert handoff, form.get_data(as_text=True)[:3000]
    states = {"waiting for the phone": (walk.client.get(handoff.group(1).replace("&amp;", "&")),
                                        "kyc-handoff-waiting")}
    flow.landed(flow.post("/kyc", alien_card(**PERSON)), "kyc")
    states["under review"] = flow.get("/kyc"), "kyc-pending"
    reject_under_review(walk.app, REASON_DETAILS_MISMATCH)
    states["refused, with the partner's reason"] = flow.get("/kyc"), "kyc-rejected"
    for state, (page, shown) in states.items():
        assert f'data-testid="{shown}"' in walk.read(f"{name}: {state}", page).get_data(
            as_text=True), state


@pytest.mark.parametrize("language", LANGUAGES)
def test_no_page_of_either_flow_shows_the_upstreams_english(app, client, language):
    walk = Walk(app, client, language)
    walk.countries(walk.start(Flow(app, client), "on-ramp"), "on-ramp")
    for transfer_type in CORRIDORS:
        _buy(walk, transfer_type)
    _buy(walk, "manual", paymentChannel="mobile_money")             # a wallet's number to pay
    _buy(walk, "manual", countryIsoCode="ZA", amount="500")         # the buyer's own account
    _buy(walk, "manual", to_the_end=True)
    fraction = "5000.50" if language == "sw" else "5000,50"         # as the language types it
    _buy(walk, "ussd", amount=fraction)                             # whole naira: a warning
    # The amount as it was meant, in the language's way of writing money.
    with walk.app.test_request_context():
        meant = format_currency(Decimal("5000.5"), "NGN", locale=babel_locale(language))
    review = walk.pages[f"on-ramp ussd {{'amount': '{fraction}'}}: review"]
    assert meant in review, (meant, language)
    from .test_offramp import Sale

    walk.countries(walk.start(Sale(app, client), "off-ramp"), "off-ramp")
    _sell(walk, {}, {}, to_the_end=True)                                        # Nigerian bank
    _sell(walk, {"phoneNumber": "0712345678"},
          {"countryIsoCode": "KE", "paymentChannel": "airtime", "amount": "500",
           "carrierCode": _carrier(app, "KE", "airtime")}, to_the_end=True)   # a mobile network
    _sell(walk, {"shortCode": "888880", "accountNumber": "12345"},
          {"countryIsoCode": "KE", "paymentChannel": "paybill", "amount": "1000"})
    _sell(walk, {"phoneNumber": "0241234567"},
          {"countryIsoCode": "GH", "paymentChannel": "mobile_money", "amount": "100",
           "carrierCode": _carrier(app, "GH", "mobile_money")})
    _verify(walk)

    whole, runs = english_of_the_sandbox()
    assert "Mobile network" in whole and "Bank transfer to a Nigerian account" in runs
    ours, our_runs = english_of_the_checkout(language)
    assert "Continue" in ours and "Send for verification" in our_runs
    seen, ours_seen = [], []
    for name, html in walk.pages.items():
        assert f'<html lang="{language}">' in html or "<html" not in html, name
        assert "<html" not in html or not dangling(html), (name, dangling(html))
        # A refusal's reason keeps the partner's own words below it, as sent (marked English):
        # what the user quotes to them.
        html = re.sub(r'<details class="as-sent">.*?</details>', "", html, flags=re.S)
        assert '<span lang="en">' not in html, (name, re.findall(r'<span lang="en">[^<]*', html))
        reader = _Text()
        reader.feed(html)
        for text in reader.read:
            seen += [(name, text) for english in whole if text == english]
            seen += [(name, text) for english in runs if english in text]
            ours_seen += [(name, text) for english in ours if text == english]
            ours_seen += [(name, text) for english in our_runs if english in text]
    assert not seen, seen
    assert not ours_seen, ours_seen
    assert len(walk.pages) > 50


def test_portuguese_pages_are_written_as_portugal_mozambique_and_angola_write(app, client):
    """The catalogue's words, and what Babel writes among them (country names, dates, money),
    in one Portuguese: never "Quênia" in a list beside "Introduza"."""
    walk = Walk(app, client, "pt")
    walk.countries(walk.start(Flow(app, client), "on-ramp"), "on-ramp")
    _buy(walk, "manual")
    read = {}
    for name, html in walk.pages.items():
        reader = _Text()
        reader.feed(html)
        read[name] = " ".join(reader.read)
    everything = " ".join(read.values())
    assert "Quénia" in read["on-ramp: amount"] and "Hora de Nigéria" in everything
    assert "5 000,00 NGN" in everything                  # the reader reads no-break spaces as spaces
    found = [(name, brazilian_forms(text)) for name, text in read.items() if brazilian_forms(text)]
    assert not found, found
