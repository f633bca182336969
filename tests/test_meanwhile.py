"""checkout.meanwhile: a call made on a pool thread, in the request's context, never outliving it."""
from __future__ import annotations

import threading

import pytest
from flask import Flask, current_app, request

from checkout.meanwhile import meanwhile
from checkout.reference import TTLCache


def test_the_call_runs_in_the_requests_context_beside_the_caller():
    app = Flask("shop")
    both = threading.Barrier(2, timeout=10)

    def work() -> str:
        both.wait()                     # the caller is under way at the same time
        return f"{current_app.name} {request.path}"

    with app.test_request_context("/checkout/s/x/quote"), meanwhile(work) as result:
        both.wait()
        assert result() == "shop /checkout/s/x/quote"


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
