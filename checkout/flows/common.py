"""What both flows share: the user's IP, recognising an order found later, reading a quote."""
from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from typing import Any

from flask import request

from ..sessions import CheckoutSession

CREATED_SKEW = timedelta(seconds=5)  # an order's creation date may be this much before our clock's
LOOKUP_PAGE = 50                     # orders read from a list when the merchant's reference repeats


def user_ip() -> str:
    """The user's IPv4 address (the upstream takes IPv4 only).

    ``request.remote_addr`` is the client only when the host app sits behind a proxy it has told
    Flask about (werkzeug's ProxyFix): that is the host's deployment, documented in the README. An
    IPv6-only client is sent as ``0.0.0.0`` (unknown) rather than as someone else's address.
    """
    try:
        address = ipaddress.ip_address(request.remote_addr or "")
    except ValueError:
        return "0.0.0.0"
    if isinstance(address, ipaddress.IPv6Address):
        address = address.ipv4_mapped or ipaddress.IPv4Address(0)
    return str(address)


def same_address(a: str | None, b: str | None) -> bool:
    if not a or not b:
        return False
    # EVM addresses differ only by their checksum's letter case; other networks' are exact.
    return a == b or (a.startswith("0x") and a.lower() == b.lower())


def same_amount(value: Decimal | None, expected: Any) -> bool:
    try:
        return value is not None and value == Decimal(str(expected))
    except ArithmeticError:
        return False


def created_during(created: datetime | None, pending: dict[str, Any]) -> bool:
    """The order was created no earlier than the pending attempt was sent (less clock skew)."""
    started = datetime.fromtimestamp(float(pending.get("at") or 0), tz=UTC)
    return created is not None and created >= started - CREATED_SKEW


def has_fields(session: CheckoutSession) -> bool:
    """Whether the offer asks fields of the user (a step's ``needed``). Before a quote they are
    unknown and counted, so the number of steps shown only ever shrinks."""
    record = session.quote
    return record is None or bool(record.get("required_fields"))


def number(source: Mapping[str, Any], key: str) -> Decimal | None:
    """A figure of the upstream's JSON as an exact decimal (never through a float)."""
    value = source.get(key)
    return None if value is None else Decimal(str(value))


MASK, SHOWN = "•", 4


def masked(value: str) -> str:
    """``value`` with all but its last four characters hidden (all of it when that short): on a
    receipt, which is printed, saved and forwarded, enough to recognise one's own account."""
    value = value.strip()
    if len(value) <= SHOWN:
        return MASK * SHOWN
    return MASK * SHOWN + " " + value[-SHOWN:]
