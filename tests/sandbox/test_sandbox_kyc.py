"""The sandbox's KYC beyond the plain API: forced outcomes with reasons, the console's decisions,
the hosted ``kycUrl`` page, images of advanced documents and ``reachedKycLimit`` from order volume.

Time never passes for real: the KYC store gets a fake clock (the sandbox's timers are not used).
"""
from __future__ import annotations

import logging
import re
from datetime import datetime
from urllib.parse import parse_qs, urlsplit

import pytest
from flask import Flask

from checkout.sandbox import create_app, kyc
from checkout.sandbox import reference as ref
from checkout.sandbox.kyc import REVIEW_SECONDS, KycStore
from checkout.sandbox.state import PUBLIC_BASE_ENVIRON

from .kyc_support import FakeClock, clock, events  # noqa: F401  (fixtures)
from .sandbox_support import HEADERS, Api, sandbox_factory  # noqa: F401

KE_PHONE = "254110611756"
NG_PHONE = "2348012345678"
GH_PHONE = "233241234567"
JPEG = "/9j/4AAQSkZJRgABAQ=="               # the first bytes of a JPEG (FF D8 FF E0), base64
PNG = "iVBORw0KGgoAAAANSUhEUg=="            # the first bytes of a PNG, base64
NOT_AN_IMAGE = "aGVsbG8gd29ybGQ="           # "hello world"


@pytest.fixture
def make(sandbox_factory, clock, events):
    """A whole sandbox app whose KYC store runs on the fake clock and records its events."""

    def build(**config) -> Api:
        config.setdefault("SANDBOX_USER_ENDPOINTS", True)
        app: Flask = sandbox_factory(**config)
        default = kyc.kyc_store(app).default_outcome         # as the config made it
        app.extensions["sandbox_kyc"] = KycStore(now=clock, emit=events.append,
                                                 default_outcome=default)
        return Api(app)

    return build


@pytest.fixture
def api(make) -> Api:
    return make()


def person(**overrides) -> dict:
    fields = {"first_name": "Wanjiku", "last_name": "Kamau", "dob": "1990-04-01",
              "email": "wanjiku@example.com", "id_number": "12345678"}
    fields.update(overrides)
    return {k: v for k, v in fields.items() if v is not None}


def submit(api: Api, phone=KE_PHONE, id_type="NATIONAL_ID", expect=200, **fields):
    return api.post("/api/kyc/submit", {"phone": phone, "idType": id_type,
                                        "userFields": person(**fields)}, expect=expect)


def state(api: Api, phone=KE_PHONE, **query) -> dict:
    return api.get("/api/kyc/state", phoneNumber=phone, **query)


def statuses(events: list[dict]) -> list[str]:
    return [e["data"]["kycStatus"] for e in events]


def users(api: Api) -> list[dict]:
    return api.client.get("/sandbox/kyc/users.json").get_json()["users"]


def only_submission(api: Api) -> dict:
    [user] = users(api)
    return user["submissions"][-1]


def decide(api: Api, submission_id: str, expect=200, **body):
    response = api.client.post(f"/sandbox/kyc/submissions/{submission_id}/decision", json=body)
    assert response.status_code == expect, response.get_data(as_text=True)
    return response.get_json()


# --- forced outcomes per submission -------------------------------------------------------------

@pytest.mark.parametrize("last_name, status", [
    ("Approve", "approved"), ("reject", "rejected"), ("  PENDING ", "pending"),
])
def test_a_magic_last_name_forces_the_outcome(api, clock, events, last_name, status):
    submit(api, last_name=last_name)
    assert state(api)["kycStatus"] == "pending"
    clock.advance(REVIEW_SECONDS * 100)
    body = state(api)
    assert body["kycStatus"] == status
    assert only_submission(api)["source"] == "last_name"
    if status == "rejected":
        assert body["kycStatusDescription"] == kyc.REASON_DETAILS_MISMATCH
        assert body["passedKyc"] is False
    assert statuses(events) == (["initiated"] if status == "pending"
                                else ["initiated", "approved" if status == "approved" else "rejected"])


def test_an_all_zero_id_number_is_rejected_with_a_reason_and_the_last_name_wins(api, clock):
    submit(api, id_number="00000000")
    clock.advance(REVIEW_SECONDS)
    body = state(api)
    assert (body["kycStatus"], body["kycStatusDescription"]) == ("rejected",
                                                                 kyc.REASON_ID_NOT_FOUND)
    # Another try: the last name's magic comes before the zeros.
    submit(api, id_number="00000000", last_name="Approve")
    clock.advance(REVIEW_SECONDS)
    assert state(api)["kycStatus"] == "approved"


def test_the_reason_is_in_the_user_apis_status_too(api, clock):
    email = "ada@example.com"
    status = api.post("/api/user/kyc/status", {"email": email, "countryIsoCode": "NG"})
    bvn = status["basicDocuments"][0]
    api.post("/api/user/kyc/submit", {"email": email, "documentId": bvn["_id"],
                                      "userFields": person(email=email, last_name="Reject",
                                                           id_number="22222222222")})
    clock.advance(REVIEW_SECONDS)
    after = api.post("/api/user/kyc/status", {"email": email, "countryIsoCode": "NG"})
    assert (after["kycStatus"], after["kycStatusDescription"]) == ("rejected",
                                                                   kyc.REASON_DETAILS_MISMATCH)


def test_kyc_events_keep_the_notes_shape_and_carry_no_reason(api, clock, events):
    """notes 4 gives the kyc event's fields; none holds a reason, so the merchant reads it from the
    state (the sandbox adds no field production would not send)."""
    submit(api, last_name="Reject")
    clock.advance(REVIEW_SECONDS)
    state(api)
    assert statuses(events) == ["initiated", "rejected"]
    assert set(events[-1]["data"]) == {"kycId", "kycStatus", "kycType", "userId", "userEmail",
                                       "userCountryIsoCode", "kycDocument", "date"}
    assert events[-1]["data"]["kycDocument"] == "NATIONAL_ID"


# --- SANDBOX_KYC_OUTCOME ------------------------------------------------------------------------

@pytest.mark.parametrize("outcome, status, description", [
    ("approve", "approved", kyc.STATUS_DESCRIPTIONS["approved"]),
    ("reject", "rejected", kyc.REASON_DEFAULT),
    ("pending", "pending", kyc.STATUS_DESCRIPTIONS["pending"]),
])
def test_the_config_key_sets_the_default_outcome(make, clock, outcome, status, description):
    api = make(SANDBOX_KYC_OUTCOME=outcome)
    submit(api)
    clock.advance(REVIEW_SECONDS * 1000)
    body = state(api)
    assert (body["kycStatus"], body["kycStatusDescription"]) == (status, description)
    assert only_submission(api)["source"] == ("default" if outcome == "approve" else "config")
    # A magic value in the submission still wins over the config.
    if outcome != "pending":
        return
    submission = only_submission(api)
    assert submission["decideAt"] is None           # no timer: the console decides
    decide(api, submission["id"], decision="approve")
    submit(api, id_type="ALIEN_CARD", id_number="123456", last_name="Approve",
           images=[{"image_type_id": 0, "image": JPEG}, {"image_type_id": 1, "image": JPEG},
                   {"image_type_id": 5, "image": PNG}])
    clock.advance(REVIEW_SECONDS)
    assert state(api)["kycStatus"] == "approved"
    assert [u["passedKycType"] for u in users(api)] == ["advanced"]


@pytest.mark.parametrize("value", ["maybe", "Reject", 1, True])
def test_a_bad_config_outcome_stops_the_start(value):
    with pytest.raises(ValueError, match="SANDBOX_KYC_OUTCOME must be one of approve, reject, "
                                         "pending"):
        create_app({"SANDBOX_KYC_OUTCOME": value})


def test_the_config_outcome_may_come_from_the_environment(monkeypatch):
    monkeypatch.setenv("SANDBOX_KYC_OUTCOME", "reject")
    app = create_app()
    try:
        assert app.config["SANDBOX_KYC_OUTCOME"] == "reject"
        assert kyc.kyc_store(app).default_outcome == "reject"
    finally:
        app.extensions["sandbox"].shutdown()
    with pytest.raises(ValueError):
        KycStore(default_outcome="later")


def test_a_pending_submission_schedules_no_timer(clock):
    scheduled = []
    store = KycStore(now=clock, default_outcome="pending",
                     schedule=lambda seconds, fn, *args: scheduled.append((fn, args)))
    kenya = ref.country("KE")
    user, _ = store.get_or_create(kenya, phone=KE_PHONE)
    submission = store.submit(user, kenya.basic_documents[0], person())
    assert scheduled == [] and submission.decide_at is None
    clock.advance(10 ** 7)
    assert store.status(user).status == "pending"


# --- the console --------------------------------------------------------------------------------

def test_console_approves_rejects_and_keeps_pending(api, clock, events):
    submit(api)
    submission = only_submission(api)
    assert submission["status"] == "pending" and submission["outcome"] == "approve"
    assert submission["decideAt"] == "2026-11-22T12:01:00.000Z"
    # Keep it pending: its review no longer decides it.
    kept = decide(api, submission["id"], decision="pending")
    assert kept["decideAt"] is None and kept["source"] == "console"
    clock.advance(REVIEW_SECONDS * 1000)
    assert state(api)["kycStatus"] == "pending"
    # Reject with a reason in plain words.
    rejected = decide(api, submission["id"], decision="reject",
                      reason="  The photo is\nblurred.\x07 Take it again in daylight. ")
    assert rejected["status"] == "rejected"
    assert rejected["reason"] == "The photo is blurred. Take it again in daylight."
    body = state(api)
    assert body["kycStatusDescription"] == "The photo is blurred. Take it again in daylight."
    assert statuses(events) == ["initiated", "rejected"]
    # Decided is decided.
    again = decide(api, submission["id"], expect=400, decision="approve")
    assert again["message"] == f"submission {submission['id']} is already rejected"
    # The user tries again; the console approves at once.
    submit(api)
    second = only_submission(api)
    assert decide(api, second["id"], decision="approve")["status"] == "approved"
    assert state(api)["passedKyc"] is True
    assert statuses(events) == ["initiated", "rejected", "initiated", "approved"]


def test_console_rejection_without_a_reason_gets_the_default(api):
    submit(api)
    rejected = decide(api, only_submission(api)["id"], decision="reject", reason="   ")
    assert rejected["reason"] == kyc.REASON_DEFAULT


@pytest.mark.parametrize("body, status, message", [
    ({"decision": "maybe"}, 400, "decision must be one of: approve, reject, pending"),
    ({}, 400, "decision must be one of"),
    ({"decision": "reject", "reason": "x" * 301}, 400, "reason is too long (at most 300"),
    ({"decision": "reject", "reason": 5}, 400, "reason must be a string"),
])
def test_console_refuses_bad_decisions(api, body, status, message):
    submit(api)
    answer = decide(api, only_submission(api)["id"], expect=status, **body)
    assert message in answer["message"]
    assert only_submission(api)["status"] == "pending"


def test_console_unknown_submission_and_cross_site_posts(api):
    assert decide(api, "kyc_nope", expect=404, decision="approve") == {
        "message": "no such KYC submission"}
    submit(api)
    submission_id = only_submission(api)["id"]
    for headers in ({"Sec-Fetch-Site": "cross-site"}, {"Origin": "https://evil.example"}):
        response = api.client.post(f"/sandbox/kyc/submissions/{submission_id}/decision",
                                   data={"decision": "approve"}, headers=headers)
        assert response.status_code == 403
    assert only_submission(api)["status"] == "pending"


def test_console_page_lists_users_and_buttons_for_pending_submissions(api, clock):
    assert "No KYC users yet" in api.client.get("/sandbox/kyc/users").get_data(as_text=True)
    submit(api, id_number="00000000")
    clock.advance(REVIEW_SECONDS)
    submit(api)
    first, second = (s["id"] for s in only_submission_list(api))
    html = api.client.get("/sandbox/kyc/users").get_data(as_text=True)
    assert KE_PHONE in html and "wanjiku@example.com" in html and "National ID" in html
    assert kyc.REASON_ID_NOT_FOUND.replace("'", "&#39;") in html
    forms = re.findall(r'action="/sandbox/kyc/submissions/([^/]+)/decision"', html)
    assert set(forms) == {second} and len(forms) == 3     # approve, reject, keep pending
    assert 'name="reason"' in html and "Keep pending" in html
    # A form post goes back to the console, at the submission.
    response = api.client.post(f"/sandbox/kyc/submissions/{second}/decision",
                               data={"decision": "pending"})
    assert response.status_code == 303
    assert response.headers["Location"] == (f"/sandbox/kyc/users?highlight={second}#{second}")
    html = api.client.get("/sandbox/kyc/users").get_data(as_text=True)
    assert "kept pending until decided here" in html and "Keep pending" not in html
    assert first not in re.findall(r"/sandbox/kyc/submissions/([^/]+)/decision", html)


def only_submission_list(api: Api) -> list[dict]:
    [user] = users(api)
    return user["submissions"]


def test_the_console_never_shows_submitted_values(api):
    submit(api, first_name="Zawadi", id_number="87654321")
    page = api.client.get("/sandbox/kyc/users").get_data(as_text=True)
    listing = api.client.get("/sandbox/kyc/users.json").get_data(as_text=True)
    for text in (page, listing):
        assert "Zawadi" not in text and "87654321" not in text and "1990-04-01" not in text


# --- images of advanced documents ---------------------------------------------------------------

def images(*pairs):
    return [{"image_type_id": t, "image": image} for t, image in pairs]


CARD = images((0, JPEG), (1, PNG), (5, JPEG))


def advanced(api: Api, document="DRIVERS_LICENSE", pictures=CARD, expect=200):
    id_number = "A12345678" if document == "PASSPORT" else "ABC123456"
    return submit(api, phone=NG_PHONE, id_type=document, id_number=id_number,
                  images=pictures, expect=expect)


def test_a_card_needs_its_back_and_a_passport_has_none(api):
    assert advanced(api) == {"success": True}
    other = Api(api.app)
    missing = submit(other, phone="2348012345679", id_type="DRIVERS_LICENSE",
                     id_number="ABC123456", email="b@example.com",
                     images=images((0, JPEG), (1, PNG)), expect=400)
    assert missing["message"] == (
        "userFields.images is missing the 5 (document back): a Driver's licence needs 0 (selfie), "
        "1 (document front), 5 (document back)")
    passport = submit(other, phone="2348012345679", id_type="PASSPORT", id_number="A12345678",
                      email="b@example.com", images=images((1, PNG), (0, JPEG)))
    assert passport == {"success": True}


@pytest.mark.parametrize("document, pictures, message", [
    ("PASSPORT", CARD, "userFields.images[2].image_type_id 5 (document back): a International "
                       "passport has no back; send 0 (selfie), 1 (document front)"),
    ("DRIVERS_LICENSE", images((0, JPEG), (0, JPEG)),
     "userFields.images[1].image_type_id 0 (selfie) is given twice"),
    ("DRIVERS_LICENSE", images((2, JPEG)),
     "userFields.images[0].image_type_id must be one of 0 (selfie), 1 (document front), "
     "5 (document back)"),
    ("DRIVERS_LICENSE", images((1.0, JPEG)), "userFields.images[0].image_type_id must be one of"),
    ("DRIVERS_LICENSE", images((True, JPEG)), "userFields.images[0].image_type_id must be one of"),
    ("DRIVERS_LICENSE", images(("1", JPEG)), "userFields.images[0].image_type_id must be one of"),
    ("DRIVERS_LICENSE", images((0, JPEG), (1, NOT_AN_IMAGE)),
     "userFields.images[1].image is not a JPEG or PNG image"),
    ("DRIVERS_LICENSE", images((0, "not base64!")),
     "userFields.images[0].image must be base64 data of a JPEG or PNG image, or an https URL"),
    ("DRIVERS_LICENSE", images((0, JPEG[:-2])), "userFields.images[0].image must be base64"),
    ("DRIVERS_LICENSE", images((0, JPEG[:8] + "\n" + JPEG[8:])),
     "userFields.images[0].image must be base64"),
    ("DRIVERS_LICENSE", images((0, "")), "userFields.images[0].image must be base64"),
    ("DRIVERS_LICENSE", images((0, 7)), "userFields.images[0].image must be base64"),
    ("DRIVERS_LICENSE", images((0, "data:image/jpeg;base64," + JPEG)),
     "userFields.images[0].image must be plain base64, without a data: URL prefix"),
    ("DRIVERS_LICENSE", images((0, "http://example.com/selfie.jpg")),
     "userFields.images[0].image must be an https URL (http is refused)"),
    ("DRIVERS_LICENSE", images((0, "https:///selfie.jpg")),
     "userFields.images[0].image must be an https URL with a host"),
    ("DRIVERS_LICENSE", images((0, "https://me:pw@example.com/selfie.jpg")),
     "userFields.images[0].image must be an https URL with a host"),
    ("DRIVERS_LICENSE", images((0, "https://example.com/a b.jpg")),
     "userFields.images[0].image must be an https URL with a host"),
    ("DRIVERS_LICENSE", images((0, "https://example.com:99999/a.jpg")),
     "userFields.images[0].image must be an https URL with a host"),
    ("DRIVERS_LICENSE", [{"image_type_id": 0}], "userFields.images[0] must be an object"),
    ("DRIVERS_LICENSE", [], "userFields.images must be a list"),
])
def test_bad_images_are_refused_naming_the_item(api, document, pictures, message):
    answer = advanced(api, document, pictures, expect=400)
    assert message in answer["message"], answer


def test_an_image_over_ten_megabytes_is_refused():
    huge = JPEG + "A" * (4 * (kyc.MAX_IMAGE_BYTES // 3) + 8)
    with pytest.raises(kyc.KycError, match=r"images\[0\].image is too large \(at most 10 MB\)"):
        kyc.check_user_fields(ref.country("NG").document_by_value("DRIVERS_LICENSE"),
                              person(id_number="ABC123456", images=images((0, huge))),
                              datetime(2026, 1, 1).date())


def test_https_urls_are_images_too(api):
    pictures = images((0, "https://cdn.example.com/s.jpg"), (1, "HTTPS://cdn.example.com/f.png"),
                      (5, JPEG))
    assert advanced(api, pictures=pictures) == {"success": True}


def test_image_data_is_never_echoed_or_logged(api, caplog):
    secret = "/9j/" + "U0VDUkVU" * 40                      # a JPEG's start, then "SECRET"...
    caplog.set_level(logging.DEBUG)
    for pictures in (images((0, secret), (0, secret)), images((0, secret), (1, NOT_AN_IMAGE)),
                     images((0, secret), (1, secret), (5, secret))):
        response = api.client.post("/api/kyc/submit", headers=HEADERS, json={
            "phone": NG_PHONE, "idType": "DRIVERS_LICENSE",
            "userFields": person(id_number="ABC123456", images=pictures)})
        assert "U0VDUkVU" not in response.get_data(as_text=True)
    assert "U0VDUkVU" not in caplog.text
    for page in ("/sandbox/kyc/users", "/sandbox/kyc/users.json",
                 f"/sandbox/kyc?phoneNumber={NG_PHONE}"):
        assert "U0VDUkVU" not in api.client.get(page).get_data(as_text=True)


# --- the hosted page (kycUrl) -------------------------------------------------------------------

def test_kyc_url_is_a_page_that_passes_basic_then_advanced(api, events):
    kyc_url = state(api)["kycUrl"]
    assert kyc_url == f"http://localhost/sandbox/kyc?phoneNumber={KE_PHONE}"
    page = api.client.get(urlsplit(kyc_url).path, query_string=urlsplit(kyc_url).query)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'name="viewport" content="width=device-width, initial-scale=1"' in html
    assert "Not verified" in html and "Sandbox shortcut" in html
    assert 'id="pass-basic"' in html and 'id="pass-advanced"' in html
    assert "sandbox shortcut: National ID" in html and "sandbox shortcut: Driving licence" in html
    assert html.index('id="pass-basic"') < html.index('id="pass-advanced"')
    response = api.client.post("/sandbox/kyc", data={"phoneNumber": KE_PHONE, "level": "basic"})
    assert response.status_code == 303
    assert response.headers["Location"] == f"/sandbox/kyc?phoneNumber={KE_PHONE}"
    body = state(api)
    assert (body["passedKyc"], body["kycStatus"]) == (True, "approved")
    assert statuses(events) == ["initiated", "approved"]
    html = api.client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Verified: basic" in html and 'id="pass-basic"' not in html
    assert 'id="pass-advanced"' in html
    # JSON for scripts: the user as the console shows them.
    user = api.client.post("/sandbox/kyc", json={"phoneNumber": KE_PHONE,
                                                 "level": "advanced"}).get_json()
    assert user["passedKycType"] == "advanced" and user["phone"] == KE_PHONE
    assert [s["source"] for s in user["submissions"]] == ["kyc page", "kyc page"]
    html = api.client.get(response.headers["Location"]).get_data(as_text=True)
    assert "Verified: advanced" in html and "Sandbox shortcut" not in html


def test_kyc_page_of_a_country_without_advanced_documents(api):
    html = api.client.get(f"/sandbox/kyc?phoneNumber={GH_PHONE}").get_data(as_text=True)
    assert 'id="pass-basic"' in html and 'id="pass-advanced"' not in html
    refused = api.client.post("/sandbox/kyc", data={"phoneNumber": GH_PHONE, "level": "advanced"})
    assert refused.status_code == 400
    assert refused.get_json() == {"message": "Ghana has no advanced documents"}


def test_kyc_page_while_pending_and_after_a_rejection(api, clock):
    submit(api, last_name="Pending")
    html = api.client.get(f"/sandbox/kyc?phoneNumber={KE_PHONE}").get_data(as_text=True)
    assert "being reviewed" in html and "Sandbox shortcut" not in html
    assert 'href="/sandbox/kyc/users#kyc_' in html
    refused = api.client.post("/sandbox/kyc", data={"phoneNumber": KE_PHONE, "level": "basic"})
    assert refused.status_code == 400
    assert refused.get_json()["message"] == "a KYC submission is already under review"
    decide(api, only_submission(api)["id"], decision="reject", reason="The ID card has expired.")
    html = api.client.get(f"/sandbox/kyc?phoneNumber={KE_PHONE}").get_data(as_text=True)
    assert "not accepted: The ID card has expired." in html and 'id="pass-basic"' in html


@pytest.mark.parametrize("request_args, status, message", [
    ({"method": "GET", "query_string": {}}, 400, "phoneNumber is required"),
    ({"method": "GET", "query_string": {"phoneNumber": "15551234567"}}, 400,
     "phoneNumber is not a phone number of a supported country"),
    ({"method": "POST", "data": {"level": "basic"}}, 400, "phoneNumber is required"),
    ({"method": "POST", "data": {"phoneNumber": KE_PHONE, "level": "gold"}}, 400,
     "level must be one of: basic, advanced"),
    ({"method": "POST", "data": {"phoneNumber": KE_PHONE, "level": "basic"},
      "headers": {"Sec-Fetch-Site": "cross-site"}}, 403, "sandbox actions only"),
    ({"method": "POST", "data": {"phoneNumber": KE_PHONE, "level": "basic"},
      "headers": {"Origin": "https://evil.example"}}, 403, "sandbox actions only"),
])
def test_kyc_page_refusals(api, request_args, status, message):
    response = api.client.open("/sandbox/kyc", **request_args)
    assert response.status_code == status and message in response.get_json()["message"]
    assert users(api) == []


def test_kyc_page_passing_a_level_already_passed_is_refused(api):
    api.client.post("/sandbox/kyc", data={"phoneNumber": KE_PHONE, "level": "advanced"})
    again = api.client.post("/sandbox/kyc", data={"phoneNumber": KE_PHONE, "level": "basic"})
    assert again.status_code == 400
    assert again.get_json()["message"] == "advanced KYC is already approved for this user"


def test_kyc_url_and_links_follow_a_mount_prefix(api):
    """Served by a checkout under ``{prefix}/sandbox/``: kycUrl says where (the checkout tells the
    sandbox per call), the page's form and stylesheet stay under the prefix."""
    body = api.client.get("/api/kyc/state", headers=HEADERS,
                          query_string={"phoneNumber": KE_PHONE},
                          environ_overrides={PUBLIC_BASE_ENVIRON: "https://shop.test/checkout"})
    assert body.get_json()["kycUrl"] == (
        f"https://shop.test/checkout/sandbox/kyc?phoneNumber={KE_PHONE}")
    page = api.client.get("/sandbox/kyc", base_url="http://shop.test/checkout",
                          query_string={"phoneNumber": KE_PHONE}).get_data(as_text=True)
    assert 'href="/checkout/sandbox/sandbox.css"' in page
    assert 'action="/checkout/sandbox/kyc"' in page
    done = api.client.post("/sandbox/kyc", base_url="http://shop.test/checkout",
                           data={"phoneNumber": KE_PHONE, "level": "basic"})
    assert done.headers["Location"] == f"/checkout/sandbox/kyc?phoneNumber={KE_PHONE}"


def test_a_set_public_url_wins_for_kyc_url(make):
    api = make(SANDBOX_PUBLIC_URL="https://sandbox.example.test")
    assert state(api)["kycUrl"] == (
        f"https://sandbox.example.test/sandbox/kyc?phoneNumber={KE_PHONE}")


def test_kyc_url_carries_only_the_phone(api):
    kyc_url = state(api, email="wanjiku@example.com")["kycUrl"]
    assert parse_qs(urlsplit(kyc_url).query) == {"phoneNumber": [KE_PHONE]}


# --- reachedKycLimit ----------------------------------------------------------------------------

def ke_onramp_order(api: Api, kes: str, email="wanjiku@example.com") -> dict:
    quote = api.onramp_quote(countryIsoCode="KE", paymentChannel="mobile_money", amount=kes)
    return api.onramp_order(quote, quote_params={"amount": kes}, email=email,
                            extraFields={"phoneNumber": KE_PHONE})


def test_reached_kyc_limit_without_kyc_then_lifted_by_a_level(api):
    order = ke_onramp_order(api, "2000")                    # 15.50 USD: over 14.99 without KYC
    assert order["amount"] > 14.99
    # Unknown to KYC, yet the orders (by phone or by email) count.
    assert state(api)["reachedKycLimit"] is True
    assert state(api, "254700000009", email="wanjiku@example.com")["reachedKycLimit"] is True
    assert state(api, "254700000009")["reachedKycLimit"] is False
    api.client.post("/sandbox/kyc", data={"phoneNumber": KE_PHONE, "level": "basic"})
    assert state(api)["reachedKycLimit"] is False           # basic allows 99.99 USD
    [user] = users(api)
    assert user["volumeUsd"]["onramp"] == order["amount"]
    assert user["allowedVolumeUsd"] == {"onramp": 99.99, "offramp": 149.99}


def test_reached_kyc_limit_at_the_top_level(api):
    """Kenya's off-ramp ends at 500 USD even with advanced KYC: there is no higher level."""
    api.client.post("/sandbox/kyc", json={"phoneNumber": KE_PHONE, "level": "advanced"})
    assert state(api)["reachedKycLimit"] is False
    quote = api.get("/api/offramp/best-offer", amount="500", currency="usd", countryIsoCode="KE",
                    paymentChannel="mobile_money", network="CELO", asset="USDT")
    order = api.offramp_channel_order(quote, amount=500, email="other@example.com")
    assert state(api)["reachedKycLimit"] is True            # by the payout's phone number
    [user] = users(api)
    assert user["reachedKycLimit"] is True and user["allowedVolumeUsd"]["offramp"] == 500
    page = api.client.get(f"/sandbox/kyc?phoneNumber={KE_PHONE}").get_data(as_text=True)
    assert 'id="limit"' in page
    # An order that ends without money moving stops counting.
    api.client.post(f"/sandbox/orders/{order['_id']}/reject", json={})
    assert state(api)["reachedKycLimit"] is False


def test_orders_that_died_do_not_count(api):
    order = ke_onramp_order(api, "2000")
    api.client.post(f"/sandbox/orders/{order['orderId']}/reject", json={})
    assert state(api)["reachedKycLimit"] is False


def test_reached_limit_by_flow():
    ghana = ref.country("GH")
    assert kyc.reached_limit(ghana, "basic", {"onramp": kyc.Decimal(300)}) is True
    assert kyc.reached_limit(ghana, "basic", {"offramp": kyc.Decimal(10 ** 6)}) is False
    assert kyc.reached_limit(ghana, "none", {"offramp": kyc.Decimal(50)}) is True
    assert kyc.reached_limit(ghana, "none", {}) is False


# --- index --------------------------------------------------------------------------------------

def test_index_documents_kyc(make):
    api = make(SANDBOX_KYC_OUTCOME="pending")
    html = api.client.get("/sandbox/").get_data(as_text=True)
    assert '<code id="kyc-outcome">pending</code>' in html
    assert "<code>Reject</code>" in html and "<code>Pending</code>" in html
    assert 'href="/sandbox/kyc/users"' in html
    section = html.split('id="kyc-thresholds"', 1)[1]
    assert "Kenya (<code>KE</code>)" in section and "15–99.99" in section
    assert "100–Infinity" in section and "mobile_money 1–500" in section
