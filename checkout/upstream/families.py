"""Which breaker an upstream call answers to: its endpoint's family and, for prices and limits, its
corridor (country and payment channel).

The upstream is many services behind one address: a payment provider of one country, the order
store, the KYC partner. One of them failing says nothing of the others, so each has its own
breaker (:mod:`.breaker`): Kenya's M-PESA prices answering 503 switch off Kenya's M-PESA prices,
never Ghana's, nor order creation, nor the reference data.

A family is named by a bounded word (``onramp_prices``, ``offramp_orders``...: :data:`FAMILIES`),
which the metrics use as a label; a corridor only ever goes to the log and to the health details
given to the metrics token.
"""
from __future__ import annotations

import re
from collections.abc import Mapping

from . import budget

# The first segment after /api/ and the flow it belongs to.
_AREAS = {"onramp": "onramp", "offramp": "offramp", "pay-widget-merchant": "legacy",
          "util": "util", "kyc": "kyc", "user": "kyc"}
_FLOWS = ("onramp", "offramp", "legacy")
# The calls that create an order: the one kind of POST that must never wait behind another's
# failures (an order action failing is not an order creation failing).
CREATES = frozenset({"/api/onramp/order/create", "/api/offramp/create-order"})
PER_CORRIDOR = ("prices", "limits")

FAMILIES: tuple[str, ...] = (
    *(f"{flow}_{what}" for flow in _FLOWS
      for what in ("prices", "limits", "reference", "orders", "create", "actions")),
    "util_reference", "address_check", "kyc", "other")

# Query parameters naming a corridor's country and payment channel, in each API's spelling.
_COUNTRY = ("countryIsoCode", "country")
_CHANNEL = ("paymentChannel", "type", "provider")
# A corridor is written into log lines: letters, digits, '-' and '_' only, and short.
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")
_MOST_CHARS = 32


def family_of(method: str, endpoint: str) -> str:
    """The family of ``method endpoint`` (the route template: ``/api/offramp/order/{id}``)."""
    parts = endpoint.split("/")
    area = _AREAS.get(parts[2], "other") if len(parts) > 2 and parts[1] == "api" else "other"
    if area in ("kyc", "other"):
        return area
    if area == "util":
        return "util_reference" if method == "GET" else "address_check"
    if method != "GET":
        return f"{area}_create" if endpoint in CREATES else f"{area}_actions"
    if endpoint.endswith("/limits"):
        return f"{area}_limits"
    kind = budget.kind_of(method, endpoint)
    if kind == budget.PRICE:
        return f"{area}_prices"
    return f"{area}_orders" if kind == budget.READ else f"{area}_reference"


def corridor_of(family: str, params: Mapping[str, object] | None) -> str | None:
    """``COUNTRY/CHANNEL`` for a family of prices or limits (None for the others, or when the
    call names neither)."""
    if not family.endswith(PER_CORRIDOR) or not params:
        return None
    country = _first(params, _COUNTRY)
    channel = _first(params, _CHANNEL)
    if country is None and channel is None:
        return None
    return f"{_safe(country)}/{_safe(channel)}"


def _first(params: Mapping[str, object], names: tuple[str, ...]) -> object | None:
    return next((params[name] for name in names if params.get(name) is not None), None)


def _safe(value: object | None) -> str:
    return _UNSAFE.sub("", "" if value is None else str(value))[:_MOST_CHARS] or "-"
