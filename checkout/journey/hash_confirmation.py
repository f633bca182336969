"""The off-ramp's transaction hash, passed on to the upstream once (``confirm-order``).

The customer sends the crypto, then gives its transaction hash (pasted, or handed over by the
shop's wallet), and the upstream's ``confirm-order`` takes it only while the order awaits it
(``initiated``, notes 5): a second confirm is refused. The call is claimed as the order's create
is (:mod:`.attempts`): the attempt to confirm a hash is written in the session's deposit record by
compare-and-set before the call is sent. A double click or a second tab that read the same version
loses it and sends nothing (``BUSY``: the status page tells the rest).

An attempt left unsettled (the worker died during the call, or the call's outcome is unknown: a
timeout) is settled by the next press, at once, by looking the order up: when the order carries
that hash, it was confirmed; when it no longer awaits the deposit (expired, cancelled, another
hash), it is too late, and the hash is kept for support; else nothing reached the upstream, the
attempt is forgotten and this press goes on as a new one. A press that comes while another
request's call is still on its way may therefore send a second confirm; the upstream takes one and
refuses the other, whose refusal is settled by the same lookup. Nothing waits for a lease.

The deposit record (``CheckoutSession.deposit``): ``{"hash"}``, a hash kept for the page or for
support; ``{"hash", "sending_since"}``, an attempt to confirm it, begun then (epoch seconds);
``{"hash", "confirmed": True}``, passed on. Releases before this one wrote their attempt the same
way, with an ``owner`` token, and took it for a lease of 60 seconds: an attempt of theirs is
settled here like any other, and one written here keeps their processes from sending for those 60
seconds during a rolling upgrade.
"""
from __future__ import annotations

import enum
import logging
from dataclasses import dataclass
from typing import Protocol

from ..errors import UpstreamError, UpstreamRateLimited, UpstreamRejected, UpstreamUnavailable
from ..sessions import CheckoutSession, SessionStore
from . import attempts, clock
from .creation import short_id

log = logging.getLogger("checkout.hash_confirmation")

# The one status of an off-ramp order that confirm-order accepts a hash in (notes 5).
AWAITING_DEPOSIT = "initiated"


class DepositOrder(Protocol):
    """What passing a hash on reads of the order (``checkout.upstream.types.OfframpOrder``)."""

    @property
    def status(self) -> str | None: ...

    @property
    def hash(self) -> str | None: ...


class Deposits(Protocol):
    """What passing a hash on asks of the off-ramp (``checkout.flows.offramp.OfframpFlow``)."""

    def confirm_deposit(self, order_id: str, tx_hash: str) -> None: ...

    def fetch_order(self, order_id: str) -> DepositOrder: ...


class Passed(enum.Enum):
    """What came of one press of "I have sent it"."""

    CONFIRMED = "confirmed"      # the order has the hash, by this press or an earlier one
    BUSY = "busy"                # confirmed before, or another request holds the attempt
    TOO_LATE = "too_late"        # the order no longer awaits a deposit: the hash kept for support
    REFUSED = "refused"          # the upstream refused the hash while awaiting one (``message``)
    NOT_PASSED_ON = "not_passed_on"  # the upstream did not answer: the hash kept, press again


@dataclass(frozen=True)
class HashResult:
    outcome: Passed
    message: str | None = None


def pass_on(sessions: SessionStore, session: CheckoutSession, deposits: Deposits,
            tx_hash: str) -> HashResult:
    """Confirm the session's order with ``tx_hash``, once (see the module docstring)."""
    order_id = session.order_id
    assert order_id is not None
    if _began(session) is not None:
        settled = _settle(sessions, session, deposits, keep=tx_hash)
        if isinstance(settled, HashResult):
            return settled
        session = settled

    def write(attempt: CheckoutSession) -> str:
        attempt.deposit = {"hash": tx_hash, "sending_since": clock.now()}
        return tx_hash

    begun = attempts.write_attempt(sessions, session, write=write, taken=_busy, refused=_busy)
    if isinstance(begun, HashResult):
        return begun
    session = begun.session
    try:
        deposits.confirm_deposit(order_id, tx_hash)
    except UpstreamRateLimited:
        # Refused before anything was done: the hash stays for the page, whose 429 says when.
        _forget(sessions, session, keep=tx_hash)
        raise
    except UpstreamRejected as refused:
        return _after_refusal(sessions, session, deposits, tx_hash, refused)
    except UpstreamUnavailable as exc:
        if exc.never_sent:
            _forget(sessions, session, keep=tx_hash)
        else:
            log.warning("hash confirmation outcome unknown for session %s: %r",
                        short_id(session.id), exc)
        return HashResult(Passed.NOT_PASSED_ON)
    except UpstreamError as exc:
        log.warning("hash confirmation outcome unknown for session %s: %r",
                    short_id(session.id), exc)
        return HashResult(Passed.NOT_PASSED_ON)
    _confirmed(sessions, session, tx_hash)
    return HashResult(Passed.CONFIRMED)


def _began(session: CheckoutSession) -> float | None:
    """When the session's unsettled attempt to confirm a hash began, if it holds one."""
    deposit = session.deposit
    since = deposit.get("sending_since")
    return None if deposit.get("confirmed") or since is None else float(since)


def _busy(version: CheckoutSession) -> HashResult | None:
    """Nothing is sent from a version whose hash was passed on, or that holds an attempt (another
    request's, or one this request found and could not settle)."""
    if version.deposit.get("confirmed") or _began(version) is not None:
        return HashResult(Passed.BUSY)
    return None


def _settle(sessions: SessionStore, session: CheckoutSession, deposits: Deposits, *,
            keep: str) -> HashResult | CheckoutSession:
    """The session's unsettled attempt, settled by looking the order up; never sends. The
    outcome when the order tells it (or cannot be read), else the session as saved with the
    attempt forgotten: nothing of it reached the upstream."""
    found = _look_up(sessions, session, deposits, keep=keep)
    if found is not None:
        return found
    log.info("no hash reached the order of session %s: its attempt is forgotten",
             short_id(session.id))
    return _forget(sessions, session, keep=keep)


def _after_refusal(sessions: SessionStore, attempted: CheckoutSession, deposits: Deposits,
                   tx_hash: str, refused: UpstreamRejected) -> HashResult:
    """The upstream refused the hash: it may have it already (an earlier answer lost), or the
    order may no longer await one; else the hash itself was refused, and is dropped."""
    found = _look_up(sessions, attempted, deposits, keep=tx_hash)
    if found is not None:
        return found
    _forget(sessions, attempted, keep=None)
    return HashResult(Passed.REFUSED, message=refused.message)


def _look_up(sessions: SessionStore, attempted: CheckoutSession, deposits: Deposits, *,
             keep: str) -> HashResult | None:
    """What the order says of the attempt ``attempted`` holds: CONFIRMED when it carries the
    attempt's hash, TOO_LATE when it no longer awaits one (``keep`` kept for support),
    NOT_PASSED_ON when it cannot be read (the attempt stays); None while it awaits a hash."""
    assert attempted.order_id is not None
    sent = str(attempted.deposit.get("hash") or "")
    try:
        order = deposits.fetch_order(attempted.order_id)
    except UpstreamRateLimited:
        raise               # the 429 page says when to press again; the attempt stays
    except UpstreamError as exc:
        log.warning("order lookup for the hash of session %s failed: %r",
                    short_id(attempted.id), exc)
        return HashResult(Passed.NOT_PASSED_ON)
    if order.hash and sent and order.hash.lower() == sent.lower():
        _confirmed(sessions, attempted, sent)
        return HashResult(Passed.CONFIRMED)
    if order.status != AWAITING_DEPOSIT:
        _forget(sessions, attempted, keep=keep)
        return HashResult(Passed.TOO_LATE)
    return None


def _forget(sessions: SessionStore, attempted: CheckoutSession, *,
            keep: str | None) -> CheckoutSession:
    """Nothing of the attempt ``attempted`` holds reached the order (or nothing more will):
    forgotten, ``keep`` kept for the page or for support."""
    def forget(fresh: CheckoutSession) -> None:
        fresh.deposit = {"hash": keep} if keep else {}

    return attempts.on_own_attempt(sessions, attempted, _began, forget)


def _confirmed(sessions: SessionStore, session: CheckoutSession, tx_hash: str) -> None:
    """The order has ``tx_hash``: whichever attempt the session holds now, the hash is passed
    on, and no request sends it again."""
    def done(fresh: CheckoutSession) -> None:
        fresh.deposit = {"hash": tx_hash, "confirmed": True}

    sessions.update(session.id, done)
