"""The language menu of every session page comes back to the page the user was on, and its way
back (the hidden ``next``, beside the anti-forgery token in a compressed page) is the page's path:
never its query, which holds whatever a link put there (BREACH)."""
from __future__ import annotations

import html as html_text
import re

from .conftest import CORRIDORS, Flow
from .test_kyc import to_kyc

# What a link may carry in a query: a token, a shop's reference.
SECRET_QUERY = "token=eyJhbGciOiJub25lIn0.c2VjcmV0LWNhcnQtN2YzYQ.&ref=cart-7f3a-secret"


def way_back(page) -> str:
    """The ``next`` the page's language menu sends."""
    found = re.search(r'<form class="language-menu".*?name="next" value="([^"]*)"',
                      page.get_data(as_text=True), re.S)
    assert found, page.get_data(as_text=True)[:2000]
    return html_text.unescape(found.group(1))


def change_language(flow: Flow, page, language: str):
    """The language menu of ``page`` sent, and the page it comes back to."""
    moved = flow.client.post(f"{flow.base}/language", data={
        "language": language, "next": way_back(page), "csrf_token": flow.csrf})
    assert moved.status_code == 303
    return flow.follow(moved)


def test_the_way_back_is_the_page_s_path_and_never_its_query(flow: Flow) -> None:
    flow.start()
    seen = [flow.get(f"/choose?{SECRET_QUERY}")]
    review = flow.to_review()
    seen.append(flow.get(f"/review?{SECRET_QUERY}"))
    flow.follow(flow.create(review))
    seen += [flow.get(f"/pay?{SECRET_QUERY}"), flow.get(f"/status?{SECRET_QUERY}")]
    for page in seen:
        assert page.status_code == 200, page.request.path
        html = page.get_data(as_text=True)
        assert way_back(page) == page.request.path
        assert "secret" not in html and "c2VjcmV0" not in html, page.request.path
    # And it still brings the user back there, in the language chosen.
    back = change_language(flow, seen[-1], "fr")
    assert back.request.path == f"{flow.base}/status"
    assert '<html lang="fr">' in back.get_data(as_text=True)


def test_a_price_shown_without_javascript_is_still_there_in_the_language_chosen(flow: Flow):
    flow.start()
    priced = flow.post("/choose", {"update": "1", **CORRIDORS["manual"], "network": "CELO",
                                   "asset": "USDT", "currency": "local", "amount": "5000"})
    assert way_back(priced) == f"{flow.base}/choose"
    back = change_language(flow, priced, "fr")
    html = back.get_data(as_text=True)
    assert '<html lang="fr">' in html and 'value="5000"' in html      # the draft, kept
    quote = html[html.index('<div id="quote"'):html.index("<noscript>")]
    assert "Vous obtenez" in quote                                      # and its price


def test_the_identity_document_chosen_is_kept_through_a_language_change(flow: Flow) -> None:
    to_kyc(flow, "5000")
    form = flow.get("/kyc?document=NATIONAL_ID")
    # The document's checked value, not the query as sent.
    assert way_back(form) == f"{flow.base}/kyc?document=NATIONAL_ID"
    assert way_back(flow.get(f"/kyc?document=NATIONAL_ID&{SECRET_QUERY}")) == \
        f"{flow.base}/kyc?document=NATIONAL_ID"
    assert way_back(flow.get(f"/kyc?document=secret{SECRET_QUERY}")) == f"{flow.base}/kyc"
    back = change_language(flow, form, "sw")
    html = back.get_data(as_text=True)
    assert '<html lang="sw">' in html and 'id="field-id_number"' in html
