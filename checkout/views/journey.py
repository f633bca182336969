"""The pages every flow shares under ``/s/<session_id>/``: the session's own page, the step pages'
frame, review, and creating the order.

Each step is a page that validates on the server, saves what the user chose in the session, then
redirects (303, or ``HX-Redirect`` for htmx) to the next step. A form with errors is kept for its
step's page, which the browser is sent to (POST, redirect, GET) and which shows it again with each
message next to its field, so that no post stays in the history for Back or a reload to send again;
a step whose values must never be stored answers in place instead (``keeps_refused_form``). With
JavaScript the steps' forms are boosted (:mod:`checkout.htmx`): the answer is the page the redirect
would lead to, at its address, in one round trip instead of two.
``GET /s/<id>/`` sends the browser to whatever step the session has reached, so the same link
resumes the checkout on another device. Once an order exists the steps before it only lead to it.

A step carries its page: each flow's view module declares its journey once, every step with the
page that shows it (a :class:`StepPage` before the order, the :class:`ReviewPage`, the
:class:`OrderPage` that shows how to pay, the :class:`StatusPage`), and the app's flow is built
with it (``checkout.composition``).
Steps whose every value is already given (by the launch token or an earlier step) and that the user
never submitted are passed over on the way forward: a launch that prefills everything opens at the
review. The user can still open such a step (its URL, or the "Change" links of the review) to change
what is not locked.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import wraps
from typing import Any

from flask import abort, redirect, request, url_for
from flask_babel import gettext as _
from werkzeug.wrappers import Response

from ..errors import CheckoutError, OrderUnderway, UpstreamError
from ..forms import FormResult
from ..htmx import htmx_redirect, is_boosted, render, shown_at, triggered_by
from ..journey import creation, quotes
from ..journey.creation import Outcome
from ..journey.flow import Flow
from ..journey.steps import REVIEW, update_before_order
from ..ratelimits import limited
from ..sessions import CheckoutSession
from ..state import flow_named, flow_of, get_state
from .blueprint import bp
from .context import CSRF_FIELD, session_route

SMALL_FORM = 256 * 1024        # a form of a few fields, with room to spare
PRICE_CLOCK = "price-clock"    # the review's price clock (its id): it asks for the review anew


class StepRefused(CheckoutError):
    """A step's values were checked but could not be saved (the form says why)."""

    def __init__(self, result: FormResult) -> None:
        super().__init__("step refused")
        self.result = result


class StepPage:
    """One step before the order. Subclasses give its form, its checks and what it saves."""

    name: str
    flow_name: str          # the flow whose step it is (the app's own is looked up, ``flow``)
    # The largest request body the step's form may send (its photos, say): see limit_upload.
    max_upload: int = SMALL_FORM
    # The rate limit its form's posts count against (checkout.ratelimits): a form, or identity
    # documents. Its page (GET) is a page like any other.
    post_limit: str = "form"
    # A refused form is kept in the session, with its messages, for the step's page, and the
    # browser is sent there (POST, redirect, GET): the form's answer is then no history entry
    # that Back or a reload would post again ("Confirm form resubmission"). False for a form
    # whose values must never be stored (the KYC step's): it is answered in place.
    keeps_refused_form: bool = True

    @property
    def flow(self) -> Flow:
        return flow_named(self.flow_name)

    def given(self, session: CheckoutSession) -> dict[str, Any] | None:
        """The step's form as the launch token and earlier steps already fill it, or None when
        some value is missing (the user must then fill the form in)."""
        return None

    def clean(self, session: CheckoutSession, form: Mapping[str, Any]) -> FormResult:
        """Check the submitted values (on the server, always); save nothing."""
        raise NotImplementedError

    def save(self, session: CheckoutSession, result: FormResult, *,
             by_user: bool) -> CheckoutSession:
        """Keep the checked values and mark the step done; may raise :class:`StepRefused`."""
        raise NotImplementedError

    def render(self, session: CheckoutSession, form: Mapping[str, Any] | None = None,
               result: FormResult | None = None) -> Response:
        raise NotImplementedError

    def show_kept(self, session: CheckoutSession, form: dict[str, Any],
                  result: FormResult | None) -> Response:
        """The page for a form posted to it and kept (:func:`keep_form`): a refused one with its
        messages, or (``result`` None) its values alone: a draft a preview kept, or a refused
        form whose messages were shown already."""
        return self.render(session, form, result)

    def preview(self, session: CheckoutSession, form: Mapping[str, Any]) -> Response | None:
        """For a POST that only asks to see the page again with what the form holds (a button
        for browsers without JavaScript): the answer (a redirect to that page, the form kept for
        it), nothing saved. None for a real submit."""
        return None

    def get(self, session: CheckoutSession) -> Response:
        """The step's page. A form posted to it and kept for it shows as it was sent; a message
        kept for it (a refusal at create) shows at its field; a step passed over whose given
        values fail their checks shows why. A step's own ``get`` (a draft asked by htmx, a check
        to read first) comes before this one."""
        session, kept = take_form(session, self.name)
        if kept is not None:
            return self.show_kept(session, *kept)
        session, notice = take_notice(session, self.name)
        if notice and notice.get("field"):
            return self.render(session, None, FormResult.error(str(notice["field"]),
                                                               str(notice.get("message") or "")))
        if notice and notice.get("form_error"):
            return self.render(session, None, FormResult(form_error=str(notice["form_error"])))
        if self.name not in session.answered:
            form = self.given(session)
            if form is not None:
                result = self.clean(session, form)
                if not result.ok:
                    return self.render(session, form, result)
        return self.render(session)

    def submit(self, session: CheckoutSession, form: Mapping[str, Any], *,
               by_user: bool = True) -> tuple[CheckoutSession, FormResult]:
        result = self.clean(session, form)
        if not result.ok:
            return session, result
        try:
            return self.save(session, result, by_user=by_user), result
        except StepRefused as refused:
            return session, refused.result


@dataclass(frozen=True)
class ReviewPage:
    """The review's page: the shared one (:func:`review`), with its flow's own ``context``
    (``checkout/<flow>/review.html``)."""

    context: Callable[[CheckoutSession], dict[str, Any]]


@dataclass(frozen=True)
class OrderPage:
    """A page of the order, once there is one. ``show``: the order's page as it stands (how to
    pay it, or its status). ``pays``: this step shows how to pay the order: right after the
    create it shows the create's own answer (:mod:`checkout.journey.just_created`)."""

    show: Callable[[CheckoutSession], Response]
    pays: bool = False


@dataclass(frozen=True)
class StatusPage:
    """The order's status page (:mod:`.status`), with its flow's own ``context`` (the off-ramp's
    timeline, say)."""

    context: Callable[[CheckoutSession, Any], dict[str, Any]] | None = None


def form_page(session: CheckoutSession, name: str) -> StepPage | None:
    """The page of the session's step ``name`` before the order (its form), if it has one."""
    step = flow_of(session).journey.step(name)
    return step.page if step is not None and isinstance(step.page, StepPage) else None


def form_pages(name: str) -> list[StepPage]:
    """Every flow's form page of a step called ``name`` (its limits are known before its
    session is)."""
    found = (built.journey.step(name) for built in get_state().flows.values())
    return [step.page for step in found if step is not None and isinstance(step.page, StepPage)]


def review_page(session: CheckoutSession) -> ReviewPage:
    page = flow_of(session).journey.step(REVIEW).page    # type: ignore[union-attr]
    assert isinstance(page, ReviewPage), f"the {session.flow} journey's review has no page"
    return page


def payment_step(flow: Flow) -> str:
    """The step whose page shows how to pay the flow's orders (``pay``, ``deposit``)."""
    return next(step.name for step in flow.journey.steps
                if isinstance(step.page, OrderPage) and step.page.pays)


def order_page(session: CheckoutSession) -> Response:
    """The page of the session's order, as it stands: its paying step's (which shows the
    status once there is nothing to pay)."""
    step = flow_of(session).journey.step(payment_step(flow_of(session)))
    assert step is not None and isinstance(step.page, OrderPage)
    return step.page.show(session)


def after_create(session: CheckoutSession) -> str:
    """The step that follows the create: the first of the order's own that this session needs
    (a sale paid out of the shop's balance has nothing to send: its status)."""
    return next(step.name for step in flow_of(session).journey.steps
                if not step.before_order and step.needed(session))


def status_context(session: CheckoutSession) -> Callable[[CheckoutSession, Any],
                                                          dict[str, Any]] | None:
    """The flow's own context of the status page, if it has one."""
    return next((step.page.context for step in flow_of(session).journey.steps
                 if isinstance(step.page, StatusPage)), None)


def step_url(session: CheckoutSession, step: str) -> str:
    """The URL of ``step`` of the session's flow."""
    if form_page(session, step) is not None:
        return url_for("checkout.step", session_id=session.id, step=step)
    return url_for(f"checkout.{step}", session_id=session.id)


def session_url(session: CheckoutSession) -> str:
    return url_for("checkout.flow", session_id=session.id)


def save_before_order(session: CheckoutSession,
                      change: Callable[[CheckoutSession], Any]) -> CheckoutSession:
    """Save a step's ``change`` to the session, unless its order exists or is being created
    (then ``OrderUnderway``: a second tab must not rewrite what the order is made of)."""
    return update_before_order(get_state().sessions, flow_of(session).settings, session.id,
                               change)


# -- notices carried over a redirect -----------------------------------------------------------------
#
# What a POST has to say, kept for the page the browser is sent to next (POST, redirect, GET): a
# reload then shows the page again instead of sending the form again, which for a one-time code
# would use up an attempt.

def keep_notice(session: CheckoutSession, page: str, notice: dict[str, Any]) -> CheckoutSession:
    def change(fresh: CheckoutSession) -> None:
        fresh.keep_notice(page, notice)

    return get_state().sessions.update(session.id, change)


def take_notice(session: CheckoutSession, page: str
                ) -> tuple[CheckoutSession, dict[str, Any]]:
    """The notice kept for this page, once: a second visit shows the page without it."""
    notice = session.notice(page)
    if not notice:
        return session, {}
    session = get_state().sessions.update(session.id, lambda s: s.drop_notice(page))
    return session, notice


# A form kept for its step's page: at most this many fields, named in at most this many
# characters, of at most this many characters each (a step's form has a few fields; no field of
# any step takes more: forms.MAX_TEXT). What else a form sends is not shown again.
KEPT_FIELDS = 32
KEPT_NAME = 64
KEPT_CHARACTERS = 1024


def _kept_form_key(step: str) -> str:
    return f"{step}:form"


def keep_form(session: CheckoutSession, step: str, form: Mapping[str, Any],
              result: FormResult | None = None) -> CheckoutSession:
    """Keep a form posted to ``step`` for the GET of its page that the browser is sent to next:
    the values typed and, for a refused form, its messages (``result``). The anti-forgery token is
    the page's own, never kept."""
    values = {name: str(value)[:KEPT_CHARACTERS] for name, value in form.items()
              if name != CSRF_FIELD and len(name) <= KEPT_NAME}
    kept = {"form": dict(list(values.items())[:KEPT_FIELDS]),
            "result": None if result is None else result.shown()}
    return keep_notice(session, _kept_form_key(step), kept)


def take_form(session: CheckoutSession, step: str
              ) -> tuple[CheckoutSession, tuple[dict[str, Any], FormResult | None] | None]:
    """The form kept for ``step``'s page: its values until the step is saved (a reload on a
    flaky connection must not wipe what was typed), and a refused form's messages once (the
    result; None once they were shown, and for a draft)."""
    key = _kept_form_key(step)
    kept = session.notice(key)
    if not kept:
        return session, None
    form, shown = dict(kept.get("form") or {}), kept.get("result")
    if shown is not None:
        session = keep_notice(session, key, {"form": form, "result": None})
    return session, (form, None if shown is None else FormResult.restore(shown))


def forget_form(session: CheckoutSession, step: str) -> CheckoutSession:
    """``step`` was saved: a form kept for its page must not come back later over what was
    saved."""
    if not session.notice(_kept_form_key(step)):
        return session
    return get_state().sessions.update(session.id,
                                       lambda s: s.drop_notice(_kept_form_key(step)))


# -- where the user is ---------------------------------------------------------------------------------

def gate(session: CheckoutSession, step: str) -> Response | None:
    """Send the user to the step they must finish first (or to the order, once there is one)."""
    # htmx_redirect: a script's request (a boosted form) loads that page, rather than following
    # the redirect in the background to a page it may not be able to show.
    if session.order_id:
        return htmx_redirect(step_url(session, after_create(session)))
    if creation.pending_since(session) is not None:
        # A create may have reached the upstream: nothing changes until it is settled.
        return htmx_redirect(session_url(session))
    missing = flow_of(session).journey.missing_before(session, step)
    if missing is not None:
        return htmx_redirect(step_url(session, missing))
    return None


def advance(session: CheckoutSession) -> tuple[CheckoutSession, str, tuple[Any, FormResult] | None]:
    """The step the session has reached, passing over the steps whose every value is given.

    Returns the session (as saved), the step, and for a step whose given values failed their
    checks, (form, result) to show them with.
    """
    flow = flow_of(session)
    for _attempt in range(len(flow.journey.steps) + 1):
        step = flow.journey.next_step(session)
        if step == REVIEW:
            return session, step, None
        page = form_page(session, step)
        assert page is not None, f"the {flow.name} journey's step {step} has no page"
        form = page.given(session) if step not in session.answered else None
        if form is None:
            return session, step, None
        session, result = page.submit(session, form, by_user=False)
        if not result.ok:
            return session, step, (form, result)
    return session, flow.journey.next_step(session), None


def forward(session: CheckoutSession) -> Response:
    """After a step was saved: on to the next step that needs the user. A boosted form gets
    that step's page in its answer (one round trip), a plain one a redirect to it.

    A page whose upstream calls fail after the step was saved is reached by a page load
    (``HX-Redirect``): the failure shows at that page's address, and "Try again" asks for that
    page alone, in its own time for the upstream."""
    session, step, failed = advance(session)
    url = step_url(session, step)
    if not is_boosted():
        return htmx_redirect(url)
    try:
        return shown_at(_reached(session, step, failed), url)
    except UpstreamError:
        return htmx_redirect(url)


def _reached(session: CheckoutSession, step: str,
             failed: tuple[Any, FormResult] | None) -> Response:
    """The page of ``step``, the one :func:`advance` found the session at."""
    if step == REVIEW:
        return _review_page(session)
    page = form_page(session, step)
    assert page is not None, f"the {session.flow} journey's step {step} has no page"
    if failed is not None:
        return page.render(session, *failed)
    # As the step's own page shows it: a form kept for it (its redirect was not followed, say),
    # and what the step reads first (the KYC step's standing, which may have moved on since the
    # page last looked: a resume link opened after the approval shows it, not "checking").
    return page.get(session)


def landing_url(session: CheckoutSession) -> str:
    """Where the browser is sent to open ``session``: the address of the step it has reached
    (passing over the steps whose values are given), so that the history holds each step at
    its own address and Back from the next step returns to this one, with or without
    JavaScript. Once there is an order, or one is being created, the session's own page, which
    shows where it stands; and that page too when the step cannot be found just now (the
    upstream not answering): it says so, and "Try again" finds the step."""
    if session.order_id or creation.pending_since(session) is not None:
        return session_url(session)
    try:
        session, step, _failed = advance(session)
    except UpstreamError:
        return session_url(session)
    return step_url(session, step)


@bp.get("/s/<session_id>/", endpoint="flow")
@limited("page")
@session_route
def session_page(session: CheckoutSession) -> Response:
    """The session's own address (the resume link): its order, or the state of its creation,
    shown here; a step before the order, at the step's own address (a redirect)."""
    if session.order_id:
        return order_page(session)
    if creation.pending_since(session) is not None:
        return _settle(session)
    # A step shown here would stand in the history at the session's address, where Back from
    # the next step would find that next step (this page shows the step reached).
    session, step, _failed = advance(session)
    return htmx_redirect(step_url(session, step))


def step_category() -> str:
    """A step's page is a page; sending its form counts against the limit the step declares
    (``StepPage.post_limit``: identity documents on the KYC step)."""
    if request.method == "GET":
        return "page"
    step = (request.view_args or {}).get("step")
    return next((page.post_limit for page in form_pages(str(step))), "form")


@bp.route("/s/<session_id>/<step>", endpoint="step", methods=["GET", "POST"])
@limited(step_category)
@session_route
def step_page(session: CheckoutSession, step: str) -> Response:
    """One step before the order: its form (GET), or its values checked and saved (POST)."""
    if not form_pages(step):
        abort(404)                  # no flow's step: no page at this address
    page = form_page(session, step)
    if page is None:
        return redirect(session_url(session), code=303)
    blocked = gate(session, step)
    if blocked is not None:
        return blocked
    if step != "choose" and session.quote is None and "choose" in session.done:
        # The quote was dropped (a create given up after its grace period): the offer's fields
        # and checks are read from one, so a fresh one first, for the same answers.
        session = quotes.requote(get_state().sessions, session, flow_of(session))
    if request.method == "GET":
        return page.get(session)
    form = request.form.to_dict()
    shown = page.preview(session, form)
    if shown is not None:
        return shown
    saved, result = page.submit(session, form)
    if not result.ok:
        if not page.keeps_refused_form:
            return page.render(saved, form, result)
        kept = keep_form(saved, step, form, result)
        if is_boosted():
            # The page the redirect would show (the form kept, its messages taken once), here.
            return shown_at(page.get(kept), step_url(kept, step))
        return htmx_redirect(step_url(saved, step))
    return forward(forget_form(saved, step))


# -- review -------------------------------------------------------------------------------------------

def show_review(session: CheckoutSession, *, notice: str | None = None,
                form_error: str | None = None,
                before: Mapping[str, Any] | None = None) -> Response:
    """The review; ``before``: the quote the user last saw, when the price was renewed since
    (each amount that moved is shown before and now)."""
    flow = flow_of(session)
    renewed = False
    if notice is None and form_error is None:
        old = session.quote
        session, changed = quotes.refresh(get_state().sessions, session, flow)
        renewed = (session.quote or {}).get("id") != (old or {}).get("id")
        if changed and session.reviewed:
            notice = _("The price has been updated. Check it before you confirm.")
            before = old
        if not session.reviewed:
            def seen(fresh: CheckoutSession) -> None:
                fresh.reviewed = True

            session = get_state().sessions.update(session.id, seen)
    record = session.quote or {}
    context = review_page(session).context(session)
    breakdown = flow.shown_breakdown(session, record)
    return render(f"checkout/{flow.name}/review.html", f"checkout/{flow.name}/_review.html",
                  breakdown=breakdown, quote_id=record.get("id"),
                  price_changes=breakdown.changes_since(flow.shown_breakdown(session, before))
                  if before and record else [],
                  price_holds_until=quotes.holds_until(record, flow) if record else None,
                  # The price clock ran out and asked for this (with JavaScript): the page says
                  # the new price to a screen reader, which would otherwise hear nothing of it.
                  price_renewed=renewed and triggered_by(PRICE_CLOCK),
                  notice=notice,
                  form_error=form_error, step=REVIEW,
                  review_digest=creation.review_digest(session, flow), **context)


def reopen(session: CheckoutSession, step: str) -> CheckoutSession:
    """``step`` is to be done again (review is closed until it is)."""
    flow = flow_of(session)
    return get_state().sessions.update(session.id, lambda s: flow.journey.reopen(s, step))


@bp.get("/s/<session_id>/review", endpoint="review")
@limited("page")
@session_route
def review(session: CheckoutSession) -> Response:
    """Everything at a glance, with a fresh price, before the order is created."""
    blocked = gate(session, REVIEW)
    if blocked is not None:
        return blocked
    return _review_page(session)


def _review_page(session: CheckoutSession) -> Response:
    flow = flow_of(session)
    problem = flow.wallet_problem(session)
    if problem is not None:
        # What the review would show no longer holds: its step again, saying why.
        return _back_to_field(session, flow, *problem)
    session, notice = take_notice(session, REVIEW)
    return show_review(session, notice=notice.get("notice"), form_error=notice.get("form_error"),
                       before=notice.get("before"))


def _back_to_review(session: CheckoutSession, *, notice: str | None = None,
                    form_error: str | None = None,
                    before: Mapping[str, Any] | None = None) -> Response:
    """After "Confirm" did not create the order: the review again, by a redirect; ``before``:
    the quote the user confirmed, when the price was renewed (the review shows what moved)."""
    keep_notice(session, REVIEW, {"notice": notice, "form_error": form_error,
                                  "before": dict(before) if before else None})
    return htmx_redirect(step_url(session, REVIEW))


def _requote(session: CheckoutSession, notice: str) -> Response:
    before = session.quote
    session = quotes.requote(get_state().sessions, session, flow_of(session))
    return _back_to_review(session, notice=notice, before=before)


def _show_confirming(session: CheckoutSession) -> Response:
    return render("checkout/journey/confirming.html", "checkout/journey/_confirming.html",
                  step=REVIEW, reference=creation.order_params(session))


def _fresh_review(session: CheckoutSession) -> Response:
    """The grace period passed without an order (``session`` as its attempt was forgotten): a
    fresh quote, reviewed before a new attempt."""
    session, _changed = quotes.refresh(get_state().sessions, session, flow_of(session))
    return _back_to_review(session, notice=_(
        "We could not find an order from your last attempt, and you have not been charged. "
        "Check the details and the new price, then confirm again."))


def _settle(session: CheckoutSession) -> Response:
    """A create had no answer: look the order up (never create), and say where it stands."""
    result = creation.settle_pending(get_state().sessions, session, flow_of(session))
    if result.outcome is Outcome.CREATED:
        fresh = get_state().sessions.get(session.id) or session
        return order_page(fresh)
    if result.outcome is Outcome.RETRY:
        return _fresh_review(result.session or session)
    return _show_confirming(session)


# -- create -------------------------------------------------------------------------------------------

@bp.post("/s/<session_id>/create", endpoint="create")
@limited("create")
@session_route
def create(session: CheckoutSession) -> Response:
    """Create the order, once: repeated or concurrent requests all lead to the same order."""
    if session.order_id:
        return htmx_redirect(step_url(session, after_create(session)))
    blocked = gate(session, REVIEW)
    if blocked is not None:
        return blocked
    flow = flow_of(session)
    stored = session.quote or {}
    if request.form.get("quote_id") != stored.get("id") or not quotes.is_current(session, flow):
        # The user confirmed a price that is no longer on offer: show the new one, ask again.
        return _requote(session, _("The price has changed. Check the new price and confirm "
                                   "again."))
    result = creation.create_order(get_state().sessions, session, flow,
                                   request.form.get("review_digest"))
    if result.outcome is Outcome.CREATED:
        step = after_create(result.session or session)
        if result.order is not None:
            # The create's answer is the order's first read: kept as its last known state, for
            # its pages to show while the upstream does not answer.
            get_state().order_statuses.fetch_and_store(result.order.id, flow.name,
                                                       fetched=result.order.raw, source="create")
            if step == payment_step(flow):
                get_state().just_created.keep(flow.name, result.order)
        return htmx_redirect(step_url(session, step))
    if result.outcome is Outcome.BUSY:
        return render("checkout/journey/creating.html", "checkout/journey/_creating.html",
                      step=REVIEW)
    fresh = result.session or session
    if result.outcome is Outcome.CHANGED:
        return _back_to_review(fresh, form_error=_(
            "Your order details changed. Please check them again."))
    if result.outcome is Outcome.INVALID:
        return _back_to_field(fresh, flow, result.field or "address", result.message or "")
    if result.outcome is Outcome.REQUOTE:
        return _requote(fresh, _("The price expired. Check the new price and confirm again."))
    if result.outcome is Outcome.REJECTED:
        if result.field is not None:
            return _back_to_field(fresh, flow, result.field, _(
                "Our payment partner did not accept this: %(reason)s",
                reason=result.message or ""))
        return _back_to_review(fresh, form_error=_(
            "Our payment partner could not create this order. Check your details and try "
            "again, or go back to the shop."))
    if result.outcome is Outcome.RETRY:
        return _fresh_review(fresh)
    if result.outcome is Outcome.NOT_SENT:
        return _back_to_review(fresh, form_error=_(
            "Our payment partner is not answering, so your order was not created and you have "
            "not been charged. Try again in a moment."))
    return _show_confirming(fresh)


def _back_to_field(session: CheckoutSession, flow: Flow, field_name: str,
                   message: str) -> Response:
    """A value the create could not send: its step again, the message at its field. A value no
    step of this session asks (the merchant's own wallet of a merchant-funded payout, say) cannot
    be corrected by the user: the review says so instead."""
    step = flow.field_steps.get(field_name)
    if step is None and field_name in {spec.name for spec in quotes.required_fields(session)}:
        step = flow.field_steps.get("requiredFields")      # one of the offer's fields: its step
    if step is None or step not in {s.name for s in flow.journey.before_order(session)}:
        return _back_to_review(session, form_error=_(
            "This order cannot be created: %(reason)s Please go back to the shop.",
            reason=message))
    session = reopen(session, step)
    keep_notice(session, step, {"field": field_name, "message": message})
    return htmx_redirect(step_url(session, step))


@bp.errorhandler(OrderUnderway)
def order_underway(error: OrderUnderway) -> Response:
    """A step posted (say, in a second tab) while the order is being created, or after: the
    session's own page, which shows the order where it stands."""
    return htmx_redirect(url_for("checkout.flow", session_id=str(error.args[0])))


def order_required(flow_name: str) -> Callable[[Callable[[CheckoutSession], Response]],
                                               Callable[[CheckoutSession], Response]]:
    """For the pages and actions of an order of ``flow_name``: before there is one (or for a
    session of another flow), the session's own page."""
    def decorate(view: Callable[[CheckoutSession], Response]
                 ) -> Callable[[CheckoutSession], Response]:
        @wraps(view)
        def wrapper(session: CheckoutSession) -> Response:
            if not session.order_id or session.flow != flow_name:
                return redirect(session_url(session), code=303)
            return view(session)

        return wrapper

    return decorate


@bp.before_request
def limit_upload() -> None:
    """Before anything reads a POST's body (the anti-forgery check does, in ``session_route``):
    a step's form may send what it needs (the KYC step's photos) and no more; the session's
    other forms a few fields. The webhook receiver sets its own limit."""
    if request.method != "POST" or request.endpoint == "checkout.webhooks":
        return
    limit = SMALL_FORM
    if request.endpoint == "checkout.step":
        step = (request.view_args or {}).get("step")
        limit = max((page.max_upload for page in form_pages(str(step))), default=SMALL_FORM)
    request.max_content_length = limit
