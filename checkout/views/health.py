"""``GET /healthz`` (is this process alive, and its database) and ``GET /healthz/ready`` (can it take
orders now: the upstream and the rate-limit store too), as JSON.

Give a load balancer ``/healthz``: it fails only when this process cannot serve anything (its
database does not answer), never because the upstream is unwell. An upstream outage must not take
every host, and with them the merchant's own pages, out of rotation: the checkout's pages say the
payment partner is not answering, and the shop goes on. Alert on ``/healthz/ready`` (or on the
metrics): it fails while the upstream is unavailable, refuses the credentials, or has the breaker
open, and while the rate-limit store is down.

Neither waits on the upstream (:mod:`checkout.readiness`): they answer from the breaker's state and
the last background check, and start a new check when that one is older than
``CHECKOUT_HEALTH_CACHE_SECONDS``. The database check is live (it is ours, and cheap).
"""
from __future__ import annotations

import logging
from typing import Any

from flask import Blueprint, Response, current_app, jsonify
from sqlalchemy import text

from ..ratelimits import unlimited
from ..readiness import OK, UNAVAILABLE, Readiness, partner_now
from ..state import CheckoutState, get_state
from ..store import availability_of, database_failure

# Checks that do not fail readiness: the default store lives in the process.
_STORE_READY = (OK, "memory")


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


def _readiness(state: CheckoutState) -> tuple[Readiness, dict[str, Any]]:
    return partner_now(state.readiness, state.upstream.transport.breaker,
                       float(current_app.config["CHECKOUT_HEALTH_CACHE_SECONDS"]))


def _answer(ready_only: bool) -> Response:
    state = get_state()
    database = _database(state)
    seen, upstream_details = _readiness(state)
    checks = {"database": database, "upstream": seen.upstream,
              "ratelimit_store": seen.ratelimit_store}
    alive = database == OK
    ready = alive and seen.upstream == OK and seen.ratelimit_store in _STORE_READY
    status = "ok" if ready else ("degraded" if alive else "down")
    response = jsonify(status=status, checks=checks, upstream=upstream_details)
    response.status_code = 200 if (ready if ready_only else alive) else 503
    response.headers["Cache-Control"] = "no-store"
    return response


@unlimited("probed by load balancers, often and from one address (a 429 would take the "
           "instance out of rotation); its upstream check is cached")
def healthz() -> Response:
    """Liveness: 200 while this process and its database answer (the rest is reported)."""
    return _answer(ready_only=False)


@unlimited("probed by monitors; answered from the last background check")
def ready() -> Response:
    """Readiness: 200 only while the database, the upstream and the rate-limit store answer."""
    return _answer(ready_only=True)


def init(bp: Blueprint) -> None:
    bp.add_url_rule("/healthz", view_func=healthz, methods=["GET"])
    bp.add_url_rule("/healthz/ready", "healthz_ready", view_func=ready, methods=["GET"])
