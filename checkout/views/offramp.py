"""The off-ramp's own pages: payout details, the payee check, the sending wallet, and the deposit.

The amount, review and create are the shared journey's; this module gives them the off-ramp's words
and adds what only selling has:

- **payee** (``validate-fields``): the name the payout account is in, found by the upstream and
  confirmed by the user, or typed by the user when the channel cannot be checked; details the
  upstream refuses send the user back to correct them. No order is created for refused details.
- **wallet**: the address the crypto comes from (a refund goes back to it).
- **deposit**: where to send the crypto, the exact amount, asset and network, a QR code that fills
  them in (EIP-681), a countdown to the order's deadline, and the transaction hash, pasted or
  handed over by the shop's own wallet (``deposit-requested`` / ``handle.depositSent``), passed
  on to the upstream's ``confirm-order`` once (:mod:`checkout.journey.hash_confirmation`).
"""
from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any, cast

from flask import current_app, request, url_for
from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from werkzeug.wrappers import Response

from .. import tokens
from ..addresses import AddressError, checksummed, validate_transaction_hash
from ..errors import (
    OrderExpired,
    QuoteExpired,
    UpstreamBadRequest,
    UpstreamError,
)
from ..flows.common import has_fields
from ..flows.offramp import (
    VIRTUAL_WALLET,
    OfframpFlow,
    fields_digest,
    payment_type,
    payout_details_problems,
    payout_rows,
    user_pays,
)
from ..forms import MAX_TEXT, FormResult, clean_address, display_value
from ..htmx import htmx_redirect, render
from ..journey import hash_confirmation, quotes
from ..journey.flow import IdentityStanding
from ..journey.hash_confirmation import Passed
from ..journey.steps import Journey, Step
from ..names import asset_name, network_name, payout_name
from ..qr import qr_svg
from ..ratelimits import limited
from ..sessions import CheckoutSession
from ..state import flow_named, get_state
from ..upstream.types import OfframpOrder
from . import journey, tracking
from . import status as status_views
from .amount import AmountStep, AmountTexts
from .blueprint import bp
from .context import session_route
from .fields import FieldsStep
from .kyc import KycStep
from .wallet import WalletPage

NAME = "offramp"


def flow() -> OfframpFlow:
    """The app's offramp flow."""
    return cast(OfframpFlow, flow_named(NAME))


CALM_AFTER = 60             # seconds without a change before the page says it may take a while

AMOUNT_TEXTS = AmountTexts(
    heading=_l("Sell crypto"),
    heading_for=lambda session: None if user_pays(session) else _l("Get paid"),
    channel_label=_l("How you get paid"),
    channel_error=_l("Choose how you get paid."),
    channel_name=payout_name,
    amount_labels={"local": _l("You receive (%(unit)s)"), "usd": _l("You sell (%(unit)s)")},
    amount_labels_bare={"local": _l("You receive"), "usd": _l("You sell")},
    currency_names={"local": _l("local money"), "usd": _l("US dollars")},
    currency_error=_l("Choose local money or US dollars."),
)

# What each status of an off-ramp order (spec 3.3) means, on the status page's timeline.
TIMELINE_TEXTS = {
    "initiated": _l("Order created: waiting for your crypto"),
    "awaiting_transaction_confirmation": _l("Transaction received: waiting for the network to "
                                            "confirm it"),
    "validating_transaction": _l("Checking your transaction"),
    "transaction_confirmed": _l("Your crypto has arrived"),
    "transaction_failed": _l("Your transaction failed on the network: nothing arrived"),
    "transaction_invalid": _l("Your transaction could not be accepted"),
    "offramp_pending": _l("Paying out your money"),
    "offramp_success": _l("Your money has been paid out"),
    "offramp_failed": _l("The payout did not go through"),
    "offramp_retry": _l("Trying the payout again"),
    "refunding": _l("Sending your crypto back"),
    "refunded": _l("Your crypto has been sent back"),
    "refund_failed": _l("Sending your crypto back did not go through"),
    "expired": _l("Expired: no transaction hash arrived in time"),
    "cancelled": _l("Cancelled"),
}


# What differs when the merchant's balance pays: there is no transfer of the user's.
MERCHANT_FUNDED_TIMELINE = {
    "initiated": _l("Order created: the shop is funding it"),
    "awaiting_transaction_confirmation": _l("The shop sent the funds"),
    "validating_transaction": _l("Checking the shop's funds"),
    "transaction_confirmed": _l("The shop's funds have arrived"),
    "refunding": _l("Sending the shop's funds back"),
    "refunded": _l("The shop's funds have been sent back"),
}


def _carrier_field(session: CheckoutSession) -> dict[str, Any]:
    """The mobile network chosen on the first step, for an offer that asks it (``carrierId``)."""
    carrier = session.value("carrierCode")
    names = {spec.name for spec in quotes.required_fields(session)}
    return {"carrierId": carrier} if carrier and "carrierId" in names else {}


# -- payee check ------------------------------------------------------------------------------------

class PayeeStep(journey.StepPage):
    """Whom the money goes to: checked by the upstream where it can, confirmed by the user."""

    name = "payee"

    def check(self, session: CheckoutSession) -> tuple[CheckoutSession, dict[str, Any]]:
        """The upstream's check of the payout details (one call per set of details); details
        that the offer's own rules refuse are never sent (state ``invalid``, not kept)."""
        digest = fields_digest(session)
        problems = payout_details_problems(session)
        if problems:
            return session, {"for": digest, "state": "invalid", "errors": problems}
        kept = session.payee
        if kept and kept.get("for") == digest:
            return session, kept
        # The check is made against an offer: a live one (the user may have taken longer than an
        # offer lives to type the details).
        session, _changed = quotes.refresh(get_state().sessions, session, flow())
        try:
            session, details = self._validate(session)
        except UpstreamBadRequest as refused:
            # Only the upstream's "no" to these details is kept; a refusal of anything else
            # (credentials, a rate limit) is an error page with a retry, never "your details".
            check: dict[str, Any] = {"for": digest, "state": "refused",
                                     "message": refused.message}
        else:
            found = self._found(session, details)
            check = {"for": digest, "state": "found" if found else "unverified", "found": found,
                     "details": [{"label": d.label, "value": d.value} for d in details],
                     "confirmed": False}

        def keep(fresh: CheckoutSession) -> None:
            fresh.payee = check

        return journey.save_before_order(session, keep), check

    @staticmethod
    def _validate(session: CheckoutSession) -> tuple[CheckoutSession, list[Any]]:
        """``validate-fields`` for the session's offer; an offer that expired meanwhile is
        renewed once."""
        def ask(fresh: CheckoutSession) -> list[Any]:
            return list(get_state().upstream.offramp_validate_fields(
                offer_id=str((fresh.quote or {}).get("id")), required_fields=fresh.fields))

        try:
            return session, ask(session)
        except (QuoteExpired, OrderExpired):
            session = quotes.requote(get_state().sessions, session, flow())
            return session, ask(session)

    @staticmethod
    def _found(session: CheckoutSession, details: list[Any]) -> list[dict[str, str]]:
        """What the upstream found beyond what the user typed (the account holder's name): a
        detail that repeats a field, under its label or with its value (as typed or as shown,
        "First Bank of Nigeria" for 011:02), is only an echo."""
        specs = {spec.name: spec for spec in quotes.required_fields(session)}
        labels = {str(spec.label).casefold() for spec in specs.values()}
        values = {str(value).casefold() for value in session.fields.values()}
        values |= {display_value(specs.get(name), value).casefold()
                   for name, value in session.fields.items()}
        return [{"label": d.label, "value": d.value} for d in details
                if d.value and d.label.casefold() not in labels
                and d.value.casefold() not in values]

    def get(self, session: CheckoutSession) -> Response:
        session, check = self.check(session)
        if check["state"] == "invalid":
            return self.invalid(session, check["errors"])
        if check["state"] == "refused":
            return self.refused(session, check)
        return super().get(session)

    @staticmethod
    def invalid(session: CheckoutSession, errors: Mapping[str, str]) -> Response:
        """Details the offer's rules refuse (saved before they held): back to them, each message
        under its field, and the partner asked nothing."""
        session = journey.reopen(session, "payout")
        typed = {name: str(value) for name, value in session.fields.items()}
        journey.keep_form(session, "payout", typed, FormResult(errors=dict(errors)))
        return htmx_redirect(journey.step_url(session, "payout"))

    def refused(self, session: CheckoutSession, check: Mapping[str, Any]) -> Response:
        """The upstream refused the details: back to them, saying why; nothing goes further."""
        session = journey.reopen(session, "payout")
        journey.keep_notice(session, "payout", {"form_error": _(
            "These details were not accepted: %(reason)s Correct them and continue.",
            reason=check.get("message") or "")})
        return htmx_redirect(journey.step_url(session, "payout"))

    def clean(self, session: CheckoutSession, form: Mapping[str, Any]) -> FormResult:
        check = session.payee or {}
        # The form names the check the user saw: a confirm from a page showing another account
        # (the details changed in a second tab) confirms nothing.
        if check.get("for") != fields_digest(session) or check.get("state") == "refused" \
                or form.get("check") != check.get("for"):
            return FormResult(form_error=_("Your details changed. Check them again."))
        result = FormResult()
        if check["state"] == "found":
            if form.get("confirm") != "yes":
                result.errors["confirm"] = _("Confirm that this is the account to pay.")
            result.values["name"] = check["found"][0]["value"]
            return result
        if self.top_up(session):
            result.values["name"] = ""          # a phone number is topped up, not a person paid
            return result
        name = " ".join(str(form.get("name") or "").split())
        if not name:
            result.errors["name"] = _("Type the name the account is in.")
        elif len(name) > MAX_TEXT or not any(c.isalpha() for c in name):
            result.errors["name"] = _("Type the account holder's name, as the bank or network "
                                      "has it.")
        result.values["name"] = name
        return result

    @staticmethod
    def top_up(session: CheckoutSession) -> bool:
        return bool(session.value("paymentChannel") == "airtime")

    def save(self, session: CheckoutSession, result: FormResult, *,
             by_user: bool) -> CheckoutSession:
        digest = fields_digest(session)

        def change(fresh: CheckoutSession) -> None:
            check = fresh.payee or {}
            if check.get("for") != digest:
                raise journey.StepRefused(FormResult(form_error=_(
                    "Your details changed. Check them again.")))
            fresh.payee = {**check, "confirmed": True, "name": result.values["name"]}
            # The sending wallet does not depend on whom the money goes to.
            flow().journey.complete(fresh, self.name, keep=("wallet",), by_user=by_user)

        return journey.save_before_order(session, change)

    def render(self, session: CheckoutSession, form: Mapping[str, Any] | None = None,
               result: FormResult | None = None) -> Response:
        check = session.payee or {}
        return render("checkout/offramp/payee.html", "checkout/offramp/_payee.html",
                      check=check, values=dict(form or {}),
                      errors=(result.errors if result else {}),
                      form_error=(result.form_error if result else None),
                      details=given_details(session),
                      payout_label=payout_name(session.value("paymentChannel")),
                      top_up=self.top_up(session), step=self.name)


# -- the sending wallet -------------------------------------------------------------------------------

class SendingWalletStep(WalletPage):
    """The address the crypto comes from: checked for the network; a refund goes back to it."""

    flow_name = NAME

    def given(self, session: CheckoutSession) -> dict[str, Any] | None:
        address = session.value("address")
        return {"address": address} if address else None

    def clean(self, session: CheckoutSession, form: Mapping[str, Any]) -> FormResult:
        network = str(session.value("network") or "")
        result = FormResult()
        clean_address(form, session, result, network=network)
        result.values.pop("memo", None)
        result.facts["network"] = network
        return result

    def render(self, session: CheckoutSession, form: Mapping[str, Any] | None = None,
               result: FormResult | None = None) -> Response:
        network = session.value("network")
        return render("checkout/offramp/wallet.html", "checkout/offramp/_wallet.html",
                      values={"address": (form or {}).get("address", session.value("address"))},
                      errors=(result.errors if result else {}),
                      network_label=network_name(network),
                      asset=asset_name(session.value("asset")), step=self.name)


# -- review -------------------------------------------------------------------------------------------

def review_context(session: CheckoutSession) -> dict[str, Any]:
    catalog = flow().catalog()
    country = session.value("countryIsoCode")
    return {
        "country": catalog.country(country),
        "payout_label": payout_name(session.value("paymentChannel")),
        "details": given_details(session),
        "payee": session.payee or {},
        "merchant_funded": payment_type(session) == VIRTUAL_WALLET,
        "network_label": network_name(session.value("network")),
        "address_notice": session.wallet_notice,
    }


# -- the deposit ----------------------------------------------------------------------------------------

def _deposit(order: OfframpOrder, *, testnet: bool | None) -> dict[str, Any]:
    """What the user sends: address, exact amount, asset, network, and what a wallet needs (the
    token's contract and chain: only when it is known which chains the upstream uses)."""
    amount = order.cashout.crypto_amount if order.cashout is not None else None
    network, asset = order.network or "", order.asset or ""
    token = tokens.token(network, asset, testnet=testnet) if testnet is not None else None
    uri = tokens.payment_uri(network, asset, order.to_address or "", amount, testnet=testnet) \
        if amount is not None and testnet is not None else None
    address = checksummed(network, order.to_address) if order.to_address else order.to_address
    return {
        "address": address, "amount": amount, "asset": asset, "network": network,
        "chain_id": token.chain_id if token else None,
        "token_contract": token.contract if token else None,
        "payment_uri": uri,
    }


def _deposit_event(session: CheckoutSession, deposit: Mapping[str, Any],
                   order_id: str) -> list[tracking.ParentEvent]:
    payload = {"address": deposit["address"], "amount": format(deposit["amount"], "f"),
               "asset": deposit["asset"], "network": deposit["network"]}
    if deposit["chain_id"] is not None:
        payload["chainId"] = deposit["chain_id"]
    if deposit["token_contract"] is not None:
        payload["tokenContract"] = deposit["token_contract"]
    event = tracking.ParentEvent("deposit-requested", f"deposit-requested:{order_id}",
                                 {"id": order_id, "status": "deposit_awaiting"},
                                 {"deposit": payload})
    return tracking.due_once(session, event)


def _test_wallet_url(session: CheckoutSession, order_id: str) -> str | None:
    """The embedded sandbox's "send from a test wallet" page (none against a real upstream)."""
    if get_state().embedded_sandbox is None:
        return None
    back = url_for("checkout.deposit", session_id=session.id)
    query: dict[str, Any] = {"return": back}      # a Python keyword: passed as a mapping
    return url_for("checkout.sandbox_pages", rest=f"offramp/{order_id}/send", **query)


def show_order(session: CheckoutSession, *, message: str | None = None,
               error: str | None = None, tx_value: str | None = None,
               order: OfframpOrder | None = None) -> Response:
    """The deposit while the user still has to send the crypto, else the order's status (one
    upstream call: the order itself, unless ``order`` is given)."""
    assert session.order_id is not None
    current = None
    if order is None:
        read = status_views.read_order(session, flow().fetch_order, OfframpOrder.from_json)
        if read is None:
            return status_views.show_status(session)    # its stored status, said so
        order, current = read.order, read.current
        if read.known_at is not None:
            message = message or tracking.known_at_text(read.known_at)
    if not user_pays(session) or order.status != "initiated" \
            or session.deposit.get("confirmed") or order.hash:
        # The status page, from the order just read and stored (a create's kept answer, stored
        # when it came, is not the order as it is now: the page reads that).
        return status_views.show_status(session, message=message, current=current)
    deposit = _deposit(order, testnet=current_app.config["CHECKOUT_TESTNET"])
    top_level = tracking.framing(session) == tracking.TOP_LEVEL
    events: list[tracking.ParentEvent] = []
    if not top_level:
        events = tracking.due_events(session, "deposit_awaiting")
        if deposit["address"] and deposit["amount"] is not None:
            events += _deposit_event(session, deposit, order.id)
    tx_hash = tx_value if tx_value is not None else \
        (request.args.get("txHash") or session.deposit.get("hash") or "")
    return render("checkout/offramp/deposit.html", "checkout/offramp/_deposit.html",
                  order=order, deposit=deposit, events=events, message=message, error=error,
                  tx_hash=tx_hash[:200],
                  refund_address=checksummed(deposit["network"], order.from_address or ""),
                  qr=qr_svg(deposit["payment_uri"] or deposit["address"] or order.id),
                  network_label=network_name(deposit["network"]),
                  asset_label=asset_name(deposit["asset"]),
                  expires_at=order.expires_at,
                  test_wallet_url=_test_wallet_url(session, order.id),
                  # Back from the test wallet with its hash: "I have sent it" is what comes next.
                  returned_hash=bool(request.args.get("txHash")),
                  resume=status_views.resume_context(session), step="deposit")


@bp.get("/s/<session_id>/deposit", endpoint="deposit")
@limited("page")
@session_route
@journey.order_required(NAME)
def deposit(session: CheckoutSession) -> Response:
    """Where and what to send, and the transaction hash once sent."""
    session, notice = journey.take_notice(session, "deposit")
    assert session.order_id is not None     # order_required
    # Right after the create, its own answer; after an action (a notice), the order as it is now.
    created = None if notice else get_state().just_created.take(NAME, session.order_id)
    return show_order(session, message=notice.get("message"), error=notice.get("error"),
                      tx_value=notice.get("value"), order=created)


def _back_to_deposit(session: CheckoutSession, **notice: Any) -> Response:
    journey.keep_notice(session, "deposit", notice)
    return htmx_redirect(url_for("checkout.deposit", session_id=session.id))


@bp.post("/s/<session_id>/deposit/sent", endpoint="deposit_sent")
@limited("tx_hash")
@session_route
@journey.order_required(NAME)
def deposit_sent(session: CheckoutSession) -> Response:
    """The hash of the user's transfer (pasted, or from the shop's wallet): confirmed once."""
    if not user_pays(session):
        # Paid from the merchant's balance: there is no transfer of the user's to confirm.
        return htmx_redirect(url_for("checkout.status", session_id=session.id))
    raw = str(request.form.get("tx_hash") or "")
    network = str((session.quote or {}).get("params", {}).get("network")
                  or session.value("network") or "")
    try:
        tx_hash = validate_transaction_hash(network, raw)
    except AddressError as exc:
        return _back_to_deposit(session, error=str(exc), value=raw[:200])
    result = hash_confirmation.pass_on(get_state().sessions, session, flow(), tx_hash)
    if result.outcome is Passed.CONFIRMED:
        assert session.order_id is not None
        try:
            # The status page that follows shows the order as it is now, not as last stored.
            get_state().order_statuses.fetch_and_store(session.order_id, NAME, source="page")
        except UpstreamError:
            pass            # the stored status is refreshed when it is read, as always
    elif result.outcome is Passed.REFUSED:
        return _back_to_deposit(session, error=_(
            "Our payment partner did not accept this transaction: %(reason)s",
            reason=result.message or ""), value=raw[:200])
    elif result.outcome is Passed.NOT_PASSED_ON:
        return _back_to_deposit(session, message=_(
            "We could not reach our payment partner to pass on your transaction. It is kept "
            "here: press the button again in a moment."), value=tx_hash)
    # Confirmed, by this press or another request's, or too late (the hash kept for support):
    # the status page tells the rest.
    return htmx_redirect(url_for("checkout.status", session_id=session.id))


# -- status ---------------------------------------------------------------------------------------------

def given_details(session: CheckoutSession) -> list[tuple[Any, str]]:
    """The payout details the user gave, as (label, value shown), in the order they were asked."""
    specs = {spec.name: spec for spec in quotes.required_fields(session)}
    return payout_rows((name, specs[name].label if name in specs else None,
                        display_value(specs.get(name), value))
                       for name, value in session.fields.items())


def _payout_details(session: CheckoutSession) -> list[tuple[Any, str]]:
    """The payout details as the user gave them (label, display value), and whom they confirmed."""
    shown = given_details(session)
    payee = session.payee or {}
    if payee.get("confirmed") and payee.get("name"):
        shown.append((_l("Account holder"), str(payee["name"])))
    return shown


def timeline(order: Mapping[str, Any] | None, *,
             merchant_funded: bool = False) -> list[dict[str, Any]]:
    """The order's ``statusHistory``, each status explained, consecutive repeats collapsed (lists
    can show a status twice in a row, spec 2.7)."""
    texts = {**TIMELINE_TEXTS, **(MERCHANT_FUNDED_TIMELINE if merchant_funded else {})}
    entries: list[dict[str, Any]] = []
    for item in (order or {}).get("statusHistory") or []:
        if not isinstance(item, dict) or not isinstance(item.get("status"), str):
            continue
        if entries and entries[-1]["status"] == item["status"]:
            continue
        text = texts.get(item["status"])
        entries.append({"status": item["status"], "text": str(text) if text else item["status"],
                        "at": item.get("changedAt")})
    return entries


def status_context(session: CheckoutSession, current: tracking.OrderStatus) -> dict[str, Any]:
    order = current.order or {}
    quiet = current.updated_at is not None and datetime.now(UTC) - current.updated_at \
        >= timedelta(seconds=CALM_AFTER)
    settled = current.status in flow().settled_statuses or current.status is None
    given = session.deposit
    merchant_funded = payment_type(session) == VIRTUAL_WALLET
    return {"timeline": timeline(order, merchant_funded=merchant_funded),
            "refund_address": order.get("fromAddress") or session.value("address"),
            # A hash the user gave that the order never took (it came too late): support needs it.
            "unconfirmed_hash": given.get("hash") if not given.get("confirmed")
            and given.get("hash") != order.get("hash") else None,
            "merchant_funded": merchant_funded,
            "payout_label": payout_name(session.value("paymentChannel")),
            "payout_details": _payout_details(session),
            "calm": quiet and not settled and current.status != "deposit_awaiting"
            and current.status not in tracking.UNPAID_ENDED}


def steps(kyc: IdentityStanding) -> Journey:
    """The off-ramp's steps, in order, each with its page: its one declaration. The identity
    step asks ``kyc`` (the app's KYC standing) whether it is needed; a payout the shop funds
    has no wallet to send from, and nothing to send."""
    return Journey((
        Step("choose", _l("Amount"),
             page=AmountStep(NAME, AMOUNT_TEXTS, wallet_step="wallet", fields_step="payout",
                             after_fields=("payee",))),
        Step("payout", _l("Payout details"), needed=has_fields,
             page=FieldsStep(NAME, "payout", heading=_l("Where should we pay you?"),
                             known=_carrier_field, keep=("wallet",),
                             intro=_l("The money is paid to this account. Check every detail: "
                                      "a payout to a wrong account cannot be recovered."))),
        Step("payee", _l("Account check"), needed=has_fields, page=PayeeStep()),
        Step("wallet", _l("Your wallet"), needed=user_pays, page=SendingWalletStep()),
        Step("kyc", _l("Identity"), needed=kyc.needs_kyc, page=KycStep()),
        Step("review", _l("Review"), page=journey.ReviewPage(review_context)),
        Step("deposit", _l("Send"), needed=user_pays, before_order=False,
             page=journey.OrderPage(show_order, pays=True)),
        Step("status", _l("Status"), before_order=False,
             page=journey.StatusPage(status_context)),
    ))
