"""What the journey tells the desk and the metrics as it happens: a session opened, a step's page
shown, an order created. Built once per app (composition.py) and given to the session store as its
hooks; the funnel's view (checkout.views.funnel) tells it of each step's page.

Step events are written when something reads them: the desk (``CHECKOUT_DESK_ACCESS``) or the
metrics (``CHECKOUT_METRICS_TOKEN``). An order created here is always indexed (one row and its
search keys, once per order): the desk, turned on later, then finds it too.

A write that fails (the database unwell) is logged and the page goes on: a count or an index row
lost is better than a page lost, and the order's webhooks index it again.
"""
from __future__ import annotations

import logging
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING

from sqlalchemy.exc import SQLAlchemyError

from ..journey.creation import order_params
from ..kyc.standing import contact
from ..sessions import CheckoutSession
from ..store.writing import write_transaction
from . import index
from .digests import session_key
from .steps import OPENED, ORDERED, record_step

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine

    from ..journey.flow import Breakdown, Flow
    from ..metrics import Metrics

__all__ = ["Journal"]

log = logging.getLogger(__name__)


class Journal:
    """``flows``: the app's flows by name (the mapping the state holds, filled once they are
    built: they need the session store, which needs this); ``steps``: whether step events are
    written (the desk or the metrics read them)."""

    def __init__(self, engine: Engine, launch_secret: str, metrics: Metrics,
                 flows: Mapping[str, Flow], *, steps: bool) -> None:
        self.engine = engine
        self.launch_secret = launch_secret
        self.metrics = metrics
        self.flows = flows
        self.steps = steps

    def session_key(self, session_id: str) -> str:
        return session_key(self.launch_secret, session_id)

    def session_opened(self, session: CheckoutSession, start: str) -> None:
        """A new session (``start``: ``launch`` or ``unsigned``)."""
        self.metrics.session_opened(session.flow, start)
        self._reach(session, OPENED)

    def step_reached(self, session: CheckoutSession, step: str) -> None:
        """``session`` was shown ``step``'s page: counted the first time only."""
        if self._reach(session, step):
            self.metrics.step_reached(session.flow, step)

    def order_created(self, session: CheckoutSession) -> None:
        """``session``'s order was created upstream and attached to it."""
        self.metrics.order_created(session.flow)
        self._index(session)
        self._reach(session, ORDERED)

    def _reach(self, session: CheckoutSession, step: str) -> bool:
        if not self.steps:
            return False
        try:
            return record_step(self.engine, self.session_key(session.id), session.flow, step,
                               datetime.now(UTC))
        except SQLAlchemyError as exc:
            log.warning("step %s of a %s session not recorded (%s)", step, session.flow,
                        type(exc).__name__)
            return False

    def _index(self, session: CheckoutSession) -> None:
        if not session.order_id:
            return
        try:
            with write_transaction(self.engine) as conn:
                index.record(conn, self.facts(session), self.launch_secret, datetime.now(UTC))
        except SQLAlchemyError as exc:
            log.warning("order %s not indexed for the desk (%s): its webhooks will index it",
                        session.order_id, type(exc).__name__)

    def facts(self, session: CheckoutSession) -> index.OrderFacts:
        """What the customer was shown and gave for ``session``'s order."""
        assert session.order_id is not None
        flow = self.flows.get(session.flow)
        breakdown = flow.breakdown(session.quote) if flow is not None and session.quote \
            else None
        who = contact(session)
        return index.OrderFacts(
            session.order_id, flow=session.flow, session_key=self.session_key(session.id),
            order_params=order_params(session), network=_text(session.value("network")),
            asset=_text(session.value("asset")),
            currency=breakdown.currency or None if breakdown is not None else None,
            fiat_amount=_total(breakdown, "money"), crypto_amount=_total(breakdown, "crypto"),
            emails=tuple(filter(None, [who.email])), phones=tuple(filter(None, [who.phone])),
            addresses=tuple(filter(None, [_text(session.value("address"))])),
            hashes=tuple(filter(None, [session.tx_hash])))


def _total(breakdown: Breakdown | None, kind: str) -> Decimal | None:
    """The amount the customer pays or receives in local money (``money``) or in crypto."""
    if breakdown is None:
        return None
    return next((row.amount for row in breakdown.rows if row.total and row.kind == kind), None)


def _text(value: object) -> str | None:
    return value.strip() or None if isinstance(value, str) else None
