"""What webhooks tell of a person's KYC level is remembered for their next order
(checkout.kyc.memory): ``data.userKyc`` of order webhooks and the opt-in ``kyc`` events."""
from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import select, update

from checkout.kyc import memory
from checkout.store.tables import kyc_levels_table
from checkout.webhooks.store import events_table

from .helpers import order_payload, signed_webhook

SECRET_KEY = "CHECKOUT_LAUNCH_SECRET"


def recalled(app, email: str) -> str:
    keys = memory.person_keys(app.config[SECRET_KEY], email=email)
    return memory.recall(app.extensions["checkout"].engine, keys, days=365)


def order_with_kyc(order_id: str, email: str = "buyer@example.com", **user_kyc):
    payload = order_payload(order_id, userEmail=email)
    payload["data"]["userKyc"] = user_kyc
    return payload


def kyc_event(status: str, kyc_type: str, email: str = "buyer@example.com"):
    return {"event": "kyc", "data": {
        "kycId": "kyc_1", "kycStatus": status, "kycType": kyc_type, "userId": "usr_1",
        "userEmail": email, "userCountryIsoCode": "KE", "kycDocument": "ALIEN_CARD",
        "date": "2026-11-22T01:00:00.000Z"}}


def deliver(receiver, payload) -> None:
    assert receiver.post(signed_webhook(payload)).status_code == 200
    receiver.process()


def test_an_order_webhook_tells_the_level_its_user_passed(app, receiver) -> None:
    assert recalled(app, "buyer@example.com") == "none"
    deliver(receiver, order_with_kyc("o1", passedKycType="advanced", passedKycHash="h1",
                                     latestKycType="advanced", latestKycStatus="approved"))
    # The email is matched whatever its case; another person learns nothing.
    assert recalled(app, "Buyer@Example.com") == "advanced"
    assert recalled(app, "someone@example.com") == "none"


def test_the_latest_submission_approved_counts_as_passed(app, receiver) -> None:
    deliver(receiver, order_with_kyc("o1", passedKycType="basic", latestKycType="advanced",
                                     latestKycStatus="approved"))
    assert recalled(app, "buyer@example.com") == "advanced"


@pytest.mark.parametrize("user_kyc", [
    {},                                                       # every field is optional
    {"latestKycType": "advanced", "latestKycStatus": "initiated"},   # under review: not passed
    {"latestKycType": "advanced", "latestKycStatus": "rejected"},
    {"passedKycType": "none"},
    {"passedKycType": "platinum"},                            # a word this version does not know
    {"passedKycType": ["advanced"]},
])
def test_what_tells_no_passed_level_is_not_remembered(app, receiver, user_kyc) -> None:
    deliver(receiver, order_with_kyc("o1", **user_kyc))
    assert recalled(app, "buyer@example.com") == "none"


def test_a_malformed_user_kyc_block_does_not_stop_the_order(app, receiver) -> None:
    payload = order_payload("o1", userEmail="buyer@example.com")
    payload["data"]["userKyc"] = "advanced"
    deliver(receiver, payload)
    with app.extensions["checkout"].engine.connect() as conn:
        assert conn.execute(select(events_table.c.state)).scalar_one() == "processed"
    assert recalled(app, "buyer@example.com") == "none"


def test_a_later_lower_level_does_not_take_a_level_away(app, receiver) -> None:
    """Deliveries arrive out of order: an old order's webhook saying basic, after a newer one
    said advanced, leaves advanced."""
    deliver(receiver, order_with_kyc("o2", passedKycType="advanced"))
    deliver(receiver, order_with_kyc("o1", passedKycType="basic"))
    assert recalled(app, "buyer@example.com") == "advanced"


@pytest.mark.parametrize(("status", "level"), [("approved", "advanced"), ("initiated", "none"),
                                               ("rejected", "none")])
def test_a_kyc_event_approved_tells_its_level(app, receiver, status, level) -> None:
    deliver(receiver, kyc_event(status, "advanced"))
    assert recalled(app, "buyer@example.com") == level


def test_no_contact_is_stored_in_clear(app, receiver) -> None:
    deliver(receiver, order_with_kyc("o1", email="wanjiru.kamau@example.com",
                                     passedKycType="basic"))
    with app.extensions["checkout"].engine.connect() as conn:
        rows = conn.execute(select(kyc_levels_table)).all()
    assert len(rows) == 1 and "wanjiru" not in repr(rows)
    # Keyed: without the launch secret, the digest of a guessed email is not the stored one.
    assert memory.person_keys("another-key" * 4, email="wanjiru.kamau@example.com") \
        != [rows[0].person]


def test_a_level_not_confirmed_for_the_days_kept_is_forgotten(app, receiver) -> None:
    deliver(receiver, order_with_kyc("o1", passedKycType="advanced"))
    engine = app.extensions["checkout"].engine
    with engine.begin() as conn:
        conn.execute(update(kyc_levels_table).values(
            said_at=datetime.now(UTC) - timedelta(days=400)))
    assert recalled(app, "buyer@example.com") == "none"         # too old to count
    assert memory.forget_older_than(engine, 365) == 1
    with engine.connect() as conn:
        assert conn.execute(select(kyc_levels_table)).all() == []


def test_the_purge_command_forgets_old_levels(app, receiver) -> None:
    deliver(receiver, order_with_kyc("o1", passedKycType="advanced"))
    with app.extensions["checkout"].engine.begin() as conn:
        conn.execute(update(kyc_levels_table).values(
            said_at=datetime.now(UTC) - timedelta(days=400)))
    result = app.test_cli_runner().invoke(args=["checkout", "sessions", "purge"])
    assert result.exit_code == 0, result.output
    assert "forgot 1 KYC level the upstream has not confirmed in 365 days" in result.output


@pytest.mark.postgres
def test_levels_are_remembered_on_postgresql(postgres_engine) -> None:
    keys = memory.person_keys("k" * 32, email="buyer@example.com", phone="254712345678")
    memory.remember_now(postgres_engine, keys, "basic")
    memory.remember_now(postgres_engine, keys[:1], "advanced")
    memory.remember_now(postgres_engine, keys, "basic")
    assert memory.recall(postgres_engine, keys[:1], days=1) == "advanced"
    assert memory.recall(postgres_engine, keys[1:], days=1) == "basic"
    assert memory.recall(postgres_engine, keys, days=1) == "advanced"


def test_an_order_of_this_checkout_is_remembered_under_its_sessions_phone(app, receiver) -> None:
    """A level is looked up by the phone the upstream's KYC state is read by: the webhook of an
    order this checkout created is remembered under the phone its session knew the buyer by."""
    sessions = app.extensions["checkout"].sessions
    session = sessions.create("onramp", claims={"phoneNumber": "+254712345678",
                                                 "countryIsoCode": "KE"})
    assert sessions.attach_order(session.id, "o-kenya") == "o-kenya"
    deliver(receiver, order_with_kyc("o-kenya", passedKycType="advanced"))
    keys = memory.person_keys(app.config[SECRET_KEY], phone="254712345678")
    assert memory.recall(app.extensions["checkout"].engine, keys, days=1) == "advanced"
