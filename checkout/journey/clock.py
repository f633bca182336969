"""The journey's clock: the moment (epoch seconds) a quote is fetched at, a create is attempted at,
and their ages are measured against. One place, so that a test moves it instead of sleeping."""
from __future__ import annotations

import time


def now() -> float:
    return time.time()
