"""The funnel, read from the sessions' step records (:mod:`.steps`): of the sessions of each flow
opened over a period, how many reached each step, and where those that went no further left.

"Left here" counts the sessions whose furthest step, in the flow's own order, was this one: those
that opened and went no further left at "opened", those whose order was created but who never saw
its page left at "ordered". A step the journey passed over (every value already given) has no
event: a session is never counted as having left at a step it skipped.

One read of ``checkout_step_sessions`` grouped by the steps reached: the sessions of a month fall
into a few dozen such groups, which are counted here.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import func, select
from sqlalchemy.engine import Engine

from ..store.tables import step_sessions_table

__all__ = ["StepCount", "FlowFunnel", "funnel"]


@dataclass(frozen=True)
class StepCount:
    step: str
    reached: int
    left: int           # sessions whose furthest step this was


@dataclass(frozen=True)
class FlowFunnel:
    flow: str
    steps: list[StepCount]

    @property
    def opened(self) -> int:
        return self.steps[0].reached if self.steps else 0


def funnel(engine: Engine, steps_of: Mapping[str, Sequence[str]], since: datetime,
           until: datetime) -> list[FlowFunnel]:
    """Each flow's funnel for the sessions opened in [``since``, ``until``); ``steps_of``: each
    flow's steps in order, the session's opening first (``opened`` ... ``ordered`` ...)."""
    s = step_sessions_table.c
    with engine.connect() as conn:
        groups = conn.execute(
            select(s.flow, s.steps, func.count())
            .where(s.opened_at >= since, s.opened_at < until, s.flow.in_(list(steps_of)))
            .group_by(s.flow, s.steps)).all()
    reached: dict[tuple[str, str], int] = {}
    left: dict[tuple[str, str], int] = {}
    for flow, steps, count in groups:
        order = steps_of[flow]
        seen = set(str(steps).split(","))
        for step in seen:
            reached[(flow, step)] = reached.get((flow, step), 0) + int(count)
        furthest = next((step for step in reversed(order) if step in seen), None)
        if furthest is not None:
            left[(flow, furthest)] = left.get((flow, furthest), 0) + int(count)
    return [FlowFunnel(flow, [StepCount(step, reached.get((flow, step), 0),
                                        left.get((flow, step), 0)) for step in steps])
            for flow, steps in steps_of.items()]
