"""The create's answer, kept for the page shown next: taken once, only while fresh."""
from __future__ import annotations

from types import SimpleNamespace

import pytest

from checkout.journey import just_created

from ..forking import in_forked_child


@pytest.fixture(autouse=True)
def clock(monkeypatch):
    """The module's clock, moved by hand; nothing kept leaks into another test."""
    now = [1000.0]
    monkeypatch.setattr(just_created, "_now", lambda: now[0])
    just_created._kept.value.clear()
    yield now
    just_created._kept.value.clear()


def order(order_id: str) -> SimpleNamespace:
    return SimpleNamespace(id=order_id, status="swap_initiated")


def test_the_created_order_is_taken_once():
    created = order("o-1")
    just_created.keep("onramp", created)
    assert just_created.take("onramp", "o-1") is created
    assert just_created.take("onramp", "o-1") is None       # the next page asks the upstream


def test_it_is_only_for_its_flow_and_its_order():
    just_created.keep("onramp", order("o-1"))
    assert just_created.take("offramp", "o-1") is None
    assert just_created.take("onramp", "o-2") is None
    assert just_created.take("onramp", "o-1") is not None


def test_an_answer_older_than_a_few_seconds_is_not_shown(clock):
    just_created.keep("onramp", order("o-1"))
    clock[0] += just_created.FRESH_FOR
    assert just_created.take("onramp", "o-1") is None


def test_stale_answers_are_dropped_and_the_number_kept_is_bounded(clock):
    just_created.keep("onramp", order("old"))
    clock[0] += just_created.FRESH_FOR + 1
    just_created.keep("onramp", order("new"))
    assert list(just_created._kept.value) == [("onramp", "new")]     # no personal data lingers
    for n in range(just_created.MOST_KEPT + 5):
        just_created.keep("offramp", order(f"o-{n}"))
    assert len(just_created._kept.value) == just_created.MOST_KEPT
    assert just_created.take("offramp", "o-0") is None         # the oldest went first
    assert just_created.take("offramp", f"o-{just_created.MOST_KEPT + 4}") is not None


def test_answers_no_page_took_are_forgotten_within_seconds(clock):
    just_created.keep("offramp", order("o-1"))      # its page was served by another worker
    just_created.forget_stale()
    assert list(just_created._kept.value) == [("offramp", "o-1")]
    clock[0] += just_created.FRESH_FOR
    just_created.forget_stale()
    assert not just_created._kept.value


def test_a_forked_process_starts_with_nothing_kept():
    just_created.keep("onramp", order("o-1"))
    assert in_forked_child(just_created.take, "onramp", "o-1") is None
    assert just_created.take("onramp", "o-1") is not None       # the parent's is still there
