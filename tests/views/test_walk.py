"""One whole walk per transfer type, each step's form sent as the user sends it: the amount, the
wallet, the phone number where the payment needs one, the review, "Confirm and pay". The other view
tests open their session at the step they test (``Flow.session_at``); these keep the walk there."""
from __future__ import annotations

import pytest

from .conftest import CORRIDORS, EVM_ADDRESS, Flow


@pytest.mark.parametrize("transfer", sorted(CORRIDORS))
def test_each_transfer_type_walked_step_by_step_to_its_payment(flow: Flow, transfer: str):
    first = flow.start()
    assert first.request.path.endswith("/choose")
    review = flow.walk_to_review(transfer)
    session = flow.session
    assert session.answered[:2] == ["choose", "wallet"]        # the user's own forms, each
    assert EVM_ADDRESS in review.get_data(as_text=True)
    pay = flow.follow(flow.create(review))
    assert pay.request.path.endswith("/pay"), pay.request.path
    assert f'data-transfer-type="{transfer}"' in pay.get_data(as_text=True)
