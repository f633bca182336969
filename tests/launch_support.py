"""Helpers for tests of launching and session pages: raw token signing and a stand-in flow page."""
from __future__ import annotations

import base64
import json
import time
import uuid
from typing import Any

from flask import Flask
from joserfc import jwt
from joserfc.jwk import OctKey

from checkout.state import get_state
from checkout.store.tables import sessions_table
from checkout.views.context import session_route


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def claims(**overrides: Any) -> dict[str, Any]:
    """A valid claim set (10 minutes of life); ``None`` in ``overrides`` removes a claim."""
    now = int(time.time())
    base: dict[str, Any] = {"flow": "onramp", "jti": uuid.uuid4().hex, "iat": now,
                            "exp": now + 600}
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def sign(app: Flask, payload: dict[str, Any], *, alg: str = "HS256",
         secret: str | None = None) -> str:
    """Sign exactly ``payload`` (no defaults added), with ``alg`` and the app's or another key."""
    key = OctKey.import_key((secret or app.config["CHECKOUT_LAUNCH_SECRET"]).encode())
    return jwt.encode({"alg": alg, "typ": "JWT"}, payload, key, algorithms=[alg])


def unsigned(payload: dict[str, Any]) -> str:
    """An ``alg: none`` token: header and payload, empty signature."""
    header = b64(json.dumps({"alg": "none", "typ": "JWT"}).encode())
    return f"{header}.{b64(json.dumps(payload).encode())}."


def install_flow_stub(app: Flask) -> None:
    """Give the app a ``checkout.flow`` page when the real on-ramp views are not there.

    The endpoint name carries the blueprint's prefix, so the blueprint's hooks (headers, session
    context, error pages) apply to it exactly as to the real page.
    """
    if "checkout.flow" in app.view_functions:
        return
    prefix = app.config["CHECKOUT_URL_PREFIX"]

    @session_route
    def flow(session):
        from flask import render_template_string

        return render_template_string(
            '{% extends "checkout/base.html" %}{% block content %}'
            '<h1>{{ checkout_session.flow }}</h1>{% endblock %}')

    app.add_url_rule(f"{prefix}/s/<session_id>/", endpoint="checkout.flow", view_func=flow)


def session_count(app: Flask) -> int:
    with app.app_context():
        with get_state().engine.connect() as conn:
            return len(conn.execute(sessions_table.select()).fetchall())


def session_id_from(location: str) -> str:
    """The id in ``/checkout/s/<id>/`` or ``/checkout/s/<id>/<step>``."""
    parts = location.rstrip("/").split("/")
    return parts[parts.index("s") + 1]
