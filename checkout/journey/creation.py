"""Creating a session's one order, exactly once, from exactly what the review showed.

Creating is idempotent, by one device: the session's *pending attempt* (what is sent, and when),
written by compare-and-set on the session's version before the create call is sent
(:mod:`.attempts`). A double click, a retried request, a second tab or a second device that read
the same version loses the compare-and-set and sends nothing (``BUSY``: its page follows the
order); one that reads after it finds the attempt and only looks the order up. (Once an attempt
is refused and forgotten, the next "Confirm", the second of a double click included, is a new
attempt at the same reviewed details: nothing was created by the first.)

From then on no create is sent for the session, automatically or by the user, until the attempt is
settled: by the upstream's answer, by finding the order in a lookup, or by a lookup that the
upstream answers and that finds nothing once ``CHECKOUT_CREATE_GRACE`` seconds have passed since
the attempt (the user then reviews a fresh quote and may try again; at once when the upstream's own
application answered the create with an error, :func:`finished_failing`). Meanwhile the pages say
the order is being confirmed and only look it up. A create that certainly never reached the upstream
(the connection refused or not made in time, the breaker open, no time left: ``never_sent``)
created nothing: it is forgotten at once, and the review says so (``NOT_SENT``). The order is then
attached by a compare-and-set on the empty order slot (``SessionStore.attach_order``), whoever
finds it: a session keeps its first order, never a second.

The create is sent with exactly what the review showed: the review form carries a digest
(:func:`review_digest`) of the flow's create payload, checked against the very version of the
session the attempt is written over; the wallet is checked again for the network being sent.

``orderParams`` is the merchant's own reference from the launch token when there is one, else a
random checkout reference per attempt kept in the session (never the session id: that id opens the
session). Merchants reuse their references across users and attempts, so a lookup adopts an order
only when every field the attempt sent agrees and the order is no older than the attempt (the
flow's ``matches``), and only when exactly one such order exists and no other session owns it.
"""
from __future__ import annotations

import dataclasses
import enum
import hashlib
import hmac
import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ..errors import (
    QuoteExpired,
    SessionConflict,
    UpstreamError,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamUnavailable,
)
from ..sessions import CheckoutSession, SessionStore
from . import attempts, clock
from .steps import claimed_by_an_earlier_release

if TYPE_CHECKING:
    from .flow import Flow

log = logging.getLogger("checkout.creation")


class Outcome(enum.Enum):
    """What came of one attempt to create the session's order."""

    CREATED = "created"          # now or before: ``order_id`` says which
    BUSY = "busy"                # another request has just sent the create
    REQUOTE = "requote"          # the quote expired: the user must confirm a new price
    REJECTED = "rejected"        # the upstream said no (``message``, ``field`` when it names one)
    CHANGED = "changed"          # the details differ from the reviewed ones
    INVALID = "invalid"          # the wallet does not hold for the network (``field``, ``message``)
    CONFIRMING = "confirming"    # a create may have reached the upstream: only looked up for now
    RETRY = "retry"              # the grace period passed and no order was found: try again
    NOT_SENT = "not_sent"        # the create never reached the upstream: nothing to look up


@dataclass(frozen=True)
class CreateResult:
    outcome: Outcome
    order_id: str | None = None
    message: str | None = None
    field: str | None = None
    # The create's own answer (the whole order), when this call created the order and attached it.
    order: Any = None
    # The session as creating last read or wrote it: what the page that follows shows.
    session: CheckoutSession | None = None


def short_id(session_id: str) -> str:
    """A session's name in logs: the id itself opens the session, so it is never logged."""
    return hashlib.sha256(session_id.encode()).hexdigest()[:12]


# -- the reference the order is created (and found) with --------------------------------------------

def order_params(session: CheckoutSession) -> str:
    return str(session.claims.get("orderParams") or session.reference)


def _new_reference() -> str:
    return "chk_" + secrets.token_hex(12)


# -- what the review showed --------------------------------------------------------------------------

def review_digest(session: CheckoutSession, flow: Flow) -> str:
    """HMAC-SHA256 of the canonical JSON of the flow's create payload: the review form carries
    it, and a create proceeds only when the session still gives the same one."""
    canonical = json.dumps(flow.create_payload(session), sort_keys=True, separators=(",", ":"),
                           ensure_ascii=False, default=str)
    return hmac.new(flow.settings.digest_key, canonical.encode(), hashlib.sha256).hexdigest()


def _same_digest(digest: str | None, session: CheckoutSession, flow: Flow) -> bool:
    if digest is None:
        return False
    return hmac.compare_digest(digest.encode(), review_digest(session, flow).encode())


# -- the create -----------------------------------------------------------------------------------------

def create_order(sessions: SessionStore, session: CheckoutSession, flow: Flow,
                 digest: str | None) -> CreateResult:
    """Create the session's one order from what the review showed (see the module docstring)."""
    if session.order_id:
        return CreateResult(Outcome.CREATED, order_id=session.order_id, session=session)
    if session.pending:
        # An earlier create may have reached the upstream: only look it up.
        return settle_pending(sessions, session, flow)
    begun = _begin_attempt(sessions, session, flow, digest)
    if isinstance(begun, CreateResult):
        return begun
    session, payload = begun
    reference = order_params(session)
    try:
        order = flow.send_create(session, payload, reference=reference)
    except QuoteExpired:
        return CreateResult(Outcome.REQUOTE, session=_forget_attempt(sessions, session))
    except UpstreamRateLimited:
        # Refused before anything was done (or not even sent: the client's wait list): no order
        # exists, and the 429 page (views.pages) says when "Confirm" may be pressed again.
        _forget_attempt(sessions, session)
        raise
    except UpstreamRejected as exc:
        return CreateResult(Outcome.REJECTED, message=exc.message,
                            field=flow.field_named_by(exc.message),
                            session=_forget_attempt(sessions, session))
    except UpstreamUnavailable as exc:
        if exc.never_sent:
            log.warning("order creation for session %s not sent (%s): nothing was created",
                        short_id(session.id), type(exc).__name__)
            return CreateResult(Outcome.NOT_SENT, session=_forget_attempt(sessions, session))
        log.warning("order creation outcome unknown for session %s: %r", short_id(session.id), exc)
        if finished_failing(exc):
            session = _mark_finished(sessions, session)
        return settle_pending(sessions, session, flow)
    except UpstreamError as exc:
        log.warning("order creation outcome unknown for session %s: %r", short_id(session.id), exc)
        return settle_pending(sessions, session, flow)
    result = _attach(sessions, session, flow, order)
    if result.order_id != order.id:
        return result
    return dataclasses.replace(result, order=order)


def _begin_attempt(sessions: SessionStore, session: CheckoutSession, flow: Flow,
                   digest: str | None) -> CreateResult | tuple[CheckoutSession, dict[str, Any]]:
    """Write the pending attempt over the version of the session its checks were made on
    (:func:`.attempts.write_attempt`): the session as saved and the payload to send, or the
    outcome when nothing may be sent.

    Of two requests that read the same version, one writes its attempt and the other finds it on
    reading again (``BUSY``). A write by anything else meanwhile (a step in another tab, a parent
    event recorded) only makes the checks run again on the newer version, which may then differ
    from the review (``CHANGED``).
    """
    def refused(version: CheckoutSession) -> CreateResult | None:
        if claimed_by_an_earlier_release(version, flow.settings):
            return CreateResult(Outcome.BUSY, session=version)
        if not _same_digest(digest, version, flow):
            return CreateResult(Outcome.CHANGED, session=version)
        problem = flow.wallet_problem(version)
        if problem is not None:
            return CreateResult(Outcome.INVALID, field=problem[0], message=problem[1],
                                session=version)
        return None

    def write(attempt: CheckoutSession) -> dict[str, Any]:
        payload = flow.create_payload(attempt)
        if not attempt.claims.get("orderParams") and not attempt.reference:
            attempt.reference = _new_reference()
        attempt.pending = {"at": clock.now(), "reference": order_params(attempt),
                           **flow.attempt_facts(attempt, payload)}
        return payload

    def taken(fresh: CheckoutSession) -> CreateResult | None:
        if fresh.order_id:
            return CreateResult(Outcome.CREATED, order_id=fresh.order_id, session=fresh)
        if fresh.pending:
            return CreateResult(Outcome.BUSY, session=fresh)
        return None

    begun = attempts.write_attempt(sessions, session, write=write, taken=taken, refused=refused)
    if isinstance(begun, CreateResult):
        return begun
    return begun.session, begun.sent


def finished_failing(exc: UpstreamUnavailable) -> bool:
    """Whether the upstream's own application answered the create with an error (a 500, say):
    whatever it did before failing was done by then, so a lookup made after it sees any order it
    made. Not a gateway's 502, 503 or 504, nor a timeout: behind those the upstream may still be
    working on it."""
    return exc.status is not None and exc.status >= 500 and exc.status not in (502, 503, 504)


def _attempt_began(session: CheckoutSession) -> float | None:
    """When the session's unsettled create began (None once an order is attached)."""
    return None if session.order_id else pending_since(session)


def _on_own_attempt(sessions: SessionStore, attempted: CheckoutSession,
                    change: Callable[[CheckoutSession], None]) -> CheckoutSession:
    """Apply ``change`` to the session while its attempt is still the one ``attempted`` holds
    (the same sent-at time), never to an order attached or an attempt begun since; the session
    as saved, or as found."""
    return attempts.on_own_attempt(sessions, attempted, _attempt_began, change)


def _mark_finished(sessions: SessionStore, attempted: CheckoutSession) -> CheckoutSession:
    """The upstream's application failed on the create of ``attempted`` (its attempt): it is looked
    up without a grace period."""
    def finished(fresh: CheckoutSession) -> None:
        fresh.pending = {**(fresh.pending or {}), "finished": True}

    return _on_own_attempt(sessions, attempted, finished)


def _forget_attempt(sessions: SessionStore, attempted: CheckoutSession) -> CheckoutSession:
    """The upstream answered no to the create of ``attempted`` (its attempt): nothing was created,
    the user may try again."""
    def forget(fresh: CheckoutSession) -> None:
        fresh.pending = None

    return _on_own_attempt(sessions, attempted, forget)


def _attach(sessions: SessionStore, session: CheckoutSession, flow: Flow,
            order: Any) -> CreateResult:
    facts = flow.order_facts(order)

    def change(fresh: CheckoutSession) -> None:
        fresh.order = facts
        fresh.pending = None
        fresh.forget_kyc_contact()

    try:
        attached = sessions.attach_order(session.id, order.id, change)
    except SessionConflict:
        # The session kept changing under the attachment: the order exists and the attempt is
        # still pending, so the next look (the confirming page's) finds and attaches it.
        log.warning("%s order %s not attached yet to session %s: it kept changing; a lookup "
                    "attaches it", flow.name, order.id, short_id(session.id))
        return CreateResult(Outcome.CONFIRMING, session=session)
    if attached is None:
        log.error("orphaned %s order %s: session %s no longer exists", flow.name, order.id,
                  short_id(session.id))
        return CreateResult(Outcome.BUSY)
    if attached != order.id:
        # Two orders upstream for one session: the first attached stays; the other needs a person.
        log.error("orphaned %s order %s: session %s already has order %s", flow.name, order.id,
                  short_id(session.id), attached)
        return CreateResult(Outcome.CREATED, order_id=attached)
    log.info("%s order attached to a checkout session", flow.name)
    return CreateResult(Outcome.CREATED, order_id=order.id)


# -- finding an order whose create had no answer -----------------------------------------------------

def pending_since(session: CheckoutSession) -> float | None:
    """When the session's unsettled create was sent (epoch seconds), if there is one."""
    pending = session.pending
    return float(pending.get("at") or 0) if pending else None


def find_created_order(sessions: SessionStore, session: CheckoutSession,
                       flow: Flow) -> tuple[Any | None, bool]:
    """(the order of the session's pending attempt or None, whether several matched)."""
    pending = session.pending or {}
    candidates = []
    for order in flow.find_orders(session, pending):
        if not flow.matches(order, pending):
            continue
        owner = sessions.get_by_order(order.id)
        if owner is not None and owner.id != session.id:
            continue        # another session's order, made with the same reference
        candidates.append(order)
    if len(candidates) > 1:
        log.warning("%d orders match the unanswered create of session %s: not adopting any (%s)",
                    len(candidates), short_id(session.id), ", ".join(o.id for o in candidates))
        return None, True
    return (candidates[0] if candidates else None), False


def settle_pending(sessions: SessionStore, session: CheckoutSession,
                   flow: Flow) -> CreateResult:
    """Look up the order of an unanswered create; never sends a create.

    CREATED when found, CONFIRMING while it may still appear, RETRY when the grace period is over
    and it was not found: the attempt is forgotten, the reference renewed (when it is ours) and the
    quote dropped, so the user reviews a fresh quote before any new create.
    """
    started = pending_since(session)
    if started is None:
        return CreateResult(Outcome.CREATED, order_id=session.order_id) if session.order_id \
            else CreateResult(Outcome.RETRY, session=session)
    try:
        order, ambiguous = find_created_order(sessions, session, flow)
    except UpstreamError as exc:
        log.warning("order lookup for session %s failed: %r", short_id(session.id), exc)
        return CreateResult(Outcome.CONFIRMING, session=session)
    if order is not None:
        return _attach(sessions, session, flow, order)
    # A create the upstream finished (failing) needs no grace: nothing of it can appear later.
    grace = 0.0 if (session.pending or {}).get("finished") else flow.settings.create_grace
    if ambiguous or clock.now() - started < grace:
        return CreateResult(Outcome.CONFIRMING, session=session)
    if not flow.may_retry(session):
        log.error("no %s order found for session %s after the grace period; it is not created "
                  "again: reconcile by reference %s", flow.name, short_id(session.id),
                  order_params(session))
        return CreateResult(Outcome.CONFIRMING, session=session)

    def forget(fresh: CheckoutSession) -> None:
        fresh.pending = None
        fresh.quote = None
        if not fresh.claims.get("orderParams"):
            fresh.reference = _new_reference()

    session = _on_own_attempt(sessions, session, forget)
    if session.order_id:
        return CreateResult(Outcome.CREATED, order_id=session.order_id)
    if session.pending:
        # Another request forgot this attempt and began a new one meanwhile: that one is followed.
        return CreateResult(Outcome.CONFIRMING, session=session)
    log.info("no order found for session %s after the grace period: it may be created again",
             short_id(session.id))
    return CreateResult(Outcome.RETRY, session=session)
