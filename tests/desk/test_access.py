"""Who gets in: without CHECKOUT_DESK_ACCESS there is no desk; without access a 403 page or the
host's login page (with next); a viewer reads and cannot act; an operator acts. Every action's
form carries a token bound to the staff member; the pages are never framed nor kept."""
from __future__ import annotations

import re
import time

import pytest

from checkout.desk import forgery
from checkout.errors import ConfigurationError

from ..conftest import make_app
from .conftest import PREFIX, Desk, webhook_order
from .staff import OPERATOR, as_staff

ORDER = "ord_desk_1"


def test_without_the_setting_there_is_no_desk(config):
    config.pop("CHECKOUT_DESK_ACCESS")
    client = make_app(dict(config)).test_client()
    for path in ("/", "/orders", f"/orders/{ORDER}"):
        page = client.get(PREFIX + path, headers=OPERATOR)
        assert page.status_code == 404
        # Nothing on the page says that a desk could be there.
        words = re.sub(r"<[^>]+>", " ", page.get_data(as_text=True))
        assert "Page not found" in words and "desk" not in words.lower()
        assert page.headers["Cache-Control"] == "no-store"


def test_without_access_a_403_page_never_framed_nor_kept(client):
    for path in ("/", "/orders", "/orders.csv", f"/orders/{ORDER}"):
        page = client.get(PREFIX + path)
        assert page.status_code == 403, path
        body = page.get_data(as_text=True)
        assert "You do not have access" in body
        assert "frame-ancestors 'none'" in page.headers["Content-Security-Policy"]
        assert "script-src 'self'" in page.headers["Content-Security-Policy"]
        assert page.headers["Cache-Control"] == "no-store"
    assert client.post(PREFIX + f"/orders/{ORDER}/check").status_code == 403


def test_without_access_the_hosts_login_page_with_next(config):
    config["CHECKOUT_DESK_LOGIN_URL"] = "/staff/login?from=desk"
    client = make_app(dict(config)).test_client()
    page = client.get(PREFIX + "/orders?q=abc")
    assert page.status_code == 303
    assert page.headers["Location"] == \
        "/staff/login?from=desk&next=%2Fcheckout%2Fdesk%2Forders%3Fq%3Dabc"
    # A form posted without access: back to the desk after the login, never the form again.
    posted = client.post(PREFIX + f"/orders/{ORDER}/check")
    assert posted.headers["Location"] == "/staff/login?from=desk&next=%2Fcheckout%2Fdesk%2F"


def test_a_role_the_desk_does_not_know_is_no_access(client):
    for staff in (as_staff("admin"), as_staff("operator", "  ")):
        assert client.get(PREFIX + "/", headers=staff).status_code == 403


def test_a_callable_setting_and_settings_that_cannot_work(config):
    config["CHECKOUT_DESK_ACCESS"] = lambda: {"name": "Nadia", "role": "viewer"}
    page = make_app(dict(config)).test_client().get(PREFIX + "/")
    assert page.status_code == 200 and "Nadia" in page.get_data(as_text=True)
    for key, value in (("CHECKOUT_DESK_ACCESS", 42), ("CHECKOUT_DESK_ACCESS", "no colon"),
                       ("CHECKOUT_DESK_LOGIN_URL", "//evil.example/login"),
                       ("CHECKOUT_DESK_TIMEZONE", "Mars/Olympus")):
        with pytest.raises(ConfigurationError, match=key):
            make_app({**config, key: value})


def test_a_viewer_reads_and_cannot_act(app, viewer, operator):
    webhook_order(app, ORDER)
    page = viewer.get(f"/orders/{ORDER}")
    assert page.status_code == 200
    body = page.get_data(as_text=True)
    assert "Check with the partner now" not in body and "Send the signal again" not in body
    assert 'name="csrf_token"' not in body
    # Even with a token of their own (the resend page's, had they seen it) they are refused.
    token = forgery.token_for(app.config["CHECKOUT_LAUNCH_SECRET"], "Amina Njoroge", time.time())
    for action in ("check", "resend"):
        assert viewer.post(f"/orders/{ORDER}/{action}", {"csrf_token": token}).status_code == 403
    assert viewer.get(f"/orders/{ORDER}/resend").status_code == 403
    assert "Check with the partner now" in operator.get(f"/orders/{ORDER}").get_data(as_text=True)


def test_every_action_needs_the_token_of_its_own_staff_member(app, client, operator):
    webhook_order(app, ORDER)
    secret = app.config["CHECKOUT_LAUNCH_SECRET"]
    now = time.time()
    refused = [
        {},                                                             # none
        {"csrf_token": "1.abc"},                                        # made up
        {"csrf_token": forgery.token_for(secret, "Amina Njoroge", now)},  # another's
        {"csrf_token": forgery.token_for(secret, "Kofi Mensah", now - forgery.MAX_AGE - 1)},
    ]
    for form in refused:
        page = operator.post(f"/orders/{ORDER}/check", form)
        assert page.status_code == 400, form
        assert "This form was too old or not from this desk" in page.get_data(as_text=True)
    accepted = operator.post(f"/orders/{ORDER}/check", token_from=f"/orders/{ORDER}")
    assert accepted.status_code == 303


def test_actions_are_rate_limited(config):
    config["CHECKOUT_RATELIMITS"] = {"desk_action_per_ip": "2/minute"}
    app = make_app(dict(config))
    webhook_order(app, ORDER)
    desk = Desk(app.test_client(), OPERATOR)
    answers = [desk.post(f"/orders/{ORDER}/check", token_from=f"/orders/{ORDER}").status_code
               for _ in range(3)]
    assert answers == [303, 303, 429]
    page = desk.post(f"/orders/{ORDER}/check", token_from=f"/orders/{ORDER}")
    assert page.status_code == 429 and int(page.headers["Retry-After"]) > 0
    assert "Too many requests from this connection. Try again in " in page.get_data(as_text=True)


def test_viewer_header_shows_the_staff_member_and_role(viewer):
    body = viewer.get("/").get_data(as_text=True)
    assert "Amina Njoroge" in body and "(viewer)" in body


def test_the_desk_speaks_the_staff_members_language(viewer):
    """The browser's language (Accept-Language), or ?locale= for another."""
    answers = {
        "fr": viewer.get("/", headers={"Accept-Language": "fr-FR,fr;q=0.9"}),
        "sw": viewer.get("/", query_string={"locale": "sw"}),
        "pt": viewer.get("/orders", query_string={"locale": "pt"}),
    }
    assert "Vue d’ensemble" in answers["fr"].get_data(as_text=True)
    assert "Muhtasari" in answers["sw"].get_data(as_text=True)
    assert "Encontrar um pedido" in answers["pt"].get_data(as_text=True)
    for language, answer in answers.items():
        assert f'<html lang="{language}' in answer.get_data(as_text=True)
