"""Sending a KYC document to the upstream, with the documented field names, and forgetting it.

``userFields`` keys follow the document's ``requiredFields`` (spec 4.6, 4.7). Dates are sent as
ISO 8601 date-times at midnight UTC, the one format the spec documents (``dob``). The photos go in
the document's ``smile-identity-images`` field (:mod:`.photos`).

By phone (``/api/kyc/submit``, ``idType`` = the document's ``value``) or, with the user API, by
email (``/api/user/kyc/submit``, ``documentId`` = its ``_id``). The values are held only for the
call: nothing of them is stored, logged or put in an event.
"""
from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from flask_babel import gettext as _

from ..forms import describe_format, field_kind
from ..sessions import CheckoutSession
from ..upstream.client import UpstreamClient
from ..upstream.types import KycDocument
from . import standing
from .photos import PhotoKind, images_value, photos_field


def user_fields(document: KycDocument, values: Mapping[str, Any],
                photos: Sequence[tuple[PhotoKind, bytes]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    images = photos_field(document)
    for spec in document.required_fields:
        if images is not None and spec.name == images.name:
            out[spec.name] = images_value(photos)
            continue
        value = values.get(spec.name)
        if value in (None, ""):
            continue
        out[spec.name] = f"{value}T00:00:00.000Z" if field_kind(spec) == "date" else value
    return out


def send(upstream: UpstreamClient, session: CheckoutSession, document: KycDocument,
         fields: Mapping[str, Any], *, source: str) -> None:
    """One call, to the ``source`` the app reads standings from now (``KycStanding.source()``:
    ``standing.STATE`` or ``USER_API``); raises ``UpstreamError`` (a refusal names the field:
    see :func:`field_named`)."""
    who = standing.contact(session)
    if source == standing.USER_API:
        upstream.user_kyc_submit(who.email or "", document.id or "", fields)
    else:
        upstream.kyc_submit(who.phone or "", document.value or "", fields)


_NAMED = re.compile(r"userFields\.([A-Za-z0-9_]+)")

# "advanced KYC is already approved for this user": the partner refuses a document of a level the
# user passed already. Such a refusal is an answer, not a failure: the level is passed. Only when
# it names the level: "this ID number is already approved for another user" passes nothing.
_ALREADY = re.compile(r"\b(basic|advanced)\s+(?:KYC|verification)\s+(?:is|was|has\s+been)\s+"
                      r"already\s+(?:approved|passed|verified)\b", re.IGNORECASE)


def already_approved(message: str | None) -> str | None:
    """The level a refusal says the user already passed, or None when it says no such thing."""
    found = _ALREADY.search(message or "")
    return found.group(1).lower() if found is not None else None


def field_named(message: str | None, document: KycDocument) -> str | None:
    """The document's field an upstream refusal names (``userFields.id_number does not ...``)."""
    found = _NAMED.search(message or "")
    if found is None:
        return None
    name = found.group(1)
    return name if any(spec.name == name for spec in document.required_fields) else None


# The partner's refusals are English, and name a field by its path in the request
# ("userFields.dob: the user must be at least 18 years old"). Those a user can act on are said in
# the user's words and language; any other is shown as sent, without the path.
_REASONS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (re.compile(r"at least (\d+) years old"),
     lambda found: _("You must be at least %(age)s years old to be verified.",
                     age=found.group(1))),
    (re.compile(r"must be a date in the past"), lambda found: _("Enter a date in the past.")),
    (re.compile(r"does not match the format"),
     lambda found: _("This does not look right for this document. Check it and try again.")),
)
_PATH = re.compile(r"^\s*userFields\.[A-Za-z0-9_]+\s*:?\s*")


def refusal(message: str | None, document: KycDocument) -> tuple[str | None, str]:
    """Where an upstream refusal of ``document`` goes (the field it names, or None: the whole
    form) and what it says to the user."""
    field = field_named(message, document)
    spec = next((s for s in document.required_fields if s.name == field), None)
    if spec is not None and spec.format and "does not match the format" in (message or ""):
        # The document's own hint, as the page shows it under the field (forms.py).
        return field, _("This does not look right. Expected format: %(format)s",
                        format=describe_format(spec.format))
    for pattern, say in _REASONS:
        found = pattern.search(message or "")
        if found is not None:
            return field, say(found)
    if field is not None:
        return field, _("Our verification partner did not accept this: %(reason)s",
                        reason=_PATH.sub("", message or ""))
    return None, _("Our verification partner did not accept this document: %(reason)s",
                   reason=message or "")
