"""Fixtures of the merchant's desk tests: an app on the embedded sandbox whose desk lets in whom
the ``X-Test-Staff`` header names (tests/desk/staff.py)."""
from __future__ import annotations

import pytest
from sqlalchemy import select

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
