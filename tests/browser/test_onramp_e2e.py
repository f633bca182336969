"""A whole on-ramp order, in a cross-site iframe, in Chromium with its default cookie blocking.

The merchant page is on http://127.0.0.1:P, the checkout on http://localhost:P2 (another site). One
order is paid by manual bank transfer, one on a payment page the user leaves the iframe for
(``redirect``). Both end ``payout_successful``, and the merchant page receives ``order-created`` and
exactly one terminal event, ``completed``.
"""
from __future__ import annotations

from urllib.parse import quote

import pytest

from .conftest import screenshot

pytestmark = pytest.mark.browser

ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
OTHER_ADDRESS = "0x52908400098527886E0F7030069857D2E4169EE7"


def settle(frame) -> None:
    """Wait until no htmx request of the frame is in flight."""
    frame.wait_for_function("() => !document.querySelector('.htmx-request')")


def choose(frame, *, country: str, channel: str, amount: str,
           shown: str = "#quote [data-testid=receive-amount]") -> None:
    frame.locator("select[name=countryIsoCode]").select_option(country)
    choice = f"input[name=paymentChannel][value={channel}]"
    frame.wait_for_selector(choice, state="attached")
    settle(frame)
    frame.locator(choice).check()
    settle(frame)
    frame.locator("select[name=network]").select_option("CELO")
    settle(frame)
    frame.locator("select[name=asset]").select_option("USDT")
    settle(frame)
    frame.locator("input[name=amount]").fill(amount)
    # The live quote arrives after the typing pause, with the whole breakdown (or ``shown``).
    frame.wait_for_selector(shown)


def kenyan_mpesa_past_the_phone(shop, page, *, amount: int, email: str, phone: str):
    """Kenya, M-PESA, in the shop's frame: through the wallet and the phone number; the frame."""
    frame = shop.open(page, countryIsoCode="KE", paymentChannel="mobile_money", network="CELO",
                      asset="USDT", currency="local", amount=amount)
    frame.wait_for_selector("input[name=address]")
    frame.locator("input[name=address]").fill(ADDRESS)
    frame.locator("input[name=email]").fill(email)
    shop.click_and_load(page, "button", "Continue")
    frame.locator("input[name=phoneNumber]").fill(phone)
    shop.click_and_load(page, "button", "Continue")
    return frame


def wallet_and_review(shop, page, frame) -> None:
    frame.locator("input[name=address]").fill(ADDRESS)
    frame.locator("input[name=email]").fill("ada@example.com")
    shop.click(page, "button", "Continue")
    frame.wait_for_selector("text=Review your order")


def confirm_order(shop, page, frame) -> None:
    """Confirm and pay: the order is made, its pay page shown."""
    shop.click_and_load(page, "button", "Confirm and pay")
    frame.wait_for_selector("[data-transfer-type]")


def kinds(shop, page) -> list[str]:
    return [event["type"] for event in shop.events(page)]


def test_manual_bank_transfer_to_complete(page, shop):
    frame = shop.open(page)
    choose(frame, country="NG", channel="bank", amount="5000")
    screenshot(page, "onramp-manual-1-choose")
    shop.click(page, "button", "Continue")
    frame.wait_for_selector("input[name=address]")
    wallet_and_review(shop, page, frame)
    # The review shows the address and e-mail just typed; changed, the new ones, never the old.
    assert frame.locator("[data-testid=review-address]").inner_text() == ADDRESS
    assert "ada@example.com" in frame.locator("main").inner_text()
    shop.click(page, "link", "Change wallet or email")
    frame.wait_for_selector("input[name=address]")
    frame.locator("input[name=address]").fill(OTHER_ADDRESS)
    frame.locator("input[name=email]").fill("grace@example.com")
    shop.click(page, "button", "Continue")
    frame.wait_for_selector(f"[data-testid=review-address]:text-is('{OTHER_ADDRESS}')")
    shown = frame.locator("main").inner_text()
    assert "grace@example.com" in shown and "ada@example.com" not in shown
    assert ADDRESS not in shown
    screenshot(page, "onramp-manual-2-review")
    confirm_order(shop, page, frame)
    created = shop.wait_for_event(page, "order-created")
    assert created["order"]["id"]
    assert frame.locator("[data-testid=detail-recipientBankAccountNumber]").inner_text()
    screenshot(page, "onramp-manual-3-pay")

    shop.click_and_load(page, "button", "I have paid")
    shop.advance(page, 60)          # the agent confirms after 30 s, the payout 25 s later
    completed = shop.wait_for_event(page, "completed")
    assert completed["order"] == {"id": created["order"]["id"], "status": "payout_successful"}
    frame.wait_for_selector("[data-status=payout_successful] [data-testid=tx-hash]")
    screenshot(page, "onramp-manual-4-complete")

    assert kinds(shop, page).count("order-created") == 1
    assert kinds(shop, page).count("completed") == 1 and "failed" not in kinds(shop, page)
    assert page.context.cookies() == []


def test_redirect_payment_leaves_the_frame_and_comes_back_to_complete(page, shop):
    return_url = f"{shop.origin}/?returned=1"
    launch = shop.launch_url(countryIsoCode="GH", paymentChannel="bank", network="CELO",
                             asset="USDT", currency="local", amount=100, returnUrl=return_url)
    shop_page = f"{shop.origin}/?launch={quote(launch, safe='')}"
    page.goto(shop_page)
    shop.wait_for_event(page, "ready")
    frame = shop.frame(page)
    # Everything about the amount was given by the shop: the checkout opens at the wallet.
    frame.wait_for_selector("input[name=address]")
    wallet_and_review(shop, page, frame)
    confirm_order(shop, page, frame)
    created = shop.wait_for_event(page, "order-created")
    screenshot(page, "onramp-redirect-1-pay")

    # The payment page opens in the whole window, not in the merchant's iframe.
    shop.click(page, "link", "Continue to the payment page")
    page.wait_for_selector("text=Sandbox payment page")
    # Served by the checkout itself (a bare Checkout(app) needs nothing else), outside the shop.
    assert page.url.startswith(f"{shop.checkout_origin}/checkout/sandbox/pay/"), page.url
    screenshot(page, "onramp-redirect-2-payment-page")
    page.get_by_role("button", name="Pay").click()

    # Back on our return page, top-level, outside any iframe, by the order view address the
    # provider was given: it shows the order without the session id.
    page.wait_for_url(f"{shop.checkout_origin}/checkout/o/*")
    assert "/checkout/s/" not in page.url
    shop.advance(page, 60)
    page.wait_for_selector("[data-status=payout_successful]")
    assert page.locator("[data-testid=back-to-shop]").get_attribute("href") == return_url
    screenshot(page, "onramp-redirect-3-return")

    # The shop mounts its checkout again (the same launch URL): the same session, at its status,
    # and the parent now hears how the order ended.
    page.goto(shop_page)
    completed = shop.wait_for_event(page, "completed")
    assert completed["order"] == {"id": created["order"]["id"], "status": "payout_successful"}
    assert "failed" not in kinds(shop, page) and kinds(shop, page).count("completed") == 1
    assert "order-created" not in kinds(shop, page)      # sent once, to the first page
    screenshot(page, "onramp-redirect-4-complete")
    assert page.context.cookies() == []


def test_back_after_a_refused_form_shows_the_step_not_a_post_to_send_again(page, shop):
    """A refused form comes back by a redirect to its page (POST, redirect, GET): Back from a
    later step shows that page, where a page answering the post would have left the user on
    Chromium's "Confirm form resubmission" with no way on but reloading the shop."""
    frame = shop.open(page)
    choose(frame, country="NG", channel="bank", amount="5000")
    shop.click(page, "button", "Continue")
    frame.wait_for_selector("input[name=address]")
    frame.locator("input[name=address]").fill("0x123")
    frame.locator("input[name=email]").fill("ada@example.com")
    frame = shop.click_and_load(page, "button", "Continue")
    frame.wait_for_selector("#field-address-error")
    assert frame.locator("input[name=address]").input_value() == "0x123"
    wallet_and_review(shop, page, frame)

    # Back, as the browser's button does it: the joint history of the page and its frame (a
    # Page.go_back would wait for a load of the top page, which does not move).
    page.evaluate("history.back()")
    frame = shop.frame(page)
    frame.wait_for_selector("input[name=address]")
    assert frame.url.endswith("/wallet")
    # The page as it is now: the refused form's messages were shown once.
    assert frame.locator("#field-address-error").count() == 0
