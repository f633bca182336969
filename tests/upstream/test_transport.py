"""The transport: safe retries, one error mapping, timeouts, and credentials kept out of sight."""
from __future__ import annotations

import json
import logging
import socket
import time
from decimal import Decimal

import pytest
import requests
import responses

from checkout import errors
from checkout.upstream import UpstreamClient
from checkout.upstream.transport import (
    RATE_LIMIT_MAX_WAIT,
    RATE_LIMIT_WAIT,
    Backoff,
    encode_body,
    encode_query,
    error_for,
)

from ..support.clock import Clock

BASE = "https://upstream.test"
CLIENT_ID = "merchant-id-7Hq2xZ"
SECRET = "bWVyY2hhbnQtc2VjcmV0LWtleS1ieXRlcy0wMDAx"
LIMITS = {"minUsd": 1, "maxUsd": 500, "minLocalCurrency": 130, "maxLocalCurrency": 65000}
ORDER = {"_id": "ord_1", "orderId": "ord_1", "status": "swap_initiated"}


@pytest.fixture
def sleeps() -> list[float]:
    return []


@pytest.fixture
def client(sleeps) -> UpstreamClient:
    client = UpstreamClient(BASE, client_id=CLIENT_ID, client_secret=SECRET, retries=3)
    client.transport.sleep = sleeps.append
    return client


def limits(client: UpstreamClient):
    return client.onramp_limits(network="CELO", country_iso_code="KE",
                                payment_channel="mobile_money")


def create_order(client: UpstreamClient):
    return client.onramp_create_order(quote_id="q1", network="CELO", asset="USDT", amount=1000,
                                      currency="local", email="buyer@example.com",
                                      user_ip="203.0.113.9")


# -- retries -------------------------------------------------------------------------------


@responses.activate
@pytest.mark.parametrize("status", [502, 503, 504])
def test_get_is_retried_on_gateway_errors(client, sleeps, status):
    url = f"{BASE}/api/onramp/limits"
    responses.add(responses.GET, url, status=status)
    responses.add(responses.GET, url, status=status)
    responses.add(responses.GET, url, json=LIMITS)
    assert limits(client).max_usd == Decimal(500)
    assert len(responses.calls) == 3
    assert len(sleeps) == 2


@responses.activate
@pytest.mark.parametrize("failure", [requests.ConnectionError("refused"),
                                     requests.ConnectTimeout("connect")])
def test_get_is_retried_on_connection_errors(client, failure):
    url = f"{BASE}/api/onramp/limits"
    responses.add(responses.GET, url, body=failure)
    responses.add(responses.GET, url, json=LIMITS)
    assert limits(client).min_local_currency == Decimal(130)
    assert len(responses.calls) == 2


@responses.activate
def test_get_is_not_retried_after_a_read_timeout(client):
    # The upstream has the request and is slow; a user is waiting: fail now, do not wait again.
    url = f"{BASE}/api/onramp/limits"
    responses.add(responses.GET, url, body=requests.ReadTimeout("read"))
    responses.add(responses.GET, url, json=LIMITS)
    with pytest.raises(errors.UpstreamTimeout):
        limits(client)
    assert len(responses.calls) == 1


@responses.activate
def test_get_gives_up_after_the_configured_retries(client, sleeps):
    responses.add(responses.GET, f"{BASE}/api/onramp/limits", status=503,
                  json={"message": "maintenance"})
    with pytest.raises(errors.UpstreamUnavailable) as info:
        limits(client)
    assert len(responses.calls) == 4                 # the first try and 3 retries
    assert info.value.status == 503 and info.value.message == "maintenance"
    assert info.value.retryable
    assert len(sleeps) == 3 and all(0 < s <= Backoff().cap for s in sleeps)


@responses.activate
def test_retries_zero_means_one_attempt(sleeps):
    client = UpstreamClient(BASE, client_id=CLIENT_ID, retries=0)
    client.transport.sleep = sleeps.append
    responses.add(responses.GET, f"{BASE}/api/onramp/limits", status=503)
    with pytest.raises(errors.UpstreamUnavailable):
        limits(client)
    assert len(responses.calls) == 1 and sleeps == []


@responses.activate
@pytest.mark.parametrize("status", [400, 401, 403, 404, 429, 500])
def test_get_is_not_retried_on_other_statuses(client, status):
    responses.add(responses.GET, f"{BASE}/api/onramp/limits", status=status, json={})
    with pytest.raises(errors.UpstreamError):
        limits(client)
    assert len(responses.calls) == 1


@responses.activate
@pytest.mark.parametrize("status", [502, 503, 504])
def test_post_is_never_retried_on_gateway_errors(client, sleeps, status):
    responses.add(responses.POST, f"{BASE}/api/onramp/order/create", status=status)
    responses.add(responses.POST, f"{BASE}/api/onramp/order/create", json=ORDER)
    with pytest.raises(errors.UpstreamUnavailable):
        create_order(client)
    assert len(responses.calls) == 1 and sleeps == []


@responses.activate
@pytest.mark.parametrize("failure, error", [
    (requests.ConnectionError("reset"), errors.UpstreamUnavailable),
    (requests.ReadTimeout("read"), errors.UpstreamTimeout),
    (requests.ConnectTimeout("connect"), errors.UpstreamTimeout),
])
def test_post_is_never_retried_on_connection_errors(client, failure, error):
    responses.add(responses.POST, f"{BASE}/api/onramp/order/create", body=failure)
    responses.add(responses.POST, f"{BASE}/api/onramp/order/create", json=ORDER)
    with pytest.raises(error) as info:
        create_order(client)
    assert len(responses.calls) == 1
    assert info.value.__cause__ is failure           # wrapped once, cause kept
    assert info.value.method == "POST" and info.value.path == "/api/onramp/order/create"


def test_backoff_grows_with_jitter_and_stays_under_the_cap():
    backoff = Backoff(base=0.5, cap=4.0)
    for attempt, ceiling in [(1, 0.5), (2, 1.0), (3, 2.0), (4, 4.0), (9, 4.0)]:
        delays = {backoff.delay(attempt) for _ in range(50)}
        assert all(ceiling / 2 <= d <= ceiling for d in delays)
        assert len(delays) > 1                       # jittered, not fixed
    assert backoff.delay(1, retry_after=3) >= 3
    assert backoff.delay(1, retry_after=60) <= 4.0


@responses.activate
def test_retry_after_is_honoured_up_to_the_cap(client, sleeps):
    url = f"{BASE}/api/onramp/limits"
    responses.add(responses.GET, url, status=503, headers={"Retry-After": "2"})
    responses.add(responses.GET, url, json=LIMITS)
    limits(client)
    assert sleeps and sleeps[0] >= 2


# -- 429: told to wait -----------------------------------------------------------------------


@pytest.fixture
def clock(client) -> Clock:
    clock = Clock()
    client.transport.waits.clock = clock
    return clock


@responses.activate
@pytest.mark.parametrize("header, wait", [
    ({"Retry-After": "12"}, 12.0),
    ({}, RATE_LIMIT_WAIT),                                  # no hint: our default
    ({"Retry-After": "86400"}, RATE_LIMIT_MAX_WAIT),        # a day: not believed
    ({"Retry-After": "soon"}, RATE_LIMIT_WAIT),
])
def test_a_429_is_not_retried_and_says_how_long_to_wait(client, sleeps, clock, header, wait):
    url = f"{BASE}/api/onramp/limits"
    responses.add(responses.GET, url, status=429, json={"message": "slow down"}, headers=header)
    with pytest.raises(errors.UpstreamRateLimited) as info:
        limits(client)
    assert info.value.retry_after == wait
    assert len(responses.calls) == 1 and sleeps == []


@responses.activate
def test_a_retry_after_date_is_read():
    client = UpstreamClient(BASE, client_id=CLIENT_ID, retries=0)
    later = time.strftime("%a, %d %b %Y %H:%M:%S GMT", time.gmtime(time.time() + 40))
    responses.add(responses.GET, f"{BASE}/api/onramp/limits", status=429,
                  headers={"Retry-After": later})
    with pytest.raises(errors.UpstreamRateLimited) as info:
        limits(client)
    assert 35 <= info.value.retry_after <= 41


@responses.activate
def test_after_a_429_the_endpoint_is_left_alone_until_the_wait_is_over(client, clock, caplog):
    url = f"{BASE}/api/onramp/limits"
    responses.add(responses.GET, url, status=429, headers={"Retry-After": "20"})
    responses.add(responses.GET, url, json=LIMITS)
    responses.add(responses.GET, f"{BASE}/api/onramp/assets", json=[])
    with pytest.raises(errors.UpstreamRateLimited):
        limits(client)
    clock.now += 15
    caplog.set_level(logging.DEBUG, logger="checkout.upstream")
    for _ in range(5):                  # polls, a user pressing again: none is sent
        with pytest.raises(errors.UpstreamRateLimited) as info:
            limits(client)
    assert info.value.retry_after == pytest.approx(5)
    assert len(responses.calls) == 1
    assert "not sent, the upstream asked us to wait" in caplog.text
    client.onramp_assets()              # another endpoint was not limited
    clock.now += 5
    assert limits(client).max_usd == Decimal(500)
    assert len(responses.calls) == 3


@responses.activate
def test_a_429_for_one_order_leaves_every_other_order_alone(client, clock):
    """Receipts and status pages read orders all the time: the upstream refusing one order's read
    must not stop every order's read in the process for up to 15 minutes."""
    url = f"{BASE}/api/onramp/order"
    other = {**ORDER, "_id": "ord_2", "orderId": "ord_2"}
    responses.add(responses.GET, url, status=429, headers={"Retry-After": "600"},
                  match=[responses.matchers.query_param_matcher({"orderId": "ord_1"})])
    responses.add(responses.GET, url, json=other,
                  match=[responses.matchers.query_param_matcher({"orderId": "ord_2"})])
    responses.add(responses.POST, f"{BASE}/api/onramp/order/confirm", body="order confirmed")
    with pytest.raises(errors.UpstreamRateLimited):
        client.onramp_order(order_id="ord_1")
    with pytest.raises(errors.UpstreamRateLimited) as again:     # that one waits, not sent
        client.onramp_order(order_id="ord_1")
    assert again.value.retry_after == pytest.approx(600)
    assert len(responses.calls) == 1
    assert client.onramp_order(order_id="ord_2").id == "ord_2"   # another order is read
    client.onramp_confirm_order(order_id="ord_1")                # and another endpoint
    assert len(responses.calls) == 3


# -- status and body mapping -----------------------------------------------------------------


@pytest.mark.parametrize("status, body, expected", [
    (400, {"message": "The order is expired"}, errors.OrderExpired),
    (400, {"message": "Quote has expired"}, errors.OrderExpired),
    (400, {"message": "amount is below the minimum"}, errors.UpstreamBadRequest),
    (400, {"message": "the link expired"}, errors.UpstreamBadRequest),
    (400, None, errors.UpstreamBadRequest),
    (401, {"message": "Signature is invalid"}, errors.UpstreamAuthError),
    (403, {"message": "This feature is not available for this merchant, please contact support"},
     errors.FeatureNotAvailable),
    (404, {"code": "ORDER_NOT_AVAILABLE"}, errors.OrderNotAvailable),
    (404, {"message": "Cannot GET /api/nope"}, errors.UpstreamNotFound),
    (404, "<html>not found</html>", errors.UpstreamNotFound),
    (409, {"message": "conflict"}, errors.UpstreamRejected),
    (429, {"message": "slow down"}, errors.UpstreamRateLimited),
    (500, {"message": "boom"}, errors.UpstreamUnavailable),
    (502, None, errors.UpstreamUnavailable),
    (503, "Service Unavailable", errors.UpstreamUnavailable),
    (504, None, errors.UpstreamUnavailable),
    (302, None, errors.UpstreamBadResponse),
])
def test_error_for_maps_each_status(status, body, expected):
    error = error_for(status, body, "GET", "/api/onramp/order")
    assert type(error) is expected
    assert error.status == status and error.method == "GET" and error.path == "/api/onramp/order"
    assert error.body == body


def test_error_for_keeps_the_upstream_message_and_code():
    error = error_for(404, {"code": "ORDER_NOT_AVAILABLE"}, "GET", "/api/onramp/order")
    assert error.code == "ORDER_NOT_AVAILABLE" and str(error) == "ORDER_NOT_AVAILABLE"
    error = error_for(400, {"message": "The order is expired"}, "POST", "/api/onramp/order/otp")
    assert str(error) == "The order is expired" and isinstance(error, errors.UpstreamBadRequest)
    assert error.body == {"message": "The order is expired"}
    assert "HTTP 401" in str(error_for(401, None, "GET", "/x"))


@pytest.mark.parametrize("path, body, expected", [
    # The creates consume a quote or an offer: "expired" there means quote again.
    ("/api/onramp/order/create", {"message": "The order is expired"}, errors.QuoteExpired),
    ("/api/onramp/order/create", {"message": "The quote is expired"}, errors.QuoteExpired),
    ("/api/offramp/create-order", {"message": "The order is expired"}, errors.QuoteExpired),
    ("/api/offramp/create-order", {"code": "OFFER_EXPIRED"}, errors.QuoteExpired),
    # Anywhere else the order itself is gone: re-quoting would not revive it.
    ("/api/onramp/order/otp", {"message": "The order is expired: too many wrong OTP attempts"},
     errors.OrderExpired),
    ("/api/onramp/order/confirm", {"message": "The order is expired"}, errors.OrderExpired),
    ("/api/onramp/order/retry", {"code": "ORDER_EXPIRED"}, errors.OrderExpired),
    ("/api/offramp/confirm-order", {"message": "The order is expired"}, errors.OrderExpired),
    ("/api/onramp/order?orderId=abc", {"message": "The order is expired"}, errors.OrderExpired),
    ("/api/onramp/order/create", {"message": "amount is below the minimum"},
     errors.UpstreamBadRequest),
])
def test_expired_means_quote_again_only_on_a_create(path, body, expected):
    error = error_for(400, body, "POST", path)
    assert type(error) is expected and error.status == 400
    assert not (isinstance(error, errors.QuoteExpired) and isinstance(error, errors.OrderExpired))


@responses.activate
def test_an_otp_lockout_is_order_expired_not_quote_expired(client):
    responses.add(responses.POST, f"{BASE}/api/onramp/order/otp", status=400,
                  json={"message": "The order is expired: too many wrong OTP attempts"})
    with pytest.raises(errors.OrderExpired) as info:
        client.onramp_submit_otp("ord_1", "999999")
    assert not isinstance(info.value, errors.QuoteExpired)


@responses.activate
@pytest.mark.parametrize("status, body, expected", [
    (400, {"message": "The order is expired"}, errors.QuoteExpired),     # on the create
    (401, {"message": "Signature is invalid"}, errors.UpstreamAuthError),
    (403, {"message": "not for you"}, errors.FeatureNotAvailable),
    (404, {"code": "ORDER_NOT_AVAILABLE"}, errors.OrderNotAvailable),
    (404, {"message": "no route"}, errors.UpstreamNotFound),
    (429, {}, errors.UpstreamRateLimited),
    (500, {}, errors.UpstreamUnavailable),
])
def test_the_client_raises_the_mapped_class(client, status, body, expected):
    responses.add(responses.POST, f"{BASE}/api/onramp/order/create", status=status, json=body)
    with pytest.raises(expected) as info:
        create_order(client)
    assert info.value.status == status


@responses.activate
def test_redirects_are_not_followed(client):
    # Following one would send x-client-id and the signature to wherever it points.
    responses.add(responses.GET, f"{BASE}/api/onramp/assets", status=302,
                  headers={"Location": "https://elsewhere.test/steal"})
    with pytest.raises(errors.UpstreamBadResponse):
        client.onramp_assets()
    assert [c.request.url for c in responses.calls] == [f"{BASE}/api/onramp/assets"]


@responses.activate
@pytest.mark.parametrize("body", ["<html>oops</html>", ""])
def test_a_2xx_that_is_not_json_is_a_bad_response(client, body):
    responses.add(responses.GET, f"{BASE}/api/onramp/assets", body=body,
                  content_type="text/html")
    with pytest.raises(errors.UpstreamBadResponse) as info:
        client.onramp_assets()
    assert info.value.status == 200 and info.value.path == "/api/onramp/assets"


@responses.activate
def test_a_2xx_json_of_the_wrong_shape_is_a_bad_response_naming_the_call(client):
    responses.add(responses.GET, f"{BASE}/api/onramp/best-offer", json={"offer": {}})
    with pytest.raises(errors.UpstreamBadResponse) as info:
        client.onramp_best_offer(network="CELO", asset="USDT", currency="local", amount=100,
                                 country_iso_code="KE", payment_channel="mobile_money")
    assert "quoteId" in str(info.value)
    assert info.value.method == "GET" and info.value.path == "/api/onramp/best-offer"


@responses.activate
@pytest.mark.parametrize("body, content_type", [
    ("order confirmed", "text/plain"),
    ('"order confirmed"', "application/json"),
    ('{"message": "order confirmed"}', "application/json"),
    ("", "text/plain"),
])
def test_confirm_accepts_text_or_json(client, body, content_type):
    responses.add(responses.POST, f"{BASE}/api/onramp/order/confirm", body=body,
                  content_type=content_type)
    assert client.onramp_confirm_order("ord_1") is None
    assert json.loads(responses.calls[0].request.body) == {"orderId": "ord_1"}


@responses.activate
def test_confirm_still_raises_on_errors(client):
    responses.add(responses.POST, f"{BASE}/api/onramp/order/confirm", status=400,
                  json={"message": "The order is expired"})
    with pytest.raises(errors.OrderExpired):
        client.onramp_confirm_order("ord_1")


# -- timeouts against a real socket ------------------------------------------------------------


def test_read_timeout_is_explicit_and_raises_upstream_timeout(silent_server, sleeps):
    url, accepted = silent_server
    client = UpstreamClient(url, client_id=CLIENT_ID, timeout=(1.0, 0.2), retries=1)
    client.transport.sleep = sleeps.append
    started = time.monotonic()
    with pytest.raises(errors.UpstreamTimeout) as info:
        limits(client)
    assert time.monotonic() - started < 2.0
    assert isinstance(info.value.__cause__, requests.Timeout)
    assert len(accepted) == 1 and sleeps == []      # a read timeout is not retried, even for a GET


def test_post_read_timeout_is_not_retried(silent_server):
    url, accepted = silent_server
    client = UpstreamClient(url, client_id=CLIENT_ID, timeout=(1.0, 0.2), retries=3)
    with pytest.raises(errors.UpstreamTimeout):
        create_order(client)
    assert len(accepted) == 1


def test_connection_refused_is_unavailable(sleeps):
    with socket.socket() as probe:                   # a port that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = UpstreamClient(f"http://127.0.0.1:{port}", client_id=CLIENT_ID, retries=2)
    client.transport.sleep = sleeps.append
    with pytest.raises(errors.UpstreamUnavailable) as info:
        client.onramp_assets()
    assert not isinstance(info.value, errors.UpstreamTimeout)
    assert isinstance(info.value.__cause__, requests.ConnectionError)
    assert len(sleeps) == 2


def test_timeout_must_be_a_connect_read_pair():
    with pytest.raises((TypeError, ValueError)):
        UpstreamClient(BASE, client_id=CLIENT_ID, timeout=5)  # type: ignore[arg-type]
    client = UpstreamClient(BASE, client_id=CLIENT_ID, timeout=(2, 9))
    assert client.transport.timeout == (2.0, 9.0)


# -- credentials stay out of errors, reprs and logs --------------------------------------------


def _chain(error: BaseException):
    while error is not None:
        yield error
        error = error.__cause__ or error.__context__


def assert_no_credentials(text: str) -> None:
    assert CLIENT_ID not in text
    assert SECRET not in text


@responses.activate
def test_errors_and_their_chains_never_show_credentials(client, caplog):
    caplog.set_level(logging.DEBUG)
    url = f"{BASE}/api/onramp/limits"
    # An upstream that echoes the client id back in its error body.
    responses.add(responses.GET, url, status=401,
                  json={"message": f"Signature is invalid for client {CLIENT_ID}",
                        "clientId": CLIENT_ID})
    responses.add(responses.POST, f"{BASE}/api/onramp/order/create",
                  body=requests.ConnectionError(f"could not reach {BASE}"))
    responses.add(responses.GET, f"{BASE}/api/onramp/assets",
                  body=requests.ReadTimeout("read timed out"))
    raised = []
    for call in (lambda: limits(client), lambda: create_order(client),
                 lambda: client.onramp_assets()):
        with pytest.raises(errors.UpstreamError) as info:
            call()
        raised.append(info.value)
    assert isinstance(raised[0], errors.UpstreamAuthError)
    assert "<redacted>" in str(raised[0])
    assert raised[0].body["clientId"] == "<redacted>"
    for error in raised:
        for link in _chain(error):
            assert_no_credentials(str(link))
            assert_no_credentials(repr(link))
            assert_no_credentials(repr(getattr(link, "body", None)))
    assert_no_credentials(caplog.text)
    for record in caplog.records:
        assert_no_credentials(record.getMessage())


@responses.activate
def test_logs_one_line_per_call_without_query_headers_or_signature(client, caplog):
    caplog.set_level(logging.DEBUG, logger="checkout.upstream")
    responses.add(responses.GET, f"{BASE}/api/onramp/orders", json={"list": [], "nextCursor": ""})
    client.onramp_orders(limit=10, user_email="buyer@example.com", address="0xabc")
    records = [r for r in caplog.records if r.name == "checkout.upstream"]
    assert len(records) == 1
    line = records[0].getMessage()
    assert "GET" in line and "/api/onramp/orders" in line and "200" in line and "ms" in line
    sent = responses.calls[0].request
    for secret_ish in ("buyer", "example.com", "0xabc", "?", sent.headers["x-signature"],
                       sent.headers["x-timestamp"], CLIENT_ID):
        assert secret_ish not in line


@responses.activate
def test_failed_attempts_log_the_exception_class_only(client, caplog):
    caplog.set_level(logging.DEBUG, logger="checkout.upstream")
    responses.add(responses.GET, f"{BASE}/api/kyc/state",
                  body=requests.ConnectionError("failed for /api/kyc/state?email=x%40y.z"))
    with pytest.raises(errors.UpstreamUnavailable):
        client.kyc_state(phone_number="2348012345678", email="x@y.z")
    assert "ConnectionError" in caplog.text
    assert "x%40y.z" not in caplog.text and "x@y.z" not in caplog.text


def test_client_repr_shows_the_base_url_only():
    client = UpstreamClient(BASE, client_id=CLIENT_ID, client_secret=SECRET)
    assert repr(client) == f"UpstreamClient(base_url='{BASE}')"
    assert_no_credentials(repr(client.transport.credentials))
    assert isinstance(client.http, requests.Session)
    assert client.transport.session is client.http


# -- encoding --------------------------------------------------------------------------------


def test_query_encoding_is_stable_and_spells_values_the_upstream_way():
    query = encode_query({"amount": Decimal("1E+3"), "fee": 0.1, "includeLimits": False,
                          "limit": 20, "skip": None, "email": "a b+c@d.e"})
    assert query == "amount=1000&fee=0.1&includeLimits=false&limit=20&email=a%20b%2Bc%40d.e"
    assert encode_query({}) == "" and encode_query(None) == ""
    with pytest.raises(ValueError):
        encode_query({"amount": Decimal("NaN")})
    with pytest.raises(TypeError):
        encode_query({"when": object()})


def test_body_encoding_leaves_out_none_and_sends_numbers():
    body = json.loads(encode_body({"amount": Decimal("1500.25"), "whole": Decimal("20.00"),
                                   "memo": None, "extraFields": {"phoneNumber": "254700000000"}}))
    assert body == {"amount": 1500.25, "whole": 20,
                    "extraFields": {"phoneNumber": "254700000000"}}
    assert isinstance(body["whole"], int)


@responses.activate
def test_create_order_body_is_camel_case_without_nones(client):
    responses.add(responses.POST, f"{BASE}/api/onramp/order/create", json=ORDER)
    order = client.onramp_create_order(
        quote_id="q1", network="CELO", asset="USDT", amount=Decimal("1000.50"), currency="local",
        email="buyer@example.com", user_ip="203.0.113.9", order_params="shop-42",
        extra_fields={"phoneNumber": "254110611756"}, webhook_url="https://shop.test/hook")
    assert order.id == "ord_1"
    sent = responses.calls[0].request
    assert sent.headers["Content-Type"] == "application/json"
    assert json.loads(sent.body) == {
        "quoteId": "q1", "network": "CELO", "asset": "USDT", "amount": 1000.5,
        "currency": "local", "email": "buyer@example.com", "userIp": "203.0.113.9",
        "orderParams": "shop-42", "extraFields": {"phoneNumber": "254110611756"},
        "webhookUrl": "https://shop.test/hook"}


# -- client conveniences -----------------------------------------------------------------------


@pytest.mark.parametrize("limit", [0, 101, -1, True, 2.5, "10"])
def test_limit_is_checked_before_any_request(client, limit):
    with pytest.raises(ValueError):
        client.onramp_orders(limit=limit)
    with pytest.raises(ValueError):
        client.offramp_orders(limit=limit)
    with pytest.raises(ValueError):
        client.legacy_orders(limit=limit)


def test_unknown_order_filters_are_refused(client):
    with pytest.raises(TypeError, match="user_mail"):
        client.onramp_orders(limit=10, user_mail="x@y.z")


@responses.activate
def test_iterators_walk_next_cursor_to_the_end(client):
    url = f"{BASE}/api/offramp/orders"
    pages = [({"list": [{"_id": "a"}, {"_id": "b"}], "nextCursor": "p2"}, None),
             ({"list": [{"_id": "c"}], "nextCursor": "p3"}, "p2"),
             ({"list": [{"_id": "d"}], "nextCursor": ""}, "p3")]
    for body, _ in pages:
        responses.add(responses.GET, url, json=body)
    ids = [order.id for order in client.iter_offramp_orders(page_size=2, status="initiated")]
    assert ids == ["a", "b", "c", "d"]
    sent = [call.request.path_url for call in responses.calls]
    assert sent == ["/api/offramp/orders?limit=2&status=initiated",
                    "/api/offramp/orders?cursor=p2&limit=2&status=initiated",
                    "/api/offramp/orders?cursor=p3&limit=2&status=initiated"]


@responses.activate
def test_iterators_stop_on_an_empty_page_even_with_a_cursor(client):
    url = f"{BASE}/api/onramp/orders"
    responses.add(responses.GET, url, json={"list": [ORDER], "nextCursor": "p2"})
    responses.add(responses.GET, url, json={"list": [], "nextCursor": "p3"})
    assert [o.id for o in client.iter_onramp_orders()] == ["ord_1"]
    assert len(responses.calls) == 2


@responses.activate
def test_iterators_refuse_a_cursor_that_comes_round_again(client):
    url = f"{BASE}/api/pay-widget-merchant/orders"
    responses.add(responses.GET, url, json={"list": [{"_id": "x"}], "nextCursor": "same"})
    with pytest.raises(errors.UpstreamBadResponse):
        list(client.iter_legacy_orders())
    assert len(responses.calls) == 2


@responses.activate
def test_offramp_order_id_is_one_path_segment(client):
    responses.add(responses.GET, f"{BASE}/api/offramp/order/a%2Fb%3Fc", json={"_id": "a/b?c"})
    assert client.offramp_order("a/b?c").id == "a/b?c"
    assert responses.calls[0].request.path_url == "/api/offramp/order/a%2Fb%3Fc"


@responses.activate
def test_otp_reads_the_order_when_the_answer_is_not_one(client):
    responses.add(responses.POST, f"{BASE}/api/onramp/order/otp", json={"success": True})
    responses.add(responses.GET, f"{BASE}/api/onramp/order", json=ORDER)
    order = client.onramp_submit_otp("ord_1", "123456")
    assert order.id == "ord_1"
    assert responses.calls[1].request.path_url == "/api/onramp/order?orderId=ord_1"


@responses.activate
def test_retry_push_uses_the_order_it_gets_back(client):
    responses.add(responses.POST, f"{BASE}/api/onramp/order/retry",
                  json={**ORDER, "transferInstructions": {"type": "stk_push",
                                                         "intermediateActionAttempts": 2}})
    order = client.onramp_retry_push("ord_1")
    assert order.transfer_instructions.intermediate_action_attempts == 2
    assert len(responses.calls) == 1


def test_order_lookup_needs_an_id_or_params(client):
    with pytest.raises(ValueError):
        client.onramp_order()


def test_kyc_state_requires_a_phone_number_as_the_upstream_does(client):
    """The sandbox refuses ``/api/kyc/state`` without ``phoneNumber``: the client must not offer
    an email-only call that can only fail."""
    with pytest.raises(TypeError):
        client.kyc_state(email="x@y.z")                        # phone_number is required
    with pytest.raises(TypeError):
        client.kyc_state("2348012345678")                      # and keyword-only
    with pytest.raises(ValueError):
        client.kyc_state(phone_number="", email="x@y.z")


@responses.activate
def test_the_shared_session_keeps_no_cookies(client):
    url = f"{BASE}/api/onramp/assets"
    responses.add(responses.GET, url, json=[], headers={"Set-Cookie": "sid=shopper-1; Path=/"})
    responses.add(responses.GET, url, json=[])
    client.onramp_assets()
    client.onramp_assets()
    assert "Cookie" not in responses.calls[1].request.headers
    assert len(client.http.cookies) == 0
    assert "checkout" in responses.calls[0].request.headers["User-Agent"]


@responses.activate
@pytest.mark.parametrize("amount", ["1500.50", 1500.5, Decimal("1500.50")])
def test_amounts_go_out_as_json_numbers_whatever_their_python_type(client, amount):
    responses.add(responses.POST, f"{BASE}/api/offramp/create-order", json={"_id": "off-1"})
    client.offramp_create_order(offer_id="o", payment_type="CRYPTO_WALLET", network="CELO",
                                asset="USDT", address="0xabc", currency="usd", amount=amount)
    assert json.loads(responses.calls[0].request.body)["amount"] == 1500.5


@pytest.mark.parametrize("amount", [float("nan"), "Infinity", True, "12,5"])
def test_amounts_must_be_finite_numbers(client, amount):
    with pytest.raises((ValueError, TypeError)):
        client.onramp_best_offer(network="CELO", asset="USDT", currency="local", amount=amount,
                                 country_iso_code="KE", payment_channel="mobile_money")


# -- metrics -------------------------------------------------------------------------------

@responses.activate
def test_each_attempt_is_told_to_on_call_by_endpoint_template_and_status(sleeps):
    calls: list[tuple[str, str, str, float]] = []
    client = UpstreamClient(BASE, client_id=CLIENT_ID, retries=3,
                            on_call=lambda *call: calls.append(call))
    client.transport.sleep = sleeps.append
    limits_url = f"{BASE}/api/onramp/limits"
    responses.add(responses.GET, limits_url, status=503)
    responses.add(responses.GET, limits_url, body=requests.ConnectionError("refused"))
    responses.add(responses.GET, limits_url, json=LIMITS)
    responses.add(responses.GET, f"{BASE}/api/offramp/order/ord%2F7", status=404, json={})
    responses.add(responses.POST, f"{BASE}/api/onramp/order/create",
                  body=requests.ReadTimeout("read"))
    limits(client)
    with pytest.raises(errors.UpstreamNotFound):
        client.offramp_order("ord/7")
    with pytest.raises(errors.UpstreamTimeout):
        create_order(client)
    assert [call[:3] for call in calls] == [
        ("GET", "/api/onramp/limits", "503"),
        ("GET", "/api/onramp/limits", "unreachable"),
        ("GET", "/api/onramp/limits", "200"),
        ("GET", "/api/offramp/order/{id}", "404"),
        ("POST", "/api/onramp/order/create", "timeout"),
    ]
    assert all(seconds >= 0 for *_, seconds in calls)
