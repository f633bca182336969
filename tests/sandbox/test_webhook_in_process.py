"""In-process webhook delivery: a sandbox embedded in its receiver's process POSTs to a WSGI app.

The receiver is a tiny Flask app. The HTTP session and the resolver fail the test if they are ever
used, so an in-process delivery provably touches neither DNS nor a socket.
"""
from __future__ import annotations

import json
import socket
import threading
import time
from types import SimpleNamespace

import pytest
import requests
from flask import Flask, Response, request

from checkout.sandbox import create_app, webhooks
from checkout.sandbox.clock import ManualClock, Scheduler
from checkout.sandbox.webhooks import WebhookSender, encode_payload
from checkout.signature import sign, verify
from checkout.upstream.inprocess import WSGIAdapter

from ..support.sandbox_clock import MANUAL, advance, delivered
from ..support.waiting import wait_for
from .sandbox_support import TX_HASH, Api

SECRET = "whsec_in_process_test"
BASE = "http://checkout.embedded.invalid"
WAIT = 5.0


class Shop:
    """A merchant app receiving webhooks: ``answers[path]`` lists statuses used in turn, then 200."""

    def __init__(self) -> None:
        self.app = Flask("shop")
        self.app.config["TESTING"] = True           # exceptions propagate to the caller
        self.received: list[dict] = []
        self.answers: dict[str, list[int]] = {}
        self.lock = threading.Lock()
        self.taking_long = lambda: None     # what the "slow" path does: the test says
        self.app.add_url_rule("/<path:path>", "hook", self.hook, methods=["POST"])

    def hook(self, path: str) -> Response:
        with self.lock:
            self.received.append({"path": "/" + path, "body": request.get_data(),
                                  "headers": dict(request.headers), "host": request.host,
                                  "query": request.query_string.decode()})
            answers = self.answers.get("/" + path)
            status = answers.pop(0) if answers else 200
        if path == "boom":
            raise RuntimeError("the shop's handler crashed")
        if path == "slow":
            self.taking_long()
        headers = {"Location": "https://shop.example/elsewhere"} if 300 <= status < 400 else {}
        return Response(f"shop says {status}", status=status, headers=headers)

    def at(self, path: str) -> list[dict]:
        with self.lock:
            return [r for r in self.received if r["path"] == path]


class NoNetwork(requests.Session):
    def send(self, prepared, **kwargs):
        raise AssertionError(f"the sender used the network: {prepared.url}")


def no_dns(host, port, *args, **kwargs):
    raise AssertionError(f"the sender looked up {host}")


@pytest.fixture
def shop() -> Shop:
    return Shop()


@pytest.fixture
def make_sender(shop):
    scheduler = Scheduler(ManualClock())
    senders: list[WebhookSender] = []

    def make(**overrides) -> WebhookSender:
        options = {"scheduler": scheduler, "in_process": {BASE: WSGIAdapter(shop.app)},
                   "session": NoNetwork(), "resolver": no_dns} | overrides
        sender = WebhookSender(SECRET, **options)
        senders.append(sender)
        return sender

    yield make
    for sender in senders:
        sender.close()
    scheduler.shutdown()


def test_success_carries_the_same_bytes_and_headers(make_sender, shop):
    payload = {"event": "order-status-change", "data": {"order": {"_id": "o1", "note": "Café 🧾"}}}
    sender = make_sender()
    delivery = sender.send(f"{BASE}/checkout/webhooks?src=sandbox", payload, order_id="o1")
    assert delivered(sender, delivery) and delivery.state == "succeeded"
    [got] = shop.at("/checkout/webhooks")
    assert got["body"] == delivery.body == encode_payload(payload)
    assert got["headers"]["X-Signature"] == delivery.signature == sign(got["body"], SECRET)
    verify(got["body"], got["headers"]["X-Signature"], SECRET)
    assert got["headers"]["Content-Type"] == "application/json"
    assert got["host"] == "checkout.embedded.invalid" and got["query"] == "src=sandbox"
    [attempt] = delivery.attempts
    assert attempt.ok and attempt.status == 200 and attempt.result == "200 OK"
    assert attempt.address == "in-process" and attempt.response_excerpt == "shop says 200"


def test_a_500_is_retried_with_the_same_bytes(make_sender, shop):
    shop.answers["/hooks"] = [500, 503]
    sender = make_sender()
    delivery = sender.send(f"{BASE}/hooks", {"event": "ping"})
    assert delivered(sender, delivery) and delivery.state == "succeeded"
    assert [(a.number, a.status, a.ok) for a in delivery.attempts] == [
        (1, 500, False), (2, 503, False), (3, 200, True)]
    assert delivery.attempts[0].result.startswith("HTTP 500")
    assert delivery.attempts[0].retry_in == 1 and delivery.attempts[1].retry_in == 2
    bodies = {r["body"] for r in shop.at("/hooks")}
    signatures = {r["headers"]["X-Signature"] for r in shop.at("/hooks")}
    assert bodies == {delivery.body} and signatures == {delivery.signature}


def test_a_302_is_a_failure_and_never_followed(make_sender, shop):
    shop.answers["/moved"] = [302] * 3
    sender = make_sender(max_attempts=3)
    delivery = sender.send(f"{BASE}/moved", {"event": "ping"})
    assert delivered(sender, delivery) and delivery.state == "failed"
    assert [a.status for a in delivery.attempts] == [302, 302, 302]
    assert delivery.attempts[0].result == "redirect refused (302 to https://shop.example/elsewhere)"
    assert len(shop.at("/moved")) == 3 and shop.at("/elsewhere") == []


def test_a_crashing_receiver_is_a_failed_attempt(make_sender, shop):
    sender = make_sender(max_attempts=2)
    delivery = sender.send(f"{BASE}/boom", {"event": "ping"})
    assert delivered(sender, delivery) and delivery.state == "failed"
    # In words, not the exception's class name (the traceback goes to the sandbox's log).
    assert delivery.attempts[0].result == ("the receiver failed while handling it (an error in "
                                           "its code; see its log)")
    assert len(delivery.attempts) == 2


def test_a_slow_answer_counts_as_a_timeout(make_sender, shop, monkeypatch):
    # The receiver takes a second over its answer, on the sender's own clock: nothing waits.
    late = [0.0]
    monkeypatch.setattr(webhooks, "time",
                        SimpleNamespace(monotonic=lambda: time.monotonic() + late[0]))
    shop.taking_long = lambda: late.append(late.pop() + 1)
    sender = make_sender(max_attempts=1, timeout=0.5)
    delivery = sender.send(f"{BASE}/slow", {"event": "ping"})
    assert delivered(sender, delivery) and delivery.state == "failed"
    assert delivery.attempts[0].result.startswith("timeout: answered 200 after more than")


def test_other_urls_still_go_over_the_network_rules(make_sender):
    # Not under the base: resolved (here refused as private) like any other URL, never in process.
    sender = make_sender(resolver=lambda host, port, **kw: [
        (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.5", port))])
    for url in ("http://checkout.embedded.invalid.example.com/hooks",
                "http://other.invalid/hooks"):
        delivery = sender.send(url, {"event": "ping"})
        assert delivered(sender, delivery) and delivery.state == "refused"
        assert "private address 10.0.0.5" in delivery.attempts[0].result


def test_base_matching_ignores_case_and_trailing_slash(make_sender, shop):
    sender = make_sender(in_process={BASE + "/": WSGIAdapter(shop.app)})
    delivery = sender.send("HTTP://Checkout.Embedded.Invalid/hooks", {"event": "ping"})
    assert delivered(sender, delivery) and delivery.state == "succeeded"
    assert len(shop.at("/hooks")) == 1


def test_bad_in_process_targets_are_refused(shop):
    scheduler = Scheduler(ManualClock())
    try:
        with pytest.raises(ValueError, match="absolute http"):
            WebhookSender(SECRET, scheduler=scheduler,
                          in_process={"checkout.invalid": WSGIAdapter(shop.app)})
        with pytest.raises(ValueError, match="not a transport adapter"):
            WebhookSender(SECRET, scheduler=scheduler, in_process={BASE: "shop"})
    finally:
        scheduler.shutdown()


# -- through create_app ---------------------------------------------------------------------------

def test_sandbox_config_delivers_order_webhooks_in_process(shop):
    app = create_app({"TESTING": True, **MANUAL,
                      "SANDBOX_WEBHOOK_URL": f"{BASE}/checkout/webhooks",
                      "SANDBOX_WEBHOOK_IN_PROCESS": {BASE: WSGIAdapter(shop.app)}})
    try:
        api = Api(app)
        order = api.offramp_typed_order()
        api.post("/api/offramp/confirm-order", {"orderId": order["_id"], "hash": TX_HASH})
        advance(app, 600)                   # the whole order's life, its webhooks sent
        wait_for(lambda: len(shop.at("/checkout/webhooks")) == 6, timeout=5)
        statuses = sorted(json.loads(r["body"])["data"]["order"]["status"]
                          for r in shop.at("/checkout/webhooks"))
        assert statuses == sorted(["deposit_awaiting", "deposit_validating", "deposit_validating",
                                   "deposit_successful", "payout_pending", "payout_successful"])
        # The shop has each webhook once its handler ran; the sender records the attempt after
        # the answer comes back to it.
        webhooks = app.extensions["sandbox"].webhooks
        wait_for(lambda: all(d.attempts for d in webhooks.deliveries(order_id=order["_id"])),
                 timeout=5)
        deliveries = webhooks.deliveries(order_id=order["_id"])
        assert {d.attempts[0].address for d in deliveries} == {"in-process"}
        log = app.test_client().get("/sandbox/webhooks.json").get_json()["deliveries"]
        assert all(d["attempts"][0]["address"] == "in-process" for d in log)
    finally:
        app.extensions["sandbox"].shutdown()


@pytest.mark.parametrize("bad", [{"checkout.invalid": Flask("x")}, {BASE: "not an app"},
                                 ["http://x.invalid"], "http://x.invalid"])
def test_sandbox_config_is_checked_at_start(bad):
    with pytest.raises(ValueError, match="SANDBOX_WEBHOOK_IN_PROCESS"):
        create_app({"TESTING": True, "SANDBOX_WEBHOOK_IN_PROCESS": bad})
