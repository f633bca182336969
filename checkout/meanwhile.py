"""One upstream call made while the request waits on another: two round trips cost one.

A page that needs two independent answers from the upstream (the live price, and the corridor's
limits it is checked against) would otherwise pay the upstream's latency twice, one call after the
other. :func:`meanwhile` starts one of them on a small pool thread, in the current app's context,
while the request makes the other.

Nothing started here outlives the request that started it: leaving the ``with`` block waits for
the call, whatever happened inside it. The pool is per process and small; when every thread is
busy the call waits its turn, which costs time, never a deadlock (pool threads never wait on the
pool themselves).
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import TypeVar

from flask import current_app, has_app_context

from .process_local import ProcessLocal
from .upstream import budget

__all__ = ["meanwhile"]

T = TypeVar("T")
POOL_THREADS = 8        # calls in flight at once per process; more wait their turn

# Made on first use in each process: a gunicorn worker forked (--preload) from a master that
# already used the pool would inherit the pool object but none of its threads, and work handed to
# it would never run.
_pool: ProcessLocal[ThreadPoolExecutor | None] = ProcessLocal(lambda: None)


def _executor() -> ThreadPoolExecutor:
    with _pool.lock:
        if _pool.value is None:
            _pool.value = ThreadPoolExecutor(POOL_THREADS, thread_name_prefix="checkout-meanwhile")
        return _pool.value


def _in_this_context(work: Callable[[], T]) -> Callable[[], T]:
    # The app's context only, not a copy of the request's: popping a copied request context runs
    # the app's teardown_request hooks (the host's too) a second time, in the pool thread, and
    # the call needs no request (what it asks for is passed in).
    if not has_app_context():
        return work
    app = current_app._get_current_object()  # type: ignore[attr-defined]
    # The request's time for the upstream goes along: the call is made on its behalf.
    deadline = budget.deadline()

    def in_app() -> T:
        token = budget.adopt(deadline)
        try:
            with app.app_context():
                return work()
        finally:
            budget.end(token)

    return in_app


@contextmanager
def meanwhile(work: Callable[[], T]) -> Iterator[Callable[[], T]]:
    """``work()`` started now on a pool thread; yields a function that waits for its result (or
    raises its exception). On leaving the block the call is waited for, its outcome unused if
    nobody asked for it."""
    future: Future[T] = _executor().submit(_in_this_context(work))
    try:
        yield future.result
    finally:
        wait([future])
