"""A sandbox whose clock is manual (``SANDBOX_CLOCK = "manual"``): time passes at the real pace and
moves forward when told, from a test or the console, every timer falling due meanwhile running at
once and in order, so nobody waits on (or races) the upstream's minutes."""
from __future__ import annotations

import pytest

from checkout.sandbox import create_app

from .sandbox_support import Api


@pytest.fixture
def api():
    app = create_app({"TESTING": True, "SANDBOX_CLOCK": "manual"})
    yield Api(app)
    app.extensions["sandbox"].shutdown()


def test_an_order_moves_on_when_time_is_moved_forward_and_not_before(api):
    order = api.onramp_order()
    api.post("/api/onramp/order/confirm", {"orderId": order["_id"]})
    assert api.statuses(order["_id"])[-1] == "swap_buyer_confirmed"
    moved = api.client.post("/sandbox/clock/advance?seconds=600",
                            headers={"Accept": "application/json"})
    assert moved.status_code == 200 and moved.get_json()["timers_run"] >= 3
    # The agent's confirmation, the payout sent and done: each stamped a moment apart, in order.
    assert api.statuses(order["_id"])[-3:] == ["swap_seller_confirmed", "pending", "complete"]
    unpaid = api.onramp_order()
    api.client.post("/sandbox/clock/advance", data={"seconds": "299"})
    assert api.statuses(unpaid["_id"])[-1] == "swap_initiated"
    api.client.post("/sandbox/clock/advance", data={"seconds": "2"})
    assert api.statuses(unpaid["_id"])[-1] == "swap_expired"


def test_the_console_moves_it_and_refuses_what_it_cannot(api):
    page = api.client.get("/sandbox/").get_data(as_text=True)
    assert 'action="/sandbox/clock/advance"' in page and "Move time forward" in page
    assert api.client.post("/sandbox/clock/advance", data={"seconds": "60"}).status_code == 303
    for bad in ("-1", "abc", str(8 * 86400)):
        assert api.client.post("/sandbox/clock/advance", data={"seconds": bad}).status_code == 400
    real = create_app({"TESTING": True})
    try:
        assert real.test_client().post("/sandbox/clock/advance?seconds=1").status_code == 409
        assert "Move time forward" not in real.test_client().get("/sandbox/").get_data(
            as_text=True)
    finally:
        real.extensions["sandbox"].shutdown()
    with pytest.raises(ValueError, match="SANDBOX_TIME_SCALE"):
        create_app({"SANDBOX_CLOCK": "manual", "SANDBOX_TIME_SCALE": 0.01})
    with pytest.raises(ValueError, match="SANDBOX_CLOCK"):
        create_app({"SANDBOX_CLOCK": "fast"})
