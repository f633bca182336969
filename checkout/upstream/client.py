"""``UpstreamClient``: one method per upstream endpoint, keyword arguments in snake_case, typed results.

The methods only name the endpoint, spell the parameters the upstream's way (camelCase, ``None``
left out) and parse the answer; sending, signing, retrying and error mapping live in ``transport``.
"""
from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from decimal import Decimal, InvalidOperation
from typing import Any, TypeVar
from urllib.parse import quote

from ..errors import UpstreamBadResponse
from . import types as t
from .breaker import Breakers
from .signing import Credentials
from .transport import MAX_IN_FLIGHT, CallObserver, Timeout, Transport, new_session

T = TypeVar("T")
Amount = Decimal | int | float | str

MAX_PAGE_SIZE = 100

# Filters of the orders lists: the snake_case keyword and the upstream's query parameter.
ONRAMP_ORDER_FILTERS = {
    "network": "network", "address": "address", "user_phone_number": "userPhoneNumber",
    "user_email": "userEmail", "payment_channel": "paymentChannel",
    "buy_swap_status": "buySwapStatus", "withdrawal_status": "withdrawalStatus",
}
LEGACY_ORDER_FILTERS = {
    "wallet_type": "walletType", "wallet_address": "walletAddress",
    "user_phone_number": "userPhoneNumber", "user_email": "userEmail",
    "swap_provider": "swapProvider", "buy_swap_status": "buySwapStatus",
    "withdrawal_status": "withdrawalStatus",
}
# Both off-ramp variants share /api/offramp/orders: the channel-based filters plus the type-based
# variant's paymentType and offrampType.
OFFRAMP_ORDER_FILTERS = {
    "network": "network", "asset": "asset", "from_address": "fromAddress",
    "user_phone_number": "userPhoneNumber", "user_email": "userEmail", "hash": "hash",
    "country_iso_code": "countryIsoCode", "payment_channel": "paymentChannel",
    "order_params": "orderParams", "status": "status", "payment_type": "paymentType",
    "offramp_type": "offrampType",
}


def _amount(value: Amount) -> Decimal:
    """An amount as an exact Decimal, so that it goes out as a JSON number (never a string) and
    as plain digits in a query string."""
    if isinstance(value, bool):
        raise TypeError("an amount cannot be a boolean")
    try:
        number = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
    except InvalidOperation:
        raise ValueError(f"an amount must be a number, not {value!r}") from None
    if not number.is_finite():
        raise ValueError(f"an amount must be a finite number, not {value!r}")
    return number


def _check_limit(limit: int) -> int:
    if isinstance(limit, bool) or not isinstance(limit, int) or not 1 <= limit <= MAX_PAGE_SIZE:
        raise ValueError(f"limit must be an integer from 1 to {MAX_PAGE_SIZE}, not {limit!r}")
    return limit


def _filters(filters: Mapping[str, object], allowed: Mapping[str, str],
             endpoint: str) -> dict[str, object]:
    # A misspelt filter would otherwise be dropped silently and the list come back unfiltered.
    unknown = sorted(set(filters) - set(allowed))
    if unknown:
        raise TypeError(f"unknown filter(s) for {endpoint}: {', '.join(unknown)}")
    return {allowed[name]: value for name, value in filters.items()}


class UpstreamClient:
    """The upstream exchange service, called with the merchant's credentials.

    ``timeout`` is ``(connect, read)`` seconds; ``retries`` applies to GET requests only (see
    ``transport``). ``http`` is the one ``requests.Session``: mount adapters on it (the embedded
    sandbox does, via ``inprocess.mount_wsgi_app``). The session is shared by every thread that
    uses the client: its connection pool is thread-safe, and it keeps no cookies (the one part of a
    session that is not, and that would mix one shopper's state into another's requests).
    ``on_call`` is told of every attempt (see ``transport``: the app's metrics).

    ``timeouts`` gives ``(connect, read)`` per kind of call (``upstream.budget``: reference,
    price, read, write), over the defaults; ``timeout`` one pair for every kind instead.
    ``breakers`` refuse calls to a family of endpoints (a corridor's prices) while it keeps
    failing (``upstream.breaker``), and at most ``max_in_flight`` calls of the process wait on the
    upstream at once.
    """

    def __init__(self, base_url: str, *, client_id: str, client_secret: str | None = None,
                 timeout: Timeout | None = None, timeouts: Mapping[str, Timeout] | None = None,
                 retries: int = 3, on_call: CallObserver | None = None,
                 breakers: Breakers | None = None, max_in_flight: int = MAX_IN_FLIGHT) -> None:
        if not base_url or not base_url.startswith(("http://", "https://")):
            raise ValueError("base_url must be an http(s) URL")
        self.base_url = base_url.rstrip("/")
        self.http = new_session()
        self.transport = Transport(self.base_url, Credentials(client_id, client_secret),
                                   timeout=timeout, timeouts=timeouts, retries=retries,
                                   session=self.http, on_call=on_call, breakers=breakers,
                                   max_in_flight=max_in_flight)

    def __repr__(self) -> str:
        return f"UpstreamClient(base_url={self.base_url!r})"

    def close(self) -> None:
        self.transport.close()

    def __enter__(self) -> UpstreamClient:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- plumbing ---------------------------------------------------------------------------

    def _call(self, method: str, path: str, parse: Callable[[Any], T], *,
              params: Mapping[str, object] | None = None,
              body: Mapping[str, object] | None = None, endpoint: str | None = None) -> T:
        data = self.transport.request(method, path, params=params, body=body, endpoint=endpoint)
        try:
            return parse(data)
        except UpstreamBadResponse as exc:
            # The types know which field was wrong, not which call: add the call.
            if exc.method is None:
                exc.method, exc.path = method, path
            raise

    def _get(self, path: str, parse: Callable[[Any], T], **params: object) -> T:
        return self._call("GET", path, parse, params=params)

    def _post(self, path: str, parse: Callable[[Any], T], **body: object) -> T:
        return self._call("POST", path, parse, body=body)

    @staticmethod
    def _list(parse_item: Callable[[Any], T], type_name: str) -> Callable[[Any], list[T]]:
        return lambda data: t.list_of(data, parse_item, type_name)

    @staticmethod
    def _walk(fetch_page: Callable[[str | None], t.Page[T]]) -> Iterator[T]:
        cursor: str | None = None
        seen: set[str] = set()
        while True:
            page = fetch_page(cursor)
            yield from page.items
            if not page.items or not page.next_cursor:
                return
            if page.next_cursor in seen:
                # A cursor that comes round again would loop for ever.
                raise UpstreamBadResponse("the upstream returned the same page cursor twice")
            seen.add(page.next_cursor)
            cursor = page.next_cursor

    # -- on-ramp (spec 4.1) -----------------------------------------------------------------

    def onramp_best_offer(self, network: str, asset: str, currency: str, amount: Amount,
                          country_iso_code: str, payment_channel: str,
                          carrier_code: str | None = None,
                          sandbox_outcome: str | None = None) -> t.OnrampQuote:
        """The best quote; ``currency`` says whether ``amount`` is ``local`` or ``crypto``.

        ``sandbox_outcome`` (``sandboxOutcome``) forces the outcome of orders made from the quote;
        only the sandbox knows it, so leave it ``None`` against the real service.
        """
        return self._get("/api/onramp/best-offer", t.OnrampQuote.from_json, network=network,
                         asset=asset, currency=currency, amount=_amount(amount),
                         countryIsoCode=country_iso_code, paymentChannel=payment_channel,
                         carrierCode=carrier_code, sandboxOutcome=sandbox_outcome)

    def onramp_payment_channels(self) -> list[t.OnrampCountry]:
        return self._get("/api/onramp/payment-channels",
                         self._list(t.OnrampCountry.from_json, "OnrampCountry"))

    def onramp_limits(self, network: str, country_iso_code: str, payment_channel: str,
                      asset: str | None = None, carrier_code: str | None = None) -> t.Limits:
        return self._get("/api/onramp/limits", t.Limits.from_json, network=network, asset=asset,
                         countryIsoCode=country_iso_code, paymentChannel=payment_channel,
                         carrierCode=carrier_code)

    def onramp_assets(self) -> list[t.AssetPair]:
        return self._get("/api/onramp/assets", t.AssetPair.list_from_json)

    def probe(self) -> None:
        """Whether the upstream answers now (readiness): one cheap call (the on-ramp's assets),
        sent once and around the breakers, so that it tells of the upstream as it is, not of
        what the breakers remember; raises its error."""
        self.transport.request("GET", "/api/onramp/assets", probe=True)

    def onramp_order(self, order_id: str | None = None,
                     order_params: str | None = None) -> t.OnrampOrder:
        if order_id is None and order_params is None:
            raise ValueError("give order_id or order_params")
        return self._get("/api/onramp/order", t.OnrampOrder.from_json, orderId=order_id,
                         orderParams=order_params)

    def onramp_orders(self, limit: int, cursor: str | None = None,
                      **filters: object) -> t.Page[t.OnrampOrder]:
        """One page; filters: ``network, address, user_phone_number, user_email,
        payment_channel, buy_swap_status, withdrawal_status``."""
        params = _filters(filters, ONRAMP_ORDER_FILTERS, "onramp_orders")
        return self._get("/api/onramp/orders",
                         lambda data: t.Page.from_json(data, t.OnrampOrder.from_json),
                         cursor=cursor, limit=_check_limit(limit), **params)

    def iter_onramp_orders(self, page_size: int = MAX_PAGE_SIZE,
                           **filters: object) -> Iterator[t.OnrampOrder]:
        """Every matching order, page after page, until the upstream gives no next cursor."""
        _check_limit(page_size)
        return self._walk(lambda cursor: self.onramp_orders(page_size, cursor, **filters))

    def onramp_create_order(self, quote_id: str, network: str, asset: str, amount: Amount,
                            currency: str, email: str, user_ip: str, address: str | None = None,
                            memo: str | None = None, order_params: str | None = None,
                            redirect_url: str | None = None,
                            extra_fields: Mapping[str, object] | None = None,
                            webhook_url: str | None = None) -> t.OnrampOrder:
        """Create the order from a quote. Never retried: on ``UpstreamUnavailable`` the order may
        exist, so look it up by ``order_params`` before creating another."""
        return self._post("/api/onramp/order/create", t.OnrampOrder.from_json, quoteId=quote_id,
                          network=network, asset=asset, amount=_amount(amount), currency=currency,
                          email=email, userIp=user_ip, address=address, memo=memo,
                          orderParams=order_params, redirectUrl=redirect_url,
                          extraFields=dict(extra_fields) if extra_fields is not None else None,
                          webhookUrl=webhook_url)

    def onramp_submit_otp(self, order_id: str, otp: str) -> t.OnrampOrder:
        """Prove the user's phone for an ``otp_stk_push`` order; returns the order afterwards."""
        data = self.transport.request("POST", "/api/onramp/order/otp",
                                      body={"orderId": order_id, "otp": otp}, expect_json=False)
        return self._order_after_action(data, order_id)

    def onramp_confirm_order(self, order_id: str) -> None:
        """Tell the upstream the user says the money has been sent. It answers with the text
        ``order confirmed`` (or JSON); any 2xx is success."""
        self.transport.request("POST", "/api/onramp/order/confirm", body={"orderId": order_id},
                               expect_json=False)

    def onramp_retry_push(self, order_id: str) -> t.OnrampOrder:
        """Send the STK push to the user's phone again (the ``stk_push`` intermediate action)."""
        data = self.transport.request("POST", "/api/onramp/order/retry",
                                      body={"orderId": order_id}, expect_json=False)
        return self._order_after_action(data, order_id)

    def _order_after_action(self, data: object, order_id: str) -> t.OnrampOrder:
        # The answer of these actions is not specified: use it when it is the order, otherwise
        # read the order (a GET, safe to repeat).
        if isinstance(data, Mapping) and (data.get("_id") or data.get("orderId")):
            try:
                return t.OnrampOrder.from_json(data)
            except UpstreamBadResponse:
                pass
        return self.onramp_order(order_id=order_id)

    # -- legacy on-ramp (spec 4.2) ----------------------------------------------------------

    def legacy_assets(self) -> list[t.AssetPair]:
        return self._get("/api/pay-widget-merchant/assets", t.AssetPair.list_from_json)

    def legacy_order(self, order_id: str | None = None,
                     order_params: str | None = None) -> t.LegacyOrder:
        if order_id is None and order_params is None:
            raise ValueError("give order_id or order_params")
        return self._get("/api/pay-widget-merchant/order", t.LegacyOrder.from_json,
                         orderId=order_id, orderParams=order_params)

    def legacy_orders(self, limit: int, cursor: str | None = None,
                      **filters: object) -> t.Page[t.LegacyOrder]:
        """One page; filters: ``wallet_type, wallet_address, user_phone_number, user_email,
        swap_provider, buy_swap_status, withdrawal_status``."""
        params = _filters(filters, LEGACY_ORDER_FILTERS, "legacy_orders")
        return self._get("/api/pay-widget-merchant/orders",
                         lambda data: t.Page.from_json(data, t.LegacyOrder.from_json),
                         cursor=cursor, limit=_check_limit(limit), **params)

    def iter_legacy_orders(self, page_size: int = MAX_PAGE_SIZE,
                           **filters: object) -> Iterator[t.LegacyOrder]:
        _check_limit(page_size)
        return self._walk(lambda cursor: self.legacy_orders(page_size, cursor, **filters))

    def legacy_price(self, network: str, asset: str, currency: str, amount: Amount, country: str,
                     provider: str, carrier_id: str | None = None) -> t.LegacyPrice:
        """``currency`` is ``usdc`` or ``local``; ``country`` an ISO code."""
        return self._get("/api/pay-widget-merchant/price", t.LegacyPrice.from_json,
                         network=network, asset=asset, currency=currency, amount=_amount(amount),
                         country=country, provider=provider, carrierId=carrier_id)

    def legacy_providers(self, include_limits: bool = True,
                         network: str | None = None) -> list[t.LegacyProviderCountry]:
        return self._get("/api/pay-widget-merchant/providers",
                         self._list(t.LegacyProviderCountry.from_json, "LegacyProviderCountry"),
                         includeLimits=include_limits, network=network)

    def legacy_limits(self, network: str, country: str, provider: str, asset: str | None = None,
                      carrier_id: str | None = None) -> t.LegacyLimits:
        return self._get("/api/pay-widget-merchant/limits", t.LegacyLimits.from_json,
                         network=network, asset=asset, country=country, provider=provider,
                         carrierId=carrier_id)

    # -- off-ramp, channel-based (spec 4.3) -------------------------------------------------

    def offramp_best_offer(self, amount: Amount, currency: str, country_iso_code: str,
                           payment_channel: str, network: str, asset: str,
                           sandbox_outcome: str | None = None) -> t.OfframpQuote:
        return self._get("/api/offramp/best-offer", t.OfframpQuote.from_json, amount=_amount(amount),
                         currency=currency, countryIsoCode=country_iso_code,
                         paymentChannel=payment_channel, network=network, asset=asset,
                         sandboxOutcome=sandbox_outcome)

    def offramp_payment_channels(self) -> list[t.OfframpChannelCountry]:
        return self._get("/api/offramp/payment-channels",
                         self._list(t.OfframpChannelCountry.from_json, "OfframpChannelCountry"))

    def offramp_limits(self, payment_channel: str, country_iso_code: str, network: str,
                       asset: str) -> t.Limits:
        return self._get("/api/offramp/limits", t.Limits.from_json,
                         paymentChannel=payment_channel, countryIsoCode=country_iso_code,
                         network=network, asset=asset)

    def offramp_assets(self) -> list[t.AssetPair]:
        return self._get("/api/offramp/assets", t.AssetPair.list_from_json)

    def offramp_order(self, id: str) -> t.OfframpOrder:
        if not id:
            raise ValueError("an order id is required")
        # The id is a path segment: quote it so that '/' or '?' in it cannot change the endpoint.
        return self._call("GET", f"/api/offramp/order/{quote(id, safe='')}",
                          t.OfframpOrder.from_json, endpoint="/api/offramp/order/{id}")

    def offramp_orders(self, limit: int, cursor: str | None = None,
                       **filters: object) -> t.Page[t.OfframpOrder]:
        """One page; filters: ``network, asset, from_address, user_phone_number, user_email,
        hash, country_iso_code, payment_channel, order_params, status, payment_type,
        offramp_type``."""
        params = _filters(filters, OFFRAMP_ORDER_FILTERS, "offramp_orders")
        return self._get("/api/offramp/orders",
                         lambda data: t.Page.from_json(data, t.OfframpOrder.from_json),
                         cursor=cursor, limit=_check_limit(limit), **params)

    def iter_offramp_orders(self, page_size: int = MAX_PAGE_SIZE,
                            **filters: object) -> Iterator[t.OfframpOrder]:
        _check_limit(page_size)
        return self._walk(lambda cursor: self.offramp_orders(page_size, cursor, **filters))

    # -- off-ramp, type-based (spec 4.4, upstream-notes 5) -------------------------------------

    def offramp_typed_best_offer(self, amount: Amount, currency: str, country: str, type: str,
                                 network: str, asset: str,
                                 sandbox_outcome: str | None = None) -> t.OfframpQuote:
        return self._get("/api/offramp/best-offer", t.OfframpQuote.from_json, amount=_amount(amount),
                         currency=currency, country=country, type=type, network=network,
                         asset=asset, sandboxOutcome=sandbox_outcome)

    def offramp_countries(self) -> list[t.OfframpTypeCountry]:
        return self._get("/api/offramp/countries",
                         self._list(t.OfframpTypeCountry.from_json, "OfframpTypeCountry"))

    def offramp_wallets(self) -> list[t.AssetPair]:
        return self._get("/api/offramp/wallets", t.AssetPair.list_from_json)

    def offramp_typed_limits(self, type: str, country: str) -> t.Limits:
        return self._get("/api/offramp/limits", t.Limits.from_json, type=type, country=country)

    def offramp_validate_fields(self, offer_id: str,
                                required_fields: Mapping[str, object]) -> list[t.FieldDetail]:
        """What the upstream found for the user's fields (e.g. the account holder's name)."""
        return self._post("/api/offramp/validate-fields", t.field_details_from_json,
                          offerId=offer_id,
                          requiredFields=dict(required_fields))

    def offramp_create_order(self, offer_id: str, payment_type: str, network: str, asset: str,
                             address: str, currency: str, amount: Amount, ip: str | None = None,
                             order_params: str | None = None,
                             required_fields: Mapping[str, object] | None = None,
                             webhook_url: str | None = None) -> t.OfframpOrder:
        """Create a type-based off-ramp order. Never retried (see ``onramp_create_order``).
        ``webhook_url`` overrides the merchant's global webhook URL for this order (spec 6.1)."""
        return self._post("/api/offramp/create-order", t.OfframpOrder.from_json,
                          offerId=offer_id, paymentType=payment_type, network=network,
                          asset=asset, address=address, currency=currency, amount=_amount(amount), ip=ip,
                          orderParams=order_params,
                          requiredFields=(dict(required_fields) if required_fields is not None
                                          else None),
                          webhookUrl=webhook_url)

    def offramp_confirm_order(self, order_id: str, hash: str) -> t.OfframpOrder:
        """Hand over the user's transaction hash; accepted only while the order is ``initiated``."""
        return self._post("/api/offramp/confirm-order", t.OfframpOrder.from_json,
                          orderId=order_id, hash=hash)

    # -- utility (spec 4.5) -----------------------------------------------------------------

    def check_address(self, address: str) -> bool:
        """Whether the wallet address has been used in the service before."""
        return self._post("/api/util/check-address", t.address_used_from_json, address=address)

    def util_countries(self) -> list[t.UtilCountry]:
        return self._get("/api/util/countries", self._list(t.UtilCountry.from_json, "UtilCountry"))

    def util_carriers(self) -> list[t.CarrierCountry]:
        return self._get("/api/util/carriers",
                         self._list(t.CarrierCountry.from_json, "CarrierCountry"))

    def util_assets(self) -> list[t.UtilAsset]:
        return self._get("/api/util/assets", self._list(t.UtilAsset.from_json, "UtilAsset"))

    # -- user (spec 4.6; disabled by default upstream: FeatureNotAvailable) -------------------

    def user_tokens(self, email: str, country_iso_code: str) -> t.UserTokens:
        return self._post("/api/user/tokens", t.UserTokens.from_json, email=email,
                          countryIsoCode=country_iso_code)

    def user_kyc_status(self, email: str, country_iso_code: str) -> t.UserKycStatus:
        return self._post("/api/user/kyc/status", t.UserKycStatus.from_json, email=email,
                          countryIsoCode=country_iso_code)

    def user_kyc_submit(self, email: str, document_id: str,
                        user_fields: Mapping[str, object]) -> bool:
        return self._post("/api/user/kyc/submit",
                          lambda data: t.success_from_json(data, "UserKycSubmit"), email=email,
                          documentId=document_id, userFields=dict(user_fields))

    # -- KYC (spec 4.7) ---------------------------------------------------------------------

    def kyc_state(self, *, phone_number: str, email: str | None = None) -> t.KycState:
        """Where the user with this phone number stands. Spec 4.7 marks ``phoneNumber`` required in
        one place and optional in another; the sandbox (strict) requires it, so the client does
        too rather than offer a call that fails there. ``email`` is optional."""
        if not phone_number:
            raise ValueError("phone_number is required")
        return self._get("/api/kyc/state", t.KycState.from_json, phoneNumber=phone_number,
                         email=email)

    def kyc_submit(self, phone: str, id_type: str, user_fields: Mapping[str, object]) -> bool:
        return self._post("/api/kyc/submit", lambda data: t.success_from_json(data, "KycSubmit"),
                          phone=phone, idType=id_type, userFields=dict(user_fields))


__all__ = ["UpstreamClient", "MAX_PAGE_SIZE"]
