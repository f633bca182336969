"""What an order's receipt says, every word of it read from the upstream's order.

The status page shows the price the user accepted (the quote); a receipt shows what the order
itself charged: its amounts, its rate and each of its fees, as the upstream recorded them. Each
flow reads its own kind of order into a :class:`Receipt` (``Flow.receipt``); the page
(:mod:`checkout.views.receipts`) lays it out.

A receipt travels: it is printed, saved and forwarded. The payout details on it are masked to
their last four characters, enough to recognise one's own account and no more.
"""
from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from .addresses import checksummed
from .journey.flow import Breakdown

__all__ = ["Receipt", "masked"]

MASK = "•"
SHOWN = 4


def masked(value: str) -> str:
    """``value`` with all but its last four characters hidden (all of it when that short)."""
    value = value.strip()
    if len(value) <= SHOWN:
        return MASK * SHOWN
    return MASK * SHOWN + " " + value[-SHOWN:]


@dataclass(frozen=True)
class Receipt:
    """One order, as its receipt shows it.

    ``price``: what was paid and what was received, the rate and every fee, in the rows (and
    with the labels) of the review the user confirmed. ``wallets``: (label, address), EIP-55
    where the network has it. ``payout_details``: (label, value), masked unless the value is
    a choice from the partner's own list (a bank's name). ``country`` gives the clock the time
    is written in.
    """

    order_id: str
    status: str | None
    made_at: datetime | None
    country: str | None
    network: str | None
    price: Breakdown
    wallets: tuple[tuple[Any, str], ...] = ()
    memo: str | None = None
    tx_hash: str | None = None
    payout: str | None = None
    payout_details: tuple[tuple[str, str], ...] = ()

    @staticmethod
    def wallet(label: Any, network: str | None, address: str | None) -> tuple[tuple[Any, str], ...]:
        """One (label, address) for :attr:`wallets`, or none when the order names no address."""
        if not address:
            return ()
        return ((label, checksummed(network or "", address)),)
