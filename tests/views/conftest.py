"""Fixtures of the on-ramp view tests: an app on the embedded sandbox and a ``Flow`` helper."""
from __future__ import annotations

import re
import threading
from dataclasses import replace
from datetime import timedelta
from typing import Any
from urllib.parse import urlsplit

import pytest
from flask import Flask
from flask.testing import FlaskClient
from werkzeug.test import TestResponse

from checkout import Checkout
from checkout.state import get_state

from ..support.sandbox_clock import MANUAL
from ..support.waiting import wait_for

EVM_ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
STELLAR_ADDRESS = "GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7"
TON_ADDRESS = "EQCD39VS5jcptHL8vMjEXrzGaRcCVYto7HUn4bpAOg8xqB2N"
SOLANA_ADDRESS = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"

# Corridors of the sandbox's reference data (checkout/sandbox/reference.py), one per transfer type.
CORRIDORS: dict[str, dict[str, str]] = {
    "manual": {"countryIsoCode": "NG", "paymentChannel": "bank"},
    "redirect": {"countryIsoCode": "GH", "paymentChannel": "bank"},
    "ussd": {"countryIsoCode": "NG", "paymentChannel": "airtime", "carrierCode": "MTN"},
    "stk_push": {"countryIsoCode": "KE", "paymentChannel": "mobile_money"},
    "otp_stk_push": {"countryIsoCode": "GH", "paymentChannel": "mobile_money",
                     "carrierCode": "MTN"},
}
AMOUNTS = {"NG": "5000", "GH": "100", "KE": "1000"}
PHONES = {"NG": "08012345678", "GH": "0241234567", "KE": "0712345678"}


@pytest.fixture
def sandbox_config() -> dict:
    """Extra settings of the embedded sandbox (e.g. a forced ``SANDBOX_OUTCOME``)."""
    return {}


@pytest.fixture
def config(config, sandbox_config) -> dict:
    config["CHECKOUT_SANDBOX"] = {**MANUAL, **sandbox_config}
    # No webhook reaches the test client: let every status read ask the upstream.
    config["CHECKOUT_STATUS_MAX_AGE"] = 0
    return config


class Flow:
    """One user walking through a flow (the on-ramp unless told) with the test client."""

    def __init__(self, app: Flask, client: FlaskClient, name: str = "onramp") -> None:
        self.app = app
        self.client = client
        self.name = name
        self.session_id: str | None = None
        self.csrf: str | None = None
        self.responses: list[TestResponse] = []

    # -- plumbing

    @property
    def base(self) -> str:
        return f"{self.app.config['CHECKOUT_URL_PREFIX']}/s/{self.session_id}"

    def _keep(self, response: TestResponse) -> TestResponse:
        self.responses.append(response)
        match = re.search(r'name="csrf_token" value="([^"]+)"', response.get_data(as_text=True))
        if match:
            self.csrf = match.group(1)
        return response

    def get(self, path: str = "/", **kwargs: Any) -> TestResponse:
        return self._keep(self.client.get(self.base + path, **kwargs))

    def post(self, path: str, data: dict[str, Any] | None = None, **kwargs: Any) -> TestResponse:
        """The answer to a form; for a step's form kept for its page (refused, or a preview of the
        price without JavaScript), the page it sends the browser to.

        A step answers such a form with a redirect to its own page, which shows the form again
        (POST, redirect, GET): that page is followed here, as a browser would.
        """
        form = {"csrf_token": self.csrf, **(data or {})}
        response = self._keep(self.client.post(self.base + path, data=form, **kwargs))
        step = path.strip("/")
        if response.status_code == 303 and \
                urlsplit(response.headers["Location"]).path == self.base + path and \
                self.session.notice(f"{step}:form"):
            return self.follow(response)
        return response

    def open(self, path: str = "/", **kwargs: Any) -> TestResponse:
        """The page a link opens (the session's own, a resume link), its redirects followed as a
        browser follows them: the session's address sends the browser to its step's."""
        return self._keep(self.client.get(self.base + path, follow_redirects=True, **kwargs))

    def follow(self, response: TestResponse) -> TestResponse:
        assert response.status_code == 303, response.get_data(as_text=True)[:2000]
        return self._keep(self.client.get(response.headers["Location"]))

    def landed(self, response: TestResponse, step: str) -> TestResponse:
        """The page a form of the flow sent the browser to, checked to be ``step``.

        Forms answer POST with a redirect and the page comes by GET, so a reload never posts the
        form again (a one-time code, a "Confirm and pay").
        """
        assert response.status_code == 303, response.get_data(as_text=True)[:2000]
        assert response.headers["Location"].endswith(f"/s/{self.session_id}/{step}"), \
            response.headers["Location"]
        return self.follow(response)

    @property
    def session(self):
        with self.app.app_context():
            return get_state().sessions.get(self.session_id)

    # -- starting

    def start(self, **claims: Any) -> TestResponse:
        """Unsigned start, or a launch token with ``claims`` (and their ``lock``)."""
        prefix = self.app.config["CHECKOUT_URL_PREFIX"]
        if claims:
            with self.app.test_request_context():
                url = Checkout.launch_url(self.name, **claims)
        else:
            url = f"{prefix}/{self.name}"
        response = self._keep(self.client.get(url))
        assert response.status_code == 303, response.get_data(as_text=True)[:2000]
        # To the first step's own address: /s/<session id>/<step>.
        self.session_id = urlsplit(response.headers["Location"]).path.split("/s/", 1)[1] \
            .split("/", 1)[0]
        page = self.follow(response)
        # The session's own address when its step could not be found just then (the upstream
        # slow to answer, on a loaded machine): it sends the browser on to the step, followed as
        # a browser follows it.
        for _hop in range(3):           # a loop of redirects fails here, not at the test's timeout
            if page.status_code != 303:
                break
            page = self.follow(page)
        assert page.status_code != 303, page.headers["Location"]
        return page

    # -- steps

    def choose(self, transfer: str = "manual", **fields: Any) -> TestResponse:
        corridor = CORRIDORS[transfer]
        form = {"network": "CELO", "asset": "USDT", "currency": "local",
                "amount": AMOUNTS[corridor["countryIsoCode"]], **corridor, **fields}
        return self.post("/choose", {k: v for k, v in form.items() if v is not None})

    def wallet(self, **fields: Any) -> TestResponse:
        form = {"address": EVM_ADDRESS, "email": "ada@example.com", **fields}
        return self.post("/wallet", {k: v for k, v in form.items() if v is not None})

    def details(self, **fields: Any) -> TestResponse:
        return self.post("/details", fields)

    def quote_id(self, response: TestResponse) -> str:
        match = re.search(r'name="quote_id" value="([^"]+)"', response.get_data(as_text=True))
        assert match, response.get_data(as_text=True)[:3000]
        return match.group(1)

    def session_at(self, step: str, transfer: str = "manual", **given: Any) -> TestResponse:
        """A new session opened at ``step`` ("wallet" or "review"): its launch gives every value
        of the steps before it, which the checkout then passes over (the merchant's prefill, a
        claim the user may still change), so a test starts where it tests in one request, not
        by walking there (each transfer type's walk is kept: ``walk_to_review``)."""
        assert self.session_id is None, "session_at opens a new session"
        corridor = CORRIDORS[transfer]
        country = corridor["countryIsoCode"]
        claims: dict[str, Any] = {"network": "CELO", "asset": "USDT", "currency": "local",
                                  "amount": AMOUNTS[country], **corridor}
        if step == "review":
            claims.update(address=EVM_ADDRESS, email="ada@example.com")
            if corridor["paymentChannel"] != "bank":    # paid from a phone: its number too
                claims["phoneNumber"] = PHONES[country]
        else:
            assert step == "wallet", step
        claims.update(given)
        page = self.start(**{k: v for k, v in claims.items() if v is not None})
        assert page.request.path.endswith(f"/{step}"), page.request.path
        return page

    def to_review(self, transfer: str = "manual", **choose: Any) -> TestResponse:
        if self.session_id is None:
            return self.session_at("review", transfer, **choose)
        return self.walk_to_review(transfer, **choose)

    def walk_to_review(self, transfer: str = "manual", **choose: Any) -> TestResponse:
        """From the amount step to the review as the user walks it: a form per step."""
        response = self.follow(self.choose(transfer, **choose))
        response = self.follow(self.wallet())
        if response.request.path.endswith("/details"):
            country = CORRIDORS[transfer]["countryIsoCode"]
            response = self.follow(self.details(phoneNumber=PHONES[country]))
        assert response.request.path.endswith("/review"), response.request.path
        return response

    def review_digest(self, response: TestResponse) -> str:
        match = re.search(r'name="review_digest" value="([^"]+)"', response.get_data(as_text=True))
        assert match, response.get_data(as_text=True)[:3000]
        return match.group(1)

    def confirm_form(self, review: TestResponse) -> dict[str, str]:
        """What the review's "Confirm and pay" form sends."""
        return {"quote_id": self.quote_id(review), "review_digest": self.review_digest(review)}

    def create(self, review: TestResponse) -> TestResponse:
        return self.post("/create", self.confirm_form(review))

    def to_pay(self, transfer: str = "manual", **choose: Any) -> TestResponse:
        review = self.to_review(transfer, **choose)
        return self.follow(self.create(review))


@pytest.fixture
def flow(app: Flask, client: FlaskClient) -> Flow:
    return Flow(app, client)


def journey_settings(app: Flask, **changes: Any) -> None:
    """What the app's flows were told of its configuration at start-up, changed for a test
    (``create_grace``, ``quote_max_age``: checkout.journey.settings)."""
    with app.app_context():
        for built in get_state().flows.values():
            built.settings = replace(built.settings, **changes)


def order_reads(app: Flask, monkeypatch: Any, flow: str = "onramp") -> list[str]:
    """The ids of the orders the pages read from the upstream from now on. Only this thread's
    (the test client's requests): the dispatcher's thread reads orders of its own."""
    with app.app_context():
        client = get_state().upstream
    name = f"{flow}_order"
    real = getattr(client, name)
    here = threading.get_ident()
    reads: list[str] = []

    def read(*args: Any, **kwargs: Any) -> Any:
        if threading.get_ident() == here:
            reads.append(kwargs.get("order_id") or kwargs.get("id")
                         or kwargs.get("order_params") or (args[0] if args else ""))
        return real(*args, **kwargs)

    monkeypatch.setattr(client, name, read)
    return reads


def sandbox_order(app: Flask, order_id: str, family: str = "onramp") -> Any:
    """The sandbox's own record of an order (to check what the upstream received)."""
    from checkout.sandbox.state import current

    with app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        store = current().orders
        with store.lock:
            return store.get(order_id, family)


def stored_status(app: Flask, order_id: str) -> str | None:
    """The order's status as the checkout has stored it (no upstream call)."""
    from checkout import order_status

    with app.app_context():
        stored = order_status.get(get_state().engine, order_id)
    return stored.status if stored is not None else None


def wait_for_stored_status(app: Flask, order_id: str, status: str, timeout: float = 15) -> None:
    """Until the checkout has stored ``status`` for the order (its webhook stored and processed
    by the dispatcher's thread): returns as soon as it has."""
    wait_for(lambda: stored_status(app, order_id) == status, timeout)


def move_sandbox_order(app: Flask, order_id: str, status: str, family: str = "onramp", *,
                       webhook: bool = True) -> None:
    """Move the sandbox's order to ``status`` as the upstream does: its ``updatedAt`` moves on
    (by a millisecond at least, the precision of the upstream's times) and, unless ``webhook``
    is False (a delivery lost or late), its webhook is sent."""
    from checkout.sandbox.orders import iso
    from checkout.sandbox.state import current

    with app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        store = current().orders
        with store.lock:
            order = store.get(order_id, family)
            order.updated_at += timedelta(milliseconds=1)
            if webhook:
                store.set_status(order, status)
            else:
                order.status = status
                order.updated_at = max(store.clock.now(), order.updated_at)
                order.history.append({"status": status, "changedAt": iso(order.updated_at)})


def advance_sandbox_order(app: Flask, order_id: str) -> None:
    """Run the sandbox order's next timer now (an expiry, a payout), rather than waiting for it."""
    from checkout.sandbox.state import current

    with app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        current().orders.advance(order_id)
