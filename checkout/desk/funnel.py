"""The funnel, read from the step events (:mod:`.steps`): how many sessions of each flow reached
each step over a period, and where those that went no further left.

"Reached" counts the sessions with an event of that step in the period. "Left here" counts the
sessions whose furthest step (in the flow's own order) was this one: those that opened and went
no further left at "opened", those whose order was created and who never saw its page left at
"ordered". A step the journey passed over (every value already given) has no event: a session is
never counted as having left at a step it skipped.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import and_, case, func, literal, select
from sqlalchemy.engine import Engine

from ..store.tables import step_events_table

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
    """Each flow's funnel over [``since``, ``until``); ``steps_of``: each flow's steps in order,
    the session's opening first (``opened`` ... ``ordered`` ...)."""
    e = step_events_table.c
    in_period = and_(e.reached_at >= since, e.reached_at < until)
    # Each step's place in its flow: a session's furthest step is the one of highest place.
    place = case(*[(and_(e.flow == flow, e.step == step), literal(index))
                   for flow, steps in steps_of.items() for index, step in enumerate(steps)],
                 else_=literal(-1))
    furthest = (select(e.flow.label("flow"), func.max(place).label("place"))
                .where(in_period).group_by(e.session_key, e.flow).subquery())
    with engine.connect() as conn:
        reached = {(flow, step): int(count) for flow, step, count in conn.execute(
            select(e.flow, e.step, func.count()).where(in_period).group_by(e.flow, e.step))}
        left = {(flow, int(index)): int(count) for flow, index, count in conn.execute(
            select(furthest.c.flow, furthest.c.place, func.count())
            .group_by(furthest.c.flow, furthest.c.place))}
    return [FlowFunnel(flow, [StepCount(step, reached.get((flow, step), 0),
                                        left.get((flow, index), 0))
                              for index, step in enumerate(steps)])
            for flow, steps in steps_of.items()]
