"""What the sandbox's KYC tests share: a clock they move by hand and a list of emitted events."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest


class FakeClock:
    def __init__(self) -> None:
        self.now = datetime(2026, 11, 22, 12, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def events() -> list[dict]:
    return []
