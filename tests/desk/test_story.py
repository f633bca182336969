"""One order's story at the desk: what the customer saw and was charged, where it stands in their
words and the partner's, their verification, and a timeline of everything recorded, on the staff
member's clock; emails and phones masked, wallets and hashes whole."""
from __future__ import annotations

import re
from datetime import UTC, datetime

from checkout.webhooks.refusals import RefusalLog

from ..conftest import make_app
from ..views.conftest import EVM_ADDRESS, Flow
from ..webhooks.conftest import Receiver
from ..webhooks.helpers import Recorder, order_payload, signed_webhook
from .conftest import Desk, webhook_order
from .staff import VIEWER

TX = "0x" + "ab" * 32


def timeline(page) -> list[str]:
    """The timeline's entries, each as its words (tags and spacing flattened)."""
    body = page.get_data(as_text=True)
    items = re.findall(r'<li class="desk-entry[^"]*" data-kind="[^"]+">(.*?)</li>', body, re.S)
    return [" ".join(re.sub(r"<[^>]+>", " ", item).split()) for item in items]


def test_an_order_made_here_tells_what_the_customer_saw_masked(app, client, operator):
    buyer = Flow(app, client)
    buyer.start()
    buyer.to_pay("stk_push")                  # Kenya, M-Pesa: the phone is given at "Details"
    buyer.get("/status")                      # the order's page reads its status
    order_id = buyer.session.order_id
    page = operator.get(f"/orders/{order_id}")
    assert page.status_code == 200
    body = page.get_data(as_text=True)
    # Masked: the customer's email and phone never reach the page whole.
    assert "ad***@example.com" in body and "ada@example.com" not in body
    assert "+254 *** *** 5678" in body and "712345678" not in body and "0712" not in body
    # Public: the wallet whole.
    assert EVM_ADDRESS in body
    assert "Waiting for your payment." in body            # the customer's own words
    assert re.search(r'data-testid="desk-price".*KES', body, re.S)
    assert '/checkout/r/' in body                          # their receipt
    entries = timeline(page)
    assert entries[0].endswith("Checkout opened")
    assert any(entry.endswith("Reached the step: Amount") for entry in entries)
    assert any(entry.endswith("Order created") for entry in entries)
    # Its first status: the create's answer, kept as the order's first read.
    assert any("Status: Awaiting payment" in entry
               and "from the partner's answer to the order" in entry for entry in entries)


def test_webhooks_refusals_and_signals_in_the_timeline_on_the_staff_clock(config):
    config["CHECKOUT_DESK_TIMEZONE"] = "Africa/Nairobi"
    app = make_app(dict(config))
    recorder = Recorder(app)
    recorder.fail_next_status = 1               # the shop's code fails on the first status
    receiver = Receiver(app)
    first = signed_webhook(order_payload("ord_story", "deposit_awaiting"))
    receiver.post(first)
    receiver.post(first)                        # the same delivery again
    payload = order_payload("ord_story", "payout_successful", tx_hash=TX,
                            updated_at=datetime(2026, 11, 22, 1, 5, tzinfo=UTC))
    payload["data"]["userKyc"] = {"passedKycType": "basic", "latestKycType": "advanced",
                                  "latestKycStatus": "PENDING"}
    receiver.post(signed_webhook(payload))
    receiver.post(signed_webhook(order_payload("ord_story", "refund_pending"),
                                 secret="a-forger's-secret"))
    receiver.process()
    page = Desk(app.test_client(), VIEWER).get("/orders/ord_story")
    body = page.get_data(as_text=True)
    entries = timeline(page)
    assert "Africa/Nairobi" in body and "(Kenya Time)" in entries[0]
    assert "Nov 22, 2026, 4:00 AM" in " ".join(entries)    # 01:00 UTC, on Nairobi's clock
    delivered = [e for e in entries if "Webhook received" in e]
    assert len(delivered) == 2
    assert "delivered 1 more time" in delivered[0]
    assert "Applied: the order moved to this status." in delivered[1]
    told = [e for e in entries if "The shop's code was told" in e]
    assert "failed" in told[0] and "RuntimeError: merchant database down" in told[0]
    assert "acknowledged" in told[1]
    refused = [e for e in entries if "refused" in e]
    assert refused and "did not match your webhook secret" in refused[0]
    assert TX in body                                       # a hash, whole
    kyc = re.search(r'data-testid="desk-kyc">(.*?)</dl>', body, re.S).group(1)
    assert "Basic" in kyc and "Under review" in kyc and "Advanced" in kyc
    assert "Paid out" in body
    recorder.disconnect()


def test_an_order_nobody_knows_is_not_found(operator):
    assert operator.get("/orders/ord_nobody").status_code == 404
    assert operator.get("/orders/" + "x" * 200).status_code == 404


def test_a_refusal_naming_an_order_is_on_its_timeline_counted(app, operator):
    webhook_order(app, "ord_forged_at")
    log = RefusalLog(app.extensions["checkout"].engine)
    body = order_payload("ord_forged_at", "payout_successful")
    for _ in range(3):
        log.note("signature", signed_webhook(body).body)
    entries = [e for e in timeline(operator.get("/orders/ord_forged_at")) if "refused" in e]
    assert len(entries) == 3 and all("Nothing it said was used." in e for e in entries)
