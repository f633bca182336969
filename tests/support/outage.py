"""An upstream outage as the breakers see it, without waiting for one: each breaker opened as by
enough failed requests in its window, and closed as by a trial that was answered."""
from __future__ import annotations

from checkout.upstream import UpstreamClient
from checkout.upstream.breaker import OPEN, Breaker
from checkout.upstream.families import FAMILIES


def open_breaker(breaker: Breaker) -> None:
    while breaker.snapshot().state != OPEN:
        breaker.record(False)


def upstream_down(client: UpstreamClient) -> None:
    """Every family's breaker open (corridors are asked for by the calls that name them)."""
    for family in FAMILIES:
        open_breaker(client.transport.breakers.get(family))


def upstream_back(client: UpstreamClient) -> None:
    for family in FAMILIES:
        client.transport.breakers.get(family).record(True)
