"""The on-ramp: the user pays local money and receives crypto in their wallet (spec 4.1).

Steps: the amount (corridor and amount, priced by a live quote), the receiving wallet and email,
the offer's required fields (when it has any), review; then pay (the order's transfer
instructions) and status.
"""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from decimal import Decimal
from typing import Any

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l

from ..addresses import AddressError, network_has_memo, validate_address, validate_memo
from ..capabilities import order_view_token
from ..errors import OrderNotAvailable
from ..journey import quotes
from ..journey.flow import Breakdown, Flow, PriceRow, Receipt
from ..names import network_name
from ..public_address import external_url
from ..reference import OnrampCatalog
from ..sessions import CheckoutSession
from ..upstream.client import UpstreamClient
from ..upstream.types import OnrampOrder
from .common import LOOKUP_PAGE, created_during, number, same_address, same_amount, user_ip

RATE_PLACES = Decimal("0.0001")


class OnrampFlow(Flow):
    name = "onramp"

    # Given when the app builds the flow (Flow.__init__).
    upstream: UpstreamClient
    _catalog: OnrampCatalog

    quote_keys = ("network", "asset", "currency", "amount", "countryIsoCode", "paymentChannel",
                  "carrierCode")
    currencies = ("local", "crypto")
    field_steps = {"address": "wallet", "memo": "wallet", "email": "wallet",
                   "extraFields": "details"}

    status_texts = {
        "deposit_awaiting": _l("Waiting for your payment."),
        "deposit_validating": _l("We are checking your payment."),
        "deposit_successful": _l("Payment received. Sending your crypto…"),
        "payout_pending": _l("Your crypto is on its way."),
        "payout_successful": _l("Done! Your crypto has been sent to your wallet."),
        "payout_failed": _l("Sending your crypto failed. We are trying again."),
        "deposit_invalid": _l("Your payment could not be accepted. If money left your account, "
                              "it will be returned."),
        "deposit_expired": _l("This order expired before a payment arrived. If you have already "
                              "paid, keep this page: your crypto will still be sent."),
        "deposit_canceled": _l("This order was cancelled before a payment arrived. If you have "
                               "already paid, keep this page: your crypto will still be sent."),
        "refund_pending": _l("Your payment is being refunded."),
        "refund_successful": _l("Your payment has been refunded."),
        "refund_failed": _l("Your refund has not gone through yet. We are trying again."),
    }

    # "Waiting for your payment" would answer a user who just said "I have paid" as if they had
    # not: a transfer takes a while to reach the payment partner.
    said_paid_text = _l("Thank you. We are waiting for your payment to reach us: this can take "
                        "a few minutes.")

    def status_text(self, status: str | None, session: CheckoutSession | None = None) -> str:
        if status == "deposit_awaiting" and session is not None and session.said_paid:
            return str(self.said_paid_text)
        return super().status_text(status, session)

    # What a receipt says instead of the price, for an order that did not deliver (by the
    # upstream's status: the receipt has the order, not the session).
    receipt_outcomes = {
        "failed": _l("Sending your crypto failed: none was sent to your wallet."),
        "swap_seller_rejected": _l("Your payment was not accepted: no crypto was sent."),
        "swap_expired": _l("No payment arrived before this order expired: no crypto was sent."),
        "swap_buyer_rejected": _l("This order was cancelled: nothing was charged and no crypto "
                                  "was sent."),
    }

    completed_statuses = frozenset({"payout_successful"})
    # The payment was refused, or is going back (or stuck going back): the crypto will not come.
    failed_statuses = frozenset(
        {"deposit_invalid", "refund_pending", "refund_successful", "refund_failed"})
    settled_statuses = frozenset({"payout_successful", "refund_successful", "deposit_invalid"})

    def catalog(self) -> OnrampCatalog:
        return self._catalog

    def request_quote(self, params: Mapping[str, Any]) -> dict[str, Any]:
        quote = self.upstream.onramp_best_offer(
            network=params["network"], asset=params["asset"], currency=params["currency"],
            amount=Decimal(str(params["amount"])), country_iso_code=params["countryIsoCode"],
            payment_channel=params["paymentChannel"],
            carrier_code=params.get("carrierCode") or None)
        return quotes.make_record(quote.quote_id, quote.offer.raw, quote.cashout.raw, params,
                                  self.quote_keys, usd=self.usd_amount(quote.cashout.raw))

    def breakdown(self, record: Mapping[str, Any]) -> Breakdown:
        cashout, offer = record.get("cashout") or {}, record.get("offer") or {}
        currency = offer.get("currencyIsoCode") or ""
        asset = (record.get("params") or {}).get("asset") or ""
        pay, get = number(cashout, "localCurrencyAmount"), number(cashout, "withdrawAmountCrypto")
        candidates = [
            (_l("Exchange rate"), number(offer, "cryptoExchangeRate"), "rate", False, None),
            (_l("Service fee"), number(cashout, "feeAmountLocalCurrencyService"), "money",
             False, None),
            (_l("Payment partner fee"), number(cashout, "feeAmountLocalCurrencyPartner"),
             "money", False, None),
            (_l("Network fee (gas)"), number(cashout, "gasAmountLocalCurrency"), "money", False,
             None),
            (_l("You pay"), pay, "money", True, "pay-amount"),
        ]
        rows = [PriceRow(label, amount, kind, currency, total, testid,
                         per=asset if kind == "rate" else None)
                for label, amount, kind, total, testid in candidates if amount is not None]
        if get is not None:
            rows.append(PriceRow(_l("You get"), get, "crypto", asset, True, "receive-amount"))
        return Breakdown(tuple(rows), (pay, get), currency, asset)

    def usd_amount(self, cashout: Mapping[str, Any]) -> Decimal | None:
        # What the user pays, in dollars, before fees: the order's size as the rules measure it.
        return number(cashout, "totalAmountUsd")

    # -- creating the order

    def create_payload(self, session: CheckoutSession) -> dict[str, Any]:
        record = session.quote or {}
        params = record.get("params") or {}
        return {
            "quoteId": record.get("id"), "network": params.get("network"),
            "asset": params.get("asset"), "amount": params.get("amount"),
            "currency": params.get("currency"), "countryIsoCode": params.get("countryIsoCode"),
            "paymentChannel": params.get("paymentChannel"),
            "carrierCode": params.get("carrierCode"),
            "address": session.value("address"), "memo": session.value("memo") or None,
            "email": session.value("email"), "extraFields": session.fields,
        }

    def wallet_problem(self, session: CheckoutSession) -> tuple[str, str] | None:
        network = self.create_payload(session)["network"] or session.value("network") or ""
        name = network_name(network)
        checked_for = session.wallet_network
        if checked_for is None:
            return "address", _("Check the wallet address for %(network)s.", network=name)
        if checked_for != network:
            return "address", _("Your network changed. Enter the wallet address for "
                                "%(network)s.", network=name)
        address = session.value("address")
        try:
            if not address or validate_address(network, str(address)) != address:
                return "address", _("Check the wallet address for %(network)s.", network=name)
        except AddressError as exc:
            return "address", str(exc)
        memo = session.value("memo") or None
        try:
            if memo is not None and validate_memo(network, str(memo)) != memo:
                return "memo", _("Check the memo.")
        except AddressError as exc:
            # A memo set by the shop for a network without memos must not be dropped silently:
            # the shop may rely on it to credit the user.
            return ("memo" if network_has_memo(network) else "address"), str(exc)
        return None

    def attempt_facts(self, session: CheckoutSession,
                      payload: Mapping[str, Any]) -> dict[str, Any]:
        cashout = (session.quote or {}).get("cashout") or {}
        return {"sent": {key: payload[key] for key in
                         ("network", "asset", "address", "email", "amount", "currency")},
                # The same amount as the quote worked it out, in case the order repeats that.
                "quoted": cashout.get("withdrawAmountCrypto" if payload["currency"] == "crypto"
                                      else "localCurrencyAmount")}

    def send_create(self, session: CheckoutSession, payload: Mapping[str, Any], *,
                    reference: str) -> OnrampOrder:
        return self.upstream.onramp_create_order(
            quote_id=payload["quoteId"], network=payload["network"], asset=payload["asset"],
            amount=Decimal(str(payload["amount"])), currency=payload["currency"],
            email=payload["email"], user_ip=user_ip(), address=payload["address"],
            memo=payload["memo"], order_params=reference,
            # The provider's page sends the user back here, and the upstream keeps the address
            # with the order: an order view token, never the session id (checkout.capabilities).
            # On the public address (checkout.public_address); None without a trusted one.
            redirect_url=external_url("checkout.order_view", token=order_view_token(session.id)),
            extra_fields=payload["extraFields"] or None,
        )

    def find_orders(self, session: CheckoutSession,
                    pending: Mapping[str, Any]) -> Sequence[OnrampOrder]:
        reference = pending.get("reference")
        client = self.upstream
        found: dict[str, OnrampOrder] = {}
        try:
            order = client.onramp_order(order_params=reference)
            found[order.id] = order
        except OrderNotAvailable:
            pass
        if session.claims.get("orderParams"):
            # The merchant's reference may name many orders: look through the list too.
            sent = pending.get("sent") or {}
            page = client.onramp_orders(limit=LOOKUP_PAGE, network=sent.get("network"),
                                        address=sent.get("address"), user_email=sent.get("email"))
            for order in page:
                if order.order_params in (None, reference):
                    found.setdefault(order.id, order)
        return list(found.values())

    def matches(self, order: OnrampOrder, pending: Mapping[str, Any]) -> bool:
        sent = pending.get("sent") or {}
        if order.network != sent.get("network") or order.asset != sent.get("asset"):
            return False
        if not same_address(order.address, sent.get("address")):
            return False
        if order.email and str(order.email).lower() != str(sent.get("email") or "").lower():
            return False
        amount = order.amount_crypto if sent.get("currency") == "crypto" else \
            order.local_currency_amount
        if not (same_amount(amount, sent.get("amount"))
                or (pending.get("quoted") is not None
                    and same_amount(amount, pending["quoted"]))):
            return False
        return created_during(order.created_at or order.date, dict(pending))

    def order_facts(self, order: OnrampOrder) -> dict[str, Any]:
        instructions = order.transfer_instructions
        return {"id": order.id, "resume_url": order.resume_url,
                "transfer_type": instructions.type if instructions else None}

    def fetch_order(self, order_id: str) -> OnrampOrder:
        return self.upstream.onramp_order(order_id=order_id)

    def parse_order(self, data: Mapping[str, Any]) -> OnrampOrder:
        return OnrampOrder.from_json(data)

    def receipt(self, order: OnrampOrder, summary: Mapping[str, Any] | None = None) -> Receipt:
        paid, fees = order.local_currency_amount, order.fee_amount_local_currency
        if fees is None and order.fee_amount_local_currency_service is not None:
            # Every field of an order is optional (spec 2.4): the total is its two parts.
            fees = order.fee_amount_local_currency_service + (
                order.fee_amount_local_currency_partner or 0)
        rate = None
        if paid is not None and order.amount_crypto:
            # An on-ramp order carries no rate (spec 2.4): the one its amounts imply, before fees
            # and gas, which is what the review's "Exchange rate" row showed.
            rate = ((paid - (fees or 0) - (order.gas_amount_local_currency or 0))
                    / order.amount_crypto).quantize(RATE_PLACES)
        record = {"cashout": {**order.raw, "withdrawAmountCrypto": order.raw.get("amountCrypto")},
                  "offer": {"currencyIsoCode": order.currency_iso_code,
                            "cryptoExchangeRate": rate},
                  "params": {"asset": order.asset}}
        receipt = Receipt(order.id, order.status, order.created_at or order.date,
                          order.country_iso_code, order.network, self.breakdown(record),
                          wallets=Receipt.wallet(_l("Your wallet"), order.network,
                                                 order.address),
                          memo=order.memo, tx_hash=order.hash)
        outcome = self.receipt_outcomes.get(order.status or "")
        # The on-ramp's orders have no refund statuses (spec 3.1): a payment sent back is the
        # payment partner's, told by the status text.
        return receipt if outcome is None else receipt.ended(outcome)
