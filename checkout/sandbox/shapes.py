"""JSON shapes of sandbox orders: on-ramp (spec 2.4), legacy (2.5), off-ramp (2.7), webhook (6.2).

An order is stored once; each family's endpoints and the webhook read it through these functions, so
the numbers a merchant sees in a list, a single order and a webhook can never disagree.
"""
from __future__ import annotations

from typing import Any

from . import transfer
from .orders import LEGACY_STATUS, Order, OrderStore, deposit_factor, iso

ONRAMP_FEE_FIELDS = ("feePercent", "feePercentService", "feePercentPartner", "feeAmountUsd",
                     "feeAmountLocalCurrency", "feeAmountUsdService", "feeAmountLocalCurrencyService",
                     "feeAmountUsdPartner", "feeAmountLocalCurrencyPartner", "gasAmountUsd",
                     "gasAmountLocalCurrency")

# Notes 4, "Sandbox mapping": order status -> webhook status.
WEBHOOK_STATUS = {
    "swap_initiated": "deposit_awaiting", "swap_buyer_confirmed": "deposit_validating",
    "swap_buyer_rejected": "deposit_canceled", "swap_expired": "deposit_expired",
    "swap_seller_rejected": "deposit_invalid", "swap_seller_confirmed": "deposit_successful",
    "pending": "payout_pending", "complete": "payout_successful", "failed": "payout_failed",
    "initiated": "deposit_awaiting", "awaiting_transaction_confirmation": "deposit_validating",
    "validating_transaction": "deposit_validating", "transaction_failed": "deposit_invalid",
    "transaction_invalid": "deposit_invalid", "expired": "deposit_expired",
    "cancelled": "deposit_canceled", "transaction_confirmed": "deposit_successful",
    "offramp_pending": "payout_pending", "offramp_retry": "payout_pending",
    "offramp_success": "payout_successful", "offramp_failed": "payout_failed",
    "refunding": "refund_pending", "refunded": "refund_successful", "refund_failed": "refund_failed",
}

# Statuses at which the user's deposit has reached the service (so its real amount is known).
_ONRAMP_DEPOSIT_SEEN = frozenset({"swap_seller_rejected", "swap_seller_confirmed", "pending",
                                  "complete", "failed"})
_OFFRAMP_DEPOSIT_SEEN = frozenset({"validating_transaction", "transaction_confirmed",
                                   "transaction_invalid", "offramp_pending", "offramp_success",
                                   "offramp_failed", "offramp_retry", "refunding", "refunded",
                                   "refund_failed"})


def _num(value: Any) -> float:
    return float(value) if value is not None else 0.0


# -- on-ramp --------------------------------------------------------------------------------------

def onramp_json(store: OrderStore, order: Order) -> dict[str, Any]:
    data = order.data
    out: dict[str, Any] = {"_id": order.id, "orderId": order.id, "status": order.status,
                           "date": iso(order.created_at), "createdAt": iso(order.created_at),
                           "updatedAt": iso(order.updated_at)}
    for key in ("phoneNumber", "email", "localCurrencyAmount", "currencyIsoCode", "countryIsoCode",
                "paymentChannel", "amount", "amountCrypto", "network", "asset", "address", "memo",
                "hash", "orderParams", "carrierId", "redirectUrl", "expiresAt",
                *ONRAMP_FEE_FIELDS):
        if data.get(key) is not None:
            out[key] = data[key]
    out["resumeUrl"] = data.get("resumeUrl")
    out["transferInstructions"] = transfer.instructions(store, order)
    return out


def legacy_status(order: Order) -> tuple[str, str | None]:
    return LEGACY_STATUS[order.status]


def legacy_json(order: Order) -> dict[str, Any]:
    """An on-ramp order as the pay-widget family shows it (spec 2.5)."""
    data = order.data
    buy_status, withdrawal_status = legacy_status(order)
    withdrawal = None
    if withdrawal_status is not None:
        withdrawal = {"_id": data["withdrawalId"], "status": withdrawal_status,
                      "withdrawAmount": data["withdrawAmountUsd"],
                      "withdrawCryptoAmount": data["amountCrypto"],
                      "transactionHash": data.get("hash")}
    return {
        "_id": order.id, "walletType": data["network"], "asset": data["asset"],
        "walletAddress": data.get("address"), "feePercent": data["feePercent"],
        "serviceFeePercent": data["feePercentService"], "partnerFeePercent": data["feePercentPartner"],
        "gasUsdAmount": data["gasAmountUsd"], "merchantId": data["merchantId"],
        "createdAt": iso(order.created_at),
        "buySwap": {
            "_id": data["buySwapId"], "buyerUserPhone": data.get("phoneNumber"),
            "buyerUserEmail": data.get("email"), "sellerUserPhone": data["sellerPhone"],
            "amount": round(_num(data["localCurrencyAmount"]) * 100),
            "airtimeAmount": data["localCurrencyAmount"] if data["paymentChannel"] == "airtime" else 0,
            "status": buy_status, "provider": data["provider"], "expiresAt": data["expiresAt"],
            "createdAt": iso(order.created_at), "buyerConfirmedAt": data.get("buyerConfirmedAt"),
            "countryIsoCode": data["countryIsoCode"],
        },
        "withdrawal": withdrawal,
        "feeAmount": data["feeAmountUsd"], "localCurrencyFeeAmount": data["feeAmountLocalCurrency"],
        "serviceFeeAmount": data["feeAmountUsdService"],
        "localCurrencyServiceFeeAmount": data["feeAmountLocalCurrencyService"],
        "partnerFeeAmount": data["feeAmountUsdPartner"],
        "localCurrencyPartnerFeeAmount": data["feeAmountLocalCurrencyPartner"],
        "networkFeeAmount": data["gasAmountUsd"],
        "localCurrencyNetworkFeeAmount": data["gasAmountLocalCurrency"],
        "resumeUrl": data.get("resumeUrl"),
    }


# -- off-ramp -------------------------------------------------------------------------------------

def listed_history(history: list[dict[str, str]]) -> list[dict[str, str]]:
    """``statusHistory`` as list responses show it: with the duplicates spec 2.7 warns of.

    Two parts of the upstream record the hash-received status: the API when confirm-order brings
    the hash, and the chain watcher when it picks the transaction up. Lists read the raw log, so an
    ``awaiting_transaction_confirmation`` that the watcher moved on to ``validating_transaction``
    appears twice in a row, the second time stamped when the watcher took it (the time of the
    ``validating_transaction`` entry). Single-order reads show the cleaned history.
    """
    shown: list[dict[str, str]] = []
    for entry, following in zip(history, history[1:], strict=False):
        shown.append(dict(entry))
        if (entry["status"], following["status"]) == ("awaiting_transaction_confirmation",
                                                       "validating_transaction"):
            shown.append({"status": entry["status"], "changedAt": following["changedAt"]})
    shown.extend(dict(entry) for entry in history[-1:])
    return shown


def offramp_json(order: Order, *, listed: bool = False) -> dict[str, Any]:
    """An off-ramp order (spec 2.7); ``listed``: as ``GET /api/offramp/orders`` shows it."""
    data = order.data
    history = listed_history(order.history) if listed else [dict(e) for e in order.history]
    out: dict[str, Any] = {"_id": order.id, "status": order.status,
                           "createdAt": iso(order.created_at), "updatedAt": iso(order.updated_at),
                           "statusHistory": history}
    for key in ("offerId", "paymentType", "offrampType", "network", "asset", "paymentChannel",
                "exchangeRate", "cashout", "fromAddress", "toAddress", "expiresAt", "hash",
                "requiredFields", "countryIsoCode", "currencyIsoCode", "offerRequiredFields",
                "userPhoneNumber", "userEmail", "orderParams"):
        if data.get(key) is not None:
            out[key] = data[key]
    return out


# -- webhook summary (spec 6.2) -------------------------------------------------------------------

def _leg_cashout(rate: float, effective_rate: float, before: float, after: float,
                 before_usd: float, after_usd: float) -> dict[str, float]:
    return {"exchangeRate": rate, "exchangeRateAfterFees": effective_rate,
            "amountBeforeFees": before, "amountAfterFees": after,
            "amountBeforeFeesUsd": before_usd, "amountAfterFeesUsd": after_usd}


def _fiat_leg(data: dict[str, Any], channel: str | None,
              cashout: dict[str, float]) -> dict[str, Any]:
    return {"paymentChannel": channel, "currencyType": "fiat",
            "currencyCode": data["currencyIsoCode"],
            "currencyDetails": {"countryIsoCode": data["countryIsoCode"]}, "cashout": cashout}


def _crypto_leg(data: dict[str, Any], cashout: dict[str, float],
                meta: dict[str, Any]) -> dict[str, Any]:
    return {"paymentChannel": "crypto", "currencyType": "crypto", "currencyCode": data["asset"],
            "currencyDetails": {"network": data["network"]}, "cashout": cashout,
            "transaction": {"meta": {k: v for k, v in meta.items() if v}}}


def _ratio(numerator: float, denominator: float) -> float:
    return round(numerator / denominator, 6) if denominator else 0.0


def webhook_summary(order: Order) -> dict[str, Any]:
    data = order.data
    summary: dict[str, Any] = {
        "_id": order.id, "userId": data["userId"],
        "userEmail": data.get("email") or data.get("userEmail") or "",
        "merchantOrderParams": data.get("orderParams"), "countryIsoCode": data["countryIsoCode"],
        "flow": "regular", "type": "on_ramp" if order.family == "onramp" else "off_ramp",
        "source": "api", "status": WEBHOOK_STATUS[order.status],
        "createdAt": iso(order.created_at), "updatedAt": iso(order.updated_at),
    }
    factor = deposit_factor(order.outcome)
    rate = _num(data["exchangeRate"])               # local currency per USD
    # exchangeRateAfterFees: the rate the user effectively gets, fees included.
    if order.family == "onramp":
        seen = order.status in _ONRAMP_DEPOSIT_SEEN
        local = round(_num(data["localCurrencyAmount"]) * (factor if seen else 1.0), 2)
        usd = round(_num(data["amount"]) * (factor if seen else 1.0), 6)
        fee_local = _num(data["feeAmountLocalCurrency"]) + _num(data["gasAmountLocalCurrency"])
        fee_usd = _num(data["feeAmountUsd"]) + _num(data["gasAmountUsd"])
        received_usd = _num(data["withdrawAmountUsd"])
        summary["deposit"] = _fiat_leg(data, data["paymentChannel"], _leg_cashout(
            rate, _ratio(_num(data["localCurrencyAmount"]), received_usd), local,
            round(max(local - fee_local, 0), 2), usd, round(max(usd - fee_usd, 0), 6)))
        crypto_before, crypto_after = _num(data["totalAmountCrypto"]), _num(data["amountCrypto"])
        summary["payout"] = _crypto_leg(data, _leg_cashout(
            _ratio(crypto_before, _num(data["amount"])), _ratio(crypto_after, _num(data["amount"])),
            crypto_before, crypto_after, _num(data["amount"]), received_usd),
            {"transactionHash": data.get("hash"), "toAddress": data.get("address")})
    else:
        cashout = data["cashout"]
        seen = order.status in _OFFRAMP_DEPOSIT_SEEN
        crypto = round(_num(cashout["cryptoAmount"]) * (factor if seen else 1.0), 6)
        usd = round(_num(cashout["usdAmount"]) * (factor if seen else 1.0), 6)
        fee_crypto = _num(cashout.get("feeAmountCrypto"))
        fee_usd = _num(cashout.get("feeAmountUsd"))
        quoted_usd = _num(cashout["usdAmount"])
        summary["deposit"] = _crypto_leg(data, _leg_cashout(
            _ratio(crypto, usd), _ratio(crypto, max(usd - fee_usd, 0)), crypto,
            round(max(crypto - fee_crypto, 0), 6), usd, round(max(usd - fee_usd, 0), 6)),
            {"transactionHash": data.get("hash"), "fromAddress": data.get("fromAddress"),
             "toAddress": data.get("toAddress")})
        local = _num(cashout["localCurrencyAmount"])
        fee_local = _num(cashout.get("feeAmountLocalCurrency"))
        summary["payout"] = _fiat_leg(
            data, data.get("paymentChannel") or data.get("offrampType"),
            _leg_cashout(rate, _ratio(local, quoted_usd), round(local + fee_local, 2), local,
                         quoted_usd, round(max(quoted_usd - fee_usd, 0), 6)))
        if order.status in ("refunding", "refunded", "refund_failed"):
            summary["refund"] = _crypto_leg(data, _leg_cashout(
                _ratio(crypto, usd), _ratio(crypto, usd), crypto, crypto, usd, usd),
                {"toAddress": data.get("fromAddress"), "transactionHash": data.get("refundHash")})
    return summary
