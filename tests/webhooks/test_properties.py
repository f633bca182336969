"""Model-based: any interleaving of deliveries (duplicates, any order) and processing rounds ends
where a simple model of "newer updatedAt wins; one signal per order and status" says."""
from __future__ import annotations

import itertools
from datetime import timedelta

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from checkout import order_status

from .helpers import T0, order_payload, signed_webhook

STATUSES = ["deposit_awaiting", "deposit_validating", "deposit_canceled", "deposit_successful",
            "payout_pending", "payout_failed", "payout_successful", "refund_pending"]

# One order's possible deliveries: (status, seconds after T0); times are distinct.
deliveries = st.lists(st.tuples(st.sampled_from(STATUSES), st.integers(0, 10_000)),
                      min_size=1, max_size=8, unique_by=lambda d: d[1])
operations = st.lists(st.one_of(st.tuples(st.just("deliver"), st.integers(0, 7)),
                                st.just(("process",))), min_size=1, max_size=25)

_order_ids = itertools.count()


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(events=deliveries, script=operations)
def test_any_interleaving_matches_the_model(app, receiver, recorder, events, script):
    order_id = f"prop_{next(_order_ids)}"
    bodies = [signed_webhook(order_payload(order_id, status, updated_at=T0 + timedelta(seconds=t)))
              for status, t in events]
    # The model.
    delivered: list[int] = []          # distinct deliveries, in receipt order
    pending: list[int] = []
    stored: tuple[int, str] | None = None
    signalled: list[str] = []
    before = len(recorder.statuses())
    for op in [*script, ("process",)]:
        if op[0] == "deliver":
            index = op[1] % len(events)
            response = receiver.post(bodies[index])
            assert response.status_code == 200
            assert response.json["duplicate"] is (index in delivered)
            if index not in delivered:
                delivered.append(index)
                pending.append(index)
        else:
            receiver.process()
            for index in pending:
                status, t = events[index]
                if stored is None or t > stored[0]:
                    stored = (t, status)
                    if status not in signalled:
                        signalled.append(status)
            pending = []
    fired = [s for o, s in recorder.statuses()[before:] if o == order_id]
    assert fired == signalled
    row = order_status.get(app.extensions["checkout"].engine, order_id)
    if stored is None:
        assert row is None
    else:
        assert (row.status, row.updated_at) == (stored[1], T0 + timedelta(seconds=stored[0]))
