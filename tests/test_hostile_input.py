"""Input no database can store, and numbers no page should carry, on SQLite and PostgreSQL.

PostgreSQL refuses a NUL in text and JSON, and nothing can encode a lone surrogate; SQLite takes
both. These used to be a 500 (a NUL in a session's path, with the real session id in the error
line) or, for a signed webhook, a 503 its sender retries for ever. Now each is refused where it
comes in, the same way on either database (checkout.inputs).
"""
from __future__ import annotations

import json
import logging

import pytest
from sqlalchemy import select

from checkout.webhooks.store import events_table

from .conftest import make_app
from .launch_support import claims, session_id_from, sign
from .webhooks.conftest import Receiver
from .webhooks.helpers import order_payload, signed_webhook

SHOP = "https://shop.test"


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def app(request, config):
    if request.param == "postgresql":
        config["CHECKOUT_DATABASE_URL"] = request.getfixturevalue("postgres_url")
    config.update(PROPAGATE_EXCEPTIONS=False, CHECKOUT_WEBHOOK_BACKGROUND=False,
                  CHECKOUT_WEBHOOK_FETCH_ORDERS=False)
    return make_app(dict(config))


def launch(app, client, **extra) -> str:
    response = client.get("/checkout/launch", query_string={"token": sign(app, claims(**extra))})
    assert response.status_code == 303, response.get_data(as_text=True)
    return session_id_from(response.headers["Location"])


@pytest.mark.parametrize("garbage", ["\x00", "%00", "%ED%A0%80", "\x07", "\x1b[31m"])
def test_a_session_path_with_what_no_database_stores_is_a_404_naming_nothing(
        app, client, caplog, garbage):
    sid = launch(app, client)
    caplog.set_level(logging.DEBUG)
    for path in (f"/checkout/s/{sid}{garbage}/", f"/checkout/s/{sid[:20]}{garbage}{sid[20:]}/review"):
        response = client.get(path)
        assert response.status_code in (400, 404), path
        assert "Try again" not in response.get_data(as_text=True)
    assert not [r for r in caplog.records if sid in r.getMessage()]


# (A lone surrogate cannot travel in a query or a form: its bytes are not UTF-8, and are read as
# U+FFFD. It can in JSON, as an escape: see the webhook test.)
@pytest.mark.parametrize("value", ["a\x00b", "\x7f", "x\x08"])
def test_a_query_or_a_form_with_what_no_database_stores_is_refused_and_nothing_saved(
        app, client, value):
    sid = launch(app, client, flow="onramp")
    page = client.get(f"/checkout/s/{sid}/", query_string={"x": value})
    assert page.status_code == 400
    assert "Your request could not be understood" in page.get_data(as_text=True)
    with app.app_context():
        from checkout.state import get_state

        before = get_state().sessions.get(sid)
        token = before.csrf_token
    response = client.post(f"/checkout/s/{sid}/wallet",
                           data={"csrf_token": token, "address": value, "email": value})
    assert response.status_code == 400
    assert "Your request could not be understood" in response.get_data(as_text=True)
    # A way back to the session's page, to type it again: never a dead end in the frame.
    assert f'href="/checkout/s/{sid}/">Try again</a>' in response.get_data(as_text=True)
    with app.app_context():
        after = get_state().sessions.get(sid)
    assert after.version == before.version and after.data == before.data


@pytest.mark.parametrize("order_id", ["ord\x00x", "\ud800", "ord\x1f"])
def test_a_signed_webhook_whose_identifiers_cannot_be_stored_is_a_400_kept_with_its_reason(
        app, order_id):
    receiver = Receiver(app)
    delivery = signed_webhook(order_payload(order_id=order_id))
    response = receiver.post(delivery)
    # Never a 503: its sender would retry a delivery that can never be stored, for ever.
    assert response.status_code == 400
    assert response.json["error"] == "data.order._id has a control character"
    with app.extensions["checkout"].engine.connect() as conn:
        [event] = conn.execute(select(events_table)).all()
    assert event.state == "invalid" and event.error == response.json["error"]
    assert event.body == delivery.body and event.order_id is None
    # The same for an event type or a merchant reference no database can store.
    for payload in (dict(order_payload(), event="order\x00status"),
                    order_payload(order_params="ref\x00")):
        assert receiver.post(signed_webhook(payload)).status_code == 400


def test_a_signed_webhook_with_a_nul_anywhere_else_is_stored_and_processed(app):
    """Outside the identifiers, the body is kept as bytes: a NUL in a free-text field is the
    upstream's business, not a reason to refuse the status change."""
    receiver = Receiver(app)
    payload = order_payload(order_id="ord_nul_elsewhere", userEmail="a\x00b@example.com")
    assert receiver.post(signed_webhook(payload)).status_code == 200
    receiver.process()
    with app.extensions["checkout"].engine.connect() as conn:
        [event] = conn.execute(select(events_table)).all()
    assert event.state == "processed", event.error


@pytest.mark.parametrize(("amount", "accepted"), [
    ("1e-1000000", False), ("1e-19", False), ("1" * 41, False), ("0.000000000000000001", True),
    ("1e-18", True), ("25000.50", True),
])
def test_a_launch_amount_is_bounded_in_size_and_places(app, client, amount, accepted):
    response = client.get("/checkout/launch", query_string={
        "token": sign(app, claims(amount=amount, currency="local"))})
    assert (response.status_code == 303) is accepted, response.get_data(as_text=True)[:300]
    if not accepted:
        assert "settings we cannot use" in response.get_data(as_text=True)
        return
    sid = session_id_from(response.headers["Location"])
    page = client.get(f"/checkout/s/{sid}/")
    assert len(page.get_data()) < 100_000


@pytest.mark.parametrize("claim", ["orderParams", "memo", "email", "address"])
def test_a_launch_claim_no_database_stores_is_refused(app, client, claim):
    extra = {claim: {"orderParams": "ref\x00", "memo": "m\x1b", "email": "a\x00b@shop.test",
                     "address": "0xab\x00cd"}[claim]}
    if claim == "memo":
        extra.update(network="STELLAR")
    token = sign(app, json.loads(json.dumps(claims(**extra))))
    response = client.get("/checkout/launch", query_string={"token": token})
    assert response.status_code == 400
