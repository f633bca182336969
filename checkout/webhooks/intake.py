"""The intake: deliveries into ``checkout_webhook_events``, committed before they are answered.

Concurrent deliveries of a process are written together (:mod:`.group_commit`):

* the new ones by one INSERT that commits on its own, ``ON CONFLICT (body_sha256) DO NOTHING``,
  answering each new row's id;
* the copies of a body stored before (or earlier in the same batch) by one transaction for the
  whole batch: each stored row's ``duplicates`` goes up by its number of copies, and each copy
  that is an event owes its own ``webhook_received`` (an outbox row). In a sender's retry storm
  most deliveries are copies; one transaction each was most of the receiver's writing.

The INSERT runs on a connection the intake keeps (:class:`.store.KeptConnection`: pinged after
it was idle, replaced when the database fails it). The database being unavailable for the INSERT
fails the whole batch
(each sender gets a 503 and retries); for the copies' transaction, the copies only. Any other
refusal of the INSERT is one delivery's, which fails alone while the others are stored.
"""
from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from functools import partial
from typing import Any

from sqlalchemy.engine import Engine, Row
from sqlalchemy.exc import OperationalError, SQLAlchemyError

from ..process_local import ProcessLocal
from . import statements
from .group_commit import GroupCommit
from .store import PENDING, STORED, KeptConnection, outbox_table, write_transaction

# At most this many deliveries in one INSERT: 50 rows of 14 values stay under the 999 bound
# parameters of older SQLite versions, and one statement commits them all at once.
MAX_BATCH = 50


@dataclass(frozen=True)
class Receipt:
    """What the receiver answers: the stored event's id and whether the body was seen before."""

    event_id: int
    duplicate: bool
    state: str


Result = Row[Any] | None | Exception    # the new row; None: stored before; or why it failed


def store_batch(writer: KeptConnection, batch: list[dict[str, Any]]
                ) -> list[Receipt | Exception]:
    """Store each delivery of ``batch`` (rows of the events table): the new ones inserted on
    ``writer``, the copies counted against the row they repeat. One receipt (or the reason it
    failed) each."""
    inserted = insert_new(writer, batch)
    copies = [values for values, row in zip(batch, inserted, strict=True) if row is None]
    counted: list[Receipt | Exception] = []
    if copies:
        try:
            counted.extend(count_copies(writer.engine, copies))
        except Exception as exc:
            # The batch's new deliveries are committed by now: whatever the copies' transaction
            # met (the database unavailable, or a bug), only the copies fail.
            counted = [exc] * len(copies)
    receipts = iter(counted)
    return [next(receipts) if row is None
            else row if isinstance(row, Exception)
            else Receipt(event_id=row.id, duplicate=False, state=row.state)
            for row in inserted]


def count_copies(engine: Engine, copies: list[dict[str, Any]]) -> list[Receipt]:
    """In one transaction: add each body's number of copies to its stored row's ``duplicates``,
    and owe one ``webhook_received`` per copy that is an event (a stored row's state; a signed
    body that is not an event owes none, like its first delivery)."""
    per_body = Counter(values["body_sha256"] for values in copies)
    now = max(values["last_seen_at"] for values in copies)
    with write_transaction(engine) as conn:
        seen: dict[str, Row[Any]] = {}
        for digest, count in per_body.items():
            row = conn.execute(statements.COUNT_DUPLICATES,
                               {"digest": digest, "copies": count, "now": now}).first()
            if row is None:     # stored rows are never deleted: the INSERT found this one
                raise RuntimeError("the stored delivery a copy repeats was not found")
            seen[digest] = row
        owed = [{"signal": "webhook_received", "event_id": seen[values["body_sha256"]].id,
                 "duplicate": 1, "created_at": values["last_seen_at"], "state": PENDING,
                 "attempts": 0}
                for values in copies if values["state"] == STORED]
        if owed:
            conn.execute(outbox_table.insert(), owed)
    return [Receipt(event_id=seen[values["body_sha256"]].id, duplicate=True,
                    state=seen[values["body_sha256"]].state) for values in copies]


def insert_new(writer: KeptConnection, batch: list[dict[str, Any]]) -> list[Result]:
    """INSERT the deliveries not seen before, in one statement; for each one its new row (id,
    state), or None if its body was stored before (also by an earlier copy in this batch)."""
    try:
        with writer.use() as conn:
            dialect = conn.dialect.name
            rows = conn.execute(statements.insert_events(dialect),
                                statements.insert_events_params(dialect, batch)).all()
    except OperationalError:
        raise                       # the database is unavailable: each delivery gets its 503
    except SQLAlchemyError as exc:
        if len(batch) == 1:
            return [exc]
        # Whatever the database refused was in one delivery: the others are stored without it.
        return [result for values in batch for result in insert_new(writer, [values])]
    inserted = {row.body_sha256: row for row in rows}
    return [inserted.pop(values["body_sha256"], None) for values in batch]


class Intake:
    """The deliveries of this process into one database: ``submit(values)`` stores one
    (``values``: a row of the events table) with whatever else is being stored now, and returns
    its receipt once committed. Made once per app (``CheckoutState.intake``)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        # One leader writes at a time (the group commit), so one connection serves every batch.
        writer = self._writer = KeptConnection(engine)
        # A process forked while one of its threads was writing a batch must not inherit a
        # committer that waits for that batch for ever (the thread is not in the child).
        self._committer: ProcessLocal[GroupCommit[dict[str, Any], Receipt]] = ProcessLocal(
            lambda: GroupCommit(partial(store_batch, writer), MAX_BATCH))

    def submit(self, values: dict[str, Any]) -> Receipt:
        return self._committer.value.submit(values)

    def close(self) -> None:
        """Give the kept connection back to the pool, after the batch being written, if any (a
        later delivery takes one again)."""
        self._writer.close()
