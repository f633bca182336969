"""``POST /webhooks``: the upstream's webhook receiver (spec 6).

Verify over the raw bytes, store, acknowledge; act later (:mod:`checkout.webhooks`).

* a missing, malformed or wrong signature: 401, nothing stored, nothing signalled;
* signed but not an event of spec 6.2: stored for inspection, 400;
* stored: 200 ``{received: true, duplicate}``; a duplicate body is recorded and changes nothing;
* the database cannot take it: 503, so the sender retries; nothing unstored is ever acknowledged;
* never a redirect: the rule matches with or without a trailing slash, and the receiver answers
  before the host site's ``before_request`` hooks (an https redirect, a login wall or an
  anti-forgery check there cannot turn a delivery into a redirect or a 403). The view also
  carries ``csrf_exempt = True`` for checks that look for it.
"""
from __future__ import annotations

import json
import logging
import time
from typing import Any

from flask import Blueprint, Response, current_app, request
from flask.blueprints import BlueprintSetupState
from flask.typing import ResponseReturnValue
from sqlalchemy.exc import SQLAlchemyError
from werkzeug.exceptions import RequestEntityTooLarge

from ..errors import ConfigurationError, WebhookSignatureError
from ..logs import REQUEST_ID_HEADER, request_id
from ..security import machine_answer
from ..state import get_state, real_app
from ..webhooks.events import SIGNATURE_MODES, verify_delivery
from ..webhooks.processing import KEPT_HEADERS, parse_or_reason, record_delivery

log = logging.getLogger(__name__)


def receive_webhook() -> Response:
    """Verify, store and acknowledge one upstream webhook; processing follows the answer."""
    started = time.perf_counter()
    result, response = _receive()
    get_state().metrics.webhook_delivery(result, time.perf_counter() - started)
    return response


def _receive() -> tuple[str, Response]:
    """The answer, and what it was for the metrics (accepted, duplicate, bad_signature, invalid,
    too_large, unavailable)."""
    app = real_app(current_app)
    limit = int(app.config["CHECKOUT_WEBHOOK_MAX_BYTES"])
    if request.content_length is not None and request.content_length > limit:
        return "too_large", _answer(413, error=f"body larger than {limit} bytes")
    # A body without Content-Length (chunked) is read up to the cap and one byte more: werkzeug's
    # stream stops quietly at its limit, so the extra byte is how an oversized body shows.
    request.max_content_length = limit + 1
    try:
        body = request.get_data(cache=False, as_text=False)
    except RequestEntityTooLarge:
        body = None
    if body is None or len(body) > limit:
        return "too_large", _answer(413, error=f"body larger than {limit} bytes")

    try:
        signed = verify_delivery(body, request.headers.get("x-signature"),
                                 app.config["CHECKOUT_WEBHOOK_SECRET"],
                                 app.config["CHECKOUT_WEBHOOK_SIGNATURE_MODE"])
    except WebhookSignatureError as exc:
        log.warning("webhook refused from %s: %s", request.remote_addr, exc)
        return "bad_signature", _answer(401, error=str(exc))

    parsed, reason = parse_or_reason(body)
    headers = {name: value for name in KEPT_HEADERS
               if (value := request.headers.get(name)) is not None}
    state = get_state()
    dispatcher = state.dispatcher
    try:
        with dispatcher.acknowledging():
            receipt = record_delivery(state.intake, body, headers, parsed, reason,
                                      signed=signed)
    except SQLAlchemyError:
        log.exception("webhook not stored: database unavailable; answering 503 for a retry")
        response = _answer(503, error="storage unavailable, retry later")
        response.headers["Retry-After"] = "1"
        return "unavailable", response

    if parsed is None:
        return "invalid", _answer(400, error=reason, id=receipt.event_id,
                                  duplicate=receipt.duplicate)
    dispatcher.notify()
    return ("duplicate" if receipt.duplicate else "accepted",
            _answer(200, received=True, duplicate=receipt.duplicate, id=receipt.event_id))


# A marker that CSRF extensions (Flask-WTF's CSRFProtect) look for on the view function; mypy
# knows no attributes on functions.
receive_webhook.csrf_exempt = True  # type: ignore[attr-defined]


def _answer(status: int, **body: Any) -> Response:
    # json.dumps straight into the answer: Flask's JSON provider (jsonify) costs as much again as
    # the rest of it, on the one route where answers are counted in hundreds a second.
    return machine_answer(_json(body) + "\n", status, {REQUEST_ID_HEADER: request_id()})


_json = json.JSONEncoder(separators=(",", ":")).encode      # made once: json.dumps with options
                                                            # makes an encoder at every call


def _answer_before_host_hooks() -> ResponseReturnValue | None:
    # Registered first among the app's before_request functions: for the webhook rule it answers
    # here, so no host hook (https redirect, login, CSRF) runs for the upstream's deliveries.
    get_state().dispatcher.ensure_running()    # the start-up sweep: work a dead process left behind
    # POST only: Flask's automatic OPTIONS answer for the rule is its own, not a delivery.
    if request.method == "POST" and request.url_rule is not None and \
            current_app.view_functions.get(request.url_rule.endpoint) is receive_webhook:
        return receive_webhook()
    return None


def _setup(state: BlueprintSetupState) -> None:
    app = state.app
    if app.config["CHECKOUT_WEBHOOK_SIGNATURE_MODE"] not in SIGNATURE_MODES:
        raise ConfigurationError(
            f"CHECKOUT_WEBHOOK_SIGNATURE_MODE must be one of {', '.join(SIGNATURE_MODES)}")
    app.before_request_funcs.setdefault(None, []).insert(0, _answer_before_host_hooks)


def init(bp: Blueprint) -> None:
    # strict_slashes=False: "/webhooks/" is the same rule, never a redirect to "/webhooks".
    bp.add_url_rule("/webhooks", endpoint="webhooks", view_func=receive_webhook,
                    methods=["POST"], strict_slashes=False, merge_slashes=False)
    bp.record_once(_setup)
