"""``/healthz`` (liveness: this process and its database) and ``/healthz/ready`` (the upstream and
the rate-limit store too): never failed by an unwell upstream, never waiting on it, following the
upstream's return within seconds, and telling a stranger one word (the details go to the bearer of
the metrics token)."""
from __future__ import annotations

import logging
import socket
import threading
import time

import pytest
from sqlalchemy.exc import OperationalError

from checkout.errors import UpstreamUnavailable
from checkout.state import get_state

from ..conftest import make_app
from ..metrics.support import TOKEN, bearer
from ..support import outage
from ..support.clock import Clock
from ..support.waiting import wait_for


@pytest.fixture
def config(config) -> dict:
    config["CHECKOUT_METRICS_TOKEN"] = TOKEN
    return config


class Operator:
    """The test client as the bearer of the metrics token (the health details' reader)."""

    def __init__(self, client) -> None:
        self.client = client

    def get(self, path: str):
        return self.client.get(path, headers=bearer())


@pytest.fixture
def client(app) -> Operator:
    return Operator(app.test_client())


@pytest.fixture
def upstream_calls(app, monkeypatch):
    """Counts the readiness checks' upstream calls; ``fail`` and ``hanging`` (an upstream that
    answers only once ``answer`` is set) change how it answers."""
    with app.app_context():
        client = get_state().upstream
    original = client.probe

    class Calls(list):
        fail = False
        hanging = False
        answer = threading.Event()

    calls = Calls()

    def counted(*args, **kwargs):
        calls.append(1)
        if calls.hanging:
            calls.answer.wait(15)
        if calls.fail:
            raise UpstreamUnavailable("down")
        return original(*args, **kwargs)

    monkeypatch.setattr(client, "probe", counted)
    return calls


def checked(client, path: str = "/checkout/healthz", upstream: str = "ok"):
    """The answer once the background check has told ``upstream``."""
    return wait_for(lambda: (r := client.get(path)).get_json()["checks"]["upstream"] == upstream
                    and r)


def test_alive_and_ready_when_everything_answers(client, upstream_calls):
    live = checked(client)
    assert live.status_code == 200 and live.headers["Cache-Control"] == "no-store"
    assert live.get_json()["checks"] == {"database": "ok", "upstream": "ok",
                                         "ratelimit_store": "memory"}
    ready = client.get("/checkout/healthz/ready")
    assert ready.status_code == 200 and ready.get_json()["status"] == "ok"


def test_an_unwell_upstream_never_fails_liveness(client, upstream_calls):
    """A load balancer given /healthz keeps the host: the shop's own pages go on."""
    upstream_calls.fail = True
    live = checked(client, upstream="unavailable")
    assert live.status_code == 200 and live.get_json()["status"] == "degraded"
    ready = client.get("/checkout/healthz/ready")
    assert ready.status_code == 503 and ready.get_json()["checks"]["upstream"] == "unavailable"


def test_no_probe_waits_on_the_upstream(client, upstream_calls):
    upstream_calls.hanging = True
    started = time.monotonic()
    first = client.get("/checkout/healthz")
    assert time.monotonic() - started < 1.0
    assert first.status_code == 200 and first.get_json()["checks"]["upstream"] == "unknown"
    assert client.get("/checkout/healthz/ready").status_code == 503      # not known ready yet
    upstream_calls.answer.set()                                          # the upstream answers
    assert checked(client).status_code == 200
    assert client.get("/checkout/healthz/ready").status_code == 200


def test_many_probes_make_one_upstream_call(client, upstream_calls):
    checked(client)
    for _ in range(20):
        assert client.get("/checkout/healthz").status_code == 200
        assert client.get("/checkout/healthz/ready").status_code == 200
    assert len(upstream_calls) == 1


def test_the_check_is_made_again_after_the_cache_time(config, monkeypatch):
    app = make_app({**config, "CHECKOUT_HEALTH_CACHE_SECONDS": 0})
    with app.app_context():
        upstream = get_state().upstream
    calls = []
    original = upstream.probe
    monkeypatch.setattr(upstream, "probe",
                        lambda *a, **kw: (calls.append(1), original(*a, **kw))[1])
    client = Operator(app.test_client())
    # Each probe finds the last check too old and starts one (unless one is still running).
    wait_for(lambda: client.get("/checkout/healthz") and len(calls) >= 3)


def test_refused_credentials_are_reported_as_such(config, caplog):
    # The sandbox knows the merchant by another id than the one the checkout sends: a 401.
    sandbox = {**config["CHECKOUT_SANDBOX"], "SANDBOX_CLIENT_ID": "the-merchants-real-id"}
    app = make_app({**config, "CHECKOUT_CLIENT_ID": "not-the-merchants-id",
                    "CHECKOUT_SANDBOX": sandbox})
    client = Operator(app.test_client())
    with caplog.at_level(logging.ERROR, logger="checkout.readiness"):
        live = checked(client, upstream="credentials_refused")
    assert live.status_code == 200
    assert client.get("/checkout/healthz/ready").status_code == 503
    assert any("refuses the checkout's credentials" in r.getMessage() for r in caplog.records)
    assert "not-the-merchants-id" not in caplog.text


def test_one_corridors_open_breaker_is_reported_and_readiness_is_checked_at_once(
        app, client, upstream_calls):
    """A breaker opening has the upstream checked at once (not at the end of the cache time);
    one corridor failing is not the upstream down: the probe answers, readiness holds."""
    checked(client)
    breaker = get_state_of(app).upstream.transport.breakers.get("onramp_prices",
                                                                "KE/mobile_money")
    outage.open_breaker(breaker)
    wait_for(lambda: len(upstream_calls) == 2)
    live = client.get("/checkout/healthz")
    body = live.get_json()
    assert live.status_code == 200 and body["checks"]["upstream"] == "ok"
    [shown] = body["upstream"]["breakers"]
    # The wait left: within the breaker's five seconds (how much of it passed meanwhile is the
    # machine's business: a loaded full run took 1.2 s to get here).
    retry_in = shown.pop("retry_in_seconds")
    assert shown == {"family": "onramp_prices", "corridor": "KE/mobile_money", "state": "open"}
    assert 0 < retry_in <= 5
    assert client.get("/checkout/healthz/ready").status_code == 200


def test_an_outage_the_breakers_saw_shows_in_readiness_at_once(app, client, upstream_calls):
    checked(client)
    upstream_calls.fail = True
    outage.open_breaker(get_state_of(app).upstream.transport.breakers.get("onramp_orders"))
    ready = wait_for(lambda: (r := client.get("/checkout/healthz/ready")).status_code == 503
                     and r)
    assert ready.get_json()["checks"]["upstream"] == "unavailable"
    assert len(upstream_calls) == 2


def get_state_of(app):
    with app.app_context():
        return get_state()


def test_a_database_that_does_not_answer_fails_liveness(app, client, upstream_calls,
                                                        monkeypatch):
    checked(client)
    with app.app_context():
        engine = get_state().engine

    def down(*args, **kwargs):
        raise OperationalError("SELECT 1", {}, Exception("database down"))

    monkeypatch.setattr(engine, "connect", down)
    response = client.get("/checkout/healthz")
    assert response.status_code == 503
    assert response.get_json()["status"] == "down"
    assert response.get_json()["checks"]["database"] == "unavailable"


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_a_rate_limit_store_that_does_not_answer_shows_in_readiness(config, caplog):
    app = make_app({**config,
                    "CHECKOUT_RATELIMIT_STORAGE_URI": f"redis://127.0.0.1:{_closed_port()}/0"})
    client = Operator(app.test_client())
    with caplog.at_level(logging.WARNING, logger="checkout.readiness"):
        live = wait_for(lambda: (r := client.get("/checkout/healthz")).get_json()["checks"][
            "ratelimit_store"] == "unavailable" and r)
    assert live.status_code == 200                  # nobody is refused: limits count in memory
    assert client.get("/checkout/healthz/ready").status_code == 503
    lost = [r for r in caplog.records if "rate-limit store does not answer" in r.getMessage()]
    assert len(lost) == 1


@pytest.mark.redis
def test_a_shared_rate_limit_store_that_answers_is_ready(config, redis):
    app = make_app({**config, "CHECKOUT_RATELIMIT_STORAGE_URI": f"{redis.url}/5"})
    client = Operator(app.test_client())
    live = wait_for(lambda: (r := client.get("/checkout/healthz")).get_json()["checks"][
        "ratelimit_store"] == "ok" and r)
    assert live.status_code == 200
    assert checked(client, "/checkout/healthz/ready").status_code == 200


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer not-the-metrics-token"},
                                     {"Authorization": f"Basic {TOKEN}"}])
def test_a_stranger_is_told_the_status_code_and_one_word(app, upstream_calls, headers):
    """No breaker state, no time to the next trial, no age of the last check, no credentials
    refused: what would let a stranger time an attack on a breaker."""
    checked(Operator(app.test_client()))
    stranger = app.test_client()
    outage.open_breaker(get_state_of(app).upstream.transport.breakers.get("onramp_prices",
                                                                          "KE/mobile_money"))
    for path in ("/checkout/healthz", "/checkout/healthz/ready"):
        answer = stranger.get(path, headers=headers)
        assert answer.status_code == 200 and answer.get_json() == {"status": "ok"}
        assert answer.headers["Cache-Control"] == "no-store"
        assert "Authorization" in answer.headers["Vary"]
    upstream_calls.fail = True
    outage.open_breaker(get_state_of(app).upstream.transport.breakers.get("onramp_orders"))
    wait_for(lambda: stranger.get("/checkout/healthz/ready").status_code == 503)
    live = stranger.get("/checkout/healthz", headers=headers)
    assert live.status_code == 200 and live.get_json() == {"status": "degraded"}
    assert stranger.get("/checkout/healthz/ready").get_json() == {"status": "degraded"}


def test_without_a_metrics_token_nobody_is_told_more(config, upstream_calls):
    del config["CHECKOUT_METRICS_TOKEN"]
    app = make_app(dict(config))
    client = app.test_client()
    wait_for(lambda: client.get("/checkout/healthz/ready").status_code == 200)
    assert client.get("/checkout/healthz", headers=bearer()).get_json() == {"status": "ok"}


def test_readiness_follows_the_upstreams_return_within_five_seconds():
    """An upstream that failed the last check is checked again after seconds, not at the end
    of CHECKOUT_HEALTH_CACHE_SECONDS (30): readiness is back within 5 s of the upstream."""
    from checkout.readiness import OK, UNAVAILABLE, ReadinessChecks

    clock, down, calls = Clock(), [True], []

    def probe() -> None:
        calls.append(clock.now)
        if down[0]:
            raise UpstreamUnavailable("down")

    checks = ReadinessChecks(probe, lambda: None, clock=clock)
    checks.refresh_if_stale(30)
    wait_for(lambda: checks.current().upstream == UNAVAILABLE)
    down[0] = False                                 # the upstream is back
    back = clock.now
    while checks.current().upstream != OK:
        assert clock.now - back <= 5, "readiness still says the upstream is unavailable"
        clock.now += 0.5                            # a probe every half second
        checks.refresh_if_stale(30)
        wait_for(lambda: not checks.checking)
    # Answering, it is trusted for the cache time again: no check per probe.
    made = len(calls)
    clock.now += 29
    checks.refresh_if_stale(30)
    assert not checks.checking and len(calls) == made
