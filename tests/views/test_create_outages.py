""""Confirm and pay" while the upstream is down: a create that certainly never reached it is said
at once and may be tried again at once; one whose outcome is unknown is looked up, and once the
upstream answers a lookup without the order (after CHECKOUT_CREATE_GRACE), the user may try
again. Exactly one order whatever they press."""
from __future__ import annotations

from checkout.errors import UpstreamTimeout

from .conftest import Flow
from .test_create import orders_of, upstream

CHECKING = "We are checking whether your order was created"
NOT_CREATED = "Our payment partner is not answering, so your order was not created"


def breaker_of(flow: Flow):
    return upstream(flow).transport.breaker


def open_the_breaker(flow: Flow) -> None:
    breaker = breaker_of(flow)
    for _ in range(breaker.failures_to_open):
        breaker.record(False)


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
    app.config["CHECKOUT_CREATE_GRACE"] = 0
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
