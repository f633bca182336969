"""The KYC step, with the test client against the embedded sandbox: thresholds by country and
amount, documents and their fields, photos, rejection, the limit, both sources of the standing, and
the on-ramp and off-ramp alike.

Kenya's rules (the sandbox's, as the service documents them): on-ramp none below 15 USD, basic
from 15 to 99.99, advanced from 100; at about 130 KES a dollar, 1,000 KES needs none, 5,000 KES
basic and 15,000 KES advanced.
"""
from __future__ import annotations

import base64
import io
import logging
import re
from functools import cache
from typing import Any

import pytest
from flask import Flask
from markupsafe import escape
from PIL import ExifTags, Image, PngImagePlugin
from sqlalchemy import inspect
from sqlalchemy import text as sql

from checkout.kyc import photos as kyc_photos
from checkout.kyc import submission
from checkout.sandbox.kyc import REASON_ID_NOT_FOUND, kyc_store
from checkout.state import get_state
from checkout.upstream.types import KycDocument, RequiredField
from checkout.views import kyc as kyc_views

from ..support.waiting import wait_for
from .conftest import EVM_ADDRESS, PHONES, Flow

KE_PHONE = "254712345678"
PERSON = {"first_name": "Wanjiru", "last_name": "Kamau", "dob": "1990-05-17",
          "email": "wanjiru@example.com"}
NATIONAL_ID = {"document": "NATIONAL_ID", **PERSON, "id_number": "40718293"}


@pytest.fixture
def kyc_user_api() -> bool:
    return False


@pytest.fixture
def config(config: dict, kyc_user_api: bool) -> dict:
    # The page asks the sandbox again at each look while a submission is under review.
    config["CHECKOUT_KYC_POLL_SECONDS"] = 0
    config["CHECKOUT_KYC_USER_API"] = kyc_user_api
    return config


def text(response: Any) -> str:
    html = response.get_data(as_text=True)
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", html))


def review_kyc(app: Flask) -> None:
    """The sandbox's reviewers decide every submission under review now (its review time over)."""
    with app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        store = kyc_store()
        for user in store.users():
            for submission in list(user.submissions):
                if submission.status == "pending":
                    store.settle_submission(user, submission)


@cache
def photo(width: int = 800, height: int = 600, kind: str = "JPEG") -> bytes:
    """A camera photo with the metadata phones write: maker, orientation and GPS location (made
    once per size: a noisy picture takes a while to make)."""
    image = Image.effect_noise((width, height), 40).convert("RGB")      # a camera's grain
    exif = Image.Exif()
    exif[ExifTags.Base.Make] = "PhoneMaker"
    gps = exif.get_ifd(ExifTags.IFD.GPSInfo)
    gps[ExifTags.GPS.GPSLatitudeRef] = "S"
    gps[ExifTags.GPS.GPSLatitude] = (1.0, 17.0, 30.0)
    out = io.BytesIO()
    image.save(out, kind, **({"exif": exif.tobytes()} if kind == "JPEG" else {}))
    return out.getvalue()


def to_kyc(flow: Flow, amount: str, **claims: Any) -> Any:
    """A Kenyan M-PESA purchase of ``amount`` KES up to the page after the details (a launch
    with ``claims``, e.g. its locale, when given)."""
    flow.start(**claims)
    flow.follow(flow.choose("stk_push", amount=amount))
    flow.follow(flow.wallet())
    return flow.follow(flow.details(phoneNumber=PHONES["KE"]))


def test_below_the_threshold_the_kyc_step_is_never_seen(flow: Flow) -> None:
    page = to_kyc(flow, "1000")
    assert page.request.path.endswith("/review")
    assert "Identity" not in text(page)
    assert all("/kyc" not in r.request.path for r in flow.responses)


def test_basic_kyc_then_the_order_is_created(app: Flask, flow: Flow) -> None:
    page = to_kyc(flow, "5000")
    assert page.request.path.endswith("/kyc")
    body = text(page)
    assert "Step 4: Identity" in body and "National ID" in body and "Passport" in body
    # Advanced documents are not offered for a basic amount.
    assert "Alien card" not in body
    form = flow.get("/kyc?document=NATIONAL_ID")
    html = form.get_data(as_text=True)
    # One field per descriptor, in order, with the descriptor's format and a mirrored pattern.
    names = re.findall(r'<input id="field-([a-z_]+)"', html)
    assert names == ["first_name", "last_name", "dob", "email", "id_number"]
    assert 'pattern="[0-9]{1,9}"' in html and "Format: 00000000" in text(form)
    assert 'value="ada@example.com"' in html          # the email given at the wallet step
    assert 'type="file"' not in html                   # no photos for a basic document
    pending = flow.landed(flow.post("/kyc", NATIONAL_ID), "kyc")
    assert "We are checking your document" in text(pending)
    # The way back is named: its link is in the closed "Continue on another device" below.
    assert "come back with the link under “Continue on another device” below" in text(pending)
    assert re.search(r"<summary>Continue on another device</summary>",
                     pending.get_data(as_text=True))
    # A way back while it is checked; forward again, the check is still going on.
    back = re.search(r'<a class="link-button" href="([^"]+)">Back</a>',
                     pending.get_data(as_text=True))
    assert back and not back.group(1).endswith("/kyc")
    assert flow.client.get(back.group(1)).status_code == 200
    assert "We are checking your document" in text(flow.get("/kyc"))
    # Without JavaScript the pending page reloads itself (the form never does: it would lose
    # what the user typed).
    assert re.search(r'<noscript><meta http-equiv="refresh" content="10; url=/checkout/s/'
                     r'[^/"]+/kyc"></noscript>', pending.get_data(as_text=True))
    assert "http-equiv" not in form.get_data(as_text=True)
    # While under review, the page follows along: nothing new yet.
    assert flow.get("/kyc/check?shown=pending").status_code == 204
    review_kyc(app)
    moved = flow.get("/kyc/check?shown=pending", headers={"HX-Request": "true"})
    assert moved.headers["HX-Redirect"].endswith("/kyc")
    review = flow.follow(flow.get("/kyc"))
    assert review.request.path.endswith("/review")
    # Identity, now verified, is no longer needed, but it was a step of this user's journey.
    assert "Step 5: Review" in text(review)
    created = flow.follow(flow.create(review))
    assert created.request.path.endswith("/pay")
    # Nothing of the document is kept in the session.
    kept = repr(flow.session.data)
    assert "40718293" not in kept and "Wanjiru" not in kept and "1990-05-17" not in kept


def test_a_field_refused_on_the_server_shows_at_its_field(flow: Flow) -> None:
    to_kyc(flow, "5000")
    page = flow.post("/kyc", {**NATIONAL_ID, "id_number": "12AB"})
    assert page.status_code == 200
    assert re.search(r'field-id_number-error">[^<]*Expected format: 00000000', page.get_data(
        as_text=True))
    # The other values are shown again as typed, by the answer to the post itself: they are
    # never stored, not even for a redirect.
    assert 'value="Wanjiru"' in page.get_data(as_text=True)
    assert "Wanjiru" not in repr(flow.session.data)
    # That answer is no page to come back to: the language menu returns to the session's page,
    # and checkout.js takes the post out of the history (data-checkout-posted).
    assert 'name="next" value=""' in page.get_data(as_text=True)
    assert "data-checkout-posted" in page.get_data(as_text=True)


def test_an_under_age_date_of_birth_refused_by_the_partner_shows_at_its_field(flow: Flow) -> None:
    to_kyc(flow, "5000")
    page = flow.post("/kyc", {**NATIONAL_ID, "dob": "2020-01-01"})
    assert page.status_code == 200
    # In plain words at the field, not the partner's ("userFields.dob: the user must be ...").
    assert re.search(r'id="field-dob-error">[^<]*You must be at least 18 years old to be '
                     r'verified\.', page.get_data(as_text=True))
    assert "userFields" not in text(page)


@pytest.mark.parametrize(("message", "field", "said"), [
    ("userFields.dob: the user must be at least 21 years old", "dob",
     "You must be at least 21 years old to be verified."),
    ("userFields.dob must be a date in the past", "dob", "Enter a date in the past."),
    ("userFields.id_number does not match the format of National ID (e.g. 00000000)",
     "id_number", "This does not look right. Expected format: 00000000 (0: any digit)"),
    ("userFields.last_name does not match the format of National ID", "last_name",
     "This does not look right for this document. Check it and try again."),
    ("userFields.first_name is too long (at most 256 characters)", "first_name",
     "Our verification partner did not accept this: is too long (at most 256 characters)"),
    ("a KYC submission is already under review", None,
     "Our verification partner did not accept this document: a KYC submission is already "
     "under review"),
    ("userFields.nickname is required", None,
     "Our verification partner did not accept this document: userFields.nickname is required"),
])
def test_a_partners_refusal_is_said_at_its_field_in_plain_words(app: Flask, message, field,
                                                                 said) -> None:
    document = KycDocument(title="National ID", value="NATIONAL_ID", required_fields=[
        RequiredField(name=name, type="string", label=name,
                      format="00000000" if name == "id_number" else None)
        for name in ("first_name", "last_name", "dob", "id_number")])
    with app.test_request_context():
        assert submission.refusal(message, document) == (field, said)


def test_rejected_says_why_and_offers_another_document(app: Flask, flow: Flow) -> None:
    to_kyc(flow, "5000")
    # The sandbox rejects an ID number of zeros, as a number the issuer does not know.
    flow.landed(flow.post("/kyc", {**NATIONAL_ID, "id_number": "00000000"}), "kyc")
    review_kyc(app)
    page = flow.get("/kyc")
    body = text(page)
    assert "Your National ID was not accepted" in body
    assert "Our verification partner says:" in body
    assert "Which document will you use?" in body
    flow.landed(flow.post("/kyc", {"document": "PASSPORT", **PERSON, "id_number": "A1234567"}),
                "kyc")
    review_kyc(app)
    assert flow.follow(flow.get("/kyc")).request.path.endswith("/review")


def reject_under_review(app: Flask, reason: str) -> None:
    """The sandbox's console rejects every submission under review, giving ``reason``."""
    with app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        store = kyc_store()
        for user in store.users():
            for pending in [s for s in user.submissions if s.status == "pending"]:
                store.decide(pending.id, "reject", reason)


def the_reason(html: str) -> tuple[str, str]:
    """The rejection's sentence, and the partner's own words kept below it ("" for none)."""
    notice = re.search(r'data-testid="kyc-rejected">(.*?)</div>', html, re.S).group(1)
    sentence = re.findall(r"<p>(.*?)</p>", notice, re.S)[0]
    kept = re.search(r'<details class="as-sent">(.*?)</details>', notice, re.S)
    return sentence, kept.group(1) if kept else ""


SAYS = {"fr": "Notre partenaire de vérification indique\u00a0:",
        "sw": "Mshirika wetu wa uthibitishaji anasema:",
        "pt": "O nosso parceiro de verificação indica:"}
ID_NOT_FOUND = {
    "fr": "Le numéro d’identité est introuvable dans les registres de l’organisme qui a délivré "
          "le document.",
    "sw": "Nambari ya kitambulisho haikupatikana kwenye kumbukumbu za mamlaka iliyotoa hati.",
    "pt": "O número de identificação não consta dos registos da entidade emissora.",
}


@pytest.mark.parametrize("language", sorted(SAYS))
def test_a_known_rejection_reason_is_said_in_the_pages_language_the_partners_kept(
        app: Flask, flow: Flow, language: str) -> None:
    """Not an English reason inside a French sentence: the reason the partner is known to give
    is said in the page's language, its own words kept below, marked as English. The same with
    JavaScript (the step as htmx asks for it) and without (the whole page)."""
    to_kyc(flow, "5000", locale=language)
    flow.landed(flow.post("/kyc", {**NATIONAL_ID, "id_number": "00000000"}), "kyc")
    review_kyc(app)
    for page in (flow.get("/kyc"), flow.get("/kyc", headers={"HX-Request": "true"})):
        sentence, kept = the_reason(page.get_data(as_text=True))
        assert sentence.startswith(f"{SAYS[language]} {ID_NOT_FOUND[language]}"), sentence
        assert "issuer" not in sentence and 'lang="en"' not in sentence
        assert f'<span lang="en">{escape(REASON_ID_NOT_FOUND)}</span>' in kept


def test_an_unknown_rejection_reason_is_shown_as_it_came_in_a_translated_sentence(
        app: Flask, flow: Flow) -> None:
    to_kyc(flow, "5000", locale="fr")
    flow.landed(flow.post("/kyc", NATIONAL_ID), "kyc")
    reject_under_review(app, "Photo too blurry")
    sentence, kept = the_reason(flow.get("/kyc").get_data(as_text=True))
    assert sentence == f'{SAYS["fr"]} <span lang="en">Photo too blurry</span>'
    assert kept == ""                                   # said once, as it came


def test_an_english_page_shows_the_partners_reason_once_as_it_came(app: Flask,
                                                                    flow: Flow) -> None:
    to_kyc(flow, "5000", locale="en")
    flow.landed(flow.post("/kyc", {**NATIONAL_ID, "id_number": "00000000"}), "kyc")
    review_kyc(app)
    sentence, kept = the_reason(flow.get("/kyc").get_data(as_text=True))
    assert sentence == f"Our verification partner says: {escape(REASON_ID_NOT_FOUND)}"
    assert kept == ""


def test_an_amount_that_needs_more_brings_the_step_back(app: Flask, flow: Flow) -> None:
    to_kyc(flow, "5000")
    flow.landed(flow.post("/kyc", NATIONAL_ID), "kyc")
    review_kyc(app)
    assert flow.follow(flow.get("/kyc")).request.path.endswith("/review")
    # Back to the amount: 15,000 KES needs advanced KYC, which a basic pass does not cover.
    flow.follow(flow.choose("stk_push", amount="15000"))
    page = flow.open("/")
    assert page.request.path.endswith("/kyc")
    body = text(page)
    assert "your identity document and a photo of your face" in body
    assert "Alien card" in body
    review = flow.get("/review")
    assert review.status_code == 303 and review.headers["Location"].endswith("/kyc")


def test_advanced_kyc_sends_clean_photos(app: Flask, flow: Flow, monkeypatch) -> None:
    to_kyc(flow, "15000")
    form = flow.get("/kyc?document=ALIEN_CARD")
    html = form.get_data(as_text=True)
    assert 'enctype="multipart/form-data"' in html
    for name, capture in (("selfie", "user"), ("front", "environment"), ("back", "environment")):
        assert re.search(rf'name="photo_{name}" type="file" accept="image/\*" '
                         rf'capture="{capture}" required', html)
    assert "No camera on this device?" in text(form)
    sent: dict[str, Any] = {}
    with app.app_context():
        upstream = get_state().upstream
    real = upstream.kyc_submit

    def spy(phone, id_type, user_fields):
        sent.update(phone=phone, id_type=id_type, fields=user_fields)
        return real(phone, id_type, user_fields)

    monkeypatch.setattr(upstream, "kyc_submit", spy)
    data = {**PERSON, "document": "ALIEN_CARD", "id_number": "1234567",
            "photo_selfie": (io.BytesIO(photo()), "selfie.jpg"),
            "photo_front": (io.BytesIO(photo(1200, 800)), "front.jpg"),
            "photo_back": (io.BytesIO(photo(1200, 800, "PNG")), "back.png")}
    flow.landed(flow.post("/kyc", data), "kyc")
    assert sent["id_type"] == "ALIEN_CARD" and sent["phone"] == KE_PHONE
    assert sent["fields"]["dob"] == "1990-05-17T00:00:00.000Z"
    images = sent["fields"]["images"]
    assert [i["image_type_id"] for i in images] == [0, 1, 5]
    for item in images:
        jpeg = base64.b64decode(item["image"])
        assert jpeg.startswith(b"\xff\xd8") and b"PhoneMaker" not in jpeg
        assert not Image.open(io.BytesIO(jpeg)).getexif()
    review_kyc(app)
    assert flow.follow(flow.get("/kyc")).request.path.endswith("/review")


def test_a_form_whose_body_arrived_cut_short_is_said_not_taken_for_nothing_to_do(
        flow: Flow) -> None:
    """A multipart body cut short (a weak connection) parses as no field at all, and with
    JavaScript the anti-forgery token comes in a header: the step must say the form did not
    arrive, not show it again emptied as if there were nothing to send."""
    to_kyc(flow, "5000")
    flow.get("/kyc?document=NATIONAL_ID")
    boundary = "----cut-short"
    body = (f"--{boundary}\r\nContent-Disposition: form-data; name=\"document\"\r\n\r\n"
            f"NATIONAL_ID\r\n--{boundary}\r\nContent-Disposition: form-data; "
            f"name=\"first_name\"\r\n\r\nWanj").encode()
    page = flow.client.post(f"{flow.base}/kyc", data=body,
                            content_type=f"multipart/form-data; boundary={boundary}",
                            headers={"X-Checkout-CSRF": flow.csrf, "HX-Request": "true",
                                     "HX-Boosted": "true"})
    assert page.status_code == 200
    assert "Your form did not reach us" in text(page)
    assert 'role="alert"' in page.get_data(as_text=True)
    assert flow.session.kyc.get("submitted") is None


def no_script_refresh(response: Any) -> str | None:
    """Where the page's <noscript> reload takes it (no_script_refresh), or None."""
    match = re.search(r'<noscript><meta http-equiv="refresh" content="\d+; url=([^"]+)">',
                      response.get_data(as_text=True))
    return match.group(1).replace("&amp;", "&") if match else None


def test_without_javascript_a_computer_waits_for_the_phone_on_a_page_that_follows_along(
        app: Flask, flow: Flow) -> None:
    """The form cannot reload itself (what is typed would be lost), so "Wait for my phone" opens
    the same step without it: its QR code, and a reload that sees the phone's submission."""
    to_kyc(flow, "15000")
    form = flow.get("/kyc?document=ALIEN_CARD")
    assert no_script_refresh(form) is None
    wait = re.search(r'<a class="button button--secondary button--block" href="([^"]+)">'
                     r'Wait for my phone</a>', form.get_data(as_text=True))
    assert wait is not None
    assert "then press “Wait for my phone” below" in text(form)
    waiting = flow.client.get(wait.group(1).replace("&amp;", "&"))
    assert waiting.status_code == 200
    html = waiting.get_data(as_text=True)
    assert 'data-testid="kyc-handoff-url"' in html and "<svg" in html
    assert "This page follows along by itself once you are done on the phone." in text(waiting)
    assert "data-kyc-form" not in html and "Wait for my phone" not in html
    assert no_script_refresh(waiting) == wait.group(1).replace("&amp;", "&")
    assert "Use this device instead" in text(waiting)

    # The phone (the same session, by its link) sends the document: the reload shows it.
    data = {**PERSON, "document": "ALIEN_CARD", "id_number": "1234567",
            "photo_selfie": (io.BytesIO(photo()), "selfie.jpg"),
            "photo_front": (io.BytesIO(photo(1200, 800)), "front.jpg"),
            "photo_back": (io.BytesIO(photo(1200, 800)), "back.jpg")}
    flow.landed(flow.post("/kyc", data), "kyc")
    pending = flow.client.get(no_script_refresh(waiting))
    assert "We are checking your document" in text(pending)
    review_kyc(app)
    assert flow.follow(flow.client.get(no_script_refresh(pending))).request.path.endswith(
        "/review")


# What a phone (or someone who wants it read) writes into a photo beside its pixels.
MAKE, MODEL, DATUM = "TellTaleMaker", "TellTale Model 9", "TellTaleDatum"
JPEG_COMMENT, PNG_COMMENT, PNG_TEXT = "TellTale COM segment", "TellTale png comment", "TellTale"


def photo_with_metadata(kind: str) -> bytes:
    """A photo that carries EXIF (maker, model, orientation, GPS position and datum) and a
    comment: a JPEG's COM segment, or a PNG's tEXt chunks ("comment", "Comment", "Author")."""
    image = Image.effect_noise((900, 700), 40).convert("RGB")
    exif = Image.Exif()
    exif[ExifTags.Base.Make], exif[ExifTags.Base.Model] = MAKE, MODEL
    exif[ExifTags.Base.Orientation] = 6            # turned: the EXIF is read and written anew
    gps = exif.get_ifd(ExifTags.IFD.GPSInfo)
    gps[ExifTags.GPS.GPSLatitudeRef] = "S"
    gps[ExifTags.GPS.GPSLatitude] = (1.0, 17.0, 30.5)
    gps[ExifTags.GPS.GPSMapDatum] = DATUM
    out = io.BytesIO()
    if kind == "JPEG":
        image.save(out, "JPEG", exif=exif.tobytes(), comment=JPEG_COMMENT.encode())
    else:
        text = PngImagePlugin.PngInfo()
        text.add_text("comment", PNG_COMMENT)
        text.add_text("Comment", PNG_COMMENT + " 2")
        text.add_text("Author", PNG_TEXT)
        image.save(out, "PNG", exif=exif.tobytes(), pnginfo=text)
    return out.getvalue()


def test_only_pixels_leave_neither_upstream_nor_in_any_log_line(app: Flask, flow: Flow, caplog,
                                                                monkeypatch) -> None:
    """No comment, EXIF value or PNG text reaches the upstream, nor a log record of any level
    (the root logger and Pillow's at DEBUG, every record kept)."""
    uploads = {"selfie": photo_with_metadata("JPEG"), "front": photo_with_metadata("PNG"),
               "back": photo_with_metadata("JPEG")}
    for data in uploads.values():
        assert MAKE.encode() in data and DATUM.encode() in data
    to_kyc(flow, "15000")
    with app.app_context():
        upstream = get_state().upstream
    real = upstream.kyc_submit
    sent: dict[str, Any] = {}

    def spy(phone, id_type, user_fields):
        sent.update(user_fields)
        return real(phone, id_type, user_fields)

    monkeypatch.setattr(upstream, "kyc_submit", spy)
    caplog.set_level(logging.DEBUG)
    caplog.set_level(logging.DEBUG, logger="PIL")
    caplog.clear()
    flow.landed(flow.post("/kyc", {
        **PERSON, "document": "ALIEN_CARD", "id_number": "1234567",
        **{f"photo_{name}": (io.BytesIO(data), f"{name}.{'png' if name == 'front' else 'jpg'}")
           for name, data in uploads.items()}}), "kyc")

    told = [MAKE, MODEL, DATUM, JPEG_COMMENT, PNG_COMMENT, PNG_TEXT]
    images = [base64.b64decode(item["image"]) for item in sent["images"]]
    assert len(images) == 3
    for jpeg in images:
        for needle in told:
            assert needle.encode() not in jpeg, needle
        picture = Image.open(io.BytesIO(jpeg))
        assert picture.size == (700, 900)          # turned upright, then its EXIF left behind
        assert not picture.getexif() and "comment" not in picture.info
        assert not {"exif", "xmp", "icc_profile"} & set(picture.info)
    # The GPS latitude as Pillow logs it (the rationals' bytes), and each value in any form.
    latitude = repr(b"\x00\x00\x00\x01\x00\x00\x00\x01\x00\x00\x00\x11")[2:-1]
    logged = "\n".join(f"{r.name} {r.getMessage()} {r.args!r}" for r in caplog.records)
    for needle in [*told, "TellTale", latitude, "30.5"]:
        assert needle not in logged, needle


@pytest.fixture
def decodes(monkeypatch) -> list[int]:
    """Each photo the step decodes (checkout.kyc.photos.prepare), as it happens."""
    done: list[int] = []
    real = kyc_photos.prepare

    def prepare(upload):
        done.append(1)
        return real(upload)

    monkeypatch.setattr(kyc_photos, "prepare", prepare)
    return done


def three_photos() -> dict[str, Any]:
    return {"photo_selfie": (io.BytesIO(photo()), "selfie.jpg"),
            "photo_front": (io.BytesIO(photo(1200, 800)), "front.jpg"),
            "photo_back": (io.BytesIO(photo(1200, 800)), "back.jpg")}


def test_no_photo_is_decoded_for_a_form_that_will_not_be_sent(flow: Flow, decodes) -> None:
    """A wrong field, or a photo missing or refused by its header: nothing is sent, so none of
    the photos is decoded (the costly part); the page says what to put right."""
    to_kyc(flow, "15000")
    wrong_field = flow.post("/kyc", {**PERSON, "document": "ALIEN_CARD", "id_number": "",
                                     **three_photos()})
    html = wrong_field.get_data(as_text=True)
    assert re.search(r'id="field-id_number-error"', html)
    assert "then add your photos again" in html
    missing = {**three_photos()}
    del missing["photo_back"]
    page = flow.post("/kyc", {**PERSON, "document": "ALIEN_CARD", "id_number": "1234567",
                              **missing})
    assert re.search(r'field-photo_back-error">Add this photo', page.get_data(as_text=True))
    unusable = {**three_photos(), "photo_front": (io.BytesIO(photo(150, 800)), "front.jpg")}
    page = flow.post("/kyc", {**PERSON, "document": "ALIEN_CARD", "id_number": "1234567",
                              **unusable})
    assert re.search(r'field-photo_front-error">This photo cannot be used',
                     page.get_data(as_text=True))
    assert decodes == []
    flow.landed(flow.post("/kyc", {**PERSON, "document": "ALIEN_CARD", "id_number": "1234567",
                                   **three_photos()}), "kyc")
    assert decodes == [1, 1, 1]


@pytest.mark.parametrize("limit", ["photo_per_session", "photo_per_ip"])
def test_photos_decoded_are_limited_per_session_and_per_address(config: dict, limit: str,
                                                                decodes) -> None:
    """Three photos decoded fill a limit of 3: the next KYC post is refused (429) before
    anything is read. Posts that decoded nothing did not count."""
    from ..conftest import make_app

    app = make_app({**config, "CHECKOUT_RATELIMITS": {limit: "3/minute"}})
    flow = Flow(app, app.test_client())
    to_kyc(flow, "15000")
    for _ in range(4):
        wrong = flow.post("/kyc", {**PERSON, "document": "ALIEN_CARD", "id_number": "",
                                   **three_photos()})
        assert wrong.status_code == 200
    flow.landed(flow.post("/kyc", {**PERSON, "document": "ALIEN_CARD", "id_number": "1234567",
                                   **three_photos()}), "kyc")
    assert len(decodes) == 3
    refused = flow.post("/kyc", {**PERSON, "document": "ALIEN_CARD", "id_number": "1234567",
                                 **three_photos()})
    assert refused.status_code == 429 and "Retry-After" in refused.headers
    # Another shopper: refused too when the limit is the address's, not when it is the session's.
    other = Flow(app, app.test_client())
    to_kyc(other, "15000")
    again = other.post("/kyc", {**PERSON, "document": "ALIEN_CARD", "id_number": "",
                                **three_photos()})
    assert again.status_code == (429 if limit == "photo_per_ip" else 200)
    assert len(decodes) == 3


def test_a_file_that_is_not_a_photo_is_refused_at_its_input(flow: Flow) -> None:
    to_kyc(flow, "15000")
    data = {**PERSON, "document": "ALIEN_CARD", "id_number": "1234567",
            "photo_selfie": (io.BytesIO(b"%PDF-1.7 not a photo"), "selfie.jpg"),
            "photo_front": (io.BytesIO(photo()), "front.jpg")}
    page = flow.post("/kyc", data)
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert re.search(r'field-photo_selfie-error">This file is not a photo', html)
    assert re.search(r'field-photo_back-error">Add this photo', html)
    assert "add your photos again" in html


def test_the_phone_is_asked_when_no_step_gave_it(app: Flask) -> None:
    """Nigeria's bank transfer asks no phone: the KYC step asks it first (kyc state by phone)."""
    client = app.test_client()
    buyer = Flow(app, client)
    buyer.start()
    # About 60 USD: basic KYC on Nigeria's on-ramp.
    buyer.follow(buyer.choose("manual", amount="90000"))
    page = buyer.follow(buyer.wallet())
    if page.request.path.endswith("/details"):
        page = buyer.follow(buyer.details())
    assert page.request.path.endswith("/kyc")
    assert "Your phone number" in text(page)
    refused = buyer.post("/kyc", {"action": "contact", "contact_phone": "+254712345678"})
    assert "Enter a phone number from Nigeria (for example 0802 123 4567)." in text(refused)
    page = buyer.follow(buyer.post("/kyc", {"action": "contact", "contact_phone": "08012345678"}))
    assert "Which document will you use?" in text(page)


def test_the_off_ramp_has_the_same_step(app: Flask) -> None:
    from .test_offramp import Sale

    sale = Sale(app, app.test_client())
    sale.start()
    # Kenya's off-ramp: basic from 25 USD (about 3,300 KES).
    sale.landed(sale.choose(countryIsoCode="KE", paymentChannel="mobile_money",
                            network="POLYGON", asset="USDC", amount="5000"), "payout")
    page = sale.follow(sale.post("/payout", {"phoneNumber": "0712345678"}))
    while not page.request.path.endswith(("/kyc", "/review")):
        path = page.request.path.rsplit("/", 1)[-1]
        if path == "payee":
            page = sale.follow(sale.payee(confirm="yes"))
        elif path == "wallet":
            page = sale.follow(sale.post("/wallet", {"address": EVM_ADDRESS}))
        else:
            raise AssertionError(path)
    assert page.request.path.endswith("/kyc")
    assert "Identity" in text(page)


@pytest.mark.parametrize("sandbox_config, kyc_user_api", [({"SANDBOX_USER_ENDPOINTS": True}, True)])
def test_with_the_user_api_the_standing_is_read_by_email(config: dict, app: Flask,
                                                         monkeypatch) -> None:
    client = app.test_client()
    buyer = Flow(app, client)
    with app.app_context():
        upstream = get_state().upstream
    asked: list[str] = []
    monkeypatch.setattr(upstream, "kyc_state", lambda **kw: asked.append("state"))
    page = to_kyc(buyer, "5000")
    assert page.request.path.endswith("/kyc")
    buyer.get("/kyc?document=NATIONAL_ID")
    buyer.landed(buyer.post("/kyc", NATIONAL_ID), "kyc")
    review_kyc(app)
    assert buyer.follow(buyer.get("/kyc")).request.path.endswith("/review")
    assert asked == []
    # The user API gives the level itself: advanced is asked once the amount needs it.
    buyer.follow(buyer.choose("stk_push", amount="15000"))
    assert "Alien card" in text(buyer.get("/kyc"))


def test_small_orders_that_add_up_to_the_limit_ask_for_verification(app: Flask) -> None:
    """Kenya's on-ramp allows 14.99 USD without KYC: two orders of 1,000 KES (about 7.70 USD
    each) reach it, and the third, small as it is, asks the user to verify (reachedKycLimit)."""
    for _ in range(2):
        buyer = Flow(app, app.test_client())
        review = to_kyc(buyer, "1000")
        assert review.request.path.endswith("/review")
        assert buyer.follow(buyer.create(review)).request.path.endswith("/pay")
    buyer = Flow(app, app.test_client())
    page = to_kyc(buyer, "1000")
    assert page.request.path.endswith("/kyc")
    body = text(page)
    assert "You have reached what you can pay without verifying your identity" in body
    assert "Which document will you use?" in body
    buyer.get("/kyc?document=NATIONAL_ID")
    buyer.landed(buyer.post("/kyc", NATIONAL_ID), "kyc")
    review_kyc(app)
    assert buyer.follow(buyer.get("/kyc")).request.path.endswith("/review")


def test_nothing_of_a_kyc_submission_is_kept_logged_or_shown(app: Flask, flow: Flow, caplog,
                                                             monkeypatch) -> None:
    """After a whole advanced KYC (fields and photos) and the order: no field value nor photo in
    any log line (every logger, the sandbox's too), any response (bodies and headers) or any
    table of the checkout."""
    caplog.set_level(logging.DEBUG)
    with app.app_context():
        upstream = get_state().upstream
    real = upstream.kyc_submit
    sent: dict[str, Any] = {}

    def spy(phone, id_type, user_fields):
        sent.update(user_fields)
        return real(phone, id_type, user_fields)

    monkeypatch.setattr(upstream, "kyc_submit", spy)
    secret = {"first_name": "Zawadi", "last_name": "Otieno", "dob": "1987-11-03",
              "email": "zawadi.otieno@example.org", "id_number": "8273645"}
    to_kyc(flow, "15000")
    flow.landed(flow.post("/kyc", {
        **secret, "document": "ALIEN_CARD",
        "photo_selfie": (io.BytesIO(photo()), "selfie.jpg"),
        "photo_front": (io.BytesIO(photo(1200, 800)), "front.jpg"),
        "photo_back": (io.BytesIO(photo(1200, 800)), "back.jpg")}), "kyc")
    review_kyc(app)
    review = flow.follow(flow.get("/kyc"))
    assert flow.follow(flow.create(review)).request.path.endswith("/pay")
    flow.get("/status")

    images = [item["image"] for item in sent["images"]]
    # The date of birth in the other ways a page or a log could write it (not "1987" alone: four
    # digits turn up by chance in ids and timestamps).
    dob_written = ["Nov 3, 1987", "3 Nov 1987", "03/11/1987", "11/03/1987", "1987-11-03T"]
    needles = [*secret.values(), *dob_written, *(image[100:160] for image in images)]
    logged = "\n".join(f"{r.getMessage()} {r.args!r} {r.exc_text or ''}" for r in caplog.records)
    answered = "\n".join(f"{r.headers!r}\n{r.get_data(as_text=True)}" for r in flow.responses)
    with app.app_context():
        engine = get_state().engine
        with engine.connect() as conn:
            stored = "\n".join(repr(conn.execute(sql(f'SELECT * FROM "{name}"')).all())
                               for name in inspect(engine).get_table_names())
    for needle in needles:
        assert needle not in logged, needle
        assert needle not in answered, needle
        assert needle not in stored, needle


@pytest.mark.parametrize("sandbox_config", [{"SANDBOX_WEBHOOK_EVENTS": ["order", "kyc"]}])
def test_a_kyc_webhook_brings_the_verdict_before_the_next_poll(app: Flask, flow: Flow,
                                                                sandbox_config) -> None:
    """A merchant who opted in to `kyc` events: the page learns the verdict as soon as the event
    is stored, not only every CHECKOUT_KYC_POLL_SECONDS (here an hour)."""
    app.config["CHECKOUT_KYC_POLL_SECONDS"] = 3600
    to_kyc(flow, "5000")
    flow.landed(flow.post("/kyc", NATIONAL_ID), "kyc")
    assert flow.get("/kyc/check?shown=pending").status_code == 204
    review_kyc(app)
    wait_for(lambda: (answer := flow.get("/kyc/check?shown=pending",
                                         headers={"HX-Request": "true"})).status_code == 200
             and "HX-Redirect" in answer.headers, interval=0.05)
    assert flow.follow(flow.get("/kyc")).request.path.endswith("/review")


def test_a_verified_user_at_the_top_of_their_limit_is_told_what_they_can_do(app: Flask) -> None:
    """Ghana's on-ramp has basic KYC only, up to 300 USD of orders: past it there is no higher
    level to offer, only a smaller amount (or the shop)."""
    # The email the page fills in: the one of the orders, so they count as this user's.
    ghana_passport = {"document": "PASSPORT", **PERSON, "email": "ada@example.com",
                      "id_number": "G1234567"}
    for visit in range(3):
        buyer = Flow(app, app.test_client())
        buyer.start()
        buyer.follow(buyer.choose("redirect", amount="2500"))      # about 170 USD
        page = buyer.follow(buyer.wallet())
        assert page.request.path.endswith("/kyc"), (visit, text(page))
        page = buyer.follow(buyer.post("/kyc", {"action": "contact",
                                                "contact_phone": PHONES["GH"]}))
        if visit == 0:
            buyer.landed(buyer.post("/kyc", ghana_passport), "kyc")
            review_kyc(app)
            page = buyer.follow(buyer.get("/kyc"))
        if visit < 2:
            assert page.request.path.endswith("/review"), text(page)
            assert buyer.follow(buyer.create(page)).request.path.endswith("/pay")
    body = text(page)
    assert page.request.path.endswith("/kyc")
    assert "You have reached the limit of your verification" in body
    assert "Choose a smaller amount" in body
    assert "Which document will you use?" not in body


def test_a_png_bomb_is_refused_before_it_is_decoded(flow: Flow) -> None:
    """A 7000 px square PNG of one colour is ~150 KB on the wire and ~150 MB once decoded."""
    bomb = io.BytesIO()
    Image.new("RGB", (7000, 7000), (255, 255, 255)).save(bomb, "PNG")
    to_kyc(flow, "15000")
    page = flow.post("/kyc", {**PERSON, "document": "ALIEN_CARD", "id_number": "1234567",
                              "photo_selfie": (io.BytesIO(bomb.getvalue()), "selfie.png")})
    assert re.search(r'field-photo_selfie-error">This photo cannot be used',
                     page.get_data(as_text=True))


def test_a_body_too_large_is_refused_before_it_is_read_even_without_javascript(
        flow: Flow) -> None:
    to_kyc(flow, "15000")
    huge = io.BytesIO(b"\xff\xd8" + b"\0" * (40 * 1024 * 1024))
    # A plain form post (no htmx header): the limit holds before the anti-forgery check reads it.
    page = flow.post("/kyc", {"document": "ALIEN_CARD", "photo_selfie": (huge, "big.jpg")})
    assert page.status_code == 413
    assert "<html" in page.get_data(as_text=True)            # a page, not a bare error
    small = flow.post("/wallet", {"address": "x" * (300 * 1024)})
    assert small.status_code == 413


def test_a_second_document_while_one_is_checked_is_not_sent(flow: Flow) -> None:
    to_kyc(flow, "5000")
    flow.landed(flow.post("/kyc", NATIONAL_ID), "kyc")
    again = flow.post("/kyc", {**NATIONAL_ID, "document": "PASSPORT", "id_number": "A1234567"})
    assert "Your document is being checked" in text(again)


def test_a_lagging_approval_does_not_count_for_the_document_just_sent(app: Flask, flow: Flow,
                                                                      monkeypatch) -> None:
    """Basic passed; an advanced document sent; the kyc state still says "approved" (the basic
    one) on the first read after: that read proves nothing, the order waits for the review."""
    to_kyc(flow, "5000")
    flow.landed(flow.post("/kyc", NATIONAL_ID), "kyc")
    review_kyc(app)
    assert flow.follow(flow.get("/kyc")).request.path.endswith("/review")
    flow.follow(flow.choose("stk_push", amount="15000"))
    with app.app_context():
        upstream = get_state().upstream
    real_state = upstream.kyc_state
    lagging = {"reads": 0}

    def lag(**kwargs):
        state = real_state(**kwargs)
        lagging["reads"] += 1
        if state.kyc_status == "pending" and lagging["reads"] <= 3:
            from dataclasses import replace
            return replace(state, kyc_status="approved")
        return state

    flow.get("/kyc")
    monkeypatch.setattr(upstream, "kyc_state", lag)
    lagging["reads"] = 0
    data = {**PERSON, "document": "ALIEN_CARD", "id_number": "1234567",
            "photo_selfie": (io.BytesIO(photo()), "selfie.jpg"),
            "photo_front": (io.BytesIO(photo()), "front.jpg"),
            "photo_back": (io.BytesIO(photo()), "back.jpg")}
    flow.landed(flow.post("/kyc", data), "kyc")
    for _ in range(3):
        assert flow.get("/review").headers.get("Location", "").endswith("/kyc")
        flow.get("/kyc?check=1")
    monkeypatch.setattr(upstream, "kyc_state", real_state)
    review_kyc(app)
    assert flow.follow(flow.get("/kyc")).request.path.endswith("/review")


def test_the_resume_link_says_unavailable_when_the_partner_does_not_answer(
        app: Flask, flow: Flow, monkeypatch) -> None:
    from checkout.errors import UpstreamUnavailable

    with app.app_context():
        upstream = get_state().upstream

    def down(**kwargs):
        raise UpstreamUnavailable("down")

    flow.start()
    flow.follow(flow.choose("stk_push", amount="5000"))
    flow.follow(flow.wallet())
    monkeypatch.setattr(upstream, "kyc_state", down)
    page = flow.follow(flow.details(phoneNumber=PHONES["KE"]))
    assert "We cannot check your verification right now" in text(page)
    assert "We cannot check your verification right now" in text(flow.open("/"))


def test_a_submission_without_an_answer_is_looked_up_not_sent_again(app: Flask, flow: Flow,
                                                                   monkeypatch) -> None:
    """The partner took the document but its answer was lost: the page shows it under review
    (read from the state), not an invitation to send it again."""
    from checkout.errors import UpstreamTimeout

    with app.app_context():
        upstream = get_state().upstream
    real = upstream.kyc_submit

    def lost_answer(*args, **kwargs):
        real(*args, **kwargs)
        raise UpstreamTimeout("no answer")

    monkeypatch.setattr(upstream, "kyc_submit", lost_answer)
    to_kyc(flow, "5000")
    page = flow.follow(flow.post("/kyc", NATIONAL_ID))
    assert "We are checking your document" in text(page)


# -- a returning customer ---------------------------------------------------------------------------

ADA = {**PERSON, "email": "ada@example.com"}        # the email the wallet step gave


def alien_card(**person: Any) -> dict[str, Any]:
    """An advanced document (Kenya's alien card) with its three photos."""
    return {**ADA, **person, "document": "ALIEN_CARD", "id_number": "1234567",
            "photo_selfie": (io.BytesIO(photo()), "selfie.jpg"),
            "photo_front": (io.BytesIO(photo()), "front.jpg"),
            "photo_back": (io.BytesIO(photo()), "back.jpg")}


def verified_on_the_partners_page(app: Flask, level: str) -> None:
    """The user passes ``level`` outside this checkout (the partner's own page): the checkout
    hears of it from nobody."""
    from checkout.sandbox import reference
    from checkout.sandbox.console_kyc import shortcut_document

    with app.app_context():
        sandbox = get_state().sandbox
    with sandbox.app_context():
        store = kyc_store()
        kenya = reference.country("KE")
        user, _ = store.get_or_create(kenya, phone=KE_PHONE, email="ada@example.com")
        store.verify_now(user, shortcut_document(kenya, level))


def remembered(app: Flask) -> str:
    from checkout.kyc import memory

    with app.app_context():
        keys = memory.person_keys(app.config["CHECKOUT_LAUNCH_SECRET"], email="ada@example.com")
        return memory.recall(get_state().engine, keys, days=1)


def test_a_returning_customer_verified_with_photos_is_not_asked_again(app: Flask) -> None:
    """Yesterday: KYC with photos, then an order, whose webhooks tell the level passed. Today the
    same person buys as much again: the kyc state by phone says only "passed", and the checkout
    knows which level from those webhooks. No identity step, no document sent again."""
    first = Flow(app, app.test_client())
    to_kyc(first, "15000")
    first.landed(first.post("/kyc", alien_card()), "kyc")
    review_kyc(app)
    review = first.follow(first.get("/kyc"))
    assert first.follow(first.create(review)).request.path.endswith("/pay")
    # What the upstream told in the order's webhook (data.userKyc), once stored and processed.
    wait_for(lambda: remembered(app) == "advanced", timeout=15)

    again = Flow(app, app.test_client())
    page = to_kyc(again, "15000")
    assert page.request.path.endswith("/review"), text(page)
    assert all("/kyc" not in r.request.path for r in again.responses)
    assert again.follow(again.create(page)).request.path.endswith("/pay")


def test_a_level_proven_in_one_session_counts_in_the_next(app: Flask) -> None:
    """No order yet, so no webhook: the document this checkout sent and saw approved is enough
    for the person's next session."""
    first = Flow(app, app.test_client())
    to_kyc(first, "15000")
    first.landed(first.post("/kyc", alien_card()), "kyc")
    review_kyc(app)
    assert first.follow(first.get("/kyc")).request.path.endswith("/review")
    assert remembered(app) == "advanced"
    again = Flow(app, app.test_client())
    assert to_kyc(again, "15000").request.path.endswith("/review")


def test_verified_at_an_unknown_level_the_page_says_so_and_never_dead_ends(
        app: Flask, monkeypatch) -> None:
    """Verified with photos on the partner's own page, and nothing told the checkout the level:
    the page says the user may be verified already, links the partner's page and a check that
    reads the standing again. A document sent anyway is refused by the partner as already
    approved: that answer finishes the step (and is remembered), it does not fail it."""
    verified_on_the_partners_page(app, "advanced")
    buyer = Flow(app, app.test_client())
    page = to_kyc(buyer, "15000")
    assert page.request.path.endswith("/kyc")
    body, html = text(page), page.get_data(as_text=True)
    assert "You are already verified with our partner" in body
    partner = re.findall(r'<a class="link-button" href="([^"]+)" target="_blank" rel="noopener '
                         r'noreferrer" data-partner-page>See my verification on our partner’s '
                         r'page</a>', html)
    assert len(partner) == 1 and "/sandbox/kyc?phoneNumber=254712345678" in partner[0], partner
    assert "Which document will you use?" in body           # and the way to verify here
    # "Check again" asks the partner again (not the session's copy).
    with app.app_context():
        upstream = get_state().upstream
    reads: list[str] = []
    real_state = upstream.kyc_state
    monkeypatch.setattr(upstream, "kyc_state",
                        lambda **kw: reads.append("state") or real_state(**kw))
    # "Check again" asks at most every few seconds however often it is clicked: not in a test.
    monkeypatch.setattr(kyc_views, "CHECK_AGAIN_SECONDS", 0)
    checked = buyer.get("/kyc?check=1")
    assert reads == ["state"]
    assert "their answer has not changed" in text(checked)
    sent = buyer.post("/kyc", alien_card())
    review = buyer.landed(sent, "review")
    assert "Step" in text(review) and "not accepted" not in text(review)
    assert remembered(app) == "advanced"
    # The next order of this person is not asked at all.
    again = Flow(app, app.test_client())
    assert to_kyc(again, "15000").request.path.endswith("/review")


def test_check_again_finds_what_a_webhook_told_meanwhile(app: Flask, monkeypatch) -> None:
    """Verified elsewhere; an order webhook of that person arrives (a purchase in another shop
    of the merchant's, say) while the page shows the unknown level: "Check again" goes on."""
    from checkout.kyc import memory

    verified_on_the_partners_page(app, "advanced")
    buyer = Flow(app, app.test_client())
    assert "You are already verified" in text(to_kyc(buyer, "15000"))
    with app.app_context():
        # As the webhook of an order of this checkout tells it: under the email, and under the
        # phone the order's session knew the user by.
        keys = memory.person_keys(app.config["CHECKOUT_LAUNCH_SECRET"], email="ada@example.com",
                                  phone=KE_PHONE)
        with get_state().engine.begin() as conn:
            memory.remember(conn, keys, "advanced")
    monkeypatch.setattr(kyc_views, "CHECK_AGAIN_SECONDS", 0)
    assert buyer.follow(buyer.get("/kyc?check=1")).request.path.endswith("/review")


def test_a_basic_pass_of_a_known_level_asks_for_the_advanced_document(app: Flask) -> None:
    """The level is known (the upstream told basic): no "maybe already verified" notice, the
    advanced documents straight away."""
    verified_on_the_partners_page(app, "basic")
    from checkout.kyc import memory

    with app.app_context():
        keys = memory.person_keys(app.config["CHECKOUT_LAUNCH_SECRET"], phone=KE_PHONE)
        memory.remember_now(get_state().engine, keys, "basic")
    buyer = Flow(app, app.test_client())
    body = text(to_kyc(buyer, "15000"))
    assert "You are already verified" not in body
    assert "your identity document and a photo of your face" in body and "Alien card" in body


def test_another_documents_form_does_not_repeat_the_last_refusal(app: Flask, flow: Flow) -> None:
    to_kyc(flow, "5000")
    flow.landed(flow.post("/kyc", {**NATIONAL_ID, "id_number": "00000000"}), "kyc")
    review_kyc(app)
    assert "Your National ID was not accepted" in text(flow.get("/kyc"))
    assert "Your National ID was not accepted" in text(flow.get("/kyc?document=NATIONAL_ID"))
    passport = text(flow.get("/kyc?document=PASSPORT"))
    assert "Document: Passport" in passport
    assert "not accepted" not in passport


def test_the_sessions_own_link_shows_the_approval_it_already_knows(app: Flask,
                                                                  flow: Flow) -> None:
    """Opened after the approval (the resume link, on another device), the session's page goes
    on with the order: never "We are checking your document" until the page's own poll."""
    to_kyc(flow, "5000")
    flow.landed(flow.post("/kyc", NATIONAL_ID), "kyc")
    review_kyc(app)
    page = flow.open("/")
    assert "We are checking your document" not in text(page)
    assert page.request.path.endswith("/review") or "Review" in text(page)


def test_a_level_told_of_an_email_is_not_borrowed_by_typing_it(app: Flask) -> None:
    """A webhook told that the person with this email passed advanced (an order made elsewhere:
    no phone known). Another person, verified at basic on their own phone, types that email:
    they are asked for the advanced document, never passed over on someone else's level."""
    from checkout.kyc import memory

    verified_on_the_partners_page(app, "basic")
    with app.app_context():
        keys = memory.person_keys(app.config["CHECKOUT_LAUNCH_SECRET"],
                                  email="ada@example.com")
        memory.remember_now(get_state().engine, keys, "advanced")
    buyer = Flow(app, app.test_client())
    page = to_kyc(buyer, "15000")
    assert page.request.path.endswith("/kyc")
    assert "Alien card" in text(page)


@pytest.mark.parametrize(("message", "level"), [
    ("advanced KYC is already approved for this user", "advanced"),
    ("Basic verification has been already approved", "basic"),
    ("basic KYC was already approved", "basic"),
    ("this ID number is already approved for another user", None),
    ("a KYC submission is already under review", None),
])
def test_only_a_refusal_that_names_the_level_passed_counts(message, level) -> None:
    assert submission.already_approved(message) == level


def test_a_document_under_review_or_refused_says_whom_to_contact(app: Flask, flow: Flow) -> None:
    """Never the verification partner: the shop, by name (or its support, when set)."""
    app.config["CHECKOUT_MERCHANT_NAME"] = "Mama Mboga"
    to_kyc(flow, "5000")
    flow.landed(flow.post("/kyc", {**NATIONAL_ID, "id_number": "00000000"}), "kyc")
    assert "Need help? Contact Mama Mboga." in text(flow.get("/kyc"))
    review_kyc(app)
    refused = text(flow.get("/kyc"))
    assert "Your National ID was not accepted" in refused
    assert "Need help? Contact Mama Mboga." in refused
