"""A step's form posted by htmx (boosted, with JavaScript) is answered with the next step's page
itself, at its address: one round trip where a plain form's post, redirect and get take two."""
from __future__ import annotations

import re

from .conftest import AMOUNTS, CORRIDORS, EVM_ADDRESS


def boosted(flow, current: str) -> dict[str, str]:
    """The headers htmx sends with a boosted form's post from the page at ``current``."""
    return {"HX-Request": "true", "HX-Boosted": "true",
            "HX-Current-URL": f"http://localhost{flow.base}{current}"}


def choose_form(flow, **fields: str) -> dict[str, str]:
    return {"csrf_token": flow.csrf, **CORRIDORS["manual"], "network": "CELO", "asset": "USDT",
            "currency": "local", "amount": AMOUNTS["NG"], **fields}


def heading(html: str) -> str:
    match = re.search(r"<h1[^>]*>(.*?)</h1>", html, re.S)
    assert match, html[:2000]
    return re.sub(r"<[^>]+>", "", match.group(1)).strip()


def test_a_boosted_continue_is_answered_with_the_next_steps_whole_page(flow):
    flow.start()
    answer = flow.client.post(f"{flow.base}/choose", data=choose_form(flow),
                              headers=boosted(flow, "/choose"))
    html = answer.get_data(as_text=True)
    assert answer.status_code == 200 and "Location" not in answer.headers
    assert answer.headers["HX-Push-Url"] == f"{flow.base}/wallet"
    # The whole page (htmx swaps its body in), the wallet's, with the session's own chrome.
    assert html.lstrip().startswith("<!doctype html>") and 'name="address"' in html
    assert "<title>Your wallet</title>" in html
    assert answer.headers["Cache-Control"] == "no-store"
    assert "script-src 'self'" in answer.headers["Content-Security-Policy"]
    assert flow.session.answers["amount"] == AMOUNTS["NG"]

    review = flow.client.post(f"{flow.base}/wallet",
                              data={"csrf_token": flow.csrf, "address": EVM_ADDRESS,
                                    "email": "ada@example.com"},
                              headers=boosted(flow, "/wallet"))
    assert review.status_code == 200 and review.headers["HX-Push-Url"] == f"{flow.base}/review"
    assert 'name="review_digest"' in review.get_data(as_text=True)


def test_the_same_form_without_javascript_still_posts_redirects_and_gets(flow):
    flow.start()
    answer = flow.client.post(f"{flow.base}/choose", data=choose_form(flow))
    assert answer.status_code == 303 and answer.headers["Location"].endswith("/wallet")
    assert "HX-Push-Url" not in answer.headers


def test_a_boosted_refused_form_is_its_own_page_again_at_the_same_history_entry(flow):
    """The messages at their fields, the address unchanged (no second entry for Back), and what
    was typed still there on a reload, as after the redirect of a plain form."""
    flow.start()
    answer = flow.client.post(f"{flow.base}/choose", data=choose_form(flow, amount="abc"),
                              headers=boosted(flow, "/choose"))
    html = answer.get_data(as_text=True)
    assert answer.status_code == 200 and "Location" not in answer.headers
    assert answer.headers["HX-Replace-Url"] == f"{flow.base}/choose"
    assert "HX-Push-Url" not in answer.headers
    assert html.lstrip().startswith("<!doctype html>")
    assert 'aria-invalid="true"' in html and 'value="abc"' in html
    reloaded = flow.get("/choose").get_data(as_text=True)
    assert 'value="abc"' in reloaded            # kept until the step is saved
    assert 'aria-invalid="true"' not in reloaded   # its messages were shown once


def test_a_boosted_form_refused_before_its_view_gets_the_error_page_where_the_user_was(flow):
    """Without the anti-forgery token: the friendly error page, whole (checkout.js shows it), and
    the address left where it was, so that a reload opens the step again."""
    flow.start()
    form = choose_form(flow)
    del form["csrf_token"]
    headers = boosted(flow, "/choose")
    answer = flow.client.post(f"{flow.base}/choose", data=form, headers=headers)
    html = answer.get_data(as_text=True)
    assert answer.status_code == 400
    assert answer.headers["HX-Push-Url"] == "false"
    assert html.lstrip().startswith("<!doctype html>")
    assert f'{flow.base}/">Try again</a>' in html   # the session's page: the step it is at
    assert flow.session.answers == {}


def test_a_boosted_form_sent_elsewhere_is_sent_by_a_page_load_with_nothing_rendered(flow):
    """A step posted once the order exists goes on to the order: by HX-Redirect (a page load),
    not a redirect the background request would follow to a page it cannot show (the pay page
    loads deposit.js) and whose one-time contents it would use up."""
    flow.start()
    flow.to_pay()
    answer = flow.client.post(f"{flow.base}/wallet",
                              data={"csrf_token": flow.csrf, "address": EVM_ADDRESS},
                              headers=boosted(flow, "/wallet"))
    assert answer.status_code == 200 and answer.headers["HX-Redirect"].endswith("/pay")
    assert answer.get_data(as_text=True) == ""


def test_a_next_step_whose_page_loads_a_script_of_its_own_comes_in_place_naming_it(flow):
    """Kenya's mobile money asks a phone number next, on a page with filter.js: the answer is
    that page, whose <head> names the file (checkout.js loads what its page lacks)."""
    flow.start()
    flow.client.post(f"{flow.base}/choose", data={
        "csrf_token": flow.csrf, **CORRIDORS["stk_push"], "network": "CELO", "asset": "USDT",
        "currency": "local", "amount": AMOUNTS["KE"]})
    answer = flow.client.post(f"{flow.base}/wallet",
                              data={"csrf_token": flow.csrf, "address": EVM_ADDRESS,
                                    "email": "ada@example.com"},
                              headers=boosted(flow, "/wallet"))
    html = answer.get_data(as_text=True)
    assert answer.status_code == 200 and answer.headers["HX-Push-Url"].endswith("/details")
    assert 'name="phoneNumber"' in html
    assert re.search(r'<script src="/checkout/assets/[0-9a-f]+/filter\.js" defer>', html)


def test_a_next_page_whose_upstream_call_fails_is_left_to_its_own_page_load(flow, monkeypatch):
    """The wallet is saved; the review's price cannot be had just now. The failure belongs to
    the review's own address (its "Try again" asks for the review alone), so the answer sends
    the browser there instead of showing it at the wallet's."""
    from checkout.errors import UpstreamTimeout
    from checkout.journey import quotes

    flow.start()
    flow.follow(flow.choose())

    def unanswered(*args, **kwargs):
        raise UpstreamTimeout("no answer")

    monkeypatch.setattr(quotes, "refresh", unanswered)
    answer = flow.client.post(f"{flow.base}/wallet",
                              data={"csrf_token": flow.csrf, "address": EVM_ADDRESS,
                                    "email": "ada@example.com"},
                              headers=boosted(flow, "/wallet"))
    assert answer.status_code == 200 and answer.headers["HX-Redirect"].endswith("/review")
    assert flow.session.answers["address"] == EVM_ADDRESS


def test_an_answer_that_knows_its_address_or_leaves_keeps_it(app):
    """A page that moved on by itself (HX-Push-Url of its own), a page load (HX-Redirect) and a
    redirect are not given the address of the step that was asked for."""
    from flask import make_response

    from checkout.htmx import shown_at

    with app.test_request_context(headers={"HX-Request": "true", "HX-Boosted": "true"}):
        moved = make_response("page")
        moved.headers["HX-Push-Url"] = "/checkout/s/x/wallet"
        assert shown_at(moved, "/checkout/s/x/kyc").headers["HX-Push-Url"].endswith("/wallet")
        load = make_response("")
        load.headers["HX-Redirect"] = "/checkout/s/x/pay"
        assert "HX-Push-Url" not in shown_at(load, "/checkout/s/x/kyc").headers
        redirected = make_response("", 303)
        assert "HX-Push-Url" not in shown_at(redirected, "/checkout/s/x/kyc").headers
