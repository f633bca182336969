"""``/api/util/*``, ``/api/kyc/*`` and ``/api/user/*`` of the sandbox, on a tiny app."""
from __future__ import annotations

from datetime import timedelta
from decimal import Decimal
from types import SimpleNamespace

import pytest
from flask import Flask, jsonify
from joserfc import jwt

from checkout.sandbox import api_kyc, api_util, console_kyc, kyc
from checkout.sandbox import reference as ref
from checkout.sandbox.kyc import REVIEW_SECONDS, KycStore
from checkout.sandbox.validation import ApiError

from .kyc_support import FakeClock, clock, events  # noqa: F401  (fixtures)

KE_PHONE = "254110611756"
NG_PHONE = "2348012345678"
NOT_AVAILABLE = "This feature is not available for this merchant, please contact support"


def make_app(**config) -> Flask:
    app = Flask("sandbox_util_kyc_test")
    app.json.sort_keys = False
    app.config.update(TESTING=True, **config)
    app.register_blueprint(api_util.bp)
    app.register_blueprint(api_kyc.bp)
    app.register_blueprint(console_kyc.bp)      # kycUrl names its page

    @app.errorhandler(ApiError)
    def api_error(error: ApiError):
        return jsonify(error.body), error.status

    return app


@pytest.fixture
def app(clock, events) -> Flask:
    app = make_app(SANDBOX_USER_ENDPOINTS=True)
    app.extensions["sandbox"] = SimpleNamespace(
        orders=SimpleNamespace(address_used=lambda address: address == "0xUSED",
                               volume_usd=lambda email, phone, family=None: 0),
        emit_kyc_event=events.append)
    app.extensions["sandbox_kyc"] = KycStore(now=clock, emit=events.append)
    return app


def person(**overrides) -> dict:
    fields = {"first_name": "Wanjiku", "last_name": "Kamau", "dob": "1990-04-01",
              "email": "wanjiku@example.com", "id_number": "12345678"}
    fields.update(overrides)
    return {k: v for k, v in fields.items() if v is not None}


def submit(client, phone=KE_PHONE, id_type="NATIONAL_ID", **fields):
    return client.post("/api/kyc/submit", json={"phone": phone, "idType": id_type,
                                                "userFields": person(**fields)})


def state(client, phone=KE_PHONE, **query):
    return client.get("/api/kyc/state", query_string={"phoneNumber": phone, **query})


# --- /api/util ----------------------------------------------------------------------------------

def test_check_address_asks_the_order_store(client):
    assert client.post("/api/util/check-address", json={"address": "0xUSED"}).json == {
        "used": True}
    assert client.post("/api/util/check-address", json={"address": "0xNEW"}).json == {
        "used": False}


def test_check_address_without_an_order_store_is_never_used():
    client = make_app().test_client()
    response = client.post("/api/util/check-address", json={"address": "0xUSED"})
    assert response.status_code == 200 and response.json == {"used": False}


@pytest.mark.parametrize("kwargs,message", [
    ({"json": {}}, "address is required"),
    ({"json": {"address": "0x1", "network": "CELO"}}, "unknown field(s) in body: network"),
    ({"data": "{not json", "content_type": "application/json"}, "the body is not valid JSON"),
    ({"data": "address=0x1", "content_type": "application/x-www-form-urlencoded"},
     "the body must be JSON"),
    ({"json": ["0x1"]}, "the body must be a JSON object"),
    ({"json": {"address": 5}}, "address must be a string"),
])
def test_check_address_refuses_bad_bodies(client, kwargs, message):
    response = client.post("/api/util/check-address", **kwargs)
    assert response.status_code == 400
    assert message in response.json["message"]


def test_util_lists(client):
    countries = client.get("/api/util/countries").json
    assert countries == ref.util_countries_json()
    ke = next(c for c in countries if c["countryIsoCode"] == "KE")
    assert list(ke) == ["countryIsoCode", "currencyIsoCode", "name", "basicDocuments",
                        "advancedDocuments", "kycRules"]
    assert ke["kycRules"]["onramp"] == [{"min": 0, "max": 14.99, "type": "none"},
                                        {"min": 15, "max": 99.99, "type": "basic"},
                                        {"min": 100, "max": "Infinity", "type": "advanced"}]
    assert ke["kycRules"]["offramp"][-1] == {"min": 150, "max": 500, "type": "advanced"}
    carriers = client.get("/api/util/carriers").json
    assert {"name": "Safaricom", "code": "SAFARICOM"} in next(
        c for c in carriers if c["countryIsoCode"] == "KE")["carriers"]
    assets = client.get("/api/util/assets").json
    assert len(assets) == len(ref.UTIL_ASSETS)
    assert {"network": "TRON", "asset": "USDT", "canOfframp": True, "canOnramp": True} in assets
    assert {"network": "NEAR", "asset": "NATIVE", "canOfframp": False,
            "canOnramp": False} in assets


# --- /api/kyc -----------------------------------------------------------------------------------

def test_kyc_state_of_a_new_user(client):
    body = state(client).json
    assert body["passedKyc"] is False and body["kycStatus"] == "none"
    assert body["reachedKycLimit"] is False
    assert body["kycUrl"].endswith(f"/sandbox/kyc?phoneNumber={KE_PHONE}")
    # As the service documents Kenya's on-ramp: none below 15 USD, basic from 15, advanced from 100.
    assert body["onrampKycRules"] == [{"type": "none", "minAmount": 0},
                                      {"type": "basic", "minAmount": 15},
                                      {"type": "advanced", "minAmount": 100}]
    assert body["offrampKycRules"] == [{"type": "none", "minAmount": 0},
                                       {"type": "basic", "minAmount": 25},
                                       {"type": "advanced", "minAmount": 150}]
    values = [d["value"] for d in body["documentTypes"]]
    assert values == ["NATIONAL_ID", "PASSPORT", "DRIVERS_LICENSE", "ALIEN_CARD"]
    assert set(body["documentTypes"][0]) == {"title", "value", "requiredFields"}
    assert body["documentTypes"][0]["requiredFields"]["id_number"]["regexp"] == "^[0-9]{1,9}$"


@pytest.mark.parametrize("query,message", [
    ({}, "phoneNumber is required"),
    ({"phoneNumber": ""}, "phoneNumber is required"),
    ({"phoneNumber": "call me"}, "phoneNumber must be an international phone number"),
    ({"phoneNumber": "15551234567"}, "not a phone number of a supported country"),
    ({"phoneNumber": KE_PHONE, "email": "not-an-email"}, "email must be an email address"),
])
def test_kyc_state_refuses_bad_queries(client, query, message):
    response = client.get("/api/kyc/state", query_string=query)
    assert response.status_code == 400 and message in response.json["message"]


def test_submission_is_pending_then_approved_after_the_review(client, clock, events, app):
    assert submit(client).json == {"success": True}
    assert state(client).json["kycStatus"] == "pending"
    clock.advance(REVIEW_SECONDS - 1)
    body = state(client).json
    assert body["kycStatus"] == "pending" and body["passedKyc"] is False
    clock.advance(1)
    body = state(client).json
    assert body["kycStatus"] == "approved" and body["passedKyc"] is True
    assert body["kycStatusDescription"] == kyc.STATUS_DESCRIPTIONS["approved"]
    assert [e["data"]["kycStatus"] for e in events] == ["initiated", "approved"]
    assert events[0]["event"] == "kyc" and events[0]["data"]["kycType"] == "basic"
    assert events[0]["data"]["userCountryIsoCode"] == "KE"
    # The email given in the fields finds the same user, for order webhooks too.
    with app.app_context():
        user_kyc = kyc.webhook_user_kyc("wanjiku@example.com")
    assert user_kyc["passedKycType"] == "basic" and user_kyc["latestKycStatus"] == "approved"
    assert len(user_kyc["passedKycHash"]) == 64
    with app.app_context():
        assert kyc.webhook_user_kyc("nobody@example.com") == {}


def test_webhook_user_kyc_outside_an_app_context_knows_nothing():
    assert kyc.webhook_user_kyc("wanjiku@example.com") == {}


def test_all_zero_id_number_is_rejected(client, clock):
    assert submit(client, id_number="00000000").status_code == 200
    clock.advance(REVIEW_SECONDS)
    body = state(client).json
    assert body["kycStatus"] == "rejected" and body["passedKyc"] is False
    # A rejected user may try again.
    assert submit(client).status_code == 200
    clock.advance(REVIEW_SECONDS)
    assert state(client).json["kycStatus"] == "approved"


def test_no_second_submission_while_pending_or_once_passed(client, clock):
    submit(client)
    again = submit(client, id_type="PASSPORT", id_number="AK1234567")
    assert again.status_code == 400 and "already under review" in again.json["message"]
    clock.advance(REVIEW_SECONDS)
    same_level = submit(client, id_type="PASSPORT", id_number="AK1234567")
    assert same_level.status_code == 400 and "basic KYC is already approved" in \
        same_level.json["message"]
    images = [{"image_type_id": 0, "image": JPEG_B64},
              {"image_type_id": 1, "image": "https://example.com/front.jpg"},
              {"image_type_id": 5, "image": PNG_B64}]
    advanced = submit(client, id_type="ALIEN_CARD", id_number="123456", images=images)
    assert advanced.status_code == 200


def test_scale_and_review_delay_come_from_the_config():
    app = make_app(SANDBOX_TIME_SCALE=0.001)
    with app.app_context():
        store = kyc.kyc_store()
        assert store.scale == 0.001 and kyc.kyc_store() is store
        user, created = store.get_or_create(ref.country("KE"), phone=KE_PHONE)
        sub = store.submit(user, ref.country("KE").basic_documents[0], person())
    assert created and (sub.decide_at - sub.submitted_at) == timedelta(
        seconds=REVIEW_SECONDS * 0.001)


def test_the_sandbox_scheduler_settles_submissions_on_time(clock, events):
    scheduled = []
    store = KycStore(now=clock, emit=events.append,
                     schedule=lambda seconds, fn, *args: scheduled.append((seconds, fn, args)))
    user, _ = store.get_or_create(ref.country("NG"), phone=NG_PHONE)
    store.submit(user, ref.country("NG").document_by_value("BVN"),
                 person(id_number="22222222222"))
    [(seconds, fn, args)] = scheduled
    assert seconds == REVIEW_SECONDS
    fn(*args)                       # the timer fires: decided without anyone reading
    fn(*args)                       # and only once
    assert [e["data"]["kycStatus"] for e in events] == ["initiated", "approved"]


def test_reached_kyc_limit_follows_the_order_volume(app, client, clock):
    app.extensions["sandbox"].orders.volume_usd = \
        lambda email, phone, family=None: 50 if family == "onramp" else 0
    submit(client, phone=NG_PHONE, id_type="BVN", id_number="22222222222")
    assert state(client, NG_PHONE).json["reachedKycLimit"] is True    # over 24.99 USD, no KYC
    clock.advance(REVIEW_SECONDS)
    assert state(client, NG_PHONE).json["reachedKycLimit"] is False   # basic allows 99.99 USD


JPEG_B64 = "/9j/4AAQSkZJRgABAQ=="                  # FF D8 FF E0 ...: a JPEG's first bytes
PNG_B64 = "iVBORw0KGgoAAAANSUhEUg=="               # 89 50 4E 47 0D 0A 1A 0A ...: a PNG's
IMAGES = [{"image_type_id": 0, "image": JPEG_B64}, {"image_type_id": 1, "image": PNG_B64},
          {"image_type_id": 5, "image": JPEG_B64}]


@pytest.mark.parametrize("body,message", [
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID"}, "userFields is required"),
    ({"idType": "NATIONAL_ID", "userFields": person()}, "phone is required"),
    ({"phone": KE_PHONE, "userFields": person()}, "idType is required"),
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID", "userFields": person(), "x": 1},
     "unknown field(s) in body: x"),
    ({"phone": KE_PHONE, "idType": "BVN", "userFields": person()},
     "idType must be one of: NATIONAL_ID, PASSPORT, DRIVERS_LICENSE, ALIEN_CARD"),
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID", "userFields": "x"},
     "userFields must be an object"),
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID", "userFields": person(nickname="W")},
     "userFields has unknown field(s): nickname"),
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID", "userFields": person(first_name=None)},
     "userFields.first_name is required"),
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID", "userFields": person(last_name="  ")},
     "userFields.last_name is required"),
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID", "userFields": person(id_number="1234567890")},
     "userFields.id_number does not match the format of National ID (e.g. 00000000)"),
    ({"phone": KE_PHONE, "idType": "PASSPORT", "userFields": person(id_number="ak1234567")},
     "userFields.id_number does not match the format of Passport"),
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID", "userFields": person(id_number=12345678)},
     "userFields.id_number must be a string"),
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID", "userFields": person(email="nope@")},
     "userFields.email must be an email address"),
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID", "userFields": person(dob="01/04/1990")},
     "userFields.dob must be an ISO 8601 date"),
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID", "userFields": person(dob="2030-01-01")},
     "userFields.dob must be a date in the past"),
    ({"phone": KE_PHONE, "idType": "NATIONAL_ID", "userFields": person(dob="2015-01-01")},
     "at least 18 years old"),
    ({"phone": "15551234567", "idType": "NATIONAL_ID", "userFields": person()},
     "phone is not a phone number of a supported country"),
    ({"phone": NG_PHONE, "idType": "DRIVERS_LICENSE", "userFields": person(id_number="ABC123456")},
     "userFields.images is required"),
    ({"phone": NG_PHONE, "idType": "DRIVERS_LICENSE",
      "userFields": person(id_number="ABC123456", images=IMAGES[:1])},
     "userFields.images is missing the 1 (document front), 5 (document back): a Driver's "
     "licence needs 0 (selfie), 1 (document front), 5 (document back)"),
    ({"phone": NG_PHONE, "idType": "DRIVERS_LICENSE",
      "userFields": person(id_number="ABC123456", images=[{"image_type_id": 9, "image": "x"}])},
     "userFields.images[0].image_type_id must be one of"),
    ({"phone": NG_PHONE, "idType": "DRIVERS_LICENSE",
      "userFields": person(id_number="ABC123456", images="selfie.jpg")},
     "userFields.images must be a list"),
])
def test_kyc_submit_names_the_bad_field(client, body, message):
    response = client.post("/api/kyc/submit", json=body)
    assert response.status_code == 400, response.json
    assert message in response.json["message"]


def test_kyc_submit_refuses_malformed_json(client):
    response = client.post("/api/kyc/submit", data="{", content_type="application/json")
    assert response.status_code == 400 and response.json["message"] == "the body is not valid JSON"


def test_case_insensitive_patterns_follow_the_i_flag(client):
    ok = submit(client, phone=NG_PHONE, id_type="VOTER_ID", id_number="90f5b4a3c219283746")
    assert ok.status_code == 200
    # Another phone and another email: another user.
    dob_time = submit(client, phone="233241234567", id_type="PASSPORT", id_number="g1234567",
                      dob="1990-04-01T00:00:00.000Z", email="kofi@example.com")
    assert dob_time.status_code == 200


# --- /api/user ----------------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["/api/user/tokens", "/api/user/kyc/status",
                                  "/api/user/kyc/submit"])
def test_user_endpoints_are_disabled_by_default(path):
    client = make_app().test_client()
    response = client.post(path, json={"email": "a@example.com", "countryIsoCode": "KE"})
    assert response.status_code == 403 and response.json == {"message": NOT_AVAILABLE}


def test_user_tokens_are_signed_jwts(client, app):
    response = client.post("/api/user/tokens", json={"email": "Ada@Example.com",
                                                     "countryIsoCode": "NG"})
    assert response.status_code == 200
    body = response.json
    assert set(body) == {"accessToken", "refreshToken"}
    with app.app_context():
        key = api_kyc._token_key()
    access = jwt.decode(body["accessToken"], key).claims
    refresh = jwt.decode(body["refreshToken"], key).claims
    assert access["type"] == "access" and refresh["type"] == "refresh"
    assert access["sub"] == refresh["sub"] and access["countryIsoCode"] == "NG"
    assert access["exp"] - access["iat"] == api_kyc.ACCESS_TOKEN_SECONDS
    assert access["jti"] != refresh["jti"]
    # The same email is the same user.
    again = client.post("/api/user/tokens", json={"email": "ada@example.com",
                                                  "countryIsoCode": "NG"}).json
    assert jwt.decode(again["accessToken"], key).claims["sub"] == access["sub"]


@pytest.mark.parametrize("body,message", [
    ({"countryIsoCode": "NG"}, "email is required"),
    ({"email": "ada@example.com"}, "countryIsoCode is required"),
    ({"email": "ada", "countryIsoCode": "NG"}, "email must be an email address"),
    ({"email": "ada@example.com", "countryIsoCode": "US"},
     "countryIsoCode 'US' is not a supported country"),
    ({"email": "ada@example.com", "countryIsoCode": "ng"},
     "countryIsoCode 'ng' is not a supported country"),
    ({"email": "ada@example.com", "countryIsoCode": "NG", "phone": "1"},
     "unknown field(s) in body: phone"),
])
def test_user_tokens_refuse_bad_bodies(client, body, message):
    response = client.post("/api/user/tokens", json=body)
    assert response.status_code == 400 and message in response.json["message"]


def test_user_kyc_status_and_submit_by_document_id(client, clock):
    status = client.post("/api/user/kyc/status", json={"email": "ada@example.com",
                                                       "countryIsoCode": "NG"}).json
    assert (status["passedKycType"], status["kycStatus"], status["reachedKycLimit"]) == (
        "none", "none", False)
    assert [d["value"] for d in status["basicDocuments"]] == ["BVN", "NIN", "VOTER_ID"]
    licence, passport = status["advancedDocuments"]
    assert licence["_id"] == ref.country("NG").document_by_value("DRIVERS_LICENSE").id
    assert licence["requiredFields"]["images"]["type"] == "smile-identity-images"
    assert passport["value"] == "PASSPORT" and passport["requiredFields"]["images"]["label"] == (
        "Selfie and a photo of the document's photo page")
    bvn = status["basicDocuments"][0]
    ok = client.post("/api/user/kyc/submit", json={
        "email": "ada@example.com", "documentId": bvn["_id"],
        "userFields": person(email="ada@example.com", id_number="22222222222")})
    assert ok.json == {"success": True}
    pending = client.post("/api/user/kyc/status", json={"email": "ada@example.com",
                                                        "countryIsoCode": "NG"}).json
    assert pending["kycStatus"] == "pending"
    clock.advance(REVIEW_SECONDS)
    done = client.post("/api/user/kyc/status", json={"email": "ada@example.com",
                                                     "countryIsoCode": "NG"}).json
    assert (done["passedKycType"], done["kycStatus"]) == ("basic", "approved")
    elsewhere = client.post("/api/user/kyc/status", json={"email": "ada@example.com",
                                                          "countryIsoCode": "KE"})
    assert elsewhere.status_code == 400 and "registered in NG" in elsewhere.json["message"]


@pytest.mark.parametrize("body,message", [
    ({"email": "ghost@example.com", "documentId": "x", "userFields": {}}, "no user has this email"),
    ({"email": "ada@example.com", "documentId": "nope", "userFields": {}},
     "documentId is not a document of NG"),
    ({"email": "ada@example.com", "documentId": ref.country("KE").basic_documents[0].id,
      "userFields": {}}, "documentId is not a document of NG"),
    ({"email": "ada@example.com", "documentId": ref.country("NG").basic_documents[0].id},
     "userFields is required"),
    ({"email": "ada@example.com", "documentId": ref.country("NG").basic_documents[0].id,
      "userFields": person(id_number="1")}, "userFields.id_number does not match"),
    ({"documentId": "x", "userFields": {}}, "email is required"),
])
def test_user_kyc_submit_refusals(client, body, message):
    client.post("/api/user/kyc/status", json={"email": "ada@example.com", "countryIsoCode": "NG"})
    response = client.post("/api/user/kyc/submit", json=body)
    assert response.status_code == 400 and message in response.json["message"]


def test_concurrent_submissions_for_one_phone_make_one_user_and_one_review(clock):
    from concurrent.futures import ThreadPoolExecutor

    store = KycStore(now=clock)
    kenya = ref.country("KE")
    document = kenya.basic_documents[0]

    def attempt(_):
        user, _ = store.get_or_create(kenya, phone=KE_PHONE)
        try:
            store.submit(user, document, person())
            return user, True
        except kyc.KycError:
            return user, False

    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(attempt, range(40)))
    assert len({id(user) for user, _ in results}) == 1
    assert sum(ok for _, ok in results) == 1
    assert len(results[0][0].submissions) == 1


def test_allowed_volume_by_passed_kyc_type():
    kenya = ref.country("KE")
    rules = kenya.kyc_onramp
    assert kyc.allowed_volume(rules, "none") == Decimal("14.99")
    assert kyc.allowed_volume(rules, "basic") == Decimal("99.99")
    assert kyc.allowed_volume(rules, "advanced") is None
    assert kyc.allowed_volume(kenya.kyc_offramp, "advanced") == 500    # the top level has a limit
    assert kyc.allowed_volume(ref.country("UG").kyc_onramp, "basic") is None
    assert kyc.allowed_volume(ref.country("GH").kyc_onramp, "basic") == 300


def test_a_user_known_by_email_who_submits_by_phone_stays_one_user(app, client, clock, events):
    """``/api/user/tokens`` by email, then ``/api/kyc/submit`` by phone with that email: the
    submission belongs to the email's user (it used to go to a second user with the same id)."""
    email = "wanjiku@example.com"
    tokens = client.post("/api/user/tokens", json={"email": email, "countryIsoCode": "KE"}).json
    with app.app_context():
        user_id = jwt.decode(tokens["accessToken"], api_kyc._token_key()).claims["sub"]
    assert submit(client, phone=KE_PHONE, email=email).json == {"success": True}

    store = app.extensions["sandbox_kyc"]
    assert store.find(email=email) is store.find(phone=KE_PHONE)
    [initiated] = events
    assert initiated["data"]["userEmail"] == email and initiated["data"]["userId"] == user_id
    by_email = client.post("/api/user/kyc/status", json={"email": email, "countryIsoCode": "KE"})
    assert by_email.json["kycStatus"] == "pending"
    clock.advance(REVIEW_SECONDS)
    assert state(client).json["kycStatus"] == "approved"
    by_email = client.post("/api/user/kyc/status", json={"email": email, "countryIsoCode": "KE"})
    assert (by_email.json["passedKycType"], by_email.json["kycStatus"]) == ("basic", "approved")
    assert [e["data"]["userEmail"] for e in events] == [email, email]
    with app.app_context():
        assert kyc.webhook_user_kyc(email)["passedKycType"] == "basic"
    # The same email from a phone of another country is not this user's to link.
    elsewhere = submit(client, phone=NG_PHONE, id_type="BVN", id_number="12345678901", email=email)
    assert elsewhere.status_code == 400 and "registered in KE, not NG" in elsewhere.json["message"]
    assert store.find(phone=NG_PHONE) is None


def test_a_new_user_never_takes_an_id_another_user_has(clock):
    store = KycStore(now=clock)
    kenya = ref.country("KE")
    first, _ = store.get_or_create(kenya, phone=KE_PHONE)
    # The id a user created from this seed would derive is already taken: the next one differs.
    store._user_ids.add(ref.stable_id("user", "someone@example.com"))
    second, created = store.get_or_create(kenya, email="someone@example.com")
    assert created and second.id not in {first.id, ref.stable_id("user", "someone@example.com")}
    # A second phone with a known email reaches the same user; the first phone still does too.
    third, created = store.get_or_create(kenya, phone="254700000001", email="someone@example.com")
    assert not created and third is second
    assert store.find(phone="254700000001") is second and store.find(phone=KE_PHONE) is first


def test_kyc_and_auth_event_dates_have_milliseconds_like_orders(app, client, clock, events):
    auth_events: list[dict] = []
    app.extensions["sandbox"].emit_auth_event = auth_events.append
    clock.advance(0.123456)
    client.post("/api/user/tokens", json={"email": "ada@example.com", "countryIsoCode": "KE"})
    submit(client)
    assert auth_events[0]["data"]["date"] == "2026-11-22T12:00:00.123Z"
    assert events[0]["data"]["date"] == "2026-11-22T12:00:00.123Z"
