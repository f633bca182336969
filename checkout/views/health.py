"""``GET /healthz``: liveness and readiness (database and upstream reachable) as JSON."""
from __future__ import annotations

from flask import Blueprint, jsonify
from sqlalchemy import text

from ..errors import UpstreamError
from ..state import get_state


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
    try:
        state.upstream.onramp_assets()
        checks["upstream"] = "ok"
    except UpstreamError:
        checks["upstream"] = "unavailable"
    ready = all(v == "ok" for v in checks.values())
    response = jsonify(status="ok" if ready else "degraded", checks=checks)
    response.status_code = 200 if ready else 503
    response.headers["Cache-Control"] = "no-store"
    return response


def init(bp: Blueprint) -> None:
    bp.add_url_rule("/healthz", view_func=healthz, methods=["GET"])
