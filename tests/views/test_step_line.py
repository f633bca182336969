"""The "Step n" line over a page's heading: no number shown is taken back on a later page.

Which steps an order needs is learnt on the way (the offer's fields come with its price; identity
with the amount), so a total shown on the first page could only be a guess ("Step 1 of 6", then
"Step 2 of 5"). The line counts the steps done and the one shown, never those to come.
"""
from __future__ import annotations

import re

import pytest
from werkzeug.test import TestResponse

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
