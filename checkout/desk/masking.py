"""Email addresses and phone numbers as the desk shows them: enough for a support person to see
that they match what the customer says (``am***@example.com``, ``+234 *** *** 4567``), never
enough to write to them or call them from the page. Wallet addresses and transaction hashes are
public on their chains, and are shown whole."""
from __future__ import annotations

import phonenumbers

__all__ = ["mask_email", "mask_phone"]


def mask_email(email: str | None) -> str | None:
    """``amina@example.com`` -> ``am***@example.com``; the domain stays (it says which
    provider), the name keeps its first two characters (one, when it is that short)."""
    if not email or "@" not in email:
        return None
    name, _, domain = email.strip().rpartition("@")
    shown = name[:2] if len(name) > 2 else name[:1]
    return f"{shown}***@{domain}"


def mask_phone(phone: str | None) -> str | None:
    """``2348012344567`` (E.164 digits) -> ``+234 *** *** 4567``: the country code and the last
    four digits; nothing at all of a number that does not parse."""
    if not phone:
        return None
    digits = "".join(ch for ch in phone if ch.isdigit())
    if len(digits) < 8:
        return None
    try:
        number = phonenumbers.parse("+" + digits, None)
        country = str(number.country_code)
    except phonenumbers.NumberParseException:
        return None
    return f"+{country} *** *** {digits[-4:]}"
