"""The sandbox console's webhook pages: what the merchant dashboard shows under Webhooks (spec 6.4).

``GET /sandbox/webhooks`` lists deliveries with every attempt, ``GET /sandbox/webhooks.json`` gives the
same as JSON, ``POST /sandbox/webhooks/<id>/redeliver`` sends the same bytes again.
``GET /sandbox/sandbox.css`` is the one stylesheet of every sandbox page, served by the sandbox itself
so that a strict ``style-src 'self'`` allows it wherever the pages are mounted. The sender is
``current_app.extensions["sandbox"].webhooks`` (a :class:`~checkout.sandbox.webhooks.WebhookSender`).
"""
from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

from flask import (
    Blueprint,
    abort,
    current_app,
    redirect,
    render_template,
    request,
    send_from_directory,
    url_for,
)
from flask.typing import ResponseReturnValue

from .webhooks import WebhookSender

__all__ = ["console_bp"]

STATIC = Path(__file__).resolve().parent / "static"

console_bp = Blueprint("sandbox_console", __name__, template_folder="templates")


def _sender() -> WebhookSender:
    sandbox = current_app.extensions.get("sandbox")
    sender: WebhookSender | None = getattr(sandbox, "webhooks", None)
    if sender is None:
        raise RuntimeError("app.extensions['sandbox'].webhooks is not set: build the app with "
                           "checkout.sandbox.create_app")
    return sender


def _order_filter() -> str | None:
    return request.args.get("order_id") or None


@console_bp.get("/sandbox/webhooks")
def webhooks() -> ResponseReturnValue:
    """List webhook deliveries, newest first, each with its attempts."""
    order_id = _order_filter()
    deliveries = [d.to_dict() for d in _sender().deliveries(order_id=order_id)]
    return render_template("sandbox/webhooks.html", deliveries=deliveries,
                           order_id=order_id, highlight=request.args.get("highlight"))


@console_bp.get("/sandbox/webhooks.json")
def webhooks_json() -> ResponseReturnValue:
    """The same list as JSON, for scripts and tests."""
    return {"deliveries": [d.to_dict() for d in _sender().deliveries(order_id=_order_filter())]}


@console_bp.get("/sandbox/sandbox.css")
def stylesheet() -> ResponseReturnValue:
    """The stylesheet of every sandbox page."""
    return send_from_directory(STATIC, "sandbox.css", mimetype="text/css",
                               max_age=300)


@console_bp.post("/sandbox/webhooks/<delivery_id>/redeliver")
def redeliver(delivery_id: str) -> ResponseReturnValue:
    """Send a delivery's exact body again, as a new delivery, then show the list."""
    if not _same_origin():
        abort(403, "redeliver only from the sandbox console itself")
    try:
        fresh = _sender().redeliver(delivery_id)
    except KeyError:
        abort(404, "no such delivery (it may have been dropped from the log)")
    return redirect(url_for(".webhooks", highlight=fresh.id, _anchor=fresh.id), code=303)


def _same_origin() -> bool:
    """Refuse a POST that another site's page made the browser send (the console has no login)."""
    fetch_site = request.headers.get("Sec-Fetch-Site")
    if fetch_site is not None:
        return fetch_site in ("same-origin", "none")
    origin = request.headers.get("Origin")
    if origin is None or origin == "null":
        return origin is None       # no Origin at all: not a browser form post (curl, test client)
    parts = urlsplit(origin)
    return parts.netloc == request.host and parts.scheme == request.scheme
