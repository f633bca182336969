"""A session's attempt at an upstream call that must be made once, and the claim it makes.

Some calls must reach the upstream once per session however often they are asked for: the create
of the session's order (:mod:`.creation`) and the off-ramp's transaction hash
(:mod:`.hash_confirmation`). A double click, a retried request, a second tab or a second device
may each ask at the same moment, and the worker that sends the call may die before its answer.

One device guards both, written once here: the *attempt* (what is sent, and when), written into
the session by a compare-and-set on its version (``SessionStore.save``) before the call is sent,
over the very version the call's checks were made on (:func:`write_attempt`). Of two requests
that read the same version, one writes its attempt; the other fails the compare-and-set, reads
the session again and finds it, and sends nothing. A write by anything else meanwhile only makes
the checks run again on the newer version. There is no lease: the attempt holds for as long as
the call lasts, however slow the upstream, and one left unsettled (the worker died, the answer
never came) is settled by looking up what the upstream did, not by a lease that lapses.

What came of the call is written only while the session still holds that same attempt
(:func:`on_own_attempt`): another request may have settled it meanwhile, or settled it and begun a
newer one, and what this request learnt is about its own attempt. An attempt is known by when it
began (epoch seconds on the journey's clock): two attempts of one session never begin at the same
moment, since a second is written only once the first is settled.
"""
from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Generic, TypeVar

from ..errors import SessionConflict
from ..sessions import CheckoutSession, SessionStore

Result = TypeVar("Result")
Sent = TypeVar("Sent")


@dataclass(frozen=True)
class Written(Generic[Sent]):
    """An attempt written: the session as saved, holding it, and what the call sends."""

    session: CheckoutSession
    sent: Sent


def write_attempt(sessions: SessionStore, session: CheckoutSession, *,
                  write: Callable[[CheckoutSession], Sent],
                  taken: Callable[[CheckoutSession], Result | None],
                  refused: Callable[[CheckoutSession], Result | None] | None = None,
                  ) -> Result | Written[Sent]:
    """Write an attempt over the version of ``session`` its checks are made on: the attempt
    written, or the outcome when nothing may be sent.

    ``refused(version)``: why nothing may be sent from this version (None: it may), asked of
    ``session`` and of every newer version read after a lost compare-and-set. ``write(copy)``
    writes the attempt into a copy of the version and returns what the call is to send.
    ``taken(newer)``: on a lost compare-and-set, the outcome when the newer version holds another
    request's attempt or its result (nothing is sent then); None when it was written by anything
    else, and the checks run again on it.
    """
    for _try in range(5):
        if refused is not None:
            outcome = refused(session)
            if outcome is not None:
                return outcome
        attempt = copy.deepcopy(session)
        sent = write(attempt)
        try:
            sessions.save(attempt)
        except SessionConflict:
            fresh = sessions.get(session.id)
            if fresh is None:
                raise
            lost = taken(fresh)
            if lost is not None:
                return lost
            session = fresh
            continue
        return Written(attempt, sent)
    raise SessionConflict(session.id)


def on_own_attempt(sessions: SessionStore, attempted: CheckoutSession,
                   began: Callable[[CheckoutSession], float | None],
                   change: Callable[[CheckoutSession], None]) -> CheckoutSession:
    """Apply ``change`` to the session while it still holds the attempt ``attempted`` holds (the
    same ``began``: when the session's unsettled attempt began, None when it holds none), never
    to a result or a newer attempt written since; the session as saved, or as found."""
    started = began(attempted)

    def on_own(fresh: CheckoutSession) -> bool:
        if started is None or began(fresh) != started:
            return False        # settled, or restarted, meanwhile by another request
        change(fresh)
        return True

    return sessions.update(attempted.id, on_own)
