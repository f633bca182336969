"""Claiming stored events stays cheap with a backlog that the statistics do not know about.

After ANALYZE ran while nearly every event was processed, PostgreSQL believes one event at most
is stored. A claim written as one UPDATE with the locking SELECT as its subquery was then
planned as a loop that ran the subquery again for every stored event: with a backlog of
thousands, each claim of 25 took about a second, and the dispatchers fell behind for minutes.
"""
from __future__ import annotations

import hashlib
import json
from typing import Any

import pytest
from sqlalchemy import event, insert, text

from checkout.webhooks import statements
from checkout.webhooks.store import PROCESSED, STORED, events_table, utcnow


def _rows(count: int, state: str, tag: str) -> list[dict[str, Any]]:
    now = utcnow()
    return [{"body_sha256": hashlib.sha256(f"{tag}-{n}".encode()).hexdigest(), "body": b"{}",
             "headers": {}, "received_at": now, "last_seen_at": now, "duplicates": 0,
             "attempts": 0, "state": state, "received_owed": 0} for n in range(count)]


def _most_loops(plan: dict[str, Any]) -> int:
    return max([plan.get("Actual Loops", 1)]
               + [_most_loops(child) for child in plan.get("Plans", [])])


@pytest.mark.postgres
def test_no_step_of_a_claim_runs_once_per_stored_event(postgres_engine):
    engine = postgres_engine
    with engine.begin() as conn:
        conn.execute(insert(events_table), _rows(5000, PROCESSED, "done"))
    with engine.begin() as conn:
        conn.execute(text("ANALYZE checkout_webhook_events"))
    with engine.begin() as conn:
        conn.execute(insert(events_table), _rows(2000, STORED, "backlog"))
    sent: list[tuple[str, Any]] = []     # each statement as the driver got it

    def capture(_conn, _cursor, statement, parameters, _context, _many) -> None:
        sent.append((statement, parameters))

    with engine.connect() as conn:
        ids = list(conn.execute(statements.STORED_IDS, {"batch": 25}).scalars())
        event.listen(conn, "before_cursor_execute", capture)
        assert list(conn.execute(statements.LOCK_STORED, {"ids": ids}).scalars())
        assert len(conn.execute(statements.CLAIM_EVENTS,
                                {"ids": ids, "now": utcnow()}).all()) == len(ids)
        event.remove(conn, "before_cursor_execute", capture)
        conn.rollback()
        for statement, parameters in sent:
            explained = conn.exec_driver_sql("EXPLAIN (ANALYZE, FORMAT JSON) " + statement,
                                             parameters).scalar_one()
            plan = explained if isinstance(explained, list) else json.loads(explained)
            assert _most_loops(plan[0]["Plan"]) <= len(ids), statement
        conn.rollback()
