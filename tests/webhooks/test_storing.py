"""Storing deliveries (one transaction each), on SQLite and PostgreSQL: a body is stored once, its
copies counted against it, each copy that is an event owing its own webhook_received; every value
comes back as it was sent."""
from __future__ import annotations

import hashlib
import json
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime

import pytest
from sqlalchemy import select

from checkout.webhooks.processing import parse_or_reason, record_delivery
from checkout.webhooks.store import events_table, outbox_table

from ..conftest import make_app
from .helpers import order_payload


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def engine(request, webhook_config):
    if request.param == "postgresql":
        webhook_config["CHECKOUT_DATABASE_URL"] = request.getfixturevalue("postgres_url")
    state = make_app(dict(webhook_config)).extensions["checkout"]
    yield state.engine
    state.close()


def record(engine, body: bytes, headers: dict | None = None):
    parsed, reason = parse_or_reason(body)
    return record_delivery(engine, body, headers or {"content-type": "application/json"},
                           parsed, reason)


def counted(engine) -> dict[str, tuple[int, int]]:
    """body sha256 -> (its row's duplicates, webhook_received rows owed for its copies)."""
    e, o = events_table.c, outbox_table.c
    with engine.connect() as conn:
        rows = conn.execute(select(e.body_sha256, e.id, e.duplicates)).all()
        owed = conn.execute(select(o.event_id).where(o.duplicate == 1)).scalars().all()
    return {digest: (duplicates, owed.count(event_id)) for digest, event_id, duplicates in rows}


def test_concurrent_copies_are_stored_once_and_counted(engine):
    """From many threads at once: each distinct body stored once (its UNIQUE digest decides),
    every copy answered as a duplicate of it, counted, with its own webhook_received owed."""
    bodies = [json.dumps(order_payload(f"ord_{n}")).encode() for n in range(20)]
    with ThreadPoolExecutor(12) as pool:
        receipts = list(pool.map(lambda body: record(engine, body), bodies * 3))
    assert sum(not r.duplicate for r in receipts) == len(bodies)
    assert len({r.event_id for r in receipts}) == len(bodies)
    assert sorted(counted(engine).values()) == [(2, 2)] * len(bodies)


def test_a_copy_of_a_body_that_is_no_event_owes_nothing(engine):
    """A signed body the parser refuses is stored (invalid) and counted like any, but owes no
    webhook_received, like its first delivery."""
    raw = b"signed, but not an event"
    first, again = record(engine, raw), record(engine, raw)
    assert first.state == "invalid" and not first.duplicate
    assert again.duplicate and again.event_id == first.event_id
    assert counted(engine)[hashlib.sha256(raw).hexdigest()] == (1, 0)


def test_every_value_comes_back_as_it_was_sent(engine):
    awkward = 'a "quoted", {braced} \\ back\\slashed, NULL, ünïcödé ✓'
    raw = b"\x00\xff\xfe{not json} \\ \""                 # an invalid delivery is stored too
    receipt = record(engine, raw, {"content-type": awkward, "x-signature": "ab" * 32})
    with engine.connect() as conn:
        row = conn.execute(select(events_table).where(events_table.c.id == receipt.event_id)
                           ).mappings().one()
    assert row["body"] == raw and row["headers"] == {"content-type": awkward,
                                                     "x-signature": "ab" * 32}
    assert row["state"] == "invalid" and row["error"]
    received = row["received_at"].replace(tzinfo=row["received_at"].tzinfo or UTC)
    assert abs((datetime.now(UTC) - received).total_seconds()) < 60
