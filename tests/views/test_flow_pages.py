"""A flow's steps (its ``steps()``) and its pages (its view module's ``PAGES``) are checked
against each other when the app starts."""
from __future__ import annotations

import pytest


@pytest.mark.parametrize(("pages", "said"), [
    ("a step missing", "step 'details' has no page in the view module's PAGES"),
    ("a step the journey lacks", "page 'phone' is no step of the flow's steps()"),
    ("no payment step", "no step 'deposit' (its PAGES' payment_step)"),
])
def test_a_flows_pages_and_its_journey_must_name_the_same_steps(app, pages, said, monkeypatch):
    """A step added to a flow's journey and not to its pages (or the reverse) is refused when the
    app starts: a user would otherwise meet it as a 500 page at that step."""
    from checkout.views import journey, onramp

    steps = dict(onramp.PAGES.steps)
    payment = "pay"
    if pages == "a step missing":
        del steps["details"]
    elif pages == "a step the journey lacks":
        steps["phone"] = steps["details"]
    else:
        payment = "deposit"
    other = journey.FlowPages(steps=steps, review_context=dict, order_page=lambda session: None,
                              after_create=lambda s: "status", payment_step=payment)
    monkeypatch.setitem(journey._PAGES, "onramp", other)
    with pytest.raises(TypeError, match="the onramp journey") as refused:
        journey.check_pages(app.extensions["checkout"].flows)
    assert said in str(refused.value)
    monkeypatch.setitem(journey._PAGES, "onramp", onramp.PAGES)
    journey.check_pages(app.extensions["checkout"].flows)


def test_a_flow_whose_view_module_registered_no_pages_is_named(app, monkeypatch):
    from checkout.views import journey

    monkeypatch.delitem(journey._PAGES, "offramp")
    with pytest.raises(TypeError, match="the offramp flow has no pages"):
        journey.check_pages(app.extensions["checkout"].flows)
