"""Sandbox clock and scheduler: scaled waits, ordering, early wake-up, cancel, failures, test helpers."""
from __future__ import annotations

import logging
import threading
import time
from datetime import UTC, timedelta

import pytest

from checkout.sandbox.clock import Clock, ManualClock, Scheduler


@pytest.fixture
def scheduler():
    scheduler = Scheduler(Clock(scale=0.001))
    yield scheduler
    scheduler.shutdown()


def hold(scheduler: Scheduler) -> threading.Event:
    """Keep the scheduler's thread busy until the returned event is set.

    Calls queued meanwhile cannot run before the test has queued (or cancelled) all of them, however
    long a loaded machine stalls the test between two lines.
    """
    release, holding = threading.Event(), threading.Event()
    scheduler.call_later(0, lambda: (holding.set(), release.wait(10)))
    assert holding.wait(10)
    return release


def test_clock_is_real_utc_time_with_scaled_waits():
    clock = Clock(scale=0.001)
    assert clock.now().tzinfo is UTC
    assert clock.sleep_seconds(300) == pytest.approx(0.3)
    assert clock.sleep_seconds(-5) == 0
    assert Clock().sleep_seconds(2) == 2
    for bad in (0, -1, float("nan")):
        with pytest.raises(ValueError):
            Clock(scale=bad)


def test_calls_run_in_due_order(scheduler):
    ran: list[str] = []
    release = hold(scheduler)
    due = {}
    for delay, name in [(30, "c"), (10, "a"), (20, "b"), (10, "a2")]:
        due[name] = scheduler.call_later(delay, ran.append, name).due
    release.set()
    assert scheduler.drain(5)
    # Due times come from the clock as each call is queued: normally a, a2, b, c. A stall between
    # two call_later lines moves the later ones back, and the order of due times is the contract.
    # sorted() is stable: equal due times keep their order of scheduling.
    assert ran == sorted(due, key=due.__getitem__)
    assert sorted(ran) == ["a", "a2", "b", "c"]


def test_an_earlier_call_wakes_the_thread():
    scheduler = Scheduler(Clock(scale=1.0))
    try:
        scheduler.call_later(60, lambda: None)       # the thread now sleeps towards this one
        woke = threading.Event()
        started = time.monotonic()
        scheduler.call_later(0.05, woke.set)
        # Without the wake-up it would run after the 60 s call; a loaded machine may be slow.
        assert woke.wait(30)
        assert time.monotonic() - started < 30
    finally:
        scheduler.shutdown()


def test_cancel(scheduler):
    ran: list[str] = []
    release = hold(scheduler)               # "dropped" is due after 1 ms: not before it is cancelled
    keep = scheduler.call_later(5, ran.append, "kept")
    drop = scheduler.call_later(1, ran.append, "dropped")
    assert scheduler.cancel(drop) is True
    assert scheduler.cancel(drop) is False
    assert scheduler.pending_count() == 1
    release.set()
    assert scheduler.drain(5)
    assert ran == ["kept"]
    assert scheduler.cancel(keep) is False               # already ran


def test_a_failing_call_is_logged_and_the_thread_goes_on(scheduler, caplog):
    def boom():
        raise RuntimeError("order timer broke")

    ran = threading.Event()
    with caplog.at_level(logging.ERROR, logger="checkout.sandbox.clock"):
        scheduler.call_later(0, boom)
        scheduler.call_later(1, ran.set)
        assert ran.wait(2)
    assert "boom" in caplog.text and "order timer broke" in caplog.text


def test_calls_may_schedule_calls_and_drain_waits_for_them(scheduler):
    ran: list[int] = []

    def step(n: int) -> None:
        ran.append(n)
        if n < 5:
            scheduler.call_later(2 ** n, step, n + 1)

    scheduler.call_later(0, step, 1)
    assert scheduler.drain(2)
    assert ran == [1, 2, 3, 4, 5]


def test_drain_gives_up_after_its_timeout():
    scheduler = Scheduler(Clock(scale=1.0))
    try:
        scheduler.call_later(60, lambda: None)
        assert scheduler.drain(0.05) is False
    finally:
        scheduler.shutdown()


def test_run_pending_now_fast_forwards_the_queued_calls():
    scheduler = Scheduler(Clock(scale=1.0))       # real time: these would take an hour
    try:
        ran: list[str] = []
        scheduler.call_later(3600, ran.append, "expire")
        scheduler.call_later(60, lambda: (ran.append("confirm"),
                                          scheduler.call_later(60, ran.append, "later")))
        assert scheduler.run_pending_now() == 2
        assert ran == ["confirm", "expire"]
        assert scheduler.pending_count() == 1        # scheduled by a call: left for later
    finally:
        scheduler.shutdown()


def test_shutdown_drops_pending_calls_and_refuses_new_ones():
    scheduler = Scheduler(ManualClock())
    ran: list[int] = []
    release = hold(scheduler)
    handle = scheduler.call_later(60, ran.append, 1)
    scheduler.shutdown(wait=False)
    scheduler.clock.forward_to(scheduler.clock.elapsed() + 61)  # due now; the thread is held
    release.set()
    scheduler.shutdown()                    # waits for the thread to end
    assert ran == [] and handle.cancelled
    with pytest.raises(RuntimeError):
        scheduler.call_later(0, ran.append, 2)


def test_handles_show_when_they_are_due(scheduler):
    before = scheduler.clock.now()
    handle = scheduler.call_later(256, lambda: None)
    after = scheduler.clock.now()
    assert handle.delay == 256
    wait = timedelta(seconds=scheduler.clock.sleep_seconds(256))
    assert wait == timedelta(milliseconds=256)                        # 256 s at scale 0.001
    assert before + wait <= handle.due_at <= after + wait


def test_thread_safe_scheduling_from_many_threads(scheduler):
    count = 0
    lock = threading.Lock()

    def bump() -> None:
        nonlocal count
        with lock:
            count += 1

    def producer() -> None:
        for n in range(200):
            scheduler.call_later(n % 7, bump)

    threads = [threading.Thread(target=producer) for _ in range(5)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert scheduler.drain(5)
    assert count == 1000


def test_drain_waits_for_a_call_that_is_running(scheduler):
    started, release, finished = threading.Event(), threading.Event(), threading.Event()

    def slow() -> None:
        started.set()
        release.wait(5)                     # a call that takes a while
        finished.set()

    scheduler.call_later(0, slow)
    assert started.wait(2)
    assert scheduler.drain(0) is False      # nothing queued, but one is running: not drained
    release.set()
    assert scheduler.drain(2)
    assert finished.is_set()


# -- a manual clock ----------------------------------------------------------------------------------

@pytest.fixture
def manual():
    scheduler = Scheduler(ManualClock())
    yield scheduler
    scheduler.shutdown()


def test_a_manual_clock_runs_every_timer_falling_due_in_order_in_the_callers_thread(manual):
    """Five minutes later, at once: the calls due in the window run in order of their due time,
    in the thread that moved the clock, each reading its own due time; those they schedule run
    too if they fall due in the window; the rest wait."""
    clock = manual.clock
    start = clock.now()
    ran: list[tuple[str, float, bool]] = []

    def note(name: str) -> None:
        seconds = (clock.now() - start).total_seconds()
        ran.append((name, round(seconds), threading.current_thread() is threading.main_thread()))

    manual.call_later(300, note, "expiry")
    manual.call_later(30, note, "agent")
    manual.call_later(30 + 25, lambda: (note("payout"), manual.call_later(20, note, "done")))
    manual.call_later(3600, note, "an hour")
    assert manual.advance(0) == 0 and ran == []            # nothing is due yet
    assert manual.advance(300) == 4
    assert ran == [("agent", 30, True), ("payout", 55, True), ("done", 75, True),
                   ("expiry", 300, True)]
    assert (clock.now() - start).total_seconds() == pytest.approx(300, abs=1)
    assert manual.pending_count() == 1                     # the hour's, still to come


def test_a_manual_clock_passes_at_the_real_pace_and_never_goes_back(manual):
    clock = manual.clock
    before = clock.now()
    assert clock.now() >= before and clock.now() - before < timedelta(seconds=5)
    with pytest.raises(ValueError, match="forward"):
        manual.advance(-1)
    with pytest.raises(RuntimeError, match="manual"):
        Scheduler(Clock()).advance(10)
    fired = threading.Event()
    manual.call_later(0, fired.set)                         # "at once": no one needs to move it
    assert fired.wait(10)
