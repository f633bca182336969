"""The step that asks the offer's required fields (spec 2.2): one form built from the descriptors.

The on-ramp asks them as "your payment details", the off-ramp as "where we pay you"; both go
through :func:`checkout.forms.clean_required_fields`. A field whose value the launch token locks,
or that an earlier step already answered (the off-ramp's mobile network), is shown read-only and
taken from there, never from the form.
"""
from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from werkzeug.wrappers import Response

from ..forms import FormResult, clean_required_fields, display_value, field_inputs
from ..htmx import render
from ..journey import quotes
from ..sessions import CheckoutSession
from .journey import StepPage, save_before_order

Known = Callable[[CheckoutSession], dict[str, Any]]


def _nothing_known(_session: CheckoutSession) -> dict[str, Any]:
    return {}


class FieldsStep(StepPage):
    def __init__(self, flow_name: str, name: str, *, heading: Any,
                 known: Known = _nothing_known, intro: Any = None,
                 keep: tuple[str, ...] = ()) -> None:
        self.flow_name = flow_name
        self.name = name
        self.heading = heading
        self.known = known              # values an earlier step gave (read-only here)
        self.intro = intro
        self.keep = keep                # later steps that do not depend on these fields

    def prefilled(self, session: CheckoutSession) -> dict[str, Any]:
        """Values the form starts with: saved answers, else the token's claim of that name."""
        specs = quotes.required_fields(session)
        saved = session.fields
        return {spec.name: saved.get(spec.name, session.claims.get(spec.name)) for spec in specs}

    def given(self, session: CheckoutSession) -> dict[str, Any] | None:
        specs = quotes.required_fields(session)
        known = self.known(session)
        values = {spec.name: known.get(spec.name, session.claims.get(spec.name))
                  for spec in specs}
        if any(value in (None, "") for value in values.values()):
            return None
        return values

    def clean(self, session: CheckoutSession, form: Mapping[str, Any]) -> FormResult:
        specs = quotes.required_fields(session)
        merged = {**dict(form), **self.known(session)}
        return clean_required_fields(specs, merged, country=session.value("countryIsoCode"),
                                     session=session)

    def save(self, session: CheckoutSession, result: FormResult, *,
             by_user: bool) -> CheckoutSession:
        def change(fresh: CheckoutSession) -> None:
            fresh.fields = result.values
            self.flow.journey.complete(fresh, self.name, keep=self.keep, by_user=by_user)

        return save_before_order(session, change)

    def render(self, session: CheckoutSession, form: Mapping[str, Any] | None = None,
               result: FormResult | None = None) -> Response:
        specs = quotes.required_fields(session)
        known = self.known(session)
        values = {**self.prefilled(session), **dict(form or {}), **known}
        if form is None:
            # A saved phone number is shown as people write it, not as the upstream's digits.
            values.update({spec.name: display_value(spec, values.get(spec.name)) for spec in specs
                           if spec.type == "phone" and values.get(spec.name)})
        return render("checkout/journey/fields.html", "checkout/journey/_fields.html",
                      inputs=field_inputs(specs, session.value("countryIsoCode")), values=values,
                      errors=(result.errors if result else {}),
                      form_error=(result.form_error if result else None), known=known,
                      step=self.name, heading=self.heading, intro=self.intro)
