"""The funnel: which steps of each flow sessions reach, so that a merchant sees where people stop.

A whole page of a step (a page rendered with its ``step``: :func:`checkout.htmx.render` notes it)
shown to a session counts once per session and step in ``checkout_funnel_sessions`` (with metrics
on). Its ``<main>`` names the flow and the step (``base.html``), and checkout.js tells a framing
merchant's page ``step-viewed`` (once per step in a tab). Only a flow and a step name: nothing
personal. A part of a page (a price, a poll) is no step viewed, and
neither is the order view address (checkout.capabilities), which is not the user's session.
"""
from __future__ import annotations

import logging

from flask import g
from sqlalchemy.exc import SQLAlchemyError
from werkzeug.wrappers import Response

from ..errors import SessionConflict
from ..sessions import CheckoutSession
from ..state import get_state
from .blueprint import bp
from .context import current_session

log = logging.getLogger(__name__)


@bp.after_request
def _count(response: Response) -> Response:
    step = g.pop("checkout_page_step", None)
    session = current_session()
    if step is None or session is None or response.status_code != 200 \
            or g.get("checkout_order_view") is not None:
        return response
    state = get_state()
    if not state.metrics.enabled:
        return response     # nothing counts: the session is not written for it either
    first: list[bool] = []

    def reach(fresh: CheckoutSession) -> bool | None:
        if not fresh.reach(step):
            return False    # seen before: nothing to save
        first.append(True)
        return None

    try:
        state.sessions.update(session.id, reach)
    except (SessionConflict, SQLAlchemyError) as exc:
        # The page is made already: a count lost is better than a page lost.
        log.warning("funnel: step %s not counted (%s)", step, type(exc).__name__)
        return response
    if first:
        state.metrics.step_reached(session.flow, str(step))
    return response

