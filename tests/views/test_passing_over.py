"""Fewer taps where the merchant already knows the answers: steps whose every value is given by the
launch token are passed over, and the user can still open them to change what is not locked."""
from __future__ import annotations

from .conftest import EVM_ADDRESS

EVERYTHING = dict(countryIsoCode="NG", paymentChannel="bank", network="CELO", asset="USDT",
                  currency="local", amount="5000", address=EVM_ADDRESS, email="ada@example.com")


def test_a_launch_that_gives_everything_opens_at_the_review_and_pays_in_two_taps(flow):
    page = flow.start(**EVERYTHING)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and "Review your order" in html and "Confirm and pay" in html
    session = flow.session
    assert session.done == ["choose", "wallet"] and session.answered == []
    # Tap one: "Confirm and pay"; the next page is the payment itself.
    pay = flow.landed(flow.create(page), "pay")
    assert "I have paid" in pay.get_data(as_text=True)


def test_a_given_phone_number_passes_the_details_step_too(flow):
    page = flow.start(**{**EVERYTHING, "countryIsoCode": "KE", "paymentChannel": "mobile_money",
                         "amount": "1000", "phoneNumber": "0712345678"})
    assert "Review your order" in page.get_data(as_text=True)
    assert flow.session.fields == {"phoneNumber": "254712345678"}


def test_a_partly_given_step_is_asked_with_what_is_given(flow):
    page = flow.start(**{k: v for k, v in EVERYTHING.items() if k != "email"})
    html = page.get_data(as_text=True)
    # The amount is passed over; the wallet step asks the email, with the address filled in.
    assert flow.session.done == ["choose"]
    assert 'name="email"' in html and EVM_ADDRESS in html
    assert 'id="field-email-error"' not in html                      # nothing typed yet


def test_a_given_value_that_fails_its_check_is_shown_with_why(flow):
    page = flow.start(**{**EVERYTHING, "amount": "1"})              # under the corridor's minimum
    html = page.get_data(as_text=True)
    assert 'id="field-amount-error"' in html and "The minimum is" in html
    assert flow.session.done == []


def test_a_passed_over_step_can_still_be_opened_and_changed(flow):
    review = flow.start(**EVERYTHING)
    assert "Change wallet or email" in review.get_data(as_text=True)
    wallet = flow.get("/wallet")
    assert 'value="ada@example.com"' in wallet.get_data(as_text=True)
    page = flow.landed(flow.wallet(email="grace@example.com"), "review")
    assert "grace@example.com" in page.get_data(as_text=True)
    # The user answered it now: a change of network asks it again, never passes it over.
    response = flow.choose(network="POLYGON", asset="USDC")
    assert response.headers["Location"].endswith("/wallet")
    assert "wallet" not in flow.session.done


def test_a_session_opens_at_its_steps_own_address_so_back_returns_to_it(flow):
    """The history holds each step at its own address: the first page was shown at the
    session's (``/s/<id>/``), which shows whatever step is reached, so Back from the wallet
    showed the wallet again."""
    start = flow.client.get("/checkout/onramp")
    assert start.status_code == 303 and start.headers["Location"].endswith("/choose")
    flow.start(**{k: v for k, v in EVERYTHING.items() if k not in ("address", "email")})
    launched = flow.responses[-2]
    assert launched.headers["Location"] == f"{flow.base}/wallet"
    # The session's own address (a resume link) sends the browser to the step's.
    again = flow.get("/")
    assert again.status_code == 303 and again.headers["Location"].endswith("/wallet")
    # Back from the wallet: the step before it, at its own address.
    amount = flow.get("/choose")
    assert amount.status_code == 200 and 'name="amount"' in amount.get_data(as_text=True)
