"""Cursor pagination: a walk to the end never repeats or skips an order, even while orders are made."""
from __future__ import annotations

import threading
from collections.abc import Callable

import pytest

from checkout.sandbox.orders import decode_cursor

from .sandbox_support import Api, api, sandbox_app, sandbox_factory  # noqa: F401


def walk(api: Api, path: str, limit: int, between: Callable[[], None] = lambda: None,
         **filters) -> list[dict]:
    seen: list[dict] = []
    cursor = None
    for _ in range(1000):
        params = {"limit": limit, **filters}
        if cursor:
            params["cursor"] = cursor
        page = api.get(path, **params)
        assert len(page["list"]) <= limit
        seen.extend(page["list"])
        cursor = page["nextCursor"]
        if cursor is None:
            return seen
        between()
    raise AssertionError("the walk never ended")


def make_onramp(api: Api) -> str:
    return api.onramp_order()["orderId"]


def make_offramp(api: Api) -> str:
    return api.offramp_typed_order()["_id"]


@pytest.mark.parametrize("path, make", [
    ("/api/onramp/orders", make_onramp),
    ("/api/pay-widget-merchant/orders", make_onramp),
    ("/api/offramp/orders", make_offramp),
])
def test_walk_while_orders_are_created(sandbox_app, path, make):
    api = Api(sandbox_app)
    before = [make(api) for _ in range(40)]
    stop = threading.Event()
    made_during: list[str] = []
    errors: list[BaseException] = []

    def keep_inserting() -> None:
        other = Api(sandbox_app)            # a client of its own: another merchant server thread
        try:
            while not stop.is_set():
                made_during.append(make(other))
        except BaseException as exc:        # surfaced by the assertion below
            errors.append(exc)

    inserter = threading.Thread(target=keep_inserting, daemon=True)
    inserter.start()
    # Let the inserter get going, and keep each page boundary wide enough for inserts to land in.
    page_pause = threading.Event()
    seen = walk(api, path, limit=3, between=lambda: page_pause.wait(0.005))
    stop.set()
    inserter.join(10)
    assert not errors, errors
    assert len(made_during) > 5, "the inserter did not run during the walk"

    ids = [order["_id"] for order in seen]
    assert len(ids) == len(set(ids)), "an order was repeated"
    assert set(before) <= set(ids), "an order created before the walk was skipped"
    # The walk shows exactly the orders that existed when its first page was read: orders made
    # after that are newer than every cursor and wait for a fresh walk.
    family = "offramp" if "offramp" in path else "onramp"
    newest = api.store.get(ids[0])
    existed = {o.id for o in api.store.all()
               if o.family == family and o.sort_key <= newest.sort_key}
    assert set(ids) == existed
    assert set(made_during) - existed, "no order was made during the walk"
    created = [order["createdAt"] for order in seen]
    assert created == sorted(created, reverse=True), "not newest first"
    fresh = {order["_id"] for order in walk(api, path, limit=100)}
    assert set(made_during) <= fresh


def test_pages_are_disjoint_and_cursor_is_opaque(api):
    made = [api.onramp_order()["orderId"] for _ in range(7)]
    first = api.get("/api/onramp/orders", limit=3)
    assert [o["_id"] for o in first["list"]] == made[::-1][:3]
    created_at, order_id = decode_cursor(first["nextCursor"])
    assert order_id == made[-3]
    second = api.get("/api/onramp/orders", limit=3, cursor=first["nextCursor"])
    third = api.get("/api/onramp/orders", limit=3, cursor=second["nextCursor"])
    assert [o["_id"] for o in second["list"] + third["list"]] == made[::-1][3:]
    assert third["nextCursor"] is None
    exact = api.get("/api/onramp/orders", limit=7)
    assert exact["nextCursor"] is None and len(exact["list"]) == 7


def test_filtered_walk(api):
    for index in range(9):
        api.onramp_order(orderParams=f"p{index}", email=f"user{index % 3}@example.com")
    seen = walk(api, "/api/onramp/orders", limit=2, userEmail="user1@example.com")
    assert [o["orderParams"] for o in seen] == ["p7", "p4", "p1"]


def test_order_created_in_the_same_instant_sorts_newer(api):
    store = api.store
    ids = [api.onramp_order()["orderId"] for _ in range(20)]
    with store.lock:
        stamps = [store.get(order_id).created_at for order_id in ids]
    assert stamps == sorted(stamps) and len(set(stamps)) == len(stamps)
