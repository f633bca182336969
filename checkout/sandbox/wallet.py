"""The sandbox's test wallet: the user "sends" an off-ramp deposit from a page, as from a real wallet.

- ``GET /sandbox/offramp/<id>/send?return=<url>``: what to send (``cashout.cryptoAmount`` of the
  order's ``asset`` on its ``network`` to its ``toAddress``) and a "Send from the test wallet" button.
- ``POST`` the same path: makes up a transaction hash for the order's network, remembers it on the
  order (``testWalletHash``, shown in the console) and answers 303 to ``return`` with
  ``txHash=<hash>`` added to its query (to this page again when there is no ``return``).

The page does not confirm the order. A real wallet only moves the crypto: the checkout still
calls ``POST /api/offramp/confirm-order`` with the hash, so the sandbox exercises that call exactly
as production does. Pressing the button again sends nothing new and returns the same hash, as a
wallet would not pay twice for one tap repeated.

``return`` must be on the origin (scheme, host and port) the page was requested on, else 400: the
page has no login, and a redirect to anywhere would make it an open redirect.
"""
from __future__ import annotations

from urllib.parse import parse_qsl, urlencode, urljoin, urlsplit, urlunsplit

from flask import Blueprint, redirect, render_template, request, url_for
from flask.typing import ResponseReturnValue

from . import orders as flow
from .console_orders import refuse_cross_site_posts
from .orders import Order
from .state import current
from .validation import InvalidRequest

bp = Blueprint("sandbox_wallet", __name__)
bp.before_request(refuse_cross_site_posts)

MAX_RETURN_LENGTH = 2048


def _origin(url: str) -> tuple[str, str, int]:
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, (parts.hostname or "").lower(), port


def return_url(value: str | None) -> str | None:
    """``return`` made absolute, if it is on the request's own origin; 400 otherwise.

    Backslashes, spaces and control characters are refused outright: browsers read ``/\\host`` as
    ``//host``, so such a value could leave the origin after it was checked.
    """
    if value is None or value == "":
        return None
    if len(value) > MAX_RETURN_LENGTH or any(c == "\\" or c.isspace() or ord(c) < 32 or ord(c) == 127
                                              for c in value):
        raise InvalidRequest("return must be a URL on this site")
    try:
        absolute = urljoin(request.host_url, value)
        same = _origin(absolute) == _origin(request.host_url)
    except ValueError:          # a malformed port or host
        same = False
    if not same or urlsplit(absolute).username is not None:
        raise InvalidRequest("return must be a URL on this site (same scheme, host and port)")
    return absolute


def with_tx_hash(url: str, tx_hash: str) -> str:
    """``url`` with ``txHash`` set in its query (any earlier ``txHash`` replaced)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "txHash"]
    query.append(("txHash", tx_hash))
    return urlunsplit(parts._replace(query=urlencode(query)))


def _why_not_payable(order: Order) -> str | None:
    if order.data.get("paymentType") == "VIRTUAL_WALLET":
        return "This order is paid from the merchant's virtual wallet: there is nothing to send."
    if order.status != "initiated":
        return f"This order can no longer be paid (status: {order.status})."
    return None


@bp.get("/sandbox/offramp/<order_id>/send")
def send_page(order_id: str) -> ResponseReturnValue:
    """Show what the user must send for an off-ramp order, with the test wallet's send button."""
    back = return_url(request.args.get("return"))
    store = current().orders
    with store.lock:
        order = store.get(order_id, "offramp")
        data = dict(order.data)
        closed = _why_not_payable(order)
    sent = data.get("testWalletHash")
    # Once sent, "back" carries the hash, so a user who returns here can still finish.
    back_url = with_tx_hash(back, sent) if back and sent else back
    return render_template("sandbox/send.html", order_id=order_id, data=data,
                           closed=closed, sent=sent, return_url=back, back_url=back_url)


@bp.post("/sandbox/offramp/<order_id>/send")
def send(order_id: str) -> ResponseReturnValue:
    """Send the deposit from the test wallet, then go back with its transaction hash."""
    back = return_url(request.form.get("return") or request.args.get("return"))
    store = current().orders
    with store.lock:
        order = store.get(order_id, "offramp")
        closed = _why_not_payable(order)
        if closed is not None:
            raise InvalidRequest(closed)
        tx_hash = order.data.get("testWalletHash")
        if tx_hash is None:
            tx_hash = order.data["testWalletHash"] = flow.fake_transaction_hash(order.data["network"])
    if back is None:
        return redirect(url_for(".send_page", order_id=order_id), code=303)
    return redirect(with_tx_hash(back, tx_hash), code=303)
