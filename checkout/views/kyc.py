"""The KYC step, the same for every flow: verify the user's identity before review when the
order's amount needs it (:mod:`checkout.kyc.standing`).

What the page shows follows where the user stands, read once per decision:

- ``contact``: the upstream knows users by phone (or by email with the user API); when no step
  gave it, it is asked here first.
- ``form``: the documents of the level needed, then one field per descriptor (the same
  :class:`~checkout.forms.FieldInput` as the offer's fields) and, for an advanced document, its
  photos as camera inputs. A rejection says why and offers the form again (another document).
  A computer without a camera gets the session's link as a QR code; the page follows along
  (``kyc_check``) when the phone finishes.
- ``handoff``: that QR code alone (``?handoff=1``), the page that waits for the phone: without
  JavaScript the form page cannot follow along, this one reloads itself.
- ``pending``: the submission is being reviewed; the page follows along, and continues the
  checkout where it stopped once approved.
- ``limit``: the user's verification reached its limit (``reachedKycLimit``); what they can do.
- ``unavailable``: the rules or the standing could not be read; try again.

The step is never "done" in the journey's bookkeeping: it is needed exactly while the standing
does not cover the order, so a new amount that asks more brings it back.
"""
from __future__ import annotations

import logging
import math
import time
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlencode

from flask import request, url_for
from flask_babel import gettext as _
from werkzeug.datastructures import FileStorage
from werkzeug.wrappers import Response

from ..errors import (
    UpstreamBadRequest,
    UpstreamBadResponse,
    UpstreamError,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamUnavailable,
)
from ..forms import FormResult, clean_required_fields, field_inputs
from ..htmx import htmx_redirect, render
from ..kyc import photos as kyc_photos
from ..kyc import standing, submission
from ..kyc.levels import covers, next_level
from ..kyc.standing import KycStanding
from ..public_address import external_url
from ..qr import qr_svg
from ..ratelimits import limited, photo_decodes
from ..sessions import CheckoutSession
from ..state import get_state
from ..upstream.types import KycDocument, RequiredField
from ..upstream_text import document_title
from ..urls import safe_external_url
from . import journey
from .blueprint import bp
from .context import session_route

log = logging.getLogger("checkout.kyc")


def kyc_standing() -> KycStanding:
    """Where the app's users stand (built with the app: ``checkout.kyc.standing``)."""
    return get_state().kyc


STEP = "kyc"
# Three photos of at most 10 MB each, and the form's text: the upload limit of this step's POST.
MAX_UPLOAD = 3 * kyc_photos.MAX_UPLOAD_BYTES + 256 * 1024


def _contact_field(kind: str) -> RequiredField:
    if kind == "email":
        return RequiredField(name="contact_email", type="email", label=_("Your email"))
    return RequiredField(name="contact_phone", type="phone", label=_("Your phone number"))


class KycStep(journey.StepPage):
    name = STEP
    max_upload = MAX_UPLOAD
    post_limit = "kyc"          # identity documents: few a day (checkout.ratelimits)
    # Its fields (names, birth date, ID number) go to the upstream and are never stored here, not
    # even for a redirect: a refused form is answered in place (checkout.js takes that answer out
    # of the history's posts).
    keeps_refused_form = False

    # -- passing over ---------------------------------------------------------------------------

    def given(self, session: CheckoutSession) -> dict[str, Any] | None:
        """Read the standing (once per decision); {} when it covers the order (the step is then
        passed over), else None: the user has something to do here."""
        try:
            session = kyc_standing().refresh(session)
        except UpstreamError as exc:
            _unavailable(exc)
            return None
        return {} if kyc_standing().covered(session) else None

    def get(self, session: CheckoutSession) -> Response:
        try:
            session = kyc_standing().refresh(session, force=_check_asked(session))
        except UpstreamError as exc:
            _unavailable(exc)
            return self.render(session, view="unavailable")
        if kyc_standing().covered(session):
            return journey.forward(session)
        return self.render(session)

    # -- the form -------------------------------------------------------------------------------

    def clean(self, session: CheckoutSession, form: Mapping[str, Any]) -> FormResult:
        if not form:
            return FormResult()                     # passed over: nothing to save
        if form.get("action") == "contact":
            kind = kyc_standing().missing_contact(session) or "phone"
            return clean_required_fields([_contact_field(kind)], form,
                                         country=session.value("countryIsoCode"))
        if standing.awaiting(kyc_standing().current(session) or {}):
            # One document at a time: the one sent (in another tab, on the phone) is being read.
            return FormResult(form_error=_("Your document is being checked. Wait for the "
                                           "answer before you send another one."))
        level = kyc_standing().target_level(session)
        document = kyc_standing().document(session, level, form.get("document")) if level else None
        if document is None:
            return FormResult(form_error=_("Choose the document you will use."))
        result = clean_required_fields(document.required_fields, form,
                                       country=session.value("countryIsoCode"))
        uploads = []
        for photo in kyc_photos.kinds_asked(document):
            name = f"photo_{photo.name}"
            upload: FileStorage | None = request.files.get(name)
            if upload is None or not upload.filename:
                result.errors[name] = _("Add this photo.")
                continue
            try:
                uploads.append((photo, name, kyc_photos.received(upload.stream)))
            except kyc_photos.PhotoError as exc:
                result.errors[name] = str(exc)
        photos = []
        if result.ok:
            # Decoding is what costs (CPU, memory): only for a form that will be sent.
            photo_decodes(len(uploads))
            for photo, name, checked in uploads:
                try:
                    photos.append((photo, kyc_photos.prepare(checked)))
                except kyc_photos.PhotoError as exc:
                    result.errors[name] = str(exc)
        if not result.ok and uploads:
            # A file input cannot be filled in again by the page: say so, not leave it to guess.
            result.form_error = _("Please check the fields below, then add your photos again.")
        result.facts.update(document=document, photos=photos)
        return result

    def save(self, session: CheckoutSession, result: FormResult, *,
             by_user: bool) -> CheckoutSession:
        if "contact_phone" in result.values or "contact_email" in result.values:
            def remember(fresh: CheckoutSession) -> None:
                record = fresh.kyc
                contact = dict(record.get("contact") or {})
                if "contact_phone" in result.values:
                    contact["phone"] = result.values["contact_phone"]
                if "contact_email" in result.values:
                    contact["email"] = str(result.values["contact_email"]).lower()
                record["contact"] = contact
                fresh.kyc = record

            return journey.save_before_order(session, remember)
        document = result.facts.get("document")
        if document is None:
            if by_user and not kyc_standing().covered(session):
                # The user's form with nothing in it: its body did not arrive whole (a multipart
                # body cut short parses as no field at all, and with JavaScript the anti-forgery
                # token rides in a header). Said, not taken for a step passed over: that showed
                # the form again, emptied, without a word.
                raise journey.StepRefused(FormResult(form_error=_(
                    "Your form did not reach us (a weak connection, perhaps): nothing was sent "
                    "for verification. Please fill it in and send it again.")))
            # Passed over: given() saved the standing that covers the order; go on from it.
            return get_state().sessions.get(session.id) or session
        users = kyc_standing()
        level, who, sent_at = users.target_level(session), users.user_key(session), time.time()

        def submitted(fresh: CheckoutSession) -> None:
            record = fresh.kyc
            record["submitted"] = {"document": document.value, "title": document.title,
                                   "level": level, "who": who, "at_ts": sent_at,
                                   "at": datetime.now(UTC).isoformat()}
            fresh.kyc = record
            fresh.mark_answered(STEP)      # counted in "Step n" once no longer needed

        try:
            already = self._send(session, document, level, result)
        except (UpstreamUnavailable, UpstreamBadResponse) as exc:
            # No answer is not "not sent": the document may have arrived. What the partner
            # says now decides; sending it again blindly could make a second submission.
            _unavailable(exc)
            session = journey.save_before_order(session, submitted)
            try:
                session = kyc_standing().refresh(session, force=True)
            except UpstreamError:
                pass
            if session.kyc.get("status") != "pending" and not kyc_standing().covered(session):
                raise journey.StepRefused(FormResult(form_error=_(
                    "We could not reach our verification partner, and your document may not "
                    "have been sent. Try again in a moment."))) from None
            return session
        if already is not None:
            # Nothing was sent for review: the partner knows the user passed this level.
            session = journey.save_before_order(session, lambda fresh: fresh.mark_answered(STEP))
            return kyc_standing().prove(session, already)
        session = journey.save_before_order(session, submitted)
        try:
            return kyc_standing().refresh(session, force=True)
        except UpstreamError:
            return session          # sent: the pending page reads the standing again

    def _send(self, session: CheckoutSession, document: KycDocument, level: str | None,
              result: FormResult) -> str | None:
        """Send the document; a refusal becomes ``StepRefused`` with the partner's words, unless
        it says the user passed this level already: that level is returned (None once sent). No
        answer at all (``UpstreamUnavailable``, ``UpstreamBadResponse``) is left to the caller."""
        fields = submission.user_fields(document, result.values, result.facts["photos"])
        try:
            submission.send(get_state().upstream, session, document, fields,
                            source=kyc_standing().source())
        except UpstreamBadRequest as exc:
            already = submission.already_approved(exc.message)
            if already is not None and covers(already, level):
                return already
            named, said = submission.refusal(exc.message, document)
            refused = FormResult()
            if named:
                refused.errors[named] = said
            else:
                refused.form_error = said
            if kyc_photos.kinds_asked(document):
                refused.form_error = " ".join(filter(None, (
                    refused.form_error, _("Add your photos again."))))
            raise journey.StepRefused(refused) from None
        except UpstreamRateLimited:
            raise           # not read: the 429 page says when to send it again
        except UpstreamRejected:
            raise journey.StepRefused(FormResult(form_error=_(
                "Our verification partner could not take this document now. Try again in a "
                "few minutes, or use their page below."))) from None
        return None

    # -- the page -------------------------------------------------------------------------------

    def render(self, session: CheckoutSession, form: Mapping[str, Any] | None = None,
               result: FormResult | None = None, *, view: str | None = None) -> Response:
        # The journey may hand over the copy it had before given() saved a standing.
        session = get_state().sessions.get(session.id) or session
        context = page_context(session, form, result, view=view)
        return render("checkout/kyc/step.html", "checkout/kyc/_step.html", **context)


def page_context(session: CheckoutSession, form: Mapping[str, Any] | None,
                 result: FormResult | None, *, view: str | None = None) -> dict[str, Any]:
    form = dict(form or {})
    country = session.value("countryIsoCode")
    record = kyc_standing().current(session) or {}
    needed = kyc_standing().needed_level(session)
    context: dict[str, Any] = {
        "step": STEP, "errors": dict(result.errors) if result else {},
        "form_error": result.form_error if result else None, "values": form,
        "needed": needed, "record": record, "flow": session.flow,
        "kyc_url": safe_external_url(record.get("kyc_url"), "kyc"),
        "follow_url": None,
    }
    missing = kyc_standing().missing_contact(session) if needed not in (None, "none") else None
    if view is None:
        if needed is None:
            view = "unavailable"
        elif missing:
            view = "contact"
        elif not record:
            view = "unavailable"            # the standing could not be read for this decision
        elif standing.awaiting(record):
            view = "pending"
        elif kyc_standing().target_level(session, record) is None:
            view = "limit"
        else:
            view = "form"
    context["view"] = view
    if view == "contact":
        context["contact_input"] = field_inputs([_contact_field(missing or "phone")], country)[0]
        return context
    if view in ("pending", "form", "limit"):
        context["follow_url"] = url_for("checkout.kyc_check", session_id=session.id,
                                        shown=_phase(record))
        # The page looks every 5 s, or as often as the partner is read when that is more often
        # (a sandbox run fast); never more than once a second.
        poll = kyc_standing().poll_seconds()
        context["follow_seconds"] = min(FOLLOW_SECONDS, max(1, math.ceil(poll)))
    if view == "pending":
        link = external_url("checkout.flow", session_id=session.id)
        context["resume"] = {"url": link, "qr_svg": qr_svg(link) if link else None,
                             "provider_url": None}
    if view != "form":
        return context
    level = kyc_standing().target_level(session, record)
    assert level is not None
    try:
        documents = kyc_standing().documents(session, level)
    except UpstreamError as exc:
        _unavailable(exc)
        context["view"] = "unavailable"
        return context
    if not documents:
        # No document of that level in this country: past the top level there is nothing more
        # to verify; a level the order needs but no document offers cannot be done here.
        context.update(view="limit" if record.get("reached_limit") else "no_documents",
                       follow_url=None)
        return context
    chosen = form.get("document") or request.args.get("document")
    if len(documents) == 1:
        chosen = documents[0].value
    document = next((d for d in documents if d.value == chosen), None)
    refused_document = (record.get("submitted") or {}).get("document")
    # Why the last document was not accepted: while the user chooses, and on the form of that
    # same document; the form of another one starts afresh.
    rejected = record.get("status") == "rejected" and (
        document is None or len(documents) == 1 or document.value == refused_document)
    context.update(
        level=level, documents=documents, document=document, rejected=rejected,
        # Passed, but at a level the partner does not say: maybe this one already.
        level_unknown=record.get("level_known") is False and not covers(
            str(record.get("passed") or "none"), level),
        checked_again=request.args.get("check") == "1",
        raising=bool(record.get("reached_limit")) and level == next_level(
            str(record.get("passed") or "none")),
        rejected_title=document_title((record.get("submitted") or {}).get("document"),
                                      (record.get("submitted") or {}).get("title")),
        inputs=field_inputs(document.required_fields, country) if document else [],
        photo_kinds=kyc_photos.kinds_asked(document) if document else (),
    )
    if document is not None and len(documents) > 1:
        # The document chosen is in the page's query, which the language menu does not echo
        # (_language.html): it comes back to this document's form, named by its checked value.
        context["language_next"] = (f"{journey.step_url(session, STEP)}?"
                                    f"{urlencode({'document': document.value})}")
    if document is not None and not form:
        # Start from what the user already gave the checkout (their email, say).
        who = standing.contact(session)
        context["values"] = {spec.name: who.email for spec in document.required_fields
                             if spec.name == "email" and who.email}
    link = external_url("checkout.flow", session_id=session.id) if context["photo_kinds"] else None
    if link:
        assert document is not None
        # Without JavaScript the form cannot follow along (a reload would drop what is typed in
        # it): "Wait for my phone" opens the same step without the form, which reloads itself.
        wait_url = url_for("checkout.step", session_id=session.id, step=STEP,
                           document=document.value, handoff=1)
        context["handoff"] = {"url": link, "qr_svg": qr_svg(link), "wait_url": wait_url}
        if request.args.get("handoff") == "1":
            context["view"] = "handoff"
    return context


def _phase(record: Mapping[str, Any]) -> str:
    """What the page shows of the standing, for the follow-along poll to compare."""
    return "pending" if standing.awaiting(dict(record)) else str(record.get("status") or "none")


def _unavailable(exc: UpstreamError) -> None:
    # The kind of failure only: an upstream's message may repeat the phone number asked about.
    log.warning("KYC: the upstream did not answer (%s, status %s)", type(exc).__name__,
                exc.status)


CHECK_AGAIN_SECONDS = 3
FOLLOW_SECONDS = 5


def _check_asked(session: CheckoutSession) -> bool:
    """"Check again" (``?check=1``) reads the partner anew, at most every few seconds however
    often it is clicked (each read is a call made with the merchant's key)."""
    if request.args.get("check") != "1":
        return False
    checked_at = float(session.kyc.get("checked_at") or 0)
    return time.time() - checked_at >= CHECK_AGAIN_SECONDS


@bp.get("/s/<session_id>/kyc/check", endpoint="kyc_check")
@limited("poll")
@session_route
def kyc_check(session: CheckoutSession) -> Response:
    """Polled by the KYC page (every few seconds): 204 while nothing changed for it, else the
    page again (``HX-Redirect``), which then continues the checkout or shows the new state.

    The upstream is asked only when a submission under review is due a look
    (:meth:`checkout.kyc.standing.KycStanding.refresh`); a page showing the form only notices a
    submission made on another device (the phone of the handoff).
    """
    if session.order_id:
        return htmx_redirect(journey.session_url(session))
    try:
        session = kyc_standing().refresh(session)
    except UpstreamError as exc:
        _unavailable(exc)
        return Response(status=204)
    record = kyc_standing().current(session) or {}
    if kyc_standing().covered(session) or _phase(record) != request.args.get("shown"):
        return htmx_redirect(journey.step_url(session, STEP))
    return Response(status=204)
