"""Creating the order: never twice, never with details the user did not review, never another's.

Regression tests of the order-creation review (reproductions kept in /tmp/probe): a create whose
outcome is unknown, a claim that lapses under a slow create, a wallet changed in another tab after
the review, a network changed while an address was being checked, and a lookup that would adopt
another visitor's order made with the same merchant reference.
"""
from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, timedelta
from decimal import Decimal

from checkout.errors import UpstreamTimeout
from checkout.flows import common
from checkout.journey import clock, creation, quotes
from checkout.state import get_state

from ..support.sandbox_clock import advance
from .conftest import EVM_ADDRESS, Flow, journey_settings, sandbox_order
from .test_create import orders_of, upstream


def onramp(app):
    """The app's on-ramp flow (built with its upstream client and catalog)."""
    return app.extensions["checkout"].flows["onramp"]

OTHER_ADDRESS = "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359"
CHECKING = "We are checking whether your order was created"


def fake_creates(flow, monkeypatch, behave):
    """Replace the upstream's create with ``behave(calls, original, kwargs)``; returns the calls."""
    client = upstream(flow)
    original = client.onramp_create_order
    calls: list = []

    def create(**kwargs):
        calls.append(kwargs)
        return behave(calls, original, kwargs)

    monkeypatch.setattr(client, "onramp_create_order", create)
    return calls


# -- 1. one order per session --------------------------------------------------------------------

def test_an_unanswered_create_is_never_sent_again_while_the_upstream_may_be_processing(
        flow, monkeypatch):
    flow.start()
    review = flow.to_review()
    late = []

    def still_processing(calls, original, kwargs):
        if len(calls) == 1:
            late.append(kwargs)               # the upstream has it, and answers after our timeout
            raise UpstreamTimeout("read timeout")
        return original(**kwargs)

    calls = fake_creates(flow, monkeypatch, still_processing)
    page = flow.create(review)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and CHECKING in html and "Check again" in html
    assert 'hx-trigger="every 5s"' in html                   # and it checks by itself
    # "Try again" from the old review, and "Check again": lookups only.
    assert CHECKING in flow.follow(flow.create(review)).get_data(as_text=True)
    assert CHECKING in flow.get("/").get_data(as_text=True)
    assert flow.get("/review").headers["Location"].endswith(f"/s/{flow.session_id}/")
    assert len(calls) == 1
    # The upstream finishes the first create: the next check finds and adopts it.
    with flow.app.test_request_context():
        created = upstream(flow).__class__.onramp_create_order(upstream(flow), **late[0])
    page = flow.get("/")
    assert "I have paid" in page.get_data(as_text=True)
    assert flow.session.order_id == created.id
    assert len(calls) == 1 and len(orders_of(flow)) == 1


def test_a_create_in_flight_is_not_overtaken_by_a_second_one(flow, monkeypatch):
    """Its pending attempt is the claim, and it holds for as long as the create lasts: there is
    no lease to lapse under a slow upstream."""
    flow.start()
    review = flow.to_review()
    form = flow.confirm_form(review)
    sent, answer = threading.Event(), threading.Event()

    def slow_first(calls, original, kwargs):
        if len(calls) == 1:
            sent.set()
            answer.wait(30)             # the upstream answers once the second request is done
        return original(**kwargs)

    calls = fake_creates(flow, monkeypatch, slow_first)
    flow.app.testing = False            # a 500 must show as a 500, not as an exception here
    results = {}

    def first():
        results["a"] = flow.app.test_client().post(
            f"{flow.base}/create", data={"csrf_token": flow.csrf, **form})

    thread = threading.Thread(target=first)
    thread.start()
    try:
        assert sent.wait(30)            # the first create is at the upstream
        results["b"] = flow.app.test_client().post(
            f"{flow.base}/create", data={"csrf_token": flow.csrf, **form})
        looked = flow.app.test_client().get(f"{flow.base}/")
    finally:
        answer.set()
        thread.join()
    assert len(calls) == 1
    # The second request only leads to the page that looks the order up, which says so.
    assert results["b"].status_code == 303
    assert results["b"].headers["Location"].endswith(f"/s/{flow.session_id}/")
    assert CHECKING in looked.get_data(as_text=True)
    assert results["a"].status_code == 303 and results["a"].headers["Location"].endswith("/pay")
    assert flow.session.order_id == orders_of(flow)[0].id


def test_an_order_attached_meanwhile_is_kept_and_the_other_is_logged(flow, monkeypatch, caplog):
    flow.start()
    review = flow.to_review()

    def another_request_attached_first(calls, original, kwargs):
        with flow.app.app_context():
            get_state().sessions.attach_order(flow.session_id, "order-attached-first")
        return original(**kwargs)

    fake_creates(flow, monkeypatch, another_request_attached_first)
    monkeypatch.setattr(upstream(flow), "onramp_order", lambda **kwargs: orders_of(flow)[0])
    caplog.set_level(logging.INFO)
    response = flow.create(review)
    assert response.status_code == 303 and response.headers["Location"].endswith("/pay")
    assert flow.session.order_id == "order-attached-first"
    orphan = orders_of(flow)[0].id
    errors = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    assert len(errors) == 1 and orphan in errors[0] and "order-attached-first" in errors[0]
    assert flow.session_id not in caplog.text


# -- 2. exactly what was reviewed ----------------------------------------------------------------

def test_a_wallet_changed_after_the_review_is_not_used(flow, app):
    flow.start()
    review = flow.to_review()
    assert EVM_ADDRESS in review.get_data(as_text=True)
    other_tab = app.test_client()
    changed = other_tab.post(f"{flow.base}/wallet", data={
        "csrf_token": flow.csrf, "address": OTHER_ADDRESS, "email": "ada@example.com"})
    assert changed.status_code == 303
    page = flow.landed(flow.create(review), "review")
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "Your order details changed. Please check them again." in html
    assert OTHER_ADDRESS in html and flow.session.order_id is None
    assert orders_of(flow) == []
    assert flow.session.pending is None                    # nothing was sent
    # Confirming what is now shown creates the order with it.
    response = flow.create(page)
    assert response.headers["Location"].endswith("/pay")
    assert sandbox_order(app, flow.session.order_id).data["address"] == OTHER_ADDRESS


def test_a_create_without_the_review_digest_is_refused(flow):
    flow.start()
    review = flow.to_review()
    page = flow.landed(flow.post("/create", {"quote_id": flow.quote_id(review)}), "review")
    assert "Your order details changed" in page.get_data(as_text=True)
    assert flow.session.order_id is None


def test_the_digest_is_keyed_by_the_launch_secret(flow):
    from checkout.keys import derived_key

    flow.start()
    flow.to_review()
    session = flow.session
    built = onramp(flow.app)
    assert built.settings.digest_key == derived_key(flow.app.config["CHECKOUT_LAUNCH_SECRET"],
                                                    b"checkout review digest v1")
    first = creation.review_digest(session, built)
    journey_settings(flow.app, digest_key=derived_key(
        "another-launch-secret-of-enough-bytes-000", b"checkout review digest v1"))
    assert creation.review_digest(session, built) != first


def test_a_network_changed_while_the_address_was_checked_is_caught(flow, app, monkeypatch):
    import checkout.views.onramp as views

    flow.start()
    flow.follow(flow.choose("manual"))                       # CELO
    check = views.clean_wallet
    other_tab = app.test_client()

    def racing(form, session, *, network):
        result = check(form, session, network=network)      # checked for CELO...
        other_tab.post(f"{flow.base}/choose", data={         # ...while SOLANA is chosen
            "csrf_token": flow.csrf, "network": "SOLANA", "asset": "USDC", "currency": "local",
            "amount": "5000", "countryIsoCode": "NG", "paymentChannel": "bank"})
        return result

    monkeypatch.setattr(views, "clean_wallet", racing)
    page = flow.wallet()
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "Enter the wallet address for Solana" in html
    assert "wallet" not in flow.session.done
    monkeypatch.setattr(views, "clean_wallet", check)
    assert flow.get("/review").headers["Location"].endswith("/wallet")


def tamper(flow, *, address=None, checked_for=None):
    """Change the session behind the pages' back (as a racing request could)."""
    def change(session):
        if address is not None:
            session.answer({"address": address})
        if checked_for is not None:
            session.wallet_checked(checked_for, None)

    with flow.app.app_context():
        get_state().sessions.update(flow.session_id, change)


def digest_now(flow) -> str:
    with flow.app.test_request_context():
        return creation.review_digest(flow.session, onramp(flow.app))


def test_create_sends_no_address_unchecked_for_the_network(flow, monkeypatch):
    flow.start()
    review = flow.to_review()
    calls = fake_creates(flow, monkeypatch, lambda calls, original, kwargs: original(**kwargs))
    tamper(flow, address="0x1234")                          # never validated for CELO
    page = flow.landed(flow.post("/create", {"quote_id": flow.quote_id(review),
                                             "review_digest": digest_now(flow)}), "wallet")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and 'id="field-address-error"' in html
    assert calls == [] and flow.session.order_id is None
    assert "wallet" not in flow.session.done


def test_create_sends_no_address_checked_for_another_network(flow, monkeypatch):
    flow.start()
    review = flow.to_review()
    calls = fake_creates(flow, monkeypatch, lambda calls, original, kwargs: original(**kwargs))
    tamper(flow, checked_for="BASE")
    page = flow.landed(flow.post("/create", {"quote_id": flow.quote_id(review),
                                             "review_digest": digest_now(flow)}), "wallet")
    assert "Enter the wallet address for Celo" in page.get_data(as_text=True)
    assert calls == [] and flow.session.order_id is None


def test_a_shops_memo_is_not_dropped_on_a_network_without_memos(flow):
    flow.start(network="CELO", asset="USDT", memo="12345", lock=["memo"])
    flow.follow(flow.choose())
    page = flow.wallet()
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "does not use memos" in html
    assert "wallet" not in flow.session.done


# -- 3. never another session's order -------------------------------------------------------------

def timeout_without_creating(calls, original, kwargs):
    raise UpstreamTimeout("read timeout")


def test_another_visitors_order_with_the_same_reference_is_not_adopted(app, monkeypatch):
    first = Flow(app, app.test_client())
    first.start(orderParams="demo-basket")
    first.to_pay()
    second = Flow(app, app.test_client())
    second.start(orderParams="demo-basket")
    review = second.to_review()                 # same address, email, amount: only the session differs
    fake_creates(second, monkeypatch, timeout_without_creating)
    page = second.create(review)
    assert CHECKING in page.get_data(as_text=True)
    assert second.session.order_id is None and first.session.order_id


def upstream_order(flow, **params):
    """An order made at the upstream outside any checkout session, with this session's details
    and reference (``params`` change the quote's), on a fresh quote."""
    client = upstream(flow)
    with flow.app.test_request_context():
        session = flow.session
        asked = {**quotes.params_of(session, onramp(flow.app)), **params}
        quote = onramp(flow.app).request_quote(asked)
        return type(client).onramp_create_order(
            client, quote_id=quote["id"], network=asked["network"], asset=asked["asset"],
            amount=Decimal(asked["amount"]), currency=asked["currency"],
            email=session.value("email"), user_ip="127.0.0.1", address=session.value("address"),
            order_params=creation.order_params(session),
            extra_fields=session.fields or None)


def test_an_older_order_with_the_same_reference_is_not_adopted(app, monkeypatch):
    monkeypatch.setattr(common, "CREATED_SKEW", timedelta(0))
    flow = Flow(app, app.test_client())
    flow.start(orderParams="demo-basket")
    review = flow.to_review()
    older = upstream_order(flow)                # e.g. yesterday's visitor, same everything
    later = clock.now() + 2                     # our attempt comes after it (order dates: seconds)
    monkeypatch.setattr(clock, "now", lambda: later)
    fake_creates(flow, monkeypatch, timeout_without_creating)
    assert CHECKING in flow.create(review).get_data(as_text=True)
    assert flow.session.order_id is None and older.id


def test_an_order_for_another_amount_is_not_adopted(app, monkeypatch):
    flow = Flow(app, app.test_client())
    flow.start(orderParams="basket-42")
    review = flow.to_review()

    def someone_else_orders_then_timeout(calls, original, kwargs):
        upstream_order(flow, amount="20000")
        raise UpstreamTimeout("read timeout")

    fake_creates(flow, monkeypatch, someone_else_orders_then_timeout)
    assert CHECKING in flow.create(review).get_data(as_text=True)
    assert flow.session.order_id is None and len(orders_of(flow)) == 1


def test_the_merchants_reference_is_also_searched_in_the_orders_list(app, monkeypatch):
    """Our order is found even when the newest order with the reference is another visitor's."""
    mine = Flow(app, app.test_client())
    mine.start(orderParams="basket-7")
    review = mine.to_review()

    def created_then_another_then_timeout(calls, original, kwargs):
        original(**kwargs)
        advance(app, 1)                 # the other visitor's order comes a second later
        again = onramp(app).request_quote(quotes.params_of(mine.session, onramp(app)))
        original(**{**kwargs, "quote_id": again["id"], "address": OTHER_ADDRESS,
                    "email": "bob@example.com"})
        raise UpstreamTimeout("read timeout")

    fake_creates(mine, monkeypatch, created_then_another_then_timeout)
    with app.app_context():
        newest = upstream(mine)
    response = mine.create(review)
    assert response.headers["Location"].endswith("/pay")
    order = sandbox_order(app, mine.session.order_id)
    assert order.data["address"] == EVM_ADDRESS and order.data["email"] == "ada@example.com"
    assert len(orders_of(mine)) == 2 and newest


def test_two_matching_orders_are_not_adopted(flow, monkeypatch, caplog):
    flow.start(orderParams="basket-9")
    review = flow.to_review()

    def two_then_timeout(calls, original, kwargs):
        original(**kwargs)
        again = onramp(flow.app).request_quote(quotes.params_of(flow.session, onramp(flow.app)))
        original(**{**kwargs, "quote_id": again["id"]})
        raise UpstreamTimeout("read timeout")

    fake_creates(flow, monkeypatch, two_then_timeout)
    caplog.set_level(logging.WARNING)
    page = flow.create(review)
    assert CHECKING in page.get_data(as_text=True)
    assert flow.session.order_id is None and len(orders_of(flow)) == 2
    assert "2 orders match" in caplog.text


def test_matching_compares_the_amount_in_the_quotes_unit(app):
    from datetime import datetime

    from checkout.upstream.types import OnrampOrder

    now = time.time()
    pending = {"at": now, "sent": {"network": "CELO", "asset": "USDT", "address": EVM_ADDRESS,
                                   "email": "ada@example.com", "amount": "10",
                                   "currency": "crypto"}}
    order = OnrampOrder(id="o", network="CELO", asset="USDT", address=EVM_ADDRESS.lower(),
                        email="Ada@example.com", amount_crypto=Decimal("10.0"),
                        local_currency_amount=Decimal("16000"),
                        date=datetime.fromtimestamp(now - 1, tz=UTC))
    assert onramp(app).matches(order, pending)
    assert not onramp(app).matches(order, {**pending, "sent": {**pending["sent"], "currency": "local"}})
    stale = OnrampOrder(**{**order.__dict__, "date": datetime.fromtimestamp(now - 60,
                                                                           tz=UTC)})
    assert not onramp(app).matches(stale, pending)
    # The quote's own figure for the amount counts too (the order may repeat the quote's).
    quoted = OnrampOrder(**{**order.__dict__, "amount_crypto": Decimal("9.87")})
    assert not onramp(app).matches(quoted, pending)
    assert onramp(app).matches(quoted, {**pending, "quoted": "9.870"})


def test_a_malformed_review_digest_is_a_changed_review_not_an_error(flow):
    flow.start()
    review = flow.to_review()
    page = flow.landed(flow.post("/create", {"quote_id": flow.quote_id(review),
                                             "review_digest": "é" * 64}), "review")
    assert page.status_code == 200 and "Your order details changed" in page.get_data(as_text=True)
    assert flow.session.order_id is None
