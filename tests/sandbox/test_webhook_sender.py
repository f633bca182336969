"""The sandbox webhook sender against a real HTTP receiver on 127.0.0.1 (spec 6.3 and 6.4).

On the sandbox's manual clock: each retry's wait passes at once, as soon as the attempt before it
has set it (:func:`delivered`), so the whole 10-attempt schedule (511 sandbox seconds) takes no time.
Private-address cases use an injected resolver and a session that fails the test if it is ever used,
so nothing but loopback is ever contacted.
"""
from __future__ import annotations

import datetime as dt
import hashlib
import ipaddress
import json
import socket
import ssl
from types import SimpleNamespace

import pytest
import requests
from flask import Flask

from checkout.sandbox.clock import ManualClock, Scheduler
from checkout.sandbox.console import console_bp
from checkout.sandbox.webhooks import (
    WebhookSender,
    auth_payload,
    encode_payload,
    kyc_payload,
    order_status_payload,
    retry_waits,
)

from ..support.sandbox_clock import delivered
from ..support.waiting import wait_for
from .webhook_receiver import Receiver

SECRET = "whsec_sandbox_test_secret"
WAIT = 5.0          # real seconds any delivery in these tests may take, at most


def expected_signature(body: bytes, secret: str) -> str:
    """Spec 6.3, written out independently of checkout.signature."""
    inner = hashlib.sha256(secret.encode("utf-8")).hexdigest()
    return hashlib.sha256(body + inner.encode("ascii")).hexdigest()


def resolver_for(*addresses: str):
    """A getaddrinfo stand-in that answers every name with ``addresses`` and counts its calls."""
    calls: list[str] = []

    def resolve(host, port, *args, **kwargs):
        calls.append(host)
        return [(socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "",
                 (a, port)) for a in addresses]

    resolve.calls = calls
    return resolve


class GuardedSession(requests.Session):
    """A session whose every send fails the test (the sender re-mounts adapters, so guard send)."""

    def send(self, request, **kwargs):
        raise AssertionError(f"the sender tried to connect: {request.method} {request.url}")


@pytest.fixture
def scheduler():
    scheduler = Scheduler(ManualClock())
    yield scheduler
    scheduler.shutdown()


@pytest.fixture
def receiver():
    receiver = Receiver()
    yield receiver
    receiver.stop()


@pytest.fixture
def make_sender(scheduler):
    senders: list[WebhookSender] = []

    def make(**overrides) -> WebhookSender:
        options = {"scheduler": scheduler, "allow_loopback": True} | overrides
        sender = WebhookSender(SECRET, **options)
        senders.append(sender)
        return sender

    yield make
    for sender in senders:
        sender.close()


def order_payload(**order_overrides) -> dict:
    order = {
        "_id": "ord_8c1f2a", "userId": "usr_1", "userEmail": "amina@example.com",
        "merchantOrderParams": "cart-1042", "countryIsoCode": "KE", "flow": "regular",
        "type": "on_ramp", "source": "api", "status": "deposit_awaiting",
        "deposit": {"paymentChannel": "mobile_money", "currencyType": "fiat", "currencyCode": "KES",
                    "currencyDetails": {"countryIsoCode": "KE"},
                    "cashout": {"exchangeRate": 129.5, "exchangeRateAfterFees": 126.3,
                                "amountBeforeFees": 1295, "amountAfterFees": 1262.63,
                                "amountBeforeFeesUsd": 10, "amountAfterFeesUsd": 9.75}},
        "payout": {"paymentChannel": "crypto", "currencyType": "crypto", "currencyCode": "USDC",
                   "currencyDetails": {}, "cashout": {}, "transaction": {}},
        "createdAt": "2026-11-22T01:55:00.000Z", "updatedAt": "2026-11-22T01:55:00.000Z",
    }
    order.update(order_overrides)
    return order_status_payload(order, {"latestKycStatus": "approved", "latestKycType": "basic"})


# -- what is sent ----------------------------------------------------------------------------------

def test_signature_covers_the_exact_bytes_received(make_sender, receiver):
    sender = make_sender()
    payload = order_payload(userEmail="zoë@example.com", merchantOrderParams="Café – 🧾 #1")

    delivery = sender.send(receiver.url("/hooks"), payload, order_id="ord_8c1f2a")

    assert delivered(sender, delivery) and delivery.state == "succeeded"
    [got] = receiver.at("/hooks")
    assert got.body == delivery.body == encode_payload(payload)
    assert got.headers["X-Signature"] == expected_signature(got.body, SECRET)
    assert got.headers["Content-Type"] == "application/json"
    assert json.loads(got.body.decode("utf-8")) == payload
    assert b", " not in got.body and b": " not in got.body          # compact
    assert "Café – 🧾 #1".encode() in got.body                        # UTF-8, not \u escapes
    assert expected_signature(got.body, "another secret") != got.headers["X-Signature"]


def test_connects_to_the_checked_address_and_keeps_the_host_name(make_sender, receiver):
    resolver = resolver_for("127.0.0.1")
    sender = make_sender(resolver=resolver)

    # .invalid never resolves for real: only the pinned address can reach the receiver.
    delivery = sender.send(f"http://hooks.shop.invalid:{receiver.port}/hooks?src=sandbox",
                           {"event": "ping"})

    assert delivered(sender, delivery) and delivery.state == "succeeded"
    [got] = receiver.at("/hooks")
    assert got.headers["Host"] == f"hooks.shop.invalid:{receiver.port}"
    assert resolver.calls == ["hooks.shop.invalid"]
    assert delivery.attempts[0].address == "127.0.0.1"


def test_falls_back_to_the_next_address_when_one_refuses_connections(make_sender, receiver):
    # As "localhost" often resolves: ::1 first, while the receiver listens on 127.0.0.1 only.
    sender = make_sender(resolver=resolver_for("::1", "127.0.0.1"))

    delivery = sender.send(f"http://localhost:{receiver.port}/hooks", {"event": "ping"})

    assert delivered(sender, delivery) and delivery.state == "succeeded", delivery.attempts
    [attempt] = delivery.attempts
    assert attempt.address == "127.0.0.1"
    assert len(receiver.at("/hooks")) == 1


# -- retries (spec 6.4) ------------------------------------------------------------------------------

def test_retries_with_doubling_waits_until_a_2xx(make_sender, receiver):
    receiver.script["/flaky"] = [(500, {})] * 3
    sender = make_sender()
    delivery = sender.send(receiver.url("/flaky"), {"event": "ping"})
    assert delivered(sender, delivery)

    assert delivery.state == "succeeded"
    assert [a.status for a in delivery.attempts] == [500, 500, 500, 200]
    assert [a.ok for a in delivery.attempts] == [False, False, False, True]
    assert [a.retry_in for a in delivery.attempts] == [1, 2, 4, None]
    # Each retry set for its wait after the attempt before it (the slack covers the attempt's
    # own request on a slow machine: the clock moved on only once it had ended).
    for attempt in delivery.attempts[:3]:
        scheduled = (attempt.next_attempt_at - attempt.started_at).total_seconds()
        assert attempt.retry_in <= scheduled < attempt.retry_in + 0.9
    assert delivery.attempts[0].result == "HTTP 500 INTERNAL SERVER ERROR"
    assert delivery.attempts[0].response_excerpt == "answer 500"


def test_gives_up_after_ten_attempts(make_sender, receiver):
    receiver.script["/down"] = [(503, {})] * 20
    sender = make_sender()

    delivery = sender.send(receiver.url("/down"), {"event": "ping"})

    assert delivered(sender, delivery)
    assert delivery.state == "failed"
    assert [a.number for a in delivery.attempts] == list(range(1, 11))
    assert [a.retry_in for a in delivery.attempts] == [1, 2, 4, 8, 16, 32, 64, 128, 256, None]
    assert retry_waits(10) == [1, 2, 4, 8, 16, 32, 64, 128, 256]
    got = receiver.at("/down")
    assert len(got) == 10
    assert {r.body for r in got} == {delivery.body}
    assert {r.headers["X-Signature"] for r in got} == {delivery.signature}
    assert sender.drain(1)


@pytest.mark.parametrize("status", [301, 302, 307, 308])
def test_a_redirect_is_a_failed_attempt_and_never_followed(make_sender, receiver, status):
    target = receiver.url("/elsewhere")
    receiver.script["/moved"] = [(status, {"Location": target})] * 3
    sender = make_sender(max_attempts=3)

    delivery = sender.send(receiver.url("/moved"), {"event": "ping"})

    assert delivered(sender, delivery)
    assert delivery.state == "failed"
    assert [a.result for a in delivery.attempts] == [f"redirect refused ({status} to {target})"] * 3
    assert len(receiver.at("/moved")) == 3
    assert receiver.at("/elsewhere") == []


def test_a_slow_receiver_times_out(make_sender, receiver):
    receiver.slow.add("/slow")
    sender = make_sender(timeout=0.2, max_attempts=2)

    delivery = sender.send(receiver.url("/slow"), {"event": "ping"})

    assert delivered(sender, delivery)
    assert delivery.state == "failed"
    assert [a.result for a in delivery.attempts] == ["timeout: no answer within 0.2 s"] * 2
    assert all(a.status is None and 0.2 <= a.duration < 1 for a in delivery.attempts)
    assert len(receiver.at("/slow")) == 2


def test_a_closed_port_is_a_failed_attempt(make_sender):
    with socket.socket() as probe:       # a port that was free a moment ago, nobody listens on it
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    sender = make_sender(max_attempts=2)
    delivery = sender.send(f"http://127.0.0.1:{port}/", {"event": "ping"})

    assert delivered(sender, delivery) and delivery.state == "failed"
    # In plain words, as the console shows it: no class names, no object addresses.
    assert [a.result for a in delivery.attempts] == [
        "connection failed: connection refused (nothing listens at that address and port)"] * 2


def test_a_dns_failure_is_retried(make_sender):
    def broken_dns(host, port, *args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    sender = make_sender(resolver=broken_dns, max_attempts=3, session=GuardedSession())
    delivery = sender.send("https://hooks.shop.invalid/", {"event": "x"})

    assert delivered(sender, delivery) and delivery.state == "failed"
    assert len(delivery.attempts) == 3
    assert delivery.attempts[0].result.startswith("DNS lookup of hooks.shop.invalid failed")


# -- where a webhook may go ----------------------------------------------------------------------------

@pytest.mark.parametrize(("address", "allow_loopback", "reason"), [
    ("10.0.0.5", True, "private"),
    ("192.168.1.20", True, "private"),
    ("172.16.4.4", True, "private"),
    ("169.254.169.254", True, "link-local"),     # cloud metadata
    ("100.64.0.1", True, "shared (CGNAT)"),
    ("0.0.0.0", True, "unspecified"),
    ("224.0.0.1", True, "multicast"),
    ("240.0.0.1", True, "private"),
    ("fd12:3456::1", True, "private"),
    ("fe80::1", True, "link-local"),
    ("fec0::1", True, "site-local"),
    ("::ffff:10.0.0.5", True, "private"),         # IPv4-mapped
    ("64:ff9b::a00:5", True, "private"),          # NAT64 of 10.0.0.5
    ("2002:a00:5::1", True, "private"),           # 6to4 of 10.0.0.5
    ("127.0.0.1", False, "loopback"),
    ("127.3.4.5", False, "loopback"),
    ("::1", False, "loopback"),
    ("::ffff:127.0.0.1", False, "loopback"),
])
def test_internal_addresses_are_refused_without_connecting(make_sender, address, allow_loopback,
                                                           reason):
    sender = make_sender(resolver=resolver_for(address), allow_loopback=allow_loopback,
                         session=GuardedSession())

    delivery = sender.send("https://hooks.shop.invalid/webhooks", {"event": "ping"})

    assert delivered(sender, delivery)
    assert delivery.state == "refused"
    [attempt] = delivery.attempts        # a refusal is final: not retried
    shown = ipaddress.ip_address(address).compressed
    assert attempt.result == f"refused: resolves to {reason} address {shown}"
    assert attempt.status is None and attempt.retry_in is None


def test_the_spec_example_message(make_sender):
    sender = make_sender(resolver=resolver_for("10.0.0.5"), session=GuardedSession())
    delivery = sender.send("https://hooks.shop.invalid/", {"event": "ping"})
    assert delivered(sender, delivery)
    assert delivery.attempts[0].result == "refused: resolves to private address 10.0.0.5"


def test_one_internal_record_among_public_ones_is_enough_to_refuse(make_sender):
    # 203.0.113.x is a documentation range (refused too), so use the resolver's order to prove
    # that every record is checked, not just the first.
    sender = make_sender(resolver=resolver_for("127.0.0.1", "192.168.0.9"), session=GuardedSession())
    delivery = sender.send("https://hooks.shop.invalid/", {"event": "ping"})
    assert delivered(sender, delivery)
    assert delivery.attempts[0].result == "refused: resolves to private address 192.168.0.9"


@pytest.mark.parametrize("url", ["127.0.0.1:9/x", "ftp://127.0.0.1/x", "file:///etc/passwd",
                                 "gopher://127.0.0.1:70/", "http:///nohost", "http://127.0.0.1:99999/"])
def test_only_http_and_https_urls_with_a_host(make_sender, url):
    sender = make_sender(session=GuardedSession())
    delivery = sender.send(url, {"event": "ping"})
    assert delivered(sender, delivery)
    assert delivery.state == "refused"
    assert delivery.attempts[0].result.startswith("refused: ")


def test_ip_literal_urls_are_checked_too(make_sender):
    resolver = resolver_for("127.0.0.1")
    sender = make_sender(resolver=resolver, session=GuardedSession())
    delivery = sender.send("http://[fd00::5]:8080/hooks", {"event": "ping"})
    assert delivered(sender, delivery)
    assert delivery.attempts[0].result == "refused: resolves to private address fd00::5"
    assert resolver.calls == []


# -- https with the address pinned ----------------------------------------------------------------

@pytest.fixture(scope="module")
def tls_files(tmp_path_factory):
    """A self-signed certificate for hooks.shop.invalid, and its key."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "hooks.shop.invalid")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(days=1)).not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName("hooks.shop.invalid")]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    folder = tmp_path_factory.mktemp("tls")
    cert_file, key_file = folder / "cert.pem", folder / "key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return str(cert_file), str(key_file)


@pytest.fixture
def tls_receiver(tls_files):
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*tls_files)
    receiver = Receiver(ssl_context=context)
    yield receiver
    receiver.stop()


def test_https_to_the_pinned_address_checks_the_certificate_for_the_url_name(
        make_sender, tls_receiver, tls_files):
    session = requests.Session()
    session.verify = tls_files[0]
    sender = make_sender(resolver=resolver_for("127.0.0.1"), session=session)

    delivery = sender.send(f"https://hooks.shop.invalid:{tls_receiver.port}/tls", {"event": "ping"})

    assert delivered(sender, delivery) and delivery.state == "succeeded", delivery.attempts
    [got] = tls_receiver.at("/tls")
    assert got.headers["Host"] == f"hooks.shop.invalid:{tls_receiver.port}"
    assert got.headers["X-Signature"] == expected_signature(got.body, SECRET)


def test_https_fails_when_the_certificate_is_for_another_name(make_sender, tls_receiver, tls_files):
    session = requests.Session()
    session.verify = tls_files[0]
    sender = make_sender(resolver=resolver_for("127.0.0.1"), session=session, max_attempts=1)

    delivery = sender.send(f"https://other.shop.invalid:{tls_receiver.port}/tls", {"event": "ping"})

    assert delivered(sender, delivery) and delivery.state == "failed"
    assert delivery.attempts[0].result.startswith("TLS error")
    assert tls_receiver.at("/tls") == []


# -- the delivery log --------------------------------------------------------------------------------

def test_redeliver_sends_the_same_bytes_as_a_new_delivery(make_sender, receiver):
    sender = make_sender()
    first = sender.send(receiver.url("/hooks"), order_payload(), order_id="ord_8c1f2a")
    assert delivered(sender, first)

    again = sender.redeliver(first.id)

    assert delivered(sender, again) and again.state == "succeeded"
    assert again.id != first.id and again.redelivery_of == first.id
    assert (again.body, again.signature, again.order_id) == (first.body, first.signature, first.order_id)
    assert [r.body for r in receiver.at("/hooks")] == [first.body, first.body]
    with pytest.raises(KeyError):
        sender.redeliver("dlv_unknown")


def test_deliveries_are_listed_newest_first_and_capped(make_sender):
    sender = make_sender(max_deliveries=3, session=GuardedSession())
    sent = [sender.send("ftp://nowhere/", {"event": "ping"}, order_id=f"ord_{n % 2}")
            for n in range(5)]
    assert sender.drain(WAIT)

    assert [d.id for d in sender.deliveries()] == [d.id for d in reversed(sent[2:])]
    assert [d.id for d in sender.deliveries(order_id="ord_0")] == [sent[4].id, sent[2].id]
    assert sender.get(sent[0].id) is None and sender.get(sent[4].id) is sent[4]
    assert "whsec" not in repr(sender)


# -- payloads --------------------------------------------------------------------------------------

def test_order_status_payload_is_the_spec_summary():
    full_order = order_payload()["data"]["order"] | {
        "feeBreakdown": {"total": 1}, "transferInstructions": {"type": "manual"},
        "statusChangeLogs": [], "expiresAt": "2026-11-22T02:00:00.000Z", "utm": None,
        "payout": {"paymentChannel": "crypto", "currencyType": "crypto", "currencyCode": "USDC",
                   "currencyDetails": {}, "cashout": {"exchangeRate": 1, "fee": 3},
                   "transaction": {"meta": {"transactionHash": "0xabc", "gas": 1}}},
        "deposit": {"paymentChannel": "bank", "currencyType": "fiat", "currencyCode": "NGN",
                    "currencyDetails": {"countryIsoCode": "NG"}, "cashout": {},
                    "transaction": {"meta": {}}},
    }

    payload = order_status_payload(full_order, {"passedKycHash": "h1", "latestKycStatus": None})

    assert payload["event"] == "order-status-change"
    assert set(payload["data"]) == {"order", "userKyc"}
    order = payload["data"]["order"]
    assert not {"feeBreakdown", "transferInstructions", "statusChangeLogs", "expiresAt",
                "utm"} & set(order)
    assert order["payout"]["transaction"] == {"meta": {"transactionHash": "0xabc"}}
    assert order["payout"]["cashout"] == {"exchangeRate": 1}
    assert order["deposit"]["transaction"] == {}          # meta only when one of its fields exists
    assert payload["data"]["userKyc"] == {"passedKycHash": "h1"}
    assert order_status_payload(full_order, None)["data"]["userKyc"] == {}   # always present


def test_order_status_payload_names_missing_fields():
    order = order_payload()["data"]["order"]
    del order["status"], order["updatedAt"]
    with pytest.raises(ValueError, match="status, updatedAt"):
        order_status_payload(order, {})


def test_auth_and_kyc_payloads():
    when = dt.datetime(2026, 11, 22, 1, 55, 0, 123456, tzinfo=dt.UTC)
    auth = auth_payload(operation="login", status="success", user_email="amina@example.com",
                        date=when, user_country_iso_code="KE")
    kyc = kyc_payload(kyc_id="kyc_1", status="approved", kyc_type="basic", user_id="usr_1",
                      user_email="amina@example.com", user_country_iso_code="KE",
                      kyc_document="NATIONAL_ID", date=when)

    assert json.loads(encode_payload(auth)) == {"event": "auth", "data": {
        "authOperation": "login", "authStatus": "success", "userEmail": "amina@example.com",
        "date": "2026-11-22T01:55:00.123Z", "userCountryIsoCode": "KE"}}
    assert json.loads(encode_payload(kyc))["data"]["kycStatus"] == "approved"
    assert kyc["event"] == "kyc"
    with pytest.raises(ValueError):
        auth_payload(operation="logout", status="success", user_email="a@example.com", date=when,
                     user_country_iso_code="KE")
    with pytest.raises(ValueError):
        encode_payload({"date": dt.datetime(2026, 1, 1)})       # naive: ambiguous, refused


# -- the console -----------------------------------------------------------------------------------

@pytest.fixture
def console(make_sender, receiver):
    sender = make_sender()
    app = Flask("sandbox_test")
    app.config["TESTING"] = True
    app.extensions["sandbox"] = SimpleNamespace(webhooks=sender)
    app.register_blueprint(console_bp)
    receiver.script["/hooks"] = [(500, {})]
    delivery = sender.send(receiver.url("/hooks"), order_payload(), order_id="ord_8c1f2a")
    assert delivered(sender, delivery)
    return SimpleNamespace(client=app.test_client(), sender=sender, delivery=delivery)


def test_console_page_lists_deliveries_with_each_attempt(console):
    page = console.client.get("/sandbox/webhooks")

    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert console.delivery.id in html
    assert "order-status-change" in html and "succeeded" in html
    assert "HTTP 500 INTERNAL SERVER ERROR" in html and "200 OK" in html
    assert "in 1 s sandbox time" in html
    assert console.delivery.signature in html
    assert "<script" not in html


def test_console_json_and_order_filter(console):
    data = console.client.get("/sandbox/webhooks.json").get_json()
    [listed] = data["deliveries"]
    assert listed["id"] == console.delivery.id
    assert [a["status"] for a in listed["attempts"]] == [500, 200]
    assert listed["body"].encode() == console.delivery.body
    assert console.client.get("/sandbox/webhooks.json?order_id=other").get_json() == {"deliveries": []}


def test_console_redeliver(console):
    response = console.client.post(f"/sandbox/webhooks/{console.delivery.id}/redeliver")

    assert response.status_code == 303
    [fresh, original] = console.sender.deliveries()
    assert original is console.delivery and fresh.redelivery_of == original.id
    assert f"highlight={fresh.id}" in response.headers["Location"]
    assert console.client.post("/sandbox/webhooks/dlv_nope/redeliver").status_code == 404


@pytest.mark.parametrize("headers", [{"Sec-Fetch-Site": "cross-site"},
                                     {"Origin": "https://evil.example"}])
def test_console_refuses_a_cross_site_redeliver(console, headers):
    response = console.client.post(f"/sandbox/webhooks/{console.delivery.id}/redeliver",
                                   headers=headers)
    assert response.status_code == 403
    assert len(console.sender.deliveries()) == 1


def test_close_ends_pending_deliveries_and_refuses_new_ones(scheduler, receiver):
    receiver.script["/down"] = [(500, {})]
    sender = WebhookSender(SECRET, scheduler=scheduler, allow_loopback=True)
    delivery = sender.send(receiver.url("/down"), {"event": "ping"})
    # The first attempt failed, and its retry is set.
    wait_for(lambda: delivery.attempts and scheduler.pending_count())
    sender.close()

    assert delivery.state == "failed" and sender.drain(0.1)
    assert [a.retry_in for a in delivery.attempts] == [1]
    with pytest.raises(RuntimeError):
        sender.send(receiver.url("/down"), {"event": "ping"})
    scheduler.advance(10)                               # the retry's time, and more
    assert len(receiver.at("/down")) == 1               # the scheduled retry did not go out


def test_cookies_set_by_a_receiver_are_never_sent_back(make_sender, receiver):
    receiver.script["/sticky"] = [(500, {"Set-Cookie": "session=abc; Path=/"})]
    sender = make_sender()
    delivery = sender.send(receiver.url("/sticky"), {"event": "ping"})

    assert delivered(sender, delivery) and delivery.state == "succeeded"
    first, second = receiver.at("/sticky")
    assert "Cookie" not in second.headers
