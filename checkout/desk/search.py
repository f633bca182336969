"""Finding orders: one box for whatever the customer quotes, filters by flow, status and date,
newest first, a page at a time (the CSV export reads every page).

What the box takes, tried all at once (each is one indexed lookup):

- the order reference the checkout shows (the upstream's order id), whole or by its first
  :data:`MIN_PREFIX` characters or more;
- the shop's order reference (``orderParams``), a wallet address, a transaction hash;
- an email address or a phone number, matched by their keyed digests (:mod:`.digests`): a
  number without its country code is tried in every African country's plan.

Pages go by keyset (the last order listed), never by offset: the 2,000th page of 100,000 orders
costs what the first does.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal
from typing import Any

import phonenumbers
import re2
from sqlalchemy import Select, and_, or_, select
from sqlalchemy.engine import Connection, Engine

from ..kyc.memory import e164_digits
from ..store.tables import desk_keys_table, desk_orders_table, orders_table
from ..webhooks.orders import webhook_status_of
from ..webhooks.store import aware
from .digests import normalised, search_keys

__all__ = ["Filters", "ListedOrder", "Page", "find", "phone_candidates",
           "MIN_PREFIX", "PAGE_SIZE", "NO_STATUS"]

PAGE_SIZE = 50
MIN_PREFIX = 6              # a reference's first characters that find it (ids share their start)
PREFIX_MATCHES = 500        # orders a prefix may name at most
NO_STATUS = "none"          # the status filter for orders whose status the checkout has not learnt

# Regions of Africa's numbering plans (country codes 20, 27 and 2xx): where a number typed
# without its country code is tried.
_AFRICA = tuple(sorted(region for code, regions in phonenumbers.COUNTRY_CODE_TO_REGION_CODE.items()
                       if code in (20, 27) or 200 <= code < 300 for region in regions
                       if region != "001"))
_PHONE = re2.compile(r"^\+?[0-9][0-9 ().\-]{5,24}$")


@dataclass(frozen=True)
class Filters:
    query: str = ""
    flow: str | None = None
    status: str | None = None           # a webhook status word, or NO_STATUS
    since: datetime | None = None       # created at or after
    until: datetime | None = None       # created before


@dataclass(frozen=True)
class ListedOrder:
    order_id: str
    flow: str | None
    variant: str | None
    created_at: datetime
    order_params: str | None
    network: str | None
    asset: str | None
    currency: str | None
    fiat_amount: Decimal | None
    crypto_amount: Decimal | None
    status: str | None                  # the checkout's (the webhook set), None: not learnt yet
    upstream_status: str | None         # the upstream's own word, as last read
    status_updated_at: datetime | None

    def as_row(self) -> dict[str, str | None]:
        """The row of ``flask checkout orders list`` (its ROW_KEYS): ``status`` in the
        upstream's words when the checkout read them, ``storedStatus`` the checkout's own when
        it says something else."""
        shown = self.upstream_status or self.status
        stored = None if self.status in (None, shown, webhook_status_of(self.flow, shown)) \
            else self.status
        return {"id": self.order_id, "flow": self.flow, "variant": self.variant,
                "status": shown, "storedStatus": stored,
                "amount": None if self.fiat_amount is None else _plain(self.fiat_amount),
                "currency": self.currency, "asset": self.asset, "network": self.network,
                "orderParams": self.order_params, "createdAt": self.created_at.isoformat(),
                "updatedAt": None if self.status_updated_at is None
                else self.status_updated_at.isoformat()}


def _plain(amount: Decimal) -> str:
    """An amount as a number a spreadsheet reads: no exponent, no trailing zeros."""
    return format(amount.normalize(), "f")


@dataclass(frozen=True)
class Page:
    orders: list[ListedOrder]
    after: str | None                   # the last order listed, when older ones follow


def phone_candidates(text: str) -> list[str]:
    """The numbers (E.164 digits) ``text`` may be: itself when it has its country code (``+``,
    ``00``, or all its digits), else in each African plan where it is a valid number."""
    if "@" in text or not _PHONE.match(text.strip()):
        return []
    typed = text.strip()
    digits = "".join(ch for ch in typed if ch.isdigit())
    if typed.startswith("+") or digits.startswith("00"):
        whole = e164_digits("+" + digits.removeprefix("00"), None)
        return [whole] if whole else []
    found = [e164_digits("+" + digits, None)] + [e164_digits(digits, region) for region in _AFRICA]
    return list(dict.fromkeys(number for number in found if number))


def _matching_ids(conn: Connection, launch_secret: str, query: str) -> list[str]:
    """The orders whose reference, shop reference, wallet, hash, email or phone is ``query``."""
    d, k = desk_orders_table.c, desk_keys_table.c
    ids: dict[str, None] = {}
    ids.update((row, None) for row in conn.execute(
        select(d.order_id).where(d.order_id == query)).scalars())
    if len(query) >= MIN_PREFIX:
        ids.update((row, None) for row in conn.execute(
            select(d.order_id).where(d.order_id.startswith(query, autoescape=True))
            .limit(PREFIX_MATCHES)).scalars())
    keys = search_keys(launch_secret, emails=[query] if "@" in query else [],
                       phones=phone_candidates(query), order_params=[query],
                       addresses=[normalised(query)], hashes=[normalised(query)])
    ids.update((row, None) for row in conn.execute(
        select(k.order_id).where(k.key.in_(keys)).distinct()).scalars())
    return list(ids)


def _listing(filters: Filters, ids: Sequence[str] | None) -> Select[Any]:
    d, o = desk_orders_table.c, orders_table.c
    query = (select(d.order_id, d.flow, d.variant, d.created_at, d.order_params, d.network,
                    d.asset, d.currency, d.fiat_amount, d.crypto_amount, o.status,
                    o.full_order["status"].as_string().label("upstream_status"),
                    o.status_updated_at)
             .select_from(desk_orders_table.outerjoin(orders_table,
                                                      o.order_id == d.order_id)))
    if ids is not None:
        query = query.where(d.order_id.in_(ids))
    if filters.flow:
        query = query.where(d.flow == filters.flow)
    if filters.status == NO_STATUS:
        query = query.where(o.order_id.is_(None))
    elif filters.status:
        query = query.where(o.status == filters.status)
    if filters.since is not None:
        query = query.where(d.created_at >= filters.since)
    if filters.until is not None:
        query = query.where(d.created_at < filters.until)
    return query.order_by(d.created_at.desc(), d.order_id.desc())


def _older_than(conn: Connection, after: str) -> Any:
    """The keyset condition of the orders listed after ``after`` (None: start over)."""
    d = desk_orders_table.c
    created = conn.execute(select(d.created_at).where(d.order_id == after)).scalar()
    if created is None:
        return None
    return or_(d.created_at < created, and_(d.created_at == created, d.order_id < after))


def find(engine: Engine, launch_secret: str, filters: Filters, *, after: str | None = None,
         limit: int | None = None) -> Page:
    """A page of the orders ``filters`` keep, newest first, after the order ``after``
    (``limit``: :data:`PAGE_SIZE` orders)."""
    limit = PAGE_SIZE if limit is None else limit
    with engine.connect() as conn:
        ids = _matching_ids(conn, launch_secret, filters.query) if filters.query else None
        if ids == []:
            return Page([], None)
        query = _listing(filters, ids)
        if after:
            older = _older_than(conn, after)
            if older is not None:
                query = query.where(older)
        rows = conn.execute(query.limit(limit + 1)).all()
    orders = [_listed(row) for row in rows[:limit]]
    return Page(orders, orders[-1].order_id if len(rows) > limit else None)


def _listed(row: Any) -> ListedOrder:
    return ListedOrder(
        order_id=row.order_id, flow=row.flow, variant=row.variant,
        created_at=aware(row.created_at), order_params=row.order_params, network=row.network,
        asset=row.asset, currency=row.currency, fiat_amount=row.fiat_amount,
        crypto_amount=row.crypto_amount, status=row.status, upstream_status=row.upstream_status,
        status_updated_at=aware(row.status_updated_at))
