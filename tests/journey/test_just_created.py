"""The create's answer, kept for the page shown next: taken once, only while fresh."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from checkout.journey import just_created
from checkout.journey.just_created import JustCreated
from checkout.state import state_of

from ..conftest import make_app
from ..forking import in_forked_child


@pytest.fixture
def clock() -> list[float]:
    """The cache's clock, moved by hand."""
    return [1000.0]


@pytest.fixture
def kept(clock) -> JustCreated:
    return JustCreated(clock=lambda: clock[0])


def order(order_id: str) -> SimpleNamespace:
    return SimpleNamespace(id=order_id, status="swap_initiated")


def test_the_created_order_is_taken_once(kept):
    created = order("o-1")
    kept.keep("onramp", created)
    assert kept.take("onramp", "o-1") is created
    assert kept.take("onramp", "o-1") is None       # the next page asks the upstream


def test_it_is_only_for_its_flow_and_its_order(kept):
    kept.keep("onramp", order("o-1"))
    assert kept.take("offramp", "o-1") is None
    assert kept.take("onramp", "o-2") is None
    assert kept.take("onramp", "o-1") is not None


def test_an_answer_older_than_a_few_seconds_is_not_shown(kept, clock):
    kept.keep("onramp", order("o-1"))
    clock[0] += just_created.FRESH_FOR
    assert kept.take("onramp", "o-1") is None


def test_stale_answers_are_dropped_and_the_number_kept_is_bounded(kept, clock):
    kept.keep("onramp", order("old"))
    clock[0] += just_created.FRESH_FOR + 1
    kept.keep("onramp", order("new"))
    assert kept.kept() == [("onramp", "new")]     # no personal data lingers
    for n in range(just_created.MOST_KEPT + 5):
        kept.keep("offramp", order(f"o-{n}"))
    assert len(kept.kept()) == just_created.MOST_KEPT
    assert kept.take("offramp", "o-0") is None         # the oldest went first
    assert kept.take("offramp", f"o-{just_created.MOST_KEPT + 4}") is not None


def test_answers_no_page_took_are_forgotten_within_seconds(kept, clock):
    kept.keep("offramp", order("o-1"))      # its page was served by another worker
    kept.forget_stale()
    assert kept.kept() == [("offramp", "o-1")]
    clock[0] += just_created.FRESH_FOR
    kept.forget_stale()
    assert not kept.kept()


def test_a_forked_process_starts_with_nothing_kept(kept):
    kept.keep("onramp", order("o-1"))
    assert in_forked_child(kept.take, "onramp", "o-1") is None
    assert kept.take("onramp", "o-1") is not None       # the parent's is still there


def test_each_app_keeps_its_own(config):
    app, other = make_app(dict(config)), make_app(dict(config))
    state_of(app).just_created.keep("onramp", order("o-1"))
    assert state_of(other).just_created.take("onramp", "o-1") is None
    assert state_of(app).just_created.take("onramp", "o-1") is not None
