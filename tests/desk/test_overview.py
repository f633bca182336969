"""The overview: orders by flow and status, money in and out by currency, the funnel read from
the step events (whichever process served the pages), the webhooks' health and the partner's
now; each chart an SVG drawn on the server with its numbers in a table beside it."""
from __future__ import annotations

import re
from datetime import UTC, datetime

from ..conftest import make_app
from ..forking import in_forked_child
from ..views.conftest import Flow
from ..webhooks.conftest import Receiver
from ..webhooks.helpers import Recorder, iso, order_payload, signed_webhook


def table(body: str, testid: str) -> dict[str, list[str]]:
    """A table's rows by their heading cell: the other cells' text."""
    found = re.search(rf'data-testid="{testid}">(.*?)</table>', body, re.S)
    assert found, testid
    rows = {}
    for row in re.findall(r"<tr[^>]*>(.*?)</tr>", found.group(1), re.S):
        cells = [" ".join(re.sub(r"<[^>]+>", " ", cell).split())
                 for cell in re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", row, re.S)]
        rows[cells[0]] = cells[1:]
    return rows


def paid(order_id: str, status: str, kind: str, fiat: str, crypto: str) -> dict:
    """An order webhook with its legs' amounts (spec 6.2), made now."""
    payload = order_payload(order_id, status, order_type=kind, createdAt=iso(datetime.now(UTC)))
    order = payload["data"]["order"]
    fiat_leg, crypto_leg = ("deposit", "payout") if kind == "on_ramp" else ("payout", "deposit")
    order[fiat_leg] = {"currencyType": "fiat", "currencyCode": "NGN",
                       "cashout": {"amountBeforeFees": fiat, "amountAfterFees": fiat}}
    order[crypto_leg] = {"currencyType": "crypto", "currencyCode": "USDT",
                         "cashout": {"amountBeforeFees": crypto, "amountAfterFees": crypto}}
    return payload


def test_orders_money_and_webhooks_over_a_period(app, operator):
    recorder = Recorder(app)
    recorder.fail_next_status = 1
    receiver = Receiver(app)
    for payload in (paid("ord_o1", "payout_successful", "on_ramp", "15000", "9.5"),
                    paid("ord_o2", "deposit_awaiting", "on_ramp", "5000", "3"),
                    paid("ord_o3", "deposit_successful", "off_ramp", "30000", "20")):
        assert receiver.post(signed_webhook(payload)).status_code == 200
    for _ in range(2):
        receiver.post(signed_webhook(order_payload("ord_o1"), secret="not-the-secret"))
    receiver.process()
    body = operator.get("/", query_string={"period": "today"}).get_data(as_text=True)
    assert "3 orders made in this period." in body
    assert table(body, "desk-orders-onramp") == {"Status": ["Orders"], "Paid out": ["1"],
                                                 "Awaiting payment": ["1"]}
    assert table(body, "desk-orders-offramp") == {"Status": ["Orders"],
                                                  "Payment received": ["1"]}
    # In: the purchase paid (₦15,000; the unpaid one is not money in) and the sale's crypto;
    # out: the purchase's crypto. The sale is not paid out yet.
    assert table(body, "desk-money") == {"Currency": ["In", "Out"],
                                         "NGN": ["NGN 15,000.00", "NGN 0.00"],
                                         "USDT": ["20 USDT", "9.5 USDT"]}
    assert 'data-testid="desk-refused">2<' in body
    assert 'data-testid="desk-signals-failed">1<' in body
    # Each chart drawn as SVG, hidden from screen readers, with its table beside it.
    figures = re.findall(r"<figure.*?</figure>", body, re.S)
    assert len(figures) == 4
    for figure in figures:
        assert '<svg class="desk-chart"' in figure and 'aria-hidden="true"' in figure
        assert "<table" in figure and "<figcaption" in figure
    assert "Answering" in body or "Not checked yet" in body
    recorder.disconnect()


def test_the_funnel_counts_sessions_from_every_process(app, client, config, operator):
    buyer = Flow(app, client)
    buyer.start()
    buyer.to_pay()
    quitter = Flow(app, app.test_client())
    quitter.start()                         # saw the amount, went no further

    def another_worker() -> int:
        # Another process (a gunicorn worker) serves the next page of a third session.
        other = make_app(dict(config))
        third = Flow(other, other.test_client())
        third.start()
        return third.follow(third.choose()).status_code

    assert in_forked_child(another_worker) == 200
    body = operator.get("/").get_data(as_text=True)
    funnel = table(body, "desk-funnel-onramp")
    assert funnel["Checkout opened"] == ["3", "0"]
    assert funnel["Amount"] == ["3", "1"]             # the quitter left here
    assert funnel["Wallet"] == ["2", "1"]             # the other worker's session left here
    assert funnel["Review"] == ["1", "0"]
    assert funnel["Order created"] == ["1", "0"]
    assert funnel["Pay"] == ["1", "1"]
    # A restart reads the same funnel: it is in the database.
    restarted = make_app(dict(config))
    again = restarted.test_client().get("/checkout/desk/", headers=operator.staff)
    assert table(again.get_data(as_text=True), "desk-funnel-onramp") == funnel


def test_the_partner_now_names_each_kind_of_call_refused(app, operator):
    """One corridor's breaker open: the overview names it, and only it; back, nothing is."""
    from checkout.state import state_of

    from ..support import outage

    breakers = state_of(app).upstream.transport.breakers
    assert "Closed: calls go through" in operator.get("/").get_data(as_text=True)
    kenya = breakers.get("onramp_prices", "KE/mobile_money")
    outage.open_breaker(kenya)
    body = operator.get("/").get_data(as_text=True)
    refused = re.search(r'data-testid="desk-breakers">(.*?)</ul>', body, re.S)
    assert refused is not None
    items = re.findall(r"<li>(.*?)</li>", refused.group(1), re.S)
    assert items == ["<code>onramp_prices KE/mobile_money</code>: "
                     "Open: calls are refused for a few seconds"]
    kenya.record(True)                  # its trial answered: closed again
    body = operator.get("/").get_data(as_text=True)
    assert 'data-testid="desk-breakers"' not in body and "Closed: calls go through" in body
