"""A clock a test moves by hand: ``clock.now += 5`` is five seconds later for whatever was given it
(a cache's, a breaker's, a rate limit's ``clock``). Where the code reads ``time.monotonic``."""
from __future__ import annotations


class Clock:
    def __init__(self, now: float = 1000.0) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now
