"""What a delivery is: verification of its signature and parsing of its payload (spec 6.2, notes 4).

Both are pure functions of the raw bytes. Verification comes first and raises
:class:`~checkout.errors.WebhookSignatureError` (401); parsing raises
:class:`~checkout.errors.WebhookPayloadError` (400) for a signed body that is not an event.
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from ..errors import WebhookPayloadError, WebhookSignatureError
from ..inputs import storable
from ..signature import InvalidSignature, verify

EVENT_ORDER_STATUS = "order-status-change"
EVENT_KYC = "kyc"
EVENT_AUTH = "auth"

FLOW_OF_TYPE = {"on_ramp": "onramp", "off_ramp": "offramp"}

# Signature modes: spec 6.3 signs the raw body; the service's public text signs
# JSON.stringify(body.data) with the same construction (notes 4). The second is opt-in.
SIGNATURE_MODES = ("body", "data")

_MAX_ID = 128
_MAX_STATUS = 64
_MAX_TYPE = 64


@dataclass(frozen=True)
class ParsedEvent:
    """The parts of a delivery the receiver indexes; ``payload`` is the whole parsed JSON."""

    type: str
    payload: dict[str, Any]
    order_id: str | None = None
    status: str | None = None
    updated_at: datetime | None = None
    flow: str | None = None
    order_params: str | None = None


def verify_delivery(body: bytes, signature: str | None, secret: str, mode: str = "body") -> bytes:
    """Raise :class:`WebhookSignatureError` unless ``signature`` signs this delivery.

    Returns the bytes the signature covers (the dedupe key of the delivery): the body itself in
    ``body`` mode, ``JSON.stringify(body.data)`` in ``data`` mode.

    In ``data`` mode nothing outside ``data`` is signed, so the framing must leave nothing to
    choose: a captured order-status body could otherwise be replayed as ``"event": "kyc"`` or
    ``"auth"``, or carry extra top-level keys. Only ``{"event": "order-status-change", "data":
    ...}`` is accepted (the only event whose data the upstream documents as signed this way);
    anything else is an unverifiable delivery, refused like a bad signature (401, not stored).
    """
    if mode == "body":
        _verify(body, signature, secret)
        return body
    if mode != "data":
        raise ValueError(f"CHECKOUT_WEBHOOK_SIGNATURE_MODE must be one of {SIGNATURE_MODES}")
    if not body:
        raise WebhookSignatureError("empty body")
    try:
        payload = json.loads(body, parse_int=Decimal, parse_float=Decimal,
                             parse_constant=_reject_constant)
    except (ValueError, RecursionError) as exc:
        raise WebhookSignatureError("body is not JSON, so its data cannot be verified") from exc
    if not isinstance(payload, dict) or "data" not in payload:
        raise WebhookSignatureError("body has no data to verify")
    signed = js_stringify(payload["data"]).encode("utf-8")
    _verify(signed, signature, secret)
    # After the signature check: a wrong signature is reported as such, whatever the framing.
    if set(payload) != {"event", "data"}:
        raise WebhookSignatureError("in data mode only event and data may be at the top level")
    if payload["event"] != EVENT_ORDER_STATUS:
        raise WebhookSignatureError(
            f"in data mode only {EVENT_ORDER_STATUS} is accepted: the event name is not signed")
    return signed


def _verify(signed: bytes, signature: str | None, secret: str) -> None:
    try:
        verify(signed, signature, secret)
    except InvalidSignature as exc:
        raise WebhookSignatureError(str(exc)) from None


def parse_event(body: bytes) -> ParsedEvent:
    """The event in a verified body, or :class:`WebhookPayloadError` saying what is wrong."""
    try:
        payload = json.loads(body.decode("utf-8"), parse_constant=_reject_constant)
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        raise WebhookPayloadError("body is not UTF-8 JSON") from exc
    if not isinstance(payload, dict):
        raise WebhookPayloadError("body is not a JSON object")
    event_type = payload.get("event")
    if not isinstance(event_type, str) or not event_type or len(event_type) > _MAX_TYPE \
            or not storable(event_type):
        raise WebhookPayloadError("event must be a non-empty string")
    data = payload.get("data")
    if not isinstance(data, dict):
        raise WebhookPayloadError("data must be an object")
    if event_type != EVENT_ORDER_STATUS:
        # kyc, auth and event types this version does not know are stored and acknowledged.
        return ParsedEvent(type=event_type, payload=payload)
    order = data.get("order")
    if not isinstance(order, dict):
        raise WebhookPayloadError("data.order must be an object")
    order_id = _short_string(order, "_id", _MAX_ID)
    status = _short_string(order, "status", _MAX_STATUS)
    updated_at = parse_datetime(order.get("updatedAt"))
    if updated_at is None:
        raise WebhookPayloadError("data.order.updatedAt must be an ISO 8601 date-time")
    order_type = order.get("type")
    flow = FLOW_OF_TYPE.get(order_type, order_type) if isinstance(order_type, str) else None
    params = order.get("merchantOrderParams")
    if isinstance(params, str) and not storable(params):
        raise WebhookPayloadError("data.order.merchantOrderParams has a control character")
    return ParsedEvent(type=event_type, payload=payload, order_id=order_id, status=status,
                       updated_at=updated_at, flow=flow,
                       order_params=params if isinstance(params, str) else None)


def parse_datetime(value: Any) -> datetime | None:
    """An upstream date-time (``2026-11-22T01:55:00.123Z``) as aware UTC, or None."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)   # the upstream writes UTC
    return moment.astimezone(UTC)


def _short_string(mapping: Mapping[str, Any], name: str, limit: int) -> str:
    value = mapping.get(name)
    if not isinstance(value, str) or not value or len(value) > limit:
        raise WebhookPayloadError(f"data.order.{name} must be a string of 1 to {limit} characters")
    if not storable(value):
        # A NUL here used to fail the insert on PostgreSQL: a 503, retried by the sender for ever.
        raise WebhookPayloadError(f"data.order.{name} has a control character")
    return value


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


# -- JSON.stringify, exactly, for the opt-in "data" signature mode ---------------------------------

def js_stringify(value: Any) -> str:
    """What JavaScript's ``JSON.stringify`` prints for a value parsed by ``JSON.parse``.

    Numbers are IEEE doubles in JavaScript (so ``1.0`` prints ``1`` and big integers lose digits),
    keys that are array indices come first in ascending order, and the rest keep their order.
    Pass numbers as :class:`~decimal.Decimal` (``parse_int=parse_float=Decimal``) so that nothing
    is rounded before JavaScript's own rounding is applied.
    """
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _js_string(value)
    if isinstance(value, (int, float, Decimal)):
        return _js_number(float(value))
    if isinstance(value, list):
        return "[" + ",".join(js_stringify(item) for item in value) + "]"
    if isinstance(value, dict):
        keys = sorted((k for k in value if _is_array_index(k)), key=int)
        keys += [k for k in value if not _is_array_index(k)]
        return "{" + ",".join(_js_string(k) + ":" + js_stringify(value[k]) for k in keys) + "}"
    raise TypeError(f"not a JSON value: {type(value).__name__}")


def _is_array_index(key: str) -> bool:
    return key.isdigit() and key.isascii() and (key == "0" or not key.startswith("0")) \
        and int(key) < 2 ** 32 - 1


def _js_string(text: str) -> str:
    # JSON.stringify escapes the same characters as Python's encoder, plus lone surrogates.
    out = json.dumps(text, ensure_ascii=False)
    return "".join(f"\\u{ord(ch):04x}" if 0xD800 <= ord(ch) <= 0xDFFF else ch for ch in out)


def _js_number(number: float) -> str:
    """ECMAScript Number::toString for a finite double."""
    if number != number or number in (float("inf"), float("-inf")):
        return "null"
    if number == 0:
        return "0"                                   # also for -0
    sign = "-" if number < 0 else ""
    shortest = Decimal(repr(abs(number))).normalize()  # repr is the shortest round-trip form
    _, digit_tuple, exponent = shortest.as_tuple()
    assert isinstance(exponent, int)                 # finite: NaN and infinities returned above
    digits = "".join(map(str, digit_tuple))
    k = len(digits)
    n = exponent + k                                 # value = 0.digits * 10**n
    if k <= n <= 21:
        text = digits + "0" * (n - k)
    elif 0 < n <= 21:
        text = digits[:n] + "." + digits[n:]
    elif -6 < n <= 0:
        text = "0." + "0" * (-n) + digits
    else:
        e = n - 1
        mantissa = digits if k == 1 else digits[0] + "." + digits[1:]
        text = f"{mantissa}e{'+' if e >= 0 else '-'}{abs(e)}"
    return sign + text
