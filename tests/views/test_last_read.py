"""What a customer was shown is kept: every read of an order (the create's answer, the pay and
deposit pages' reads, the status page's) is stored as its last known state, and shown again,
saying when (on the customer's clock), while the upstream does not answer. Here no webhook ever
arrives: what the checkout knows of its orders is only what it read."""
from __future__ import annotations

import re

import pytest
import pytz

from checkout import order_status
from checkout.i18n import format_datetime
from checkout.state import get_state

from ..support import outage
from .conftest import Flow
from .test_offramp import Sale

LAST_READ = "These are the details as we last read them, at"


@pytest.fixture
def sandbox_config() -> dict:
    """The sandbox sends no webhook."""
    return {"SANDBOX_WEBHOOK_EVENTS": []}


def text(response) -> str:
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", response.get_data(as_text=True)))


def stored(app, order_id: str) -> order_status.StoredOrder:
    with app.app_context():
        row = order_status.get(get_state().engine, order_id)
    assert row is not None and row.full_order and row.fetched_at is not None
    return row


def upstream_down(app) -> None:
    """The breaker open: every call refused at once, as while the upstream keeps failing."""
    with app.app_context():
        outage.upstream_down(get_state().upstream)


def read_at(app, moment, zone: str) -> str:
    """``moment`` as the note writes it: on the clock of the order's country."""
    with app.test_request_context():
        return re.sub(r"\s+", " ", format_datetime(moment, "en", pytz.timezone(zone)))


@pytest.mark.parametrize("reads", [0, 2])
def test_the_pay_page_of_an_order_only_read_shows_its_details_as_last_read(app, flow: Flow,
                                                                          reads):
    """The create's answer (0 reads after it), or the pay page's own reads (2), are kept."""
    flow.to_pay("manual")
    for _ in range(reads):
        assert flow.get("/pay").status_code == 200
    order_id = flow.session.order_id
    last = stored(app, order_id)
    assert last.source == "upstream"            # no webhook: its own reads
    upstream_down(app)
    page = flow.get("/pay")
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'data-testid="detail-recipientBankAccountNumber">0123456789' in html
    assert 'data-testid="detail-bankTransferNarration">' in html and "I have paid" in html
    when = read_at(app, last.fetched_at, "Africa/Lagos")
    assert "(Nigeria Time)" in when
    assert f"{LAST_READ} {when}." in text(page)
    assert "Please try again" not in text(page)


def test_the_deposit_page_of_a_sale_only_read_shows_where_to_send_as_last_read(app, client):
    sale = Sale(app, client)
    sale.to_deposit()
    assert sale.get("/deposit").status_code == 200
    last = stored(app, sale.session.order_id)
    upstream_down(app)
    page = sale.get("/deposit")
    assert page.status_code == 200
    assert last.full_order["toAddress"].lower() in page.get_data(as_text=True).lower()
    assert f"{LAST_READ} {read_at(app, last.fetched_at, 'Africa/Lagos')}." in text(page)

