"""Request signing (upstream-notes 1), checked against an HMAC computed here independently."""
from __future__ import annotations

import base64
import hashlib
import hmac

import pytest
import responses

from checkout.errors import ConfigurationError
from checkout.upstream import UpstreamClient, signing
from checkout.upstream.signing import Credentials, decode_secret, sign

BASE = "https://upstream.test"
KEY = bytes(range(200, 232))                        # 32 bytes; its Base64 has '+' and '/'
SECRET_PADDED = base64.b64encode(KEY).decode()      # ends with '='
SECRET = SECRET_PADDED.rstrip("=")                  # as dashboards show it: unpadded
CLIENT_ID = "merchant-client-4242"


def expected_signature(key: bytes, timestamp: int | str, endpoint: str) -> str:
    message = f"{timestamp}:{endpoint}".encode()
    return base64.b64encode(hmac.new(key, message, hashlib.sha256).digest()).decode()


def test_known_vector_from_an_unpadded_secret():
    assert SECRET != SECRET_PADDED
    endpoint = "/api/offramp/limits?type=mobile_money&country=KE"
    got = sign(SECRET, 1_700_000_000_123, endpoint)
    assert got == expected_signature(KEY, 1_700_000_000_123, endpoint)
    # Pinned so that a change in the construction (message layout, key decoding) cannot hide.
    assert got == expected_signature(base64.b64decode(SECRET_PADDED), "1700000000123", endpoint)


def test_sandbox_default_secret_decodes_without_padding():
    from checkout.sandbox.credentials import CLIENT_SECRET as SANDBOX_CLIENT_SECRET

    assert len(SANDBOX_CLIENT_SECRET) % 4 != 0       # the point: it needs padding restored
    key = decode_secret(SANDBOX_CLIENT_SECRET)
    assert key == base64.b64decode(SANDBOX_CLIENT_SECRET + "=" * (-len(SANDBOX_CLIENT_SECRET) % 4))


def test_padded_unpadded_and_urlsafe_secrets_give_the_same_key():
    urlsafe = base64.urlsafe_b64encode(KEY).decode().rstrip("=")
    assert "-" in urlsafe or "_" in urlsafe
    assert decode_secret(SECRET) == decode_secret(SECRET_PADDED) == decode_secret(urlsafe) == KEY
    assert decode_secret(f"  {SECRET}\n") == KEY     # pasted with whitespace


@pytest.mark.parametrize("bad", ["", "   ", "abc$def", "ab+c-d", "abcde"])
def test_malformed_secret_fails_at_start_up_without_quoting_it(bad):
    with pytest.raises(ConfigurationError) as info:
        UpstreamClient(BASE, client_id=CLIENT_ID, client_secret=bad)
    if bad.strip():
        assert bad.strip() not in str(info.value)


def test_signature_depends_on_every_part():
    endpoint = "/api/onramp/limits?network=CELO&countryIsoCode=KE"
    base = sign(SECRET, 1, endpoint)
    assert sign(SECRET, 2, endpoint) != base
    assert sign(SECRET, 1, "/api/onramp/limits?countryIsoCode=KE&network=CELO") != base
    assert sign(base64.b64encode(b"another key").decode(), 1, endpoint) != base


def test_headers_without_secret_carry_only_the_client_id():
    assert Credentials(CLIENT_ID).headers("/api/onramp/assets") == {"x-client-id": CLIENT_ID}


def test_headers_with_secret():
    headers = Credentials(CLIENT_ID, SECRET).headers("/api/onramp/assets", timestamp_ms=1234)
    assert headers == {
        "x-client-id": CLIENT_ID,
        "x-timestamp": "1234",
        "x-signature": expected_signature(KEY, 1234, "/api/onramp/assets"),
    }


def test_credentials_never_show_themselves():
    credentials = Credentials(CLIENT_ID, SECRET)
    for text in (repr(credentials), str(credentials)):
        assert CLIENT_ID not in text and SECRET not in text
    assert credentials.redact(f"client {CLIENT_ID} secret {SECRET}") == \
        "client <redacted> secret <redacted>"


@responses.activate
def test_signature_covers_the_query_exactly_as_sent():
    responses.add(responses.GET, f"{BASE}/api/onramp/orders", json={"list": [], "nextCursor": ""})
    client = UpstreamClient(BASE, client_id=CLIENT_ID, client_secret=SECRET)
    client.onramp_orders(limit=5, cursor="c/1+2", user_email="a+b@example.com",
                         network="CELO")
    sent = responses.calls[0].request
    # The caller's order, encoded once; '+', '@' and '/' escaped the same way on the wire.
    assert sent.path_url == ("/api/onramp/orders?cursor=c%2F1%2B2&limit=5"
                             "&userEmail=a%2Bb%40example.com&network=CELO")
    timestamp = sent.headers["x-timestamp"]
    assert sent.headers["x-signature"] == expected_signature(KEY, timestamp, sent.path_url)
    assert sent.headers["x-client-id"] == CLIENT_ID


@responses.activate
def test_path_prefix_of_the_base_url_is_signed_too():
    responses.add(responses.GET, f"{BASE}/v2/api/onramp/assets", json=[])
    client = UpstreamClient(f"{BASE}/v2/", client_id=CLIENT_ID, client_secret=SECRET)
    client.onramp_assets()
    sent = responses.calls[0].request
    assert sent.path_url == "/v2/api/onramp/assets"
    assert sent.headers["x-signature"] == expected_signature(
        KEY, sent.headers["x-timestamp"], "/v2/api/onramp/assets")


@responses.activate
def test_each_retry_is_signed_again_with_a_fresh_timestamp(monkeypatch):
    clock = iter([1_000, 2_000, 3_000])
    monkeypatch.setattr(signing, "now_ms", lambda: next(clock))
    url = f"{BASE}/api/onramp/limits"
    responses.add(responses.GET, url, status=503)
    responses.add(responses.GET, url, status=502)
    responses.add(responses.GET, url, json={"minUsd": 1, "maxUsd": 500, "minLocalCurrency": 130,
                                            "maxLocalCurrency": 65000})
    client = UpstreamClient(BASE, client_id=CLIENT_ID, client_secret=SECRET)
    client.transport.sleep = lambda seconds: None
    client.onramp_limits(network="CELO", country_iso_code="KE", payment_channel="mobile_money")
    sent = [call.request for call in responses.calls]
    assert [r.headers["x-timestamp"] for r in sent] == ["1000", "2000", "3000"]
    for request in sent:
        assert request.path_url == sent[0].path_url
        assert request.headers["x-signature"] == expected_signature(
            KEY, request.headers["x-timestamp"], request.path_url)
    assert len({r.headers["x-signature"] for r in sent}) == 3


@responses.activate
def test_unsigned_client_sends_no_timestamp_or_signature():
    responses.add(responses.GET, f"{BASE}/api/onramp/assets", json=[])
    UpstreamClient(BASE, client_id=CLIENT_ID).onramp_assets()
    headers = responses.calls[0].request.headers
    assert headers["x-client-id"] == CLIENT_ID
    assert "x-timestamp" not in headers and "x-signature" not in headers
