"""A flow's steps: which comes next, which are done, what a change undoes, and "Step n"."""
from __future__ import annotations

from checkout.journey.steps import Journey, Step
from checkout.sessions import CheckoutSession


def needs_fields(session: CheckoutSession) -> bool:
    return session.value("countryIsoCode") != "NG"


JOURNEY = Journey((
    Step("choose", "Amount"),
    Step("wallet", "Wallet"),
    Step("details", "Details", needed=needs_fields),
    Step("review", "Review"),
    Step("pay", "Pay", before_order=False),
))


def session(**answers) -> CheckoutSession:
    s = CheckoutSession(id="s", flow="onramp", csrf_token="t")
    s.answer(answers)
    return s


def test_the_next_step_is_the_first_needed_one_not_done():
    s = session(countryIsoCode="KE")
    assert JOURNEY.next_step(s) == "choose"
    JOURNEY.complete(s, "choose")
    JOURNEY.complete(s, "wallet")
    assert JOURNEY.next_step(s) == "details"
    JOURNEY.complete(s, "details")
    assert JOURNEY.next_step(s) == "review"


def test_a_step_not_needed_is_skipped_and_not_counted():
    s = session(countryIsoCode="NG")
    JOURNEY.complete(s, "choose")
    JOURNEY.complete(s, "wallet")
    assert JOURNEY.next_step(s) == "review"
    assert JOURNEY.position(s, "review")[0] == 3
    assert JOURNEY.position(session(countryIsoCode="KE"), "review")[0] == 4


def test_a_number_does_not_shrink_when_an_answered_step_stops_being_needed():
    s = session(countryIsoCode="KE")
    JOURNEY.complete(s, "choose")
    JOURNEY.complete(s, "wallet")
    assert JOURNEY.position(s, "details")[0] == 3
    JOURNEY.complete(s, "details")
    s.answer({"countryIsoCode": "NG"})      # e.g. identity verified: no longer needed
    assert JOURNEY.next_step(s) == "review"
    assert JOURNEY.position(s, "review")[0] == 4


def test_a_later_step_may_not_be_opened_before_the_earlier_ones():
    s = session(countryIsoCode="KE")
    assert JOURNEY.missing_before(s, "details") == "choose"
    JOURNEY.complete(s, "choose")
    assert JOURNEY.missing_before(s, "details") == "wallet"
    assert JOURNEY.missing_before(s, "wallet") is None


def test_changing_a_step_undoes_the_later_ones_unless_kept():
    s = session(countryIsoCode="KE")
    for name in ("choose", "wallet", "details"):
        JOURNEY.complete(s, name)
    JOURNEY.complete(s, "choose", keep=("wallet",))
    assert s.done == ["choose", "wallet"]
    JOURNEY.complete(s, "choose")
    assert s.done == ["choose"]
    assert s.answered == ["choose", "wallet", "details"]     # the user did answer them


def test_a_step_passed_over_is_done_but_not_answered_by_the_user():
    s = session(countryIsoCode="KE")
    JOURNEY.complete(s, "choose", by_user=False)
    assert s.done == ["choose"] and s.answered == []
    JOURNEY.reopen(s, "choose")
    assert s.done == []
