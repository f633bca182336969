"""``GET /healthz``: liveness and readiness (database and upstream reachable) as JSON.

The route is public and the upstream check is a call made with the merchant's key, so its answer is
reused for ``CHECKOUT_HEALTH_CACHE_SECONDS`` (default 30) per app and process: hammering
``/healthz`` cannot be turned into a flood of upstream calls. Only one caller at a time refreshes an
expired answer; the others meanwhile get the previous one. The database check stays live (it is
ours, and cheap).
"""
from __future__ import annotations

import threading
import time
from typing import Callable

from flask import Blueprint, current_app, jsonify
from sqlalchemy import text

from ..errors import UpstreamError
from ..state import get_state

EXTENSION_KEY = "checkout_health"


class ReadinessCache:
    """The last upstream readiness answer of one app, and who may refresh it."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._refreshing = threading.Lock()
        self._value: str | None = None
        self._expires = 0.0

    def get(self, ttl: float, check: Callable[[], str]) -> str:
        value = self._value
        if value is not None and self._clock() < self._expires:
            return value
        if value is not None:
            # Someone else is refreshing: answer with the previous result rather than queue up.
            if not self._refreshing.acquire(blocking=False):
                return value
        else:
            self._refreshing.acquire()     # the very first answer: wait for the one refresh
        try:
            if self._value is not None and self._clock() < self._expires:
                return self._value          # refreshed while we waited for the lock
            value = check()
            self._value, self._expires = value, self._clock() + max(0.0, ttl)
            return value
        finally:
            self._refreshing.release()


def readiness_cache() -> ReadinessCache:
    # dict.setdefault is atomic: two first requests still share one cache.
    return current_app.extensions.setdefault(EXTENSION_KEY, ReadinessCache())


def _upstream_check() -> str:
    try:
        get_state().upstream.onramp_assets()
        return "ok"
    except UpstreamError:
        return "unavailable"


def healthz():
    """Report whether the database and the upstream answer."""
    state = get_state()
    checks = {}
    try:
        with state.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        checks["database"] = "ok"
    except Exception:  # noqa: BLE001 - any database failure means "not ready"
        checks["database"] = "unavailable"
    ttl = float(current_app.config["CHECKOUT_HEALTH_CACHE_SECONDS"])
    checks["upstream"] = readiness_cache().get(ttl, _upstream_check)
    ready = all(v == "ok" for v in checks.values())
    response = jsonify(status="ok" if ready else "degraded", checks=checks)
    response.status_code = 200 if ready else 503
    response.headers["Cache-Control"] = "no-store"
    return response


def init(bp: Blueprint) -> None:
    bp.add_url_rule("/healthz", view_func=healthz, methods=["GET"])
