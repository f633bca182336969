"""Hostile input to every route of the blueprint, on SQLite and PostgreSQL.

For each route (the rules are read from the URL map, so a new one is fuzzed without a change here),
hypothesis sends paths, methods, query strings, forms, JSON bodies and headers made to hurt: NUL
and other control characters, lone surrogates (as JSON escapes), very long values, numbers such as
``1e-1000000`` and ``NaN``, markup, format strings and SQL. A real session stands at its review
step (so a create *could* happen) and is sometimes the one addressed, with its anti-forgery token.

It fails on any 5xx, any traceback, any secret (client id and secret, webhook secret, launch
secret) in a response or a log line, the session id in a log line or in a response to a request
that did not carry it, and any order created. Derandomized and bounded: the same examples every
run, a few seconds per database.
"""
from __future__ import annotations

import json
import logging
import re
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkout.state import get_state

from .conftest import make_app
from .support.sandbox_clock import MANUAL
from .views.conftest import Flow

EXAMPLES = 400             # per database: about 10 s for both

HOSTILE_WORDS = [
    "", " ", "\x00", "a\x00b", "%00", "\x07", "\x1b[2J", "\r\nSet-Cookie: x=1", "\ufeff", "\u202e",
    "../../etc/passwd", "..%2f..%2f", "%2e%2e/", "<script>alert(1)</script>", "\"'><svg onload=1>",
    "{{7*7}}", "%s%s%n", "{0.__class__}", "' OR '1'='1", "'; DROP TABLE sessions; --",
    "1e-1000000", "1e1000000", "NaN", "-Infinity", "-0", "0x10", "١٢٣", "12,5", "1 000,50",
    "9" * 400, "x" * 5000, "javascript:alert(1)", "https://evil.example/", "//evil.example",
    "choose", "review", "kyc", "wallet", "USDT", "CELO", "NG", "bank", "en", "fr", "zz-ZZ",
]
LONE_SURROGATE_JSON = '{"event":"order-status-change","data":{"order":{"_id":"\\ud800"}}}'


def hostile_text() -> st.SearchStrategy[str]:
    return st.one_of(
        st.sampled_from(HOSTILE_WORDS),
        st.text(max_size=40),
        st.text(alphabet=st.characters(max_codepoint=0x1f), max_size=8),
        st.builds(lambda a, b: a + b, st.sampled_from(HOSTILE_WORDS), st.text(max_size=8)),
    )


FIELD_NAMES = ["amount", "currency", "countryIsoCode", "paymentChannel", "network", "asset",
               "address", "email", "phoneNumber", "memo", "quote_id", "review_digest", "otp",
               "tx_hash", "language", "next", "document", "action", "bankCode",
               "bankAccountNumber", "check", "confirm", "first_name", "id_number", "locale",
               "token", "shown", "top", "returned", "from", "x"]


def hostile_fields() -> st.SearchStrategy[dict[str, str]]:
    return st.dictionaries(st.one_of(st.sampled_from(FIELD_NAMES), hostile_text()),
                           hostile_text(), max_size=6)


@pytest.fixture(scope="module", params=["sqlite", pytest.param("postgresql",
                                                               marks=pytest.mark.postgres)])
def target(request, tmp_path_factory):
    """An app on one database, a session at its review step, and what must never leak."""
    tmp = tmp_path_factory.mktemp(request.param)
    config: dict[str, Any] = {
        "TESTING": True, "SERVER_NAME": "shop.test", "PROPAGATE_EXCEPTIONS": False,
        "CHECKOUT_FRAME_ANCESTORS": ["https://shop.test"],
        "CHECKOUT_SANDBOX": dict(MANUAL),
        "CHECKOUT_WEBHOOK_BACKGROUND": False, "CHECKOUT_WEBHOOK_FETCH_ORDERS": False,
        # One client sends every example: without this the limits would answer most of them
        # (429) before the hostile input reaches a view. The limits have tests of their own.
        "CHECKOUT_RATELIMIT_ENABLED": False,
        "CHECKOUT_DATABASE_URL": f"sqlite:///{tmp}/checkout.sqlite3",
        "_instance_path": str(tmp / "instance"),
    }
    if request.param == "postgresql":
        from . import postgres

        config["CHECKOUT_DATABASE_URL"] = postgres.fresh_database(
            request.getfixturevalue("postgres_cluster"))
    app = make_app(config)
    flow = Flow(app, app.test_client())
    flow.start()
    flow.to_review()
    secrets = [str(app.config[k]) for k in ("CHECKOUT_CLIENT_ID", "CHECKOUT_WEBHOOK_SECRET",
                                            "CHECKOUT_LAUNCH_SECRET")]
    from checkout.sandbox.credentials import CLIENT_SECRET as SANDBOX_CLIENT_SECRET

    secrets.append(SANDBOX_CLIENT_SECRET)
    return app, flow, secrets


class Captured(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.DEBUG)
        self.lines: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        line = record.getMessage()
        if record.exc_info:
            line += "\n" + logging.Formatter().formatException(record.exc_info)
        self.lines.append(line)


def order_count(app) -> int:
    """Orders the embedded sandbox holds, of every family."""
    from checkout.sandbox.state import current

    with app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        return len(current().orders.all())


ARGUMENT = re.compile(r"<(?:([^<>]*?):)?(\w+)>")


def fill(rule: str, session_id: str, value: str) -> str:
    """``rule`` with its arguments filled: the real session id unless ``value`` is hostile (it
    then starts with "~"), else ``value`` quoted, or one of an ``any(...)``'s options."""
    hostile = value.startswith("~")
    raw = value[1:] if hostile else value

    def one(match: re.Match[str]) -> str:
        converter, name = match.group(1) or "", match.group(2)
        if name == "session_id" and not hostile:
            return session_id
        if converter.startswith("any("):
            options = re.findall(r"'([^']+)'", converter)
            return options[len(raw) % len(options)]
        return quote(raw, safe="/" if converter == "path" else "")

    return ARGUMENT.sub(one, rule)


def routes(app) -> list[tuple[str, list[str]]]:
    return sorted((rule.rule, sorted(rule.methods - {"HEAD", "OPTIONS"}))
                  for rule in app.url_map.iter_rules() if rule.endpoint.startswith("checkout."))


METHODS = ["GET", "POST", "PUT", "DELETE", "PATCH", "TRACE"]


def check(app, flow, secrets, captured, response, path: str) -> None:
    body = response.get_data(as_text=True)
    # 503 is what the health routes say of a dependency that does not answer (or not yet).
    highest = 503 if "/healthz" in path else 499
    assert response.status_code <= highest, (path, response.status_code, body[:500])
    assert "Traceback" not in body, path
    text = body + "\n" + "\n".join(f"{k}: {v}" for k, v in response.headers.items())
    for secret in secrets:
        assert secret not in text, (path, "a secret in a response")
    if flow.session_id not in path:
        assert flow.session_id not in text, (path, "the session id in a response")
    for line in captured.lines:
        assert flow.session_id not in line, ("the session id in a log line", line[:300])
        for secret in secrets:
            assert secret not in line, ("a secret in a log line", line[:300])


@pytest.fixture
def captured():
    handler = Captured()
    root = logging.getLogger()
    level = root.level
    root.addHandler(handler)
    root.setLevel(logging.DEBUG)
    yield handler
    root.removeHandler(handler)
    root.setLevel(level)


FUZZ = settings(max_examples=EXAMPLES, derandomize=True, deadline=None, database=None,
                suppress_health_check=list(HealthCheck))


@FUZZ
@given(data=st.data())
def test_hostile_requests_to_every_route(target, captured, data):
    app, flow, secrets = target
    orders_before = order_count(app)
    rule, methods = data.draw(st.sampled_from(routes(app)), label="route")
    value = data.draw(st.one_of(st.just(""), hostile_text().map(lambda t: "~" + t)), label="arg")
    path = fill(rule, flow.session_id, value)
    method = data.draw(st.one_of(st.sampled_from(methods), st.sampled_from(METHODS)),
                       label="method")
    query = data.draw(hostile_fields(), label="query")
    form = data.draw(hostile_fields(), label="form")
    if data.draw(st.booleans(), label="with token"):
        form["csrf_token"] = flow.csrf
    headers = {}
    if data.draw(st.booleans(), label="htmx"):
        headers["HX-Request"] = "true"
        # (No line breaks: no HTTP client can send them in a header.)
        headers["HX-Current-URL"] = re.sub(r"[\r\n]", "", data.draw(hostile_text(),
                                                                   label="current url"))
    kind = data.draw(st.sampled_from(["form", "json", "raw"]), label="body kind")
    client = app.test_client()
    try:
        if kind == "form" or method == "GET":
            response = client.open(path, method=method, query_string=query, data=form,
                                   headers=headers)
        elif kind == "json":
            response = client.open(path, method=method, query_string=query,
                                   data=json.dumps(form), headers={
                                       **headers, "Content-Type": "application/json"})
        else:
            response = client.open(path, method=method, data=LONE_SURROGATE_JSON.encode(),
                                   headers={**headers, "Content-Type": "application/json",
                                            "x-signature": "0" * 64})
    except UnicodeEncodeError:
        return      # a lone surrogate the test client itself cannot put in a request
    check(app, flow, secrets, captured, response, path)
    assert order_count(app) == orders_before, (path, "an order created from hostile input")
