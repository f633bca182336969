"""The sandbox's order store: quotes, on-ramp and off-ramp orders, their state machines and pages.

One re-entrant lock guards everything; timers run on the shared :class:`~.clock.Scheduler` and take the
same lock, so an API call and a timer never interleave on one order. Every status change goes through
:meth:`OrderStore.set_status`, which stamps ``updatedAt``, appends to the history and hands the order to
the ``on_status_change`` callback (the webhook sender) exactly once.

Waits are in sandbox seconds (scaled by the clock). They follow upstream-notes 6: quotes live 10 minutes,
unpaid on-ramp orders expire after 5 minutes, off-ramp orders after 60 minutes, and an agent confirms a
bank transfer within about a minute.
"""
from __future__ import annotations

import base64
import binascii
import itertools
import json
import math
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any, overload

import base58

from .clock import Clock, ScheduledCall, Scheduler
from .validation import InvalidRequest, OrderNotAvailable

# Forced outcomes (docs/sandbox.md "Forced outcomes").
OUTCOMES = ("deposit_success", "deposit_invalid", "underpayment", "overpayment", "payout_success",
            "payout_failed", "refund", "expire", "transaction_failed", "refund_failed")
DEFAULT_OUTCOME = "deposit_success"
# On-ramp has neither an on-chain deposit nor refund statuses: these outcomes end it the nearest way.
ONRAMP_DEPOSIT_REJECTED = frozenset({"deposit_invalid", "underpayment", "transaction_failed"})
PAYOUT_FAILS = frozenset({"payout_failed", "refund", "refund_failed"})
REFUNDS_AFTER_PAYOUT = frozenset({"refund", "refund_failed"})

QUOTE_TTL = 600
ONRAMP_UNPAID_TTL = 300
OFFRAMP_UNPAID_TTL = 3600
AGENT_DELAY = 30            # buyer says "paid" -> agent confirms or rejects (20-60 s upstream)
PAYOUT_START_DELAY = 5
PAYOUT_DELAY = 20
DEPOSIT_CHECK_DELAY = 10    # off-ramp: hash received -> validating
DEPOSIT_CONFIRM_DELAY = 20  # validating -> confirmed / invalid
RETRY_DELAY = 10

ONRAMP_FINAL = frozenset({"swap_expired", "swap_buyer_rejected", "swap_seller_rejected", "complete",
                          "failed"})
OFFRAMP_FINAL = frozenset({"offramp_success", "transaction_invalid", "transaction_failed", "refunded",
                           "refund_failed", "expired", "cancelled"})
OFFRAMP_STATUSES = ("initiated", "awaiting_transaction_confirmation", "transaction_confirmed",
                    "transaction_failed", "validating_transaction", "transaction_invalid",
                    "offramp_pending", "offramp_success", "offramp_failed", "offramp_retry",
                    "refunding", "refunded", "refund_failed", "expired", "cancelled")

# Legacy pay-widget view of an on-ramp status: (BuySwapStatus, WithdrawalStatus or None). The legacy
# set has no "buyer rejected": a swap the buyer abandoned ends, like an unpaid one, as expired.
LEGACY_STATUS = {
    "swap_initiated": ("initiated", None),
    "swap_expired": ("expired", None),
    "swap_buyer_rejected": ("expired", None),
    "swap_buyer_confirmed": ("buyer_confirmed", None),
    "swap_seller_rejected": ("seller_rejected", None),
    "swap_seller_confirmed": ("seller_confirmed", "pending"),
    "pending": ("seller_confirmed", "pending"),
    "complete": ("seller_confirmed", "complete"),
    "failed": ("seller_confirmed", "failed"),
}

_counter = itertools.count(secrets.randbelow(1 << 24))
_process_random = os.urandom(5)


def new_id() -> str:
    """A 24-hex id shaped like a MongoDB ObjectId: seconds, 5 process-random bytes, a counter."""
    seconds = int(time.time()).to_bytes(4, "big")
    count = (next(_counter) & 0xFFFFFF).to_bytes(3, "big")
    return (seconds + _process_random + count).hex()


@overload
def iso(moment: datetime) -> str: ...
@overload
def iso(moment: datetime | None) -> str | None: ...
def iso(moment: datetime | None) -> str | None:
    if moment is None:
        return None
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


@dataclass
class Quote:
    """A priced offer, single-use, valid for :data:`QUOTE_TTL` sandbox seconds."""

    id: str
    kind: str                           # "onramp", "offramp" (channel-based) or "offramp_typed"
    params: dict[str, Any]              # what was asked: network, asset, currency, amount, ...
    offer: dict[str, Any]
    cashout: dict[str, Any]
    outcome: str | None
    expires_at: datetime
    used: bool = False


@dataclass
class Order:
    """Fields shared by both families; ``data`` holds the family's own API fields."""

    id: str
    family: str                         # "onramp" or "offramp"
    created_at: datetime
    updated_at: datetime
    status: str
    quote: Quote
    outcome: str
    webhook_url: str | None
    data: dict[str, Any]
    history: list[dict[str, str]] = field(default_factory=list)
    timers: dict[str, ScheduledCall] = field(default_factory=dict)
    transfer: Any = None                # transfer.TransferState for on-ramp orders

    @property
    def sort_key(self) -> tuple[str, str]:
        # Fixed-width UTC text, so that comparing the strings compares the instants.
        return (self.created_at.astimezone(UTC).isoformat(timespec="microseconds"), self.id)


# -- cursors --------------------------------------------------------------------------------------

def encode_cursor(order: Order) -> str:
    created, order_id = order.sort_key
    raw = json.dumps({"c": created, "i": order_id}, separators=(",", ":"))
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_cursor(cursor: str) -> tuple[str, str]:
    try:
        raw = base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4))
        data = json.loads(raw)
        key = (str(data["c"]), str(data["i"]))
        datetime.fromisoformat(key[0])
    except (binascii.Error, ValueError, KeyError, TypeError):
        raise InvalidRequest("cursor is invalid") from None
    return key


def paginate(orders: Iterable[Order], cursor: str | None, limit: int) -> tuple[list[Order], str | None]:
    """Newest first by (createdAt, id); the cursor is the last key seen, so the walk is stable.

    Orders created during a walk are newer than every cursor and so appear only on a fresh walk;
    none is repeated and none older is skipped. ``nextCursor`` is None on the last page.
    """
    ordered = sorted(orders, key=lambda order: order.sort_key, reverse=True)
    if cursor:
        after = decode_cursor(cursor)
        ordered = [order for order in ordered if order.sort_key < after]
    page = ordered[:limit]
    next_cursor = encode_cursor(page[-1]) if len(ordered) > limit else None
    return page, next_cursor


def amounts_match(asked: float, given: float) -> bool:
    return math.isclose(asked, given, rel_tol=1e-9, abs_tol=1e-9)


class OrderStore:
    """Every quote and order of one sandbox app, in memory."""

    def __init__(self, clock: Clock, scheduler: Scheduler, *, default_outcome: str | None = None,
                 on_status_change: Callable[[Order], None] | None = None) -> None:
        self.clock = clock
        self.scheduler = scheduler
        self.default_outcome = default_outcome or DEFAULT_OUTCOME
        self.on_status_change = on_status_change
        self.lock = threading.RLock()
        self._quotes: dict[str, Quote] = {}
        self._orders: dict[str, Order] = {}
        self._last_created: datetime | None = None

    # -- quotes -----------------------------------------------------------------------------------

    def add_quote(self, kind: str, params: dict[str, Any], offer: dict[str, Any],
                  cashout: dict[str, Any], outcome: str | None) -> Quote:
        quote = Quote(id=new_id(), kind=kind, params=params, offer=offer, cashout=cashout,
                      outcome=outcome, expires_at=self.clock.due_at(QUOTE_TTL))
        with self.lock:
            self._drop_stale_quotes()
            self._quotes[quote.id] = quote
        return quote

    def _drop_stale_quotes(self) -> None:
        # Keeps memory bounded on a long-running sandbox; an expired quote is refused either way.
        now = self.clock.now()
        for quote_id in [q.id for q in self._quotes.values() if q.expires_at < now - timedelta(hours=1)]:
            del self._quotes[quote_id]

    def peek_quote(self, quote_id: str, kind: str, *, name: str = "quoteId") -> Quote:
        """The live quote ``quote_id`` of ``kind``, without using it up."""
        quote = self._quotes.get(quote_id)
        if quote is None or quote.kind != kind:
            raise InvalidRequest(f"{name} is unknown")
        if quote.used:
            raise InvalidRequest(f"The quote has already been used ({name})")
        if self.clock.now() >= quote.expires_at:
            raise InvalidRequest("The quote is expired")
        return quote

    def take_quote(self, quote_id: str, kind: str, *, name: str, network: str, asset: str,
                   currency: str, amount: float) -> Quote:
        """Use up a quote whose terms match the create body exactly (must be called under lock)."""
        quote = self.peek_quote(quote_id, kind, name=name)
        asked = quote.params
        for key, given in (("network", network), ("asset", asset), ("currency", currency)):
            if asked[key] != given:
                raise InvalidRequest(f"{key} does not match the quote ({asked[key]})")
        if not amounts_match(float(asked["amount"]), amount):
            raise InvalidRequest(f"amount does not match the quote ({asked['amount']})")
        quote.used = True
        return quote

    # -- orders -----------------------------------------------------------------------------------

    def new_order(self, family: str, status: str, quote: Quote, webhook_url: str | None,
                  data: dict[str, Any]) -> Order:
        """Create and store an order (call under lock); its first status is announced like any other."""
        now = self.clock.now()
        # Creation times strictly increase, so a new order always sorts before every cursor.
        if self._last_created is not None and now <= self._last_created:
            now = self._last_created + timedelta(microseconds=1)
        self._last_created = now
        order = Order(id=new_id(), family=family, created_at=now, updated_at=now, status=status,
                      quote=quote, outcome=quote.outcome or self.default_outcome,
                      webhook_url=webhook_url, data=data)
        order.history.append({"status": status, "changedAt": iso(now)})
        self._orders[order.id] = order
        self._announce(order)
        return order

    def get(self, order_id: str, family: str | None = None) -> Order:
        order = self._orders.get(order_id)
        if order is None or (family is not None and order.family != family):
            raise OrderNotAvailable()
        return order

    def find(self, family: str, predicate: Callable[[Order], bool]) -> list[Order]:
        with self.lock:
            return [o for o in self._orders.values() if o.family == family and predicate(o)]

    def all(self) -> list[Order]:
        with self.lock:
            return sorted(self._orders.values(), key=lambda order: order.sort_key, reverse=True)

    def address_used(self, address: str) -> bool:
        """Whether any order received at or sent from ``address`` (``/api/util/check-address``)."""
        wanted = address.strip()
        evm = wanted.lower() if wanted.startswith("0x") else None
        with self.lock:
            for order in self._orders.values():
                for key in ("address", "fromAddress"):
                    value = order.data.get(key)
                    if value and (value == wanted or (evm is not None and value.lower() == evm)):
                        return True
        return False

    def volume_usd(self, *, email: str | None = None, phone: str | None = None,
                   family: str | None = None) -> float:
        """USD value of a user's orders that are live or went through (KYC limits count these),
        of one ``family`` (``onramp``, ``offramp``) or both. An order is the user's when its
        email or phone number (the payer's or payee's ``phoneNumber``) is theirs."""
        dead = {"swap_expired", "swap_buyer_rejected", "swap_seller_rejected", "expired",
                "cancelled", "transaction_invalid", "transaction_failed", "refunded"}
        email = email.lower() if email else None
        phone = phone.lstrip("+") if phone else None
        total = 0.0
        with self.lock:
            for order in self._orders.values():
                if family is not None and order.family != family:
                    continue
                data = order.data
                owner_email = (data.get("email") or data.get("userEmail") or "").lower()
                owner_phone = (data.get("phoneNumber") or data.get("userPhoneNumber") or "")
                mine = (email is not None and owner_email == email) or \
                       (phone is not None and owner_phone.lstrip("+") == phone)
                if mine and order.status not in dead:
                    total += float(data.get("amount") or data.get("cashout", {}).get("usdAmount") or 0)
        return round(total, 6)

    def set_status(self, order: Order, status: str) -> None:
        """Move ``order`` to ``status`` (call under lock)."""
        now = self.clock.now()
        order.status = status
        order.updated_at = max(now, order.updated_at)
        order.history.append({"status": status, "changedAt": iso(order.updated_at)})
        self._announce(order)

    def _announce(self, order: Order) -> None:
        if self.on_status_change is not None:
            self.on_status_change(order)

    def set_outcome(self, order_id: str, outcome: str) -> Order:
        if outcome not in OUTCOMES:
            raise InvalidRequest(f"outcome must be one of: {', '.join(OUTCOMES)}")
        with self.lock:
            order = self.get(order_id)
            order.outcome = outcome
            return order

    # -- timers -----------------------------------------------------------------------------------

    def schedule(self, order: Order, name: str, sandbox_seconds: float,
                 step: Callable[[Order], None]) -> None:
        """Run ``step(order)`` later under the lock; one timer per ``name`` per order."""
        self.cancel(order, name)

        def fire() -> None:
            with self.lock:
                if order.timers.get(name) is handle:
                    del order.timers[name]
                    step(order)

        handle = self.scheduler.call_later(sandbox_seconds, fire)
        order.timers[name] = handle

    def cancel(self, order: Order, name: str) -> None:
        handle = order.timers.pop(name, None)
        if handle is not None:
            self.scheduler.cancel(handle)

    def cancel_all(self, order: Order) -> None:
        for name in list(order.timers):
            self.cancel(order, name)

    def advance(self, order_id: str) -> Order:
        """Run the order's soonest timer now (sandbox console and tests). 400 if none is pending."""
        with self.lock:
            order = self.get(order_id)
            pending = [(h.due, name, h) for name, h in order.timers.items() if h.pending]
            if not pending:
                raise InvalidRequest(f"order {order_id} has nothing pending (status {order.status})")
            _, name, handle = min(pending, key=lambda item: item[0])
            if self.scheduler.cancel(handle):
                # The scheduler's wrapper checks that the handle is still current, so call it directly.
                handle.fn(*handle.args, **handle.kwargs)
            return order

    def run_to_rest(self, order_id: str, max_steps: int = 50) -> Order:
        """Advance until the order has no timer left (a final status, or waiting for the user)."""
        for _ in range(max_steps):
            with self.lock:
                order = self.get(order_id)
                if not any(h.pending for h in order.timers.values()):
                    return order
            self.advance(order_id)
        return self.get(order_id)


# -- on-ramp state machine ------------------------------------------------------------------------
#
#   swap_initiated --(user: confirm / pay page / push approved)--> swap_buyer_confirmed
#   swap_initiated --(5 min unpaid)--> swap_expired
#   swap_initiated --(user cancels)--> swap_buyer_rejected
#   swap_buyer_confirmed --(agent, 30 s)--> swap_seller_confirmed
#                                         | swap_seller_rejected (no valid payment)
#   swap_seller_confirmed --> pending --> complete | failed (forced payout failure)

def deposit_factor(outcome: str) -> float:
    """How much of the quoted deposit the forced outcome makes the user actually pay."""
    return {"underpayment": 0.5, "overpayment": 2.0}.get(outcome, 1.0)


def onramp_start(store: OrderStore, order: Order) -> None:
    store.schedule(order, "expiry", ONRAMP_UNPAID_TTL, lambda o: onramp_expire(store, o))


def onramp_expire(store: OrderStore, order: Order) -> None:
    if order.status in ("swap_initiated", "swap_buyer_confirmed"):
        store.cancel_all(order)
        store.set_status(order, "swap_expired")


def onramp_buyer_rejects(store: OrderStore, order: Order) -> None:
    if order.status != "swap_initiated":
        raise InvalidRequest(f"the order cannot be cancelled in status {order.status}")
    store.cancel_all(order)
    store.set_status(order, "swap_buyer_rejected")


# Upstream-notes 4: expired and canceled are not final; money that arrives late is still paid out.
ONRAMP_LATE_PAYABLE = frozenset({"swap_expired", "swap_buyer_rejected"})
OFFRAMP_LATE_PAYABLE = frozenset({"expired", "cancelled"})


def onramp_buyer_paid(store: OrderStore, order: Order, *, late: bool = False) -> None:
    """The user says (or the payment page or phone reports) that the money has been sent.

    ``late``: the money arrived after the order expired or was abandoned (sandbox action only).
    """
    allowed = ONRAMP_LATE_PAYABLE if late else {"swap_initiated"}
    if order.status not in allowed:
        raise InvalidRequest(f"the order cannot be confirmed in status {order.status}")
    store.cancel(order, "push")
    order.data["buyerConfirmedAt"] = iso(store.clock.now())
    store.set_status(order, "swap_buyer_confirmed")
    if order.outcome == "expire" and not late:
        return      # the agent never sees the money: the expiry timer ends the order
    store.cancel(order, "expiry")
    store.schedule(order, "agent", AGENT_DELAY, lambda o: _onramp_agent_decides(store, o))


def _onramp_agent_decides(store: OrderStore, order: Order) -> None:
    if order.outcome in ONRAMP_DEPOSIT_REJECTED:
        store.set_status(order, "swap_seller_rejected")
        return
    store.set_status(order, "swap_seller_confirmed")
    store.schedule(order, "payout", PAYOUT_START_DELAY, lambda o: _onramp_payout_sent(store, o))


def _onramp_payout_sent(store: OrderStore, order: Order) -> None:
    order.data["hash"] = fake_transaction_hash(order.data.get("network", ""))
    store.set_status(order, "pending")
    store.schedule(order, "payout", PAYOUT_DELAY, lambda o: _onramp_payout_done(store, o))


def _onramp_payout_done(store: OrderStore, order: Order) -> None:
    store.set_status(order, "failed" if order.outcome in PAYOUT_FAILS else "complete")


def fake_transaction_hash(network: str) -> str:
    if network == "SOLANA":
        return base58.b58encode(os.urandom(64)).decode()
    if network in ("STELLAR", "TON", "ALGORAND"):
        return os.urandom(32).hex()
    return "0x" + os.urandom(32).hex()


# -- off-ramp state machine -----------------------------------------------------------------------
#
#   initiated --(hash sent)--> awaiting_transaction_confirmation --> validating_transaction
#       --> transaction_confirmed --> offramp_pending --> offramp_success
#   awaiting_transaction_confirmation --> transaction_failed (transaction_failed: nothing arrived)
#   validating_transaction --> transaction_invalid (deposit_invalid)
#                          --> transaction_invalid --> refunding --> refunded (underpayment)
#   offramp_pending --> offramp_failed --> offramp_retry --> offramp_failed (payout_failed)
#   offramp_pending --> offramp_failed --> refunding --> refunded (refund)
#   offramp_pending --> offramp_failed --> refunding --> refund_failed (refund_failed)
#   refund_failed --(sandbox: retry the refund)--> refunded
#   initiated / awaiting_transaction_confirmation --(60 min unpaid)--> expired

def offramp_start(store: OrderStore, order: Order) -> None:
    store.schedule(order, "expiry", OFFRAMP_UNPAID_TTL, lambda o: _offramp_expire(store, o))


def _offramp_expire(store: OrderStore, order: Order) -> None:
    if order.status in ("initiated", "awaiting_transaction_confirmation"):
        store.cancel_all(order)
        store.set_status(order, "expired")


def offramp_cancel(store: OrderStore, order: Order) -> None:
    """The user gives up before sending anything."""
    if order.status != "initiated":
        raise InvalidRequest(f"the order cannot be cancelled in status {order.status}")
    store.cancel_all(order)
    store.set_status(order, "cancelled")


def offramp_deposit_sent(store: OrderStore, order: Order, tx_hash: str, *,
                         late: bool = False) -> None:
    """The user sent the crypto and its hash is known (confirm-order, or the sandbox deposit action).

    ``late``: the crypto arrived after the order expired or was cancelled (sandbox action only).
    """
    allowed = OFFRAMP_LATE_PAYABLE if late else {"initiated"}
    if order.status not in allowed:
        raise InvalidRequest(f"the order cannot be confirmed in status {order.status}")
    order.data["hash"] = tx_hash
    store.set_status(order, "awaiting_transaction_confirmation")
    if order.outcome == "expire" and not late:
        return      # the transaction never confirms: the expiry timer ends the order
    store.cancel(order, "expiry")
    store.schedule(order, "deposit", DEPOSIT_CHECK_DELAY, lambda o: _offramp_picked_up(store, o))


def _offramp_picked_up(store: OrderStore, order: Order) -> None:
    """The chain watcher finds the transaction: it failed on chain, or its validation starts."""
    if order.outcome == "transaction_failed":
        # Reverted or dropped: no funds reached the deposit address, so there is nothing to refund.
        store.set_status(order, "transaction_failed")
        return
    store.set_status(order, "validating_transaction")
    store.schedule(order, "deposit", DEPOSIT_CONFIRM_DELAY, lambda o: _offramp_checked(store, o))


def _offramp_checked(store: OrderStore, order: Order) -> None:
    if order.outcome in ("deposit_invalid", "underpayment"):
        store.set_status(order, "transaction_invalid")
        if order.outcome == "underpayment":
            # Part of the amount did arrive: it goes back to the sender.
            store.schedule(order, "refund", RETRY_DELAY, lambda o: _offramp_refunding(store, o))
        return
    store.set_status(order, "transaction_confirmed")
    store.schedule(order, "payout", PAYOUT_START_DELAY, lambda o: _offramp_payout_pending(store, o))


def _offramp_payout_pending(store: OrderStore, order: Order) -> None:
    store.set_status(order, "offramp_pending")
    store.schedule(order, "payout", PAYOUT_DELAY, lambda o: _offramp_payout_done(store, o))


def _offramp_payout_done(store: OrderStore, order: Order) -> None:
    if order.outcome not in PAYOUT_FAILS:
        store.set_status(order, "offramp_success")
        return
    store.set_status(order, "offramp_failed")
    if order.outcome in REFUNDS_AFTER_PAYOUT:
        store.schedule(order, "refund", RETRY_DELAY, lambda o: _offramp_refunding(store, o))
    elif not any(entry["status"] == "offramp_retry" for entry in order.history):
        store.schedule(order, "payout", RETRY_DELAY, lambda o: _offramp_retry(store, o))


def _offramp_retry(store: OrderStore, order: Order) -> None:
    store.set_status(order, "offramp_retry")
    store.schedule(order, "payout", PAYOUT_DELAY, lambda o: _offramp_payout_done(store, o))


def _offramp_refunding(store: OrderStore, order: Order) -> None:
    store.set_status(order, "refunding")
    store.schedule(order, "refund", PAYOUT_DELAY, lambda o: _offramp_refund_done(store, o))


def _offramp_refund_done(store: OrderStore, order: Order) -> None:
    # A forced refund failure stays put: only someone retrying it (the console) moves it on.
    if order.outcome == "refund_failed":
        store.set_status(order, "refund_failed")
    else:
        _offramp_refunded(store, order)


def _offramp_refunded(store: OrderStore, order: Order) -> None:
    """The crypto is back in the sender's wallet, by a transaction of its own: its hash is in
    the webhook's ``refund`` leg (spec 6.2), not the order's ``hash`` (the user's deposit)."""
    order.data["refundHash"] = fake_transaction_hash(order.data["network"])
    store.set_status(order, "refunded")


def offramp_retry_refund(store: OrderStore, order: Order) -> None:
    """Try a failed refund again; it goes through (upstream-notes 4: refund_failed -> successful).

    The status stays ``refund_failed`` until the retry lands, as the upstream has no status for a
    refund being retried.
    """
    if order.status != "refund_failed":
        raise InvalidRequest(f"only a failed refund can be retried (status {order.status})")
    if "refund" in order.timers:
        raise InvalidRequest("the refund is already being retried")
    store.schedule(order, "refund", PAYOUT_DELAY, lambda o: _offramp_refunded(store, o))
