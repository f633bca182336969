"""A flow's steps, declared once, and the one place that says which come next and which are done.

Steps before the order (the amount, the wallet, the offer's fields, ...) are done when the user
submitted them, or when the journey passed them over because every value they ask for was already
given (by the launch token or an earlier step). A step whose ``needed(session)`` is False (KYC when
the amount needs none, the offer's fields when it has none) is skipped. Review comes after them,
then the order's own pages.

Progress lives in the session (``CheckoutSession.done`` and ``answered``); changing a step undoes
the steps after it, unless the change leaves them valid (``keep``).
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from ..errors import OrderUnderway
from ..sessions import CheckoutSession, SessionStore
from .settings import JourneySettings

REVIEW = "review"


def update_before_order(sessions: SessionStore, settings: JourneySettings, session_id: str,
                        change: Callable[[CheckoutSession], Any]) -> CheckoutSession:
    """Save ``change`` unless the order exists or is being created (then ``OrderUnderway``).

    A step submitted in a second tab while the first one confirms must not rewrite the answers,
    quote or payee the order was created from: the order's pages read them. The check is made on
    the fresh copy the save applies to (a compare-and-set), so no race gets between the two.
    """
    def guarded(fresh: CheckoutSession) -> Any:
        if creation_underway(fresh, settings):
            raise OrderUnderway(session_id)
        return change(fresh)

    return sessions.update(session_id, guarded)


def claimed_by_an_earlier_release(session: CheckoutSession, settings: JourneySettings) -> bool:
    """Whether a process of a release before the pending attempt was the claim is creating the
    session's order right now: those claimed in ``creating_since`` first, for the grace period
    and a minute. Read (never written) while such a process may still run during a rolling
    upgrade, so that it and this one never both send a create."""
    since = session.creating_since
    if since is None:
        return False
    if since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    return datetime.now(UTC) - since < timedelta(seconds=settings.create_grace) \
        + timedelta(minutes=1)


def creation_underway(session: CheckoutSession, settings: JourneySettings) -> bool:
    """Whether the session's order exists or may be being created: its answers, quote and payee
    are then what the order is made of, and no step may change them."""
    return bool(session.order_id or session.pending
                or claimed_by_an_earlier_release(session, settings))


def always(_session: CheckoutSession) -> bool:
    return True


@dataclass(frozen=True)
class Step:
    """One step of a flow: its name (also its URL segment) and its label in "Step 2 of 5"."""

    name: str
    label: Any                                    # a lazy gettext string
    needed: Callable[[CheckoutSession], bool] = field(default=always, compare=False)
    before_order: bool = True
    # The page that shows it (checkout.views.journey: a step's form, the review, the order's
    # pages): declared with the step by the flow's view module; the journey never calls it.
    page: Any = field(default=None, compare=False)


@dataclass(frozen=True)
class Journey:
    """The steps of one flow, in order."""

    steps: tuple[Step, ...]

    def step(self, name: str) -> Step | None:
        return next((s for s in self.steps if s.name == name), None)

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(s.name for s in self.steps)

    @property
    def form_steps(self) -> tuple[Step, ...]:
        """The steps before review, needed or not: each is a page of its own (its StepPage)."""
        return tuple(s for s in self.steps if s.before_order and s.name != REVIEW)

    def before_order(self, session: CheckoutSession) -> list[Step]:
        """The steps this session needs before review, in order."""
        return [s for s in self.form_steps if s.needed(session)]

    def shown(self, session: CheckoutSession) -> list[Step]:
        """Every step this session goes through, in order (for "Step n"): those it needs, and
        those the user already answered, so that a step's number does not shrink under the
        user when one before it stops being needed once answered (identity, once verified)."""
        answered = set(session.answered)
        return [s for s in self.steps if s.needed(session) or s.name in answered]

    def next_step(self, session: CheckoutSession) -> str:
        """The first needed step before the order that is not done, else review."""
        done = set(session.done)
        for step in self.before_order(session):
            if step.name not in done:
                return step.name
        return REVIEW

    def missing_before(self, session: CheckoutSession, name: str) -> str | None:
        """The first step to finish before ``name`` may be shown, or None."""
        done = set(session.done)
        for step in self.before_order(session):
            if step.name == name:
                return None
            if step.name not in done:
                return step.name
        return None

    def complete(self, session: CheckoutSession, name: str, *, keep: Sequence[str] = (),
                 by_user: bool = True) -> None:
        """Mark ``name`` done; the steps after it stay done only if named in ``keep``."""
        order = [s.name for s in self.steps if s.before_order]
        position = order.index(name)
        done = set(session.done)
        session.done = [s for s in order if s == name or (s in done and (
            order.index(s) < position or s in keep))]
        if by_user:
            session.mark_answered(name)

    def reopen(self, session: CheckoutSession, name: str) -> None:
        """``name`` must be done again (review is closed until it is)."""
        session.done = [s for s in session.done if s != name]

    def previous(self, session: CheckoutSession, name: str) -> str | None:
        """The step "Back" leads to from ``name``: the one before it that this session needs."""
        before = None
        for step in self.before_order(session):
            if step.name == name:
                return before
            before = step.name
        return before if name == REVIEW else None

    def position(self, session: CheckoutSession, name: str) -> tuple[int, Step] | None:
        """(number, step) of ``name`` among the steps this session goes through.

        No total: which steps come later is learnt on the way (the offer's fields come with
        its price, identity with the amount), and a total shown early would be a guess taken
        back later ("Step 1 of 6", then "Step 2 of 5"). Steps passed over (every value given,
        never shown) are not counted: a launch that gives the amount opens at "Step 1", not at
        a "Step 2" whose first step the user never saw."""
        number = 0
        for step in self.shown(session):
            if step.name == name:
                return number + 1, step
            if not self.passed_over(session, step.name):
                number += 1
        return None

    @staticmethod
    def passed_over(session: CheckoutSession, name: str) -> bool:
        """Whether the step was done on the user's behalf, its values all given, and the user
        never submitted it."""
        return name in session.done and name not in session.answered
