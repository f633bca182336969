"""checkout.meanwhile: a call on a pool thread, in the app's context, never outliving its request."""
from __future__ import annotations

import os
import signal
import threading

import pytest
from flask import Flask, current_app

from checkout.meanwhile import meanwhile
from checkout.reference import TTLCache


def test_the_call_runs_in_the_apps_context_beside_the_caller():
    app = Flask("shop")
    both = threading.Barrier(2, timeout=10)

    def work() -> str:
        both.wait()                     # the caller is under way at the same time
        return current_app.name

    with app.test_request_context("/checkout/s/x/quote"), meanwhile(work) as result:
        both.wait()
        assert result() == "shop"


def test_the_hosts_request_teardown_runs_once_per_request():
    app = Flask("shop")
    torn_down: list[str] = []
    app.teardown_request(lambda exc: torn_down.append(threading.current_thread().name))

    @app.get("/price")
    def price() -> str:
        with meanwhile(lambda: current_app.name) as result:
            return result()

    assert app.test_client().get("/price").get_data(as_text=True) == "shop"
    assert torn_down == [threading.current_thread().name]


def test_a_process_forked_after_using_the_pool_gets_a_pool_of_its_own():
    # gunicorn --preload: the master may have used the pool before forking its workers, whose
    # copy of the pool has no threads. Work submitted there must still run.
    with meanwhile(lambda: None) as result:
        result()
    pid = os.fork()
    if pid == 0:                                                    # the child
        code = 1
        try:
            # A hang kills the child, which fails the test (pytest-timeout's own SIGALRM handler,
            # inherited, would raise inside the block, whose exit waits for the call again).
            signal.signal(signal.SIGALRM, signal.SIG_DFL)
            signal.alarm(5)
            with meanwhile(lambda: 42) as result:
                code = 0 if result() == 42 else 1
        finally:
            os._exit(code)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0


def test_its_error_is_raised_by_the_result_and_leaving_waits_for_it():
    done = []

    def fails(release: threading.Event) -> None:
        release.wait(10)
        done.append(True)
        raise LookupError("upstream")

    first, second = threading.Event(), threading.Event()
    with pytest.raises(LookupError), meanwhile(lambda: fails(first)) as result:
        first.set()
        result()
    with meanwhile(lambda: fails(second)):
        second.set()                    # nobody asks for the outcome: leaving waits all the same
    assert done == [True, True]


def test_the_cache_says_what_it_would_answer_without_loading():
    now = [0.0]
    cache = TTLCache(60, clock=lambda: now[0])
    assert not cache.has("countries")
    cache.get("countries", lambda: ["KE"])
    assert cache.has("countries")
    now[0] = 61
    assert not cache.has("countries")           # too old: get() would load it again
