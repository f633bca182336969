"""The off-ramp: the user sends crypto and receives local money (spec 4.3, 4.4; notes 5).

Orders are created with the type-based variant (4.4 ``create-order``), the only one the spec gives
a create to; orders of both variants are read by id (``/api/offramp/order/{id}``).

Steps: the amount (country, payout type, carrier, network, asset, amount priced live), the payout
details (the offer's required fields), the payee check (``validate-fields``: the name the account
is in, confirmed by the user), the sending wallet (where a refund goes), review; then the deposit
(where to send the crypto, and its transaction hash) and status. A merchant-funded payout
(``paymentType`` ``VIRTUAL_WALLET``, from a signed token only) has no sending wallet and no
deposit: the order is paid from the merchant's balance.
"""
from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from ..addresses import AddressError, validate_address
from ..forms import clean_required_fields
from ..journey import quotes
from ..journey.flow import Breakdown, Flow, PriceRow, Receipt, Refund
from ..names import network_name, payout_name
from ..reference import OfframpCatalog
from ..sessions import CheckoutSession
from ..upstream.client import UpstreamClient
from ..upstream.types import OfframpOrder, SuppliedField
from ..upstream_text import field_label
from .common import (
    LOOKUP_PAGE,
    created_during,
    has_fields,
    masked,
    number,
    same_address,
    same_amount,
    user_ip,
)

CRYPTO_WALLET, VIRTUAL_WALLET = "CRYPTO_WALLET", "VIRTUAL_WALLET"


def payment_type(session: CheckoutSession) -> str:
    """How the order is paid: only a signed token can make it the merchant's balance."""
    return VIRTUAL_WALLET if session.claims.get("paymentType") == VIRTUAL_WALLET \
        else CRYPTO_WALLET


def user_pays(session: CheckoutSession) -> bool:
    return payment_type(session) == CRYPTO_WALLET


def fields_digest(session: CheckoutSession) -> str:
    """Names the payout details the payee check was made for: the corridor and the fields (a
    change of either makes it void; a new price for the same ones does not)."""
    corridor = {name: session.value(name) for name in ("countryIsoCode", "paymentChannel")}
    canonical = json.dumps({"corridor": corridor, "fields": session.fields},
                           sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def payout_details_problems(session: CheckoutSession) -> dict[str, str]:
    """The saved payout details that the offer's own rules, or the country's account format,
    refuse: a message per field (none: the details may be sent to the partner).

    The payout step saves only details that pass; these are details saved before a rule held, or
    checked against another offer. Nothing the rules refuse is sent to ``validate-fields`` or
    ``create-order``.
    """
    result = clean_required_fields(quotes.required_fields(session), session.fields,
                                   country=session.value("countryIsoCode"))
    return dict(result.errors)


def payout_rows(fields: Iterable[tuple[str | None, str | None, str]]) -> list[tuple[Any, str]]:
    """Payout details (field name, the partner's label, the value shown) as rows (label, value):
    each labelled by its field's name in the page's language, else as the partner labels it.
    The one way every page names them: the steps', the status page's and the receipt's."""
    return [(field_label(name, label), value) for name, label, value in fields]


def named_fields(order: OfframpOrder) -> list[tuple[str | None, SuppliedField]]:
    """The order's payout details as supplied (``offerRequiredFields``: label, type and the value
    shown, spec 2.7), each with its field's name where ``requiredFields`` (the same fields, by
    name) tells it: a value shown as given names its field; a choice (an enum, shown by its
    option's label) takes the name left over, in order. None where nothing tells."""
    left = dict(order.required_fields)
    named: list[tuple[str | None, SuppliedField]] = []
    for item in order.offer_required_fields:
        name = None if item.type == "enum" else next(
            (key for key, value in left.items() if str(value) == item.value), None)
        if name is not None:
            del left[name]
        named.append((name, item))
    choices = iter(left)        # the names no value shown as given claimed, in order
    return [(next(choices, None) if item.type == "enum" else name, item) for name, item in named]


def payee_holds(session: CheckoutSession) -> bool:
    """The user confirmed who is paid, for exactly the details a create would send."""
    payee = session.payee or {}
    return bool(payee.get("confirmed")) and payee.get("for") == fields_digest(session)


class OfframpFlow(Flow):
    name = "offramp"

    # Given when the app builds the flow (Flow.__init__).
    upstream: UpstreamClient
    _catalog: OfframpCatalog

    # The carrier is not a best-offer parameter: the offer asks it as a field (carrierId).
    quote_keys = ("network", "asset", "currency", "amount", "countryIsoCode", "paymentChannel")
    currencies = ("local", "usd")
    field_steps = {"address": "wallet", "requiredFields": "payout", "payee": "payee"}

    status_texts = {
        "deposit_awaiting": _l("Waiting for your crypto."),
        "deposit_validating": _l("Your transaction was received. We are checking it on the "
                                 "network."),
        "deposit_successful": _l("Your crypto has arrived. Sending your money…"),
        "payout_pending": _l("Your money is on its way."),
        "payout_successful": _l("Done! Your money has been paid out."),
        "payout_failed": _l("The payout did not go through. We are trying again."),
        "deposit_invalid": _l("Your transaction could not be accepted. If crypto left your "
                              "wallet, it will be sent back to it."),
        "deposit_expired": _l("No transaction hash arrived in time. If you already sent the "
                              "crypto, contact support with this order's reference."),
        "deposit_canceled": _l("This order was cancelled. If you already sent the crypto, "
                               "contact support with this order's reference."),
        "refund_pending": _l("Your crypto is being sent back to your wallet."),
        "refund_successful": _l("Your crypto has been sent back to your wallet."),
        "refund_failed": _l("Sending your crypto back has not gone through yet. We are trying "
                            "again."),
    }
    # A payout the merchant funds: the user sent nothing, the merchant's balance pays.
    merchant_funded_texts = {
        "deposit_awaiting": _l("The shop is funding your payout."),
        "deposit_validating": _l("The shop's funding is being checked."),
        "deposit_successful": _l("Funded by the shop. Sending your money…"),
        "deposit_invalid": _l("The shop's funding did not go through. Contact the shop's support "
                              "with this order's reference."),
        "deposit_expired": _l("The shop did not fund this payout in time. Contact the shop's "
                              "support with this order's reference."),
        "deposit_canceled": _l("This payout was cancelled."),
        "refund_pending": _l("The payout did not go through: the shop's funds are going back."),
        "refund_successful": _l("The payout did not go through: the shop has its funds back."),
        "refund_failed": _l("The payout did not go through. We are trying again."),
    }

    # What a receipt says instead of the price, for an order that did not pay out (by the
    # upstream's status: the receipt has the order, not the session, and a transaction that
    # failed on chain is not one refused).
    receipt_outcomes = {
        "refunded": _l("Refunded: nothing was paid out, and your crypto was sent back to your "
                       "wallet."),
        "refunding": _l("Nothing was paid out: your crypto is being sent back to your wallet."),
        "refund_failed": _l("Nothing was paid out, and your crypto has not been sent back yet."),
        "offramp_failed": _l("The payout failed: nothing has been paid out so far."),
        "transaction_failed": _l("Your transaction failed on the network: no crypto arrived and "
                                 "nothing was paid out."),
        "transaction_invalid": _l("Your transaction was not accepted: nothing was paid out."),
        "expired": _l("This order expired before your crypto arrived: nothing was paid out."),
        "cancelled": _l("This order was cancelled before your crypto arrived: nothing was paid "
                        "out."),
    }
    # Paid from the shop's balance: the user sent nothing, and nothing goes back to them.
    merchant_funded_outcomes = {
        **{status: _l("Nothing was paid out.") for status in receipt_outcomes},
        "offramp_failed": receipt_outcomes["offramp_failed"],
    }
    refund_statuses = frozenset({"refunding", "refunded", "refund_failed"})

    def status_text(self, status: str | None, session: CheckoutSession | None = None) -> str:
        if session is not None and not user_pays(session):
            text = self.merchant_funded_texts.get(status or "")
            if text is not None:
                return str(text)
        return super().status_text(status, session)

    completed_statuses = frozenset({"payout_successful"})
    # The money went back or never came: the shop hears "failed" once it is final.
    failed_statuses = frozenset({"deposit_invalid", "refund_successful"})
    settled_statuses = frozenset({"payout_successful", "refund_successful"})

    def catalog(self) -> OfframpCatalog:
        return self._catalog

    def request_quote(self, params: Mapping[str, Any]) -> dict[str, Any]:
        quote = self.upstream.offramp_typed_best_offer(
            amount=Decimal(str(params["amount"])), currency=params["currency"],
            country=params["countryIsoCode"], type=params["paymentChannel"],
            network=params["network"], asset=params["asset"])
        return quotes.make_record(quote.offer_id, quote.offer.raw, quote.cashout.raw, params,
                                  self.quote_keys, usd=self.usd_amount(quote.cashout.raw))

    def breakdown(self, record: Mapping[str, Any]) -> Breakdown:
        cashout, offer = record.get("cashout") or {}, record.get("offer") or {}
        currency = offer.get("currencyIsoCode") or ""
        asset = (record.get("params") or {}).get("asset") or ""
        send, receive = number(cashout, "cryptoAmount"), number(cashout, "localCurrencyAmount")
        rows = []
        if send is not None:
            rows.append(PriceRow(_l("You send"), send, "crypto", asset, True, "send-amount"))
        rate = number(offer, "exchangeRate")
        if rate is not None:
            rows.append(PriceRow(_l("Exchange rate"), rate, "rate", currency, per="USD"))
        for label, key in ((_l("Service fee"), "feeAmountLocalCurrencyService"),
                           (_l("Payment partner fee"), "feeAmountLocalCurrencyPartner")):
            amount = number(cashout, key)
            if amount is not None:
                rows.append(PriceRow(label, amount, "money", currency))
        if receive is not None:
            rows.append(PriceRow(_l("You receive"), receive, "money", currency, True,
                                 "receive-amount"))
        return Breakdown(tuple(rows), (send, receive), currency, asset)

    def shown_breakdown(self, session: CheckoutSession, record: Mapping[str, Any]) -> Breakdown:
        breakdown = self.breakdown(record)
        # A merchant-funded payout: the user sends nothing, only what arrives concerns them.
        return breakdown if user_pays(session) else breakdown.without("send-amount")

    def usd_amount(self, cashout: Mapping[str, Any]) -> Decimal | None:
        return number(cashout, "usdAmount")

    # -- creating the order

    def create_payload(self, session: CheckoutSession) -> dict[str, Any]:
        record = session.quote or {}
        params = record.get("params") or {}
        return {
            "offerId": record.get("id"), "paymentType": payment_type(session),
            "network": params.get("network"), "asset": params.get("asset"),
            "address": session.value("address"), "currency": params.get("currency"),
            "amount": params.get("amount"), "requiredFields": session.fields,
            # The payee the user confirmed is part of what they reviewed.
            "payee": fields_digest(session) if payee_holds(session) else None,
        }

    def wallet_problem(self, session: CheckoutSession) -> tuple[str, str] | None:
        if has_fields(session):
            problems = payout_details_problems(session)
            if problems:
                return next(iter(problems.items()))     # the first, shown at its field
            if not payee_holds(session):
                return "payee", _("Check who the money goes to before you confirm.")
        network = (session.quote or {}).get("params", {}).get("network") \
            or session.value("network") or ""
        address = session.value("address")
        name = network_name(network)
        if user_pays(session) and session.wallet_network != network:
            return "address", _("Enter the wallet you send from, on %(network)s.", network=name)
        try:
            if not address or validate_address(network, str(address)) != address:
                return "address", _("Check the wallet address for %(network)s.", network=name)
        except AddressError as exc:
            return "address", str(exc)
        return None

    def attempt_facts(self, session: CheckoutSession,
                      payload: Mapping[str, Any]) -> dict[str, Any]:
        cashout = (session.quote or {}).get("cashout") or {}
        return {"sent": {key: payload[key] for key in
                         ("offerId", "network", "asset", "address", "amount", "currency",
                          "paymentType")},
                "quoted": cashout.get("usdAmount" if payload["currency"] == "usd"
                                      else "localCurrencyAmount")}

    def send_create(self, session: CheckoutSession, payload: Mapping[str, Any], *,
                    reference: str) -> OfframpOrder:
        return self.upstream.offramp_create_order(
            offer_id=payload["offerId"], payment_type=payload["paymentType"],
            network=payload["network"], asset=payload["asset"], address=payload["address"],
            currency=payload["currency"], amount=Decimal(str(payload["amount"])), ip=user_ip(),
            order_params=reference, required_fields=payload["requiredFields"] or None)

    def find_orders(self, session: CheckoutSession,
                    pending: Mapping[str, Any]) -> Sequence[OfframpOrder]:
        reference = pending.get("reference")
        sent = pending.get("sent") or {}
        page = self.upstream.offramp_orders(
            limit=LOOKUP_PAGE, order_params=reference, network=sent.get("network"),
            asset=sent.get("asset"))
        return [order for order in page if order.order_params == reference]

    def matches(self, order: OfframpOrder, pending: Mapping[str, Any]) -> bool:
        sent = pending.get("sent") or {}
        # An offer is used up by the one order made from it: the surest sign.
        if order.offer_id is not None and order.offer_id != sent.get("offerId"):
            return False
        if order.network != sent.get("network") or order.asset != sent.get("asset"):
            return False
        if not same_address(order.from_address, sent.get("address")):
            return False
        if order.payment_type and order.payment_type != sent.get("paymentType"):
            return False
        cashout = order.cashout
        if cashout is None:
            return False
        amount = cashout.usd_amount if sent.get("currency") == "usd" \
            else cashout.local_currency_amount
        if not (same_amount(amount, sent.get("amount"))
                or (pending.get("quoted") is not None
                    and same_amount(amount, pending["quoted"]))):
            return False
        return created_during(order.created_at, dict(pending))

    def may_retry(self, session: CheckoutSession) -> bool:
        # A second merchant-funded payout would be paid twice out of the merchant's balance: an
        # unanswered create of one is only ever looked up, and support settles it.
        return user_pays(session)

    def order_facts(self, order: OfframpOrder) -> dict[str, Any]:
        return {"id": order.id, "payment_type": order.payment_type}

    def fetch_order(self, order_id: str) -> OfframpOrder:
        return self.upstream.offramp_order(order_id)

    def confirm_deposit(self, order_id: str, tx_hash: str) -> None:
        """Hand the user's transaction hash to the upstream (checkout.journey.hash_confirmation)."""
        self.upstream.offramp_confirm_order(order_id=order_id, hash=tx_hash)

    def parse_order(self, data: Mapping[str, Any]) -> OfframpOrder:
        return OfframpOrder.from_json(data)

    def receipt(self, order: OfframpOrder, summary: Mapping[str, Any] | None = None) -> Receipt:
        record = {"cashout": order.cashout.raw if order.cashout else {},
                  "offer": {"currencyIsoCode": order.currency_iso_code,
                            "exchangeRate": order.exchange_rate},
                  "params": {"asset": order.asset}}
        price = self.breakdown(record)
        merchant_funded = order.payment_type == VIRTUAL_WALLET
        if merchant_funded:
            # Paid from the merchant's balance: the user sent nothing, as the review said.
            price = price.without("send-amount")
        wallets = () if merchant_funded else (
            Receipt.wallet(_l("Your wallet"), order.network, order.from_address)
            + Receipt.wallet(_l("Sent to"), order.network, order.to_address))
        details = tuple(payout_rows(
            (name, item.label, item.value if item.type == "enum" else masked(item.value))
            for name, item in named_fields(order) if item.value))
        channel = order.payment_channel or order.raw.get("offrampType")
        receipt = Receipt(order.id, order.status, order.created_at, order.country_iso_code,
                          order.network, price, wallets=wallets, tx_hash=order.hash,
                          payout=payout_name(channel) if isinstance(channel, str) else None,
                          payout_details=details, merchant_funded=merchant_funded)
        status = order.status or ""
        outcome = (self.merchant_funded_outcomes if merchant_funded
                   else self.receipt_outcomes).get(status)
        if outcome is None:
            return receipt
        refund = None
        if status in self.refund_statuses and not merchant_funded:
            # Back to the wallet the crypto came from, unless the refund leg says otherwise.
            refund = Refund.of(summary, order.network, done=status == "refunded",
                               to=order.from_address)
        return receipt.ended(outcome, refund)

    def receipt_status(self, receipt: Receipt, status: str | None) -> str:
        if receipt.merchant_funded:
            text = self.merchant_funded_texts.get(status or "")
            if text is not None:
                return str(text)
        return super().receipt_status(receipt, status)
