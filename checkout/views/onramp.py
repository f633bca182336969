"""The on-ramp flow under ``/s/<session_id>/``: choose, wallet, details, review, create, pay.

Each step is a page that validates on the server, saves what the user chose in the session, then
redirects (303) to the next step; a form with errors is rendered again (status 200) with the message
next to the field. ``GET /s/<id>/`` renders whatever step the session has reached, so the same link
resumes the checkout on another device. Once an order exists the steps before it only lead to it.
"""
from __future__ import annotations

import math
from collections.abc import Callable
from datetime import datetime, timezone
from decimal import Decimal
from typing import Any

from babel import Locale, UnknownLocaleError
from flask import Blueprint, redirect, request, url_for
from flask_babel import get_locale
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from .. import onramp as domain
from ..addresses import network_has_memo
from ..errors import OrderExpired, UpstreamError, UpstreamRejected
from ..forms import (FormResult, amount_bounds, clean_amount, clean_corridor,
                     clean_required_fields, clean_wallet, display_value, input_type,
                     phone_example)
from ..htmx import htmx_redirect, is_htmx, render
from ..i18n import format_crypto, format_money
from ..reference import onramp_catalog
from ..sessions import CheckoutSession
from ..state import get_state
from ..upstream.types import TransferInstructions
from ..urls import safe_external_url
from . import status as status_views
from .context import session_route

PRE_ORDER_STEPS = ("choose", "wallet", "details")
CORRIDOR_FIELDS = ("countryIsoCode", "paymentChannel", "carrierCode", "network", "asset")


class StaleInput(Exception):
    """A step's input was checked against a session that has changed since."""


# -- helpers ----------------------------------------------------------------------------------------

def _step_url(session: CheckoutSession, step: str) -> str:
    return url_for(f"checkout.onramp_{step}", session_id=session.id)


def _done(session: CheckoutSession) -> list[str]:
    return list(session.data.get("done") or [])


def _gate(session: CheckoutSession, step: str) -> Response | None:
    """Send the user to the step they must finish first (or to the order, once there is one)."""
    if session.flow != "onramp":
        return redirect(url_for("checkout.flow", session_id=session.id), code=303)
    if session.order_id:
        return redirect(_step_url(session, "pay"), code=303)
    if domain.pending_since(session) is not None:
        # A create may have reached the upstream: nothing changes until it is settled.
        return redirect(url_for("checkout.flow", session_id=session.id), code=303)
    order = PRE_ORDER_STEPS + ("review",)
    for needed in order[:order.index(step)]:
        if needed not in _done(session):
            return redirect(_step_url(session, needed), code=303)
    return None


def _locale() -> str:
    return str(get_locale() or "en")


def _money_locale(country: str | None) -> Locale | None:
    """The user's language in the country being chosen (``en`` + ``NG`` writes ₦, not NGN);
    the session's own country is not saved until the step is."""
    language = get_locale()
    if not country or language is None or language.territory:
        return None
    try:
        return Locale.parse(f"{language.language}_{country}")
    except (ValueError, UnknownLocaleError):
        return None


def _amount_display(values: dict[str, Any]) -> Callable[[Decimal, str], str]:
    """How a limit is written in a message: as local money, or as the asset."""
    country = onramp_catalog().country(values.get("countryIsoCode"))
    locale = _money_locale(values.get("countryIsoCode"))

    def show(number: Decimal, currency: str) -> str:
        if currency == "local" and country is not None:
            return format_money(number, country.currency_iso_code, locale)
        return format_crypto(number, values.get("asset") or "", locale)

    return show


def _save(session_id: str, values: dict[str, Any], *, step: str,
          extra: dict[str, Any] | None = None, still_valid: tuple[str, ...] = (),
          require: Callable[[CheckoutSession], bool] | None = None) -> CheckoutSession:
    """Store a step's cleaned values and mark it done; steps after it stay done only when
    ``still_valid`` names them (their inputs did not change). Raises ``StaleInput``, saving
    nothing, when the session fails ``require`` (what the values were checked against changed)."""
    def change(session: CheckoutSession) -> bool:
        if require is not None and not require(session):
            raise StaleInput()
        for name, value in values.items():
            if not session.is_locked(name):
                session.data[name] = value
        session.data.update(extra or {})
        before = PRE_ORDER_STEPS[:PRE_ORDER_STEPS.index(step)]
        done = _done(session)
        session.data["done"] = [s for s in PRE_ORDER_STEPS
                                if (s in before and s in done) or s == step
                                or (s in still_valid and s in done)]
        session.step = step
        return True

    return domain.update_session(session_id, change)


def _next_pre_order(session: CheckoutSession) -> str:
    for step in PRE_ORDER_STEPS:
        if step not in _done(session):
            return step
    return "review"


# -- GET /s/<id>/ -----------------------------------------------------------------------------------

@session_route
def flow(session: CheckoutSession) -> Response:
    """Show the step the session has reached (the resume link lands here)."""
    if session.flow != "onramp":
        return render("checkout/offramp_unavailable.html")
    if session.order_id:
        return show_pay(session)
    if domain.pending_since(session) is not None:
        return _settle(session)
    step = _next_pre_order(session)
    if step == "choose":
        return _show_choose(session)
    if step == "wallet":
        return _show_wallet(session)
    if step == "details":
        return _show_details(session)
    return _show_review(session)


# -- 1. choose --------------------------------------------------------------------------------------

def _choice_values(session: CheckoutSession, form: dict[str, Any]) -> dict[str, Any]:
    """What the choose form shows: the submitted draft, else what the session holds."""
    names = CORRIDOR_FIELDS + ("currency", "amount")
    values = {}
    for name in names:
        if name in form and not session.is_locked(name):
            values[name] = form.get(name)
        else:
            values[name] = session.value(name)
    values["currency"] = values.get("currency") or "local"
    return values


def _corridor_limits(values: dict[str, Any]) -> Any | None:
    catalog = onramp_catalog()
    channel = catalog.channel(values.get("countryIsoCode"), values.get("paymentChannel"))
    if channel is None or not catalog.supports(values.get("network"), values.get("asset")):
        return None
    carrier = values.get("carrierCode") if channel.requires_carrier else None
    if channel.requires_carrier and not catalog.carrier(values.get("countryIsoCode"),
                                                        channel.payment_channel, carrier):
        return None
    return catalog.limits(network=values["network"], asset=values["asset"],
                          country=values["countryIsoCode"], channel=channel.payment_channel,
                          carrier=carrier)


NETWORK_NAMES = {
    "ETHEREUM": "Ethereum", "POLYGON": "Polygon", "CELO": "Celo", "BASE": "Base",
    "AVALANCHE": "Avalanche", "OPTIMISM": "Optimism", "ARBITRUM": "Arbitrum", "BNB": "BNB Chain",
    "LISK": "Lisk", "SOLANA": "Solana", "STELLAR": "Stellar", "TON": "TON", "ALGORAND": "Algorand",
}
ASSET_NAMES = {"USDC_E": "USDC.e", "CUSD": "cUSD", "CKES": "cKES"}


def channel_name(code: str | None) -> str:
    names = {"bank": _("Bank transfer"), "mobile_money": _("Mobile money"),
             "airtime": _("Airtime"), "paybill": _("Paybill")}
    return names.get(code or "", code or "")


def _options(catalog: Any, country: Any, channel: Any, assets: list[str]) -> dict[str, list]:
    return {
        "countries": [(c.country_iso_code, c.name or c.country_iso_code)
                      for c in catalog.countries()],
        "channels": [(c.payment_channel, channel_name(c.payment_channel))
                     for c in (country.payment_channels if country else [])],
        "carriers": [(c.code, c.name) for c in (channel.carriers if channel else [])],
        "networks": [(n, NETWORK_NAMES.get(n, n.title())) for n in catalog.networks()],
        "assets": [(a, ASSET_NAMES.get(a, a)) for a in assets],
    }


def _show_choose(session: CheckoutSession, form: dict[str, Any] | None = None,
                 result: FormResult | None = None, form_error: str | None = None) -> Response:
    catalog = onramp_catalog()
    values = _choice_values(session, form or {})
    country = catalog.country(values.get("countryIsoCode"))
    channel = catalog.channel(values.get("countryIsoCode"), values.get("paymentChannel"))
    limits = _corridor_limits(values)
    low, high = amount_bounds(limits, values["currency"]) if limits is not None else (None, None)
    assets = catalog.assets(values.get("network")) if values.get("network") else catalog.assets()
    return render("checkout/onramp/choose.html", "checkout/onramp/_choose.html",
                  values=values, errors=(result.errors if result else {}), form_error=form_error,
                  options=_options(catalog, country, channel, assets), country=country,
                  channel=channel, limits=limits, low=low, high=high, step="choose",
                  money_locale=_money_locale(values.get("countryIsoCode")))


@session_route
def choose(session: CheckoutSession) -> Response:
    """Country, payment channel, carrier, network, asset and amount; a quote fixes the offer."""
    gate = _gate(session, "choose")
    if gate is not None:
        return gate
    if request.method == "GET":
        # A select changed: htmx asks for the form again with the draft, nothing is saved.
        return _show_choose(session, request.args.to_dict() if is_htmx() else None)
    form = request.form.to_dict()
    result = clean_corridor(form, session, onramp_catalog())
    limits = _corridor_limits(result.values) if result.ok else None
    amount = clean_amount(form, session, locale=_locale(), limits=limits,
                          check_limits=result.ok, show=_amount_display(result.values))
    result.values.update(amount.values)
    result.errors.update(amount.errors)
    if not result.ok:
        return _show_choose(session, form, result)
    params = domain.normalise_params(result.values)
    try:
        quote = domain.request_quote(params)
    except UpstreamRejected:
        result.errors["amount"] = _("We could not get a price for this amount. Check it against "
                                    "the limits and try again.")
        return _show_choose(session, form, result)
    except UpstreamError:
        return _show_choose(session, form, result, form_error=_(
            "Our payment partner is not answering right now. Please try again in a moment."))
    record = domain.quote_record(quote, params)
    old = domain.stored_quote(session) or {}
    still_valid = []
    if result.values.get("network") == session.value("network"):
        still_valid.append("wallet")        # the address was checked for this same network
    if not record["requiredFields"]:
        still_valid.append("details")
    elif record["requiredFields"] == old.get("requiredFields") and all(
            result.values.get(k) == session.value(k) for k in ("countryIsoCode", "paymentChannel")):
        still_valid.append("details")       # same form, same country: the answers still hold
    extra: dict[str, Any] = {"quote": record}
    if not record["requiredFields"]:
        extra["extraFields"] = {}
        saved = _save(session.id, result.values, step="choose", extra=extra,
                      still_valid=tuple(still_valid))
        saved = domain.update_session(saved.id, lambda s: s.data.__setitem__(
            "done", sorted(set(_done(s)) | {"details"}, key=PRE_ORDER_STEPS.index)))
    else:
        saved = _save(session.id, result.values, step="choose", extra=extra,
                      still_valid=tuple(still_valid))
    return htmx_redirect(_step_url(saved, _next_pre_order(saved)))


@session_route
def live_quote(session: CheckoutSession) -> Response:
    """The price breakdown for what is typed so far (htmx, debounced); saves nothing."""
    if session.order_id:
        return render("checkout/onramp/_quote.html", "checkout/onramp/_quote.html", message=None,
                      breakdown=None)
    form = request.args.to_dict()
    corridor = clean_corridor(form, session, onramp_catalog())
    if not corridor.ok or not (form.get("amount") or session.is_locked("amount")):
        return render("checkout/onramp/_quote.html", message=None, breakdown=None)
    limits = _corridor_limits(corridor.values)
    amount = clean_amount(form, session, locale=_locale(), limits=limits,
                          show=_amount_display(corridor.values))
    if not amount.ok:
        return render("checkout/onramp/_quote.html",
                      message=amount.errors.get("amount") or amount.errors.get("currency"),
                      breakdown=None, retry=False)
    params = domain.normalise_params({**corridor.values, **amount.values})
    try:
        quote = domain.request_quote(params)
    except UpstreamRejected:
        return render("checkout/onramp/_quote.html", breakdown=None, retry=False, message=_(
            "We could not get a price for this amount. Check it against the limits."))
    except UpstreamError:
        return render("checkout/onramp/_quote.html", breakdown=None, retry=True, message=_(
            "The price is not available right now."))
    breakdown = domain.Breakdown.from_record(domain.quote_record(quote, params))
    return render("checkout/onramp/_quote.html", breakdown=breakdown, message=None,
                  money_locale=_money_locale(params.get("countryIsoCode")))


# -- notices carried over a redirect ------------------------------------------------------------

# What a POST of the review or pay step has to say, kept for the page the browser is sent to next
# (POST, redirect, GET): a reload then shows the page again instead of sending the form again,
# which for a one-time code would use up an attempt.
PAY_NOTICE = "pay_notice"
REVIEW_NOTICE = "review_notice"
WALLET_NOTICE = "wallet_notice"


def _keep_notice(session: CheckoutSession, key: str, notice: dict[str, str | None]) -> None:
    domain.update_session(session.id, lambda s: s.data.__setitem__(key, notice))


def _take_notice(session: CheckoutSession, key: str
                 ) -> tuple[CheckoutSession, dict[str, str | None]]:
    """The notice kept for this page, once: a second visit shows the page without it."""
    if not session.data.get(key):
        return session, {}
    notice = dict(session.data[key])
    session = domain.update_session(session.id, lambda s: s.data.pop(key, None) is not None)
    return session, notice


# -- 2. wallet --------------------------------------------------------------------------------------

def _show_wallet(session: CheckoutSession, form: dict[str, Any] | None = None,
                 result: FormResult | None = None) -> Response:
    network = session.value("network")
    values = {name: (form or {}).get(name, session.value(name)) for name in
              ("address", "memo", "email")}
    return render("checkout/onramp/wallet.html", "checkout/onramp/_wallet.html",
                  values=values, errors=(result.errors if result else {}),
                  network=network, asset=session.value("asset"),
                  has_memo=network_has_memo(network), step="wallet")


@session_route
def wallet(session: CheckoutSession) -> Response:
    """The receiving wallet, checked for the chosen network before any order exists, and email."""
    gate = _gate(session, "wallet")
    if gate is not None:
        return gate
    if request.method == "GET":
        session, notice = _take_notice(session, WALLET_NOTICE)
        if notice:
            return _show_wallet(session, None, _wallet_error(notice["field"] or "address",
                                                             notice["message"] or ""))
        return _show_wallet(session)
    form = request.form.to_dict()
    network = session.value("network")
    result = clean_wallet(form, session, network=network)
    if session.value("memo") and session.is_locked("memo") and not network_has_memo(network):
        # The shop's memo would be dropped on a network without memos: the shop must fix it.
        result.errors.setdefault("address", _(
            "The shop set a memo, but %(network)s does not use memos. Go back to the shop.",
            network=(network or "").title()))
    if not result.ok:
        return _show_wallet(session, form, result)
    # Checksummed now, but as typed it had none: the review asks to compare it character by character.
    try:
        saved = _save(session.id, result.values, step="wallet", still_valid=("details",),
                      extra={"addressNotice": result.notices.get("address"),
                             "addressNetwork": network},
                      require=lambda fresh: fresh.value("network") == network)
    except StaleInput:
        # Another tab chose another network while this address was checked for the old one.
        fresh = get_state().sessions.get(session.id) or session
        return _show_wallet(fresh, form, _wallet_error(
            "address", _("Your network changed. Enter the wallet address for %(network)s.",
                         network=str(fresh.value("network") or "").title())))
    return htmx_redirect(_step_url(saved, _next_pre_order(saved)))


def _wallet_error(name: str, message: str) -> FormResult:
    result = FormResult()
    result.errors[name] = message
    return result


def _reopen_wallet(session_id: str) -> CheckoutSession:
    """The wallet step is to be done again (review is closed until it is)."""
    return domain.update_session(session_id, lambda s: s.data.__setitem__(
        "done", [d for d in _done(s) if d != "wallet"]))


def _back_to_wallet(session: CheckoutSession, name: str, message: str) -> Response:
    """The wallet no longer holds for the order's network: ask for it again."""
    return _show_wallet(_reopen_wallet(session.id), None, _wallet_error(name, message))


# -- 3. details (the offer's required fields) ---------------------------------------------------------

def _show_details(session: CheckoutSession, form: dict[str, Any] | None = None,
                  result: FormResult | None = None) -> Response:
    specs = domain.required_fields(session)
    saved = session.data.get("extraFields") or {}
    values = {spec.name: (form or {}).get(spec.name, saved.get(spec.name,
                                                              session.claims.get(spec.name)))
              for spec in specs}
    if form is None:
        # A saved phone number is shown as people write it, not as the upstream's bare digits.
        values.update({spec.name: display_value(spec, values[spec.name]) for spec in specs
                       if spec.type == "phone" and values[spec.name]})
    return render("checkout/onramp/details.html", "checkout/onramp/_details.html",
                  specs=specs, values=values, errors=(result.errors if result else {}),
                  input_type=input_type, step="details",
                  phone_example=phone_example(session.value("countryIsoCode")),
                  options_of=lambda spec: [(o.value, o.label) for o in spec.options])


@session_route
def details(session: CheckoutSession) -> Response:
    """The fields the offer requires (spec 2.2), as a form built from their descriptors."""
    gate = _gate(session, "details")
    if gate is not None:
        return gate
    specs = domain.required_fields(session)
    if request.method == "GET":
        return _show_details(session)
    form = request.form.to_dict()
    result = clean_required_fields(specs, form, country=session.value("countryIsoCode"),
                                   session=session)
    if not result.ok:
        return _show_details(session, form, result)
    saved = _save(session.id, {}, step="details", extra={"extraFields": result.values})
    return htmx_redirect(_step_url(saved, "review"))


# -- 4. review and 5. create ------------------------------------------------------------------------

def _refresh_quote(session: CheckoutSession) -> tuple[CheckoutSession, bool]:
    """Renew the stored quote when it is too old; True when the price the user saw changed."""
    if domain.quote_is_current(session):
        return session, False
    old = domain.stored_quote(session)
    params = domain.quote_params(session)
    quote = domain.request_quote(params)
    record = domain.quote_record(quote, params)
    session = domain.update_session(session.id,
                                    lambda s: s.data.__setitem__("quote", record))
    changed = old is None or (
        domain.Breakdown.from_record(old).pay_local != domain.Breakdown.from_record(record).pay_local
        or domain.Breakdown.from_record(old).receive_crypto
        != domain.Breakdown.from_record(record).receive_crypto)
    return session, changed


def _show_review(session: CheckoutSession, *, notice: str | None = None,
                 form_error: str | None = None) -> Response:
    if notice is None and form_error is None:
        session, changed = _refresh_quote(session)
        if changed and "review_seen" in session.data:
            notice = _("The price has been updated. Check it before you confirm.")
        if "review_seen" not in session.data:
            session = domain.update_session(
                session.id, lambda s: s.data.__setitem__("review_seen", True))
    record = domain.stored_quote(session) or {}
    catalog = onramp_catalog()
    channel = catalog.channel(session.value("countryIsoCode"), session.value("paymentChannel"))
    carrier = catalog.carrier(session.value("countryIsoCode"), session.value("paymentChannel"),
                              session.value("carrierCode"))
    specs = {spec.name: spec for spec in domain.required_fields(session)}
    return render("checkout/onramp/review.html", "checkout/onramp/_review.html",
                  breakdown=domain.Breakdown.from_record(record), quote_id=record.get("id"),
                  country=catalog.country(session.value("countryIsoCode")), channel=channel,
                  carrier=carrier, specs=specs,
                  extra={name: display_value(specs.get(name), value) for name, value
                         in (session.data.get("extraFields") or {}).items()},
                  address_notice=session.data.get("addressNotice"),
                  notice=notice, form_error=form_error, step="review",
                  channel_name=channel_name, review_digest=domain.review_digest(session))


@session_route
def review(session: CheckoutSession) -> Response:
    """Everything at a glance, with a fresh price, before the order is created."""
    gate = _gate(session, "review")
    if gate is not None:
        return gate
    problem = domain.wallet_problem(session)
    if problem is not None:
        return _back_to_wallet(session, *problem)
    session, notice = _take_notice(session, REVIEW_NOTICE)
    return _show_review(session, notice=notice.get("notice"), form_error=notice.get("form_error"))


def _back_to_review(session: CheckoutSession, *, notice: str | None = None,
                    form_error: str | None = None) -> Response:
    """After "Confirm and pay" did not create the order: the review again, by a redirect."""
    _keep_notice(session, REVIEW_NOTICE, {"notice": notice, "form_error": form_error})
    return htmx_redirect(_step_url(session, "review"))


def _requote(session: CheckoutSession, notice: str) -> Response:
    params = domain.quote_params(session)
    record = domain.quote_record(domain.request_quote(params), params)
    session = domain.update_session(session.id, lambda s: s.data.__setitem__("quote", record))
    return _back_to_review(session, notice=notice)


def _show_confirming(session: CheckoutSession) -> Response:
    return render("checkout/onramp/confirming.html", "checkout/onramp/_confirming.html",
                  step="review")


def _fresh_review(session: CheckoutSession) -> Response:
    """The grace period passed without an order: a fresh quote, reviewed before a new attempt."""
    session = get_state().sessions.get(session.id) or session
    session, _changed = _refresh_quote(session)
    return _back_to_review(session, notice=_(
        "We could not find an order from your last attempt, and you have not been charged. "
        "Check the details and the new price, then confirm again."))


def _settle(session: CheckoutSession) -> Response:
    """A create had no answer: look the order up (never create), and say where it stands."""
    result = domain.settle_pending(session)
    if result.kind == "created":
        fresh = get_state().sessions.get(session.id) or session
        return show_pay(fresh)
    if result.kind == "retry":
        return _fresh_review(session)
    return _show_confirming(session)


@session_route
def create(session: CheckoutSession) -> Response:
    """Create the order, once: repeated or concurrent requests all lead to the same order."""
    if session.order_id:
        return htmx_redirect(_step_url(session, "pay"))
    gate = _gate(session, "review")
    if gate is not None:
        return gate
    stored = domain.stored_quote(session) or {}
    if request.form.get("quote_id") != stored.get("id") or not domain.quote_is_current(session):
        # The user confirmed a price that is no longer on offer: show the new one, ask again.
        return _requote(session, _("The price has changed. Check the new price and confirm "
                                   "again."))
    result = domain.create_order(session, request.form.get("review_digest"))
    if result.kind == "created":
        return htmx_redirect(_step_url(session, "pay"))
    if result.kind == "busy":
        return render("checkout/onramp/creating.html", "checkout/onramp/_creating.html",
                      step="review")
    fresh = get_state().sessions.get(session.id) or session
    if result.kind == "changed":
        return _back_to_review(fresh, form_error=_(
            "Your order details changed. Please check them again."))
    if result.kind == "invalid":
        _reopen_wallet(fresh.id)
        _keep_notice(fresh, WALLET_NOTICE, {"field": result.field or "address",
                                            "message": result.message or ""})
        return htmx_redirect(_step_url(fresh, "wallet"))
    if result.kind == "requote":
        return _requote(fresh, _("The price expired. Check the new price and confirm again."))
    if result.kind == "rejected":
        return _back_to_review(fresh, form_error=_(
            "Our payment partner could not create this order. Check your details and try "
            "again, or go back to the shop."))
    if result.kind == "retry":
        return _fresh_review(fresh)
    return _show_confirming(fresh)


# -- 6. pay ----------------------------------------------------------------------------------------

def _push_retry_in(instructions: TransferInstructions) -> int | None:
    """Seconds until another payment request may be sent to the phone, if any are to wait."""
    moment = instructions.intermediate_action_next_attempt_available_at
    if moment is None:
        return None
    seconds = (moment - datetime.now(timezone.utc)).total_seconds()
    return math.ceil(seconds) if seconds > 0 else None


def _ussd_parts(code: str | None) -> tuple[str, str] | None:
    """``*737*000*5000*{pin}#`` -> (``*737*000*5000*``, ``#``): dial the first, type PIN + rest."""
    if not code or "{pin}" not in code:
        return None
    before, _sep, after = code.partition("{pin}")
    return before, after


def show_pay(session: CheckoutSession, *, message: str | None = None,
             message_kind: str = "error") -> Response:
    """The transfer step of the session's order (one upstream call: the order itself)."""
    order = get_state().upstream.onramp_order(order_id=session.order_id)
    instructions = order.transfer_instructions
    if order.status != "swap_initiated" or instructions is None:
        return status_views.show_status(session, message=message)
    # The pay page opened top-level (a resume link on another device) must not use up the framed
    # page's order-created. A browser that says nothing about framing (no fetch metadata) is most
    # likely the merchant's frame, where this page is normally shown: it gets the events.
    tracking = status_views.tracking
    top_level = tracking.framing(session) == tracking.TOP_LEVEL
    events = [] if top_level else tracking.due_events(session, "deposit_awaiting")
    return render("checkout/onramp/pay.html", "checkout/onramp/_pay.html", order=order,
                  instructions=instructions, message=message, message_kind=message_kind,
                  push_retry_in=_push_retry_in(instructions),
                  ussd_parts=_ussd_parts(instructions.ussd_code), events=events,
                  resume=status_views.resume_context(
                      session, order.resume_url,
                      # The page's own payment link is the way on; a second one, the provider's
                      # resume link, would only make the user wonder which to use.
                      awaiting_payment=not _shows_payment_link(instructions)),
                  step="pay")


def _shows_payment_link(instructions: TransferInstructions) -> bool:
    return (instructions.type == "redirect"
            and safe_external_url(instructions.payment_url) is not None)


def _back_to_pay(session: CheckoutSession, message: str, kind: str = "error") -> Response:
    _keep_notice(session, PAY_NOTICE, {"message": message, "kind": kind})
    return htmx_redirect(_step_url(session, "pay"))


@session_route
def pay(session: CheckoutSession) -> Response:
    """How to pay: the transfer instructions of the order's type."""
    if not session.order_id:
        return redirect(url_for("checkout.flow", session_id=session.id), code=303)
    session, notice = _take_notice(session, PAY_NOTICE)
    return show_pay(session, message=notice.get("message"),
                    message_kind=notice.get("kind") or "error")


def _order_expired() -> str:
    # The order itself is dead: a new price would not revive it, so none is offered here.
    return _("This order has expired and can no longer be paid. Go back to the shop to start "
             "again.")


def _action(session: CheckoutSession, call: Any, failure: str) -> Response:
    if not session.order_id:
        return redirect(url_for("checkout.flow", session_id=session.id), code=303)
    try:
        call()
    except OrderExpired:
        return _back_to_pay(session, _order_expired())
    except UpstreamRejected:
        return _back_to_pay(session, failure)
    return htmx_redirect(url_for("checkout.status", session_id=session.id))


@session_route
def confirm(session: CheckoutSession) -> Response:
    """"I have paid": tell the upstream the money has been sent."""
    return _action(session, lambda: get_state().upstream.onramp_confirm_order(
        order_id=session.order_id), _("We could not record your payment: this order can no "
                                      "longer be paid. See its status below."))


@session_route
def otp(session: CheckoutSession) -> Response:
    """The code received by SMS or WhatsApp, for an ``otp_stk_push`` payment."""
    if not session.order_id:
        return redirect(url_for("checkout.flow", session_id=session.id), code=303)
    code = (request.form.get("otp") or "").strip()
    if not code.isdigit() or not 4 <= len(code) <= 8:
        return _back_to_pay(session, _("Enter the code you received: digits only."))
    client = get_state().upstream
    try:
        client.onramp_submit_otp(order_id=session.order_id, otp=code)
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
    return _back_to_pay(session, _("Code accepted. Approve the payment request on your phone."),
                        "ok")


@session_route
def retry_push(session: CheckoutSession) -> Response:
    """Send the payment request to the phone again, within the upstream's attempt limits."""
    if not session.order_id:
        return redirect(url_for("checkout.flow", session_id=session.id), code=303)
    try:
        get_state().upstream.onramp_retry_push(order_id=session.order_id)
    except OrderExpired:
        return _back_to_pay(session, _order_expired())
    except UpstreamRejected:
        return _back_to_pay(session, _("A new request cannot be sent now. Wait for the "
                                       "time shown, or check your phone."))
    return _back_to_pay(session, _("A new payment request was sent to your phone."), "ok")


def init(bp: Blueprint) -> None:
    rule = "/s/<session_id>"
    bp.add_url_rule(f"{rule}/", "flow", flow, methods=["GET"])
    bp.add_url_rule(f"{rule}/choose", "onramp_choose", choose, methods=["GET", "POST"])
    bp.add_url_rule(f"{rule}/quote", "onramp_quote", live_quote, methods=["GET"])
    bp.add_url_rule(f"{rule}/wallet", "onramp_wallet", wallet, methods=["GET", "POST"])
    bp.add_url_rule(f"{rule}/details", "onramp_details", details, methods=["GET", "POST"])
    bp.add_url_rule(f"{rule}/review", "onramp_review", review, methods=["GET"])
    bp.add_url_rule(f"{rule}/create", "onramp_create", create, methods=["POST"])
    bp.add_url_rule(f"{rule}/pay", "onramp_pay", pay, methods=["GET"])
    bp.add_url_rule(f"{rule}/pay/confirm", "onramp_confirm", confirm, methods=["POST"])
    bp.add_url_rule(f"{rule}/pay/otp", "onramp_otp", otp, methods=["POST"])
    bp.add_url_rule(f"{rule}/pay/retry", "onramp_retry_push", retry_push, methods=["POST"])
