""""Confirm and pay" while the upstream is down: a create that certainly never reached it is said
at once and may be tried again at once; one whose outcome is unknown is looked up, and once the
upstream answers a lookup without the order (after CHECKOUT_CREATE_GRACE), the user may try
again. Exactly one order whatever they press."""
from __future__ import annotations

from checkout.errors import UpstreamTimeout

from ..support import outage
from ..support.waiting import wait_for
from .conftest import Flow, journey_settings
from .test_create import orders_of, upstream

CHECKING = "We are checking whether your order was created"
NOT_CREATED = "Our payment partner is not answering, so your order was not created"


def breaker_of(flow: Flow):
    """The breaker of the flow's order creation."""
    return upstream(flow).transport.breakers.get(f"{flow.name}_create")


def open_the_breaker(flow: Flow) -> None:
    outage.open_breaker(breaker_of(flow))


def test_a_create_never_sent_says_so_at_once_and_may_be_tried_again(flow):
    flow.start()
    review = flow.to_review()
    open_the_breaker(flow)                      # the upstream kept failing: nothing is sent
    back = flow.landed(flow.create(review), "review")
    assert NOT_CREATED in back.get_data(as_text=True)
    assert flow.session.pending is None and flow.session.order_id is None
    assert orders_of(flow) == []
    breaker_of(flow).record(True)               # the upstream answers again
    paid = flow.follow(flow.create(back))
    assert paid.request.path.endswith("/pay")
    assert len(orders_of(flow)) == 1


def test_a_refused_connection_is_a_create_never_sent(config, monkeypatch):
    """The real path: the connection to the upstream is refused (nothing listens), so the
    create is known not to have been made; the review says so."""
    from ..conftest import make_app

    app = make_app(dict(config))
    flow = Flow(app, app.test_client())
    flow.start()
    review = flow.to_review()
    client = upstream(flow)
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    real_base = client.transport.base_url
    monkeypatch.setattr(client.transport, "base_url", f"http://127.0.0.1:{port}")
    back = flow.landed(flow.create(review), "review")
    assert NOT_CREATED in back.get_data(as_text=True)
    monkeypatch.setattr(client.transport, "base_url", real_base)
    assert flow.follow(flow.create(back)).request.path.endswith("/pay")
    assert len(orders_of(flow)) == 1


def test_an_unknown_outcome_is_looked_up_until_the_upstream_answers_then_tried_again(
        app, flow, monkeypatch):
    # As if CHECKOUT_CREATE_GRACE had passed since the create was sent.
    journey_settings(app, create_grace=0)
    flow.start()
    review = flow.to_review()
    client = upstream(flow)
    real_create = client.onramp_create_order
    sent = []

    def timed_out(**kwargs):
        sent.append(kwargs)
        raise UpstreamTimeout("the upstream did not answer in time")   # sent: outcome unknown

    monkeypatch.setattr(client, "onramp_create_order", timed_out)
    # The upstream is down for the lookups too: "Confirming your order", never a second create.
    open_the_breaker(flow)
    breaker_of(flow).record(True)
    real_lookup = client.onramp_order

    def down(**kwargs):
        raise UpstreamTimeout("still down")

    monkeypatch.setattr(client, "onramp_order", down)
    page = flow.create(review)
    assert CHECKING in page.get_data(as_text=True)
    assert CHECKING in flow.get("/").get_data(as_text=True)
    assert len(sent) == 1
    # Back: the first lookup it answers finds no order, and the user may try again at once.
    monkeypatch.setattr(client, "onramp_order", real_lookup)
    monkeypatch.setattr(client, "onramp_create_order", real_create)
    again = flow.get("/")
    assert again.status_code == 303 and again.headers["Location"].endswith("/review")
    review = flow.follow(again)
    assert "We could not find an order from your last attempt" in review.get_data(as_text=True)
    assert flow.follow(flow.create(review)).request.path.endswith("/pay")
    assert len(orders_of(flow)) == 1 and len(sent) == 1


def test_within_the_grace_period_nothing_is_sent_again_whatever_a_lookup_finds(flow,
                                                                                monkeypatch):
    flow.start()
    review = flow.to_review()
    client = upstream(flow)
    sent = []

    def timed_out(**kwargs):
        sent.append(kwargs)
        raise UpstreamTimeout("the upstream did not answer in time")

    monkeypatch.setattr(client, "onramp_create_order", timed_out)
    assert CHECKING in flow.create(review).get_data(as_text=True)
    for _ in range(3):
        assert CHECKING in flow.get("/").get_data(as_text=True)
        assert CHECKING in flow.follow(flow.create(review)).get_data(as_text=True)
    assert len(sent) == 1


def test_upstream_down_during_confirm_then_back_the_review_is_offered_within_seconds(config):
    """Over real HTTP: the standalone sandbox behind the fault proxy. The upstream answers 500
    to "Confirm and pay" and to the lookups; once it is back, the next look (the confirming page
    asks every 5 s) sends the user to the review, and exactly one order is made."""
    import time

    from ..conftest import make_app
    from ..faults import fault_proxy
    from ..resilience_gunicorn_app import CLIENT_ID, CLIENT_SECRET, WEBHOOK_SECRET
    from ..test_resilience_gunicorn import standalone_sandbox

    with standalone_sandbox() as sandbox_url, fault_proxy(sandbox_url) as proxy:
        app = make_app({**config, "CHECKOUT_API_BASE_URL": proxy.url,
                        "CHECKOUT_CLIENT_ID": CLIENT_ID, "CHECKOUT_CLIENT_SECRET": CLIENT_SECRET,
                        "CHECKOUT_WEBHOOK_SECRET": WEBHOOK_SECRET,
                        "CHECKOUT_LAUNCH_SECRET": "l" * 40, "CHECKOUT_TESTNET": True})
        flow = Flow(app, app.test_client())
        flow.start()
        review = flow.to_review()
        proxy.set("error")
        assert CHECKING in flow.create(review).get_data(as_text=True)
        assert CHECKING in flow.get("/").get_data(as_text=True)      # still down: looked up
        proxy.set("pass")
        back = time.monotonic()

        def way_on():                                   # the page asks again, as its own does
            page = flow.get("/")
            if page.status_code == 303:
                return page
            assert CHECKING in page.get_data(as_text=True)
            return None

        page = wait_for(way_on, timeout=10, interval=0.2)
        assert page.headers["Location"].endswith("/review")
        assert time.monotonic() - back < 10
        review = flow.follow(page)
        assert flow.follow(flow.create(review)).request.path.endswith("/pay")
        # The sandbox is this test's own: every order it holds.
        with app.app_context():
            orders = list(upstream(flow).onramp_orders(limit=100))
        assert len(orders) == 1
