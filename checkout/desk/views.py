"""The desk's pages: its own blueprint, nested in the checkout's under ``/desk``; an app without
``CHECKOUT_DESK_ACCESS`` answers every one of its addresses with a plain "page not found".

Every request is let in by the host's access function first (:mod:`.access`): none, a 403 page,
or a redirect to ``CHECKOUT_DESK_LOGIN_URL`` with ``next``. Every POST carries the desk's
anti-forgery token (:mod:`.forgery`), and only an operator's is acted on. Pages are never framed
and never kept (checkout.security), need no script, and name nothing secret: emails and phones
masked (:mod:`.masking`). The views read the request and the app's state, hand the domain modules
what they use, and render.
"""
from __future__ import annotations

import functools
import logging
import time
from collections.abc import Callable, Iterator, Mapping
from datetime import UTC, datetime, timedelta, tzinfo
from decimal import Decimal
from typing import Any, TypeVar
from urllib.parse import urlencode, urlsplit, urlunsplit

from babel.numbers import format_decimal
from flask import (
    Blueprint,
    abort,
    current_app,
    g,
    make_response,
    redirect,
    render_template,
    request,
    stream_with_context,
    url_for,
)
from flask_babel import gettext, ngettext
from flask_babel import lazy_gettext as _l
from sqlalchemy.exc import OperationalError, SQLAlchemyError
from sqlalchemy.exc import TimeoutError as PoolTimeout
from werkzeug.exceptions import BadRequest, Forbidden, HTTPException, NotFound
from werkzeug.wrappers import Response

from ..i18n import babel_locale
from ..inputs import storable
from ..journey.flow import Flow
from ..logs import reraised
from ..ratelimits import RateLimited, limited
from ..state import get_state, real_app
from ..store import REQUEST_DATABASE_TIME, availability
from ..webhooks.inspect import ROW_KEYS
from ..webhooks.printable import csv_lines
from . import forgery, periods, search
from .access import OPERATOR, Staff
from .actions import CHECK, RESEND, check_with_partner, record_action, send_signal_again
from .charts import bar_chart
from .funnel import funnel
from .overview import overview as overview_of
from .settings import DeskSettings, zone_name
from .steps import OPENED, ORDERED
from .story import Story, order_story
from .words import (
    ACTION_OUTCOMES,
    BREAKER_WORDS,
    DELIVERY_OUTCOMES,
    FLOW_LABELS,
    KYC_LEVELS,
    KYC_STATUSES,
    PERIOD_LABELS,
    READINESS_WORDS,
    REFUSAL_REASONS,
    SOURCE_LABELS,
    STATUS_LABELS,
    flow_label,
    status_label,
    tone_of_status,
)

__all__ = ["desk"]

log = logging.getLogger(__name__)

desk = Blueprint("desk", __name__)

View = TypeVar("View", bound=Callable[..., Any])

EXPORT_BATCH = 1000         # orders read at a time by the CSV export
CHECKABLE_FLOWS = ("onramp", "offramp")     # the flows the upstream reads an order of


class NoDesk(NotFound):
    """The app has no desk: its addresses are none of its pages."""


class DeskForgery(BadRequest):
    """A desk POST without a valid anti-forgery token for its staff member."""

    description = "desk-csrf"


def _settings() -> DeskSettings:
    settings = get_state().desk
    if settings is None:        # this app has no desk (CHECKOUT_DESK_ACCESS unset)
        raise NoDesk()
    return settings


def current_staff() -> Staff:
    """Who is at the desk in this request (let in by :func:`_let_in`)."""
    staff: Staff = g.desk_staff
    return staff


def staff_zone() -> tzinfo:
    """The clock the desk's times are shown on (``CHECKOUT_DESK_TIMEZONE``)."""
    return _settings().zone


@desk.before_request
def _let_in() -> Response | None:
    """Ask the host who this is; send them to the login page, or refuse, when nobody."""
    settings = _settings()
    staff = settings.access.staff()
    if staff is None:
        g.pop("desk_staff", None)
        if settings.login_url is not None:
            return redirect(_login_location(settings.login_url), 303)
        raise Forbidden()
    g.desk_staff = staff
    if request.method == "POST":
        sent = request.form.get(forgery.FIELD)
        if not forgery.is_valid(settings.launch_secret, staff.name, sent, time.time()):
            raise DeskForgery()
    return None


def _login_location(login_url: str) -> str:
    """The login page, with ``next`` = where the staff member was going (a form's page, for a
    POST: the form is not posted again after the login)."""
    back = request.full_path.rstrip("?") if request.method == "GET" \
        else url_for("checkout.desk.overview")
    parts = urlsplit(login_url)
    query = (parts.query + "&" if parts.query else "") + urlencode({"next": back})
    return urlunsplit(parts._replace(query=query))


def operator_only(view: View) -> View:
    """An action: a viewer gets 403 (and sees no button for it)."""
    @functools.wraps(view)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        if current_staff().role != OPERATOR:
            raise Forbidden()
        return view(*args, **kwargs)

    return wrapper  # type: ignore[return-value]


@desk.context_processor
def _desk_context() -> dict[str, Any]:
    staff: Staff | None = g.get("desk_staff")
    settings = get_state().desk
    token = None
    if staff is not None and settings is not None:
        token = forgery.token_for(settings.launch_secret, staff.name, time.time())
    return {"staff": staff, "desk_csrf_token": token, "desk_csrf_field": forgery.FIELD,
            "desk_zone": settings.zone if settings is not None else None,
            "desk_zone_name": zone_name, "desk_status_label": status_label,
            "desk_status_tone": tone_of_status, "desk_flow_label": flow_label,
            "desk_source_labels": SOURCE_LABELS, "action_outcomes": ACTION_OUTCOMES,
            "desk_number": desk_number}


def desk_number(value: float | Decimal, places: int = 0) -> str:
    """A count or a number of seconds in the staff member's language."""
    pattern = "#,##0" + ("." + "0" * places if places else "")
    return format_decimal(value, format=pattern, locale=babel_locale())


def order_id_of(value: str) -> str:
    """An order id from the path, as the tables hold one (else 404)."""
    if not value or len(value) > 128 or not storable(value):
        abort(404)
    return value


# -- pages ---------------------------------------------------------------------------------------

@desk.get("/")
@limited("desk")
def overview() -> str:
    """The desk's home: the search box; for today, 7 or 30 days, orders by flow and status, money
    in and out, the funnel, the webhooks' health; and the partner's health now."""
    state = get_state()
    name = request.args.get("period", "")
    name = name if name in periods.PERIODS else "7d"
    period = periods.period(name, staff_zone(), datetime.now(UTC))
    seen = overview_of(state.engine, period.since, period.until)
    funnels = funnel(state.engine, _steps_of(state.flows), period.since, period.until)
    partner = state.readiness.now(float(current_app.config["CHECKOUT_HEALTH_CACHE_SECONDS"]))
    # The calls refused or on trial now: one breaker per family of calls (and per corridor for
    # prices and limits), so one country's trouble shows as that country's.
    refused = state.upstream.transport.breakers.not_closed()
    labels = _step_labels(state.flows)
    by_flow = {flow: [row for row in seen.orders if row.flow == flow]
               for flow in dict.fromkeys(row.flow for row in seen.orders)}
    return render_template(
        "checkout/desk/overview.html", period=period, periods=PERIOD_LABELS, seen=seen,
        by_flow=by_flow,
        status_charts={flow: bar_chart([(status_label(row.status), row.count) for row in rows])
                       for flow, rows in by_flow.items()},
        funnels=funnels, step_labels=labels,
        funnel_charts={f.flow: bar_chart(
            [(str(labels.get(f.flow, {}).get(step.step, step.step)), step.reached)
             for step in f.steps]) for f in funnels},
        partner=partner, refused=refused, readiness_words=READINESS_WORDS,
        breaker_words=BREAKER_WORDS)


def _steps_of(flows: Mapping[str, Flow]) -> dict[str, list[str]]:
    """Each flow's funnel: the session opened, the steps before the order, the order created,
    the order's own pages."""
    return {name: [OPENED, *(step.name for step in flow.journey.steps if step.before_order),
                   ORDERED, *(step.name for step in flow.journey.steps if not step.before_order)]
            for name, flow in flows.items()}


def _step_labels(flows: Mapping[str, Flow]) -> dict[str, dict[str, Any]]:
    """Each flow's steps by name, in the staff member's words."""
    return {name: {OPENED: _l("Checkout opened"), ORDERED: _l("Order created"),
                   **{step.name: step.label for step in flow.journey.steps}}
            for name, flow in flows.items()}


def _filters() -> tuple[search.Filters, list[str]]:
    """The list's filters from the query string, and what of it could not be read."""
    args, problems = request.args, list[str]()
    query = (args.get("q") or "").strip()[:200]
    if not storable(query):
        query, problems = "", problems + [gettext("The search could not be read.")]
    flow = args.get("flow") if args.get("flow") in FLOW_LABELS else None
    status = args.get("status")
    if status not in STATUS_LABELS and status != search.NO_STATUS:
        status = None
    zone = staff_zone()
    since, until = periods.parse_day(args.get("since")), periods.parse_day(args.get("until"))
    for name in ("since", "until"):
        if args.get(name) and periods.parse_day(args.get(name)) is None:
            problems.append(gettext("A date could not be read: write it as 2026-11-29."))
    return search.Filters(
        query=query, flow=flow, status=status,
        since=periods.midnight(zone, since) if since else None,
        until=periods.midnight(zone, until + timedelta(days=1)) if until else None), problems


@desk.get("/orders")
@limited("desk")
def orders() -> Response | str:
    """Orders found by what the customer quotes and the filters, newest first, a page at a
    time; a search that finds one order opens it."""
    filters, problems = _filters()
    after = request.args.get("after") or None
    page = search.find(get_state().engine, _settings().launch_secret, filters,
                       after=order_id_of(after) if after else None)
    if filters.query and after is None and len(page.orders) == 1 and page.after is None:
        return redirect(url_for("checkout.desk.order", order_id=page.orders[0].order_id), 303)
    kept: dict[str, Any] = {key: value for key, value in request.args.items()
                            if key in ("q", "flow", "status", "since", "until") and value}
    return render_template(
        "checkout/desk/orders.html", page=page, filters=filters, problems=problems,
        query=filters.query, chosen=kept, statuses=STATUS_LABELS, flows=FLOW_LABELS,
        no_status=search.NO_STATUS,
        older_url=url_for("checkout.desk.orders", **kept, after=page.after)
        if page.after else None,
        export_url=url_for("checkout.desk.export", **kept))


@desk.get("/orders.csv")
@limited("desk_export")
def export() -> Response:
    """The filtered list as CSV, every page of it, the columns of ``flask checkout orders
    list``, each cell safe to open in a spreadsheet."""
    filters, _problems = _filters()
    engine, secret = get_state().engine, _settings().launch_secret

    def rows() -> Iterator[dict[str, str | None]]:
        after: str | None = None
        while True:
            # A batch at a time, each with a request's time for the database: a long export
            # is many short reads, sent as they come.
            with availability.budget(REQUEST_DATABASE_TIME):
                page = search.find(engine, secret, filters, after=after, limit=EXPORT_BATCH)
            yield from (order.as_row() for order in page.orders)
            if page.after is None:
                return
            after = page.after

    response = current_app.response_class(stream_with_context(csv_lines(rows(), ROW_KEYS)),
                                          mimetype="text/csv")
    response.headers["Content-Disposition"] = 'attachment; filename="orders.csv"'
    return response


@desk.get("/orders/<order_id>")
@limited("desk")
def order(order_id: str) -> str:
    """One order's story: what the customer saw and was charged, where it stands, the
    customer's verification, its timeline; an operator's actions."""
    order_id = order_id_of(order_id)
    state = get_state()
    story = order_story(state.engine, order_id, state.flows)
    if not story.found:
        abort(404)
    done = _action_shown(story)
    return render_template(
        "checkout/desk/order.html", story=story, done=done,
        can_check=story.flow in CHECKABLE_FLOWS, can_resend=story.current_signal is not None,
        step_labels=_step_labels(state.flows),
        delivery_outcomes=DELIVERY_OUTCOMES, refusal_reasons=REFUSAL_REASONS,
        kyc_levels=KYC_LEVELS, kyc_statuses=KYC_STATUSES)


def _action_shown(story: Story) -> Mapping[str, Any] | None:
    """The action the page was sent back after (``?done=<id>``), to say how it went."""
    wanted = request.args.get("done", "")
    if not wanted.isdigit():
        return None
    return next((entry.facts for entry in story.timeline
                 if entry.kind == "action" and str(entry.facts["id"]) == wanted), None)


@desk.post("/orders/<order_id>/check")
@limited("desk_action")
@operator_only
def check(order_id: str) -> Response:
    """"Check with the partner now": read the order from the upstream, store what changed, and
    record who asked; back to the order, saying how it went."""
    order_id = order_id_of(order_id)
    state = get_state()
    story = order_story(state.engine, order_id, state.flows)
    if not story.found or story.flow not in CHECKABLE_FLOWS:
        abort(404)
    assert story.flow is not None
    done = check_with_partner(state.order_statuses, order_id, story.flow)
    action = record_action(state.engine, order_id, current_staff(), CHECK, done)
    return redirect(url_for("checkout.desk.order", order_id=order_id, done=action), 303)


@desk.get("/orders/<order_id>/resend")
@limited("desk")
@operator_only
def resend_form(order_id: str) -> str:
    """What "send the signal again" will do (the shop's code runs again), before it does."""
    order_id = order_id_of(order_id)
    state = get_state()
    story = order_story(state.engine, order_id, state.flows)
    if not story.found or story.current_signal is None:
        abort(404)
    return render_template("checkout/desk/resend.html", story=story)


@desk.post("/orders/<order_id>/resend")
@limited("desk_action")
@operator_only
def resend(order_id: str) -> Response:
    """"Send the signal again": the shop's signal for the order's current status, run again;
    recorded, and back to the order saying how it went."""
    order_id = order_id_of(order_id)
    state = get_state()
    done = send_signal_again(real_app(current_app), order_id)
    if done.outcome == "none":
        abort(404)
    action = record_action(state.engine, order_id, current_staff(), RESEND, done)
    return redirect(url_for("checkout.desk.order", order_id=order_id, done=action), 303)


# -- errors --------------------------------------------------------------------------------------

def _error_page(status: int, title: str, message: str, *, desk: bool = True) -> Response:
    """``desk`` False: the page does not name the desk (an app that has none)."""
    return make_response(render_template("checkout/desk/error.html", title=title,
                                         message=message, error_status=status, desk=desk),
                         status)


@desk.errorhandler(HTTPException)
def _http_error(exc: HTTPException) -> Response:
    """The desk's own error pages (not the checkout's, which speak to its customers)."""
    status = exc.code or 500
    if isinstance(exc, NoDesk):
        # Nothing here says a desk could be: the words of any address that is not a page.
        return _error_page(404, gettext("Page not found"),
                           gettext("There is no page at this address."), desk=False)
    if isinstance(exc, DeskForgery):
        return _error_page(400, gettext("Please try again"), gettext(
            "This form was too old or not from this desk. Go back, reload the page and try "
            "again."))
    if status == 403:
        return _error_page(403, gettext("No access"), gettext(
            "You do not have access to this part of the desk. Ask whoever manages your shop's "
            "staff accounts."))
    if status == 404:
        return _error_page(404, gettext("Not found"), gettext(
            "There is nothing at this address of the desk."))
    if status >= 500:
        return _server_error(exc)
    return _error_page(status, gettext("Please try again"),
                       gettext("This request could not be understood."))


@desk.errorhandler(RateLimited)
def _rate_limited(exc: RateLimited) -> Response:
    """Too many requests from this address: when to try again, in words."""
    get_state().metrics.rate_limited(exc.limit_name)
    response = _error_page(429, gettext("Please wait a moment"), " ".join((
        gettext("Too many requests from this connection."),
        ngettext("Try again in %(num)d second.", "Try again in %(num)d seconds.", exc.seconds))))
    response.headers["Retry-After"] = str(exc.seconds)
    return response


def _database_unavailable(exc: SQLAlchemyError) -> Response:
    log.warning("desk page answered 503: database unavailable (%s)", type(exc).__name__)
    response = _error_page(503, gettext("Please try again"), gettext(
        "The checkout's records cannot be read right now. Try again in a moment."))
    response.headers["Retry-After"] = "5"
    return response


desk.register_error_handler(OperationalError, _database_unavailable)
desk.register_error_handler(PoolTimeout, _database_unavailable)


@desk.errorhandler(500)
def _server_error(exc: BaseException) -> Response:
    original = getattr(exc, "original_exception", None) or exc
    log.error("desk error on %s %s", request.method,
              request.url_rule.rule if request.url_rule else request.endpoint,
              exc_info=original)
    return _error_page(500, gettext("Something went wrong"), gettext(
        "Something went wrong on our side. Try again; if it goes on, the log says why."))


@desk.errorhandler(Exception)
def _unexpected(exc: Exception) -> Response:
    """Any other exception: the desk's 500 page, logged by route; re-raised where Flask would
    (testing, debug)."""
    if reraised(current_app):
        raise exc
    return _server_error(exc)
