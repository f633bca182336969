"""The level of verification the upstream said a person passed, remembered for their next order.

``/api/kyc/state``, read by phone, says only *whether* a person passed KYC, not at which level
(spec 4.7). Read alone, a customer who verified with photos last week looks as if they passed basic
only: an order that needs advanced would ask them again, and the partner would refuse the document
as already approved. The upstream does tell the level elsewhere, and what it tells is kept here:

- every order webhook carries ``data.userKyc`` (spec 6.2): ``passedKycType``, and the latest
  submission's ``latestKycType`` and ``latestKycStatus``, for the order's ``userEmail``;
- the opt-in ``kyc`` event says which level was approved (notes 4), for its ``userEmail``;
- a submission refused because its level is already approved proves that level;
- a document this checkout sent, seen under review and then approved, proves its level.

A person is named by a keyed digest of their email or phone (HMAC with the launch secret), never
the contact itself: the table can answer "what did the upstream say of this person" only to someone
who already knows the contact and the key. A level never goes down here (the upstream's passes do
not either); a row the upstream has not confirmed for ``CHECKOUT_KYC_REMEMBER_DAYS`` is deleted by
the hourly sweep (:mod:`checkout.session_purge`), as is everything it has not said again.
"""
from __future__ import annotations

import hashlib
import hmac
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

import phonenumbers
from sqlalchemy import case, delete, select
from sqlalchemy.engine import Connection, Engine

from ..sessions import CheckoutSession, find_by_order
from ..store.tables import kyc_levels_table
from ..store.writing import dialect_insert, write_transaction
from .levels import LEVELS, rank

# Only passed levels are kept: "none" is what an unknown person has anyway.
PASSED_LEVELS = tuple(level for level in LEVELS if level != "none")

def person_keys(secret: str, *, email: str | None = None,
                phone: str | None = None) -> list[str]:
    """The digests a person is remembered under: one for their email, one for their phone."""
    names = []
    if email and email.strip():
        names.append(f"email:{email.strip().lower()}")
    if phone and phone.strip():
        names.append(f"phone:{phone.strip().lstrip('+')}")
    key = secret.encode()
    return [hmac.new(key, name.encode(), hashlib.sha256).hexdigest()[:64] for name in names]


def remember(conn: Connection, keys: Iterable[str], level: str | None,
             at: datetime | None = None) -> None:
    """Record that the upstream said these keys' person passed ``level`` (in ``conn``'s
    transaction). A lower level than the one kept leaves the kept one as it is."""
    if level not in PASSED_LEVELS:
        return
    at = at or datetime.now(UTC)
    table = kyc_levels_table
    for key in keys:
        insert = dialect_insert(conn.dialect.name, table).values(person=key, level=level,
                                                                  said_at=at)
        conn.execute(insert.on_conflict_do_update(index_elements=["person"], set_={
            # Levels are words: "the higher one" is said by their rank, not by SQL's max.
            "level": case((_rank_of(table.c.level) > rank(level), table.c.level),
                          else_=insert.excluded.level),
            # Said again: kept longer. Not by a lower level: a basic pass confirmed every day
            # must not keep an advanced one, never confirmed since, for ever.
            "said_at": case((_rank_of(table.c.level) > rank(level), table.c.said_at),
                            (table.c.said_at > insert.excluded.said_at, table.c.said_at),
                            else_=insert.excluded.said_at),
        }))


def _rank_of(column: Any) -> Any:
    return case(*[(column == word, rank(word)) for word in PASSED_LEVELS], else_=0)


def e164_digits(value: Any, country: str | None) -> str | None:
    """A phone number as the upstream takes it (E.164 digits, no +), or None if it is not one."""
    if not value:
        return None
    try:
        number = phonenumbers.parse(str(value), country or None)
    except phonenumbers.NumberParseException:
        return None
    if not phonenumbers.is_valid_number(number):
        return None
    return phonenumbers.format_number(number, phonenumbers.PhoneNumberFormat.E164).lstrip("+")


def session_phone(session: CheckoutSession) -> str | None:
    """The phone a session knows its user by: given at the KYC step, in the offer's fields, or
    in the launch token."""
    country = session.value("countryIsoCode")
    given = (session.kyc.get("contact") or {}).get("phone")
    return given or e164_digits(session.fields.get("phoneNumber"), country) \
        or e164_digits(session.value("phoneNumber"), country)


def remember_now(engine: Engine, keys: Iterable[str], level: str | None) -> None:
    """:func:`remember` in a transaction of its own (a page that learnt a level)."""
    keys = list(keys)
    if not keys or level not in PASSED_LEVELS:
        return
    with write_transaction(engine) as conn:
        remember(conn, keys, level)


def recall(engine: Engine, keys: Iterable[str], *, days: float) -> str:
    """The highest level remembered for any of ``keys`` and said in the last ``days`` days;
    ``none`` when the upstream told nothing of this person."""
    keys = list(keys)
    if not keys:
        return "none"
    since = datetime.now(UTC) - timedelta(days=days)
    query = select(kyc_levels_table.c.level).where(kyc_levels_table.c.person.in_(keys),
                                                   kyc_levels_table.c.said_at >= since)
    with engine.connect() as conn:
        levels = list(conn.execute(query).scalars())
    return max(levels, key=rank, default="none")


def forget_older_than(engine: Engine, days: float) -> int:
    """Delete what the upstream has not said again in ``days`` days; return how many rows."""
    cutoff = datetime.now(UTC) - timedelta(days=days)
    with write_transaction(engine) as conn:
        result = conn.execute(delete(kyc_levels_table)
                              .where(kyc_levels_table.c.said_at < cutoff))
    return int(result.rowcount or 0)


# -- what a webhook tells -------------------------------------------------------------------------

def learn_from_event(conn: Connection, secret: str, event_type: str,
                     payload: Mapping[str, Any], at: datetime) -> None:
    """Remember what a verified webhook tells of its user's level (in ``conn``'s transaction):
    under their email, and under the phone the order's own session knows them by, when it is
    this checkout's order (a level is looked up by phone: :mod:`.standing`)."""
    told = level_in_event(event_type, payload)
    if told is None:
        return
    email, level = told
    order = (payload.get("data") or {}).get("order") or {}
    phone = None
    if event_type == "order-status-change" and isinstance(order.get("_id"), str):
        session = find_by_order(conn, order["_id"])
        phone = session_phone(session) if session is not None else None
    remember(conn, person_keys(secret, email=email, phone=phone), level, at)


def level_in_event(event_type: str, payload: Mapping[str, Any]) -> tuple[str, str] | None:
    """(email, level passed) that a verified webhook tells, or None when it tells none.

    An ``order-status-change`` tells it in ``data.userKyc``: ``passedKycType``, or the latest
    submission's type once its status is approved. A ``kyc`` event tells it when its status is
    approved. Every field is optional (spec 6.2): a missing or unknown value tells nothing.
    """
    data = payload.get("data")
    if not isinstance(data, dict):
        return None
    if event_type == "order-status-change":
        order, kyc = data.get("order"), data.get("userKyc")
        if not isinstance(order, dict) or not isinstance(kyc, dict):
            return None
        email = order.get("userEmail")
        levels = [kyc.get("passedKycType")]
        if _word(kyc.get("latestKycStatus")) == "approved":
            levels.append(kyc.get("latestKycType"))
    elif event_type == "kyc":
        email = data.get("userEmail")
        levels = [data.get("kycType")] if _word(data.get("kycStatus")) == "approved" else []
    else:
        return None
    passed = max((_word(level) for level in levels), key=rank, default="none")
    if not isinstance(email, str) or "@" not in email or passed not in PASSED_LEVELS:
        return None
    return email, passed


def _word(value: Any) -> str:
    return value.strip().lower() if isinstance(value, str) else ""
