"""The desk's index of orders: one row per order the checkout knows of, and the keys it is found by.

Written where the checkout learns of an order, in that writer's own transaction:

- its creation here (:class:`checkout.desk.journal.Journal`): what the customer was shown (the
  amounts, the wallet, the contact they gave, the session that made it);
- each order webhook (:mod:`checkout.webhooks.processing`): the summary's reference, email,
  amounts and transactions, for orders made here or anywhere else;
- each read of the full order (:mod:`checkout.webhooks.orders`): its wallet, hash and contact.

A row is only ever filled in, never overwritten: what was known first (what the customer saw at
creation) stays, and each later source adds what was missing. ``created_at`` keeps the earliest
time told. Search keys are keyed digests (:mod:`.digests`); nothing personal is kept in clear.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import datetime
from decimal import Decimal, InvalidOperation
from functools import cache
from typing import Any

from sqlalchemy import bindparam, case, func
from sqlalchemy.engine import Connection

from ..inputs import storable
from ..kyc.memory import e164_digits
from ..store.tables import desk_keys_table, desk_orders_table
from ..store.writing import dialect_insert
from ..webhooks.events import FLOW_OF_TYPE, parse_datetime
from .digests import search_keys

__all__ = ["OrderFacts", "record", "facts_from_summary", "facts_from_order"]


@dataclass(frozen=True)
class OrderFacts:
    """What one source tells of an order (None: it does not say)."""

    order_id: str
    flow: str | None = None
    variant: str | None = None
    created_at: datetime | None = None
    session_key: str | None = None
    order_params: str | None = None
    network: str | None = None
    asset: str | None = None
    currency: str | None = None
    fiat_amount: Decimal | None = None
    crypto_amount: Decimal | None = None
    emails: tuple[str, ...] = ()
    phones: tuple[str, ...] = ()          # E.164 digits
    addresses: tuple[str, ...] = ()       # the customer's own wallets, never the partner's
    hashes: tuple[str, ...] = ()

    def row(self, now: datetime) -> dict[str, Any]:
        """The row as the table takes it, whatever a source sent: a text no database stores or
        longer than its column, or an amount larger than its column, is left out. Indexing runs
        inside the webhooks' and the reads' own transactions, and must never fail them."""
        return {"order_id": self.order_id, "flow": _fit(self.flow, 32),
                "variant": _fit(self.variant, 16), "created_at": self.created_at or now,
                "session_key": self.session_key, "order_params": _fit(self.order_params, None),
                "network": _fit(self.network, 32), "asset": _fit(self.asset, 16),
                "currency": _fit(self.currency, 8),
                "fiat_amount": _within(self.fiat_amount, FIAT_DIGITS),
                "crypto_amount": _within(self.crypto_amount, CRYPTO_DIGITS)}


_FILLED = ("flow", "variant", "session_key", "order_params", "network", "asset", "currency",
           "fiat_amount", "crypto_amount")


@cache
def _upsert(dialect: str) -> Any:
    """INSERT the order's row, or fill in what the stored one lacks (built once per dialect)."""
    table = desk_orders_table.c
    insert = dialect_insert(dialect, desk_orders_table).values(
        {name: bindparam(name) for name in ("order_id", "created_at", *_FILLED)})
    new = insert.excluded
    return insert.on_conflict_do_update(
        index_elements=[table.order_id],
        set_={name: func.coalesce(table[name], new[name]) for name in _FILLED}
        | {"created_at": case((new.created_at < table.created_at, new.created_at),
                              else_=table.created_at)})


@cache
def _insert_keys(dialect: str) -> Any:
    return (dialect_insert(dialect, desk_keys_table)
            .values(key=bindparam("key"), order_id=bindparam("order_id"))
            .on_conflict_do_nothing(index_elements=["key", "order_id"]))


def record(conn: Connection, facts: OrderFacts, launch_secret: str, now: datetime) -> None:
    """Add what ``facts`` tell to the index, in ``conn``'s transaction."""
    if not facts.order_id or len(facts.order_id) > 128 or not storable(facts.order_id):
        return
    conn.execute(_upsert(conn.dialect.name), facts.row(now))
    keys = search_keys(launch_secret, emails=facts.emails, phones=facts.phones,
                       order_params=(facts.order_params,), addresses=facts.addresses,
                       hashes=facts.hashes)
    if keys:
        conn.execute(_insert_keys(conn.dialect.name),
                     [{"key": key, "order_id": facts.order_id} for key in keys])


# -- what each source tells --------------------------------------------------------------------------

def facts_from_summary(order: Mapping[str, Any], flow: str | None) -> OrderFacts | None:
    """What an order webhook's ``data.order`` tells (spec 6.2): its legs say what was paid in
    and out, and the customer's side of each crypto transaction."""
    order_id = order.get("_id")
    if not isinstance(order_id, str):
        return None
    flow = flow or FLOW_OF_TYPE.get(str(order.get("type")))
    fiat_leg, crypto_leg = "deposit", "payout"
    if flow == "offramp":
        fiat_leg, crypto_leg = "payout", "deposit"
    fiat, crypto = _leg(order.get(fiat_leg)), _leg(order.get(crypto_leg))
    # The customer's wallet: where an on-ramp's crypto went, where an off-ramp's came from, and
    # where a refund went. The other ends are the partner's, shared by every order.
    customer_ends = (("payout", "toAddress"), ("deposit", "fromAddress"), ("refund", "toAddress")) \
        if flow != "onramp" else (("payout", "toAddress"), ("refund", "toAddress"))
    addresses = tuple(_text(_meta(order.get(leg)).get(end)) for leg, end in customer_ends)
    hashes = tuple(_text(_meta(order.get(leg)).get("transactionHash"))
                   for leg in ("deposit", "payout", "refund"))
    return OrderFacts(
        order_id, flow=flow, created_at=parse_datetime(order.get("createdAt")),
        order_params=_exact(order.get("merchantOrderParams")),
        currency=_text(fiat.get("currencyCode")), asset=_text(crypto.get("currencyCode")),
        # What the customer paid (before fees) and what they were paid (after them).
        fiat_amount=_amount(_object(fiat.get("cashout")).get(
            "amountBeforeFees" if fiat_leg == "deposit" else "amountAfterFees")),
        crypto_amount=_amount(_object(crypto.get("cashout")).get(
            "amountBeforeFees" if crypto_leg == "deposit" else "amountAfterFees")),
        emails=_present(order.get("userEmail")), addresses=_present(*addresses),
        hashes=_present(*hashes))


def facts_from_order(order_id: str, flow: str, full: Mapping[str, Any]) -> OrderFacts:
    """What the upstream's full order tells (spec 2.4 for the on-ramp, 2.7 for the off-ramp)."""
    country = _text(full.get("countryIsoCode"))
    if flow == "onramp":
        phone = full.get("phoneNumber")
        return OrderFacts(
            order_id, flow=flow, created_at=parse_datetime(full.get("createdAt") or full.get("date")),
            order_params=_exact(full.get("orderParams")), network=_text(full.get("network")),
            asset=_text(full.get("asset")), currency=_text(full.get("currencyIsoCode")),
            fiat_amount=_amount(full.get("localCurrencyAmount")),
            crypto_amount=_amount(full.get("amountCrypto")),
            emails=_present(full.get("email")), phones=_present(e164_digits(phone, country)),
            addresses=_present(_text(full.get("address"))), hashes=_present(_text(full.get("hash"))))
    cashout = _object(full.get("cashout"))
    typed = full.get("offerId") is not None or full.get("paymentType") is not None
    return OrderFacts(
        order_id, flow=flow, variant="type" if typed else "channel",
        created_at=parse_datetime(full.get("createdAt")),
        order_params=_exact(full.get("orderParams")), network=_text(full.get("network")),
        asset=_text(full.get("asset")), currency=_text(full.get("currencyIsoCode")),
        fiat_amount=_amount(cashout.get("localCurrencyAmount")),
        crypto_amount=_amount(cashout.get("cryptoAmount")),
        emails=_present(full.get("userEmail")),
        phones=_present(e164_digits(full.get("userPhoneNumber"), country)),
        addresses=_present(_text(full.get("fromAddress"))), hashes=_present(_text(full.get("hash"))))


def _object(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _leg(value: Any) -> Mapping[str, Any]:
    return _object(value)


def _meta(leg: Any) -> Mapping[str, Any]:
    return _object(_object(_object(leg).get("transaction")).get("meta"))


def _text(value: Any) -> str | None:
    return value.strip() or None if isinstance(value, str) else None


def _exact(value: Any) -> str | None:
    """The shop's reference as it was given (its spaces too: it is the shop's own text)."""
    return value if isinstance(value, str) and value else None


def _present(*values: Any) -> tuple[str, ...]:
    return tuple(value for value in values if isinstance(value, str) and value)


# Digits before the point the amount columns hold: Numeric(38, 12) and Numeric(38, 18).
FIAT_DIGITS, CRYPTO_DIGITS = 26, 20


def _fit(value: str | None, width: int | None) -> str | None:
    if value is None or not storable(value):
        return None
    return value if width is None else value[:width]


def _within(amount: Decimal | None, digits: int) -> Decimal | None:
    return amount if amount is not None and abs(amount) < Decimal(10) ** digits else None


def _amount(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str, Decimal)):
        return None
    try:
        amount = Decimal(str(value))
    except InvalidOperation:
        return None
    return amount if amount.is_finite() else None
