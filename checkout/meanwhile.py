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

import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor, wait
from contextlib import contextmanager
from typing import TypeVar

from flask import current_app, has_app_context

__all__ = ["meanwhile"]

T = TypeVar("T")
POOL_THREADS = 8        # calls in flight at once per process; more wait their turn

_pool: ThreadPoolExecutor | None = None
_pool_pid = 0
_pool_lock = threading.Lock()


def _executor() -> ThreadPoolExecutor:
    # Made on first use in each process: a gunicorn worker forked (--preload) from a master that
    # already used the pool inherits the pool object but none of its threads, and work handed to
    # it would never run. The pid tells a forked child to make its own.
    global _pool, _pool_pid
    with _pool_lock:
        if _pool is None or _pool_pid != os.getpid():
            _pool = ThreadPoolExecutor(POOL_THREADS, thread_name_prefix="checkout-meanwhile")
            _pool_pid = os.getpid()
        return _pool


def _in_this_context(work: Callable[[], T]) -> Callable[[], T]:
    # The app's context only, not a copy of the request's: popping a copied request context runs
    # the app's teardown_request hooks (the host's too) a second time, in the pool thread, and
    # the call needs no request (what it asks for is passed in).
    if not has_app_context():
        return work
    app = current_app._get_current_object()  # type: ignore[attr-defined]

    def in_app() -> T:
        with app.app_context():
            return work()

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
