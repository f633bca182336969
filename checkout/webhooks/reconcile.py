"""No order stuck in a non-final status: asking the upstream about orders whose webhooks were lost.

Webhooks get lost (a dashboard misconfiguration, an outage longer than the sender's retries). The
reconciler looks for orders that are not settled for their flow (``Flow.settled_statuses``) and
whose stored status has not been known current for ``CHECKOUT_RECONCILE_AFTER`` seconds, and asks
the upstream's get-order endpoint of their flow. Where it learns of them:

* sessions with an ``order_id`` (the order was created here, whether or not a webhook ever came:
  the watch ends when the expired session is purged);
* stored orders of the on-ramp and off-ramp flows without such a session, created in the last
  ``SESSION_LIFETIME`` (webhooks told us of them; older ones are left alone).

What it learns is stored by :meth:`checkout.webhooks.orders.OrderStatuses.fetch_and_store`, the path
a status page's refresh takes: a status moves only to a newer time (``updatedAt``, or for an on-ramp
order the time of the fetch; never when a webhook moved the row meanwhile), and
``order_status_changed`` is owed through the same UNIQUE (order_id, status) guard as webhooks. So a
webhook that arrives after the reconciler changes nothing it already recorded, and signals nothing
twice; there is no second path that fires signals.

Each order has its own next check time in ``checkout_order_watch``. Claiming is a conditional
UPDATE that pushes it a lease ahead and clears ``last_checked_at`` until the check ends, so of
several workers one asks; an order resting in its back-off (``last_checked_at`` set) may be
taken early (``--now``), never one whose check is under way. A check that learns nothing
new (or fails: upstream down, 404) waits ``CHECKOUT_RECONCILE_AFTER`` × 2, 4, 8 ... seconds, at
most ``CHECKOUT_RECONCILE_MAX_BACKOFF``; a status move starts over. Each process makes at most
``CHECKOUT_RECONCILE_PER_MINUTE`` calls a minute (0 turns the background reconciler off). It runs
from the dispatcher thread (a pass per quarter of ``CHECKOUT_RECONCILE_AFTER``, at most 30 s
apart) and from ``flask checkout orders reconcile``, which also lists the orders left waiting
(:meth:`Reconciler.outlook`) and can ask about them all at once, back-off or not (``--now``).
Logs name the order, never a session.
"""
from __future__ import annotations

import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import Select, and_, delete, func, not_, or_, select, update
from sqlalchemy.engine import Engine
from sqlalchemy.sql.elements import ColumnElement

from ..errors import UpstreamError
from ..flows import flow_type
from ..pacing import CallBudget, Schedule
from ..sessions import SESSION_LIFETIME
from ..store.tables import sessions_table
from .orders import OrderStatuses, get
from .store import (
    aware,
    dialect_insert,
    orders_table,
    utcnow,
    watch_table,
    write_transaction,
)

log = logging.getLogger(__name__)

FLOWS = ("onramp", "offramp")    # the flows with a get-order endpoint
LEASE = timedelta(seconds=120)   # longer than the client's own timeouts and retries
BATCH = 50                       # candidates read per pass
PASS_INTERVAL_MAX = 30.0         # seconds between two background passes of a process, at most


@dataclass(frozen=True)
class Check:
    """One order the reconciler asked about, and what it learned."""

    order_id: str
    flow: str
    before: str | None       # the stored status before the check (None: none stored)
    after: str | None        # after it
    error: str | None = None

    @property
    def moved(self) -> bool:
        return self.error is None and self.after is not None and self.after != self.before

    @property
    def result(self) -> str:
        """``failed``, ``moved`` (the upstream told of a status we did not have) or
        ``unchanged``."""
        return "failed" if self.error is not None else "moved" if self.moved else "unchanged"

    @property
    def settled(self) -> bool:
        return self.after in flow_type(self.flow).settled_statuses


@dataclass(frozen=True)
class Pass:
    """What one :meth:`Reconciler.run` pass did."""

    checks: list[Check]
    due: int              # orders that were due (some may be left for the budget or another worker)
    budget_spent: bool    # stopped because the per-minute bound was reached


@dataclass(frozen=True)
class Watched:
    """An order the reconciler watches (not settled), and when it will next ask about it."""

    order_id: str
    flow: str
    heard_at: datetime             # when its status was last known current
    next_check_at: datetime | None  # its back-off, or a check's lease; None: never asked
    quiet_checks: int              # checks in a row that learned nothing: the back-off's exponent
    due_at: datetime               # the later of heard_at + CHECKOUT_RECONCILE_AFTER and that
    checking: bool                 # a check is under way (a worker holds its lease)

    @property
    def backing_off(self) -> bool:
        """Waiting for its back-off, rather than because its status was known current lately."""
        return self.next_check_at is not None and self.next_check_at >= self.due_at


class Reconciler:
    """The app's reconciler, built with what it uses (composition.py): the order statuses it
    stores what it learns through, the app's config (read at each pass: an operator or a test may
    change it on a running app), and ``on_check(flow, result)`` to count each check. It keeps this
    process's call budget and the time of its last background pass."""

    def __init__(self, statuses: OrderStatuses, config: Mapping[str, Any],
                 on_check: Callable[[str, str], None]) -> None:
        self.statuses = statuses
        self.config = config
        self.on_check = on_check
        self.budget = CallBudget()      # upstream calls in the last minute, this process
        self.schedule = Schedule()      # when this process's dispatcher last reconciled

    def run(self, *, older_than: float | None = None, now: datetime | None = None,
            limit: int = BATCH, ignore_backoff: bool = False) -> Pass:
        """Ask the upstream about due orders (one pass) and store what it says. Never raises for
        one order's failure; raises if the database cannot be read.

        ``older_than`` overrides ``CHECKOUT_RECONCILE_AFTER``; ``ignore_backoff`` asks about
        orders whose next check is later too (an operator's ``--now``); ``now`` is for tests.
        """
        engine = self.statuses.engine
        now = now or utcnow()
        after = self._after(older_than)
        per_minute = int(self.config.get("CHECKOUT_RECONCILE_PER_MINUTE", 30))
        cap = float(self.config.get("CHECKOUT_RECONCILE_MAX_BACKOFF", 3600))
        forget_finished(engine, now=now)
        due = due_orders(engine, now=now, after=timedelta(seconds=after), limit=limit,
                         ignore_backoff=ignore_backoff)
        checks: list[Check] = []
        spent = False
        for order in due:
            order_id, flow = order.order_id, order.flow
            if not self.budget.take(per_minute, now.timestamp()):
                spent = True
                break
            quiet_checks = _claim(engine, order_id, flow, now, ignore_backoff=ignore_backoff)
            if quiet_checks is None:
                self.budget.give_back(now.timestamp())
                continue                  # another worker has it, or it moved meanwhile
            check = check_order(self.statuses, order_id, flow)
            self.on_check(check.flow, check.result)
            checks.append(check)
            _schedule(engine, check, quiet_checks, after, cap, now)
        return Pass(checks=checks, due=len(due), budget_spent=spent)

    def outlook(self, *, older_than: float | None = None,
                now: datetime | None = None) -> list[Watched]:
        """Every order the reconciler watches now, soonest due first: what a pass would find,
        and when each of the others is due. Reads only."""
        return watched_orders(self.statuses.engine, now=now or utcnow(),
                              after=timedelta(seconds=self._after(older_than)))

    def _after(self, older_than: float | None) -> float:
        return float(self.config.get("CHECKOUT_RECONCILE_AFTER", 300) if older_than is None
                     else older_than)

    def maybe_run(self) -> Pass | None:
        """One pass from the dispatcher thread, unless turned off. Never raises."""
        if int(self.config.get("CHECKOUT_RECONCILE_PER_MINUTE", 30)) <= 0:
            return None
        # Every sweep would read the sessions and orders tables every few seconds in every
        # worker; a pass per quarter of CHECKOUT_RECONCILE_AFTER (at most 30 s apart) finds
        # orders in time.
        after = float(self.config.get("CHECKOUT_RECONCILE_AFTER", 300))
        if not self.schedule.due(min(max(after / 4, 1e-3), PASS_INTERVAL_MAX)):
            return None
        try:
            return self.run()
        except Exception:  # the database may be down; try again next sweep
            log.exception("order reconciliation pass failed")
            return None


def _watched_queries(now: datetime) -> list[tuple[Select[Any], ColumnElement[Any]]]:
    """The two sources of watched orders (not settled): sessions with an order, and stored
    orders of the last ``SESSION_LIFETIME`` without one. Each selects order_id, flow, heard_at,
    next_check_at, quiet_checks, last_checked_at; with its heard_at expression, to filter on."""
    s, o, w = sessions_table.c, orders_table.c, watch_table.c
    session_heard = func.coalesce(o.refreshed_at, s.updated_at)
    from_sessions = (
        select(s.order_id, s.flow, session_heard.label("heard_at"), w.next_check_at,
               w.quiet_checks, w.last_checked_at)
        .select_from(sessions_table
                     .outerjoin(orders_table, o.order_id == s.order_id)
                     .outerjoin(watch_table, w.order_id == s.order_id))
        .where(s.order_id.is_not(None), s.flow.in_(FLOWS),
               or_(o.order_id.is_(None), not_(_settled(s.flow, o.status)))))
    has_session = select(s.order_id).where(s.order_id == o.order_id).exists()
    from_orders = (
        select(o.order_id, o.flow, o.refreshed_at.label("heard_at"), w.next_check_at,
               w.quiet_checks, w.last_checked_at)
        .select_from(orders_table.outerjoin(watch_table, w.order_id == o.order_id))
        .where(o.flow.in_(FLOWS), not_(_settled(o.flow, o.status)),
               o.created_at > now - SESSION_LIFETIME, not_(has_session)))
    return [(from_sessions, session_heard), (from_orders, o.refreshed_at)]


def _watched(row: Any, after: timedelta, now: datetime) -> Watched:
    heard_at = aware(row.heard_at)
    next_check_at = aware(row.next_check_at)
    due_at = max(heard_at + after, next_check_at or heard_at)
    checking = next_check_at is not None and next_check_at > now and row.last_checked_at is None
    return Watched(str(row.order_id), str(row.flow), heard_at, next_check_at,
                   int(row.quiet_checks or 0), due_at, checking)


def _unique(rows: list[Watched]) -> list[Watched]:
    seen: set[str] = set()
    found = []
    for row in rows:
        if row.order_id not in seen:
            seen.add(row.order_id)
            found.append(row)
    return found


def due_orders(engine: Engine, *, now: datetime, after: timedelta, limit: int = BATCH,
               ignore_backoff: bool = False) -> list[Watched]:
    """Orders not settled, not known current for ``after``, and due (or, ``ignore_backoff``,
    resting in their back-off): those of sessions first, each source soonest due first."""
    found: list[Watched] = []
    with engine.connect() as conn:
        for query, heard_at in _watched_queries(now):
            rows = conn.execute(
                query.where(heard_at <= now - after, _takeable(now, ignore_backoff))
                .order_by(func.coalesce(watch_table.c.next_check_at, heard_at))
                .limit(limit)).all()
            found += [_watched(row, after, now) for row in rows]
    return _unique(found)[:limit]


def _takeable(now: datetime, ignore_backoff: bool) -> ColumnElement[bool]:
    """Orders a pass may claim: never asked, or due; ``ignore_backoff``: or resting in their
    back-off (a check ended: never one whose check is under way)."""
    w = watch_table.c
    return or_(w.order_id.is_(None), w.next_check_at <= now,
               *([w.last_checked_at.is_not(None)] if ignore_backoff else []))


def watched_orders(engine: Engine, *, now: datetime, after: timedelta) -> list[Watched]:
    """Every order the reconciler watches (not settled), soonest due first."""
    with engine.connect() as conn:
        rows = [_watched(row, after, now) for query, _heard in _watched_queries(now)
                for row in conn.execute(query).all()]
    return sorted(_unique(rows), key=lambda order: (order.due_at, order.order_id))


def forget_finished(engine: Engine, *, now: datetime) -> int:
    """Delete schedules no longer needed: the order settled (a webhook may have done it), or it
    is no longer watched (its session purged, its stored order too old). Returns how many."""
    s, o, w = sessions_table.c, orders_table.c, watch_table.c
    settled = select(o.order_id).where(_settled(o.flow, o.status))
    has_session = select(s.order_id).where(s.order_id == w.order_id).exists()
    recent_order = select(o.order_id).where(o.order_id == w.order_id,
                                            o.created_at > now - SESSION_LIFETIME).exists()
    with write_transaction(engine) as conn:
        result = conn.execute(delete(watch_table).where(
            or_(w.order_id.in_(settled), and_(not_(has_session), not_(recent_order)))))
    return int(result.rowcount or 0)


def _settled(flow: ColumnElement[str | None], status: ColumnElement[str | None]
             ) -> ColumnElement[bool]:
    return or_(*(and_(flow == name, status.in_(sorted(flow_type(name).settled_statuses)))
                 for name in FLOWS))


def _claim(engine: Engine, order_id: str, flow: str, now: datetime, *,
           ignore_backoff: bool = False) -> int | None:
    """Take the order for one check: its quiet checks so far, or None if not ours now (another
    worker's, or not due). ``last_checked_at`` stays empty while the check is under way."""
    w = watch_table.c
    with write_transaction(engine) as conn:
        inserted = conn.execute(
            dialect_insert(conn.dialect.name, watch_table)
            .values(order_id=order_id, flow=flow, next_check_at=now + LEASE, quiet_checks=0)
            .on_conflict_do_nothing(index_elements=["order_id"])
            .returning(w.quiet_checks)).first()
        if inserted is not None:
            return 0
        claimed = conn.execute(
            update(watch_table).where(w.order_id == order_id, _takeable(now, ignore_backoff))
            .values(next_check_at=now + LEASE, last_checked_at=None)
            .returning(w.quiet_checks)).first()
    return int(claimed.quiet_checks) if claimed is not None else None


def check_order(statuses: OrderStatuses, order_id: str, flow: str, *,
                source: str = "reconciliation") -> Check:
    """Ask the upstream about one order now and store what it says, as a pass does (a staff
    member's "check with the partner now" too: ``source`` "desk"). Never raises for the
    upstream's failure or the order's: the check says it."""
    seen = get(statuses.engine, order_id)
    before = seen.status if seen is not None else None
    try:
        stored = statuses.fetch_and_store(order_id, flow, seen=seen, source=source)
    except UpstreamError as exc:
        log.warning("reconciling order %s (%s) failed: %r", order_id, flow, exc)
        return Check(order_id, flow, before, before, error=f"{type(exc).__name__}: {exc}")
    except Exception as exc:  # never let one order stop the pass
        log.exception("reconciling order %s (%s) crashed", order_id, flow)
        return Check(order_id, flow, before, before, error=f"{type(exc).__name__}: {exc}")
    after = stored.status if stored is not None else None
    if after != before:
        log.info("reconciled order %s (%s): %s -> %s", order_id, flow, before, after)
    return Check(order_id, flow, before, after)


def _schedule(engine: Engine, check: Check, quiet_checks: int, after: float, cap: float,
              now: datetime) -> None:
    w = watch_table.c
    with write_transaction(engine) as conn:
        if check.settled:
            conn.execute(delete(watch_table).where(w.order_id == check.order_id))
            return
        quiet = 0 if check.moved else min(quiet_checks + 1, 40)   # 2 ** 40: capped long before
        wait = min(max(after, 1e-3) * 2.0 ** quiet, cap)
        if check.error is None and check.moved:
            wait = min(after, cap)
        conn.execute(update(watch_table).where(w.order_id == check.order_id)
                     .values(next_check_at=now + timedelta(seconds=wait), quiet_checks=quiet,
                             last_checked_at=now, last_error=check.error))

