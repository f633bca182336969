"""Step 1: country, channel, carrier, network, asset and amount, with live limits and quotes."""
from __future__ import annotations

import re

import pytest

from checkout.errors import UpstreamTimeout
from checkout.state import get_state

from .conftest import CORRIDORS


def test_unsigned_start_shows_the_choose_page(flow):
    page = flow.start()
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "Nigeria" in html and 'name="amount"' in html
    # No amount yet: the price is asked as one is typed, not on load (an empty answer).
    assert 'hx-trigger="input changed delay:400ms"' in html
    assert page.headers["Vary"] and "HX-Request" in page.headers["Vary"]


def test_choosing_a_country_rerenders_the_channels_for_htmx(flow):
    flow.start()
    page = flow.get("/choose", query_string={"countryIsoCode": "KE"},
                    headers={"HX-Request": "true"})
    html = page.get_data(as_text=True)
    assert html.startswith("\n<div id=\"step\">") or html.lstrip().startswith('<div id="step">')
    assert "<html" not in html
    assert 'value="mobile_money"' in html and "Mobile money" in html
    assert flow.session.answers == {} and flow.session.quote is None   # a draft is never saved


def test_every_way_to_pay_in_every_country_says_under_it_how_it_works(flow):
    """Ghana's mobile money said only its name again ("Mobile money"), so nothing was shown."""
    from checkout.sandbox.reference import COUNTRIES

    flow.start()
    for country in COUNTRIES:
        html = flow.get("/choose", query_string={"countryIsoCode": country.iso},
                        headers={"HX-Request": "true"}).get_data(as_text=True)
        for channel in country.onramp:
            option = f"field-paymentChannel-{channel.channel}"
            assert f'id="{option}"' in html, (country.iso, channel.channel)
            assert re.search(rf'<p class="field-help" id="{option}-help">[^<]{{12,}}</p>', html), \
                (country.iso, channel.channel)


def test_a_select_changed_while_a_refused_form_waits_for_its_page_leaves_that_form_alone(flow):
    """htmx asks the amount step again for each select changed: that draft is not the refused
    form's page, which stays kept for the page the browser was sent to."""
    flow.start()
    refused = flow.client.post(f"{flow.base}/choose", data={
        "csrf_token": flow.csrf, **CORRIDORS["manual"], "network": "CELO", "asset": "USDT",
        "currency": "local", "amount": "abc"})
    assert refused.status_code == 303
    draft = flow.get("/choose", query_string={"countryIsoCode": "KE"},
                     headers={"HX-Request": "true"}).get_data(as_text=True)
    assert 'value="abc"' not in draft
    page = flow.get("/choose").get_data(as_text=True)
    assert 'id="field-amount-error"' in page and 'value="abc"' in page


def test_a_countrys_only_way_to_pay_is_chosen_already(flow):
    flow.start()
    with flow.app.test_request_context():
        senegal = get_state().flows["onramp"].catalog().country("SN")
        assert [c.code for c in senegal.channels] == ["mobile_money"]
    page = flow.get("/choose", query_string={"countryIsoCode": "SN"},
                    headers={"HX-Request": "true"}).get_data(as_text=True)
    assert re.search(r'<input type="radio" name="paymentChannel" value="mobile_money"[^>]*'
                     r'\bchecked\b', page)
    # Its carriers are three: the user picks one.
    assert 'name="carrierCode"' in page and 'value="ORANGE" selected' not in page
    nigeria = flow.get("/choose", query_string={"countryIsoCode": "NG"},
                       headers={"HX-Request": "true"}).get_data(as_text=True)
    assert not re.search(r'name="paymentChannel"[^>]*\bchecked\b', nigeria)   # a choice
    # From Nigeria with its bank transfer chosen, to Senegal: htmx sends the whole form, the
    # old channel with it.
    switched = flow.get("/choose", query_string={"countryIsoCode": "SN", "paymentChannel": "bank",
                                                 "carrierCode": ""},
                        headers={"HX-Request": "true"}).get_data(as_text=True)
    assert re.search(r'<input type="radio" name="paymentChannel" value="mobile_money"[^>]*'
                     r'\bchecked\b', switched)


def test_limits_are_shown_next_to_the_amount(flow):
    flow.start()
    page = flow.get("/choose", query_string={"countryIsoCode": "NG", "paymentChannel": "bank",
                                             "network": "CELO", "asset": "USDT",
                                             "currency": "local"},
                    headers={"HX-Request": "true"})
    html = page.get_data(as_text=True)
    assert 'id="field-amount-help"' in html and "From " in html and "NGN" in html


def test_live_quote_shows_the_whole_breakdown(flow):
    flow.start()
    page = flow.get("/quote", query_string={**CORRIDORS["manual"], "network": "CELO",
                                            "asset": "USDT", "currency": "local",
                                            "amount": "5000"},
                    headers={"HX-Request": "true"})
    html = page.get_data(as_text=True)
    for label in ("Exchange rate", "Service fee", "Payment partner fee", "Network fee (gas)",
                  "You pay", "You get"):
        assert label in html
    assert "₦5,000.00" in html and "USDT" in html


def test_live_quote_for_an_amount_over_the_limit_shows_the_limit_and_asks_no_quote(flow,
                                                                                     monkeypatch):
    flow.start()
    corridor = {**CORRIDORS["manual"], "network": "CELO", "asset": "USDT", "currency": "local"}
    # The last select chosen: the form comes back with the corridor's limits (and then asks
    # for the price). Before its limits are known, see test_first_price.
    flow.get("/choose", query_string=corridor, headers={"HX-Request": "true"})
    with flow.app.app_context():
        client = get_state().upstream
    calls = []
    monkeypatch.setattr(client, "onramp_best_offer", lambda **kw: calls.append(kw))
    page = flow.get("/quote", query_string={**corridor, "amount": "99999999"},
                    headers={"HX-Request": "true"})
    html = page.get_data(as_text=True)
    assert re.search(r"The maximum is ₦[0-9,]+\.00\.", html)   # money, as Nigerians write it
    assert calls == []
    # The amount field names the live message among what describes it: read out with it.
    assert 'id="quote-message"' in html
    choose = flow.get("/choose").get_data(as_text=True)
    assert re.search(r'<input id="field-amount"[^>]*aria-describedby="[^"]*\bquote-message\b',
                     choose)


def test_without_javascript_update_price_shows_the_choices_then_the_price_and_saves_nothing(flow):
    start = flow.start().get_data(as_text=True)
    # Only browsers without JavaScript get the button (htmx does the same as the user types).
    assert re.search(r'<noscript>.*name="update".*Update price.*</noscript>', start, re.S)
    assert start.index("Update price") < start.index(">Continue<")
    country = flow.post("/choose", {"update": "1", "countryIsoCode": "NG", "currency": "local",
                                    "amount": ""})
    html = country.get_data(as_text=True)
    # The whole page again, by a redirect to it (flow.post follows): no post left in the history.
    assert country.status_code == 200 and "<html" in html
    assert flow.responses[-2].status_code == 303
    assert flow.responses[-2].headers["Location"].endswith("/choose")   # no price yet: the top
    assert 'value="bank"' in html and "field-error" not in html      # the country's channels
    priced = flow.post("/choose", {"update": "1", **CORRIDORS["manual"], "network": "CELO",
                                   "asset": "USDT", "currency": "local", "amount": "5000"})
    html = priced.get_data(as_text=True)
    # The page opens at its price: without script the frame does not follow the form.
    assert flow.responses[-2].headers["Location"].endswith("/choose#quote")
    quote = html[html.index('<div id="quote"'):html.index("<noscript>")]
    assert "Exchange rate" in quote and "₦5,000.00" in quote and "You get" in quote
    assert 'value="5000"' in html and "hx-get" not in quote            # no dead "Try again"
    too_much = flow.post("/choose", {"update": "1", **CORRIDORS["manual"], "network": "CELO",
                                     "asset": "USDT", "currency": "local",
                                     "amount": "99999999"}).get_data(as_text=True)
    assert re.search(r'id="quote-message">The maximum is', too_much)
    assert flow.session.answers == {} and flow.session.quote is None   # a draft, never saved
    assert flow.choose().status_code == 303                            # "Continue" still saves


def test_a_valid_choice_is_saved_and_leads_to_the_wallet(flow):
    flow.start()
    response = flow.choose()
    assert response.status_code == 303 and response.headers["Location"].endswith("/wallet")
    session = flow.session
    assert session.answers["countryIsoCode"] == "NG" and session.answers["amount"] == "5000"
    assert session.quote["id"] and session.quote["params"]["network"] == "CELO"


@pytest.mark.parametrize(("change", "field", "message"), [
    ({"countryIsoCode": "XX"}, "countryIsoCode", "Choose your country"),
    ({"paymentChannel": "paybill"}, "paymentChannel", "Choose how you pay"),
    ({"paymentChannel": "airtime"}, "carrierCode", "Choose your mobile network"),
    ({"paymentChannel": "airtime", "carrierCode": "NOPE"}, "carrierCode", "mobile network"),
    ({"network": "DOGE"}, "network", "Choose a network"),
    ({"network": "TON", "asset": "USDC"}, "asset", "not available on this network"),
    ({"amount": ""}, "amount", "Enter an amount"),
    ({"amount": "abc"}, "amount", "in digits"),
    ({"amount": "-5"}, "amount", "cannot be negative"),
    ({"amount": "5000.555"}, "amount", "at most 2 decimals"),
    ({"amount": "5000,5"}, "amount", "Did you mean 5,000.5?"),
    ({"amount": "1"}, "amount", "The minimum is"),
    ({"amount": "999999999"}, "amount", "The maximum is"),
    ({"currency": "crypto", "amount": "100000"}, "amount", "The maximum is"),
    ({"currency": "usd"}, "currency", "local money or crypto"),
])
def test_bad_choices_are_refused_next_to_the_field(flow, change, field, message):
    flow.start()
    page = flow.choose(**change)
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert f'id="field-{field}-error"' in html and message in html
    assert flow.session.quote is None


def test_a_corridor_whose_limits_are_all_zero_is_unavailable(flow):
    flow.start()
    page = flow.choose(countryIsoCode="ZM", paymentChannel="bank", amount="500")
    html = page.get_data(as_text=True)
    assert "not available right now" in html
    assert flow.session.quote is None


def test_locked_claims_are_shown_read_only_and_a_forged_value_is_refused(flow):
    page = flow.start(network="CELO", asset="CUSD", countryIsoCode="NG",
                      lock=["network", "asset", "countryIsoCode"])
    html = page.get_data(as_text=True)
    assert 'name="network" disabled' in html and 'name="countryIsoCode" disabled' in html
    forged = flow.choose(network="POLYGON", asset="USDC")
    assert "cannot be changed" in forged.get_data(as_text=True)
    assert flow.session.quote is None
    ok = flow.choose(network=None, asset=None, countryIsoCode=None)   # disabled: not submitted
    assert ok.status_code == 303
    assert flow.session.quote["params"]["asset"] == "CUSD"


def test_upstream_timeout_while_quoting_keeps_the_form_with_a_message(flow, monkeypatch):
    flow.start()
    with flow.app.app_context():
        client = get_state().upstream

    def timeout(**kwargs):
        raise UpstreamTimeout("read timeout", method="GET", path="/api/onramp/best-offer")

    monkeypatch.setattr(client, "onramp_best_offer", timeout)
    page = flow.choose()
    html = page.get_data(as_text=True)
    assert page.status_code == 200
    assert "not answering" in html and 'value="5000"' in html
    live = flow.get("/quote", query_string={**CORRIDORS["manual"], "network": "CELO",
                                            "asset": "USDT", "currency": "local",
                                            "amount": "5000"}, headers={"HX-Request": "true"})
    assert "Try again" in live.get_data(as_text=True)


def test_an_unreachable_upstream_gives_a_friendly_page_with_retry(config, tmp_path):
    from ..conftest import make_app

    config = dict(config, CHECKOUT_API_BASE_URL="http://127.0.0.1:9",
                  CHECKOUT_CLIENT_ID="merchant-id", CHECKOUT_WEBHOOK_SECRET="w" * 32,
                  CHECKOUT_LAUNCH_SECRET="l" * 40, CHECKOUT_HTTP_TIMEOUT=(0.5, 0.5))
    app = make_app(config)
    client = app.test_client()
    start = client.get("/checkout/onramp")
    page = client.get(start.headers["Location"])
    html = page.get_data(as_text=True)
    assert page.status_code == 502
    assert "not answering" in html and "Try again" in html and "Traceback" not in html


def test_reference_data_is_cached_between_pages(flow, monkeypatch):
    flow.start()
    with flow.app.app_context():
        client = get_state().upstream
    calls = []
    for name in ("onramp_payment_channels", "onramp_assets", "onramp_limits"):
        original = getattr(client, name)
        monkeypatch.setattr(client, name, lambda *a, _o=original, _n=name, **k: (
            calls.append(_n), _o(*a, **k))[1])
    query = {**CORRIDORS["manual"], "network": "CELO", "asset": "USDT", "currency": "local"}
    flow.get("/choose", query_string=query, headers={"HX-Request": "true"})
    flow.get("/choose", query_string=query, headers={"HX-Request": "true"})
    assert calls.count("onramp_payment_channels") == 0     # cached by the first page
    assert calls.count("onramp_limits") == 1


def test_an_amount_typed_the_portuguese_way_is_read_so_and_shown_back_so(flow):
    """pt + Nigeria (no pt_NG): the Portuguese of Portugal, Mozambique and Angola, "5 000,5" is
    five thousand and a half; what was saved comes back in the field as the user types it, and
    sending the page again keeps it."""
    flow.start(locale="pt")
    flow.choose(amount="5 000,5")
    assert flow.session.answers["amount"] == "5000.5"
    page = flow.get("/choose").get_data(as_text=True)
    assert re.search(r'<input id="field-amount"[^>]*value="5000,5"', page)
    flow.choose(amount="5000,5")
    assert flow.session.answers["amount"] == "5000.5"


@pytest.mark.parametrize("typed", ["5000.5", "5.000,5"])     # English; Brazil's grouping
def test_an_amount_written_another_way_is_a_question_not_a_guess(flow, typed):
    flow.start(locale="pt")
    html = flow.choose(amount=typed).get_data(as_text=True)
    assert "field-amount-error" in html and "5\u00a0000,5?" in html
    assert "amount" not in flow.session.answers


def test_an_amount_error_is_read_once(flow):
    """At the field (its description), not again by the live price on load; and the live price's
    own message sits in one live region, not in a live region inside another."""
    flow.start()
    html = flow.choose(amount="1").get_data(as_text=True)
    field = re.search(r'<input id="field-amount"[^>]*>', html).group(0)
    assert 'aria-invalid="true"' in field and "field-amount-error" in field
    assert 'hx-trigger="input changed delay:400ms"' in field
    quote = flow.get("/quote", query_string={**CORRIDORS["manual"], "network": "CELO",
                                             "asset": "USDT", "currency": "local", "amount": "1"},
                     headers={"HX-Request": "true"}).get_data(as_text=True)
    assert 'id="quote-message"' in quote and "role=" not in quote


def test_the_answers_to_did_you_mean_are_one_tap_away(flow):
    flow.start(locale="pt")
    html = flow.choose(amount="5000.5").get_data(as_text=True)
    assert re.search(r'<button [^>]*name="amount_suggested" value="5000,5">Usar 5\u00a0000,5</button>',
                     html)
    # Enter in the field sends what is typed (a plain hidden first button), not an answer.
    first = re.search(r'<form method="post"[^>]*>.*?(<button[^>]*>)', html, re.S).group(1)
    assert "hidden" in first and "amount_suggested" not in first
    flow.choose(amount="5000.5", amount_suggested="5000,5")
    assert flow.session.answers["amount"] == "5000.5"


def test_an_amount_already_given_has_its_price_asked_as_the_page_loads(app, client):
    """A shop that gave the amount (or the step shown again with one): the price comes by
    itself, after the page, so the page never waits for the upstream."""
    from .conftest import Flow

    flow = Flow(app, client)
    html = flow.start(countryIsoCode="NG", paymentChannel="bank", amount="5000",
                      currency="local", lock=[]).get_data(as_text=True)
    assert 'name="amount"' in html
    assert 'hx-trigger="input changed delay:400ms, load"' in html
