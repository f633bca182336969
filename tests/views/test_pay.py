"""Step 6: the transfer step of every transfer-instructions type, and the user's actions."""
from __future__ import annotations

import re

import pytest

from ..support.sandbox_clock import later
from .conftest import (
    move_sandbox_order,
    order_reads,
    sandbox_order,
    stored_status,
    wait_for_stored_status,
)


def on_pay(flow, response):
    """A form of the pay step answers with a redirect to the pay page (never the page itself, so
    a reload cannot send it again); the page it leads to."""
    assert response.status_code == 303, response.get_data(as_text=True)[:2000]
    assert response.headers["Location"].endswith(f"/s/{flow.session_id}/pay")
    return flow.follow(response)

def test_the_pay_page_after_create_shows_the_creates_answer_and_a_reload_asks_again(
        flow, monkeypatch):
    flow.start()
    review = flow.to_review("manual")
    reads = order_reads(flow.app, monkeypatch)
    page = flow.follow(flow.create(review))
    # How to pay, without a second round trip for the order the create has just answered.
    assert reads == []
    assert 'data-testid="detail-recipientBankAccountNumber">0123456789' in page.get_data(
        as_text=True)
    # A reload shows the order as it is now: the sandbox has moved it on meanwhile (and that
    # webhook is late; the creation's has been stored).
    monkeypatch.setitem(flow.app.config, "CHECKOUT_STATUS_MAX_AGE", 30)     # as configured
    order_id = flow.session.order_id
    wait_for_stored_status(flow.app, order_id, "deposit_awaiting")
    move_sandbox_order(flow.app, order_id, "swap_buyer_confirmed", webhook=False)
    again = flow.get("/pay")
    assert "I have paid" not in again.get_data(as_text=True)
    # Its status page from that one read, stored as a status page's own read would be.
    assert reads == [order_id] and stored_status(flow.app, order_id) == "deposit_validating"
    flow.get("/status")      # and the status page that follows asks nothing
    assert reads == [order_id]


def test_only_the_page_the_create_sends_the_user_to_shows_its_answer(flow, monkeypatch):
    flow.start()
    review = flow.to_review("manual")
    reads = order_reads(flow.app, monkeypatch)
    response = flow.create(review)
    order_id = flow.session.order_id
    # The session's link (a resume on another device) reads the order as it is now.
    flow.get("/")
    assert reads == [order_id]
    # A pay page showing the outcome of an action reads it too (the action changed it).
    with flow.app.app_context():
        from checkout.views.journey import keep_notice
        keep_notice(flow.session, "pay", {"message": "Sent.", "kind": "info"})
    flow.get("/pay")
    assert reads == [order_id, order_id]
    flow.follow(response)       # the page the create sent the user to
    assert reads == [order_id, order_id]


def test_manual_transfer_details_with_copy_buttons_and_i_have_paid(flow):
    page = flow.to_pay("manual")
    html = page.get_data(as_text=True)
    assert 'data-transfer-type="manual"' in html
    assert 'data-testid="detail-recipientBankAccountNumber">0123456789' in html
    assert 'data-copy="0123456789"' in html
    assert "Important:" in html and "I have paid" in html
    response = flow.post("/pay/confirm")
    assert response.status_code == 303 and response.headers["Location"].endswith("/status")
    assert sandbox_order(flow.app, flow.session.order_id).status == "swap_buyer_confirmed"


def test_after_i_have_paid_an_order_still_awaiting_the_payment_is_not_said_to_wait_for_it(flow):
    """The status page may show "deposit_awaiting" for a while after "I have paid" (the stored
    status, until the upstream's webhook for the next one): it must not answer the user with
    "Waiting for your payment", as if they had not said they paid."""
    flow.to_pay("manual")
    onramp = flow.app.extensions["checkout"].flows["onramp"]
    with flow.app.test_request_context():
        assert onramp.status_text("deposit_awaiting", flow.session) == "Waiting for your payment."
    flow.post("/pay/confirm")
    assert flow.session.said_paid
    with flow.app.test_request_context():
        said = onramp.status_text("deposit_awaiting", flow.session)
        assert said.startswith("Thank you. We are waiting for your payment to reach us")
        assert onramp.status_text("deposit_validating", flow.session) == \
            "We are checking your payment."


def test_redirect_leaves_the_frame_for_the_payment_page(flow):
    page = flow.to_pay("redirect")
    html = page.get_data(as_text=True)
    assert 'data-transfer-type="redirect"' in html
    assert 'target="_top"' in html and "data-leave-frame" in html
    assert "/sandbox/pay/" in html and "I have paid" not in html
    # One way to the payment page: not also the provider's resume link, which leads there too.
    assert "Continue on our payment partner" not in html
    # Once the user is back without having paid, the status page offers the provider's link.
    status = flow.get("/status").get_data(as_text=True)
    assert "Continue on our payment partner" in status


def test_manual_transfer_has_no_payment_provider_link(flow):
    html = flow.to_pay("manual").get_data(as_text=True)
    assert "Continue on our payment partner" not in html


def test_ussd_code_with_pin_placeholder_and_dialer_link(flow):
    page = flow.to_pay("ussd")
    html = page.get_data(as_text=True)
    assert 'data-transfer-type="ussd"' in html
    assert "{pin}" in html and "your own PIN" in html
    assert 'href="tel:%2A737%2A000%2A' in html         # the code before {pin}, # escaped
    assert "I have paid" in html
    assert flow.post("/pay/confirm").status_code == 303


def plain(text) -> str:
    """Spaces made plain (French writes a no-break space before a colon)."""
    return re.sub(r"\s+", " ", str(text))


def visible_text(response) -> str:
    html = response.get_data(as_text=True)
    html = re.sub(r"<details.*?</details>", " ", html, flags=re.S)      # closed: not read
    return plain(re.sub(r"<[^>]+>", " ", html)).replace("&#39;", "'")


@pytest.mark.parametrize("language", ["en", "fr", "sw", "pt"])
def test_a_ussd_page_says_what_to_do_once(flow, language):
    """The partner's sentence ("dial the code below, replace {pin} with your PIN, then confirm")
    is what the page lays out around the code: said once, in the page's words."""
    from flask_babel import gettext

    from checkout.upstream_phrases import TEXTS
    from checkout.upstream_text import INSTRUCTIONS
    flow.start(locale=language)
    text = visible_text(flow.to_pay("ussd"))
    with flow.app.test_request_context(f"/checkout/onramp?locale={language}"):
        flow.app.preprocess_request()
        dial = plain(gettext("Dial this code on the phone that pays:"))
        partners = plain(TEXTS["Dial the code below on the phone that pays, replace {pin} with "
                               "your PIN, then confirm that you have paid."])
        ours = plain(INSTRUCTIONS["ussd"])
        pin = plain(gettext("Where the code shows {pin}, type your own PIN. Never share your "
                            "PIN with anyone, including us."))
        after = plain(gettext("Press the button below only after you have sent the money."))
    assert text.count(dial) == 1 and partners not in text and ours not in text
    assert text.count(pin) == 1
    # "then confirm that you have paid", said where the button is.
    assert text.index(dial) < text.index(pin) < text.index(after)


def test_stk_push_waits_for_the_phone_and_offers_a_retry_later(flow):
    page = flow.to_pay("stk_push")
    html = page.get_data(as_text=True)
    assert 'data-transfer-type="stk_push"' in html
    assert "payment request to your phone" in html
    assert "Requests sent: 1 of 3" in html
    assert re.search(r'type="submit" disabled>Send the request again', html)  # too early
    assert "You can ask for a new request in" in html
    # With JavaScript the wait counts down (deposit.js) in place of the sentence, which stays
    # for a page without it.
    assert re.search(r'<p class="field-help" data-no-js-only[^>]*>You can ask', html)
    assert re.search(r'data-countdown-to="\d{4}-\d\d-\d\dT[^"]+"', html)
    assert "deposit.js" in html
    # "This page moves on by itself": without JavaScript it reloads (by the time a new request
    # may be asked at the latest).
    seconds, url = re.search(r'<noscript><meta http-equiv="refresh" content="(\d+); url=([^"]+)"',
                             html).groups()
    assert 0 < int(seconds) <= 10 and url == f"/checkout/s/{flow.session_id}/pay"
    refused = on_pay(flow, flow.post("/pay/retry"))
    assert "cannot be sent now" in refused.get_data(as_text=True)


@pytest.mark.parametrize("sandbox_config", [{"SANDBOX_OUTCOME": "expire"}])  # never approved
def test_stk_push_retry_when_allowed(flow, monkeypatch):
    flow.to_pay("stk_push")
    later(flow.app, 29, monkeypatch)
    assert re.search(r'type="submit" disabled>Send the request again',
                     flow.get("/pay").get_data(as_text=True))
    # 30 seconds after the first request: the page offers another.
    later(flow.app, 1, monkeypatch)
    assert re.search(r'type="submit">Send the request again',
                     flow.get("/pay").get_data(as_text=True))
    page = on_pay(flow, flow.post("/pay/retry"))
    html = page.get_data(as_text=True)
    assert "A new payment request was sent" in html, html[:3000]
    assert "Requests sent: 2 of 3" in html
    # The next request must wait again.
    assert re.search(r'type="submit" disabled>Send the request again', html)


@pytest.mark.parametrize("sandbox_config", [{"SANDBOX_OUTCOME": "expire"}])  # never approved
def test_no_wait_is_counted_down_once_every_request_is_used(flow, monkeypatch):
    """After the last request the button stays disabled: no countdown says a new one may be
    asked soon (with JavaScript it would release the button when it ends)."""
    flow.to_pay("stk_push")
    for _ in range(2):
        later(flow.app, 30, monkeypatch)
        assert re.search(r'type="submit">Send the request again',
                         flow.get("/pay").get_data(as_text=True))
        on_pay(flow, flow.post("/pay/retry"))
    html = flow.get("/pay").get_data(as_text=True)
    assert "Requests sent: 3 of 3" in html
    assert re.search(r'type="submit" disabled>Send the request again', html)
    assert "data-countdown-to" not in html and "You can ask for a new request" not in html


def test_otp_entry_wrong_code_then_right_code(flow):
    page = flow.to_pay("otp_stk_push")
    html = page.get_data(as_text=True)
    assert 'data-transfer-type="otp_stk_push"' in html and 'name="otp"' in html
    assert "Attempts left: 3" in html
    assert "http-equiv" not in html            # a code being typed is never reloaded away
    wrong = on_pay(flow, flow.post("/pay/otp", {"otp": "000000"}))
    assert "That code is not right. Attempts left: 2." in wrong.get_data(as_text=True)
    bad = on_pay(flow, flow.post("/pay/otp", {"otp": "12ab"}))
    assert "digits only" in bad.get_data(as_text=True)
    right = on_pay(flow, flow.post("/pay/otp", {"otp": "123456"}))
    html = right.get_data(as_text=True)
    assert "Code accepted" in html and "payment request to your phone" in html
    assert 'http-equiv="refresh"' in html      # now it only waits for the phone


@pytest.mark.parametrize(("language", "approve"), [
    ("en", "Approve the payment request on your phone."),
    ("fr", "Validez la demande de paiement sur votre téléphone."),
])
def test_after_the_code_the_page_says_to_approve_the_request_once(flow, language, approve):
    flow.start(locale=language)
    flow.to_pay("otp_stk_push")
    html = on_pay(flow, flow.post("/pay/otp", {"otp": "123456"})).get_data(as_text=True)
    assert 'id="pay-message"' in html and html.count(approve) == 1


def test_too_many_wrong_codes_expire_the_order(flow):
    flow.to_pay("otp_stk_push")
    for _ in range(2):
        flow.post("/pay/otp", {"otp": "000000"})
    last = on_pay(flow, flow.post("/pay/otp", {"otp": "000000"}))
    html = last.get_data(as_text=True)
    assert "Too many wrong codes" in html
    assert "expired" in html


def test_pay_page_shows_our_resume_link_with_a_qr_code(flow):
    page = flow.to_pay("manual")
    html = page.get_data(as_text=True)
    resume = f"http://shop.test/checkout/s/{flow.session_id}/"
    assert f'data-testid="resume-url">{resume}' in html
    assert f'data-copy="{resume}"' in html
    assert "<svg" in html and 'class="segno"' in html


def test_order_created_event_is_rendered_once(flow):
    page = flow.to_pay("manual")
    assert page.get_data(as_text=True).count('data-checkout-event="order-created"') == 1
    again = flow.get("/pay")
    assert 'data-checkout-event="order-created"' not in again.get_data(as_text=True)


def test_the_session_link_reopens_the_order(flow):
    flow.to_pay("manual")
    page = flow.get("/")
    assert "I have paid" in page.get_data(as_text=True)
    for step in ("/choose", "/wallet", "/details", "/review"):
        assert flow.get(step).headers["Location"].endswith("/pay")


def test_actions_before_an_order_exists_go_back_to_the_flow(flow):
    flow.start()
    for path in ("/pay/confirm", "/pay/otp", "/pay/retry"):
        assert flow.post(path).status_code == 303


def test_upstream_timeout_on_the_pay_page_gives_a_message_and_a_retry(flow, monkeypatch):
    from checkout.errors import UpstreamTimeout
    from checkout.state import get_state

    flow.to_pay("manual")
    with flow.app.app_context():
        client = get_state().upstream

    def timeout(**kwargs):
        raise UpstreamTimeout("read timeout")

    monkeypatch.setattr(client, "onramp_order", timeout)
    # Nothing of the order stored yet (with it, its last status and details show instead:
    # tests/views/test_upstream_down.py).
    from checkout.views import tracking

    monkeypatch.setattr(tracking, "stored_order", lambda session: None)
    page = flow.get("/pay")
    html = page.get_data(as_text=True)
    assert page.status_code == 502 and "not answering" in html and "Try again" in html
    htmx = flow.get("/pay", headers={"HX-Request": "true"})
    assert htmx.status_code == 200 and "Try again" in htmx.get_data(as_text=True)
    confirm = flow.post("/pay/confirm")
    assert "Traceback" not in confirm.get_data(as_text=True)


@pytest.mark.parametrize("payment_url, resume_url", [
    ("javascript:alert(document.domain)//", "data:text/html,<script>alert(1)</script>"),
    ("data:text/html,<script>alert(1)</script>", "javascript:alert(1)"),
    ("https://user:pw@pay.example/x", "vbscript:msgbox(1)"),
])
def test_unsafe_upstream_links_are_never_rendered(flow, monkeypatch, caplog, payment_url,
                                                  resume_url):
    import dataclasses
    import logging

    from checkout.state import get_state

    flow.to_pay("redirect")
    with flow.app.app_context():
        client = get_state().upstream
    original = client.onramp_order

    def tampered(**kwargs):
        order = original(**kwargs)
        transfer = dataclasses.replace(order.transfer_instructions, payment_url=payment_url)
        return dataclasses.replace(order, transfer_instructions=transfer, resume_url=resume_url)

    monkeypatch.setattr(client, "onramp_order", tampered)
    caplog.set_level(logging.WARNING)
    caplog.clear()
    for headers in ({}, {"HX-Request": "true"}):
        html = flow.get("/pay", headers=headers).get_data(as_text=True)
        hrefs = re.findall(r'href="([^"]*)"', html)
        assert not any(h.lower().startswith(("javascript:", "data:", "vbscript:")) for h in hrefs)
        assert "pw@" not in html and "Continue to the payment page" not in html
        assert "Continue on our payment partner" not in html
        assert "contact the shop’s support" in html
    warnings = [r for r in caplog.records if r.name == "checkout.urls"]
    assert warnings and all(r.levelno == logging.WARNING for r in warnings)
    assert not any(flow.session_id in r.getMessage() for r in caplog.records)


def test_sandbox_payment_link_is_still_rendered(flow):
    # The embedded sandbox serves its payment page over http on this very app: it stays a link.
    html = flow.to_pay("redirect").get_data(as_text=True)
    assert re.search(r'href="http://[^"]*/sandbox/pay/[^"]*" target="_top"', html)


@pytest.mark.parametrize(("transfer", "path", "call", "form", "message"), [
    ("manual", "/pay/confirm", "onramp_confirm_order", {}, "This order has expired"),
    ("otp_stk_push", "/pay/otp", "onramp_submit_otp", {"otp": "123456"},
     "Too many wrong codes: this order has expired"),
    ("stk_push", "/pay/retry", "onramp_retry_push", {}, "This order has expired"),
])
def test_an_expired_order_is_shown_as_expired_not_priced_again(flow, monkeypatch, transfer, path,
                                                                 call, form, message):
    from checkout.errors import OrderExpired
    from checkout.state import get_state

    flow.to_pay(transfer)
    order_id, quote = flow.session.order_id, flow.session.quote
    with flow.app.app_context():
        client = get_state().upstream

    def expired(**kwargs):
        raise OrderExpired("The order is expired", status=400)

    monkeypatch.setattr(client, call, expired)
    page = on_pay(flow, flow.post(path, form))
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and message in html
    assert "price" not in html.lower()
    assert flow.session.order_id == order_id and flow.session.quote == quote


def test_resume_template_refuses_an_unsafe_provider_link_from_any_caller(app):
    from flask import render_template

    with app.test_request_context("/"):
        html = render_template("checkout/journey/_resume.html", resume={
            "url": "http://shop.test/checkout/s/x/", "qr_svg": "",
            "provider_url": "javascript:alert(1)"})
        assert "javascript:" not in html and "Continue on our payment partner" not in html
        html = render_template("checkout/journey/_resume.html", resume={
            "url": "http://shop.test/checkout/s/x/", "qr_svg": "",
            "provider_url": "https://pay.provider.example/resume/1"})
        assert 'href="https://pay.provider.example/resume/1"' in html


def test_a_top_level_pay_page_does_not_use_up_order_created(flow):
    """The resume link opened on another device shows the pay page top-level: no parent there."""
    flow.start()
    created = flow.create(flow.to_review("manual"))
    top = flow.client.get(created.headers["Location"], headers={"Sec-Fetch-Dest": "document"})
    assert 'data-transfer-type="manual"' in top.get_data(as_text=True)
    assert "data-checkout-event" not in top.get_data(as_text=True)
    framed = flow.get("/pay", headers={"Sec-Fetch-Dest": "iframe"}).get_data(as_text=True)
    assert framed.count('data-checkout-event="order-created"') == 1


def test_a_reload_after_a_wrong_code_sends_nothing_again(flow):
    flow.to_pay("otp_stk_push")
    wrong = on_pay(flow, flow.post("/pay/otp", {"otp": "000000"}))
    assert "Attempts left: 2." in wrong.get_data(as_text=True)
    again = flow.get("/pay").get_data(as_text=True)          # the reload: a GET, no code sent
    assert "That code is not right" not in again               # the message was shown once
    assert "Attempts left: 2." in again                       # (the upstream's own count)


def test_a_post_only_address_opened_directly_leads_back_to_the_order(flow):
    flow.to_pay("otp_stk_push")
    page = flow.get("/pay/otp")
    html = page.get_data(as_text=True)
    assert page.status_code == 405
    assert f'href="/checkout/s/{flow.session_id}/"' in html


@pytest.mark.parametrize(("language", "clock"), [
    ("en", r"\d{1,2}:\d\d\u202f[AP]M"),        # English: one 12-hour clock, in Nigeria and Ghana
    ("fr", r"\d\d:\d\d"),
])
def test_the_deadline_reads_on_one_clock_style_per_language_whatever_the_country(
        app, client, language, clock):
    """CLDR's English of Nigeria writes 18:05 and its English of Ghana 6:05 pm: one page language,
    one way to write a time."""
    from .conftest import Flow

    shown = {}
    for transfer in ("manual", "redirect"):            # a Nigerian order, a Ghanaian one
        flow = Flow(app, client)
        flow.start(locale=language)
        html = flow.to_pay(transfer).get_data(as_text=True)
        shown[transfer] = re.search(r'data-testid="order-deadline">([^<]+)<', html).group(1)
    assert "Nig" in shown["manual"] and "Ghana" in shown["redirect"]      # each on its own clock
    for deadline in shown.values():
        assert re.search(rf", {clock} \(", deadline), shown
