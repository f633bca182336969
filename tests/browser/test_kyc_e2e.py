"""KYC in the merchant's cross-site iframe, on a 360 px phone, in Chromium with its default cookie
blocking: basic KYC then the order; advanced KYC with its photos (files set on the camera inputs)
then the order; and the handoff from a computer without a camera to a phone, the computer's page
following along by itself.

Kenya's M-PESA on-ramp (the sandbox's rules: basic from 15 USD, advanced from 100; about 130 KES a
dollar). Each test uses a phone number of its own: the harness's sandbox lives for the whole
session, and KYC, like order volume, belongs to the user.
"""
from __future__ import annotations

import io
from datetime import datetime, timedelta
from functools import cache
from pathlib import Path

import pytest
from PIL import Image

from .conftest import LANGUAGES, catalogue, close_context, screenshot
from .test_onramp_e2e import confirm_order

pytestmark = pytest.mark.browser

PHONE = {"width": 360, "height": 740}
ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
OVERFLOW = "() => document.documentElement.scrollWidth - document.documentElement.clientWidth"


@pytest.fixture
def quick_kyc(checkout_config):
    """Read the sandbox's verdict at each look of the page (every second here) rather than every
    15 s, so a decision on the console shows at once."""
    checkout_config(CHECKOUT_KYC_POLL_SECONDS=0)


@cache
def camera_pictures() -> dict[str, bytes]:
    """Camera-sized pictures: a 12 MP JPEG (over the 1 MB the page shrinks to) and two more,
    made once per process (a noisy 12 MP picture takes a second to make)."""
    pictures = {}
    for name, size in (("selfie", (3000, 4000)), ("front", (1600, 1000)),
                       ("back", (1600, 1000))):
        out = io.BytesIO()
        Image.effect_noise(size, 60).convert("RGB").save(out, "JPEG", quality=95)
        pictures[name] = out.getvalue()
    return pictures


@pytest.fixture
def photos(tmp_path: Path) -> dict[str, Path]:
    """The camera's pictures as files to choose."""
    files = {}
    for name, picture in camera_pictures().items():
        files[name] = tmp_path / f"{name}.jpg"
        files[name].write_bytes(picture)
    return files


def to_kyc(shop, page, phone: str, amount: int):
    """Open the shop with the amount given, fill the wallet and the M-PESA number: the KYC step."""
    frame = shop.open(page, countryIsoCode="KE", paymentChannel="mobile_money", network="CELO",
                      asset="USDT", currency="local", amount=amount)
    frame.wait_for_selector("input[name=address]")
    frame.locator("input[name=address]").fill(ADDRESS)
    frame.locator("input[name=email]").fill(f"{phone}@example.com")
    shop.click_and_load(page, "button", "Continue")
    frame.wait_for_selector("input[name=phoneNumber]")
    frame.locator("input[name=phoneNumber]").fill(phone)
    shop.click_and_load(page, "button", "Continue")
    frame.wait_for_selector("h1:text('Verify your identity')")
    return frame


def fill_person(frame, id_number: str) -> None:
    """The form's fields. The sandbox keeps the submission pending (its magic last name) until
    the test decides it (``shop.decide_kyc``): a review that ended by itself could pass the
    pending page before a loaded machine's browser saw it."""
    frame.get_by_label("First name").fill("Wanjiru")
    frame.get_by_label("Last name").fill("Pending")
    frame.get_by_label("Date of birth").fill("1990-05-17")
    frame.get_by_label("ID number").fill(id_number)


def test_basic_kyc_then_the_order(page, shop, quick_kyc):
    page.set_viewport_size(PHONE)
    frame = to_kyc(shop, page, "0712000101", 5000)
    assert frame.locator("[data-step=kyc]").inner_text().endswith("Identity")
    frame.get_by_label("National ID").check()
    shop.click_and_load(page, "button", "Continue")
    fill_person(frame, "40718293")
    screenshot(page, "kyc-basic-1-form")
    assert frame.evaluate(OVERFLOW) == 0
    shop.click_and_wait_for(page, "button", "Send for verification",
                            "[data-testid=kyc-pending]")
    screenshot(page, "kyc-basic-2-pending")
    # Approved: the checkout goes on by itself, where it stopped.
    shop.decide_kyc("0712000101", "approve")
    frame.wait_for_selector("text=Review your order", timeout=20_000)
    confirm_order(shop, page, frame)
    created = shop.wait_for_event(page, "order-created")
    assert created["order"]["id"]
    assert page.context.cookies() == []


def choose_document(frame, title: str) -> None:
    """Kenya's advanced level offers two documents: pick one, and its form with photos opens."""
    frame.get_by_label(title).check()
    frame.get_by_role("button", name="Continue").click()
    frame.wait_for_selector("input[name=photo_selfie]")


def test_advanced_kyc_with_photos_then_the_order(page, shop, quick_kyc, photos):
    page.set_viewport_size(PHONE)
    frame = to_kyc(shop, page, "0712000102", 15000)
    choose_document(frame, "Alien card")
    fill_person(frame, "1234567")
    for name in ("selfie", "front", "back"):
        frame.locator(f"input[name=photo_{name}]").set_input_files(str(photos[name]))
    # Each photo is previewed, and the 12 MP one is shrunk to about 1 MB before it is sent.
    frame.wait_for_function(
        "() => [...document.querySelectorAll('[data-photo-preview]')].every(i => !i.hidden"
        " && i.complete && i.naturalWidth > 0)")
    frame.wait_for_function(
        "() => document.querySelector('input[name=photo_selfie]').dataset.shrunk")
    shrunk = frame.evaluate("() => document.querySelector('input[name=photo_selfie]').files[0]"
                            ".size")
    assert shrunk <= 1024 * 1024 < photos["selfie"].stat().st_size
    assert frame.evaluate(OVERFLOW) == 0
    screenshot(page, "kyc-advanced-1-photos")
    shop.click_and_wait_for(page, "button", "Send for verification",
                            "[data-testid=kyc-pending]")
    shop.decide_kyc("0712000102", "approve")
    frame.wait_for_selector("text=Review your order", timeout=20_000)
    confirm_order(shop, page, frame)
    assert shop.wait_for_event(page, "order-created")["order"]["id"]


def test_a_computer_without_a_camera_hands_over_to_a_phone(page, shop, quick_kyc, photos,
                                                           browser):
    page.set_viewport_size({"width": 1280, "height": 900})
    frame = to_kyc(shop, page, "0712000103", 15000)
    choose_document(frame, "Alien card")
    frame.locator("summary", has_text="No camera on this device?").click()
    link = frame.locator("[data-testid=kyc-handoff-url]").inner_text().strip()
    assert frame.locator("[data-testid=kyc-handoff] svg").count() == 1     # the QR code
    # With script the form itself follows along: no page to wait on is offered.
    assert frame.locator("[data-testid=kyc-handoff] p:visible").first.inner_text().endswith(
        "This page follows along by itself once you are done on the phone.")
    assert not frame.get_by_role("link", name="Wait for my phone").is_visible()

    phone = browser.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        mobile = phone.new_page()
        mobile.goto(link)
        choose_document(mobile, "Alien card")
        fill_person(mobile, "7654321")
        for name in ("selfie", "front", "back"):
            mobile.locator(f"input[name=photo_{name}]").set_input_files(str(photos[name]))
        mobile.wait_for_function(
            "() => document.querySelector('input[name=photo_selfie]').dataset.shrunk")
        # Not expect_navigation(): the page's own look at the verdict sees the new submission
        # and loads the step again, which may cut short the send's redirect (already answered).
        mobile.get_by_role("button", name="Send for verification").click()
        mobile.wait_for_selector("[data-testid=kyc-pending]")
        shop.decide_kyc("0712000103", "approve")
        # The computer's page, left on the form, follows along to the review by itself.
        frame.wait_for_selector("text=Review your order", timeout=30_000)
        screenshot(page, "kyc-handoff-computer-review")
        # So does the phone's, from "pending" (its own poll, a navigation at any moment). Once it
        # shows the review, which polls nothing, it holds still.
        mobile.wait_for_selector("text=Review your order", timeout=30_000)
        mobile.wait_for_load_state("load")
    finally:
        # Not phone.close() as such: a close racing the phone page's own navigation hangs.
        close_context(phone)


def test_a_send_pressed_at_once_waits_for_the_photos_and_a_bad_file_is_flagged_before(
        page, shop, quick_kyc, photos, tmp_path):
    page.set_viewport_size(PHONE)
    frame = to_kyc(shop, page, "0712000104", 15000)
    choose_document(frame, "Driving licence")
    fill_person(frame, "ab123456")        # small letters: taken in capitals, not refused
    # A file that is not a picture is flagged at its input as soon as it is chosen.
    fake = tmp_path / "fake.jpg"
    fake.write_text("not a picture")
    frame.locator("input[name=photo_selfie]").set_input_files(str(fake))
    frame.wait_for_function(
        "() => document.querySelector('input[name=photo_selfie]').validationMessage"
        ".includes('not a photo we can read')")
    # Photos chosen and "Send" pressed at once: the send waits until they are shrunk.
    sent = []
    page.on("request", lambda r: sent.append(len(r.post_data_buffer or b""))
            if r.method == "POST" and r.url.endswith("/kyc") else None)
    for name in ("selfie", "front", "back"):
        frame.locator(f"input[name=photo_{name}]").set_input_files(str(photos[name]))
    # Shrinking a 12 MP photo takes seconds on a busy machine: the send waits for all three.
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/kyc"),
                             timeout=90_000):
        # Once the frame holds still: the previews make it taller, and a click aimed while it
        # grows lands beside the button (a full run sent nothing in 90 s).
        shop.steady(page).get_by_role("button", name="Send for verification").click()
    frame.wait_for_selector("[data-testid=kyc-pending]")
    assert len(sent) == 1 and sent[0] < photos["selfie"].stat().st_size
    shop.decide_kyc("0712000104", "approve")
    frame.wait_for_selector("text=Review your order", timeout=20_000)


def a_send_waiting_for_its_photos(shop, page, photos, phone: str, id_number: str):
    """The KYC form filled on a phone whose shrinking of photos never ends (short of memory,
    say), and "Send" pressed: the page says it is preparing them. The page's clock is stopped
    from here on: its time moves only when the test says. Returns the frame and the list of the
    KYC posts sent from now on (their sizes)."""
    page.set_viewport_size(PHONE)
    frame = to_kyc(shop, page, phone, 15000)
    choose_document(frame, "Driving licence")
    fill_person(frame, id_number)
    frame.evaluate("() => { window.createImageBitmap = () => new Promise(() => {}); }")
    # Over the 1 MB the page shrinks to, under the 10 MB the server takes as they are.
    assert 1024 * 1024 < photos["front"].stat().st_size < 10 * 1024 * 1024
    for name in ("selfie", "front", "back"):
        frame.locator(f"input[name=photo_{name}]").set_input_files(str(photos["front"]))
    # The previews make the page taller, and the frame with it: a click aimed while it grows
    # lands beside the button.
    frame.wait_for_function(
        "() => [...document.querySelectorAll('[data-photo-preview]')].every(i => !i.hidden)")
    shop.steady(page)
    page.clock.install()
    page.clock.pause_at(datetime.now() + timedelta(seconds=1))
    sent: list[int] = []
    page.on("request", lambda r: sent.append(len(r.post_data_buffer or b""))
            if r.method == "POST" and r.url.endswith("/kyc") else None)
    frame.get_by_role("button", name="Send for verification").click()
    frame.wait_for_selector("[data-photo-status]:text('Preparing your photos')")
    return frame, sent


def test_a_photo_that_never_finishes_shrinking_is_sent_as_it_is(page, shop, quick_kyc, photos):
    """A phone short of memory may never finish shrinking a photo: "Send" then waits a while at
    most, and sends the photos as they are (the server shrinks them too)."""
    frame, sent = a_send_waiting_for_its_photos(shop, page, photos, "0712000107", "AB123457")
    page.clock.run_for(19_000)
    assert sent == []
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/kyc")):
        page.clock.run_for(2_000)
    assert len(sent) == 1
    frame.wait_for_selector("[data-testid=kyc-pending]")


def test_a_send_waiting_for_its_photos_is_dropped_when_the_page_is_left(page, shop, quick_kyc,
                                                                        photos):
    """Left while "Send" waited (Back, kept in the browser's back/forward cache), the page must
    not send the photos by itself once it is shown again: the user presses "Send" again, and
    that send waits for the photos as the first did."""
    frame, sent = a_send_waiting_for_its_photos(shop, page, photos, "0712000108", "AB123458")
    # What the browser fires at a page it puts in its back/forward cache.
    frame.evaluate("window.dispatchEvent(new PageTransitionEvent('pagehide', {persisted: true}))")
    page.clock.run_for(30_000)
    assert sent == []
    frame.get_by_role("button", name="Send for verification").click()
    page.clock.run_for(19_000)
    assert sent == []
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/kyc")):
        page.clock.run_for(2_000)
    frame.wait_for_selector("[data-testid=kyc-pending]")


def test_back_after_a_refused_document_shows_the_step_not_a_post_to_send_again(page, shop,
                                                                               quick_kyc):
    """The KYC step answers a refused form in place (its values are never stored, not even for a
    redirect); checkout.js drops that answer's post from the history, so Back from a later page
    shows the step rather than Chromium's "Confirm form resubmission"."""
    frame = to_kyc(shop, page, "0712000105", 5000)
    frame.get_by_label("National ID").check()
    shop.click_and_load(page, "button", "Continue")
    fill_person(frame, "40718294")
    frame.get_by_label("Date of birth").fill("2020-01-01")     # refused by the partner: under 18
    shop.click_and_load(page, "button", "Send for verification")
    frame.wait_for_selector("#field-dob-error")
    assert frame.get_by_label("First name").input_value() == "Wanjiru"
    frame.get_by_label("Date of birth").fill("1990-05-17")
    shop.click_and_wait_for(page, "button", "Send for verification",
                            "[data-testid=kyc-pending]")

    page.evaluate("history.back()")     # the browser's Back: the page's and its frame's history
    frame = shop.frame(page)
    frame.wait_for_selector("h1:text('Verify your identity')")
    assert "/kyc" in frame.url


def test_what_is_missing_is_said_at_each_field_before_anything_is_sent(page, shop, quick_kyc,
                                                                      photos):
    """Not the browser's bubble (one field at a time, in the browser's language): each photo and
    field that is missing says so under it, in the page's words, and stops saying it once done."""
    page.set_viewport_size(PHONE)
    frame = to_kyc(shop, page, "0712000106", 15000)
    choose_document(frame, "Alien card")
    fill_person(frame, "1234567")
    frame.get_by_label("Last name").fill("")
    sent = []
    page.on("request", lambda r: sent.append(r.url)
            if r.method == "POST" and r.url.endswith("/kyc") else None)
    frame.get_by_role("button", name="Send for verification").click()
    for name in ("selfie", "front", "back"):
        frame.wait_for_selector(f"#field-photo_{name}-error:text('Add this photo.')")
        assert frame.get_attribute(f"input[name=photo_{name}]", "aria-invalid") == "true"
    assert frame.inner_text("#field-last_name-error") == "This field is required."
    assert frame.evaluate("document.activeElement.name") == "last_name"    # the first one
    # Enter pressed in it: the focus stays, so the status line says it again.
    frame.get_by_label("Last name").press("Enter")
    frame.wait_for_selector("[data-photo-status]:text('This field is required.')")
    assert frame.get_attribute("input[name=last_name]", "aria-describedby").endswith(
        "field-last_name-error")
    frame.get_by_label("Last name").fill("Kamau")
    assert frame.inner_text("[data-photo-status]") == ""        # put right: said no more
    frame.locator("input[name=photo_selfie]").set_input_files(str(photos["selfie"]))
    frame.wait_for_selector("#field-photo_selfie-error", state="detached")
    assert frame.locator("#field-last_name-error").count() == 0
    assert frame.locator("#field-photo_front-error").count() == 1
    assert sent == []


@pytest.mark.parametrize("language", LANGUAGES)
def test_a_send_that_never_reaches_the_server_says_so_and_can_be_sent_again(page, shop,
                                                                           quick_kyc, language):
    """No network at the press of "Send for verification" (a phone between two masts): the page
    says so above the button, in its language, and the button sends again; not a press that
    sent nothing and said nothing."""
    _ = catalogue(language).gettext
    phone = f"07120005{LANGUAGES.index(language) + 1:02d}"
    page.set_viewport_size(PHONE)
    frame = shop.open(page, countryIsoCode="KE", paymentChannel="mobile_money", network="CELO",
                      asset="USDT", currency="local", amount=5000, locale=language)
    frame.wait_for_selector("input[name=address]")
    frame.locator("input[name=address]").fill(ADDRESS)
    frame.locator("input[name=email]").fill(f"{phone}@example.com")
    shop.click_and_load(page, "button", _("Continue"))
    frame.wait_for_selector("input[name=phoneNumber]")
    frame.locator("input[name=phoneNumber]").fill(phone)
    shop.click_and_load(page, "button", _("Continue"))
    frame.get_by_label(_("National ID")).check()
    shop.click_and_load(page, "button", _("Continue"))
    frame.get_by_label(_("First name")).fill("Wanjiru")
    frame.get_by_label(_("Last name")).fill("Pending")
    frame.get_by_label(_("Date of birth")).fill("1990-05-17")
    frame.get_by_label(_("ID number")).fill("40718295")

    def is_the_send(route) -> bool:
        return route.request.method == "POST" and route.request.url.endswith("/kyc")

    page.route("**/kyc", lambda route: route.abort("internetdisconnected") if is_the_send(route)
               else route.fallback())
    shop.steady(page).get_by_role("button", name=_("Send for verification")).click()
    said = frame.locator("form[data-kyc-form] [role=alert][data-send-failed]")
    said.wait_for()
    assert said.inner_text() == _("This could not be sent: check your connection, then press "
                                  "the button again.")
    frame.wait_for_selector("form[data-kyc-form]:not([aria-busy])")
    assert frame.evaluate(OVERFLOW) == 0
    screenshot(page, f"kyc-send-failed-{language}")
    # The connection back: the same button sends, and what was typed is still there.
    page.unroute("**/kyc")
    shop.click_and_wait_for(page, "button", _("Send for verification"),
                            "[data-testid=kyc-pending]")
