"""Fixtures of the merchant's desk tests: an app on the embedded sandbox whose desk lets in whom
the ``X-Test-Staff`` header names (tests/desk/staff.py)."""
from __future__ import annotations

import re

import pytest
from sqlalchemy import select

from ..webhooks.conftest import Receiver
from ..webhooks.helpers import order_payload, signed_webhook
from .staff import OPERATOR, VIEWER

ACCESS = "tests.desk.staff:from_header"


@pytest.fixture
def config(config) -> dict:
    config.update(
        CHECKOUT_DESK_ACCESS=ACCESS,
        # Real time (quotes and unpaid orders stay alive); no webhook reaches the test client, so
        # every status read asks the upstream; the tests run the dispatcher when they say so.
        CHECKOUT_SANDBOX={"SANDBOX_TIME_SCALE": 1.0}, CHECKOUT_STATUS_MAX_AGE=0,
        CHECKOUT_WEBHOOK_BACKGROUND=False,
        CHECKOUT_SUPPORT={"email": "help@shop.example"}, CHECKOUT_MERCHANT_NAME="Test Shop")
    return config


def rows(app, table) -> list[dict]:
    """Every row of one of the checkout's tables."""
    with app.extensions["checkout"].engine.connect() as conn:
        return [dict(row._mapping) for row in conn.execute(select(table))]


PREFIX = "/checkout/desk"


class Desk:
    """A staff member at the desk with the test client: pages by path under the desk, forms
    posted with the token their page carries."""

    def __init__(self, client, staff: dict[str, str]) -> None:
        self.client = client
        self.staff = staff

    def get(self, path: str = "/", headers: dict[str, str] | None = None, **kwargs):
        return self.client.get(PREFIX + path, headers={**self.staff, **(headers or {})}, **kwargs)

    def token(self, page_path: str) -> str:
        page = self.get(page_path)
        match = re.search(r'name="csrf_token" value="([^"]+)"', page.get_data(as_text=True))
        assert match, page.get_data(as_text=True)[:3000]
        return match.group(1)

    def post(self, path: str, data: dict[str, str] | None = None, *, token_from: str | None = None,
             **kwargs):
        form = dict(data or {})
        if token_from is not None:
            form["csrf_token"] = self.token(token_from)
        return self.client.post(PREFIX + path, data=form, headers=self.staff, **kwargs)


@pytest.fixture
def operator(client) -> Desk:
    return Desk(client, OPERATOR)


@pytest.fixture
def viewer(client) -> Desk:
    return Desk(client, VIEWER)


def webhook_order(app, order_id: str = "ord_desk_1", status: str = "deposit_awaiting",
                  **fields) -> None:
    """An order the checkout learns of from a (signed) webhook, processed."""
    receiver = Receiver(app)
    response = receiver.post(signed_webhook(order_payload(order_id, status, **fields)))
    assert response.status_code == 200, response.get_data(as_text=True)
    receiver.process()
