"""Logs never carry a session id (a bearer secret: it opens the order) nor a launch token."""
from __future__ import annotations

import logging
import threading

import pytest

from checkout.errors import UpstreamUnavailable
from checkout.state import get_state


@pytest.fixture
def upstream_down_at_pay(flow, monkeypatch):
    """An order at its pay page, whose status the upstream can no longer give (a logged error)."""
    flow.to_pay("manual")
    with flow.app.app_context():
        client = get_state().upstream

    def unavailable(**kwargs):
        raise UpstreamUnavailable("connection refused")

    monkeypatch.setattr(client, "onramp_order", unavailable)
    # Nothing stored of it either (no webhook yet): the page has nothing to show but the error.
    from checkout.views import tracking

    monkeypatch.setattr(tracking, "stored_order", lambda session: None)
    return flow


def test_upstream_error_on_a_session_page_logs_the_route_not_the_session_id(upstream_down_at_pay,
                                                                            caplog):
    flow = upstream_down_at_pay
    caplog.set_level(logging.DEBUG)
    caplog.clear()
    assert flow.get("/pay").status_code == 502
    assert flow.get("/pay", headers={"HX-Request": "true"}).status_code == 200
    records = caplog.records
    assert any("/s/<session_id>/pay" in r.getMessage() for r in records)   # still diagnosable
    for record in records:
        assert flow.session_id not in record.getMessage()
        assert flow.session_id not in (record.exc_text or "")
        assert flow.session_id not in repr(record.args)


def test_every_log_line_of_a_request_carries_its_request_id(upstream_down_at_pay, caplog):
    flow = upstream_down_at_pay
    caplog.set_level(logging.DEBUG)
    ids = []
    for _ in range(2):
        caplog.clear()
        response = flow.get("/pay")
        ids.append(response.headers["X-Request-ID"])
        # The request's own lines: the dispatcher's thread logs about other work (a full-order
        # fetch after the sandbox's webhook fails here too), with no request of its own.
        checkout_records = [r for r in caplog.records if r.name.startswith("checkout")
                            and r.thread == threading.get_ident()]
        assert checkout_records
        assert {r.request_id for r in checkout_records} == {ids[-1]}
    assert ids[0] != ids[1]
