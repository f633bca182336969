"""``POST /webhooks``: the upstream's webhook receiver (spec 6).

Verify over the raw bytes, store, acknowledge; act later (:mod:`checkout.webhooks`).

* a missing, malformed or wrong signature: 401, nothing stored, nothing signalled (the refusal
  is noted without the body, a few a second at most: :mod:`checkout.webhooks.refusals`);
* signed but not an event of spec 6.2: stored for inspection, 400;
* stored: 200 ``{received: true, duplicate}``; a duplicate body is recorded and changes nothing;
* the database cannot take it: 503, so the sender retries; nothing unstored is ever acknowledged;
* never a redirect of its own: ``/webhooks/`` is the same rule.

A view of the blueprint like any other: the host's request hooks, signals and WSGI middleware
run for a delivery as for any request. A host hook that redirects or refuses (an https redirect,
a login wall, an anti-forgery check) must let the endpoint ``checkout.webhooks`` through: the
README shows how (for Flask-WTF's CSRFProtect: ``csrf.exempt(app.blueprints["checkout"])``).
"""
from __future__ import annotations

import json
import logging
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from flask import Flask, Response, current_app, request
from flask.blueprints import BlueprintSetupState
from sqlalchemy.exc import SQLAlchemyError
from werkzeug.exceptions import RequestEntityTooLarge
from werkzeug.wrappers import Request

from ..errors import ConfigurationError, WebhookSignatureError
from ..logs import REQUEST_ID_HEADER, environ_request_id
from ..ratelimits import unlimited
from ..security import MACHINE_HEADERS, machine_answer
from ..state import real_app, state_of
from ..store import availability_of, database_failure
from ..webhooks.events import SIGNATURE_MODES, verify_delivery
from ..webhooks.processing import KEPT_HEADERS, parse_or_reason, record_delivery
from ..webhooks.refusals import SIGNATURE, TOO_LARGE
from .blueprint import bp

if TYPE_CHECKING:
    from ..state import CheckoutState

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Answer:
    """What the receiver answers, and what it was for the metrics (accepted, duplicate,
    bad_signature, invalid, too_large, unavailable, failed)."""

    status: int
    body: dict[str, Any]
    result: str
    request_id: str
    retry_after: str | None = None

    def headers(self) -> dict[str, str]:
        headers = MACHINE_HEADERS | {REQUEST_ID_HEADER: self.request_id}
        if self.retry_after is not None:
            headers["Retry-After"] = self.retry_after
        return headers


# json.dumps with options makes an encoder at every call: made once.
_json = json.JSONEncoder(separators=(",", ":")).encode


def receive(app: Flask, delivery: Request) -> Answer:
    """Verify, store and acknowledge one upstream webhook (processing follows the answer)."""
    started = time.perf_counter()
    rid = environ_request_id(delivery.environ)
    metrics = None
    try:
        state = state_of(app)
        metrics = state.metrics
        answer = _receive(app, state, delivery, rid)
    except Exception:   # a bug: the sender gets a 500 and retries; nothing was acknowledged
        log.exception("webhook receiver failed", extra={"request_id": rid})
        answer = Answer(500, {"error": "internal error, retry later"}, "failed", rid)
    if metrics is not None:
        metrics.webhook_delivery(answer.result, time.perf_counter() - started)
    return answer


def _receive(app: Flask, state: CheckoutState, delivery: Request, rid: str) -> Answer:
    limit = int(app.config["CHECKOUT_WEBHOOK_MAX_BYTES"])

    def too_large() -> Answer:
        state.refusals.note(TOO_LARGE)
        return Answer(413, {"error": f"body larger than {limit} bytes"}, "too_large", rid)

    if delivery.content_length is not None and delivery.content_length > limit:
        return too_large()
    # A body without Content-Length (chunked) is read up to the cap and one byte more: werkzeug's
    # stream stops quietly at its limit, so the extra byte is how an oversized body shows.
    delivery.max_content_length = limit + 1
    try:
        body = delivery.get_data(cache=False, as_text=False)
    except RequestEntityTooLarge:
        return too_large()
    if len(body) > limit:
        return too_large()

    try:
        signed = verify_delivery(body, delivery.headers.get("x-signature"),
                                 app.config["CHECKOUT_WEBHOOK_SECRET"],
                                 app.config["CHECKOUT_WEBHOOK_SIGNATURE_MODE"])
    except WebhookSignatureError as exc:
        log.warning("webhook refused from %s: %s", delivery.remote_addr, exc,
                    extra={"request_id": rid})
        state.refusals.note(SIGNATURE, body)
        return Answer(401, {"error": str(exc)}, "bad_signature", rid)

    parsed, reason = parse_or_reason(body)
    headers = {name: value for name in KEPT_HEADERS
               if (value := delivery.headers.get(name)) is not None}
    try:
        receipt = record_delivery(state.engine, body, headers, parsed, reason, signed=signed)
    except SQLAlchemyError as exc:
        # One line with the reason: a database that is down refuses every delivery, and a
        # traceback each would bury the log (the sender retries; nothing is lost).
        log.log(logging.WARNING if availability_of(state.engine).first_of_kind("webhook")
                else logging.DEBUG,
                "webhook not stored: database unavailable (%s); answering 503 for a retry",
                database_failure(exc), extra={"request_id": rid})
        return Answer(503, {"error": "storage unavailable, retry later"}, "unavailable", rid,
                      retry_after="1")

    if parsed is None:
        return Answer(400, {"error": reason, "id": receipt.event_id,
                            "duplicate": receipt.duplicate}, "invalid", rid)
    state.dispatcher.notify()
    return Answer(200, {"received": True, "duplicate": receipt.duplicate,
                        "id": receipt.event_id},
                  "duplicate" if receipt.duplicate else "accepted", rid)


# strict_slashes=False: "/webhooks/" is the same rule, never a redirect to "/webhooks".
@bp.post("/webhooks", endpoint="webhooks", strict_slashes=False, merge_slashes=False)
@unlimited("signed by the upstream, which retries what is not acknowledged: a 429 "
           "would only delay order updates and multiply the deliveries; a forged one costs "
           "one signature check and is never stored (its refusal is noted, a few a second at "
           "most)")
def receive_webhook() -> Response:
    """The receiver's view: :func:`receive`'s answer, as JSON for a machine."""
    # Flask's own request: whatever read the body before (a host's request_started handler,
    # say) left it cached there, where a new one would find the stream drained.
    answer = receive(real_app(current_app), request)
    return machine_answer(_json(answer.body) + "\n", answer.status, answer.headers())


@bp.before_request
def _start_dispatcher() -> None:
    # The start-up sweep, on this process's first checkout request of any kind: work that a
    # process which died left behind is taken up without waiting for a delivery. (Not on the
    # host's own requests: the checkout adds no hook to them. A host that wants the background
    # work running whatever comes runs ``flask checkout worker``.)
    state_of(real_app(current_app)).dispatcher.ensure_running()


@bp.record_once
def _setup(state: BlueprintSetupState) -> None:
    app = state.app
    if app.config["CHECKOUT_WEBHOOK_SIGNATURE_MODE"] not in SIGNATURE_MODES:
        raise ConfigurationError(
            f"CHECKOUT_WEBHOOK_SIGNATURE_MODE must be one of {', '.join(SIGNATURE_MODES)}")
