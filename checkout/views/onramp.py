"""The on-ramp's own pages: the receiving wallet, and paying the order (its transfer instructions).

The amount, the offer's fields, review and create are the shared journey's (``views.amount``,
``views.fields``, ``views.journey``); this module gives them the on-ramp's words and adds what only
buying has: a wallet that receives, and the order's payment (manual transfer, payment page, USSD,
push to the phone with or without a one-time code).
"""
from __future__ import annotations

import math
from collections.abc import Mapping
from datetime import UTC
from typing import Any, cast

from flask import request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from werkzeug.wrappers import Response

from ..addresses import network_has_memo
from ..errors import OrderExpired, UpstreamRateLimited, UpstreamRejected
from ..flows.common import has_fields
from ..flows.onramp import OnrampFlow
from ..forms import FormResult, clean_wallet, display_value
from ..htmx import htmx_redirect, render
from ..journey import clock, quotes
from ..journey.flow import IdentityStanding
from ..journey.steps import Journey, Step
from ..names import asset_name, channel_name, network_name
from ..ratelimits import limited
from ..sessions import CheckoutSession
from ..state import flow_named, get_state
from ..upstream.types import OnrampOrder, TransferInstructions
from ..urls import safe_external_url
from . import journey, tracking
from . import status as status_views
from .amount import AmountStep, AmountTexts
from .blueprint import bp
from .context import session_route
from .fields import FieldsStep
from .kyc import KycStep
from .wallet import WalletPage

NAME = "onramp"


def flow() -> OnrampFlow:
    """The app's onramp flow."""
    return cast(OnrampFlow, flow_named(NAME))

AMOUNT_TEXTS = AmountTexts(
    heading=_l("Buy crypto"),
    heading_for=None,
    channel_label=_l("How you pay"),
    channel_error=_l("Choose how you pay."),
    channel_name=channel_name,
    amount_labels={"local": _l("You pay (%(unit)s)"), "crypto": _l("You get (%(unit)s)")},
    amount_labels_bare={"local": _l("You pay"), "crypto": _l("You get")},
    currency_names={"local": _l("local money"), "crypto": _l("crypto")},
    currency_error=_l("Choose local money or crypto."),
)


class WalletStep(WalletPage):
    """The receiving wallet, checked for the chosen network before any order exists, and email."""

    flow_name = NAME
    keep_after = ("details",)

    def given(self, session: CheckoutSession) -> dict[str, Any] | None:
        network = session.value("network")
        form = {"address": session.value("address"), "email": session.value("email"),
                "memo": session.value("memo") or ""}
        if not form["address"] or not form["email"]:
            return None
        if not network_has_memo(network):
            form.pop("memo")
        return form

    def clean(self, session: CheckoutSession, form: Mapping[str, Any]) -> FormResult:
        network = str(session.value("network") or "")
        result = clean_wallet(form, session, network=network)
        if session.value("memo") and session.is_locked("memo") and not network_has_memo(network):
            # The shop's memo would be dropped on a network without memos: the shop must fix it.
            result.errors.setdefault("address", _(
                "The shop set a memo, but %(network)s does not use memos. Go back to the shop.",
                network=network_name(network)))
        result.facts["network"] = network
        return result

    def render(self, session: CheckoutSession, form: Mapping[str, Any] | None = None,
               result: FormResult | None = None) -> Response:
        network = session.value("network")
        values = {name: (form or {}).get(name, session.value(name))
                  for name in ("address", "memo", "email")}
        return render("checkout/onramp/wallet.html", "checkout/onramp/_wallet.html",
                      values=values, errors=(result.errors if result else {}),
                      network=network, network_label=network_name(network),
                      asset=asset_name(session.value("asset")),
                      has_memo=network_has_memo(network), step=self.name)


def review_context(session: CheckoutSession) -> dict[str, Any]:
    catalog = flow().catalog()
    country, channel = session.value("countryIsoCode"), session.value("paymentChannel")
    specs = {spec.name: spec for spec in quotes.required_fields(session)}
    return {
        "country": catalog.country(country), "channel": catalog.channel(country, channel),
        "carrier": catalog.carrier(country, channel, session.value("carrierCode")),
        "specs": specs, "channel_name": channel_name, "network_label":
            network_name(session.value("network")),
        "extra": {name: display_value(specs.get(name), value)
                  for name, value in session.fields.items()},
        "address_notice": session.wallet_notice,
    }


# -- pay ---------------------------------------------------------------------------------------------

def _push_retry_in(instructions: TransferInstructions) -> int | None:
    """Seconds until another payment request may be sent to the phone, if any are to wait.

    None once every request allowed is used: no wait then leads to another (the page counts the
    wait down and, with JavaScript, enables the button when it ends)."""
    moment = instructions.intermediate_action_next_attempt_available_at
    most = instructions.intermediate_action_max_attempts
    if moment is None or (most and (instructions.intermediate_action_attempts or 0) >= most):
        return None
    seconds = moment.timestamp() - clock.now()     # the journey's clock: a test moves it
    return math.ceil(seconds) if seconds > 0 else None


def _push_retry_at(instructions: TransferInstructions) -> str | None:
    """When the next request may be sent (ISO 8601 UTC), for the page's countdown."""
    moment = instructions.intermediate_action_next_attempt_available_at
    return moment.astimezone(UTC).isoformat() if moment is not None else None


def _ussd_parts(code: str | None) -> tuple[str, str] | None:
    """``*737*000*5000*{pin}#`` -> (``*737*000*5000*``, ``#``): dial the first, type PIN + rest."""
    if not code or "{pin}" not in code:
        return None
    before, _sep, after = code.partition("{pin}")
    return before, after


def _shows_payment_link(instructions: TransferInstructions) -> bool:
    return (instructions.type == "redirect"
            and safe_external_url(instructions.payment_url) is not None)


def show_pay(session: CheckoutSession, *, message: str | None = None,
             message_kind: str = "error", order: OnrampOrder | None = None) -> Response:
    """The transfer step of the session's order (one upstream call: the order itself, unless
    ``order`` is given)."""
    assert session.order_id is not None
    current = None
    if order is None:
        read = status_views.read_order(session, flow().fetch_order, OnrampOrder.from_json)
        if read is None:
            return status_views.show_status(session)    # its stored status, said so
        order, current = read.order, read.current
        if read.known_at is not None:
            message, message_kind = tracking.known_at_text(read.known_at), "info"
    instructions = order.transfer_instructions
    if order.status != "swap_initiated" or instructions is None:
        # Moved on: the status page, from the order just read and stored (a create's kept
        # answer, stored when it came, is not the order as it is now: the page reads that).
        return status_views.show_status(session, message=message, current=current)
    # The pay page opened top-level (a resume link on another device) must not use up the framed
    # page's order-created. A browser that says nothing about framing (no fetch metadata) is most
    # likely the merchant's frame, where this page is normally shown: it gets the events.
    top_level = tracking.framing(session) == tracking.TOP_LEVEL
    events = [] if top_level else tracking.due_events(session, "deposit_awaiting")
    return render("checkout/onramp/pay.html", "checkout/onramp/_pay.html", order=order,
                  instructions=instructions, message=message, message_kind=message_kind,
                  push_retry_in=_push_retry_in(instructions),
                  push_retry_at=_push_retry_at(instructions),
                  ussd_parts=_ussd_parts(instructions.ussd_code), events=events,
                  expires_at=order.raw.get("expiresAt"),
                  resume=status_views.resume_context(
                      session, order.resume_url,
                      # The page's own payment link is the way on; a second one, the provider's
                      # resume link, would only make the user wonder which to use.
                      awaiting_payment=not _shows_payment_link(instructions)),
                  step="pay")


def _back_to_pay(session: CheckoutSession, message: str, kind: str = "error") -> Response:
    journey.keep_notice(session, "pay", {"message": message, "kind": kind})
    return htmx_redirect(url_for("checkout.pay", session_id=session.id))


@bp.get("/s/<session_id>/pay", endpoint="pay")
@limited("page")
@session_route
@journey.order_required(NAME)
def pay(session: CheckoutSession) -> Response:
    """How to pay: the transfer instructions of the order's type."""
    session, notice = journey.take_notice(session, "pay")
    assert session.order_id is not None     # order_required
    # Right after the create, its own answer; after an action (a notice), the order as it is now.
    created = None if notice else get_state().just_created.take(NAME, session.order_id)
    return show_pay(session, message=notice.get("message"),
                    message_kind=notice.get("kind") or "error", order=created)


def _order_expired() -> str:
    # The order itself is dead: a new price would not revive it, so none is offered here.
    return _("This order has expired and can no longer be paid. Go back to the shop to start "
             "again.")


@bp.post("/s/<session_id>/pay/confirm", endpoint="onramp_confirm")
@limited("form")
@session_route
@journey.order_required(NAME)
def confirm(session: CheckoutSession) -> Response:
    """"I have paid": tell the upstream the money has been sent."""
    assert session.order_id is not None     # order_required
    try:
        get_state().upstream.onramp_confirm_order(order_id=session.order_id)
    except OrderExpired:
        return _back_to_pay(session, _order_expired())
    except UpstreamRateLimited:
        raise           # nothing was recorded: the 429 page says when to try again
    except UpstreamRejected:
        return _back_to_pay(session, _("We could not record your payment: this order can no "
                                       "longer be paid. See its status below."))

    def said_paid(fresh: CheckoutSession) -> None:
        fresh.said_paid = True

    get_state().sessions.update(session.id, said_paid)
    return htmx_redirect(url_for("checkout.status", session_id=session.id))


@bp.post("/s/<session_id>/pay/otp", endpoint="onramp_otp")
@limited("otp")
@session_route
@journey.order_required(NAME)
def otp(session: CheckoutSession) -> Response:
    """The code received by SMS or WhatsApp, for an ``otp_stk_push`` payment."""
    assert session.order_id is not None     # order_required
    code = (request.form.get("otp") or "").strip()
    if not code.isdigit() or not 4 <= len(code) <= 8:
        return _back_to_pay(session, _("Enter the code you received: digits only."))
    client = get_state().upstream
    try:
        client.onramp_submit_otp(order_id=session.order_id, otp=code)
    except UpstreamRateLimited:
        raise           # the code was not checked: never "that code is not right"
    except OrderExpired:
        return _back_to_pay(session, _(
            "Too many wrong codes: this order has expired. Go back to the shop to start again."))
    except UpstreamRejected:
        order = client.onramp_order(order_id=session.order_id)
        left = (order.transfer_instructions.raw.get("otpAttemptsLeft")
                if order.transfer_instructions else None)
        if order.status != "swap_initiated":
            return _back_to_pay(session, _(
                "Too many wrong codes: this order has expired. Go back to the shop to start "
                "again."))
        if isinstance(left, int):
            return _back_to_pay(session, _(
                "That code is not right. Attempts left: %(left)s.", left=left))
        return _back_to_pay(session, _("That code is not right. Check it and try again."))
    # Only what is new: the page goes on to say, under it, to approve the request on the phone.
    return _back_to_pay(session, _("Code accepted."), "ok")


@bp.post("/s/<session_id>/pay/retry", endpoint="onramp_retry_push")
@limited("push_retry")
@session_route
@journey.order_required(NAME)
def retry_push(session: CheckoutSession) -> Response:
    """Send the payment request to the phone again, within the upstream's attempt limits."""
    assert session.order_id is not None     # order_required
    try:
        get_state().upstream.onramp_retry_push(order_id=session.order_id)
    except OrderExpired:
        return _back_to_pay(session, _order_expired())
    except UpstreamRateLimited:
        raise           # the 429 page says when to try again
    except UpstreamRejected:
        return _back_to_pay(session, _("A new request cannot be sent now. Wait for the "
                                       "time shown, or check your phone."))
    return _back_to_pay(session, _("A new payment request was sent to your phone."), "ok")


def steps(kyc: IdentityStanding) -> Journey:
    """The on-ramp's steps, in order, each with its page: its one declaration. The identity
    step asks ``kyc`` (the app's KYC standing) whether it is needed."""
    return Journey((
        Step("choose", _l("Amount"),
             page=AmountStep(NAME, AMOUNT_TEXTS, wallet_step="wallet", fields_step="details")),
        Step("wallet", _l("Wallet"), page=WalletStep()),
        Step("details", _l("Details"), needed=has_fields,
             page=FieldsStep(NAME, "details", heading=_l("Your payment details"))),
        Step("kyc", _l("Identity"), needed=kyc.needs_kyc, page=KycStep()),
        Step("review", _l("Review"), page=journey.ReviewPage(review_context)),
        Step("pay", _l("Pay"), before_order=False, page=journey.OrderPage(show_pay, pays=True)),
        Step("status", _l("Status"), before_order=False, page=journey.StatusPage()),
    ))
