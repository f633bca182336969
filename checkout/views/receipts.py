"""The receipt of one order: ``GET {prefix}/r/<token>``.

Linked from the order's status page and from its order view (the address a payment provider sends
the user back to); a merchant's server makes one with ``Checkout.receipt_url``. The token
(:mod:`checkout.capabilities`) names the order, its flow and the language to show it in: no
session, so a receipt still opens after the session's seven days, until
``CHECKOUT_RECEIPT_DAYS`` after its order's last change (once final, after it was done), however
often its link was made (:func:`checkout.capabilities.receipt_open`). An expired or altered link
gets the friendly not-found page, in the link's language when it can still be read (expired, not
altered).

Everything on it comes from the upstream's order as the checkout last read it, stored like every
read of an order (:meth:`checkout.webhooks.orders.OrderStatuses.kept_order`): read again at most
once per ``CHECKOUT_STATUS_MAX_AGE``, whoever reloads it, and never once it was read final. When
the read it was due gets no answer, the page says it shows the order as last read, and when.
Each address may open so many receipts a minute and an hour (``receipt_per_ip``). It is a page
to keep: no script but the print button's, a print stylesheet, and other languages as plain
links.
"""
from __future__ import annotations

from datetime import datetime
from typing import Any

from flask import current_app, g, url_for
from werkzeug.wrappers import Response

from .. import order_status
from ..addresses import explorer_tx_url
from ..capabilities import ReceiptLink, receipt_link_of, receipt_open, receipt_token
from ..errors import OrderNotAvailable, UpstreamNotFound
from ..htmx import render
from ..i18n import SUPPORTED_LANGUAGES, local_zone, money_locale
from ..journey.flow import Flow
from ..ratelimits import limited
from ..state import get_state
from ..webhooks.refunds import refund_summary
from .blueprint import bp
from .context import ReceiptNotFound
from .tracking import known_at_text

__all__ = ["receipt_url", "receipt"]


def receipt_url(order_id: str, flow: str, locale: str | None = None) -> str:
    """The address of ``order_id``'s receipt (in a request or app context), relative to the
    site; ``locale``: the language it first opens in."""
    return url_for("checkout.receipt", token=receipt_token(order_id, flow, locale))


def _read(flow: Flow, link: ReceiptLink) -> tuple[Any, datetime | None]:
    """The order (the flow's own type) as last read and, when the read it was due got no
    answer, when it was last read; the not-found page once the receipt's time is over."""
    stored = order_status.get(get_state().engine, link.order_id)
    if not receipt_open(link, stored.updated_at if stored is not None else None):
        raise ReceiptNotFound()
    try:
        kept = get_state().order_statuses.kept_order(link.order_id, link.flow, stored)
    except (UpstreamNotFound, OrderNotAvailable):
        raise ReceiptNotFound() from None
    return flow.parse_order(kept.order), kept.read_at if kept.unanswered else None


def _explorer_url(network: str | None, tx_hash: str | None) -> str | None:
    return explorer_tx_url(network or "", tx_hash,
                           testnet=current_app.config["CHECKOUT_TESTNET"] is True)


@bp.get("/r/<token>", endpoint="receipt")
@limited("receipt")
def receipt(token: str) -> Response:
    """The receipt a token opens, in the language it was made in (or the one asked for)."""
    link = receipt_link_of(token)
    # The language the link was made in, unless the reader chose another (?locale=): the
    # receipt's, and that of the page saying the link has expired.
    g.checkout_page_locale = link.locale if link is not None else None
    if link is None:
        raise ReceiptNotFound()
    flow = get_state().flows.get(link.flow)
    if flow is None:
        raise ReceiptNotFound()
    order, known_at = _read(flow, link)
    # What went back, as the webhooks told it (an order read from the upstream does not say).
    shown = flow.receipt(order, refund_summary(get_state().engine, link.order_id))
    here = url_for("checkout.receipt", token=token)
    # The user's clock: the order's country's (no session says it here).
    zone = local_zone(shown.country)
    return render("checkout/receipt.html", "checkout/receipt.html",
                  receipt=shown,
                  status_text=flow.receipt_status(
                      shown, order_status.webhook_status_of(link.flow, shown.status)),
                  zone=zone, money_locale=money_locale(shown.country),
                  explorer_url=_explorer_url(shown.network, shown.tx_hash),
                  refund_explorer_url=_explorer_url(
                      shown.network, shown.refund.tx_hash if shown.refund else None),
                  known_at=known_at_text(known_at, zone) if known_at else None,
                  languages=[(code, f"{here}?locale={code}") for code in SUPPORTED_LANGUAGES])


# Made where a page shows the link (the status page, the order view), not at each poll.
bp.add_app_template_global(receipt_url, "receipt_url")
