"""Waiting on a condition, never for a fixed time."""
from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any


def wait_for(predicate: Callable[[], Any], timeout: float = 15.0, interval: float = 0.01) -> Any:
    """Poll until ``predicate()`` is truthy and return its value; fail the test after
    ``timeout`` real seconds (a bound for a broken run, not a pause: a passing test waits only as
    long as its condition takes)."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"condition not met within {timeout:g} s")
        time.sleep(interval)
