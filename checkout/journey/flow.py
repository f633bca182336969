"""What a flow is to the journey: the small interface of what the on-ramp and the off-ramp do
differently (its steps, what a quote is asked with, how to ask it and show its price, what an order
is created with and how that is sent, how to find an order whose create had no answer, and how to
read an order), and the price rows it shows.

It lives with the journey, which drives it: the steps, quote records, creating once and the
pages' frame are written against it, and each flow (:mod:`checkout.flows`) implements it.
"""
from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from flask_babel import lazy_gettext as _l

from ..addresses import checksummed
from ..errors import UpstreamBadResponse
from ..sessions import CheckoutSession
from ..upstream.types import OrderLeg
from .settings import JourneySettings
from .steps import Journey

if TYPE_CHECKING:
    from ..reference import Catalog
    from ..upstream.client import UpstreamClient


class IdentityStanding(Protocol):
    """Where the app's users stand in their verification (checkout.kyc.standing.KycStanding):
    what a flow's identity step asks."""

    def needs_kyc(self, session: CheckoutSession) -> bool: ...


@dataclass(frozen=True)
class PriceRow:
    """One line of a price breakdown; the template formats ``amount`` by ``kind``:
    ``money`` (in ``unit``, a currency), ``crypto`` (in ``unit``, an asset) or ``rate`` (one
    ``per`` is worth ``amount`` of the currency ``unit``)."""

    label: Any
    amount: Decimal
    kind: str
    unit: str
    total: bool = False
    testid: str | None = None
    per: str | None = None


@dataclass(frozen=True)
class Breakdown:
    """The whole price of a quote, as rows, and the amounts whose change the user must see."""

    rows: tuple[PriceRow, ...]
    key_amounts: tuple[Decimal | None, ...]
    currency: str
    asset: str

    def without(self, testid: str) -> Breakdown:
        """The same price without one of its rows (e.g. what the user sends, when they send
        nothing)."""
        return replace(self, rows=tuple(row for row in self.rows if row.testid != testid))

    def changes_since(self, before: Breakdown) -> list[tuple[PriceRow, PriceRow]]:
        """(before, now) for each line of this price whose amount is not what it was."""
        earlier = {(str(row.label), row.kind, row.unit): row for row in before.rows}
        pairs = [(earlier.get((str(row.label), row.kind, row.unit)), row) for row in self.rows]
        return [(old, new) for old, new in pairs if old is not None and old.amount != new.amount]


@dataclass(frozen=True)
class Refund:
    """What goes back to the user of an order that did not deliver, as far as the upstream has
    told: ``amount`` (a row: how much of what), the ``address`` it goes to and the refund's own
    transaction. ``done``: sent back, not still on its way (or stuck)."""

    done: bool
    amount: PriceRow | None = None
    address: str | None = None
    tx_hash: str | None = None

    @staticmethod
    def of(summary: Mapping[str, Any] | None, network: str | None, *, done: bool,
           to: str | None) -> Refund:
        """The refund the ``refund`` leg of a webhook's summary of the order tells of (spec 6.2);
        ``to``: where it goes when no leg says (the wallet the crypto came from)."""
        leg = refund_leg(summary)
        cashout = leg.cashout if leg is not None else None
        meta = leg.transaction.meta if leg is not None and leg.transaction is not None else None
        amount = None
        if leg is not None and leg.currency_code and cashout is not None \
                and cashout.amount_after_fees is not None:
            amount = PriceRow(_l("Refund"), cashout.amount_after_fees,
                              "crypto" if leg.currency_type == "crypto" else "money",
                              leg.currency_code, testid="refund-amount")
        address = (meta.to_address if meta is not None else None) or to
        return Refund(done, amount, checksummed(network or "", address) if address else None,
                      meta.transaction_hash if meta is not None else None)


def refund_leg(summary: Mapping[str, Any] | None) -> OrderLeg | None:
    """The ``refund`` leg of a webhook's summary of an order, when it has one that reads."""
    leg = (summary or {}).get("refund")
    if not isinstance(leg, Mapping):
        return None
    try:
        return OrderLeg.from_json(leg)
    except UpstreamBadResponse:
        return None         # a summary is kept as it came: a leg that does not read tells nothing


@dataclass(frozen=True)
class Receipt:
    """One order as its receipt shows it (checkout.views.receipts), every word of it read from
    the upstream's order by its flow (:meth:`Flow.receipt`), never from the quote.

    ``price``: what was paid and what was received, the rate and every fee, in the rows (and
    with the labels) of the review the user confirmed. ``wallets``: (label, address), EIP-55
    where the network has it. ``payout_details``: (label, value), labelled as every page labels
    them (``checkout.flows.offramp.payout_rows``), masked unless the value is a choice from the
    partner's own list (a bank's name). ``country`` gives the clock the time is
    written in. ``merchant_funded``: an off-ramp paid out of the merchant's balance, whose
    statuses read differently. ``outcome``, ``refund``: see :meth:`ended`.
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
    payout_details: tuple[tuple[Any, str], ...] = ()
    merchant_funded: bool = False
    outcome: Any = None
    refund: Refund | None = None

    def ended(self, outcome: Any, refund: Refund | None = None) -> Receipt:
        """This receipt, for an order that ended (or stands) without what it was for: ``outcome``
        says what happened instead of the price and the payout it did not make (no "You
        receive", no fees as if charged); ``refund``: what goes back. The deposit's
        transaction stays with the deposit's address, unless it is the refund's own."""
        tx_hash = None if refund is not None and refund.tx_hash == self.tx_hash else self.tx_hash
        return replace(self, price=replace(self.price, rows=()), payout=None, payout_details=(),
                       tx_hash=tx_hash, outcome=outcome, refund=refund)

    @staticmethod
    def wallet(label: Any, network: str | None, address: str | None) -> tuple[tuple[Any, str], ...]:
        """One (label, address) for :attr:`wallets`, or none when the order names no address."""
        if not address:
            return ()
        return ((label, checksummed(network or "", address)),)


class Flow(ABC):
    """What one flow does differently (see the module docstring)."""

    name: ClassVar[str]
    journey: Journey                          # its steps, built with the flow
    quote_keys: ClassVar[tuple[str, ...]]     # the session answers a quote is asked with
    currencies: ClassVar[tuple[str, ...]]     # what a typed amount may be in
    # The fields of the create payload the upstream may name in a refusal, and the step where the
    # user gives each (so that its message is shown at that field).
    field_steps: ClassVar[Mapping[str, str]] = {}

    def __init__(self, upstream: UpstreamClient, catalog: Catalog, journey: Journey,
                 settings: JourneySettings) -> None:
        # The app's upstream client, this flow's reference data, its steps (each with its page:
        # declared by the flow's view module, its identity step asking the app's KYC standing)
        # and what the journey is told of the app's configuration: a flow is built per app
        # (checkout.composition) and holds nothing else.
        self.upstream = upstream
        self._catalog = catalog
        self.journey = journey
        self.settings = settings

    @abstractmethod
    def catalog(self) -> Any:
        """The flow's reference data (countries, channels, carriers, assets, limits)."""

    @abstractmethod
    def request_quote(self, params: Mapping[str, Any]) -> dict[str, Any]:
        """One upstream call: the quote record for ``params`` (see checkout.journey.quotes)."""

    @abstractmethod
    def breakdown(self, record: Mapping[str, Any]) -> Breakdown:
        """The price of a quote record, as the pages show it."""

    @abstractmethod
    def usd_amount(self, cashout: Mapping[str, Any]) -> Decimal | None:
        """A quote's amount in US dollars, from its cashout: the unit of the country's KYC rules
        (spec 4.5). Kept in the quote record (``quotes.usd_amount``)."""

    def shown_breakdown(self, session: CheckoutSession, record: Mapping[str, Any]) -> Breakdown:
        """The price as this session's user sees it (some rows may not concern them)."""
        return self.breakdown(record)

    # -- creating the order

    @abstractmethod
    def create_payload(self, session: CheckoutSession) -> dict[str, Any]:
        """Exactly what a create sends for the session (the review's digest covers it)."""

    def wallet_problem(self, session: CheckoutSession) -> tuple[str, str] | None:
        """(field, message) when the wallet may not be sent for the network; None when it may."""
        return None

    @abstractmethod
    def attempt_facts(self, session: CheckoutSession,
                      payload: Mapping[str, Any]) -> dict[str, Any]:
        """What a pending attempt remembers to recognise its order later (``sent``, ...)."""

    @abstractmethod
    def send_create(self, session: CheckoutSession, payload: Mapping[str, Any], *,
                    reference: str) -> Any:
        """The create call itself (never retried); returns the upstream's order."""

    @abstractmethod
    def find_orders(self, session: CheckoutSession, pending: Mapping[str, Any]) -> Sequence[Any]:
        """Orders that may be the pending attempt's (by its reference): read, never created."""

    @abstractmethod
    def matches(self, order: Any, pending: Mapping[str, Any]) -> bool:
        """Whether ``order`` is the one the pending attempt sent (every field agrees)."""

    @abstractmethod
    def order_facts(self, order: Any) -> dict[str, Any]:
        """What the session keeps of its order when it is attached."""

    def may_retry(self, session: CheckoutSession) -> bool:
        """Whether, once the grace period is over and no order was found, the user may create
        again (a duplicate that nobody pays is harmless; one paid by the merchant is not)."""
        return True

    def field_named_by(self, message: str | None) -> str | None:
        """The payload field an upstream refusal names first (``"email must be ..."``)."""
        if not message:
            return None
        first = message.split(" ", 1)[0].strip(":,.")
        return first if first in self.field_steps else None

    # -- the order's status, in the webhook status set (upstream-notes 4)

    status_texts: ClassVar[Mapping[str, Any]] = {}
    # Which statuses end an order for the parent page (exactly one terminal event is sent), and
    # after which nothing more will happen (the page stops asking): each flow says. Not final
    # upstream, an order that expired or was cancelled unpaid ends neither way: a late payment is
    # still paid out.
    completed_statuses: ClassVar[frozenset[str]]
    failed_statuses: ClassVar[frozenset[str]]
    settled_statuses: ClassVar[frozenset[str]]

    @classmethod
    def terminal_event(cls, status: str | None) -> str | None:
        """``completed``, ``failed`` or None: how ``status`` ends the order for the shop."""
        if status in cls.completed_statuses:
            return "completed"
        if status in cls.failed_statuses:
            return "failed"
        return None

    def status_text(self, status: str | None, session: CheckoutSession | None = None) -> str:
        """What ``status`` means to this flow's user (of ``session``), in plain words."""
        text = self.status_texts.get(status or "")
        return str(text) if text is not None else str(_l("Checking your order…"))

    # -- reading the order

    @abstractmethod
    def fetch_order(self, order_id: str) -> Any:
        """The order as the upstream has it now (one call)."""

    @abstractmethod
    def parse_order(self, data: Mapping[str, Any]) -> Any:
        """An order as kept (the upstream's JSON), read as :meth:`fetch_order` returns it."""

    @abstractmethod
    def receipt(self, order: Any, summary: Mapping[str, Any] | None = None) -> Receipt:
        """What the order's receipt shows, all of it from ``order`` (never the quote) and
        ``summary`` (a webhook's ``data.order`` with a refund status, whose ``refund`` leg tells
        what went back: :func:`checkout.webhooks.refunds.refund_summary`)."""

    def receipt_status(self, receipt: Receipt, status: str | None) -> str:
        """What ``status`` (in the webhook set) means on ``receipt``, which has no session."""
        return self.status_text(status)
