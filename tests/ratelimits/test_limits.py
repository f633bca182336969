"""Each category of requests has a limit per address and per session: a client that hammers one
gets 429 with Retry-After and a page that says when to try again; another address or another
session is not affected. What is not limited stays so, the host's routes included."""
from __future__ import annotations

import json
import logging
import re
import subprocess
import sys
from pathlib import Path

import pytest
from flask import Flask, Response

from checkout import Checkout
from checkout.errors import ConfigurationError
from checkout.ratelimits import DEFAULT_LIMITS, RateLimited, client_address, mark_of, photo_decodes
from checkout.views.receipts import receipt_url

from ..conftest import make_app
from .conftest import Shopper

# One request of each category. None of them needs to succeed: the limit is counted before the
# view runs (a POST without its anti-forgery token gets the friendly 400 page, still counted).
REQUESTS = {
    "page": ("GET", "/s/{session}/"),
    "poll": ("GET", "/s/{session}/status/live"),
    "quote": ("GET", "/s/{session}/quote?amount=5000"),
    "form": ("POST", "/s/{session}/choose"),
    "create": ("POST", "/s/{session}/create"),
    "otp": ("POST", "/s/{session}/pay/otp"),
    "push_retry": ("POST", "/s/{session}/pay/retry"),
    "tx_hash": ("POST", "/s/{session}/deposit/sent"),
    "kyc": ("POST", "/s/{session}/kyc"),
}
# "photo" counts the KYC photos decoded, not requests (tests/views/test_kyc.py).
CATEGORIES = sorted({name.rsplit("_per_", 1)[0] for name in DEFAULT_LIMITS} - {"photo"})
# The merchant's desk: staff behind the host's login, no session, counted per address only
# (tests/desk/test_access.py).
DESK = {"desk", "desk_action", "desk_export"}


def limited_app(config: dict, **limits: str) -> Flask:
    return make_app({**config, "CHECKOUT_RATELIMITS": limits})


def send(shopper: Shopper, category: str, session: str):
    method, path = REQUESTS[category]
    return shopper.request(method, path.format(session=session))


def assert_too_many(response, *, within: int = 60) -> None:
    """429, Retry-After within the limit's window, and a sentence that says when (English)."""
    assert response.status_code == 429, response.status_code
    wait = int(response.headers["Retry-After"])
    assert 1 <= wait <= within + 1
    body = response.get_data(as_text=True)
    assert re.search(rf"Try again in {wait} seconds?\.", body), body[-1500:]


# Categories of requests without a session: limited per address alone.
SESSIONLESS = {"open", "receipt"}


def test_every_category_has_a_request_and_both_limits():
    assert set(REQUESTS) | SESSIONLESS | DESK == set(CATEGORIES)
    for name in CATEGORIES:
        assert f"{name}_per_ip" in DEFAULT_LIMITS
        assert name in SESSIONLESS | DESK or f"{name}_per_session" in DEFAULT_LIMITS


def test_every_route_of_the_checkout_is_limited_or_says_why(config):
    """A new route must be given a category (or a reason to have none), never forgotten: each
    view says so beside its route, with ratelimits.limited or ratelimits.unlimited."""
    app = make_app({**config, "CHECKOUT_METRICS_TOKEN": "t" * 32,     # every route there is
                    "CHECKOUT_DESK_ACCESS": lambda: None})
    endpoints = {rule.endpoint for rule in app.url_map.iter_rules()
                 if rule.endpoint.startswith("checkout.")}
    assert {"checkout.metrics", "checkout.webhooks", "checkout.step",
            "checkout.desk.check"} <= endpoints
    marks = {endpoint: mark_of(app.view_functions[endpoint]) for endpoint in endpoints}
    assert [endpoint for endpoint, mark in marks.items() if mark is None] == []
    for endpoint, mark in marks.items():
        if mark.category is None:
            assert len(mark.why_unlimited) > 20, endpoint
        elif isinstance(mark.category, str):
            assert mark.category in CATEGORIES, endpoint


@pytest.mark.parametrize("category", sorted(REQUESTS))
def test_a_session_that_hammers_a_category_gets_429_and_another_session_does_not(config,
                                                                                 category):
    app = limited_app(config, **{f"{category}_per_session": "3/minute"})
    shopper = Shopper(app)
    hammered, other = shopper.open_session(), shopper.open_session()
    answers = [send(shopper, category, hammered) for _ in range(3)]
    assert all(a.status_code != 429 for a in answers), [a.status_code for a in answers]
    assert_too_many(send(shopper, category, hammered))
    assert_too_many(send(shopper.at("203.0.113.9"), category, hammered))  # the session's own
    assert send(shopper, category, other).status_code != 429


@pytest.mark.parametrize("category", sorted(REQUESTS))
def test_an_address_that_hammers_a_category_gets_429_and_another_address_does_not(config,
                                                                                  category):
    app = limited_app(config, **{f"{category}_per_ip": "3/minute"})
    shopper = Shopper(app)
    sessions = [shopper.open_session() for _ in range(4)]
    answers = [send(shopper, category, session) for session in sessions[:3]]
    assert all(a.status_code != 429 for a in answers), [a.status_code for a in answers]
    assert_too_many(send(shopper, category, sessions[3]))
    assert send(shopper.at("203.0.113.9"), category, sessions[3]).status_code != 429


def test_opening_sessions_is_limited_per_address(config):
    app = limited_app(config, open_per_ip="5/minute;8/hour")
    shopper = Shopper(app)
    for flow in ("onramp", "offramp", "onramp", "offramp", "onramp"):
        shopper.open_session(flow)
    assert_too_many(shopper.get("/onramp"))
    assert_too_many(shopper.get("/offramp"))
    assert_too_many(shopper.get("/launch?token=x"))
    assert shopper.at("203.0.113.9").get("/onramp").status_code == 303


def test_receipts_are_limited_per_address(config):
    """A client reloading receipts by the hundred: 429 for its address, not for another's."""
    app = limited_app(config, receipt_per_ip="3/minute")
    shopper = Shopper(app)
    with app.test_request_context():
        links = [receipt_url("0" * 24, "onramp"), receipt_url("1" * 24, "offramp")]
    prefix = app.config["CHECKOUT_URL_PREFIX"]
    answers = [shopper.get(links[n % 2].removeprefix(prefix)) for n in range(3)]
    assert all(a.status_code != 429 for a in answers), [a.status_code for a in answers]
    assert_too_many(shopper.get(links[1].removeprefix(prefix)))
    assert shopper.at("203.0.113.9").get(links[0].removeprefix(prefix)).status_code != 429


def test_the_hourly_limit_holds_once_the_minute_has_passed(config, limiter_clock):
    app = limited_app(config, open_per_ip="5/minute;8/hour")
    shopper = Shopper(app)
    for _ in range(5):
        shopper.open_session()
    assert_too_many(shopper.get("/onramp"))
    limiter_clock.advance(61)
    for _ in range(3):
        shopper.open_session()
    response = shopper.get("/onramp")
    assert response.status_code == 429
    limiter_clock.advance(3600)
    assert shopper.get("/onramp").status_code == 303


def test_ipv6_clients_count_by_their_64_block(config):
    app = limited_app(config, open_per_ip="2/minute")
    first = Shopper(app, "2001:db8:1:2::10")
    first.open_session()
    Shopper(app, "2001:db8:1:2:ffff::1").open_session()
    assert first.at("2001:db8:1:2:aaaa::5").get("/onramp").status_code == 429
    assert first.at("2001:db8:1:3::10").get("/onramp").status_code == 303


@pytest.mark.parametrize("remote, counted", [
    ("198.51.100.7", "198.51.100.7"),
    ("2001:db8:1:2:3:4:5:6", "2001:db8:1:2::/64"),
    ("::ffff:198.51.100.7", "198.51.100.7"),
    ("", "unknown"),
])
def test_client_address(remote, counted):
    app = Flask("t")
    with app.test_request_context(environ_base={"REMOTE_ADDR": remote}):
        assert client_address() == counted


def test_what_is_never_limited(config):
    app = limited_app(config, **{name: "1/hour" for name in DEFAULT_LIMITS})
    shopper = Shopper(app)
    for _ in range(5):
        # The upstream's signed deliveries (this one is unsigned: 401, never 429).
        assert shopper.post("/webhooks", data=b"{}").status_code == 401
        assert shopper.get("/healthz").status_code in (200, 503)
        assert shopper.get("/static/checkout.css").status_code == 200
        assert shopper.get("/no/such/page").status_code == 404


def test_the_host_sites_own_routes_are_never_limited(config):
    app = limited_app(config, **{name: "1/hour" for name in DEFAULT_LIMITS})

    @app.get("/basket")
    def basket():
        return "basket"

    client = app.test_client()
    assert {client.get("/basket").status_code for _ in range(20)} == {200}


def test_a_host_with_its_own_flask_limiter_keeps_it_and_does_not_change_ours(config):
    """The host's RATELIMIT_* settings are its limiter's, never ours (and ours never its)."""
    from flask_limiter import Limiter
    from flask_limiter.util import get_remote_address

    app = Flask("host_with_limiter", instance_path=config.pop("_instance_path", None))
    app.config.update(config, RATELIMIT_DEFAULT="2/minute", RATELIMIT_ENABLED=True,
                      RATELIMIT_KEY_PREFIX="shop", RATELIMIT_APPLICATION="3/minute")
    Checkout(app)
    host_limiter = Limiter(get_remote_address, app=app, storage_uri="memory://")
    host_limiter.exempt(app.blueprints["checkout"])

    @app.get("/basket")
    def basket():
        return "basket"

    client = app.test_client()
    assert [client.get("/basket").status_code for _ in range(3)] == [200, 200, 429]
    # Ours did not take the host's 2/minute (or 3/minute) as a default of its own.
    assert {client.get("/checkout/onramp").status_code for _ in range(10)} == {303}
    assert app.extensions["limiter"] == {host_limiter}         # the host's, and only it


def test_limits_can_be_turned_off(config):
    app = make_app({**config, "CHECKOUT_RATELIMIT_ENABLED": False,
                    "CHECKOUT_RATELIMITS": {"open_per_ip": "1/hour"}})
    shopper = Shopper(app)
    assert {shopper.get("/onramp").status_code for _ in range(5)} == {303}


def test_one_limit_can_be_turned_off(config):
    app = limited_app(config, open_per_ip="")
    shopper = Shopper(app)
    assert {shopper.get("/onramp").status_code for _ in range(80)} == {303}


# -- what the limited user sees -----------------------------------------------------------------------

def test_the_page_is_in_the_sessions_language_in_the_frame(config):
    app = limited_app(config, page_per_session="1/minute")
    shopper = Shopper(app)
    session = shopper.open_session(locale="fr")
    shopper.get(f"/s/{session}/")
    response = shopper.get(f"/s/{session}/")
    assert response.status_code == 429
    wait = int(response.headers["Retry-After"])
    html = response.get_data(as_text=True)
    assert '<html lang="fr">' in html and "Try again" not in html
    assert "Veuillez patienter un instant" in html
    assert f"Réessayez dans {wait} seconde" in html
    assert re.search(r'<a class="button" href="/checkout/s/[^"]+/">Réessayer</a>', html)
    assert "frame-ancestors https://shop.test" in response.headers["Content-Security-Policy"]
    assert response.headers["Cache-Control"] == "no-store"


def test_an_address_limit_says_so_in_the_browsers_language_without_a_session(config):
    app = limited_app(config, open_per_ip="1/minute")
    shopper = Shopper(app)
    shopper.open_session()
    response = shopper.get("/onramp", headers={"Accept-Language": "sw-KE,sw;q=0.9"})
    assert response.status_code == 429 and response.headers["Retry-After"]
    html = response.get_data(as_text=True)
    assert '<html lang="sw">' in html and "Jaribu tena baada ya sekunde" in html


def test_an_htmx_request_gets_the_box_with_status_429(config):
    """htmx swaps it (base.html's responseHandling), where the answer would have gone."""
    app = limited_app(config, poll_per_session="1/minute")
    shopper = Shopper(app)
    session = shopper.open_session()
    headers = {"HX-Request": "true"}
    shopper.get(f"/s/{session}/status/live", headers=headers)
    response = shopper.get(f"/s/{session}/status/live", headers=headers)
    assert_too_many(response)
    html = response.get_data(as_text=True)
    assert "<html" not in html and 'role="alert"' in html
    assert "HX-Request" in response.headers["Vary"]


def test_the_live_price_says_it_in_place_of_the_price(config):
    app = limited_app(config, quote_per_session="1/minute")
    shopper = Shopper(app)
    session = shopper.open_session()
    headers = {"HX-Request": "true"}
    shopper.get(f"/s/{session}/quote?amount=5", headers=headers)
    response = shopper.get(f"/s/{session}/quote?amount=50", headers=headers)
    assert_too_many(response)
    html = response.get_data(as_text=True)
    assert re.search(r'<p class="field-error" id="quote-message">There have been too many '
                     r'requests from this connection in a short time\. Try again in \d+ '
                     r'seconds?\.</p>', html)
    assert 'role="alert"' not in html


def test_a_client_that_asks_for_json_gets_json(config):
    app = limited_app(config, open_per_ip="1/minute")
    shopper = Shopper(app)
    shopper.open_session()
    response = shopper.get("/onramp", headers={"Accept": "application/json"})
    assert response.status_code == 429
    assert response.json["error"] == "too_many_requests"
    assert response.json["retry_after"] == int(response.headers["Retry-After"])


def test_htmx_swaps_429_and_only_429_of_the_4xx(app, shopper):
    html = shopper.get(f"/s/{shopper.open_session()}/", follow_redirects=True).get_data(
        as_text=True)
    config = re.search(r"<meta name=\"htmx-config\" content='([^']+)'>", html).group(1)
    handling = json.loads(config)["responseHandling"]
    assert handling == [{"code": "204", "swap": False}, {"code": "[23]..", "swap": True},
                        {"code": "429", "swap": True, "error": False},
                        {"code": "[45]..", "swap": False, "error": True}]


# -- secrets ------------------------------------------------------------------------------------------

def test_session_ids_never_reach_the_store_or_the_logs(config, caplog):
    app = limited_app(config, page_per_session="2/minute", quote_per_session="2/minute")
    shopper = Shopper(app)
    session = shopper.open_session()
    caplog.set_level(logging.DEBUG)
    for _ in range(4):
        shopper.get(f"/s/{session}/")
        shopper.get(f"/s/{session}/quote?amount=5")
    storage = app.extensions["checkout"].ratelimits.counter.memory.storage
    keys = list(storage.events) + list(storage.storage)
    assert keys and all(key.startswith("LIMITER/checkout/") for key in keys)
    assert not any(session in key for key in keys)
    assert any("session" in key for key in keys)              # per-session keys are there
    assert any("exceeded" in record.getMessage() for record in caplog.records)
    for record in caplog.records:
        assert session not in record.getMessage()


# -- settings -----------------------------------------------------------------------------------------

@pytest.mark.parametrize("limits, message", [
    ({"quote_per_sesion": "60/minute"}, "no limit is named 'quote_per_sesion'"),
    ({"quote_per_session": "sixty a minute"}, "CHECKOUT_RATELIMITS['quote_per_session']"),
    ({"quote_per_session": "0/minute"}, "a limit of 0"),
    ({"quote_per_session": 60}, "a limit is a string"),
    ("60/minute", "must be a dict"),
])
def test_a_bad_limit_fails_at_start_up_naming_it(config, limits, message):
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        make_app({**config, "CHECKOUT_RATELIMITS": limits})


@pytest.mark.parametrize("uri, message", [
    ("nowhere", "must be a storage address"),
    ("async+redis://localhost", "async storages are not supported"),
    ("carrier-pigeon://loft", "cannot be used"),
])
def test_a_bad_storage_fails_at_start_up(config, uri, message):
    with pytest.raises(ConfigurationError, match=re.escape(message)):
        make_app({**config, "CHECKOUT_RATELIMIT_STORAGE_URI": uri})


def test_settings_are_merged_over_the_defaults(config):
    app = limited_app(config, quote_per_session="7/minute")
    limits = app.extensions["checkout"].ratelimits.limits
    assert limits["quote_per_session"] == "7/minute"
    assert limits["quote_per_ip"] == DEFAULT_LIMITS["quote_per_ip"]


def test_the_checkout_counts_with_limits_alone_not_flask_limiters_internals(tmp_path):
    """No stand-in app handed to Flask-Limiter, whose internals could change under it: the
    checkout counts with the ``limits`` library's public API, and does not even import
    Flask-Limiter (a test dependency only, as a host's own limiter)."""
    script = (
        "import sys\n"
        "from flask import Flask\n"
        "from checkout import Checkout\n"
        "app = Flask('shop')\n"
        f"app.config.update(CHECKOUT_DATABASE_URL='sqlite:///{tmp_path}/c.sqlite3')\n"
        "Checkout(app)\n"
        "client = app.test_client()\n"
        "assert client.get('/checkout/onramp').status_code == 303\n"
        "print(sorted(m for m in sys.modules if m.startswith('flask_limiter')))\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60, cwd=Path(__file__).parents[2])
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


# -- photos -------------------------------------------------------------------------------------------

def _kyc_post(app: Flask, session: str, decoded: int, *, answered: bool = True) -> None:
    """One identity-document post as the limiter sees it: counted before the view, which decodes
    ``decoded`` photos, then (once answered) those photos counted."""
    ratelimits = app.extensions["checkout"].ratelimits
    with app.test_request_context(f"/checkout/s/{session}/kyc", method="POST",
                                  environ_base={"REMOTE_ADDR": "127.0.0.1"}):  # the client's
        ratelimits.count_request()
        photo_decodes(decoded)
        if answered:
            ratelimits.count_photos(Response())


def test_photos_count_even_when_a_post_takes_the_count_past_its_limit(config):
    """A post with room for one more photo may decode three: they count up to the limit, so
    the next post is refused. (A count that does not fit whole would be recorded not at all, and
    every later post would find the same room.)"""
    app = limited_app(config, photo_per_session="4/minute", photo_per_ip="", kyc_per_session="")
    _kyc_post(app, "A" * 43, 3)
    _kyc_post(app, "A" * 43, 3)                     # room for one before it; three decoded
    with pytest.raises(RateLimited) as refused:
        _kyc_post(app, "A" * 43, 3)
    assert refused.value.limit_name == "photo_per_session"


def test_a_photo_count_is_not_carried_into_later_requests_of_one_app_context(config):
    """A host or tool may push an app context that outlives requests: the photos of a post whose
    view failed (never counted after it) are not charged to the pages that follow."""
    app = limited_app(config, photo_per_ip="3/minute", kyc_per_ip="", kyc_per_session="")
    client = app.test_client()
    with app.app_context():
        _kyc_post(app, "A" * 43, 3, answered=False)
        for _ in range(3):
            client.get(f"/checkout/s/{'B' * 43}/status")
    _kyc_post(app, "C" * 43, 3)                      # the address's three photos: still room
    with pytest.raises(RateLimited):
        _kyc_post(app, "C" * 43, 1)


def test_a_fault_of_the_limiters_own_lets_the_shopper_through(config, monkeypatch, caplog):
    """A mark or key that fails is a fault of ours: logged, and the request is not refused."""
    from checkout import ratelimits

    app = limited_app(config, open_per_ip="1/minute")

    def broken() -> str:
        raise RuntimeError("a mark that fails")

    monkeypatch.setattr(ratelimits, "category", broken)
    client = app.test_client()
    assert [client.get("/checkout/onramp").status_code for _ in range(2)] == [303, 303]
    assert "request not counted" in caplog.text


def test_a_step_counts_its_posts_against_the_limit_it_declares(app):
    """The KYC step declares identity documents. One URL rule serves every flow's steps, and a
    post is counted before its session is found: a step of one name counts against one limit in
    every flow."""
    from checkout.views import journey
    from checkout.views.kyc import KycStep

    assert KycStep.post_limit == "kyc" and journey.StepPage.post_limit == "form"
    limits: dict[str, set[str]] = {}
    for flow in app.extensions["checkout"].flows.values():
        for step in flow.journey.form_steps:
            limits.setdefault(step.name, set()).add(step.page.post_limit)
    assert limits["kyc"] == {"kyc"}
    assert all(len(declared) == 1 for declared in limits.values()), limits
