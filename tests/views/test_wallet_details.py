"""Steps 2 and 3: the wallet (checked for the network) and the offer's required fields."""
from __future__ import annotations

import pytest

from .conftest import EVM_ADDRESS, SOLANA_ADDRESS, STELLAR_ADDRESS, TON_ADDRESS


def test_steps_cannot_be_skipped(flow):
    flow.start()
    for path in ("/wallet", "/details", "/review"):
        response = flow.get(path)
        assert response.status_code == 303 and response.headers["Location"].endswith("/choose")


def test_a_valid_wallet_is_saved_checksummed(flow):
    flow.start()
    flow.choose()
    response = flow.wallet(address=EVM_ADDRESS.lower(), email="Ada@Example.com")
    assert response.status_code == 303
    data = flow.session.answers
    assert data["address"] == EVM_ADDRESS and data["email"] == "Ada@example.com"
    review = flow.follow(response)
    html = review.get_data(as_text=True)
    # Shown checksummed, unlike in the user's wallet: the notice says capitals are not the point.
    assert f'data-testid="review-address">{EVM_ADDRESS}<' in html
    assert "no checksum" in html and "ignoring capitals" in html


def test_a_refused_form_comes_back_by_a_redirect_and_its_messages_show_once(flow):
    """POST, redirect, GET: the answer to a refused form is no page that Back or a reload would
    post again. The page shows the messages once and the values typed until the step is saved (a
    reload keeps them); the form's anti-forgery token is the page's own, never kept."""
    flow.start()
    flow.choose()
    bad = EVM_ADDRESS[:-1] + "E"
    refused = flow.client.post(f"{flow.base}/wallet", data={
        "csrf_token": flow.csrf, "address": bad, "email": "ada@example.com"})
    assert refused.status_code == 303 and refused.headers["Location"].endswith("/wallet")
    assert flow.csrf not in repr(flow.session.data)
    html = flow.get("/wallet").get_data(as_text=True)
    assert 'id="field-address-error"' in html and "checksum" in html
    assert f'value="{bad}"' in html and 'value="ada@example.com"' in html
    again = flow.get("/wallet").get_data(as_text=True)                 # a reload
    assert 'id="field-address-error"' not in again and f'value="{bad}"' in again
    assert "wallet" not in flow.session.done
    assert flow.wallet().status_code == 303                             # saved: forgotten
    assert not flow.session.notice("wallet:form")


def test_a_kept_form_whose_redirect_was_not_followed_never_comes_back_over_a_saved_step(flow):
    flow.start()
    flow.choose()
    bad = EVM_ADDRESS[:-1] + "E"
    form = {"csrf_token": flow.csrf, "address": bad, "email": "ada@example.com"}
    assert flow.client.post(f"{flow.base}/wallet", data=form).status_code == 303
    # The phone lost the redirect; the user resumes by the session's link: the form, as sent.
    resumed = flow.open("/").get_data(as_text=True)
    assert 'id="field-address-error"' in resumed and f'value="{bad}"' in resumed
    # Refused again, and this time the user corrects it at once (a second tab, say).
    assert flow.client.post(f"{flow.base}/wallet", data=form).status_code == 303
    assert flow.wallet().status_code == 303
    assert not flow.session.notice("wallet:form")
    changed = flow.get("/wallet").get_data(as_text=True)      # the review's "Change" link
    assert 'id="field-address-error"' not in changed and f'value="{EVM_ADDRESS}"' in changed


@pytest.mark.parametrize(("network", "asset", "fields", "field", "message"), [
    ("CELO", "USDT", {"address": EVM_ADDRESS[:-1] + "E"}, "address", "checksum"),
    ("CELO", "USDT", {"address": SOLANA_ADDRESS}, "address", "0x followed by 40"),
    ("CELO", "USDT", {"address": ""}, "address", "Enter the wallet address"),
    ("SOLANA", "USDC", {"address": EVM_ADDRESS}, "address", "Solana"),
    ("STELLAR", "USDC", {"address": STELLAR_ADDRESS[:-1] + "A"}, "address", "checksum"),
    ("STELLAR", "USDC", {"address": STELLAR_ADDRESS, "memo": "m" * 29}, "memo", "at most 28"),
    ("TON", "USDT", {"address": TON_ADDRESS[:-2] + "AA"}, "address", "checksum"),
    ("CELO", "USDT", {"email": ""}, "email", "Enter your email"),
    ("CELO", "USDT", {"email": "ada@"}, "email", "valid email"),
])
def test_bad_wallets_never_reach_an_order(flow, network, asset, fields, field, message):
    flow.start()
    flow.choose(network=network, asset=asset)
    page = flow.wallet(**fields)
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert f'id="field-{field}-error"' in html and message in html
    assert "wallet" not in flow.session.done


def test_memo_field_only_where_the_network_has_memos(flow):
    flow.start()
    flow.choose(network="STELLAR", asset="USDC")
    assert 'name="memo"' in flow.get("/wallet").get_data(as_text=True)
    flow.choose(network="CELO", asset="USDT")
    assert 'name="memo"' not in flow.get("/wallet").get_data(as_text=True)


def test_stellar_wallet_with_memo(flow):
    flow.start()
    flow.choose(network="STELLAR", asset="USDC")
    response = flow.wallet(address=STELLAR_ADDRESS, memo="123456")
    assert response.status_code == 303
    assert flow.session.answers["memo"] == "123456"


def test_locked_address_is_refused_when_changed(flow):
    flow.start(network="CELO", address=EVM_ADDRESS, lock=["network", "address"])
    flow.choose(network=None)
    page = flow.get("/wallet")
    assert f'name="address" type="text" value="{EVM_ADDRESS}"' in page.get_data(as_text=True)
    assert "readonly" in page.get_data(as_text=True)
    forged = flow.wallet(address="0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359")
    assert "cannot be changed" in forged.get_data(as_text=True)
    assert flow.wallet().status_code == 303
    assert flow.session.value("address") == EVM_ADDRESS


def test_required_fields_form_is_built_from_the_offer(flow):
    flow.start()
    flow.choose("ussd")
    response = flow.wallet()
    assert response.headers["Location"].endswith("/details")
    page = flow.follow(response)
    html = page.get_data(as_text=True)
    assert 'name="phoneNumber" type="tel"' in html and "Phone number" in html


@pytest.mark.parametrize(("value", "message"), [
    ("", "required"),
    ("123", "not valid"),
    ("+254712345678", "Enter a phone number from Nigeria"),
])
def test_bad_required_field_values(flow, value, message):
    flow.start()
    flow.choose("ussd")
    flow.wallet()
    page = flow.details(phoneNumber=value)
    html = page.get_data(as_text=True)
    assert page.status_code == 200 and 'id="field-phoneNumber-error"' in html and message in html


def test_required_fields_are_normalised_and_kept(flow):
    flow.start()
    flow.choose("ussd")
    flow.wallet()
    response = flow.details(phoneNumber="0801 234 5678")
    assert response.headers["Location"].endswith("/review")
    assert flow.session.fields == {"phoneNumber": "2348012345678"}


def test_locked_phone_claim_prefills_and_cannot_be_changed(flow):
    flow.start(phoneNumber="2348012345678", lock=["phoneNumber"])
    flow.choose("ussd")
    flow.wallet()
    page = flow.get("/details")
    assert 'value="+234 801 234 5678"' in page.get_data(as_text=True)   # as people write it
    forged = flow.details(phoneNumber="08099999999")
    assert "cannot be changed" in forged.get_data(as_text=True)
    assert flow.details().status_code == 303
    # What the browser sends back is the shown spelling: the same number, so not a change.
    assert flow.details(phoneNumber="+234 801 234 5678").status_code == 303
    assert flow.session.fields["phoneNumber"] == "2348012345678"


def test_changing_the_amount_keeps_the_wallet_but_changing_network_does_not(flow):
    flow.start()
    flow.choose()
    flow.wallet()
    flow.choose(amount="6000")
    assert flow.session.done == ["choose", "wallet"]       # NG bank asks no details
    flow.choose(network="POLYGON", asset="USDC")
    assert "wallet" not in flow.session.done


def test_phone_numbers_are_asked_with_an_example_and_reviewed_as_people_write_them(flow):
    flow.start()
    flow.follow(flow.choose("stk_push"))                     # Kenya, M-PESA
    details = flow.follow(flow.wallet())
    assert details.request.path.endswith("/details")
    html = details.get_data(as_text=True)
    assert "For example 0712 123456" in html                # the country's own way to write one
    review = flow.follow(flow.details(phoneNumber="0712345678"))
    assert flow.session.fields["phoneNumber"] == "254712345678"   # what is sent
    assert "<dd>+254 712 345678</dd>" in review.get_data(as_text=True)
    again = flow.get("/details").get_data(as_text=True)     # back to the form: the same grouping
    assert 'value="+254 712 345678"' in again
