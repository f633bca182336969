"""Each flow declares its journey once, every step with the page that shows it
(checkout/views/onramp.py and offramp.py ``steps``): a step before the order has its form, the
review its page, one step of the order shows how to pay it, and the status its page."""
from __future__ import annotations

from checkout.journey.steps import REVIEW
from checkout.views import journey


def test_every_step_of_each_flow_has_its_page(app):
    for flow in app.extensions["checkout"].flows.values():
        for step in flow.journey.form_steps:
            assert isinstance(step.page, journey.StepPage), (flow.name, step.name)
            # A page of one flow belongs to it (the identity step serves both).
            assert step.page.name == step.name
            assert getattr(step.page, "flow_name", flow.name) == flow.name
        assert isinstance(flow.journey.step(REVIEW).page, journey.ReviewPage), flow.name
        paying = [step for step in flow.journey.steps
                  if isinstance(step.page, journey.OrderPage) and step.page.pays]
        assert len(paying) == 1 and not paying[0].before_order, flow.name
        assert journey.payment_step(flow) == paying[0].name
        assert any(isinstance(step.page, journey.StatusPage) for step in flow.journey.steps)
