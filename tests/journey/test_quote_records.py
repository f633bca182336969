"""Quote records as sessions keep them: the amount in US dollars the KYC rules are read with."""
from __future__ import annotations

from decimal import Decimal

import pytest

from checkout.journey import quotes


def test_a_record_carries_the_amount_in_dollars_the_flow_read():
    record = quotes.make_record("q-1", {}, {"totalAmountUsd": 12.5}, {"amount": "5"}, ("amount",),
                                usd=Decimal("12.5"))
    assert quotes.usd_amount(record, "onramp") == Decimal("12.5")
    unknown = quotes.make_record("q-2", {}, {}, {}, (), usd=None)
    assert quotes.usd_amount(unknown, "onramp") is None


@pytest.mark.parametrize(("flow", "cashout"), [
    ("onramp", {"totalAmountUsd": 40, "usdAmount": 1}),
    ("offramp", {"usdAmount": 40, "totalAmountUsd": 1}),
])
def test_a_record_kept_by_an_earlier_release_is_read_by_its_flow(flow, cashout):
    """A session opened before the upgrade keeps a record without ``usd``: its level is read
    from the flow's own cashout figure, not left unknown (which would stop the user at KYC)."""
    assert quotes.usd_amount({"id": "q-old", "cashout": cashout}, flow) == Decimal(40)
