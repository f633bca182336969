"""Steps 4 and 5: review with a fresh price, and creating exactly one order."""
from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from checkout.errors import UpstreamBadRequest, UpstreamTimeout, UpstreamUnavailable
from checkout.state import get_state

from ..support.session_sql import session_statements
from ..support.waiting import wait_for
from .conftest import EVM_ADDRESS, Flow, journey_settings, sandbox_order


def upstream(flow):
    with flow.app.app_context():
        return get_state().upstream


def orders_of(flow) -> list:
    """Every order the sandbox holds for this session's reference."""
    from checkout.sandbox.state import current

    reference = flow.session.claims.get("orderParams") or flow.session.reference
    with flow.app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        store = current().orders
        with store.lock:
            return store.find("onramp", lambda o: o.data.get("orderParams") == reference)


def test_review_shows_everything_and_a_price(flow):
    flow.start()
    review = flow.to_review()
    html = review.get_data(as_text=True)
    for text in ("Review your order", "You pay", "You get", EVM_ADDRESS, "ada@example.com",
                 "Nigeria", "Bank transfer", "Confirm and pay"):
        assert text in html


def test_create_makes_one_order_with_what_the_user_chose(flow):
    flow.start(orderParams="merchant-cart-42")
    review = flow.to_review()
    response = flow.create(review)
    assert response.status_code == 303 and response.headers["Location"].endswith("/pay")
    session = flow.session
    assert session.order_id and session.order["id"] == session.order_id
    order = sandbox_order(flow.app, session.order_id)
    assert order.data["address"] == EVM_ADDRESS
    assert order.data["orderParams"] == "merchant-cart-42"
    assert order.data["email"] == "ada@example.com"
    # The provider's page sends the user back by an order view address: never the session id.
    assert "/checkout/o/" in order.data["redirectUrl"]
    assert flow.session_id not in order.data["redirectUrl"]
    assert order.data["userIp"] == "127.0.0.1"


def test_without_merchant_reference_a_checkout_reference_is_used(flow):
    flow.start()
    flow.create(flow.to_review())
    reference = flow.session.reference
    assert reference.startswith("chk_") and flow.session_id not in reference
    assert sandbox_order(flow.app, flow.session.order_id).data["orderParams"] == reference


def count_creates(flow, monkeypatch, racers: Callable[[], bool] | None = None) -> list:
    """Calls that reached the upstream's create (the sandbox's single-use quotes would hide a
    second attempt; a real upstream might not refuse it). ``racers``: the create waits at the
    upstream until it holds (the racing requests all answered meanwhile)."""
    client = upstream(flow)
    original = client.onramp_create_order
    calls: list = []

    def counted(**kwargs):
        calls.append(kwargs["quote_id"])
        if racers is not None:
            wait_for(racers)
        return original(**kwargs)

    monkeypatch.setattr(client, "onramp_create_order", counted)
    return calls


def test_double_submit_creates_one_order(flow, monkeypatch):
    flow.start()
    review = flow.to_review()
    calls = count_creates(flow, monkeypatch)
    first = flow.create(review)
    second = flow.create(review)
    assert first.headers["Location"] == second.headers["Location"]
    assert len(orders_of(flow)) == 1 and len(calls) == 1


def test_concurrent_creates_make_one_order(app, monkeypatch):
    flow = Flow(app, app.test_client())
    flow.start()
    review = flow.to_review()
    form = flow.confirm_form(review)
    statuses: list[int] = []
    # The first create is held at the upstream until the three others have had their answer.
    calls = count_creates(flow, monkeypatch, racers=lambda: len(statuses) == 3)
    barrier = threading.Barrier(4)

    def submit():
        client = app.test_client()
        barrier.wait()
        response = client.post(f"{flow.base}/create",
                               data={"csrf_token": flow.csrf, **form})
        statuses.append(response.status_code)

    threads = [threading.Thread(target=submit) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(orders_of(flow)) == 1 and len(calls) == 1
    assert all(status in (200, 303) for status in statuses)
    # Whoever lost the race now lands on the one order too.
    assert flow.get("/").get_data(as_text=True).count("I have paid") == 1


def test_a_resumed_session_never_creates_a_second_order(app):
    flow = Flow(app, app.test_client())
    flow.start()
    review = flow.to_review()
    flow.create(review)
    other_device = Flow(app, app.test_client())
    other_device.session_id = flow.session_id
    page = other_device.get("/")
    assert "I have paid" in page.get_data(as_text=True)
    other_device.post("/create", flow.confirm_form(review))
    assert other_device.get("/review").headers["Location"].endswith("/pay")
    assert len(orders_of(flow)) == 1


def test_an_old_quote_is_renewed_and_shown_before_creating(flow, monkeypatch):
    flow.start()
    review = flow.to_review()
    old_id = flow.quote_id(review)
    journey_settings(flow.app, quote_max_age=0)
    response = flow.landed(flow.create(review), "review")
    html = response.get_data(as_text=True)
    assert response.status_code == 200
    assert "The price has changed" in html and "You pay" in html
    # A reload is a GET of the review: nothing is posted again, the notice has been said.
    assert "The price has changed" not in flow.get("/review").get_data(as_text=True)
    assert flow.quote_id(response) != old_id
    assert flow.session.order_id is None


def test_a_quote_the_upstream_calls_expired_is_renewed_and_confirmed_again(flow, monkeypatch):
    flow.start()
    review = flow.to_review()
    client = upstream(flow)
    original = client.onramp_create_order
    calls = []

    def expired_once(**kwargs):
        calls.append(kwargs["quote_id"])
        if len(calls) == 1:
            from checkout.errors import QuoteExpired
            raise QuoteExpired("The order is expired", status=400)
        return original(**kwargs)

    monkeypatch.setattr(client, "onramp_create_order", expired_once)
    page = flow.landed(flow.create(review), "review")
    assert "The price expired" in page.get_data(as_text=True)
    assert flow.session.order_id is None and flow.session.pending is None
    response = flow.create(page)
    assert response.headers["Location"].endswith("/pay")
    assert calls[0] != calls[1]


def test_a_submitted_quote_other_than_the_one_shown_is_not_used(flow):
    flow.start()
    flow.to_review()
    page = flow.landed(flow.post("/create", {"quote_id": "someone-elses-quote"}), "review")
    assert "The price has changed" in page.get_data(as_text=True)
    assert flow.session.order_id is None


def test_timeout_after_the_upstream_created_the_order_adopts_it(flow, monkeypatch):
    flow.start()
    review = flow.to_review()
    client = upstream(flow)
    original = client.onramp_create_order

    def created_then_timeout(**kwargs):
        original(**kwargs)
        raise UpstreamTimeout("read timeout", method="POST", path="/api/onramp/order/create")

    monkeypatch.setattr(client, "onramp_create_order", created_then_timeout)
    response = flow.create(review)
    assert response.status_code == 303 and response.headers["Location"].endswith("/pay")
    assert len(orders_of(flow)) == 1
    assert flow.session.order_id == orders_of(flow)[0].id


def test_a_failed_create_is_only_looked_up_until_the_grace_period_ends(flow, monkeypatch):
    # Long enough for the steps below on a loaded machine; the test ends it by setting it to 0.
    journey_settings(flow.app, create_grace=60)
    flow.start()
    review = flow.to_review()
    client = upstream(flow)
    original = client.onramp_create_order
    calls = []

    def unavailable_once(**kwargs):
        calls.append(kwargs["order_params"])
        if len(calls) == 1:
            raise UpstreamUnavailable("502", status=502)
        return original(**kwargs)

    monkeypatch.setattr(client, "onramp_create_order", unavailable_once)
    page = flow.create(review)
    assert page.status_code == 200
    assert "We are checking whether your order was created" in page.get_data(as_text=True)
    assert "Check again" in page.get_data(as_text=True)
    assert flow.create(review).status_code == 303 and len(calls) == 1   # only looked up
    journey_settings(flow.app, create_grace=0)                          # the grace period ends
    fresh = flow.landed(flow.get("/"), "review")
    html = fresh.get_data(as_text=True)
    assert "could not find an order from your last attempt" in html
    assert flow.quote_id(fresh) != flow.quote_id(review)               # a fresh quote
    response = flow.create(fresh)
    assert response.headers["Location"].endswith("/pay")
    assert len(calls) == 2 and calls[0] != calls[1]    # a new reference for the new attempt
    assert len(orders_of(flow)) == 1


def test_when_the_lookup_also_fails_nobody_creates_until_it_is_settled(flow, monkeypatch):
    flow.start()
    review = flow.to_review()
    client = upstream(flow)
    calls = []

    def down(**kwargs):
        calls.append(kwargs)
        raise UpstreamTimeout("timeout")

    monkeypatch.setattr(client, "onramp_create_order", down)
    monkeypatch.setattr(client, "onramp_order", down)
    page = flow.create(review)
    assert "We are checking whether your order was created" in page.get_data(as_text=True)
    again = flow.follow(flow.create(review))
    assert "We are checking whether your order was created" in again.get_data(as_text=True)
    created = [c for c in calls if "quote_id" in c]
    assert len(created) == 1 and flow.session.order_id is None


def test_a_rejected_create_frees_the_session_and_says_so(flow, monkeypatch):
    flow.start()
    review = flow.to_review()
    client = upstream(flow)

    def rejected(**kwargs):
        raise UpstreamBadRequest("The order could not be created", status=400)

    monkeypatch.setattr(client, "onramp_create_order", rejected)
    page = flow.landed(flow.create(review), "review")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "could not create this order" in html
    assert flow.session.pending is None and flow.session.order_id is None


@pytest.mark.parametrize(("refusal", "step", "field"), [
    ("address is not valid", "wallet", "address"),
    ("email must be an email address", "wallet", "email"),
])
def test_a_field_the_upstream_refuses_is_shown_at_that_field(flow, monkeypatch, refusal, step,
                                                             field):
    flow.start()
    review = flow.to_review()

    def rejected(**kwargs):
        raise UpstreamBadRequest(refusal, status=400)

    monkeypatch.setattr(upstream(flow), "onramp_create_order", rejected)
    page = flow.landed(flow.create(review), step)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and f'id="field-{field}-error"' in html and refusal in html
    assert step not in flow.session.done and flow.session.order_id is None
    # A reload shows the form without the message: it was said once.
    assert f'id="field-{field}-error"' not in flow.get(f"/{step}").get_data(as_text=True)


def test_an_email_the_upstream_would_refuse_is_refused_at_the_wallet_step(flow):
    flow.start()
    flow.follow(flow.choose())
    page = flow.wallet(email="💸🚀@example.com")
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and 'id="field-email-error"' in html
    assert "wallet" not in flow.session.done


def test_create_needs_the_anti_forgery_token(flow):
    flow.start()
    review = flow.to_review()
    response = flow.client.post(f"{flow.base}/create", data=flow.confirm_form(review))
    assert response.status_code == 400
    assert flow.session.order_id is None


def test_a_creation_writes_the_session_twice_and_reads_it_twice(flow):
    """"Confirm" records the attempt (the one compare-and-set that keeps a second create from
    being sent) and attaches the order: nothing else is written, and the session is read once to
    open the page and once, inside the attaching transaction, to attach."""
    flow.start()
    review = flow.to_review()
    engine = flow.app.extensions["checkout"].engine
    response, writes, reads = session_statements(engine, lambda: flow.create(review))
    assert response.headers["Location"].endswith("/pay")
    assert len(writes) == 2, writes
    assert len(reads) == 2, reads
