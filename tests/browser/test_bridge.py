"""The page-to-parent bridge and the in-page helpers of checkout.js, in a real Chromium.

The checkout runs in the harness's cross-site iframe. A probe page of the session (served from this
module, in the checkout's own ``base.html``) carries what the off-ramp's deposit step will carry: a
``deposit-requested`` parent event with ``extra`` data, a ``form[data-deposit-form]``, a long
``select[data-filterable]`` and ``[data-countdown-to]`` timers. The merchant's side is the harness's
shop page with ``static/demo/shop.js`` (``window.checkoutHandle`` is embed.js's mount handle).

Nothing here sleeps a fixed time: every wait is for a condition, and "nothing happened" is shown by
a marker message sent after the ignored ones (the frame handles messages in order).
"""
from __future__ import annotations

import datetime as dt
import re
import threading
from typing import Any

import pytest
from flask import Flask, render_template_string, request

from checkout.htmx import is_htmx
from checkout.views.context import session_route

from .conftest import screenshot

pytestmark = pytest.mark.browser

BANKS = ["Access Bank", "Citibank", "Ecobank", "Fidelity Bank", "First Bank", "GTBank",
         "Keystone Bank", "Kuda", "Moniepoint", "Opay", "Palmpay", "Polaris Bank",
         "Providus Bank", "Stanbic IBTC", "Sterling Bank", "UBA", "Union Bank", "Unity Bank",
         "Wema Bank", "Zenith Bank"]
DEPOSIT = {"address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "amount": "12.5",
           "asset": "USDC", "network": "POLYGON", "chainId": 137,
           "tokenContract": "0x3c499c542cEF5E3811e1192ce70d8cC03d5c3359"}
# What the server may not forge through ``extra``: the message's identity.
FORGED = {"source": "forged", "version": 2, "type": "completed", "sessionId": "forged",
          "order": {"id": "forged"}}
ONE_MINUTE_LEFT = "One minute left to pay"

# Hashes the probe form received, per session: written by the server's threads, read by tests.
RECEIVED: dict[str, list[str]] = {}
RECEIVED_LOCK = threading.Lock()

SELECT = """
{%- from "checkout/macros.html" import select %}
{{ select("bank", "Bank", banks, placeholder="Choose your bank", filterable=True) }}
"""

PROBE_PAGE = """
{%- extends "checkout/base.html" %}
{%- from "checkout/macros.html" import parent_event, csrf_input with context %}
{%- block scripts %}
<script src="{{ url_for('checkout.static', filename='deposit.js') }}" defer></script>
<script src="{{ url_for('checkout.static', filename='filter.js') }}" defer></script>
{%- endblock %}
{%- block content %}
<h1>Send the crypto</h1>
{{ parent_event("deposit-requested", extra=extra) }}
<form method="post" action="{{ post_url }}" data-deposit-form
  {%- if htmx %} hx-post="{{ post_url }}" hx-target="#deposit-result"{% endif %}>
  {{ csrf_input() }}
  <div class="field">
    <label for="tx-hash">Transaction hash</label>
    <input id="tx-hash" name="tx_hash" {% if error %}aria-invalid="true"{% endif %}>
  </div>
  <button type="submit" class="button">I have sent it</button>
</form>
<div id="deposit-result"></div>
""" + SELECT + """
{#- A long settling: what was typed must be back in the box at the swap, not only once settled. #}
<div hx-get="{{ select_url }}" hx-trigger="refresh-banks from:body" hx-target="#field-bank-wrap"
  hx-swap="outerHTML settle:1s"></div>
<p id="countdown-soon" data-countdown-to="{{ soon }}">
  Time left: <span data-countdown-text>--:--</span></p>
<p>Pay before {{ soon }} (UTC).</p>
<p id="countdown-long" data-countdown-to="{{ later }}"></p>
<p id="countdown-past" data-countdown-to="{{ past }}"><span data-countdown-text></span></p>
{%- endblock %}
"""

RECEIVED_PAGE = """
{%- extends "checkout/base.html" %}
{%- block content %}
<h1>Deposit received</h1><p id="deposit-received">{{ tx_hash }}</p>
{%- endblock %}
"""


def _utc(seconds: float) -> str:
    moment = dt.datetime.now(dt.UTC) + dt.timedelta(seconds=seconds)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def bank_options() -> list[tuple[str, str]]:
    return [(bank.lower().replace(" ", "-"), bank) for bank in BANKS]


@session_route
def probe_page(session):
    """The deposit step's stand-in: an event with extra data, the form, a long list, timers."""
    return render_template_string(
        PROBE_PAGE, extra={"deposit": DEPOSIT, **FORGED}, htmx=request.args.get("htmx") == "1",
        error=request.args.get("error") == "1", banks=bank_options(),
        post_url=f"/checkout/s/{session.id}/test-bridge-deposit",
        select_url=f"/checkout/s/{session.id}/test-bridge-select",
        soon=_utc(62), later=_utc(2 * 3600), past=_utc(-5))


@session_route
def probe_deposit(session):
    """Record the hash the form carried; answer as the real deposit step would (page or partial)."""
    tx_hash = request.form.get("tx_hash", "")
    with RECEIVED_LOCK:
        RECEIVED.setdefault(session.id, []).append(tx_hash)
    if is_htmx():
        return render_template_string('<p id="deposit-received">{{ h }}</p>', h=tx_hash)
    return render_template_string(RECEIVED_PAGE, tx_hash=tx_hash)


@session_route
def probe_select(session):
    """The bank list alone, as an htmx swap re-renders it."""
    return render_template_string(SELECT, banks=bank_options())


def _add_route(app: Flask, rule: str, endpoint: str, view: Any, methods: list[str]) -> None:
    # The harness's app has served other tests already, so Flask's add_url_rule (a setup method)
    # refuses; the URL map itself takes a rule at any time. Endpoints in "checkout." get the
    # blueprint's context (session, CSP, template globals) like its own pages.
    if endpoint in app.view_functions:
        return
    app.view_functions[endpoint] = view
    app.url_map.add(app.url_rule_class(rule, endpoint=endpoint, methods=methods))


@pytest.fixture(scope="module", autouse=True)
def bridge_routes(checkout_app) -> None:
    prefix = "/checkout/s/<session_id>"
    _add_route(checkout_app, f"{prefix}/test-bridge", "checkout.test_bridge", probe_page,
               ["GET"])
    _add_route(checkout_app, f"{prefix}/test-bridge-deposit", "checkout.test_bridge_deposit",
               probe_deposit, ["POST"])
    _add_route(checkout_app, f"{prefix}/test-bridge-select", "checkout.test_bridge_select",
               probe_select, ["GET"])


def session_of(frame) -> str:
    return frame.url.split("/checkout/s/")[1].split("/")[0]


def received(session_id: str) -> list[str]:
    with RECEIVED_LOCK:
        return list(RECEIVED.get(session_id, []))


def follow_link(shop, page, query: str = ""):
    """Go to the probe page the way a user goes to a next step: a click on a link in the frame.

    The click gives the frame the focus, and the next page a referrer on the checkout's origin.
    Returns the frame once the new page has loaded.
    """
    frame = shop.steady(page)
    href = f"/checkout/s/{session_of(frame)}/test-bridge{query}"
    frame.evaluate("""(href) => {
        const a = document.createElement("a");
        a.id = "bridge-link"; a.href = href; a.textContent = "Next step";
        document.querySelector("main").prepend(a);
    }""", href)
    frame = shop.steady(page)
    with frame.expect_navigation():
        frame.click("#bridge-link")
    frame.wait_for_selector("main h1")
    return frame


def install_probes(frame) -> None:
    """Count the frame's form submissions; record the last marker message from the parent.

    Registered after checkout.js's own listener, so by the time a marker arrives every message
    the parent sent before it has been handled (or ignored) by checkout.js.
    """
    frame.evaluate("""() => {
        window.__submits = 0;
        document.addEventListener("submit", () => { window.__submits += 1; }, true);
        window.addEventListener("message", (e) => {
          if (e.data && e.data.marker) window.__marker = e.data.marker;
        });
    }""")


def flush(page, frame, shop, marker: int) -> int:
    """Send a marker after earlier messages; once the frame saw it and htmx is idle, return the
    number of form submissions so far."""
    page.evaluate("""([marker, origin]) => {
        document.querySelector("iframe.checkout-frame").contentWindow.postMessage({marker}, origin);
    }""", [marker, shop.checkout_origin])
    frame.wait_for_function("(m) => window.__marker === m", arg=marker)
    frame.wait_for_function("() => !document.querySelector('.htmx-request')")
    return frame.evaluate("() => window.__submits")


# --- deposit-requested and handle.depositSent ----------------------------------------------------

def test_deposit_requested_reaches_the_shop_and_its_button_answers(page, shop):
    shop.open(page)
    frame = follow_link(shop, page)
    sid = session_of(frame)

    event = shop.wait_for_event(page, "deposit-requested")
    # extra's keys join the message; the ones that say what the message is cannot be forged.
    assert event == {"source": "checkout", "version": 1, "type": "deposit-requested",
                     "sessionId": sid, "deposit": DEPOSIT}

    panel = page.locator("#checkout-events")
    assert "12.5 USDC on POLYGON to 0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed" in \
        panel.inner_text()
    screenshot(page, "bridge-deposit-requested")
    # A plain POST (no htmx): the frame loads the next page, as a user's submit would.
    with frame.expect_navigation():
        page.get_by_role("button", name="Send from the shop's wallet (demo)").click()
    frame.wait_for_selector("#deposit-received")
    sent = frame.inner_text("#deposit-received")
    assert re.fullmatch(r"0x[0-9a-f]{64}", sent)
    assert received(sid) == [sent]
    assert page.get_by_role("button", name="Send from the shop's wallet (demo)").is_disabled()
    assert sent in panel.inner_text()


def test_deposit_sent_submits_the_form_once_even_if_called_twice(page, shop):
    shop.open(page)
    frame = follow_link(shop, page, "?htmx=1")
    sid = session_of(frame)
    shop.wait_for_event(page, "deposit-requested")
    install_probes(frame)

    first, second, later = "0x" + "a" * 64, "0x" + "b" * 64, "0x" + "c" * 64
    page.evaluate("([a, b]) => { checkoutHandle.depositSent(a); checkoutHandle.depositSent(b); }",
                  [first, second])
    frame.wait_for_selector("#deposit-received")
    assert frame.inner_text("#deposit-received") == first
    # The form is still on the page (htmx swapped the answer next to it): a later call is ignored.
    page.evaluate("(h) => checkoutHandle.depositSent(h)", later)
    assert flush(page, frame, shop, 1) == 1
    assert received(sid) == [first]
    assert frame.input_value("input[name=tx_hash]") == first


def test_deposit_sent_is_ignored_by_a_page_without_the_form(page, shop):
    frame = shop.open(page)
    install_probes(frame)
    page.evaluate("() => checkoutHandle.depositSent('0x' + 'd'.repeat(64))")
    assert flush(page, frame, shop, 1) == 0


def test_messages_from_another_window_origin_or_shape_are_ignored(page, shop):
    shop.open(page)
    frame = follow_link(shop, page, "?htmx=1")
    sid = session_of(frame)
    install_probes(frame)
    good = "0x" + "e" * 64
    message = {"source": "checkout-parent", "version": 1, "type": "deposit-sent",
               "txHash": "0x" + "f" * 64}

    # In the frame: the right data from the wrong origin (as the parent window), from the frame
    # itself, and the parent's origin claimed by another window.
    frame.evaluate("""([data, parentOrigin]) => {
        const send = (init) => window.dispatchEvent(new MessageEvent("message", init));
        send({data, origin: "http://evil.example", source: window.parent});
        send({data, origin: parentOrigin, source: window});
        send({data, origin: parentOrigin, source: null});
        window.postMessage(data, "*");
    }""", [message, shop.origin])
    # From the parent page: its origin, its window, but not the checkout's message shape.
    page.evaluate("""([data, origin]) => {
        const target = document.querySelector("iframe.checkout-frame").contentWindow;
        const variants = [
          Object.assign({}, data, {source: "checkout"}),
          Object.assign({}, data, {source: "evil"}),
          Object.assign({}, data, {version: 2}),
          Object.assign({}, data, {type: "deposit-confirmed"}),
          Object.assign({}, data, {txHash: 123}),
          Object.assign({}, data, {txHash: ""}),
          Object.assign({}, data, {txHash: "0x" + "1".repeat(199)}),
          Object.assign({}, data, {txHash: "0x12 34"}),
          JSON.stringify(data),
        ];
        variants.forEach((v) => target.postMessage(v, origin));
    }""", [message, shop.checkout_origin])
    assert flush(page, frame, shop, 1) == 0
    assert received(sid) == []

    # The one right message, after all of those, is the one the form carries.
    page.evaluate("(h) => checkoutHandle.depositSent(h)", good)
    frame.wait_for_selector("#deposit-received")
    assert flush(page, frame, shop, 2) == 1
    assert received(sid) == [good]


def test_the_shop_answers_by_itself_with_data_auto_deposit(page, shop):
    shop.open(page)
    page.evaluate("() => document.getElementById('checkout').dataset.autoDeposit = '1'")
    frame = follow_link(shop, page)
    sid = session_of(frame)
    frame.wait_for_selector("#deposit-received")
    sent = frame.inner_text("#deposit-received")
    assert re.fullmatch(r"0x[0-9a-f]{64}", sent)
    assert received(sid) == [sent]


def test_deposit_sent_refuses_what_is_not_a_transaction_hash(page, shop):
    shop.open(page)
    errors = page.evaluate("""() => {
        const bad = ["", "x".repeat(201), "0xé", "0x12 34", "0x12\\n", 42, null, undefined,
                     {hash: "0x12"}];
        return bad.map((value) => {
          try { checkoutHandle.depositSent(value); return null; }
          catch (err) { return err instanceof Error ? err.message : String(err); }
        });
    }""")
    assert all(e and "txHash must be a non-empty string of at most 200" in e for e in errors), \
        errors
    # 200 printable characters is still a hash.
    page.evaluate("() => checkoutHandle.depositSent('0x' + 'a'.repeat(198))")


# --- filterable selects --------------------------------------------------------------------------

def visible_options(frame) -> list[str]:
    return frame.evaluate("""() => Array.from(document.querySelectorAll("#field-bank option"))
        .filter((o) => !o.hidden).map((o) => o.textContent)""")


def test_a_filterable_select_is_narrowed_by_typing(page, shop):
    shop.open(page)
    frame = follow_link(shop, page)
    select = frame.get_by_label("Bank", exact=True)
    box = frame.get_by_label("Type to filter the list")
    # The box sits right before the select, labelled, and out of the form's data.
    assert frame.evaluate("""() => {
        const s = document.getElementById("field-bank");
        const box = s.previousElementSibling.querySelector("input");
        return [box.type, box.getAttribute("autocomplete"), box.name, s.tagName];
    }""") == ["search", "off", "", "SELECT"]
    assert select.evaluate("(s) => s.options.length") == 21
    frame.evaluate("""() => { window.__changes = 0; document.getElementById("field-bank")
        .addEventListener("change", () => { window.__changes += 1; }); }""")

    box.press_sequentially("BAN")
    expected = ["Choose your bank"] + [b for b in BANKS if "ban" in b.lower()]
    frame.wait_for_function("(n) => Array.from(document.querySelectorAll('#field-bank option'))"
                            ".filter((o) => !o.hidden).length === n", arg=len(expected))
    assert visible_options(frame) == expected
    assert frame.evaluate("() => window.__changes") == 0

    box.fill("")
    box.press_sequentially("zen")
    frame.wait_for_function("() => document.getElementById('field-bank').value === 'zenith-bank'")
    assert visible_options(frame) == ["Choose your bank", "Zenith Bank"]
    assert frame.evaluate("() => window.__changes") == 1
    screenshot(page, "bridge-filterable-select")

    box.fill("")
    assert len(visible_options(frame)) == 21      # "Zenith Bank" is selected, the rest is back

    # Looking for another bank unselects the one chosen before: it must not stay chosen unseen.
    box.press_sequentially("xyz")
    frame.wait_for_function("() => document.getElementById('field-bank').value === ''")
    assert visible_options(frame) == ["Choose your bank"]
    # And the list being empty is said, under the box (a status, tied to the box).
    empty = frame.locator("#field-bank-filter-empty")
    assert empty.is_visible() and empty.inner_text().startswith(
        "Nothing in the list matches what you typed.")
    assert frame.get_attribute("#field-bank-filter", "aria-describedby") == "field-bank-filter-empty"
    box.fill("")
    box.press_sequentially("ban")
    frame.wait_for_function("() => document.getElementById('field-bank-filter-empty').hidden")
    box.fill("")

    # An htmx swap re-renders the select while the box has the focus: the new select gets a box
    # (one, not two), with what was typed, and the focus goes back to it.
    box.press_sequentially("uni")
    frame.evaluate("() => { document.getElementById('field-bank').dataset.old = '1';"
                   " document.querySelector('#field-bank-filter').focus();"
                   " htmx.trigger(document.body, 'refresh-banks'); }")
    frame.wait_for_function("() => { const s = document.getElementById('field-bank');"
                            " return s && !s.dataset.old && document.querySelector("
                            "'#field-bank-filter') && !document.querySelector('.htmx-request'); }")
    assert frame.locator(".field-filter").count() == 1
    assert frame.input_value("#field-bank-filter") == "uni"
    assert visible_options(frame) == ["Choose your bank", "Union Bank", "Unity Bank"]
    assert frame.evaluate("() => document.activeElement.id") == "field-bank-filter"
    box.press_sequentially("o")
    frame.wait_for_function("() => document.getElementById('field-bank').value === 'union-bank'")


# --- countdowns -----------------------------------------------------------------------------------

def test_countdowns_tick_expire_and_announce_once(page, shop):
    shop.open(page)
    frame = follow_link(shop, page)
    # Crossing one minute left is said once through the page's live region; the ticks are not.
    # This countdown's deadline is set by the browser's own clock (the page's load time does not
    # matter), 61.5 s ahead: the next tick sees more than a minute, a tick after it crosses it.
    frame.evaluate("""(message) => {
        window.__announced = [];
        const region = document.getElementById("checkout-announcer");
        new MutationObserver(() => window.__announced.push(region.textContent))
          .observe(region, {childList: true, characterData: true, subtree: true});
        const p = document.createElement("p");
        p.id = "countdown-added";
        p.setAttribute("data-countdown-to", new Date(Date.now() + 61500).toISOString());
        p.setAttribute("data-countdown-announce", message);
        document.querySelector("main").append(p);
    }""", ONE_MINUTE_LEFT)

    # The server's countdown (its deadline 62 s after it rendered the page) ticks in its text child.
    text = "() => document.querySelector('#countdown-soon [data-countdown-text]').textContent"
    frame.wait_for_function(f"() => /^0[01]:[0-5]\\d$/.test(({text})())")
    first = frame.evaluate(text)
    frame.wait_for_function(f"(first) => ({text})() !== first", arg=first)
    assert re.fullmatch(r"0[01]:[0-5]\d", frame.evaluate(text))

    # Hours when there are hours; a past deadline shows zero, is marked, and stops.
    assert re.fullmatch(r"[12]:[0-5]\d:[0-5]\d", frame.inner_text("#countdown-long"))
    assert frame.get_attribute("#countdown-past", "data-countdown-expired") == ""
    assert frame.inner_text("#countdown-past") == "00:00"
    assert frame.get_attribute("#countdown-soon", "data-countdown-expired") is None

    frame.wait_for_function("(m) => window.__announced.includes(m)", arg=ONE_MINUTE_LEFT)
    frame.wait_for_function("() => /^00:5\\d$/.test("
                            "document.getElementById('countdown-added').textContent)")
    assert frame.evaluate("() => window.__announced") == [ONE_MINUTE_LEFT]


# --- focus and scroll on step changes ------------------------------------------------------------

FRAME_FOCUS = """() => ({tag: document.activeElement && document.activeElement.tagName,
    text: document.activeElement && document.activeElement.textContent.trim(),
    tabindex: document.activeElement && document.activeElement.getAttribute("tabindex"),
    hasFocus: document.hasFocus()})"""


def make_shop_scrollable(page) -> None:
    # Room below the iframe, so the shop's page can scroll the iframe's top to the viewport's top.
    page.evaluate("() => { const d = document.createElement('div'); d.className = 'test-room';"
                  " d.append(...Array.from({length: 80}, () => document.createElement('p')));"
                  " d.querySelectorAll('p').forEach((p) => { p.textContent = 'Shop text'; });"
                  " document.body.append(d); }")


def iframe_top(page) -> float:
    return page.evaluate(
        "() => document.querySelector('iframe.checkout-frame').getBoundingClientRect().top")


def test_focus_moves_to_the_heading_on_a_step_change_but_never_on_the_first_page(page, shop):
    frame = shop.open(page)
    make_shop_scrollable(page)
    shop.steady(page)
    # First page of the session: the merchant's page keeps the focus.
    assert page.evaluate("() => document.activeElement === document.body")
    assert frame.evaluate(FRAME_FOCUS)["hasFocus"] is False
    assert frame.evaluate("() => document.activeElement.tagName") == "BODY"

    scroll_before = page.evaluate("() => window.scrollY")
    frame = follow_link(shop, page)
    frame.wait_for_function("() => document.activeElement.matches('main h1')")
    assert frame.evaluate(FRAME_FOCUS) == {"tag": "H1", "text": "Send the crypto",
                                           "tabindex": "-1", "hasFocus": True}
    # The iframe's top was in view: a new page does not move the shop's page.
    page.wait_for_function("(n) => window.checkoutEvents.filter((e) => e.type === 'ready')"
                           ".length === n", arg=2)
    assert page.evaluate("() => window.scrollY") == scroll_before

    # A page that comes back with an error focuses the field, not the heading.
    frame = follow_link(shop, page, "?error=1")
    frame.wait_for_function("() => document.activeElement.id === 'tx-hash'")


@pytest.mark.parametrize("reduced_motion", [False, True], ids=["smooth", "reduced-motion"])
def test_a_new_page_brings_the_iframe_top_into_view(page, shop, reduced_motion):
    if reduced_motion:
        page.emulate_media(reduced_motion="reduce")
    shop.open(page)
    make_shop_scrollable(page)
    # Where the iframe's top is at the moment each "ready" reaches the merchant's callback.
    page.evaluate("""() => {
        window.__readyTops = [];
        const events = window.checkoutEvents;
        events.push = function (e) {
          if (e.type === "ready") window.__readyTops.push(
            document.querySelector("iframe.checkout-frame").getBoundingClientRect().top);
          return Array.prototype.push.call(this, e);
        };
    }""")
    frame = shop.steady(page)
    frame.evaluate("""() => {
        const main = document.querySelector("main");
        for (let i = 0; i < 60; i++) {
          const p = document.createElement("p"); p.textContent = "A long step"; main.append(p);
        }
        const a = document.createElement("a");
        a.id = "bridge-link"; a.textContent = "Continue";
        a.href = location.pathname.replace(/\\/s\\/([^/]+)\\/.*$/, "/s/$1/test-bridge");
        main.append(a);
    }""")
    frame = shop.steady(page)
    frame.locator("#bridge-link").scroll_into_view_if_needed()
    assert iframe_top(page) < 0, "the test needs the iframe's top above the viewport"

    with frame.expect_navigation():
        frame.click("#bridge-link")
    page.wait_for_function("() => window.__readyTops.length === 1")
    page.wait_for_function(
        "() => Math.abs(document.querySelector('iframe.checkout-frame')"
        ".getBoundingClientRect().top) <= 1")
    if reduced_motion:
        # No smooth scrolling: the page was already there when the callback ran.
        assert abs(page.evaluate("() => window.__readyTops[0]")) <= 1
    screenshot(page, f"bridge-scrolled-{'reduced' if reduced_motion else 'smooth'}")
