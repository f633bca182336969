"""A session that keeps changing under a save, or that is gone meanwhile: a page that says so,
never the 500 page, and nothing saved."""
from __future__ import annotations

import logging

from sqlalchemy import delete

from checkout.errors import SessionConflict
from checkout.sessions import SessionStore
from checkout.state import get_state
from checkout.store.tables import sessions_table

from .conftest import EVM_ADDRESS


def always_conflicting(monkeypatch):
    def update(self, session_id, change):
        raise SessionConflict(session_id)

    monkeypatch.setattr(SessionStore, "update", update)


def test_a_session_that_keeps_changing_gets_its_page_back_not_a_500(flow, monkeypatch, caplog):
    flow.start()
    flow.post("/choose", {"countryIsoCode": "KE", "paymentChannel": "mobile_money",
                          "network": "CELO", "asset": "USDT", "currency": "local",
                          "amount": "5000"})
    always_conflicting(monkeypatch)
    caplog.set_level(logging.WARNING)
    response = flow.post("/wallet", {"address": EVM_ADDRESS, "email": "ada@example.com"})
    html = response.get_data(as_text=True)
    assert response.status_code == 409
    assert "Your details changed. Check them again." in html
    assert f"/s/{flow.session_id}/" in html                  # back to the session's page
    assert "kept changing" in caplog.text and flow.session_id not in caplog.text
    monkeypatch.undo()
    assert flow.session.value("address") != EVM_ADDRESS       # nothing was saved


def test_a_session_gone_under_a_save_gets_the_not_found_page(flow, monkeypatch):
    flow.start()

    def gone_then_conflict(self, session_id, change):
        with flow.app.app_context():
            with get_state().engine.begin() as conn:
                conn.execute(delete(sessions_table).where(sessions_table.c.id == session_id))
        raise SessionConflict(session_id)

    monkeypatch.setattr(SessionStore, "update", gone_then_conflict)
    response = flow.post("/choose", {"countryIsoCode": "KE", "paymentChannel": "mobile_money",
                                     "network": "CELO", "asset": "USDT", "currency": "local",
                                     "amount": "5000"})
    assert response.status_code == 404
    assert "This checkout was not found or has expired" in response.get_data(as_text=True)
