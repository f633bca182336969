"""The checkout's counter when the shared store misbehaves: it fails open, looks at the store
less and less often while it keeps failing, and only the request that looks waits for it."""
from __future__ import annotations

import logging
import threading
import time
from types import SimpleNamespace

import pytest
from limits import parse_many

from checkout import ratelimits

from ..support.waiting import wait_for

ITEM = parse_many("5/minute")[0]


class Store:
    """A shared store's limiter: ``check`` is its ping; its counts raise while ``refusing``."""

    def __init__(self, *, answers_ping: bool = True) -> None:
        self.refusing = True
        self.counts = 0
        self.pings_answered = 0
        self.ping_held = threading.Event()
        self.ping_held.set()
        self.storage = SimpleNamespace(check=self._check, reset=lambda: None)
        self._answers_ping = answers_ping

    def _check(self) -> bool:
        self.ping_held.wait(10)
        self.pings_answered += 1
        return self._answers_ping

    def hit(self, *_args, **_kwargs) -> bool:
        self.counts += 1
        if self.refusing:
            raise ConnectionError("READONLY You can't write against a read only replica")
        return True


@pytest.fixture
def clock(monkeypatch):
    """The counter's monotonic clock, moved by the test."""
    now = SimpleNamespace(value=1000.0)
    monkeypatch.setattr(ratelimits, "time", SimpleNamespace(monotonic=lambda: now.value,
                                                            time=time.time))
    return now


def counter_with(store: Store) -> ratelimits._FailOpenCounter:
    counter = ratelimits._FailOpenCounter("memory://", {})
    counter.shared = store
    return counter


def test_a_store_that_answers_pings_but_refuses_counts_is_tried_less_and_less(clock, caplog):
    """A read-only or full Redis answers PING: each look finds it 'back', and the count there
    fails again. The looks still space out (1, 2, 4... 32 s), with one warning in all."""
    store = Store(answers_ping=True)
    counter = counter_with(store)
    caplog.set_level(logging.INFO, logger="checkout.ratelimits")
    for n in range(200):                                     # 100 s, a request every 0.5 s
        assert counter.run("hit", ITEM, "checkout", f"k{n}", "open_per_ip")       # in memory
        clock.value += 0.5
    # Tried at 0, 1, 3, 7, 15, 31, 63 and 95 s: not once a second.
    assert store.counts == 8
    lines = [r.getMessage() for r in caplog.records]
    assert sum("unreachable" in line for line in lines) == 1
    assert not any("answers again" in line for line in lines)
    store.refusing = False                                   # the store is writable again
    clock.value += 32
    counter.run("hit", ITEM, "checkout", "k", "open_per_ip")
    assert store.counts == 9 and counter._pause == 0
    assert sum("answers again" in r.getMessage() for r in caplog.records) == 1


def test_only_the_request_that_looks_at_the_store_waits_for_its_answer(clock):
    store = Store(answers_ping=False)
    counter = counter_with(store)
    counter.run("hit", ITEM, "checkout", "k", "open_per_ip")  # fails: counts in memory now
    clock.value += 2                                          # a look is due
    store.ping_held.clear()                                   # the look's round trip hangs
    looking = threading.Thread(target=counter.run, args=("hit", ITEM, "checkout", "k", "x"))
    looking.start()
    try:
        wait_for(counter._lock.locked)                        # the look has begun
        for n in range(20):                                   # meanwhile, other requests
            assert counter.run("hit", ITEM, "checkout", f"other{n}", "x")
        # All answered while the look's ping is still unanswered: none waited for it.
        assert store.pings_answered == 0 and store.counts == 1
    finally:
        store.ping_held.set()
        looking.join(10)
