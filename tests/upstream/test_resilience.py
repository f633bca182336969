"""An upstream that hangs or fails costs a page a bounded time, and soon none: the breaker, the
page's budget, timeouts per kind of call, the process's places for waiting calls, and what is
certainly never sent."""
from __future__ import annotations

import json
import logging
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
import requests
import responses

from checkout import errors
from checkout.meanwhile import meanwhile
from checkout.upstream import UpstreamClient, budget
from checkout.upstream.breaker import (
    CLOSED,
    HALF_OPEN,
    OPEN,
    Admission,
    Breaker,
    Breakers,
    BreakerSettings,
    BreakerState,
    breaker_told,
)
from checkout.upstream.families import FAMILIES

from ..support import outage
from ..support.clock import Clock
from ..support.waiting import wait_for

BASE = "https://upstream.test"
CLIENT_ID = "merchant-id-7Hq2xZ"
ASSETS = [{"network": "CELO", "asset": "USDT"}]


# -- the breaker alone ---------------------------------------------------------------------------

SETTINGS = BreakerSettings(min_calls=3, failure_ratio=0.5, window=30, open_for=5)


def test_a_breaker_opens_on_a_share_of_failed_requests_in_its_window_not_on_two_in_a_row():
    clock, told = Clock(), []
    breaker = Breaker(SETTINGS, clock=clock, on_change=lambda b, old, new: told.append(new))
    breaker.record(False)
    breaker.record(False)                      # two in a row: too few requests to judge
    assert breaker.snapshot().state == CLOSED
    clock.now += 31                            # ... and out of the window now
    for ok in (True, True, False, True, False):
        breaker.record(ok)                     # two failures in five: under half
    assert breaker.snapshot() == BreakerState(CLOSED, 5, 2, None)
    breaker.record(False)                      # three in six: half
    assert breaker.snapshot().state == OPEN and not breaker.allow()
    assert told == [OPEN]
    clock.now += 4.9
    assert not breaker.allow() and breaker.snapshot().retry_in == pytest.approx(0.1)


def test_a_lone_failure_amid_answers_never_opens_it():
    clock = Clock()
    breaker = Breaker(SETTINGS, clock=clock)
    for _ in range(50):
        for ok in (True, True, False):
            breaker.record(ok)
            clock.now += 1
        assert breaker.snapshot().state == CLOSED


def test_an_answer_never_opens_it():
    breaker = Breaker(SETTINGS, clock=Clock())
    breaker.record(False)
    breaker.record(False)
    breaker.record(True)                       # two failures in three, but it answered
    assert breaker.snapshot().state == CLOSED


def test_after_the_wait_one_trial_goes_and_its_answer_decides():
    clock, told = Clock(), []
    breaker = Breaker(BreakerSettings(min_calls=1, open_for=5), clock=clock,
                      on_change=lambda b, old, new: told.append(new))
    breaker.record(False)
    clock.now += 5
    assert breaker.allow() is Admission.TRIAL
    assert not breaker.allow() and not breaker.allow()    # the others wait for its answer
    assert breaker.snapshot().state == HALF_OPEN
    breaker.record(False)                                  # failed: open for another period
    assert breaker.snapshot().state == OPEN and not breaker.allow()
    clock.now += 5
    assert breaker.allow() is Admission.TRIAL
    breaker.record(True)
    assert breaker.snapshot().state == CLOSED
    assert breaker.allow() is Admission.CALL and breaker.allow() is Admission.CALL
    assert told == [OPEN, HALF_OPEN, OPEN, HALF_OPEN, CLOSED]


def test_a_trial_that_never_tells_is_replaced_after_another_period():
    clock = Clock()
    breaker = Breaker(BreakerSettings(min_calls=1), clock=clock)
    breaker.record(False)
    clock.now += 5
    assert breaker.allow() and not breaker.allow()
    clock.now += 5                                         # its thread died without a word
    assert breaker.allow()


def test_an_outage_is_told_once_when_it_starts_and_once_when_it_ends(caplog):
    """However many trials fail meanwhile: one line, one count, per outage."""
    clock, counted = Clock(), []
    breakers = Breakers(SETTINGS, clock=clock,
                        on_change=breaker_told(lambda *change: counted.append(change)))
    breaker = breakers.get("onramp_prices", "KE/mobile_money")
    with caplog.at_level(logging.DEBUG, logger="checkout.upstream"):
        for _outage in range(2):
            for _ in range(3):
                breaker.record(False)
            for _trial in range(10):
                clock.now += 5
                assert breaker.allow() is Admission.TRIAL
                breaker.record(False)
            clock.now += 5
            assert breaker.allow() is Admission.TRIAL
            breaker.record(True)
    said = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert len(said) == 4, said
    assert said[0].startswith("upstream breaker opened for onramp_prices KE/mobile_money")
    assert said[1] == "upstream breaker closed for onramp_prices KE/mobile_money: it answers again"
    assert said[2:] == said[:2]
    opened = [c for c in counted if c[1] == CLOSED]
    assert opened == [("onramp_prices", CLOSED, OPEN)] * 2


@pytest.mark.parametrize(("method", "endpoint", "params", "family", "corridor"), [
    ("GET", "/api/onramp/best-offer", {"countryIsoCode": "KE", "paymentChannel": "mobile_money",
                                       "amount": 10}, "onramp_prices", "KE/mobile_money"),
    ("GET", "/api/onramp/limits", {"countryIsoCode": "GH", "paymentChannel": "bank"},
     "onramp_limits", "GH/bank"),
    ("GET", "/api/offramp/best-offer", {"country": "NG", "type": "bank"}, "offramp_prices",
     "NG/bank"),
    ("GET", "/api/offramp/limits", {"type": "mobile_money", "country": "KE"}, "offramp_limits",
     "KE/mobile_money"),
    ("GET", "/api/pay-widget-merchant/price", {"country": "NG", "provider": "x y\n"},
     "legacy_prices", "NG/xy"),
    ("GET", "/api/onramp/assets", None, "onramp_reference", None),
    ("GET", "/api/offramp/countries", None, "offramp_reference", None),
    ("GET", "/api/util/countries", None, "util_reference", None),
    ("GET", "/api/onramp/order", {"orderId": "o1"}, "onramp_orders", None),
    ("GET", "/api/offramp/order/{id}", None, "offramp_orders", None),
    ("POST", "/api/onramp/order/create", None, "onramp_create", None),
    ("POST", "/api/offramp/create-order", None, "offramp_create", None),
    ("POST", "/api/onramp/order/confirm", None, "onramp_actions", None),
    ("GET", "/api/kyc/state", {"phoneNumber": "+254700000000"}, "kyc", None),
    ("POST", "/api/user/kyc/submit", None, "kyc", None),
    ("POST", "/api/util/check-address", None, "address_check", None),
])
def test_each_call_has_the_breaker_of_its_family_and_corridor(method, endpoint, params, family,
                                                              corridor):
    breaker = Breakers().of(method, endpoint, params)
    assert (breaker.family, breaker.corridor) == (family, corridor)
    assert family in FAMILIES


# -- the breakers in the transport ---------------------------------------------------------------

def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_refusing_upstream_opens_the_breaker_then_nothing_is_sent():
    port = _closed_port()
    client = UpstreamClient(f"http://127.0.0.1:{port}", client_id=CLIENT_ID, retries=0,
                            breakers=Breakers(BreakerSettings(open_for=60)))
    for _ in range(3):
        with pytest.raises(errors.UpstreamUnavailable) as refused:
            client.onramp_assets()
        assert refused.value.never_sent            # no connection: certainly not received
    sent = []
    client.http.send = lambda *a, **kw: sent.append(1)      # type: ignore[method-assign]
    started = time.monotonic()
    with pytest.raises(errors.UpstreamCircuitOpen) as info:
        client.onramp_assets()
    assert time.monotonic() - started < 0.1 and sent == []
    assert info.value.never_sent and info.value.retryable and info.value.retry_in > 50


@responses.activate
def test_a_refusal_is_an_answer_and_keeps_the_breaker_closed():
    responses.add(responses.GET, f"{BASE}/api/onramp/assets", status=400,
                  json={"message": "bad"})
    client = UpstreamClient(BASE, client_id=CLIENT_ID, retries=0)
    for _ in range(5):
        with pytest.raises(errors.UpstreamBadRequest):
            client.onramp_assets()
    assert client.transport.breakers.get("onramp_reference").snapshot().state == CLOSED


@responses.activate
@pytest.mark.parametrize("answer", [{"status": 500}, {"status": 200, "body": "<html>oops"}])
def test_5xx_and_unreadable_answers_count_as_failures(answer):
    responses.add(responses.GET, f"{BASE}/api/onramp/assets", **answer)
    client = UpstreamClient(BASE, client_id=CLIENT_ID, retries=0)
    for _ in range(3):
        with pytest.raises((errors.UpstreamUnavailable, errors.UpstreamBadResponse)):
            client.onramp_assets()
    with pytest.raises(errors.UpstreamCircuitOpen):
        client.onramp_assets()
    assert len(responses.calls) == 3


QUOTE = {"quoteId": "q1"}


def _client(**kwargs) -> UpstreamClient:
    """A client whose retries do not pause (its sleep is a collaborator)."""
    client = UpstreamClient(BASE, client_id=CLIENT_ID, **kwargs)
    client.transport.sleep = lambda seconds: None
    return client


def _price(client: UpstreamClient, country: str, channel: str) -> str:
    """A corridor's price, as the transport returns it (the JSON of a best offer)."""
    answer = client.transport.request("GET", "/api/onramp/best-offer", params={
        "network": "CELO", "asset": "USDT", "amount": 100, "countryIsoCode": country,
        "paymentChannel": channel})
    return answer["quoteId"]


def _prices(country: str) -> list:
    return [c for c in responses.calls if f"countryIsoCode={country}" in c.request.url]


@responses.activate
def test_one_corridor_failing_never_switches_off_another():
    """Kenya's prices answering 503, asked again and again (one shopper, or an attacker): Kenya's
    breaker opens, and Ghana's prices are sent and answered all along."""
    def best_offer(request):
        if "countryIsoCode=KE" in request.url:
            return 503, {}, json.dumps({"message": "provider down"})
        return 200, {}, json.dumps(QUOTE)

    responses.add_callback(responses.GET, f"{BASE}/api/onramp/best-offer", callback=best_offer)
    client = _client()
    for _ in range(20):
        with pytest.raises(errors.UpstreamUnavailable):
            _price(client, "KE", "mobile_money")
        assert _price(client, "GH", "mobile_money") == "q1"
    kenya = client.transport.breakers.get("onramp_prices", "KE/mobile_money")
    assert kenya.snapshot().state == OPEN
    assert len(_prices("GH")) == 20
    assert [breaker for breaker, _ in client.transport.breakers.not_closed()] == [kenya]


@responses.activate
def test_a_requests_retries_count_as_one_failure():
    responses.add(responses.GET, f"{BASE}/api/onramp/best-offer", status=503, json={})
    client = _client(retries=3)
    with pytest.raises(errors.UpstreamUnavailable):
        _price(client, "KE", "mobile_money")
    assert len(responses.calls) == 4                   # sent four times, as a GET may be
    breaker = client.transport.breakers.get("onramp_prices", "KE/mobile_money")
    assert breaker.snapshot() == BreakerState(CLOSED, 1, 1, None)


@responses.activate
def test_a_request_answered_on_a_retry_counts_as_one_success():
    best_offer = f"{BASE}/api/onramp/best-offer"
    responses.add(responses.GET, best_offer, status=503, json={})
    responses.add(responses.GET, best_offer, json=QUOTE)
    client = _client(retries=3)
    assert _price(client, "KE", "mobile_money") == "q1"
    breaker = client.transport.breakers.get("onramp_prices", "KE/mobile_money")
    assert breaker.snapshot() == BreakerState(CLOSED, 1, 0, None)


@responses.activate
def test_a_failed_trial_is_sent_once_with_no_retries():
    responses.add(responses.GET, f"{BASE}/api/onramp/best-offer", status=503, json={})
    clock = Clock()
    client = _client(retries=3, breakers=Breakers(SETTINGS, clock=clock))
    for _ in range(3):
        with pytest.raises(errors.UpstreamUnavailable):
            _price(client, "KE", "mobile_money")
    breaker = client.transport.breakers.get("onramp_prices", "KE/mobile_money")
    assert breaker.snapshot().state == OPEN and len(responses.calls) == 12
    clock.now += 5
    with pytest.raises(errors.UpstreamUnavailable) as failed:
        _price(client, "KE", "mobile_money")           # the trial
    assert not isinstance(failed.value, errors.UpstreamCircuitOpen)
    assert len(responses.calls) == 13                  # one attempt, not four
    assert breaker.snapshot().state == OPEN


# -- timeouts per kind, within the page's budget -----------------------------------------------

@pytest.mark.parametrize(("method", "path", "kind"), [
    ("GET", "/api/onramp/assets", budget.REFERENCE),
    ("GET", "/api/util/countries", budget.REFERENCE),
    ("GET", "/api/onramp/best-offer", budget.PRICE),
    ("GET", "/api/pay-widget-merchant/price", budget.PRICE),
    ("GET", "/api/onramp/order", budget.READ),
    ("GET", "/api/offramp/order/abc", budget.READ),
    ("GET", "/api/kyc/state", budget.READ),
    ("POST", "/api/onramp/order/create", budget.WRITE),
    ("POST", "/api/kyc/submit", budget.WRITE),
])
def test_each_kind_of_call_has_its_timeouts(method, path, kind):
    assert budget.kind_of(method, path) == kind


@responses.activate
def test_a_call_is_given_its_kinds_timeouts_and_no_more_than_the_budget_left():
    responses.add(responses.GET, f"{BASE}/api/onramp/assets", json=ASSETS)
    responses.add(responses.POST, f"{BASE}/api/onramp/order/confirm", body="order confirmed")
    client = UpstreamClient(BASE, client_id=CLIENT_ID)
    given = []
    real_send = client.http.send

    def spy(request, **kwargs):
        given.append(kwargs["timeout"])
        return real_send(request, **kwargs)

    client.http.send = spy                                  # type: ignore[method-assign]
    client.onramp_assets()
    client.onramp_confirm_order("ord_1")
    assert given == [budget.DEFAULT_TIMEOUTS[budget.REFERENCE],
                     budget.DEFAULT_TIMEOUTS[budget.WRITE]]
    token = budget.begin(10.0)
    try:
        client.onramp_confirm_order("ord_1")
    finally:
        budget.end(token)
    connect, read = given[-1]
    assert connect == budget.DEFAULT_TIMEOUTS[budget.WRITE][0] and 9.5 < read <= 10.0


def test_a_hanging_upstream_costs_a_page_its_budget_and_no_more(silent_server):
    url, accepted = silent_server
    client = UpstreamClient(url, client_id=CLIENT_ID, retries=3)
    token = budget.begin(1.0)
    try:
        started = time.monotonic()
        with pytest.raises(errors.UpstreamTimeout) as info:
            client.onramp_assets()                  # a reference call: 5 s read timeout
        assert 0.8 < time.monotonic() - started < 1.5
        assert not info.value.never_sent            # sent: the upstream may have it
        # What is left is too little to send anything: refused without a connection.
        before = len(accepted)
        with pytest.raises(errors.UpstreamTimeout) as spent:
            client.onramp_create_order(quote_id="q1", network="CELO", asset="USDT", amount=10,
                                       currency="local", email="a@example.com",
                                       user_ip="203.0.113.9")
        assert spent.value.never_sent and len(accepted) == before
    finally:
        budget.end(token)


def test_only_a_few_calls_of_a_process_wait_on_the_upstream(silent_server):
    """The others are refused within a second, never sent: a hanging upstream holds a few
    threads, never every thread of the worker."""
    url, accepted = silent_server
    client = UpstreamClient(url, client_id=CLIENT_ID, retries=0, max_in_flight=2,
                            timeouts={budget.REFERENCE: (1.0, 3.0)})
    with ThreadPoolExecutor(2) as hanging:
        waiting = [hanging.submit(client.onramp_assets) for _ in range(2)]
        wait_for(lambda: len(accepted) == 2)         # both are waiting on the upstream now
        started = time.monotonic()
        with pytest.raises(errors.UpstreamUnavailable) as info:
            client.onramp_assets()
        assert time.monotonic() - started < 1.5 and info.value.never_sent
        assert len(accepted) == 2
        for future in waiting:
            with pytest.raises(errors.UpstreamTimeout):
                future.result()


def test_a_call_made_meanwhile_has_the_pages_budget(silent_server, app):
    url, _accepted = silent_server
    client = UpstreamClient(url, client_id=CLIENT_ID, retries=0)
    with app.app_context():
        token = budget.begin(0.8)
        try:
            started = time.monotonic()
            with meanwhile(client.onramp_assets) as result, pytest.raises(errors.UpstreamTimeout):
                result()
            assert time.monotonic() - started < 1.5
        finally:
            budget.end(token)


def test_never_sent_is_said_only_of_connections_never_made():
    port = _closed_port()
    try:
        requests.get(f"http://127.0.0.1:{port}", timeout=1)
    except requests.ConnectionError as refused:
        from checkout.upstream.transport import _never_sent

        assert _never_sent(refused)
        reset = requests.ConnectionError(ConnectionResetError("reset by peer"))
        assert not _never_sent(reset)
        assert not _never_sent(requests.ReadTimeout("read"))
        assert _never_sent(requests.ConnectTimeout("connect"))


def test_an_answer_that_trickles_in_is_cut_at_its_timeout():
    """requests' read timeout is per read: an upstream sending a byte every half second would
    hold the page for as long as it liked. The whole answer must arrive within the timeout."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    stop = threading.Event()

    def trickle() -> None:
        conn, _ = server.accept()
        conn.recv(65536)
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
                     b"Content-Length: 1000\r\n\r\n")
        while not stop.is_set():
            try:
                conn.sendall(b" ")
            except OSError:
                break
            stop.wait(0.3)                           # the next byte, as a trickling server sends it
        conn.close()

    threading.Thread(target=trickle, daemon=True).start()
    client = UpstreamClient(f"http://127.0.0.1:{server.getsockname()[1]}", client_id=CLIENT_ID,
                            retries=0, timeouts={budget.REFERENCE: (1.0, 1.0)})
    started = time.monotonic()
    try:
        with pytest.raises(errors.UpstreamTimeout):
            client.onramp_assets()
        assert time.monotonic() - started < 3.0
    finally:
        stop.set()
        server.close()


def test_a_timeout_the_pages_budget_cut_short_is_no_sign_of_an_outage(silent_server):
    url, _accepted = silent_server
    client = UpstreamClient(url, client_id=CLIENT_ID, retries=0,
                            breakers=Breakers(BreakerSettings(min_calls=1, open_for=60)))
    token = budget.begin(1.0)
    try:
        with pytest.raises(errors.UpstreamTimeout):
            client.onramp_assets()              # 5 s of its own, cut to the page's 1 s
    finally:
        budget.end(token)
    assert client.transport.breakers.not_closed() == []


def test_a_budget_is_its_pages_alone(app):
    """A budget whose page is over (its ending missed: a context kept alive, say) cuts no other
    call short; while its page is answered, the page's calls have it."""
    token = budget.begin(0.0, current=lambda: False)
    try:
        assert budget.remaining() is None and budget.deadline() is None
    finally:
        budget.end(token)
    with app.test_request_context("/checkout/onramp"):
        app.preprocess_request()                        # the blueprint's budget begins
        assert 20 < budget.remaining() <= app.config["CHECKOUT_REQUEST_BUDGET"]
        helper = budget.deadline()
    assert budget.remaining() is None                   # the page is over
    token = budget.adopt(helper)                        # a pool thread on the page's behalf
    try:
        assert budget.remaining() is not None
    finally:
        budget.end(token)


def test_no_page_waits_behind_the_breakers_trial(silent_server):
    """An open (or half-open) breaker: a page that would wait for another page's load of the same
    reference data (the one trial call, which may hang) is answered at once instead."""
    from checkout.reference import TTLCache

    url, accepted = silent_server
    client = UpstreamClient(url, client_id=CLIENT_ID, retries=0,
                            timeouts={budget.REFERENCE: (1.0, 1.0)})
    cache = TTLCache(60)
    with ThreadPoolExecutor(1) as other_page:
        first = other_page.submit(cache.get, "assets", client.onramp_assets)
        wait_for(lambda: len(accepted) == 1)        # its call waits on the upstream
        # The upstream keeps failing meanwhile: that call's breaker opens.
        outage.open_breaker(client.transport.breakers.get("onramp_reference"))
        started = time.monotonic()
        with pytest.raises(errors.UpstreamCircuitOpen):
            cache.get("assets", client.onramp_assets)
        assert time.monotonic() - started < 0.5
        with pytest.raises(errors.UpstreamTimeout):
            first.result()
    assert len(accepted) == 1
