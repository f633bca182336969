"""How a process treats a database that stops answering (checkout.store.availability): one time
budget per request, a bound on the threads waiting, and an outage that fails requests at once but
for one trial a second, told once when it starts and once when it ends."""
from __future__ import annotations

import logging
import threading

import pytest

from checkout.store import availability
from checkout.store.availability import Availability, Unanswered

from .support.clock import Clock


def test_a_request_whose_time_for_the_database_is_spent_waits_no_more():
    seen = Availability()
    with availability.budget(2.0):
        with seen.waiting(6.0) as bound:            # what is left of the 2 s: the bound
            assert bound is not None and 1.5 < bound <= 2.0
    with availability.budget(0.0):
        with pytest.raises(Unanswered, match="time for the database is spent"):
            with seen.waiting(6.0):
                pass
    assert availability.remaining() is None         # the budget ended with its block
    with seen.waiting(6.0) as bound:                # no budget: the connection's own bound
        assert bound == 6.0


def test_once_a_wait_ran_out_every_wait_fails_at_once_but_one_trial_a_second(caplog):
    clock = Clock()
    seen = Availability(trial_every=1.0, clock=clock)
    caplog.set_level(logging.WARNING, "checkout.store")
    seen.unanswered("the database did not answer within 2.0 s")
    seen.unanswered("the database did not answer within 2.0 s")      # another thread's
    with pytest.raises(Unanswered, match="not answering"):
        with seen.waiting(6.0):
            pass
    clock.now += 1.0
    with seen.waiting(6.0):                         # the trial: it may wait
        with pytest.raises(Unanswered):             # and no one else meanwhile
            with seen.waiting(6.0):
                pass
        seen.unanswered("the database did not answer within 2.0 s")
    with pytest.raises(Unanswered):                 # the next trial is a second later
        with seen.waiting(6.0):
            pass
    clock.now += 1.0
    with seen.waiting(6.0):
        seen.answered(clock.now)
    assert not seen.down
    with seen.waiting(6.0):                         # back: everyone waits again
        pass
    lines = [record.getMessage() for record in caplog.records]
    assert len(lines) == 2, lines                   # one when it starts, one when it ends
    assert lines[0].startswith("database not answering (the database did not answer")
    assert lines[1] == "database answering again after 2 s"


def test_each_kind_of_failure_is_told_once_until_the_database_answers():
    seen = Availability(clock=Clock())
    # Its first failures come before any wait has run out (no place left meanwhile).
    assert seen.first_of_kind("page") and not seen.first_of_kind("page")
    seen.unanswered("no answer")
    assert seen.first_of_kind("webhook")
    assert not seen.first_of_kind("page") and not seen.first_of_kind("webhook")
    seen.answered(seen.now())
    seen.unanswered("no answer")                    # another outage: told again
    assert seen.first_of_kind("page")
    seen.answered(seen.now())
    assert seen.first_of_kind("page")               # a failure of a database that answers


def test_an_answer_to_a_wait_older_than_a_failure_told_does_not_tell_it_again():
    """A freeze's first moments: a webhook refused a place (told), then the answer to a statement
    sent before the freeze. That answer says nothing of the database since: the webhooks the
    freeze goes on refusing are not told a second time; an answer to a later wait ends it."""
    clock = Clock()
    seen = Availability(clock=clock)
    sent_before = seen.now()
    clock.now += 0.1
    assert seen.first_of_kind("webhook")
    clock.now += 0.1
    seen.answered(sent_before)
    assert not seen.first_of_kind("webhook")
    seen.answered(seen.now())                       # a wait begun since: the database answers
    assert seen.first_of_kind("webhook")


def test_no_more_requests_than_its_places_wait_on_the_database():
    seen = Availability(most_waiting=1)
    inside, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with availability.budget(10.0), seen.waiting(6.0):
            inside.set()
            leave.wait(10)

    holder = threading.Thread(target=hold)
    holder.start()
    try:
        assert inside.wait(10)
        with availability.budget(2.0):
            with pytest.raises(Unanswered, match="too many waits"):
                with seen.waiting(6.0):
                    pass
        with seen.waiting(6.0):                     # no request's (the dispatcher): no place
            pass
    finally:
        leave.set()
        holder.join()
    with availability.budget(2.0), seen.waiting(6.0):   # the place is free again
        pass


def test_a_request_begun_during_an_outage_that_fails_after_its_end_is_not_told_again():
    """The trial that finds the database back took a request's whole time for the database: its
    next statement is refused. That refusal belongs to the outage just told as ended."""
    seen = Availability(clock=Clock())
    with availability.budget(2.0):
        seen.unanswered("no answer")
        assert seen.first_of_kind("webhook")
        seen.answered(seen.now())                   # the trial, in this request
        assert not seen.first_of_kind("webhook")
    with availability.budget(2.0):                  # a request begun since: a new failure
        assert seen.first_of_kind("webhook")

