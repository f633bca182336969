"""The off-ramp's transaction hash reaches the upstream once (checkout.journey.hash_confirmation):
two presses at once send one confirm; an attempt whose answer was lost, or that a dead worker left,
is settled by the next press by looking the order up, at once and without sending it twice."""
from __future__ import annotations

import threading
from typing import Any

import pytest

from checkout.errors import UpstreamBadRequest, UpstreamTimeout
from checkout.journey import clock
from checkout.state import get_state

from ..upstream_spy import UpstreamSpy
from .conftest import sandbox_order
from .test_offramp import Sale

CONFIRM = "/api/offramp/confirm-order"
TX = "0x" + "ab" * 32
RECEIVED = "Your transaction was received"


@pytest.fixture
def sale(app, client) -> Sale:
    sale = Sale(app, client)
    sale.to_deposit()
    return sale


def client_confirm(app, monkeypatch, behave) -> None:
    """Replace the upstream client's confirm with ``behave(original, kwargs)``."""
    with app.app_context():
        client = get_state().upstream
    original = client.offramp_confirm_order
    monkeypatch.setattr(client, "offramp_confirm_order",
                        lambda **kwargs: behave(original, kwargs))


def press(sale: Sale, results: dict[str, Any], name: str, tx: str = TX) -> None:
    """One press of "I have sent it", from a client of its own (a second tab, a double click)."""
    results[name] = sale.app.test_client().post(
        f"{sale.base}/deposit/sent", data={"csrf_token": sale.csrf, "tx_hash": tx})


def test_two_presses_at_once_send_one_confirm(sale, monkeypatch):
    spy = UpstreamSpy(sale.app)
    with sale.app.app_context():
        sessions = get_state().sessions
    saving = sessions.save
    both_read = threading.Barrier(2)

    def save(session):
        if session.deposit.get("sending_since"):
            both_read.wait(10)      # each request read the session before either writes
        saving(session)

    monkeypatch.setattr(sessions, "save", save)
    results: dict[str, Any] = {}
    presses = [threading.Thread(target=press, args=(sale, results, name)) for name in "ab"]
    for thread in presses:
        thread.start()
    for thread in presses:
        thread.join(30)
    assert spy.count(CONFIRM, "POST") == 1
    for response in results.values():
        assert response.status_code == 303
        assert response.headers["Location"].endswith(f"/s/{sale.session_id}/status")
    assert sale.session.deposit == {"hash": TX, "confirmed": True}
    assert sandbox_order(sale.app, sale.session.order_id, "offramp").data["hash"] == TX


def test_a_confirm_whose_answer_was_lost_is_looked_up_not_sent_again(sale, monkeypatch):
    spy = UpstreamSpy(sale.app)

    def lost_answer(original, kwargs):
        original(**kwargs)                          # the upstream has it ...
        raise UpstreamTimeout("read timeout")       # ... and its answer never comes

    client_confirm(sale.app, monkeypatch, lost_answer)
    sale.landed(sale.post("/deposit/sent", {"tx_hash": TX}), "deposit")
    assert sale.session.deposit["hash"] == TX and not sale.session.deposit.get("confirmed")
    # Pressed again (in a second tab still showing the button, or the form sent again).
    page = sale.landed(sale.post("/deposit/sent", {"tx_hash": TX}), "status")
    assert RECEIVED in page.get_data(as_text=True)
    assert spy.count(CONFIRM, "POST") == 1
    assert sale.session.deposit == {"hash": TX, "confirmed": True}


# As a worker that died during its confirm left the session: its attempt, begun a moment ago (a
# worker of the release before wrote its owner token too, and took the attempt for a lease).
DEAD_ATTEMPTS = {"this release": {}, "the release before": {"owner": "5f1e0c2b9a7d3e48"}}


@pytest.mark.parametrize("release", DEAD_ATTEMPTS)
@pytest.mark.parametrize("reached", [True, False], ids=["confirm reached", "confirm lost"])
def test_an_attempt_a_dead_worker_left_is_settled_by_the_next_press(sale, release, reached):
    def died_sending(session):
        session.deposit = {"hash": TX, "sending_since": clock.now(), **DEAD_ATTEMPTS[release]}

    with sale.app.test_request_context():
        get_state().sessions.update(sale.session_id, died_sending)
        if reached:
            get_state().upstream.offramp_confirm_order(order_id=sale.session.order_id, hash=TX)
    spy = UpstreamSpy(sale.app)
    page = sale.landed(sale.post("/deposit/sent", {"tx_hash": TX}), "status")
    assert RECEIVED in page.get_data(as_text=True)
    assert spy.count(CONFIRM, "POST") == (0 if reached else 1)
    assert sale.session.deposit == {"hash": TX, "confirmed": True}
    assert sandbox_order(sale.app, sale.session.order_id, "offramp").data["hash"] == TX


def test_a_press_while_another_confirm_is_on_its_way_ends_confirmed_too(sale, monkeypatch):
    """The second press finds the first's attempt with the order still waiting, forgets it and
    sends its own (a dead worker's attempt looks the same): the upstream takes one and refuses
    the other, whose refusal a lookup settles."""
    sent, answer = threading.Event(), threading.Event()
    calls: list[dict] = []

    def slow_first(original, kwargs):
        calls.append(kwargs)
        if len(calls) == 1:
            sent.set()
            answer.wait(30)         # reaches the upstream after the second press is done
        return original(**kwargs)

    client_confirm(sale.app, monkeypatch, slow_first)
    results: dict[str, Any] = {}
    first = threading.Thread(target=press, args=(sale, results, "first"))
    first.start()
    try:
        assert sent.wait(30)
        press(sale, results, "second")
    finally:
        answer.set()
        first.join(30)
    assert len(calls) == 2
    for response in results.values():
        assert response.headers["Location"].endswith(f"/s/{sale.session_id}/status")
    assert sale.session.deposit == {"hash": TX, "confirmed": True}
    assert sandbox_order(sale.app, sale.session.order_id, "offramp").data["hash"] == TX


def test_a_hash_the_upstream_refuses_is_said_and_may_be_corrected(sale, monkeypatch):
    def refuse_first(original, kwargs):
        if kwargs["hash"] == TX:
            raise UpstreamBadRequest("transaction not found on the network")
        return original(**kwargs)

    client_confirm(sale.app, monkeypatch, refuse_first)
    page = sale.landed(sale.post("/deposit/sent", {"tx_hash": TX}), "deposit")
    assert "did not accept this transaction: transaction not found on the network" \
        in page.get_data(as_text=True)
    assert sale.session.deposit == {}
    corrected = "0x" + "cd" * 32
    sale.landed(sale.post("/deposit/sent", {"tx_hash": corrected}), "status")
    assert sandbox_order(sale.app, sale.session.order_id, "offramp").data["hash"] == corrected
