"""Whole off-ramp orders in a cross-site iframe at 360 px, in Chromium with its default cookie
blocking: selling by pasting a transaction hash, a sale that ends refunded, and a payout the
merchant funds. Each ends with exactly one terminal event at the shop."""
from __future__ import annotations

import pytest

from .conftest import screenshot
from .test_onramp_e2e import kinds, settle

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 780}
WALLET = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
TX_HASH = "0x" + "5e" * 32


def sandbox_orders(shop):
    """The embedded sandbox's order store (it runs in this test process)."""
    from checkout.sandbox.state import SandboxState

    state: SandboxState = shop.checkout_server.app.extensions["checkout"].sandbox \
        .extensions["sandbox"]
    return state.orders


def sell_to_review(shop, page, frame, *, account: str = "0123456789") -> None:
    """Amount (given by the shop), payout details, payee check, sending wallet: the review."""
    frame.wait_for_selector("select[name=bankCode]")
    frame.locator("select[name=bankCode]").select_option("011:02")
    frame.locator("input[name=bankAccountNumber]").fill(account)
    shop.click_and_load(page, "button", "Continue")
    frame.wait_for_selector("text=We found this account")
    screenshot(page, "offramp-2-payee")
    shop.click_and_load(page, "button", "Yes, pay this account")
    frame.locator("input[name=address]").fill(WALLET)
    shop.click_and_load(page, "button", "Continue")
    frame.wait_for_selector("text=Review your order")


def open_sale(shop, page, **claims):
    page.set_viewport_size(PHONE)
    claims = {"countryIsoCode": "NG", "paymentChannel": "bank", "network": "POLYGON",
              "asset": "USDC", "currency": "local", "amount": 20000, **claims}
    return shop.open(page, "offramp", **claims)


def confirm_sale(shop, page, frame, button: str = "Confirm and sell") -> None:
    """Confirm: the order is made, its deposit page (or, paid by the shop, its status) shown."""
    shop.click_and_load(page, "button", button)
    frame.wait_for_selector("[data-deposit-form], #order-status")


# The deposit seen (10 s) and confirmed (20 s), the payout started (5 s) and done (20 s).
SALE_SECONDS = 60


def test_a_sale_paid_by_pasting_the_transaction_hash(page, shop):
    frame = open_sale(shop, page)
    screenshot(page, "offramp-1-payout")
    sell_to_review(shop, page, frame)
    screenshot(page, "offramp-3-review")
    confirm_sale(shop, page, frame)
    created = shop.wait_for_event(page, "order-created")
    requested = shop.wait_for_event(page, "deposit-requested")
    address = frame.locator("[data-testid=deposit-address]").inner_text()
    assert requested["deposit"]["address"] == address and requested["deposit"]["asset"] == "USDC"
    assert frame.locator("figure.qr svg").count() == 1
    assert frame.evaluate(
        "() => document.documentElement.scrollWidth - document.documentElement.clientWidth") == 0
    screenshot(page, "offramp-4-deposit")

    frame.locator("input[name=tx_hash]").fill(TX_HASH)
    shop.click_and_load(page, "button", "I have sent it")
    shop.advance(page, SALE_SECONDS)
    completed = shop.wait_for_event(page, "completed")
    assert completed["order"] == {"id": created["order"]["id"], "status": "payout_successful"}
    frame.wait_for_selector("[data-status=payout_successful]")
    frame.wait_for_selector("[data-testid=timeline] [data-status=offramp_success]")
    screenshot(page, "offramp-5-paid-out")
    assert kinds(shop, page).count("completed") == 1 and "failed" not in kinds(shop, page)
    assert page.context.cookies() == []


def test_a_sale_paid_from_the_shops_own_wallet(page, shop):
    """The shop answers deposit-requested itself (handle.depositSent): no hash to paste."""
    page.set_viewport_size(PHONE)
    frame = shop.open(page, "offramp", auto_deposit=True, countryIsoCode="NG",
                      paymentChannel="bank", network="POLYGON", asset="USDC", currency="local",
                      amount=20000)
    sell_to_review(shop, page, frame)
    confirm_sale(shop, page, frame)
    requested = shop.wait_for_event(page, "deposit-requested")
    assert requested["deposit"]["chainId"] == 80002          # a testnet: the embedded sandbox
    # The frame moves on by itself: shop.js sent the hash into it, the form was submitted once.
    shop.frame(page).wait_for_url("**/status")      # the hash sent: the deposit is being seen
    shop.advance(page, SALE_SECONDS)
    completed = shop.wait_for_event(page, "completed")
    order = sandbox_orders(shop).get(completed["order"]["id"])
    assert order.data["hash"].startswith("0x") and len(order.data["hash"]) == 66
    frame = shop.frame(page)
    frame.wait_for_selector("[data-status=payout_successful]")
    screenshot(page, "offramp-shop-wallet-paid-out")
    assert kinds(shop, page).count("completed") == 1


def test_a_sale_whose_payout_fails_ends_refunded(page, shop):
    frame = open_sale(shop, page)
    sell_to_review(shop, page, frame)
    confirm_sale(shop, page, frame)
    created = shop.wait_for_event(page, "order-created")
    sandbox_orders(shop).set_outcome(created["order"]["id"], "refund")

    frame.locator("input[name=tx_hash]").fill(TX_HASH)
    shop.click_and_load(page, "button", "I have sent it")
    shop.advance(page, 600)             # the payout fails, the refund is sent
    failed = shop.wait_for_event(page, "failed")
    assert failed["order"]["status"] == "refund_successful"
    frame.wait_for_selector("[data-testid=timeline] [data-status=refunded]")
    assert frame.locator("[data-testid=refund-address]").inner_text() == WALLET
    assert "sent back" in frame.locator("#order-status").inner_text()
    screenshot(page, "offramp-refunded")
    assert "completed" not in kinds(shop, page) and kinds(shop, page).count("failed") == 1


def test_a_payout_the_merchant_funds(page, shop):
    page.set_viewport_size(PHONE)
    frame = shop.open(page, "offramp", paymentType="VIRTUAL_WALLET", countryIsoCode="KE",
                      paymentChannel="mobile_money", network="CELO", asset="USDT",
                      amount=1500, currency="local", address=WALLET,
                      lock=["amount", "currency"])
    frame.wait_for_selector("input[name=phoneNumber]")
    frame.locator("input[name=phoneNumber]").fill("0712 345 678")
    shop.click_and_load(page, "button", "Continue")
    shop.click_and_load(page, "button", "Yes, pay this account")
    frame.wait_for_selector("text=you send nothing")
    screenshot(page, "offramp-merchant-funded-review")
    confirm_sale(shop, page, frame, "Confirm the payout")
    shop.advance(page, SALE_SECONDS)    # the shop's wallet pays in 5 s, then the payout
    completed = shop.wait_for_event(page, "completed")
    assert completed["order"]["status"] == "payout_successful"
    assert "deposit-requested" not in kinds(shop, page)
    settle(frame)
    screenshot(page, "offramp-merchant-funded-paid")


def test_a_bank_is_found_by_what_its_customers_call_it(page, shop):
    """"gtb" is Guaranty Trust Bank, "uba" United Bank for Africa: the filter box of the bank
    list matches a name's initials as well as its letters."""
    frame = open_sale(shop, page)
    frame.wait_for_selector("select[name=bankCode]")
    box = frame.get_by_label("Type to filter the list")
    for typed, code in (("gtb", "058:02"), ("UBA", "033:02"), ("zen", "057:02")):
        box.fill("")
        box.press_sequentially(typed)
        frame.wait_for_function(
            "(code) => document.querySelector('select[name=bankCode]').value === code", arg=code)
