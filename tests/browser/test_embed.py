"""The checkout embedded in a merchant page on another site, in a real Chromium."""
from __future__ import annotations

from urllib.parse import quote

import pytest

from .conftest import screenshot, until

pytestmark = pytest.mark.browser


def test_embedded_checkout_loads_reports_and_works_without_cookies(page, context, shop,
                                                                 browser_log):
    frame = shop.open(page, network="CELO", asset="USDC", amount="5000", currency="local",
                      countryIsoCode="NG", lock=["network", "asset"])
    screenshot(page, "embed-first-page")

    # The iframe was mounted by embed.js, cross-site, with the permissions the flow needs.
    iframe = page.locator("iframe.checkout-frame")
    assert iframe.get_attribute("allow") == "clipboard-write; payment; camera"
    assert iframe.get_attribute("title") == "Buy stablecoins"
    assert frame.url.startswith(shop.checkout_origin + "/checkout/s/")
    assert "token=" not in frame.url       # the token stays out of the frame's address
    assert page.url.startswith(shop.origin + "/")

    # ready and resize reached the parent, from this session, and the frame took the height.
    ready = shop.wait_for_event(page, "ready")
    resize = shop.wait_for_event(page, "resize")
    session_id = frame.url.split("/checkout/s/")[1].split("/")[0]
    assert ready == {"source": "checkout", "version": 1, "type": "ready",
                     "sessionId": session_id}
    assert resize["sessionId"] == session_id and resize["height"] > 100
    page.wait_for_function("""() => {
        const sizes = (window.checkoutEvents || []).filter((e) => e.type === "resize");
        const frame = document.querySelector("iframe.checkout-frame");
        return sizes.length > 0
            && parseInt(frame.style.height, 10) === Math.ceil(sizes[sizes.length - 1].height);
    }""")

    # htmx runs under script-src 'self' with eval off and no inline indicator style.
    config = frame.evaluate(
        "() => ({loaded: typeof htmx === 'object', eval: htmx.config.allowEval, "
        "styles: htmx.config.includeIndicatorStyles, history: htmx.config.historyCacheSize})")
    assert config == {"loaded": True, "eval": False, "styles": False, "history": 0}

    # An htmx POST carries the session's anti-forgery header, swaps, and its event reaches the
    # parent: the whole page-to-parent path after a swap.
    probe_url = f"/checkout/s/{session_id}/test-htmx-probe"
    frame.evaluate("""(url) => {
        const button = document.createElement("button");
        button.id = "htmx-probe"; button.type = "button"; button.textContent = "probe";
        button.setAttribute("hx-post", url);
        button.setAttribute("hx-target", "#checkout-main");
        button.setAttribute("hx-swap", "beforeend");
        document.querySelector("#checkout-main").prepend(button);
        htmx.process(button);
    }""", probe_url)
    frame.click("#htmx-probe")
    frame.wait_for_selector("#htmx-probe-result")
    probe = shop.wait_for_event(page, "status-changed")
    assert probe["order"] == {"id": "probe", "status": "probe"}
    assert probe["sessionId"] == session_id

    # Copy buttons work inside the cross-site frame (clipboard-write is delegated by embed.js).
    frame.evaluate("""() => {
        const b = document.createElement("button");
        b.type = "button"; b.id = "copy-probe"; b.textContent = "Copy";
        b.setAttribute("data-copy", "0xabc"); b.setAttribute("data-copied-label", "Copied");
        document.querySelector("#checkout-main").prepend(b);
    }""")
    frame.click("#copy-probe")
    frame.wait_for_function("() => document.querySelector('#copy-probe').textContent === 'Copied'")

    # A "back to the shop" link tells the parent the checkout is being closed.
    frame.evaluate("""() => {
        const a = document.createElement("a");
        a.id = "close-probe"; a.href = "#"; a.textContent = "Back";
        a.setAttribute("data-checkout-close", "");
        document.querySelector("#checkout-main").prepend(a);
    }""")
    frame.click("#close-probe")
    assert shop.wait_for_event(page, "closed")["sessionId"] == session_id

    # No cookie was needed, or set, on either site.
    assert context.cookies([shop.checkout_origin, shop.origin]) == []

    # Every event came from the checkout's origin to this exact page, and nothing failed.
    assert {e["source"] for e in shop.events(page)} == {"checkout"}
    assert [e for e in browser_log.console_errors if "favicon" not in e] == []


def test_keyboard_focus_is_visible_inside_the_frame(page, shop):
    frame = shop.open(page)
    focused = None
    for _ in range(15):
        page.keyboard.press("Tab")
        focused = frame.evaluate("""() => {
            const el = document.activeElement;
            if (!el || el === document.body || !document.hasFocus()) return null;
            const style = getComputedStyle(el);
            return {tag: el.tagName, focusVisible: el.matches(':focus-visible'),
                    outline: style.outlineStyle, width: parseFloat(style.outlineWidth)};
        }""")
        if focused:
            break
    assert focused, "Tab never reached an element inside the checkout"
    assert focused["focusVisible"]
    assert focused["outline"] != "none" and focused["width"] >= 2
    screenshot(page, "embed-keyboard-focus")


def test_events_go_only_to_the_parent_origin(page, shop):
    frame = shop.open(page)
    meta = frame.evaluate(
        "() => document.querySelector('meta[name=checkout-parent-origin]').content")
    assert meta == shop.origin


def test_a_bad_token_shows_a_clear_page_in_the_frame(page, shop):
    url = shop.launch_url() + "x"
    page.goto(f"{shop.origin}/?launch={quote(url, safe='')}")
    frame = page.wait_for_selector("iframe.checkout-frame").content_frame()
    frame.wait_for_url(f"{shop.checkout_origin}/**")
    frame.wait_for_selector("[role=alert]")
    assert "has been changed" in frame.inner_text("main")
    screenshot(page, "embed-bad-token")


def test_the_harness_catches_csp_violations_in_the_frame(page, shop, browser_log):
    # Without this, "no CSP violation" above could mean "violations go unseen".
    frame = shop.open(page)
    frame.evaluate("""() => {
        const img = document.createElement("img");
        img.src = "https://blocked.invalid/pixel.png";
        document.body.appendChild(img);
    }""")

    def reported(violations: list[dict]) -> tuple[bool, bool]:
        """Whether the blocked image was reported by the page's listener, and on the console."""
        return (any(v.get("directive", "").startswith("img-src") for v in violations),
                any("img-src" in v.get("console", "") for v in violations))

    # Both reports travel from the frame's renderer to this process, each its own way: wait for
    # both (then none is left to arrive after the list is cleared), do not guess how long.
    until(page, lambda: all(reported(browser_log.csp_violations)))
    found = list(browser_log.csp_violations)
    browser_log.csp_violations.clear()          # expected here; don't fail the teardown check
    assert any(reported(found)), found


def test_embed_ignores_messages_that_are_not_from_the_checkout_frame(page, shop):
    shop.open(page)
    before = len(shop.events(page))
    # Same shape, wrong sender: the merchant's own window, and a same-origin child frame.
    page.evaluate("""() => {
        const fake = {source: "checkout", version: 1, type: "completed", sessionId: "x"};
        window.postMessage(fake, "*");
        const other = document.createElement("iframe");
        document.body.appendChild(other);
        other.contentWindow.parent.postMessage(fake, "*");
        // Messages are handled in the order they were posted: once this one is, so were those.
        window.addEventListener("message", (e) => { if (e.data === "after") window.after = 1; });
        window.postMessage("after", "*");
    }""")
    page.wait_for_function("() => window.after === 1")
    assert [e for e in shop.events(page)[before:] if e["type"] == "completed"] == []


def test_a_checkout_below_the_fold_reports_its_height_before_it_is_scrolled_to(page, shop):
    """A shop may put the checkout under its own content. The browser does not draw a cross-site
    frame that is out of view, so a ResizeObserver in it reports nothing until the user scrolls
    to it: the frame must tell its height at once all the same, or the shop's iframe keeps its
    first height (and its onEvent hears no "resize") until it jumps when scrolled to."""
    page.add_init_script("""if (window === window.top) {      // the shop's page, not the frame
      document.addEventListener('DOMContentLoaded', () => {
        const above = document.createElement('div');
        above.style.height = '5000px';
        document.body.prepend(above);
      });
    }""")
    page.goto(f"{shop.origin}/?launch={quote(shop.launch_url(), safe='')}")
    shop.wait_for_event(page, "ready")
    resize = shop.wait_for_event(page, "resize", timeout=10_000)
    assert resize["height"] > 100
    assert page.evaluate("() => window.scrollY") == 0     # nobody scrolled to it
    page.wait_for_function("""(height) => parseInt(
      document.querySelector('iframe.checkout-frame').style.height, 10) === Math.ceil(height)""",
                           arg=resize["height"])
