"""What an operator does to an order from the desk, and the audit trail of it.

- "Check with the partner now" reads the order from the upstream and stores what changed, by the
  reconciler's own check (:func:`checkout.webhooks.reconcile.check_order`): a status moves only
  to a newer one, and a new status owes the shop's signal once, as always.
- "Send the signal again" runs the shop's ``order_status_changed`` for the order's current
  status once more (:func:`checkout.webhooks.admin.resend_status_signal`): the shop's code runs
  again, for a shop whose fulfilment failed.

Each is recorded in ``checkout_desk_actions`` before the page answers, whatever its outcome: who
(the staff member as the host named them, and their role), when, what, how it went. The order's
timeline shows them, and so does ``flask checkout orders show``.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime

from flask import Flask
from sqlalchemy.engine import Engine

from ..store.tables import desk_actions_table
from ..store.writing import write_transaction
from ..webhooks.admin import resend_status_signal
from ..webhooks.orders import OrderStatuses
from ..webhooks.reconcile import check_order
from .access import Staff

__all__ = ["CHECK", "RESEND", "Done", "check_with_partner", "send_signal_again",
           "record_action"]

CHECK, RESEND = "check", "resend"
DETAIL_KEPT = 2000


@dataclass(frozen=True)
class Done:
    """An action's outcome (check: ``moved``, ``unchanged``, ``failed``; resend:
    ``acknowledged``, ``failed``, ``busy``, ``none``) and what to say of it (the statuses
    before and after, the error)."""

    outcome: str
    detail: str | None = None


def check_with_partner(statuses: OrderStatuses, order_id: str, flow: str) -> Done:
    """Read the order from the upstream now and store what changed."""
    check = check_order(statuses, order_id, flow, source="desk")
    if check.error is not None:
        return Done("failed", check.error)
    return Done("moved" if check.moved else "unchanged", f"{check.before or '-'} -> {check.after}")


def send_signal_again(app: Flask, order_id: str) -> Done:
    """Run the shop's signal for the order's current status again."""
    resent = resend_status_signal(app, order_id)
    return Done(resent.outcome, resent.error if resent.error else resent.status)


def record_action(engine: Engine, order_id: str, staff: Staff, action: str, done: Done,
                  at: datetime | None = None) -> int:
    """Add one action to the audit trail; its id."""
    with write_transaction(engine) as conn:
        row = conn.execute(desk_actions_table.insert().values(
            order_id=order_id, at=at or datetime.now(UTC), staff=staff.name, role=staff.role,
            action=action, outcome=done.outcome,
            detail=(done.detail or None) and done.detail[:DETAIL_KEPT])
            .returning(desk_actions_table.c.id)).one()
    return int(row.id)
