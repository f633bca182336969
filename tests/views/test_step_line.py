"""The "Step n" line over a page's heading: no number shown is taken back on a later page.

Which steps an order needs is learnt on the way (the offer's fields come with its price; identity
with the amount), so a total shown on the first page could only be a guess ("Step 1 of 6", then
"Step 2 of 5"). The line counts the steps done and the one shown, never those to come.
"""
from __future__ import annotations

import re

import pytest
from werkzeug.test import TestResponse

from .conftest import EVM_ADDRESS, Flow

STEP_LINE = re.compile(r'<p class="field-help" data-step="[a-z]+">([^<]*)</p>')


def step_line(page: TestResponse) -> str:
    found = STEP_LINE.search(page.get_data(as_text=True))
    assert found, page.get_data(as_text=True)[:2000]
    return found.group(1)


@pytest.mark.parametrize(("transfer", "expected"), [
    # Nigeria's bank transfer asks no fields: no "Details" step.
    ("manual", ["Step 1: Amount", "Step 2: Wallet", "Step 3: Review", "Step 4: Pay"]),
    ("stk_push", ["Step 1: Amount", "Step 2: Wallet", "Step 3: Details", "Step 4: Review",
                  "Step 5: Pay"]),
])
def test_the_step_line_counts_no_step_before_it_is_known(flow, transfer, expected):
    lines = [step_line(flow.start())]
    lines.append(step_line(flow.follow(flow.choose(transfer))))
    page = flow.follow(flow.wallet())
    if page.request.path.endswith("/details"):
        lines.append(step_line(page))
        page = flow.follow(flow.details(phoneNumber="0712345678"))
    lines.append(step_line(page))
    lines.append(step_line(flow.follow(flow.create(page))))
    assert lines == expected


def test_steps_passed_over_are_not_counted(flow):
    """The shop gave the amount: the checkout opens at the wallet, and that is the user's first
    step (it said "Step 2" over the first page the user saw). Everything given: the review is
    the first."""
    given = dict(countryIsoCode="NG", paymentChannel="bank", network="CELO", asset="USDT",
                 currency="local", amount="5000")
    wallet = flow.start(**given)
    assert wallet.request.path.endswith("/wallet") and step_line(wallet) == "Step 1: Wallet"
    review = flow.follow(flow.wallet())
    assert step_line(review) == "Step 2: Review"
    assert step_line(flow.follow(flow.create(review))) == "Step 3: Pay"

    everything = Flow(flow.app, flow.app.test_client())
    review = everything.start(**given, address=EVM_ADDRESS, email="ada@example.com")
    assert step_line(review) == "Step 1: Review"
    # The user opens a step passed over (the review's "Change" link) and submits it: it counts.
    everything.get("/wallet")
    assert step_line(everything.follow(everything.wallet(email="grace@example.com"))) \
        == "Step 2: Review"


def test_the_step_line_is_the_same_answered_in_place_and_reloaded(app, client):
    """With JavaScript the next step's page comes in the form's answer: its line is the one a
    reload shows (it said "Step 6: Review", then "Step 5: Review" on a reload), and the order's
    first page follows on."""
    from .boosted import Boosted
    from .test_offramp import Sale

    class BoostedSale(Boosted, Sale):
        pass

    sale = BoostedSale(app, client)
    sale.start()
    review = sale.to_review()
    assert step_line(review) == "Step 5: Review"
    assert step_line(sale.open("/review")) == "Step 5: Review"
    assert step_line(sale.landed(sale.create(review), "deposit")) == "Step 6: Send"
