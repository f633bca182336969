"""The amount step of every flow: country, channel, carrier, network, asset and amount, priced live.

The same page for buying and selling: a flow gives its catalog (``checkout.reference``), what an
amount may be in, and its words (:class:`AmountTexts`). Selects refresh the form through htmx
(``GET`` with the draft, nothing saved); the amount field asks ``/quote`` as the user types and
shows the whole price; the POST checks everything against the corridor's live limits and fixes the
offer with one quote. Without JavaScript, neither follows the user: an "Update price" button (in
``<noscript>``) posts the draft and gets the page back with its choices and price, nothing saved.
"""
from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from decimal import Decimal, InvalidOperation
from functools import partial
from typing import Any

from babel import Locale
from flask import request
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from ..errors import UpstreamError, UpstreamRateLimited, UpstreamRejected, UpstreamUnavailable
from ..forms import FormResult, amount_bounds, clean_amount, clean_corridor
from ..htmx import htmx_redirect, is_htmx, render
from ..i18n import by_name, format_crypto, format_money, money_locale
from ..journey import quotes
from ..journey.flow import Flow
from ..meanwhile import meanwhile
from ..names import asset_name, network_name
from ..ratelimits import limited
from ..sessions import CheckoutSession
from ..state import get_state
from ..typed_amounts import CRYPTO_PLACES, USD_PLACES, amount_for_input, currency_places
from ..upstream_text import country_name
from .blueprint import bp
from .context import session_route
from .journey import StepPage, StepRefused, form_page, keep_form, save_before_order, step_url
from .pages import UPSTREAM_WAIT, too_many_requests_text

CORRIDOR_FIELDS = ("countryIsoCode", "paymentChannel", "carrierCode", "network", "asset")
UPDATE = "update"           # the name of the no-JavaScript "Update price" button
NO_PRICE: Mapping[str, Any] = {"message": None, "breakdown": None, "retry": False}


@dataclass(frozen=True)
class AmountTexts:
    """The words of a flow's amount page (lazy gettext strings)."""

    heading: Any
    # The heading for a session that is not the usual case (a merchant-funded payout), or None.
    heading_for: Callable[[CheckoutSession], Any] | None
    channel_label: Any                     # "How you pay" / "How you get paid"
    channel_error: Any
    channel_name: Callable[[str | None], str]
    amount_labels: Mapping[str, Any]       # currency -> label with %(unit)s
    amount_labels_bare: Mapping[str, Any]  # currency -> label before the unit is known
    currency_names: Mapping[str, Any]      # currency -> what the switch calls it, %(unit)s
    currency_error: Any                    # "Choose local money or crypto."


def typing_locale(country: str | None) -> Locale:
    """How the user writes numbers: the money locale of the country being chosen (``en_ZA``
    writes 1 500,5 where plain ``en`` writes 1,500.5), else the page's language."""
    return money_locale(country)


def amount_places(flow: Flow, values: Mapping[str, Any]) -> dict[str, int]:
    """Decimals an amount may carry, by what it is in (local money, US dollars, the asset)."""
    places = {"usd": USD_PLACES, "crypto": CRYPTO_PLACES}
    country = flow.catalog().country(values.get("countryIsoCode"))
    if country is not None:
        places["local"] = currency_places(country.currency)
    return places


class AmountStep(StepPage):
    """Step 1 of every flow (named ``choose``: its URL is ``/s/<id>/choose``)."""

    name = "choose"

    def __init__(self, flow_name: str, texts: AmountTexts, *, wallet_step: str,
                 fields_step: str, after_fields: tuple[str, ...] = ()) -> None:
        self.flow_name = flow_name
        self.texts = texts
        self.wallet_step = wallet_step          # kept when the network does not change
        self.fields_step = fields_step          # kept when the offer's form does not change
        self.after_fields = after_fields        # steps that hold only with the fields' answers

    # -- values

    def draft(self, session: CheckoutSession, form: Mapping[str, Any]) -> dict[str, Any]:
        """What the form shows: the submitted draft, else what the session holds."""
        values: dict[str, Any] = {}
        for name in CORRIDOR_FIELDS + ("currency", "amount"):
            if name in form and not session.is_locked(name):
                values[name] = form.get(name)
            else:
                values[name] = session.value(name)
        values["currency"] = values.get("currency") or "local"
        if "amount" not in form or session.is_locked("amount"):
            # Saved as a plain number ("1500.5"): shown the way this user types it back
            # ("1500,5" in French), so sending the page again is not a question.
            values["amount"] = self.amount_text(values)
        return values

    @staticmethod
    def amount_text(values: Mapping[str, Any]) -> str | None:
        saved = values.get("amount")
        if saved is None or saved == "":
            return None
        try:
            return amount_for_input(Decimal(str(saved)),
                                    typing_locale(values.get("countryIsoCode")))
        except (InvalidOperation, ValueError):
            return str(saved)

    def given(self, session: CheckoutSession) -> dict[str, Any] | None:
        values = self.draft(session, {})
        needed = ("countryIsoCode", "paymentChannel", "network", "asset", "amount")
        if any(not values.get(name) for name in needed):
            return None
        channel = self.flow.catalog().channel(values["countryIsoCode"], values["paymentChannel"])
        if channel is not None and channel.requires_carrier and not values.get("carrierCode"):
            return None
        return {k: v for k, v in values.items() if v is not None}

    def corridor(self, values: Mapping[str, Any]) -> dict[str, Any] | None:
        """What the corridor's limits are asked with, once the draft names one the catalog
        offers (so that no key a user typed is ever kept in the cache); else None."""
        catalog = self.flow.catalog()
        channel = catalog.channel(values.get("countryIsoCode"), values.get("paymentChannel"))
        if channel is None or not catalog.supports(values.get("network"), values.get("asset")):
            return None
        carrier = values.get("carrierCode") if channel.requires_carrier else None
        if channel.requires_carrier and channel.carrier(carrier) is None:
            return None
        return {"network": values["network"], "asset": values["asset"],
                "country": values["countryIsoCode"], "channel": channel.code, "carrier": carrier}

    def limits(self, values: Mapping[str, Any]) -> Any | None:
        corridor = self.corridor(values)
        return self.flow.catalog().limits(**corridor) if corridor is not None else None

    def show_amount(self, values: Mapping[str, Any]) -> Callable[[Decimal, str], str]:
        """How a limit is written in a message: as local money, US dollars or the asset."""
        country = self.flow.catalog().country(values.get("countryIsoCode"))
        locale = money_locale(values.get("countryIsoCode"))

        def show(number: Decimal, currency: str) -> str:
            if currency == "local" and country is not None:
                return format_money(number, country.currency, locale)
            if currency == "usd":
                return format_money(number, "USD", locale)
            return format_crypto(number, asset_name(values.get("asset")), locale)

        return show

    # -- checking and saving

    def clean(self, session: CheckoutSession, form: Mapping[str, Any]) -> FormResult:
        if form.get("amount_suggested"):
            # One of the answers the page offered to its "Did you mean ...?" was tapped.
            form = {**form, "amount": form["amount_suggested"]}
        catalog = self.flow.catalog()
        result = clean_corridor(form, session, catalog)
        if result.errors.get("paymentChannel"):
            result.errors["paymentChannel"] = str(self.texts.channel_error)
        limits = self.limits(result.values) if result.ok else None
        country = result.values.get("countryIsoCode")
        amount = clean_amount(form, session, locale=typing_locale(country),
                              places=amount_places(self.flow, result.values),
                              currencies=self.flow.currencies, limits=limits,
                              currency_error=str(self.texts.currency_error),
                              check_limits=result.ok, show=self.show_amount(result.values))
        result.values.update(amount.values)
        result.errors.update(amount.errors)
        result.facts.update(amount.facts)
        return result

    def save(self, session: CheckoutSession, result: FormResult, *,
             by_user: bool) -> CheckoutSession:
        params = quotes.normalise(self.flow.quote_keys, result.values)
        try:
            record = self.flow.request_quote(params)
        except UpstreamRateLimited:
            raise                   # "not now", not "no": the 429 page says when (views.pages)
        except UpstreamRejected:
            raise StepRefused(FormResult.error("amount", _(
                "We could not get a price for this amount. Check it against the limits and try "
                "again."))) from None
        except UpstreamError:
            raise StepRefused(FormResult(form_error=_(
                "Our payment partner is not answering right now. Please try again in a "
                "moment."))) from None
        values = result.values

        def change(fresh: CheckoutSession) -> None:
            old = fresh.quote or {}
            keep = []
            if values.get("network") == fresh.value("network"):
                keep.append(self.wallet_step)    # the address was checked for this network
            same_form = (record["required_fields"] == old.get("required_fields") and all(
                values.get(k) == fresh.value(k)
                for k in ("countryIsoCode", "paymentChannel", "carrierCode")))
            if same_form and record["required_fields"]:
                keep.append(self.fields_step)    # same form, same corridor: the answers hold
                keep.extend(self.after_fields)
            else:
                fresh.fields = {}
            fresh.answer(values)
            fresh.quote = record
            self.flow.journey.complete(fresh, self.name, keep=keep, by_user=by_user)

        return save_before_order(session, change)

    # -- the page

    def preview(self, session: CheckoutSession, form: Mapping[str, Any]) -> Response | None:
        """"Update price" (shown only without JavaScript, where nothing follows the typing): the
        page again with the draft, the choices that go with it and its price; nothing saved."""
        if UPDATE not in form:
            return None
        draft = {k: v for k, v in form.items() if k != UPDATE}
        # Shown by a redirect to this step's page, like a refused form: Back from a later step
        # then finds a page, not a post to send again.
        keep_form(session, self.name, draft)
        # Once there is an amount, the page opens at its price (without script the frame does
        # not follow the form: the price would be below the fold of a phone's screen).
        anchor = "#quote" if draft.get("amount") else ""
        return htmx_redirect(step_url(session, self.name) + anchor)

    def show_kept(self, session: CheckoutSession, form: dict[str, Any],
                  result: FormResult | None) -> Response:
        if result is None:      # a draft shown with its price (above), or seen again
            return self.render(session, form, price=shown_price(self, session, form))
        return super().show_kept(session, form, result)

    def render(self, session: CheckoutSession, form: Mapping[str, Any] | None = None,
               result: FormResult | None = None, *,
               price: Mapping[str, Any] | None = None) -> Response:
        catalog = self.flow.catalog()
        catalog.preload()
        values = self.draft(session, form or {})
        country = catalog.country(values.get("countryIsoCode"))
        # A country with one way to pay (or a channel with one mobile network) has it chosen: a
        # choice of one is a tap the user would have to find to go on. Also when the draft names
        # one of the country chosen before (htmx sends the whole form when the country changes).
        if country is not None and len(country.channels) == 1 \
                and country.channel(values.get("paymentChannel")) is None \
                and not session.is_locked("paymentChannel"):
            values["paymentChannel"] = country.channels[0].code
        channel = catalog.channel(values.get("countryIsoCode"), values.get("paymentChannel"))
        if channel is not None and len(channel.carriers) == 1 \
                and channel.carrier(values.get("carrierCode")) is None \
                and not session.is_locked("carrierCode"):
            values["carrierCode"] = channel.carriers[0].code
        corridor = self.corridor(values)
        try:
            limits = catalog.limits(**corridor) if corridor is not None else None
        except UpstreamUnavailable:
            limits = None           # never read, and the upstream does not answer: the form
            corridor = None         # without them (its price says it is not available)
            out_of_date = True
        else:
            # The choices are a copy kept past its time, the upstream not answering: said so
            # above the form, rather than a "try again" page in place of it.
            out_of_date = catalog.out_of_date(corridor)
        low, high = amount_bounds(limits, values["currency"]) if limits is not None \
            else (None, None)
        assets = catalog.assets(values.get("network")) if values.get("network") \
            else catalog.assets()
        options = {
            # In the order of the names shown, not of the upstream's English ones.
            "countries": by_name([(c.code, country_name(c.code, c.name))
                                  for c in catalog.countries()], lambda option: option[1]),
            "channels": [(c.code, self.texts.channel_name(c.code), c.description)
                         for c in (country.channels if country else ())],
            "carriers": [(c.code, c.name) for c in (channel.carriers if channel else ())],
            "networks": [(n, network_name(n)) for n in catalog.networks()],
            "assets": [(a, asset_name(a)) for a in assets],
        }
        units = {"local": country.currency if country else "", "usd": "USD",
                 "crypto": asset_name(values.get("asset")) if values.get("asset") else ""}
        return render("checkout/journey/amount.html", "checkout/journey/_amount.html",
                      values=values, units=units, errors=(result.errors if result else {}),
                      form_error=(result.form_error if result else None), options=options,
                      country=country, channel=channel, limits=limits, low=low, high=high,
                      texts=self.texts, currencies=self.flow.currencies, step=self.name,
                      suggestions=(result.facts.get("amount_suggestions") if result else None),
                      heading=(self.texts.heading_for(session) if self.texts.heading_for
                               else None) or self.texts.heading,
                      money_locale=money_locale(values.get("countryIsoCode")), price=price,
                      out_of_date=out_of_date)

    def get(self, session: CheckoutSession) -> Response:
        if is_htmx() and request.args:
            # A select changed: htmx asks for the form again with the draft, nothing is saved.
            draft = request.args.to_dict()
            if request.headers.get("HX-Trigger-Name") == "currency" \
                    and not session.is_locked("amount"):
                # 1500 KES is not 1500 US dollars: a number typed in the other unit is cleared.
                draft["amount"] = ""
            return self.render(session, draft)
        return super().get(session)


def shown_price(step: AmountStep, session: CheckoutSession,
                form: Mapping[str, Any]) -> dict[str, Any]:
    """What the price under the amount shows for a draft of the form: the whole breakdown, or
    why there is none (``message``; ``retry`` when asking again may help; ``retry_after``
    seconds when the upstream asked us to wait). Saves nothing. Identical drafts within a few
    seconds are priced once (``quotes.shown_quote``)."""
    none = NO_PRICE
    flow = step.flow
    flow.catalog().preload()
    corridor = clean_corridor(form, session, flow.catalog())
    if not corridor.ok or not (form.get("amount") or session.is_locked("amount")):
        return dict(none)

    def amount_within(limits: Any | None, *, check_limits: bool = True) -> FormResult:
        return clean_amount(form, session, locale=typing_locale(corridor.values.get(
                                "countryIsoCode")),
                            places=amount_places(flow, corridor.values),
                            currencies=flow.currencies,
                            currency_error=str(step.texts.currency_error), limits=limits,
                            check_limits=check_limits, show=step.show_amount(corridor.values))

    def refused(amount: FormResult) -> dict[str, Any]:
        return {**none, "message": amount.errors.get("amount") or amount.errors.get("currency")}

    typed = amount_within(None, check_limits=False)
    if not typed.ok:
        return refused(typed)
    params = quotes.normalise(flow.quote_keys, {**corridor.values, **typed.values})
    ask = partial(quotes.shown_quote, get_state().quote_cache, flow, params)
    limits_args = step.corridor(corridor.values)
    if limits_args is None or flow.catalog().knows_limits(**limits_args):
        amount = amount_within(step.limits(corridor.values))
        return priced(session, flow, params, ask) if amount.ok else refused(amount)
    # The corridor's limits are not known yet (the first price of a session, mostly): they are
    # asked at the same time as the price, so that the user waits one round trip, not two. The
    # price is shown only if the amount is within them (else it is dropped: only shown, never
    # used for an order, it changes nothing upstream).
    with meanwhile(ask) as price:
        amount = amount_within(step.limits(corridor.values))
        return priced(session, flow, params, price) if amount.ok else refused(amount)


def priced(session: CheckoutSession, flow: Flow, params: Mapping[str, Any],
           fetch: Callable[[], dict[str, Any]]) -> dict[str, Any]:
    """The price of ``fetch()``'s quote record, or why there is none (see :func:`shown_price`)."""
    none = NO_PRICE
    try:
        record = fetch()
    except UpstreamRateLimited as limited:
        # Said in place of the price, with when to try again; nothing asks again by itself.
        wait = limited.retry_after or UPSTREAM_WAIT
        return {**none, "message": too_many_requests_text(wait, upstream=True),
                "retry_after": wait}
    except UpstreamRejected:
        return {**none, "message": _(
            "We could not get a price for this amount. Check it against the limits.")}
    except UpstreamError:
        return {**none, "retry": True, "message": _("The price is not available right now.")}
    return {**none, "breakdown": flow.shown_breakdown(session, record),
            "money_locale": money_locale(params.get("countryIsoCode"))}


@bp.get("/s/<session_id>/quote", endpoint="quote")
@limited("quote")
@session_route
def live_quote(session: CheckoutSession) -> Response:
    """The price breakdown for what is typed so far (htmx, debounced); saves nothing."""
    template = "checkout/journey/_quote.html"
    step = form_page(session, "choose")
    if session.order_id or not isinstance(step, AmountStep):
        return render(template, template, message=None, breakdown=None)
    price = shown_price(step, session, request.args.to_dict())
    response = render(template, template, **price)
    if price.get("retry_after"):
        response.status_code = 429          # swapped all the same (base.html's htmx config)
        response.headers["Retry-After"] = str(math.ceil(price["retry_after"]))
    return response
