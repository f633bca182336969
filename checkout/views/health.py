"""``GET /healthz`` (is this process alive, and its database) and ``GET /healthz/ready`` (can it take
orders now: the upstream and the rate-limit store too).

Give a load balancer ``/healthz``: it fails only when this process cannot serve anything (its
database does not answer), never because the upstream is unwell. An upstream outage must not take
every host, and with them the merchant's own pages, out of rotation: the checkout's pages say the
payment partner is not answering, and the shop goes on. Alert on ``/healthz/ready`` (or on the
metrics): it fails while the upstream is unavailable or refuses the credentials, and while the
rate-limit store is down.

Everyone gets the status code and one word (``{"status": "ok"}``, ``degraded``, ``down``): what a
load balancer needs. The details (each check, the breakers open and when their next trial is, how
old the last check is) tell a stranger when to strike at a breaker, so only a request bearing
``CHECKOUT_METRICS_TOKEN`` gets them (checked as ``/metrics`` checks it, in constant time).

Neither waits on the upstream (:mod:`checkout.readiness`): they answer from the last background
check, and start a new one when that one is older than ``CHECKOUT_HEALTH_CACHE_SECONDS``. The
database check is live (it is ours, and cheap).
"""
from __future__ import annotations

import logging
from typing import Any

from flask import Response, current_app, jsonify
from sqlalchemy import text

from ..ratelimits import unlimited
from ..readiness import OK, UNAVAILABLE, Readiness
from ..state import CheckoutState, get_state
from ..store import availability_of, database_failure
from .blueprint import bp
from .metrics import bears_metrics_token


def _database(state: CheckoutState) -> str:
    try:
        with state.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        return OK
    except Exception as exc:  # any database failure means "not alive"
        current_app.logger.log(
            logging.WARNING if availability_of(state.engine).first_of_kind("probe")
            else logging.DEBUG, "healthz: database unavailable (%s)", database_failure(exc))
        return UNAVAILABLE


def _readiness(state: CheckoutState) -> Readiness:
    return state.readiness.now(float(current_app.config["CHECKOUT_HEALTH_CACHE_SECONDS"]))


def _details(state: CheckoutState, database: str, seen: Readiness) -> dict[str, Any]:
    """What only the metrics token's bearer is told."""
    breakers = [{"family": breaker.family, "corridor": breaker.corridor, "state": now.state,
                 "retry_in_seconds": None if now.retry_in is None else round(now.retry_in, 1)}
                for breaker, now in state.upstream.transport.breakers.not_closed()]
    return {"checks": {"database": database, "upstream": seen.upstream,
                       "ratelimit_store": seen.ratelimit_store},
            "upstream": {"breakers": breakers, "checked_seconds_ago":
                         None if seen.checked_seconds_ago is None
                         else round(seen.checked_seconds_ago)}}


def _answer(ready_only: bool) -> Response:
    state = get_state()
    database = _database(state)
    seen = _readiness(state)
    alive = database == OK
    ready = alive and seen.well
    status = "ok" if ready else ("degraded" if alive else "down")
    body: dict[str, Any] = {"status": status}
    if bears_metrics_token():
        body.update(_details(state, database, seen))
    response = jsonify(body)
    response.status_code = 200 if (ready if ready_only else alive) else 503
    response.headers["Cache-Control"] = "no-store"
    response.vary.add("Authorization")
    return response


@bp.get("/healthz", endpoint="healthz")
@unlimited("probed by load balancers, often and from one address (a 429 would take the "
           "instance out of rotation); its upstream check is cached, and a stranger is told "
           "one word")
def healthz() -> Response:
    """Liveness: 200 while this process and its database answer (the rest is reported)."""
    return _answer(ready_only=False)


@bp.get("/healthz/ready", endpoint="healthz_ready")
@unlimited("probed by monitors; answered from the last background check")
def ready() -> Response:
    """Readiness: 200 only while the database, the upstream and the rate-limit store answer."""
    return _answer(ready_only=True)
