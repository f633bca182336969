"""Receipts: a page per order of either flow, all of it read from the upstream's order, behind a
signed link that expires; and the order view's address expiring by the same rule."""
from __future__ import annotations

import json
import re
import time
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from html import unescape
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask import Flask
from joserfc import jwe
from sqlalchemy import delete, update

from checkout import Checkout
from checkout.addresses import eip55_checksum
from checkout.capabilities import (
    ALGORITHMS,
    ORDER_VIEW,
    _key,
    order_view_token,
    receipt_link_of,
    receipt_open,
    receipt_token,
)
from checkout.errors import UpstreamTimeout
from checkout.i18n import format_crypto, format_money
from checkout.state import get_state
from checkout.store.tables import orders_table, sessions_table
from checkout.webhooks.store import utcnow
from tests.conftest import make_app

from ..support.waiting import wait_for
from ..upstream_spy import UpstreamSpy
from .conftest import (
    EVM_ADDRESS,
    Flow,
    move_sandbox_order,
    order_reads,
    sandbox_order,
)
from .test_assets import BOTH, asset_addresses, decoded
from .test_offramp import Sale

DAY = 86400
TX = "0x" + "5e" * 32

def settle(app: Flask, order_id: str) -> Any:
    """Run the sandbox's order to its end (paid out), as the upstream would in time."""
    from checkout.sandbox.state import current

    with app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        return current().orders.run_to_rest(order_id)


def stop_the_order(app: Flask, order_id: str) -> None:
    """Cancel the sandbox's timers of the order: it stays where a test puts it."""
    from checkout.sandbox.state import current

    with app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        store = current().orders
        with store.lock:
            for handle in store.get(order_id).timers.values():
                store.scheduler.cancel(handle)


def receipt_link(page_html: str) -> str:
    found = re.search(r'href="([^"]+)"[^>]*data-testid="receipt-link"', page_html)
    assert found, page_html[:3000]
    return found.group(1)


def shown(html: str, testid: str) -> str:
    found = re.search(rf'data-testid="{testid}">([^<]+)<', html)
    assert found, (testid, html[:4000])
    return found.group(1)


def row(html: str, label: str) -> str:
    found = re.search(rf"<dt>{re.escape(label)}</dt>\s*<dd[^>]*>([^<]+)</dd>", html)
    assert found, (label, html[:4000])
    return found.group(1)


def paid_on_ramp(flow: Flow) -> str:
    """An on-ramp order paid and paid out; its status page's HTML."""
    flow.to_pay("manual")
    flow.follow(flow.post("/pay/confirm"))
    settle(flow.app, flow.session.order_id)
    return flow.get("/status").get_data(as_text=True)


def test_an_on_ramp_receipt_is_the_orders_own_account_of_it(flow, client, app):
    status = paid_on_ramp(flow)
    order = sandbox_order(app, flow.session.order_id).data
    page = client.get(receipt_link(status))
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert page.headers["Cache-Control"] == "no-store"
    with app.test_request_context():
        money = lambda key: format_money(order[key], "NGN", "en_NG")  # noqa: E731
        assert shown(html, "pay-amount") == money("localCurrencyAmount")
        assert shown(html, "receive-amount") == format_crypto(order["amountCrypto"], "USDT")
        assert row(html, "Service fee") == money("feeAmountLocalCurrencyService")
        assert row(html, "Payment partner fee") == money("feeAmountLocalCurrencyPartner")
        assert row(html, "Network fee (gas)") == money("gasAmountLocalCurrency")
    assert shown(html, "order-reference") == flow.session.order_id
    assert shown(html, "receipt-status") == "Done! Your crypto has been sent to your wallet."
    # The order's own transaction, with its explorer; the wallet as EIP-55 writes it.
    assert shown(html, "receipt-tx-hash") == order["hash"]
    assert f'href="https://celo-sepolia.blockscout.com/tx/{order["hash"]}"' in html
    assert shown(html, "receipt-wallet") == EVM_ADDRESS
    # The time on the user's clock (Nigeria's), in the page's language.
    assert "(Nigeria Time)" in shown(html, "receipt-date")
    # A page to keep: no htmx, no checkout.js; only the print button's script.
    scripts = re.findall(r'<script src="([^"]+)"', html)
    assert len(scripts) == 1 and scripts[0].endswith("/receipt.js")
    assert "hx-" not in html and "csrf" not in html and flow.session_id not in html


def test_the_fees_are_the_orders_not_the_quotes(flow, client, app):
    """What the upstream recorded on the order is what the receipt says, even where the quote the
    user saw said otherwise."""
    flow.to_pay("manual")
    sandbox_order(app, flow.session.order_id).data["feeAmountLocalCurrencyService"] = 81.25
    flow.follow(flow.post("/pay/confirm"))
    settle(app, flow.session.order_id)
    status = flow.get("/status").get_data(as_text=True)
    html = client.get(receipt_link(status)).get_data(as_text=True)
    assert row(html, "Service fee") == "₦81.25"


def test_an_off_ramp_receipt_masks_the_payout_details_to_their_last_four(app, client):
    sale = Sale(app, client)
    sale.to_deposit()
    sale.post("/deposit/sent", {"tx_hash": TX})
    settle(app, sale.session.order_id)
    order = sandbox_order(app, sale.session.order_id, "offramp").data
    html = client.get(receipt_link(sale.get("/status").get_data(as_text=True))).get_data(
        as_text=True)
    assert "0123456789" not in html and "•••• 6789" in html
    assert "First Bank of Nigeria" in html                  # a choice from the partner's list
    with app.test_request_context():
        assert shown(html, "send-amount") == format_crypto(order["cashout"]["cryptoAmount"],
                                                           "USDC")
        assert shown(html, "receive-amount") == format_money(
            order["cashout"]["localCurrencyAmount"], "NGN", "en_NG")
        assert row(html, "Exchange rate") == "1 USD = " + format_money(
            order["exchangeRate"], "NGN", "en_NG")
    wallets = re.findall(r'data-testid="receipt-wallet">([^<]+)<', html)
    # Both in EIP-55's mixed case, the deposit address too (the upstream gives it in lower case).
    assert wallets == [EVM_ADDRESS, eip55_checksum(order["toAddress"])]
    assert shown(html, "receipt-tx-hash") == order["hash"]
    assert "Bank account" in row(html, "Payout")


# The payout rows of the receipt and of the status page, as a user reads them in each language.
PAYOUT_ROWS = {
    "en": {"bank": ["Bank", "Bank account number"], "airtime": ["Mobile network", "Phone number"]},
    "fr": {"bank": ["Banque", "Numéro de compte"],
           "airtime": ["Opérateur mobile", "Numéro de téléphone"]},
    "sw": {"bank": ["Benki", "Nambari ya akaunti"],
           "airtime": ["Mtandao wa simu", "Nambari ya simu"]},
    "pt": {"bank": ["Banco", "Número da conta"],
           "airtime": ["Operadora móvel", "Número de telemóvel"]},
}


def sale_to_deposit(app: Flask, client: Any, language: str, payout: str) -> Sale:
    """A sale in ``language`` up to its deposit, paid to a Nigerian bank account or airtime."""
    sale = Sale(app, client)
    sale.start(locale=language)
    if payout == "bank":
        sale.to_deposit()
        return sale
    with app.app_context():
        carriers = get_state().flows["offramp"].catalog().channel("NG", "airtime").carriers
    sale.landed(sale.choose(paymentChannel="airtime", amount="2000",
                            carrierCode=carriers[0].code), "payout")
    sale.landed(sale.post("/payout", {"phoneNumber": "08012345678"}), "payee")
    sale.landed(sale.payee(confirm="yes"), "wallet")
    review = sale.landed(sale.post("/wallet", {"address": EVM_ADDRESS}), "review")
    sale.landed(sale.create(review), "deposit")
    return sale


def payout_labels(html: str) -> list[str]:
    """The labels of the receipt's payout rows, but the first (the way it is paid)."""
    found = re.search(r'data-testid="receipt-payout">(.*?)</dl>', html, re.S)
    assert found, html[:4000]
    return [unescape(label) for label in re.findall(r"<dt>(.*?)</dt>", found.group(1))][1:]


@pytest.mark.parametrize("payout", ["bank", "airtime"])
@pytest.mark.parametrize("language", ["en", "fr", "sw", "pt"])
def test_the_receipt_names_the_payout_rows_as_the_status_page_does(app, client, language, payout):
    """In the page's language, by the same code: not the partner's English labels."""
    sale = sale_to_deposit(app, client, language, payout)
    status = sale.get("/status").get_data(as_text=True)
    html = client.get(receipt_link(status)).get_data(as_text=True)
    assert f'<html lang="{language}">' in html
    expected = PAYOUT_ROWS[language][payout]
    assert payout_labels(html) == expected
    for label in expected:
        assert f"<dt>{label}</dt>" in unescape(status)


def test_each_payout_detail_is_named_by_its_own_field_whatever_the_order():
    """The spec does not say the two lists of an order's fields come in the same order: a value
    shown as given names its field, a choice takes the name left over."""
    from checkout.flows.offramp import named_fields
    from checkout.upstream.types import OfframpOrder

    order = OfframpOrder.from_json({
        "_id": "a" * 24,
        "requiredFields": {"bankAccountNumber": "0123456789", "bankCode": "011:02"},
        "offerRequiredFields": [
            {"label": "Bank", "type": "enum", "value": "First Bank of Nigeria"},
            {"label": "Bank account number", "type": "string", "value": "0123456789"},
            {"label": "Something new", "type": "string", "value": "shown otherwise"}]})
    assert [name for name, _ in named_fields(order)] == ["bankCode", "bankAccountNumber", None]


# -- orders that did not deliver --------------------------------------------------------------

def force(client: Any, app: Flask, order_id: str, outcome: str) -> None:
    """The sandbox's forced outcome for the rest of the order's life (its console's button)."""
    answer = client.post(f"{app.config['CHECKOUT_URL_PREFIX']}/sandbox/orders/{order_id}/outcome",
                         json={"outcome": outcome})
    assert answer.status_code == 200, answer.get_data(as_text=True)


def ended_sale(app: Flask, client: Any, outcome: str, language: str = "en") -> tuple[Sale, str]:
    """A sale whose deposit was sent and that the sandbox ended with ``outcome``; the sale and
    its receipt's address, once the checkout has the order's last webhook."""
    sale = Sale(app, client)
    sale.start(locale=language)
    sale.to_deposit()
    order_id = sale.session.order_id
    force(client, app, order_id, outcome)
    sale.post("/deposit/sent", {"tx_hash": TX})
    settle(app, order_id)
    wait_for_webhooks(app, order_id)
    return sale, receipt_link(sale.get("/status").get_data(as_text=True))


def sender_deliveries(app: Flask, order_id: str) -> list[Any]:
    """The webhooks the sandbox has sent of the order."""
    with app.app_context():
        sender = get_state().sandbox.extensions["sandbox"].webhooks
    return [d for d in sender.deliveries() if d.order_id == order_id]


def wait_for_webhooks(app: Flask, order_id: str) -> None:
    """Until the checkout has received (and stored) every webhook the sandbox sent of the
    order, the one of its last status among them."""
    from checkout.order_status import webhook_status_of

    last = webhook_status_of("offramp", sandbox_order(app, order_id, "offramp").status)

    def delivered() -> bool:
        sent = sender_deliveries(app, order_id)
        statuses = {json.loads(d.body)["data"]["order"]["status"] for d in sent}
        return last in statuses and all(d.state == "succeeded" for d in sent)

    wait_for(delivered)


def wait_for_processed(app: Flask, order_id: str, count: int) -> None:
    """Until the checkout has processed ``count`` webhooks of the order (its dispatcher's
    thread applies each after the receiver stored it)."""
    from sqlalchemy import select

    from checkout.store.tables import events_table

    with app.app_context():
        engine = get_state().engine

    def processed() -> bool:
        with engine.connect() as conn:
            outcomes = conn.execute(select(events_table.c.outcome)
                                    .where(events_table.c.order_id == order_id)).scalars().all()
        return len(outcomes) >= count and None not in outcomes

    wait_for(processed)


def ended_purchase(flow: Flow, outcome: str) -> str:
    """An on-ramp order the user said they paid, that the sandbox ended with ``outcome``; its
    receipt's address."""
    flow.to_pay("manual")
    force(flow.client, flow.app, flow.session.order_id, outcome)
    flow.follow(flow.post("/pay/confirm"))
    settle(flow.app, flow.session.order_id)
    return receipt_link(flow.get("/status").get_data(as_text=True))


def reads_like_a_payout(html: str) -> list[str]:
    """What a receipt of an order that did not deliver must not say (in any language: by what
    marks the rows)."""
    marks = ['data-testid="receipt-amounts"', 'data-testid="receive-amount"',
             'data-testid="pay-amount"', 'data-testid="receipt-payout"', "You receive",
             "You get", "Paid to", "Service fee", "Payment partner fee"]
    return [mark for mark in marks if mark in html]


def test_a_refunded_sale_s_receipt_says_what_went_back_where_and_by_which_transaction(app,
                                                                                     client):
    sale, link = ended_sale(app, client, "refund")
    order = sandbox_order(app, sale.session.order_id, "offramp")
    assert order.status == "refunded"
    html = client.get(link).get_data(as_text=True)
    assert reads_like_a_payout(html) == []
    assert unescape(shown(html, "receipt-outcome")) == \
        "Refunded: nothing was paid out, and your crypto was sent back to your wallet."
    with app.test_request_context():
        sent_back = format_crypto(order.data["cashout"]["cryptoAmount"], "USDC")
    assert row(html, "Refund") == sent_back
    # Back to the wallet it came from, by the refund's own transaction, labelled as such.
    assert re.search(r"<dt>Sent back to</dt><dd><code data-testid=\"refund-address\">"
                     + EVM_ADDRESS, html)
    refund_hash = order.data["refundHash"]
    assert re.search(r"<dt>Refund transaction</dt><dd><code data-testid=\"refund-tx-hash\">"
                     + refund_hash, html)
    assert f'href="https://amoy.polygonscan.com/tx/{refund_hash}"' in html
    # The user's own deposit stays beside the deposit address; the refund's is not there.
    chain = html.split('data-testid="receipt-chain"', 1)[1]
    assert shown(chain, "receipt-tx-hash") == TX and refund_hash not in chain


def test_a_receipt_names_the_refund_of_what_arrived_not_what_was_quoted(app, client):
    sale, link = ended_sale(app, client, "underpayment")
    order = sandbox_order(app, sale.session.order_id, "offramp")
    html = client.get(link).get_data(as_text=True)
    assert reads_like_a_payout(html) == []
    with app.test_request_context():
        half = format_crypto(Decimal(str(order.data["cashout"]["cryptoAmount"])) / 2, "USDC")
    assert row(html, "Refund") == half


def test_the_refund_is_told_even_when_a_status_page_read_the_refunded_order_first(app, client):
    """The status page stored "refunded" from its own read of the order (which has no refund
    leg); the webhook of the same moment then changes nothing in the stored order, but what it
    tells of the refund is still on the receipt."""
    from checkout import order_status
    from checkout.sandbox.orders import fake_transaction_hash
    from checkout.sandbox.state import current

    sale = Sale(app, client)
    sale.start()
    sale.to_deposit()
    order_id = sale.session.order_id
    sale.post("/deposit/sent", {"tx_hash": TX})
    stop_the_order(app, order_id)
    for status in ("offramp_failed", "refunding"):
        move_sandbox_order(app, order_id, status, "offramp")
    # Their webhooks processed first: one landing while the page stores its read would make
    # the page's read the older picture, and the late webhook below the news (a loaded run).
    wait_for_webhooks(app, order_id)
    wait_for_processed(app, order_id, len(sender_deliveries(app, order_id)))
    sandbox_order(app, order_id, "offramp").data["refundHash"] = fake_transaction_hash("POLYGON")
    move_sandbox_order(app, order_id, "refunded", "offramp", webhook=False)
    link = receipt_link(sale.get("/status").get_data(as_text=True))     # reads it: refunded
    with app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        store = current().orders
        with store.lock:
            store._announce(store.get(order_id))    # its webhook, late, of the same updatedAt
    wait_for_webhooks(app, order_id)
    wait_for_processed(app, order_id, len(sender_deliveries(app, order_id)))
    with app.app_context():
        kept = order_status.get(get_state().engine, order_id)
    assert kept is not None and kept.status == "refund_successful"
    assert kept.summary is None or kept.summary["status"] != "refund_successful"
    html = client.get(link).get_data(as_text=True)
    refund_hash = sandbox_order(app, order_id, "offramp").data["refundHash"]
    assert shown(html, "refund-tx-hash") == refund_hash


@pytest.mark.parametrize(("language", "outcome", "label"), [
    ("fr", "Remboursé\u00a0: rien n’a été versé, et vos cryptos ont été renvoyées sur votre "
           "portefeuille.", "Transaction de remboursement"),
    ("sw", "Imerejeshwa: hakuna kilicholipwa, na crypto yako imerejeshwa kwenye pochi yako.",
           "Muamala wa marejesho"),
    ("pt", "Reembolsado: nada foi pago, e a sua cripto foi devolvida para a sua carteira.",
           "Transação de reembolso"),
])
def test_a_refunded_sale_s_receipt_in_the_user_s_language(app, client, language, outcome, label):
    _, link = ended_sale(app, client, "refund", language)
    html = client.get(link).get_data(as_text=True)
    assert f'<html lang="{language}">' in html
    assert reads_like_a_payout(html) == []
    assert unescape(shown(html, "receipt-outcome")) == outcome
    assert f"<dt>{label}</dt>" in html and 'data-testid="refund-tx-hash"' in html


@pytest.mark.parametrize(("outcome", "said", "goes_to"), [
    ("refund_failed", "Nothing was paid out, and your crypto has not been sent back yet.",
     "A refund goes to"),
    ("transaction_failed", "Your transaction failed on the network: no crypto arrived and "
                           "nothing was paid out.", None),
    ("deposit_invalid", "Your transaction was not accepted: nothing was paid out.", None),
    ("payout_failed", "The payout failed: nothing has been paid out so far.", None),
])
def test_a_failed_sale_s_receipt_says_what_happened(app, client, outcome, said, goes_to):
    _, link = ended_sale(app, client, outcome)
    html = client.get(link).get_data(as_text=True)
    assert reads_like_a_payout(html) == []
    assert unescape(shown(html, "receipt-outcome")) == said
    assert 'data-testid="refund-tx-hash"' not in html       # nothing was sent back (yet)
    if goes_to:
        assert re.search(rf"<dt>{goes_to}</dt><dd><code data-testid=\"refund-address\">"
                         + EVM_ADDRESS, html)
    else:
        assert 'data-testid="receipt-refund"' not in html


@pytest.mark.parametrize(("outcome", "said"), [
    ("payout_failed", "Sending your crypto failed: none was sent to your wallet."),
    ("deposit_invalid", "Your payment was not accepted: no crypto was sent."),
    ("expire", "No payment arrived before this order expired: no crypto was sent."),
])
def test_a_failed_purchase_s_receipt_says_what_happened(flow, client, outcome, said):
    html = client.get(ended_purchase(flow, outcome)).get_data(as_text=True)
    assert reads_like_a_payout(html) == []
    assert unescape(shown(html, "receipt-outcome")) == said


def test_a_failed_purchase_s_receipt_in_french(flow, client):
    flow.start(locale="fr")
    html = client.get(ended_purchase(flow, "deposit_invalid")).get_data(as_text=True)
    assert '<html lang="fr">' in html and reads_like_a_payout(html) == []
    assert unescape(shown(html, "receipt-outcome")) == \
        "Votre paiement n’a pas été accepté\u00a0: aucune crypto n’a été envoyée."


def test_the_receipt_outlives_the_session(flow, client, app):
    link = receipt_link(paid_on_ramp(flow))
    order_id = flow.session.order_id
    with app.app_context():
        with get_state().engine.begin() as conn:
            conn.execute(delete(sessions_table))
    assert client.get(f"{app.config['CHECKOUT_URL_PREFIX']}/s/{flow.session_id}/status"
                      ).status_code == 404
    page = client.get(link)
    assert page.status_code == 200 and order_id in page.get_data(as_text=True)


def test_the_receipt_shows_the_order_as_last_read_while_the_upstream_is_down(flow, client, app,
                                                                          monkeypatch):
    """An order not final yet, whose read is due (the max age here is 0): the upstream does not
    answer it."""
    flow.to_pay("manual")
    link = receipt_link(flow.get("/status").get_data(as_text=True))
    with app.app_context():
        upstream = get_state().upstream

    def down(**kwargs: Any) -> Any:
        raise UpstreamTimeout("read timed out")

    monkeypatch.setattr(upstream, "onramp_order", down)
    html = client.get(link).get_data(as_text=True)
    note = re.search(r"as we last read them, at ([^<]+)\.</p>", html)
    # On the user's clock, as the receipt's date is (not UTC beside it).
    assert note and note.group(1).endswith("(Nigeria Time)"), html[:3000]
    assert shown(html, "receipt-date").endswith("(Nigeria Time)")
    assert shown(html, "order-reference") == flow.session.order_id
    assert shown(html, "pay-amount").startswith("₦")


# -- what reloading receipts costs the upstream ---------------------------------------------------

ADDRESSES = ("198.51.100.7", "198.51.100.8", "203.0.113.20")


def reload(client: Any, link: str, times: int) -> None:
    """``link`` opened ``times`` times, from a few addresses in turn."""
    for n in range(times):
        page = client.get(link, environ_base={"REMOTE_ADDR": ADDRESSES[n % len(ADDRESSES)]})
        assert page.status_code == 200, page.status_code


def test_a_final_order_s_receipt_never_reads_it_again(flow, client, app, monkeypatch):
    from checkout import order_status
    from checkout.webhooks.orders import FINAL_STATUSES, webhook_status_of

    link = receipt_link(paid_on_ramp(flow))
    # Its whole order read paid out: by the status page, or by the dispatcher's read for a
    # webhook of the same moment (the page then shows what that read stored, on a loaded machine).
    def read_final() -> bool:
        with app.app_context():
            kept = order_status.get(get_state().engine, flow.session.order_id)
        return kept is not None and webhook_status_of(
            "onramp", (kept.full_order or {}).get("status")) in FINAL_STATUSES

    wait_for(read_final)
    reads = order_reads(app, monkeypatch)
    reload(client, link, 12)
    assert reads == []


def test_receipt_reloads_read_an_order_at_most_once_per_max_age(flow, client, app, monkeypatch):
    monkeypatch.setitem(app.config, "CHECKOUT_WEBHOOK_FETCH_ORDERS", False)    # only pages read
    flow.to_pay("manual")
    order_id = flow.session.order_id
    link = receipt_link(flow.get("/status").get_data(as_text=True))
    monkeypatch.setitem(app.config, "CHECKOUT_STATUS_MAX_AGE", 30)
    reads = order_reads(app, monkeypatch)
    reload(client, link, 12)
    assert reads == []                  # the status page read it a moment ago
    with app.app_context():
        with get_state().engine.begin() as conn:
            conn.execute(update(orders_table).where(orders_table.c.order_id == order_id)
                         .values(fetched_at=utcnow() - timedelta(seconds=31)))
    reload(client, link, 12)
    assert reads == [order_id]          # due again: one read, stored for the others


def test_the_upstream_refusing_one_order_s_read_leaves_the_other_receipts_alone(app, client):
    """A 429 for one order's read: that receipt shows its order as last read; every other order's
    receipt is still read (the wait is that order's, not the endpoint's)."""
    spy = UpstreamSpy(app)
    links = {}
    for _ in range(2):
        each = Flow(app, client)
        each.to_pay("manual")
        links[each.session.order_id] = receipt_link(each.get("/status").get_data(as_text=True))
    refused, other = links
    spy.too_many[f"/api/onramp/order?orderId={refused}"] = "600"
    html = client.get(links[refused]).get_data(as_text=True)
    assert "as we last read them" in html and shown(html, "order-reference") == refused
    for _ in range(2):
        html = client.get(links[other]).get_data(as_text=True)
        assert "as we last read them" not in html and shown(html, "order-reference") == other
    assert spy.count(f"/api/onramp/order?orderId={other}") >= 2


def all_told(app: Flask) -> None:
    """The app's background processing stopped, and every webhook the sandbox sent delivered
    and processed: nothing moves the stored order after but the test."""
    from checkout.webhooks.dispatcher import process_pending

    app.config["CHECKOUT_WEBHOOK_BACKGROUND"] = False
    with app.app_context():
        state = get_state()
    state.dispatcher.stop()
    assert state.sandbox.extensions["sandbox"].webhooks.drain(10)
    process_pending(app)


def last_changed(app: Flask, order_id: str, days_ago: float, **stored: Any) -> None:
    """The stored order's last change (its status's time) ``days_ago`` days ago (and the row's
    other columns as given)."""
    with app.app_context():
        with get_state().engine.begin() as conn:
            conn.execute(update(orders_table).where(orders_table.c.order_id == order_id)
                         .values(status_updated_at=utcnow() - timedelta(days=days_ago),
                                 **stored))


def test_an_expired_or_altered_link_is_the_friendly_not_found_page(flow, client, app):
    flow.to_pay("manual")
    order_id, prefix = flow.session.order_id, app.config["CHECKOUT_URL_PREFIX"]
    all_told(app)
    with app.test_request_context():
        link = receipt_token(order_id, "onramp")
        view = order_view_token(flow.session_id)
    last_changed(app, order_id, 89)
    assert client.get(f"{prefix}/r/{link}").status_code == 200
    altered = link[:-6] + ("A" if link[-6] != "A" else "B") + link[-5:]
    for token in (altered, view, "x" * 40, "x" * 600):
        page = client.get(f"{prefix}/r/{token}")
        html = page.get_data(as_text=True)
        assert page.status_code == 404 and "Receipt not found" in html, token
        assert order_id not in html
    # Nor does a receipt's token open the order view.
    assert client.get(f"{prefix}/o/{link}").status_code == 404
    last_changed(app, order_id, 91)                     # its time is over, the link's too
    page = client.get(f"{prefix}/r/{link}")
    assert page.status_code == 404 and order_id not in page.get_data(as_text=True)


def test_a_receipt_s_lifetime_is_fixed_when_its_order_is_final_however_often_it_is_minted(
        flow, client, app):
    """Every view of the status page makes a new link: none opens the receipt past 90 days after
    the order was done; one made long before it was done still opens until then."""
    status = paid_on_ramp(flow)
    order_id, prefix = flow.session.order_id, app.config["CHECKOUT_URL_PREFIX"]
    all_told(app)
    with app.test_request_context():
        made_long_ago = receipt_token(order_id, "onramp", now=time.time() - 100 * DAY)
    # Paid out 89 days ago, as the checkout has it (the sandbox's statuses of one millisecond
    # may have left the row a status short: webhooks of one time after the first are stale).
    last_changed(app, order_id, 89, status="payout_successful")
    for link in (receipt_link(status), made_long_ago):
        assert client.get(link if link.startswith("/") else f"{prefix}/r/{link}"
                          ).status_code == 200
    last_changed(app, order_id, 91)
    minted_now = receipt_link(flow.get("/status").get_data(as_text=True))
    for link in (minted_now, receipt_link(status), f"{prefix}/r/{made_long_ago}"):
        page = client.get(link)
        assert page.status_code == 404 and "Receipt not found" in page.get_data(as_text=True)


@pytest.mark.parametrize(("language", "title"), [("fr", "Reçu introuvable"),
                                               ("sw", "Risiti haikupatikana"),
                                               ("pt", "Recibo não encontrado")])
def test_an_expired_link_says_so_in_the_language_it_was_made_in(app, client, language, title):
    """Not the browser's: the shop made the link in the user's language, and the browser may be
    set to another (a shared phone, a phone bought abroad)."""
    prefix = app.config["CHECKOUT_URL_PREFIX"]
    with app.test_request_context():
        expired = receipt_token("a" * 24, "onramp", language, now=time.time() - 91 * DAY)
    page = client.get(f"{prefix}/r/{expired}", headers={"Accept-Language": "en"})
    html = page.get_data(as_text=True)
    assert page.status_code == 404
    assert f'<html lang="{language}"' in html and title in html
    # Nothing of it can be read from an altered link: the browser's language, as before.
    altered = expired[:-6] + ("A" if expired[-6] != "A" else "B") + expired[-5:]
    html = client.get(f"{prefix}/r/{altered}", headers={"Accept-Language": "en"}).get_data(
        as_text=True)
    assert '<html lang="en"' in html and "Receipt not found" in html


def test_an_order_the_upstream_does_not_know_has_no_receipt(app, client):
    with app.test_request_context():
        token = receipt_token("0" * 24, "onramp")
        other_flow = receipt_token("0" * 24, "barter")
    for each in (token, other_flow):
        assert client.get(f"{app.config['CHECKOUT_URL_PREFIX']}/r/{each}").status_code == 404


def test_receipt_links_last_as_long_as_the_merchant_says(config, flow, app):
    config["CHECKOUT_RECEIPT_DAYS"] = 2
    short = make_app(config)
    with short.test_request_context():
        kept = receipt_token("a" * 24, "onramp", now=time.time() - 1.5 * DAY)
        gone = receipt_token("a" * 24, "onramp", now=time.time() - 2.5 * DAY)
    with short.app_context():
        link = receipt_link_of(kept)
        assert link is not None and receipt_open(link, None)        # no record: the link's
        assert not receipt_open(link, datetime.now(UTC) - timedelta(days=2.5))
        assert receipt_open(link, datetime.now(UTC) - timedelta(days=1.5))
        gone_link = receipt_link_of(gone)
        assert gone_link is not None and not receipt_open(gone_link, None)


@pytest.mark.parametrize("days", [0, -1, "90", True, None, float("inf"), float("nan"), 3651])
def test_a_receipt_lifetime_that_is_not_a_number_of_days_is_refused_at_start_up(config, days):
    from checkout.errors import ConfigurationError

    config["CHECKOUT_RECEIPT_DAYS"] = days
    with pytest.raises(ConfigurationError, match="CHECKOUT_RECEIPT_DAYS"):
        make_app(config)


def test_the_receipt_speaks_the_language_it_was_made_in_and_any_other_on_request(flow, client,
                                                                                app):
    flow.to_pay("manual")
    prefix = app.config["CHECKOUT_URL_PREFIX"]
    with app.test_request_context():
        token = receipt_token(flow.session.order_id, "onramp", "fr")
    french = client.get(f"{prefix}/r/{token}").get_data(as_text=True)
    assert '<html lang="fr">' in french and "Reçu" in french
    swahili = client.get(f"{prefix}/r/{token}?locale=sw").get_data(as_text=True)
    assert '<html lang="sw">' in swahili and "Risiti" in swahili
    assert f'href="{prefix}/r/{token}?locale=pt"' in french


def test_the_receipt_with_its_files_is_at_most_15_kb_on_the_wire(flow, client):
    """Headers and compressed bodies: the receipt on a phone's data plan."""
    link = receipt_link(paid_on_ramp(flow))
    page = client.get(link, headers=BOTH)
    responses = [page] + [client.get(address, headers=BOTH)
                          for address in asset_addresses(decoded(page).decode())]
    assert all(r.status_code == 200 for r in responses)
    assert len(responses) == 5          # the page, its two stylesheets, its script, its icon
    wire = sum(len(r.data) + sum(len(k) + len(v) + 4 for k, v in r.headers.items())
               for r in responses)
    assert wire <= 15 * 1024, wire


def test_the_order_view_address_expires_like_a_receipt(flow, client, app):
    flow.to_pay("manual")
    prefix = app.config["CHECKOUT_URL_PREFIX"]
    with app.test_request_context():
        fresh = order_view_token(flow.session_id, now=time.time() - 89 * DAY)
        expired = order_view_token(flow.session_id, now=time.time() - 91 * DAY)
        # One made before addresses expired: the session id alone (it ends with its session).
        legacy = jwe.encrypt_compact({"alg": "dir", "enc": "A256GCM"}, flow.session_id.encode(),
                                     _key(app, ORDER_VIEW), algorithms=ALGORITHMS)
    assert client.get(f"{prefix}/o/{fresh}").status_code == 200
    assert client.get(f"{prefix}/o/{legacy}").status_code == 200
    gone = client.get(f"{prefix}/o/{expired}")
    assert gone.status_code == 404 and "Checkout not found" in gone.get_data(as_text=True)


def test_the_order_view_links_to_the_receipt(flow, client, app):
    flow.to_pay("manual")
    with app.test_request_context():
        view = order_view_token(flow.session_id)
    html = client.get(f"{app.config['CHECKOUT_URL_PREFIX']}/o/{view}").get_data(as_text=True)
    page = client.get(receipt_link(html).replace("&amp;", "&"))
    assert page.status_code == 200
    assert flow.session.order_id in page.get_data(as_text=True)


def test_the_merchant_makes_receipt_links_for_its_own_emails(config, flow, app, client):
    flow.to_pay("manual")
    order_id = flow.session.order_id
    with app.app_context():                       # no request: a mailer's job, a CLI
        link = Checkout.receipt_url(order_id, "onramp", "pt")
        with pytest.raises(ValueError):
            Checkout.receipt_url(order_id, "barter")
    # Absolute on the address the app is configured with (here its SERVER_NAME).
    assert link.startswith(f"http://{app.config['SERVER_NAME']}/checkout/r/"), link
    page = client.get(urlsplit(link).path)
    assert page.status_code == 200 and '<html lang="pt">' in page.get_data(as_text=True)
    config["CHECKOUT_PUBLIC_URL"] = "https://pay.shop.example"
    public = make_app(config)
    with public.app_context():
        assert Checkout.receipt_url(order_id, "offramp").startswith(
            "https://pay.shop.example/checkout/r/")


def test_a_merchant_funded_payout_s_receipt_speaks_of_the_shop_s_funds(app, client):
    """No session to ask: the receipt knows from the order that the user sent nothing."""
    sale = Sale(app, client)
    sale.start(paymentType="VIRTUAL_WALLET", countryIsoCode="KE", paymentChannel="mobile_money",
               network="CELO", asset="USDT", amount="1500", currency="local",
               address=EVM_ADDRESS, lock=["amount", "currency"])
    sale.landed(sale.post("/payout", {"phoneNumber": "0712345678"}), "payee")
    review = sale.landed(sale.payee(confirm="yes"), "review")
    status = sale.landed(sale.create(review), "status").get_data(as_text=True)
    # The payout failed and the shop's funds went back (held there: the sandbox's clock stopped).
    stop_the_order(app, sale.session.order_id)
    move_sandbox_order(app, sale.session.order_id, "refunded", "offramp", webhook=False)
    html = client.get(receipt_link(status)).get_data(as_text=True)
    assert unescape(shown(html, "receipt-status")) == \
        "The payout did not go through: the shop has its funds back."
    assert 'data-testid="send-amount"' not in html and 'data-testid="receipt-wallet"' not in html


def test_an_on_ramp_order_without_its_total_fee_still_gets_its_rate_right(app):
    """Every field of an order is optional (spec 2.4): the total fee is then its two parts."""
    from checkout.upstream.types import OnrampOrder

    order = {"_id": "a" * 24, "status": "swap_initiated", "localCurrencyAmount": 5000,
             "currencyIsoCode": "NGN", "amountCrypto": 3.283918, "asset": "USDT",
             "network": "CELO", "feeAmountLocalCurrency": 125,
             "feeAmountLocalCurrencyService": 75, "feeAmountLocalCurrencyPartner": 50,
             "gasAmountLocalCurrency": 14.8}
    parts_only = {k: v for k, v in order.items() if k != "feeAmountLocalCurrency"}
    with app.app_context():
        onramp = get_state().flows["onramp"]
        rates = [next(row.amount for row in onramp.receipt(OnrampOrder.from_json(o)).price.rows
                      if row.kind == "rate") for o in (order, parts_only)]
    assert rates[0] == rates[1] == Decimal("1480.0004")     # (5000 - 125 - 14.8) / 3.283918


def test_an_order_the_upstream_gives_without_amounts_has_a_receipt_without_an_empty_amounts_list(
        flow, client, app, monkeypatch):
    """Every field of an order is optional (spec 2.4). The sandbox always gives the amounts, so
    the flow is handed the sparse order the upstream may send instead."""
    from checkout.upstream.types import OnrampOrder

    status = paid_on_ramp(flow)
    with app.app_context():
        onramp = get_state().flows["onramp"]
    sparse = {"_id": flow.session.order_id, "status": "complete"}
    with monkeypatch.context() as upstream:
        upstream.setattr(onramp, "parse_order", lambda order: OnrampOrder.from_json(sparse))
        html = client.get(receipt_link(status)).get_data(as_text=True)
    assert shown(html, "order-reference") == flow.session.order_id
    assert "<h2>Amounts</h2>" not in html and 'data-testid="receipt-amounts"' not in html
    # The same receipt with its amounts still has them.
    html = client.get(receipt_link(status)).get_data(as_text=True)
    assert "<h2>Amounts</h2>" in html and 'data-testid="pay-amount"' in html
