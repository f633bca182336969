"""axe-core on every distinct state of every flow's pages, at 320 px, in the light colour scheme
and the dark one (a theme that offers it, chosen by the launch token's colorScheme).

Each walk is a whole order in the cross-site iframe, as the end-to-end tests make it, in English.
At each state (a step, its form with errors, the live quote, a pending check, the order's pages)
axe-core (WCAG 2.x A/AA and best practices) must find nothing, whatever the impact, no ARIA
reference may point at nothing, and nothing may scroll sideways. In the light walk each state is
also shown in French, Swahili and Portuguese (the page's language menu, as a user changes it): it
declares its language and still fits the narrow screen. That every page state is said in those
languages, with none of its English left, the view tests check (tests/views/test_one_language.py).
axe comes from the npm registry (tests/browser/node, installed by scripts/test) and runs through
the DevTools protocol, under the pages' own CSP.
"""
from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from checkout.sandbox.kyc import REASON_DETAILS_MISMATCH

from .conftest import LANGUAGES, assert_accessible, catalogue
from .test_kyc_e2e import photos, quick_kyc  # noqa: F401  (fixtures)
from .test_offramp_e2e import SALE_SECONDS, TX_HASH, WALLET, confirm_sale
from .test_onramp_e2e import ADDRESS, choose, settle

pytestmark = pytest.mark.browser

NARROW = {"width": 320, "height": 720}


# Colours do not change with the language: each scheme once, in English.
SCHEMES = ["light", "dark"]
OTHER_LANGUAGES = [language for language in LANGUAGES if language != "en"]


class Walk:
    """One user's order in one scheme: check each state (and, in the light scheme, the same
    state in each other language)."""

    def __init__(self, shop, page, scheme: str = "light") -> None:
        self.shop, self.page, self.language, self.scheme = shop, page, "en", scheme
        self.frame = None
        self.seen: list[str] = []

    def _(self, text: str) -> str:
        return catalogue(self.language).gettext(text)

    def open(self, flow: str, **claims):
        # 320 CSS px: the narrowest phones, and a 640 px window zoomed to 200 % (WCAG 1.4.10).
        self.page.set_viewport_size(NARROW)
        self.frame = self.shop.open(self.page, flow, locale=self.language,
                                    colorScheme=self.scheme, **claims)
        assert self.frame.evaluate("() => matchMedia('(prefers-color-scheme: dark)').matches"
                                   ) is False      # dark comes from the token, not the device
        return self.frame

    def check(self, state: str, *, kept: str | None = None,
              again: Callable[[Any], None] | None = None) -> None:
        """axe-core and the rest on the state the frame shows. In the light walk, the same page
        in each other language too, when the state outlives a change of language (``kept``:
        what shows it is still there, a refused form's marks say) or is brought back (``again``
        does, on the page in its new language: choices followed by a live price are kept only
        once sent)."""
        frame = self.shop.steady(self.page)
        settle(frame)
        assert frame.evaluate("() => document.documentElement.dataset.scheme") == self.scheme
        state = f"{state}, {self.scheme}"
        self.fits(frame, state)
        assert_accessible(frame, f"{state} [{self.language}]")
        self.seen.append(state)
        if self.scheme == "light" and kept is not None:
            for language in [*OTHER_LANGUAGES, "en"]:
                frame = self.in_language(language)
                if again is not None:
                    again(self.shop.steady(self.page))     # clicks: once the frame is still
                frame.wait_for_selector(kept, state="attached")
                self.fits(frame, state)
            self.shop.steady(self.page)         # for the clicks that follow

    def fits(self, frame, state: str) -> None:
        """The page declares its language, refers to no missing element and, at 320 px, does
        not scroll sideways."""
        assert frame.evaluate("() => document.documentElement.lang") == self.language
        dangling = frame.evaluate("""() => [...document.querySelectorAll(
            '[aria-describedby], [aria-labelledby], [aria-controls]')].flatMap(el =>
            ['aria-describedby', 'aria-labelledby', 'aria-controls'].flatMap(a =>
              (el.getAttribute(a) || '').split(/\\s+/).filter(id => id &&
                !document.getElementById(id)).map(id => `${el.tagName}[${a}=${id}]`)))""")
        assert not dangling, f"{state} [{self.language}] refers to no element: {dangling}"
        overflow = frame.evaluate(
            "() => document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow == 0, f"{state} [{self.language}] scrolls sideways by {overflow}px"

    def in_language(self, language: str):
        """Change the page's language with its own menu (its form sent as its button sends
        it: no click, which would wait for the frame to hold still); the frame after."""
        frame = self.shop.frame(self.page)
        menu = frame.locator("form.language-menu")
        menu.locator("select").select_option(language)
        with frame.expect_navigation():
            menu.evaluate("(form) => form.requestSubmit(form.querySelector('[type=submit]'))")
        self.language = language
        return frame

    def check_receipt(self, flow: str) -> None:
        """The order's receipt, opened from its status page as the link does (a page of its
        own, beside the shop), at 320 px."""
        frame = self.shop.steady(self.page)     # a click while the shop scrolls lands beside
        link = frame.locator("[data-testid=receipt-link]")
        assert link.get_attribute("target") == "_blank"
        with self.page.context.expect_page() as opened:
            link.click()
        receipt = opened.value
        # The receipt has no session: it follows the device, as the theme's "auto" says.
        receipt.emulate_media(color_scheme=self.scheme)
        receipt.set_viewport_size(NARROW)
        receipt.wait_for_selector("[data-testid=receipt-amounts]")
        assert_accessible(receipt, f"{flow} receipt, {self.scheme} [{self.language}]")
        for language in [self.language, *(OTHER_LANGUAGES if self.scheme == "light" else [])]:
            if language != self.language:       # its other languages are plain links
                with receipt.expect_navigation():
                    receipt.locator(f".receipt-languages a[hreflang={language}]").click()
            assert receipt.evaluate("() => document.documentElement.lang") == language
            overflow = receipt.evaluate("() => document.documentElement.scrollWidth"
                                        " - document.documentElement.clientWidth")
            assert overflow == 0, f"{flow} receipt [{language}] scrolls sideways by {overflow}px"
        receipt.close()
        self.seen.append(f"{flow} receipt")

    def click_and_load(self, name: str, role: str = "button"):
        self.frame = self.shop.click_and_load(self.page, role, self._(name))
        return self.frame


@pytest.mark.parametrize("scheme", SCHEMES)
def test_buying_has_no_accessibility_violation(page, shop, scheme):
    walk = Walk(shop, page, scheme)
    frame = walk.open("onramp")
    walk.check("on-ramp amount, nothing chosen", kept="select[name=countryIsoCode]")
    frame.locator("select[name=countryIsoCode]").select_option("NG")
    frame.wait_for_selector("input[name=paymentChannel][value=bank]", state="attached")
    settle(frame)
    frame.locator("input[name=paymentChannel][value=bank]").check()
    settle(frame)
    frame.locator("select[name=network]").select_option("CELO")
    settle(frame)
    frame.locator("select[name=asset]").select_option("USDT")
    settle(frame)
    frame.locator("input[name=amount]").fill("1")
    frame.wait_for_selector("#quote-message")
    walk.check("on-ramp amount under the minimum (live message)", kept="#quote-message",
               again=lambda frame: choose(frame, country="NG", channel="bank", amount="1",
                                          shown="#quote-message"))
    frame.locator("input[name=amount]").fill("5000")
    frame.wait_for_selector("#quote [data-testid=receive-amount]")
    walk.check("on-ramp amount with its live quote", kept="#quote [data-testid=receive-amount]",
               again=lambda frame: choose(frame, country="NG", channel="bank", amount="5000"))
    frame = walk.click_and_load("Continue")
    frame.wait_for_selector("input[name=address]")
    walk.check("on-ramp wallet", kept="input[name=address]")

    def refused(frame) -> None:
        frame.locator("input[name=address]").fill("0x123")
        walk.click_and_load("Continue")

    refused(frame)
    frame.wait_for_selector(".field--invalid")
    # A refused form's marks are shown once: sent again in each language.
    walk.check("on-ramp wallet with errors", kept=".field--invalid", again=refused)
    frame.locator("input[name=address]").fill(ADDRESS)
    frame.locator("input[name=email]").fill("ada@example.com")
    frame = walk.click_and_load("Continue")
    frame.wait_for_selector("[data-testid=review-confirm], form[data-confirm], button[type=submit]")
    walk.check("on-ramp review", kept="input[name=review_digest]")
    frame = walk.click_and_load("Confirm and pay")
    frame.wait_for_selector("[data-transfer-type]")
    walk.check("on-ramp pay (bank transfer instructions)", kept="[data-transfer-type]")
    frame = walk.click_and_load("I have paid")
    shop.advance(page, 60)
    frame.wait_for_selector("[data-status=payout_successful]")
    walk.check("on-ramp status, final", kept="[data-status=payout_successful]")
    walk.check_receipt("on-ramp")


@pytest.mark.parametrize("scheme", SCHEMES)
def test_selling_has_no_accessibility_violation(page, shop, scheme):
    walk = Walk(shop, page, scheme)
    frame = walk.open("offramp", countryIsoCode="NG", paymentChannel="bank", network="POLYGON",
                      asset="USDC", currency="local", amount=20000)
    frame.wait_for_selector("select[name=bankCode]")
    walk.check("off-ramp payout details", kept="select[name=bankCode]")
    frame.locator("select[name=bankCode]").select_option("011:02")
    frame.locator("input[name=bankAccountNumber]").fill("0123456789")
    frame = walk.click_and_load("Continue")
    frame.wait_for_selector("[data-testid=payee-found], form")
    walk.check("off-ramp account check, found", kept="[data-testid=payee-found], form")
    frame = walk.click_and_load("Yes, pay this account")
    frame.wait_for_selector("input[name=address]")
    walk.check("off-ramp sending wallet", kept="input[name=address]")
    frame.locator("input[name=address]").fill(WALLET)
    frame = walk.click_and_load("Continue")
    walk.check("off-ramp review", kept="input[name=review_digest]")
    confirm_sale(shop, page, frame, walk._("Confirm and sell"))
    frame = shop.frame(page)
    walk.check("off-ramp deposit (address, QR, countdown)", kept="input[name=tx_hash]")
    frame.locator("input[name=tx_hash]").fill(TX_HASH)
    frame = walk.click_and_load("I have sent it")
    shop.advance(page, SALE_SECONDS)
    frame.wait_for_selector("[data-status=payout_successful]")
    walk.check("off-ramp status, paid out", kept="[data-status=payout_successful]")
    walk.check_receipt("off-ramp")


def test_axe_finds_a_violation_when_there_is_one(page, shop):
    """The check above can fail: an image without a text alternative is reported."""
    frame = shop.open(page)
    frame.evaluate("() => document.querySelector('main').insertAdjacentHTML('beforeend',"
                   " '<img src=\"/checkout/static/icon.svg\">')")
    with pytest.raises(AssertionError, match="image-alt"):
        assert_accessible(frame, "a page with an image without alt")


@pytest.mark.parametrize("scheme", SCHEMES)
def test_identity_checks_have_no_accessibility_violation(page, shop, quick_kyc, photos, scheme):
    walk = Walk(shop, page, scheme)
    frame = walk.open("onramp", countryIsoCode="KE", paymentChannel="mobile_money",
                      network="CELO", asset="USDT", currency="local", amount=15000)
    frame.wait_for_selector("input[name=address]")
    frame.locator("input[name=address]").fill(ADDRESS)
    frame.locator("input[name=email]").fill(f"a11y-{scheme}@example.com")
    frame = walk.click_and_load("Continue")
    phone = f"07120002{SCHEMES.index(scheme):02d}"
    frame.locator("input[name=phoneNumber]").fill(phone)
    frame = walk.click_and_load("Continue")
    frame.wait_for_selector("input[name=document]")
    walk.check("KYC document choice (advanced)", kept="input[name=document]")
    frame.locator("input[name=document][value=ALIEN_CARD]").check()
    frame = walk.click_and_load("Continue")
    frame.wait_for_selector("input[name=photo_selfie]")
    walk.check("KYC form with photos", kept="input[name=photo_selfie]")
    # The page that waits for the phone (offered without JavaScript), then back to the form.
    frame.goto(frame.locator("[data-testid=kyc-handoff] a[href*='handoff=1']").evaluate(
        "(a) => a.href"))
    frame.wait_for_selector("[data-testid=kyc-handoff-waiting]")
    walk.check("KYC waiting for the phone")     # its address's query goes with a new language
    # This page follows the phone along by itself: not a wait for the click's navigation, which
    # its own reload may take the place of (a loaded full run saw none come in 30 s).
    frame = walk.frame = shop.click_and_wait_for(page, "link", walk._("Use this device instead"),
                                                 "input[name=photo_selfie]")
    # Held pending (the sandbox's magic last name) until decided below: the pending page is
    # checked while it is pending, however long the check takes on a loaded machine.
    fill = {"first_name": "Wanjiru", "last_name": "Pending", "dob": "1990-05-17",
            "id_number": "1234567"}
    for name, value in fill.items():
        frame.locator(f"[name={name}]").fill(value)
    for name in ("selfie", "front", "back"):
        frame.locator(f"input[name=photo_{name}]").set_input_files(str(photos[name]))
    frame.wait_for_function(
        "() => [...document.querySelectorAll('[data-photo-preview]')].every(i => !i.hidden)")
    # Shrunk before Send (over 1 MB each, all three are): a send pressed earlier waits for them,
    # up to 20 s on a busy machine, which the wait for the pending page below would count.
    frame.wait_for_function(
        "() => [...document.querySelectorAll('input[data-photo]')].every(i => i.dataset.shrunk)",
        timeout=60_000)
    walk.check("KYC form with photo previews")
    frame = walk.frame = shop.click_and_wait_for(page, "button", walk._("Send for verification"),
                                                 "[data-testid=kyc-pending]")
    walk.check("KYC pending", kept="[data-testid=kyc-pending]")
    shop.decide_kyc(phone, "reject", REASON_DETAILS_MISMATCH)
    # The page follows the review by itself (it polls), as a user waiting on it sees.
    frame.wait_for_selector("[data-testid=kyc-rejected]", timeout=20_000)
    walk.check("KYC rejected, with the partner's reason", kept="[data-testid=kyc-rejected]")


def test_forced_colours_and_reduced_motion_are_respected(page, shop):
    """Windows high contrast: the focus ring and the buttons' edges stay (box shadows go);
    reduced motion: nothing fades or slides."""
    page.emulate_media(forced_colors="active", reduced_motion="reduce")
    page.set_viewport_size(NARROW)
    frame = shop.open(page)
    frame.locator("select[name=countryIsoCode]").focus()
    page.keyboard.press("Tab")
    styles = frame.evaluate("""() => {
      const el = document.activeElement, s = getComputedStyle(el);
      const button = getComputedStyle(document.querySelector('button[type=submit]'));
      const indicator = getComputedStyle(document.querySelector('.htmx-indicator'));
      return {focusOutline: s.outlineStyle, focusWidth: parseFloat(s.outlineWidth),
              buttonBorder: parseFloat(button.borderTopWidth),
              transition: indicator.transitionDuration};
    }""")
    assert styles["focusOutline"] != "none" and styles["focusWidth"] >= 2, styles
    assert styles["buttonBorder"] >= 2, styles
    assert styles["transition"] in ("0s", "0ms"), styles
    assert_accessible(frame, "amount page in forced colours")
