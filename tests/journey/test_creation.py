"""The create-once protocol itself, with a flow made for the test: no HTTP, no sandbox.

Every outcome of :func:`checkout.journey.creation.create_order` and ``settle_pending``: created
once however often it is asked, busy when another request wrote its attempt first, an unknown
outcome only looked up until the grace period ends, a refusal, an expired quote, a changed review.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field, replace
from typing import Any

import pytest

from checkout.errors import QuoteExpired, UpstreamBadRequest, UpstreamTimeout
from checkout.flows import Flow
from checkout.journey import creation
from checkout.journey.creation import Outcome
from checkout.journey.settings import JourneySettings
from checkout.journey.steps import Journey, Step
from checkout.state import get_state

SETTINGS = JourneySettings(quote_max_age=240, create_grace=40, digest_key=b"k" * 32)


@dataclass
class FakeOrder:
    id: str
    sent: dict[str, Any]
    created: float = field(default_factory=time.time)


class FakeFlow(Flow):
    """Creates orders in a list; each call can be told to fail."""

    name = "onramp"
    quote_keys = ("amount",)
    currencies = ("local",)
    field_steps = {"address": "wallet"}

    def __init__(self) -> None:
        super().__init__(upstream=None, catalog=None,  # type: ignore[arg-type]
                         journey=Journey((Step("choose", "Amount"), Step("review", "Review"))),
                         settings=SETTINGS)
        self.orders: list[FakeOrder] = []       # what the "upstream" holds
        self.sent: list[dict[str, Any]] = []    # every create call
        self.fail: list[Exception] = []         # raised by the next create calls, in order
        self.problem: tuple[str, str] | None = None
        self.lookups = 0

    def catalog(self) -> Any:
        raise NotImplementedError

    def request_quote(self, params):
        return {"id": "q-2", "params": dict(params), "fetched_at": time.time(), "cashout": {}}

    def breakdown(self, record):
        raise NotImplementedError

    def usd_amount(self, cashout):
        return None

    def create_payload(self, session):
        return {"quoteId": (session.quote or {}).get("id"),
                "address": session.value("address"), "amount": session.value("amount")}

    def wallet_problem(self, session):
        return self.problem

    def attempt_facts(self, session, payload):
        return {"sent": dict(payload)}

    def send_create(self, session, payload, *, reference):
        self.sent.append(dict(payload, reference=reference))
        if self.fail:
            failure = self.fail.pop(0)
            if isinstance(failure, UpstreamTimeout):
                # The upstream got it and creates the order; only the answer is lost.
                self.orders.append(FakeOrder(f"o-{len(self.orders) + 1}", dict(payload)))
            raise failure
        order = FakeOrder(f"o-{len(self.orders) + 1}", dict(payload))
        self.orders.append(order)
        return order

    def find_orders(self, session, pending):
        self.lookups += 1
        return list(self.orders)

    def matches(self, order, pending):
        sent = dict(pending.get("sent") or {})
        return order.sent == sent and order.created >= float(pending["at"]) - 5

    def order_facts(self, order):
        return {"id": order.id}

    def fetch_order(self, order_id):
        return next(o for o in self.orders if o.id == order_id)

    def parse_order(self, data):
        raise AssertionError("creating an order never reads one from the store")

    def receipt(self, order):
        raise AssertionError("creating an order shows no receipt")


@pytest.fixture
def ctx(app):
    with app.test_request_context():
        yield app


@pytest.fixture
def flow() -> FakeFlow:
    return FakeFlow()


def reviewed_session(**claims: Any):
    """A session that reached review: answers and a quote."""
    store = get_state().sessions
    session = store.create("onramp", claims=claims)

    def reach_review(fresh):
        fresh.answer({"address": "0xabc", "amount": "5000"})
        fresh.quote = {"id": "q-1", "params": {"amount": "5000"}, "fetched_at": time.time(),
                       "cashout": {}}

    return store.update(session.id, reach_review)


def create(session, flow, digest=None):
    fresh = get_state().sessions.get(session.id)
    return creation.create_order(get_state().sessions, fresh, flow,
                                 digest if digest is not None
                                 else creation.review_digest(fresh, flow))


def test_an_order_is_created_once_however_often_it_is_confirmed(ctx, flow):
    session = reviewed_session()
    first = create(session, flow)
    assert first.outcome is Outcome.CREATED and first.order_id == "o-1"
    again = create(session, flow)
    assert again.outcome is Outcome.CREATED and again.order_id == "o-1"
    assert len(flow.sent) == 1
    stored = get_state().sessions.get(session.id)
    assert stored.order_id == "o-1" and stored.order == {"id": "o-1"} and stored.pending is None
    # The checkout's own reference, never the session id (which opens the session).
    assert flow.sent[0]["reference"].startswith("chk_") and session.id not in flow.sent[0]["reference"]


def test_the_merchants_reference_is_sent_when_the_token_gave_one(ctx, flow):
    session = reviewed_session(orderParams="basket-42")
    create(session, flow)
    assert flow.sent[0]["reference"] == "basket-42"


def test_a_request_that_read_the_session_before_another_wrote_its_attempt_sends_nothing(
        ctx, flow):
    store = get_state().sessions
    session = reviewed_session()
    read_first = store.get(session.id)          # both requests read the same version
    result = create(session, flow)              # one writes its attempt first, and creates
    assert result.outcome is Outcome.CREATED
    late = creation.create_order(store, read_first, flow, creation.review_digest(read_first, flow))
    assert late.outcome is Outcome.CREATED and late.order_id == result.order_id
    assert len(flow.sent) == 1


def test_while_another_requests_attempt_is_in_flight_nothing_is_sent(ctx, flow):
    store = get_state().sessions
    session = reviewed_session()
    read_first = store.get(session.id)
    # Another request wrote its attempt over the same version and is waiting for the upstream.
    store.update(session.id, lambda fresh: setattr(fresh, "pending", {"at": time.time()}))
    late = creation.create_order(store, read_first, flow, creation.review_digest(read_first, flow))
    assert late.outcome is Outcome.BUSY
    assert flow.sent == [] and flow.lookups == 0


def test_a_write_by_something_else_meanwhile_only_checks_again(ctx, flow):
    store = get_state().sessions
    session = reviewed_session()
    read_first = store.get(session.id)
    store.update(session.id, lambda fresh: fresh.keep_notice("pay", {"message": "hello"}))
    result = creation.create_order(store, read_first, flow,
                                   creation.review_digest(read_first, flow))
    assert result.outcome is Outcome.CREATED and len(flow.sent) == 1
    assert store.get(session.id).notice("pay") == {"message": "hello"}     # not overwritten


def test_a_claim_taken_by_an_earlier_release_is_respected(ctx, flow):
    """During a rolling upgrade a process of an earlier release may be creating the order under
    its own claim (``creating_since``): nothing is sent, and no step changes, until it lapses."""
    from datetime import UTC, datetime, timedelta

    from sqlalchemy import update

    from checkout.errors import OrderUnderway
    from checkout.journey.steps import update_before_order
    from checkout.store.tables import sessions_table

    store = get_state().sessions
    session = reviewed_session()

    def earlier_release_claims(since):
        with store.engine.begin() as conn:
            conn.execute(update(sessions_table).where(sessions_table.c.id == session.id)
                         .values(creating_since=since, creating_owner="old-release",
                                 version=sessions_table.c.version + 1))

    earlier_release_claims(datetime.now(UTC))
    assert create(session, flow).outcome is Outcome.BUSY
    with pytest.raises(OrderUnderway):
        update_before_order(store, flow.settings, session.id,
                            lambda fresh: fresh.answer({"amount": "1"}))
    assert flow.sent == []
    earlier_release_claims(datetime.now(UTC) - timedelta(days=1))      # its process died
    assert create(session, flow).outcome is Outcome.CREATED


def test_a_review_that_no_longer_matches_the_session_sends_nothing(ctx, flow):
    session = reviewed_session()
    digest = creation.review_digest(session, flow)
    get_state().sessions.update(session.id, lambda s: s.answer({"address": "0xother"}))
    assert create(session, flow, digest).outcome is Outcome.CHANGED
    assert create(session, flow, "not-a-digest").outcome is Outcome.CHANGED
    assert flow.sent == []
    assert create(session, flow).outcome is Outcome.CREATED     # what is shown now
    assert flow.sent[0]["address"] == "0xother"


def test_a_wallet_that_does_not_hold_sends_nothing(ctx, flow):
    session = reviewed_session()
    flow.problem = ("address", "Check the wallet address for Celo.")
    result = create(session, flow)
    assert (result.outcome, result.field) == (Outcome.INVALID, "address")
    assert flow.sent == []


def test_an_unknown_outcome_is_only_looked_up_then_adopted(ctx, flow):
    session = reviewed_session()
    flow.fail = [UpstreamTimeout("read timeout")]
    first = create(session, flow)
    # The order exists upstream and the lookup finds it at once.
    assert first.outcome is Outcome.CREATED and first.order_id == "o-1"
    assert len(flow.sent) == 1 and flow.lookups == 1


def test_an_unknown_outcome_with_nothing_found_waits_then_allows_a_new_attempt(ctx, flow, app):
    session = reviewed_session()
    flow.fail = [UpstreamTimeout("read timeout")]

    def invisible(session, pending):
        flow.lookups += 1
        return []

    flow.find_orders = invisible                     # the upstream is still processing it
    assert create(session, flow).outcome is Outcome.CONFIRMING
    # Confirming again, or opening the page, only looks it up.
    assert create(session, flow).outcome is Outcome.CONFIRMING
    stored = get_state().sessions.get(session.id)
    assert creation.settle_pending(get_state().sessions, stored, flow).outcome \
        is Outcome.CONFIRMING
    assert len(flow.sent) == 1 and flow.lookups == 3
    reference = stored.reference

    flow.settings = replace(flow.settings, create_grace=0)      # the grace period is over
    result = creation.settle_pending(get_state().sessions, get_state().sessions.get(session.id),
                                     flow)
    assert result.outcome is Outcome.RETRY
    stored = get_state().sessions.get(session.id)
    # Forgotten, with a fresh reference, and the price must be reviewed again.
    assert stored.pending is None and stored.quote is None and stored.reference != reference
    assert len(flow.sent) == 1


def test_two_matching_orders_are_never_adopted(ctx, flow):
    session = reviewed_session()
    flow.fail = [UpstreamTimeout("read timeout")]
    flow.orders.append(FakeOrder("o-early", {"quoteId": "q-1", "address": "0xabc",
                                             "amount": "5000"}))
    result = create(session, flow)
    assert result.outcome is Outcome.CONFIRMING
    assert get_state().sessions.get(session.id).order_id is None


def test_an_order_another_session_owns_is_never_adopted(ctx, flow):
    mine = reviewed_session()
    theirs = reviewed_session()
    assert create(theirs, flow).order_id == "o-1"   # same details, another visitor
    flow.fail = [UpstreamTimeout("read timeout")]
    result = create(mine, flow)
    # Ours (o-2) is found; theirs (o-1) matches too but belongs to their session.
    assert result.outcome is Outcome.CREATED and result.order_id == "o-2"


def test_a_refusal_frees_the_session_and_names_its_field(ctx, flow):
    session = reviewed_session()
    flow.fail = [UpstreamBadRequest("address is not valid", status=400)]
    result = create(session, flow)
    assert (result.outcome, result.field, result.message) == \
        (Outcome.REJECTED, "address", "address is not valid")
    stored = get_state().sessions.get(session.id)
    assert stored.pending is None and stored.order_id is None
    assert create(session, flow).outcome is Outcome.CREATED   # nothing was made: try again
    assert len(flow.sent) == 2


def test_an_expired_quote_asks_for_a_new_price(ctx, flow):
    session = reviewed_session()
    flow.fail = [QuoteExpired("The quote is expired", status=400)]
    assert create(session, flow).outcome is Outcome.REQUOTE
    assert get_state().sessions.get(session.id).pending is None


def test_a_flow_that_must_not_create_twice_keeps_looking_after_the_grace_period(ctx, flow, app):
    session = reviewed_session()
    flow.fail = [UpstreamTimeout("read timeout")]
    flow.find_orders = lambda session, pending: []          # never found
    flow.may_retry = lambda session: False                  # e.g. a merchant-funded payout
    assert create(session, flow).outcome is Outcome.CONFIRMING
    flow.settings = replace(flow.settings, create_grace=0)
    stored = get_state().sessions.get(session.id)
    assert creation.settle_pending(get_state().sessions, stored, flow).outcome \
        is Outcome.CONFIRMING
    assert create(session, flow).outcome is Outcome.CONFIRMING
    assert len(flow.sent) == 1 and get_state().sessions.get(session.id).pending is not None


# -- what changed between the review's read and the attempt's save ---------------------------------

def test_a_step_saved_after_the_read_is_caught_when_the_attempt_is_saved(ctx, flow):
    """The review's digest matched the session as read; another tab changed the wallet before the
    attempt was saved: the save fails, and the checks run again on what is stored now."""
    store = get_state().sessions
    session = reviewed_session()
    read_first = store.get(session.id)
    store.update(session.id, lambda fresh: fresh.answer({"address": "0xother"}))
    result = creation.create_order(store, read_first, flow,
                                   creation.review_digest(read_first, flow))
    assert result.outcome is Outcome.CHANGED and flow.sent == []
    assert store.get(session.id).pending is None


def test_a_claim_an_earlier_release_took_after_the_read_is_caught(ctx, flow):
    from datetime import UTC, datetime

    from sqlalchemy import update

    from checkout.store.tables import sessions_table

    store = get_state().sessions
    session = reviewed_session()
    read_first = store.get(session.id)
    with store.engine.begin() as conn:       # an earlier release's process claims it meanwhile
        conn.execute(update(sessions_table).where(sessions_table.c.id == session.id)
                     .values(creating_since=datetime.now(UTC), creating_owner="old-release",
                             version=sessions_table.c.version + 1))
    result = creation.create_order(store, read_first, flow,
                                   creation.review_digest(read_first, flow))
    assert result.outcome is Outcome.BUSY and flow.sent == []


def test_a_refusal_forgets_only_its_own_attempt(ctx, flow):
    store = get_state().sessions
    session = reviewed_session()
    newer = {"at": time.time() + 60, "reference": "chk_newer", "sent": {}}

    def refused_after_another_attempt_began(session, payload, *, reference):
        flow.sent.append(dict(payload))
        store.update(session.id, lambda fresh: setattr(fresh, "pending", newer))
        raise UpstreamBadRequest("address is not valid", status=400)

    flow.send_create = refused_after_another_attempt_began
    assert create(session, flow).outcome is Outcome.REJECTED
    assert store.get(session.id).pending == newer


def test_after_the_grace_period_a_newer_attempt_is_followed_not_reported_missing(ctx, flow, app):
    """Another tab found nothing, forgot the attempt and began a new one: this request, still
    holding the old one, says the order is being confirmed, not that none was found."""
    store = get_state().sessions
    session = reviewed_session()
    flow.fail = [UpstreamTimeout("read timeout")]
    flow.find_orders = lambda session, pending: []
    assert create(session, flow).outcome is Outcome.CONFIRMING
    stale = store.get(session.id)
    store.update(session.id, lambda fresh: setattr(
        fresh, "pending", {**fresh.pending, "at": fresh.pending["at"] + 1}))
    flow.settings = replace(flow.settings, create_grace=0)
    assert creation.settle_pending(store, stale, flow).outcome is Outcome.CONFIRMING
    assert store.get(session.id).pending is not None


def test_an_order_the_session_kept_changing_under_is_confirmed_then_attached(ctx, flow,
                                                                              monkeypatch):
    """The create answered, but the attachment lost every compare-and-set: the user is told the
    order is being confirmed (not that their details changed), and the next look attaches it."""
    from checkout.errors import SessionConflict
    from checkout.sessions import SessionStore

    store = get_state().sessions
    session = reviewed_session()
    real = SessionStore.attach_order

    def conflicting(self, session_id, order_id, change=None):
        raise SessionConflict(session_id)

    monkeypatch.setattr(SessionStore, "attach_order", conflicting)
    result = create(session, flow)
    assert result.outcome is Outcome.CONFIRMING and len(flow.sent) == 1
    assert store.get(session.id).pending is not None          # not lost, still looked for
    monkeypatch.setattr(SessionStore, "attach_order", real)
    settled = creation.settle_pending(store, store.get(session.id), flow)
    assert settled.outcome is Outcome.CREATED and settled.order_id == "o-1"
    assert len(flow.sent) == 1
