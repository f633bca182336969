"""The sandbox's own order pages and actions (not part of the upstream API).

HTML (plain forms, no script):
- ``GET /sandbox/``: index of the sandbox: links, whether requests must be signed, magic values.
- ``GET /sandbox/orders``: every order with its status and buttons to force an outcome or advance it.
- ``GET /sandbox/orders/<id>``: one order (an on-ramp order's ``resumeUrl`` points here).
- ``GET /sandbox/pay/<id>``: the payment page of ``redirect`` orders; ``POST`` it with
  ``action=pay`` or ``action=cancel``, then the browser goes to the order's ``redirectUrl``. The
  same press again goes there too; another press once the order has moved on (expired, or paid
  or cancelled in another tab) answers 409 with the page, closed, saying why.

Actions (form posts answer 303 to the orders page; JSON posts answer the order as JSON):
- ``POST /sandbox/orders/<id>/outcome`` ``{outcome}``: force the rest of the order's life.
- ``POST /sandbox/orders/<id>/advance``: run the order's next timer now.
- ``POST /sandbox/orders/<id>/reject``: the user abandons the order before paying (on-ramp:
  ``swap_buyer_rejected``; off-ramp: ``cancelled``).
- ``POST /sandbox/orders/<id>/deposit`` ``{hash?}``: an off-ramp user sends the crypto.
- ``POST /sandbox/orders/<id>/late-payment`` ``{hash?}``: money arrives after the order expired or
  was abandoned; upstream pays such orders out anyway (upstream-notes 4), so statuses move on.
- ``POST /sandbox/orders/<id>/retry-refund``: an off-ramp refund that failed is tried again.
- ``POST /sandbox/offramp/orders``: create a channel-based off-ramp order (the spec has no endpoint).

JSON for tests and scripts: ``GET /sandbox/orders.json``, ``GET /sandbox/orders/<id>.json``.
"""
from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from flask import Blueprint, abort, current_app, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from . import orders as flow
from . import payees, reference, transfer
from .orders import OUTCOMES, Order, iso
from .shapes import WEBHOOK_STATUS
from .state import current
from .validation import InvalidRequest, check_transaction_hash, form_or_json

bp = Blueprint("sandbox_orders", __name__)


def _browser_post_allowed() -> bool:
    """The console has no login: refuse form posts that another site's page made a browser send."""
    site = request.headers.get("Sec-Fetch-Site")
    if site is not None:
        return site in ("same-origin", "none")
    origin = request.headers.get("Origin")
    if origin is None:
        return True         # not a cross-site browser post: scripts, tests, old browsers
    return urlsplit(origin).netloc == request.host


def _wants_json() -> bool:
    return request.is_json or request.accept_mimetypes.best == "application/json"


def order_summary(order: Order) -> dict[str, Any]:
    """The sandbox's own view of an order: status, outcome, history and what is pending."""
    pending = sorted((h.due_at, name) for name, h in order.timers.items() if h.pending)
    summary: dict[str, Any] = {
        "id": order.id, "family": order.family, "status": order.status,
        "webhookStatus": WEBHOOK_STATUS[order.status], "outcome": order.outcome,
        "createdAt": flow.iso(order.created_at), "updatedAt": flow.iso(order.updated_at),
        "statusHistory": [dict(entry) for entry in order.history],
        "pendingTimers": [{"name": name, "dueAt": flow.iso(due)} for due, name in pending],
        "network": order.data.get("network"), "asset": order.data.get("asset"),
        "countryIsoCode": order.data.get("countryIsoCode"),
        "paymentChannel": order.data.get("paymentChannel") or order.data.get("offrampType"),
        "orderParams": order.data.get("orderParams"),
        "testWalletHash": order.data.get("testWalletHash"),
    }
    if order.transfer is not None:
        summary["transferType"] = order.transfer.type
    return summary


def _done(order: Order) -> ResponseReturnValue:
    if _wants_json():
        with current().orders.lock:
            return order_summary(order)
    return redirect(url_for(".orders_page", _anchor=order.id), code=303)


def refuse_cross_site_posts() -> None:
    """``before_request`` of every console blueprint."""
    if request.method == "POST" and not _browser_post_allowed():
        abort(403, "sandbox actions only from the sandbox's own pages")


bp.before_request(refuse_cross_site_posts)


def _carrier_names(carriers: tuple[reference.Carrier, ...]) -> str:
    return ", ".join(c.name for c in carriers)


def onramp_corridors() -> list[dict[str, Any]]:
    """Per country and channel, how an on-ramp order is paid (``transferInstructions.type``)."""
    return [{"country": c, "channel": ch.channel, "type": ch.transfer_type,
             "carriers": _carrier_names(ch.carriers), "requiresCarrier": ch.requires_carrier,
             "available": ch.limits.available}
            for c in reference.COUNTRIES for ch in c.onramp]


def offramp_corridors() -> list[dict[str, Any]]:
    """Per country, the off-ramp types, and whether a payout must name its carrier."""
    return [{"country": c, "type": ch.channel, "name": ch.name,
             "carriers": _carrier_names(ch.carriers), "requiresCarrier": ch.needs_carrier,
             "fields": [f.name for f in ch.required_fields], "available": ch.limits.available}
            for c in reference.COUNTRIES for ch in c.offramp]


def kyc_thresholds() -> list[dict[str, Any]]:
    """Per country and flow, the KYC rules (USD) and the corridors' USD limits beside them."""
    rows = []
    for c in reference.COUNTRIES:
        for flow_name, rules, channels in (("on-ramp", c.kyc_onramp, c.onramp),
                                           ("off-ramp", c.kyc_offramp, c.offramp)):
            limits = [f"{ch.channel} {ch.limits.min_usd}–{ch.limits.max_usd}"
                      for ch in channels if ch.limits.available]
            rows.append({"country": c, "flow": flow_name,
                         "rules": [r.to_json() for r in rules], "limits": ", ".join(limits)})
    return rows


@bp.get("/sandbox/")
def index() -> ResponseReturnValue:
    """The sandbox's front page: links, credentials, magic values and the corridors."""
    from . import kyc

    return render_template("sandbox/index.html", outcomes=OUTCOMES,
                           manual_clock=current().clock.manual,
                           time_scale=current().clock.scale,
                           sandbox_now=iso(current().clock.now()),
                           otp=transfer.SANDBOX_OTP, payees=payees,
                           onramp=onramp_corridors(), offramp=offramp_corridors(),
                           kyc=kyc, kyc_rules=kyc_thresholds(),
                           kyc_outcome=current_app.config.get("SANDBOX_KYC_OUTCOME") or "approve",
                           signed=bool(current_app.config.get("SANDBOX_CLIENT_SECRET")))


# The most one press moves a manual clock forward: a week (a webhook's whole retry schedule, an
# off-ramp's hour to be paid, a quote's ten minutes, many times over).
MOST_ADVANCE = 7 * 86400


@bp.post("/sandbox/clock/advance")
def advance_clock() -> ResponseReturnValue:
    """Move a manual clock forward (``SANDBOX_CLOCK = "manual"``): every timer that falls due
    meanwhile runs now, in order. ``seconds`` in the form or the query."""
    state = current()
    if not state.clock.manual:
        abort(409, description='the clock is not manual (SANDBOX_CLOCK = "manual")')
    raw = request.values.get("seconds", "")
    try:
        seconds = float(raw)
    except ValueError:
        abort(400, description="seconds: a number of seconds to move forward")
    if not 0 <= seconds <= MOST_ADVANCE:
        abort(400, description=f"seconds: from 0 to {MOST_ADVANCE}")
    ran = state.scheduler.advance(seconds)
    if request.accept_mimetypes.best == "application/json":
        return {"advanced": seconds, "timers_run": ran, "now": iso(state.clock.now())}
    return redirect(url_for("sandbox_orders.index"), code=303)


@bp.get("/sandbox/orders")
def orders_page() -> ResponseReturnValue:
    """Every order, newest first, with outcome and advance buttons."""
    sandbox = current()
    with sandbox.orders.lock:
        rows = [order_summary(o) for o in sandbox.orders.all()]
    return render_template("sandbox/orders.html", orders=rows, outcomes=OUTCOMES)


@bp.get("/sandbox/orders.json")
def orders_json() -> ResponseReturnValue:
    """Every order as JSON, newest first."""
    sandbox = current()
    with sandbox.orders.lock:
        return {"orders": [order_summary(o) for o in sandbox.orders.all()]}


@bp.get("/sandbox/orders/<order_id>.json")
def order_json(order_id: str) -> ResponseReturnValue:
    """One order as JSON."""
    store = current().orders
    with store.lock:
        return order_summary(store.get(order_id))


@bp.get("/sandbox/orders/<order_id>")
def resume(order_id: str) -> ResponseReturnValue:
    """One order's page: where an on-ramp order's ``resumeUrl`` leads."""
    store = current().orders
    with store.lock:
        order = store.get(order_id)
        summary = order_summary(order)
        instructions = transfer.instructions(store, order) if order.transfer else None
    return render_template("sandbox/order.html", order=summary,
                           instructions=instructions, outcomes=OUTCOMES)


@bp.post("/sandbox/orders/<order_id>/outcome")
def set_outcome(order_id: str) -> ResponseReturnValue:
    """Force how the rest of the order's life goes."""
    outcome = form_or_json(request).get("outcome")
    if not isinstance(outcome, str):
        raise InvalidRequest("outcome is required")
    return _done(current().orders.set_outcome(order_id, outcome))


@bp.post("/sandbox/orders/<order_id>/advance")
def advance(order_id: str) -> ResponseReturnValue:
    """Run the order's next timer now instead of waiting for it."""
    return _done(current().orders.advance(order_id))


@bp.post("/sandbox/orders/<order_id>/reject")
def reject(order_id: str) -> ResponseReturnValue:
    """The user abandons the order before paying."""
    store = current().orders
    with store.lock:
        order = store.get(order_id)
        if order.family == "onramp":
            flow.onramp_buyer_rejects(store, order)
        else:
            flow.offramp_cancel(store, order)
    return _done(order)


@bp.post("/sandbox/orders/<order_id>/deposit")
def deposit(order_id: str) -> ResponseReturnValue:
    """The off-ramp user sends the crypto (a hash is made up when none is given)."""
    tx_hash = form_or_json(request).get("hash") or flow.fake_transaction_hash("POLYGON")
    if not isinstance(tx_hash, str):
        raise InvalidRequest("hash must be a string")
    check_transaction_hash("hash", tx_hash)
    store = current().orders
    with store.lock:
        order = store.get(order_id, "offramp")
        flow.offramp_deposit_sent(store, order, tx_hash)
    return _done(order)


@bp.post("/sandbox/orders/<order_id>/late-payment")
def late_payment(order_id: str) -> ResponseReturnValue:
    """Money arrives for an expired or abandoned order: it is processed like a timely payment."""
    tx_hash = form_or_json(request).get("hash") or flow.fake_transaction_hash("POLYGON")
    if not isinstance(tx_hash, str):
        raise InvalidRequest("hash must be a string")
    store = current().orders
    with store.lock:
        order = store.get(order_id)
        if order.family == "onramp":
            flow.onramp_buyer_paid(store, order, late=True)
        else:
            flow.offramp_deposit_sent(store, order, check_transaction_hash("hash", tx_hash),
                                      late=True)
    return _done(order)


@bp.post("/sandbox/orders/<order_id>/retry-refund")
def retry_refund(order_id: str) -> ResponseReturnValue:
    """Try an off-ramp order's failed refund again (it goes through after the usual wait)."""
    store = current().orders
    with store.lock:
        order = store.get(order_id, "offramp")
        flow.offramp_retry_refund(store, order)
    return _done(order)


@bp.post("/sandbox/offramp/orders")
def create_offramp_order() -> ResponseReturnValue:
    """Create a channel-based off-ramp order from a ``quoteId`` (sandbox only; see api_offramp)."""
    from .api_offramp import create_channel_order

    return create_channel_order()


@bp.get("/sandbox/pay/<order_id>")
def pay_page(order_id: str) -> ResponseReturnValue:
    """The third-party payment page of a ``redirect`` order."""
    store = current().orders
    order = transfer.payment_page_opened(store, order_id)
    with store.lock:
        data = dict(order.data)
        status = order.status
    return render_template("sandbox/pay.html", order_id=order.id, data=data, status=status)


@bp.post("/sandbox/pay/<order_id>")
def pay_submit(order_id: str) -> ResponseReturnValue:
    """Pay or cancel on the payment page, then go back to the merchant's ``redirectUrl``."""
    action = request.form.get("action")
    if action not in ("pay", "cancel"):
        raise InvalidRequest("action must be pay or cancel")
    store = current().orders
    try:
        order = transfer.payment_page_result(store, order_id, paid=action == "pay")
    except transfer.PaymentClosed as closed:
        target = closed.data.get("redirectUrl")
        repeated = closed.paid if action == "pay" else closed.order_status == "swap_buyer_rejected"
        if repeated and target:
            # The same press again (a double tap, a second tab): back to the shop, as the first.
            return redirect(target, code=302)
        # A page left open past the order's expiry, or answered the other way in another tab: the
        # person in front of it is told so on the page, with the way back to the shop.
        page = render_template("sandbox/pay.html", order_id=order_id, data=closed.data,
                               status=closed.order_status)
        return page, 200 if repeated else 409
    target = order.data.get("redirectUrl")
    if target:
        return redirect(target, code=302)
    return render_template("sandbox/pay.html", order_id=order.id, data=order.data,
                           status=order.status)
