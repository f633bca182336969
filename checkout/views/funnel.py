"""The funnel: which steps of each flow sessions reach, so that a merchant sees where people stop.

A whole page of a step (a page rendered with its ``step``: :func:`checkout.htmx.render` notes it)
shown to a session is a step event, recorded once per session and step in the database when the
desk or the metrics read them (:mod:`checkout.desk.journal`): the desk's funnel, and
``checkout_funnel_sessions`` with metrics on. Its ``<main>`` names the flow and the step
(``base.html``), and checkout.js tells a framing merchant's page ``step-viewed`` (once per step
in a tab). Only a flow and a step name: nothing personal. A part of a page (a price, a poll) is
no step viewed, and neither is the order view address (checkout.capabilities), which is not the
user's session.
"""
from __future__ import annotations

from flask import g
from werkzeug.wrappers import Response

from ..state import get_state
from .blueprint import bp
from .context import current_session


@bp.after_request
def _count(response: Response) -> Response:
    step = g.pop("checkout_page_step", None)
    session = current_session()
    if step is None or session is None or response.status_code != 200 \
            or g.get("checkout_order_view") is not None:
        return response
    # Once per session and step, whichever worker serves it (a step event: checkout.desk.steps);
    # a count lost is better than a page lost, and the journal never raises for one.
    get_state().journal.step_reached(session, str(step))
    return response

