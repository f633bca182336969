"""On-ramp ``transferInstructions`` (upstream-notes 3) and the user actions that pay an order.

The instruction type comes from the reference data per (country, channel): ``manual`` (pay by hand to
the details shown), ``redirect`` (a payment page; the sandbox serves one at ``/sandbox/pay/<id>``),
``ussd`` (dial a code), ``stk_push`` (approve a push on the phone) and ``otp_stk_push`` (prove the
phone with a code first: the sandbox's code is :data:`SANDBOX_OTP`).

How a sandbox order gets paid, per type:

- manual, ussd: ``POST /api/onramp/order/confirm`` ("I have sent the money").
- redirect: "Pay" on the payment page (confirm also works, as the real service accepts it).
- stk_push: the push sent at creation is approved :data:`PUSH_APPROVAL_DELAY` sandbox seconds later,
  unless the forced outcome is ``expire`` (the user never approves; retries are then meaningful).
- otp_stk_push: after the right OTP the push is sent and approved the same way.
"""
from __future__ import annotations

import hmac
from dataclasses import dataclass
from datetime import datetime
from decimal import ROUND_CEILING, Decimal
from typing import Any

from . import orders as flow
from .orders import Order, OrderStore, iso
from .validation import InvalidRequest

SANDBOX_OTP = "123456"
OTP_MAX_ATTEMPTS = 3
PUSH_MAX_ATTEMPTS = 3
PUSH_RETRY_AFTER = 30           # sandbox seconds before the user may ask for another push
PUSH_TIMEOUT = 60               # sandbox seconds the phone shows a push before it lapses
PUSH_APPROVAL_DELAY = 15        # sandbox seconds the sandbox "user" takes to approve a push

# The account the sandbox's agent is paid into, per country (fictional, but shaped like the real one).
_RECIPIENT_BANKS = {
    "NG": ("Sandbox Microfinance Bank", "0123456789"),
    "KE": ("Sandbox Bank Kenya", "1100223344"),
    "ZA": ("Sandbox Bank South Africa", "62001122334"),
}
RECIPIENT_ACCOUNT_NAME = "Checkout Sandbox Agent"


@dataclass
class TransferState:
    """What the user has done so far to pay one order."""

    type: str
    reference: str                      # the narration the user must type on a bank transfer
    payment_url: str | None = None
    redirected: bool = False
    otp_verified: bool = False
    otp_attempts_left: int = OTP_MAX_ATTEMPTS
    push_attempts: int = 0
    next_push_at: datetime | None = None


def start(store: OrderStore, order: Order, transfer_type: str, payment_url: str | None) -> None:
    """Attach the instructions to a new order and start what the type starts on its own."""
    order.transfer = TransferState(type=transfer_type, reference=order.id[-8:].upper(),
                                   payment_url=payment_url)
    if transfer_type == "stk_push":
        _send_push(store, order)


def _send_push(store: OrderStore, order: Order) -> None:
    state: TransferState = order.transfer
    state.push_attempts += 1
    state.next_push_at = store.clock.due_at(PUSH_RETRY_AFTER)
    if order.outcome != "expire":
        store.schedule(order, "push", PUSH_APPROVAL_DELAY, lambda o: flow.onramp_buyer_paid(store, o))


def confirm(store: OrderStore, order_id: str) -> Order:
    """``POST /api/onramp/order/confirm``: the user says the money has been sent."""
    with store.lock:
        order = store.get(order_id, "onramp")
        if order.transfer.type == "otp_stk_push" and not order.transfer.otp_verified:
            raise InvalidRequest("The order requires OTP verification first")
        flow.onramp_buyer_paid(store, order)
        return order


def submit_otp(store: OrderStore, order_id: str, otp: str) -> Order:
    """``POST /api/onramp/order/otp``: a wrong code uses an attempt; the last one expires the order."""
    with store.lock:
        order = store.get(order_id, "onramp")
        state: TransferState = order.transfer
        if state.type != "otp_stk_push":
            raise InvalidRequest("The order does not require an OTP")
        if order.status != "swap_initiated":
            raise InvalidRequest(f"The order is {order.status.removeprefix('swap_')}")
        if state.otp_verified:
            raise InvalidRequest("The OTP has already been verified")
        if not hmac.compare_digest(otp.encode(), SANDBOX_OTP.encode()):
            state.otp_attempts_left -= 1
            if state.otp_attempts_left <= 0:
                flow.onramp_expire(store, order)
                raise InvalidRequest("The order is expired: too many wrong OTP attempts")
            raise InvalidRequest(f"The OTP is invalid ({state.otp_attempts_left} attempt(s) left)")
        state.otp_verified = True
        _send_push(store, order)
        return order


def retry_push(store: OrderStore, order_id: str) -> Order:
    """``POST /api/onramp/order/retry``: send the phone push again, within the attempt limits."""
    with store.lock:
        order = store.get(order_id, "onramp")
        state: TransferState = order.transfer
        if state.type not in ("stk_push", "otp_stk_push"):
            raise InvalidRequest("The order has no phone push to retry")
        if order.status != "swap_initiated":
            raise InvalidRequest(f"The push cannot be retried in status {order.status}")
        if state.type == "otp_stk_push" and not state.otp_verified:
            raise InvalidRequest("The order requires OTP verification first")
        if state.push_attempts >= PUSH_MAX_ATTEMPTS:
            raise InvalidRequest(f"No push attempts left (at most {PUSH_MAX_ATTEMPTS})")
        if state.next_push_at is not None and store.clock.now() < state.next_push_at:
            raise InvalidRequest(f"The next push can be sent at {iso(state.next_push_at)}")
        _send_push(store, order)
        return order


def payment_page_opened(store: OrderStore, order_id: str) -> Order:
    with store.lock:
        order = store.get(order_id, "onramp")
        if order.transfer.type != "redirect":
            raise InvalidRequest("The order is not paid on a payment page")
        order.transfer.redirected = True
        return order


class PaymentClosed(InvalidRequest):
    """"Pay" or "Cancel" on a payment page whose order has moved on since the page was shown.

    Carries the order's status and data as they were read under the lock, for the page that says
    so. Uncaught, it is the API's 400 like any refused action."""

    def __init__(self, order: Order) -> None:
        super().__init__(f"the payment of order {order.id} is closed (status {order.status})")
        self.order_status = order.status
        self.data = dict(order.data)
        # Paid on this page already (a second tap, another tab), or late: not a conflict.
        self.paid = "buyerConfirmedAt" in order.data


def payment_page_result(store: OrderStore, order_id: str, paid: bool) -> Order:
    """The user pays or cancels on the payment page; :class:`PaymentClosed` when it is too late
    (the order expired while the page was open, or was paid or cancelled in another tab)."""
    with store.lock:
        order = store.get(order_id, "onramp")
        if order.transfer.type != "redirect":
            raise InvalidRequest("The order is not paid on a payment page")
        if order.status != "swap_initiated":
            raise PaymentClosed(order)
        if paid:
            flow.onramp_buyer_paid(store, order)
        else:
            flow.onramp_buyer_rejects(store, order)
        return order


# -- the JSON shape -------------------------------------------------------------------------------

def _detail(id_: str, label: str, value: Any, description: str | None = None) -> dict[str, Any]:
    detail = {"id": id_, "label": label, "value": str(value)}
    if description:
        detail["description"] = description
    return detail


def _amount_text(order: Order) -> str:
    places = 0 if float(order.data["localCurrencyAmount"]).is_integer() else 2
    return f"{order.data['localCurrencyAmount']:.{places}f}"


def _whole_amount(order: Order) -> int:
    """The order's local amount rounded up to a whole unit (what a USSD code can carry)."""
    return int(Decimal(str(order.data["localCurrencyAmount"])).to_integral_value(ROUND_CEILING))


def instructions(store: OrderStore, order: Order) -> dict[str, Any]:
    """``transferInstructions`` of an on-ramp order, as it stands now."""
    state: TransferState = order.transfer
    currency = order.data["currencyIsoCode"]
    amount = _amount_text(order)
    out: dict[str, Any] = {"type": state.type, "transferDetails": [], "fieldsToConfirmOrder": []}
    if state.type == "manual":
        bank, account = _RECIPIENT_BANKS.get(order.data["countryIsoCode"],
                                             ("Sandbox Bank", "0000111122"))
        out["instructionsText"] = (f"Send exactly {amount} {currency} to the account below, with the "
                                   "narration shown, then confirm that you have paid.")
        out["warningText"] = ("Type the narration exactly: a transfer without it cannot be matched "
                              "to your order.")
        if order.data["paymentChannel"] == "mobile_money":
            out["transferDetails"] = [
                _detail("recipientPhoneNumber", "Wallet number", "2348000000001"),
                _detail("recipientBankAccountName", "Account name", RECIPIENT_ACCOUNT_NAME)]
        else:
            out["transferDetails"] = [
                _detail("recipientBankName", "Bank", bank),
                _detail("recipientBankAccountNumber", "Account number", account),
                _detail("recipientBankAccountName", "Account name", RECIPIENT_ACCOUNT_NAME)]
        out["transferDetails"] += [
            _detail("amountToSend", "Amount", f"{amount} {currency}"),
            _detail("bankTransferNarration", "Narration", state.reference,
                    "Type this in the transfer's description field"),
        ]
    elif state.type == "redirect":
        out["instructionsText"] = "Pay on the payment page; you will come back here afterwards."
        out["paymentUrl"] = state.payment_url
        out["redirectedToPaymentUrl"] = state.redirected
    elif state.type == "ussd":
        out["instructionsText"] = ("Dial the code below on the phone that pays, replace {pin} with "
                                   "your PIN, then confirm that you have paid.")
        # USSD menus take whole currency units (there is no decimal point on a phone's USSD
        # keypad entry), so a fractional amount is rounded up to the next whole unit: rounding down
        # would underpay the order. The code and the amount shown are the same whole number.
        whole = _whole_amount(order)
        out["ussdCode"] = f"*737*000*{whole}*{{pin}}#"
        out["transferDetails"] = [_detail("amountToSend", "Amount", f"{whole} {currency}")]
        if str(whole) != amount:
            out["warningText"] = (f"USSD payments are in whole {currency}: {whole} {currency} "
                                  f"will be debited for this {amount} {currency} order.")
    else:
        push_ready = state.type == "stk_push" or state.otp_verified
        out["instructionsText"] = ("Approve the payment request on your phone."
                                   if push_ready else
                                   "Enter the code sent to your phone by SMS or WhatsApp.")
        out["transferDetails"] = [_detail("amountToSend", "Amount", f"{amount} {currency}")]
        waiting = order.status == "swap_initiated" and push_ready
        out["isIntermediateActionAvailable"] = (
            waiting and state.push_attempts < PUSH_MAX_ATTEMPTS
            and (state.next_push_at is None or store.clock.now() >= state.next_push_at))
        out["intermediateActionMaxAttempts"] = PUSH_MAX_ATTEMPTS
        out["intermediateActionAttempts"] = state.push_attempts
        out["intermediateActionNextAttemptAvailableAt"] = iso(state.next_push_at)
        out["intermediateActionTimeoutMs"] = max(
            1, round(store.clock.sleep_seconds(PUSH_TIMEOUT) * 1000))
        if state.type == "otp_stk_push":
            out["otpVerified"] = state.otp_verified
            out["otpAttemptsLeft"] = state.otp_attempts_left
            if not state.otp_verified:
                out["fieldsToConfirmOrder"] = [{"name": "otpCode", "type": "string",
                                                "label": "Code received by SMS", "required": True,
                                                "regexp": "^[0-9]{6}$"}]
    return out
