"""``GET /healthz``: liveness and readiness (database and upstream reachable) as JSON.

The route is public and the upstream check is a call made with the merchant's key, so its answer is
reused for ``CHECKOUT_HEALTH_CACHE_SECONDS`` (default 30) per app and process: hammering
``/healthz`` cannot be turned into a flood of upstream calls. Only one caller at a time refreshes an
expired answer; the others meanwhile get the previous one. The database check stays live (it is
ours, and cheap).
"""
from __future__ import annotations

from flask import Blueprint, Response, current_app, jsonify
from sqlalchemy import text

from ..errors import UpstreamError
from ..state import get_state


def _upstream_check() -> str:
    try:
        get_state().upstream.onramp_assets()
        return "ok"
    except UpstreamError:
        return "unavailable"


def healthz() -> Response:
    """Report whether the database and the upstream answer."""
    state = get_state()
    checks: dict[str, str] = {}
    try:
        with state.engine.connect() as conn:
            conn.execute(text("SELECT 1"))
        checks["database"] = "ok"
    except Exception:  # any database failure means "not ready"
        checks["database"] = "unavailable"
    ttl = float(current_app.config["CHECKOUT_HEALTH_CACHE_SECONDS"])
    checks["upstream"] = state.readiness.get(ttl, _upstream_check)
    ready = all(v == "ok" for v in checks.values())
    response = jsonify(status="ok" if ready else "degraded", checks=checks)
    response.status_code = 200 if ready else 503
    response.headers["Cache-Control"] = "no-store"
    return response


def init(bp: Blueprint) -> None:
    bp.add_url_rule("/healthz", view_func=healthz, methods=["GET"])
