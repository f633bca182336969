"""Whom a user contacts about their checkout: the merchant's support (``CHECKOUT_SUPPORT``), else the
merchant by name. Never the upstream service nor this software: the payer's contract is with the
shop, and only the shop can look the order up in its own records.

``CHECKOUT_SUPPORT`` maps any of ``email``, ``web``, ``whatsapp`` and ``phone`` to the merchant's
address, web page (https), WhatsApp number and phone number (international, with their "+"). It
is checked when the app starts. Each becomes a link with the order's reference already written
where the medium carries text: the email's subject and body, the WhatsApp message.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import phonenumbers
import re2
from email_validator import EmailNotValidError, validate_email
from flask import Flask, current_app
from flask_babel import gettext as _

from .errors import ConfigurationError

__all__ = ["Contact", "contacts", "check_config", "support_links"]

KINDS = ("email", "web", "whatsapp", "phone")
# The part before the @ of a support address: what real ones hold. RFC 5322 allows more (?, &, %,
# =, /, #...), but those mean something in the mailto: link built from it:
# "help?cc=spy@evil.example" is a valid address that adds a Cc to every message a user writes.
LOCAL_PART = re2.compile(r"^[A-Za-z0-9._+-]+$")


@dataclass(frozen=True)
class Contact:
    kind: str           # one of KINDS
    value: str          # as checked: the address, the https URL, the number in E.164

    @property
    def shown(self) -> str:
        """As a person reads it: a number grouped the international way."""
        if self.kind in ("whatsapp", "phone"):
            number = phonenumbers.parse(self.value, None)
            return phonenumbers.format_number(number,
                                              phonenumbers.PhoneNumberFormat.INTERNATIONAL)
        if self.kind == "web":
            return urlsplit(self.value).netloc
        return self.value


@dataclass(frozen=True)
class SupportLink:
    kind: str
    label: str          # what the link says, in the page's language
    href: str
    new_window: bool    # a web page (WhatsApp's too) cannot open inside the shop's frame


def _number(key: str, value: str) -> str:
    try:
        number = phonenumbers.parse(value, None)
    except phonenumbers.NumberParseException:
        number = None
    if number is None or not phonenumbers.is_valid_number(number):
        raise ConfigurationError(
            f"CHECKOUT_SUPPORT[{key!r}] must be a phone number in international form, with its "
            f"country code after a '+' (for example +234 801 234 5678), not {value!r}")
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164)


def _email(text: str) -> str:
    """One plain address (email-validator refuses a display name, a quoted part, an IP
    literal, a list), holding nothing a mailto: link reads as more than the address. The error
    says why, never what was given."""
    try:
        checked = validate_email(text, check_deliverability=False, allow_smtputf8=False)
    except EmailNotValidError as exc:
        reason = str(exc)
    else:
        if LOCAL_PART.match(checked.local_part):
            return str(checked.ascii_email or checked.normalized)
        reason = "only letters, digits and . _ - + may come before the @"
    raise ConfigurationError(
        f"CHECKOUT_SUPPORT['email'] must be one plain address such as help@shop.example: "
        f"{reason}")


def _checked(key: str, value: Any) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigurationError(f"CHECKOUT_SUPPORT[{key!r}] must be a non-empty string")
    text: str = value.strip()
    if key == "email":
        return _email(text)
    if key == "web":
        parts = urlsplit(text)
        if parts.scheme != "https" or not parts.hostname or parts.username or parts.password \
                or any(c.isspace() or ord(c) < 32 for c in text):
            raise ConfigurationError(
                f"CHECKOUT_SUPPORT['web'] must be an https:// address of your help page, "
                f"not {text!r}")
        return text
    return _number(key, text)


def contacts(setting: Any) -> tuple[Contact, ...]:
    """``CHECKOUT_SUPPORT`` checked, in the merchant's order; () when unset."""
    if setting is None:
        return ()
    if not isinstance(setting, Mapping):
        raise ConfigurationError(
            "CHECKOUT_SUPPORT must map any of email, web, whatsapp, phone to your support's "
            "address, page and numbers")
    unknown = sorted(str(key) for key in setting if key not in KINDS)
    if unknown:
        raise ConfigurationError(f"CHECKOUT_SUPPORT: unknown {', '.join(unknown)} (use any of "
                                 f"{', '.join(KINDS)})")
    return tuple(Contact(key, _checked(key, value)) for key, value in setting.items())


def check_config(app: Flask) -> None:
    """Refuse a support contact a user could not reach, when the app starts."""
    contacts(app.config.get("CHECKOUT_SUPPORT"))


def merchant_name() -> str:
    return current_app.config.get("CHECKOUT_MERCHANT_NAME") or _("the shop")


def support_links(reference: str | None = None) -> list[SupportLink]:
    """The merchant's support as links, each carrying ``reference`` where it can."""
    found = contacts(current_app.config.get("CHECKOUT_SUPPORT"))
    merchant = current_app.config.get("CHECKOUT_MERCHANT_NAME")
    if reference:
        subject = _("Order %(reference)s", reference=reference)
        message = (_("Hello %(merchant)s, I need help with my order %(reference)s.",
                     merchant=merchant, reference=reference) if merchant else
                   _("Hello, I need help with my order %(reference)s.", reference=reference))
    else:
        subject = _("My checkout")
        message = (_("Hello %(merchant)s, I need help with my checkout.", merchant=merchant)
                   if merchant else _("Hello, I need help with my checkout."))
    links = []
    for contact in found:
        if contact.kind == "email":
            href = (f"mailto:{contact.value}?subject={quote(subject, safe='')}"
                    f"&body={quote(message, safe='')}")
            label = _("Email %(address)s", address=contact.shown)
        elif contact.kind == "whatsapp":
            href = f"https://wa.me/{contact.value.lstrip('+')}?text={quote(message, safe='')}"
            label = _("WhatsApp %(number)s", number=contact.shown)
        elif contact.kind == "phone":
            href = f"tel:{contact.value}"
            label = _("Call %(number)s", number=contact.shown)
        else:
            href = contact.value
            label = _("Help page (%(site)s)", site=contact.shown)
        links.append(SupportLink(contact.kind, label, href,
                                 new_window=contact.kind in ("web", "whatsapp")))
    return links
