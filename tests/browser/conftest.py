"""Real-browser harness: the checkout in a cross-site iframe, in Debian's Chromium via Playwright.

Two servers run in threads of this process for the whole session:

* the checkout (on the embedded sandbox), reached as ``http://localhost:<port>``;
* a minimal merchant page reached as ``http://127.0.0.1:<port>``: another site, so the iframe is
  cross-site and Chromium's default third-party-cookie blocking applies, as on a real shop.

Fixtures: ``checkout_server`` / ``checkout_app``, ``shop`` (opens the merchant page with a launch
token and gives the checkout's frame and the events the parent received), ``browser``, ``context``,
``page`` and ``browser_log`` (console errors and CSP violations of every frame; any CSP violation
fails the test). Screenshots go to ``test-artifacts/browser/`` (git ignores it); a failing test
leaves one named after it.
"""
from __future__ import annotations

import faulthandler
import json
import re
import sys
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from babel.support import Translations
from flask import Flask, Response, abort, render_template_string, request

from checkout import Checkout
from checkout.i18n import TRANSLATIONS
from checkout.launch import launch_url
from checkout.paths import STATIC

from ..support.live_server import LiveServer
from ..support.sandbox_clock import MANUAL
from ..support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[2]
ARTIFACTS = ROOT / "test-artifacts" / "browser"
CHROMIUM = "/usr/bin/chromium"
STEADY_TIMEOUT = 15.0       # seconds the frame may take to reach its page's height
# Keep Chromium off the closed network (TESTING.md); third-party-cookie blocking stays default.
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

# Records CSP violations in every frame, ours and the merchant's. Playwright injects this script
# itself (it is not part of any page), so it does not weaken the pages' own policies.
RECORD_VIOLATIONS = """
(() => {
  document.addEventListener("securitypolicyviolation", (e) => {
    const v = {directive: e.violatedDirective, blocked: e.blockedURI, document: e.documentURI,
               sample: e.sample, line: e.lineNumber};
    (window.__cspViolations = window.__cspViolations || []).push(v);
    if (window.__reportCspViolation) window.__reportCspViolation(v);
  });
})();
"""


# The languages the checkout speaks: flows walked in each find buttons by their translated names,
# so a missing translation fails there too.
LANGUAGES = ["en", "fr", "sw", "pt"]


@cache
def catalogue(language: str) -> Translations:
    """The checkout's own catalogue for ``language``: ``catalogue("fr").gettext("Continue")``."""
    return Translations.load(str(TRANSLATIONS), [language], domain="messages")


AXE = Path(__file__).resolve().parent / "node" / "node_modules" / "axe-core" / "axe.min.js"
# WCAG 2.2 A and AA plus axe's best practices: every rule that applies, any impact.
AXE_RUN = """async () => {
  const result = await axe.run(document, {resultTypes: ["violations"]});
  return result.violations.map(v => ({id: v.id, impact: v.impact, help: v.help,
    nodes: v.nodes.slice(0, 5).map(n => n.target.join(" ") + " :: " + n.failureSummary)}));
}"""


def axe_violations(frame: Any) -> list[dict]:
    """axe-core's violations in ``frame``'s document (ours: the checkout's frame, not the shop).

    Evaluated through the DevTools protocol, which the page's CSP does not govern: the script
    is not added to the page, so the policy under test stays exactly the page's own."""
    if not frame.evaluate("() => typeof window.axe !== 'undefined'"):
        frame.evaluate(AXE.read_text(encoding="utf-8") + "\n;undefined")
    return frame.evaluate(AXE_RUN)


def assert_accessible(frame: Any, state: str) -> None:
    """No axe-core violation of any impact on the page ``frame`` shows (``state`` names it)."""
    found = axe_violations(frame)
    assert not found, f"axe-core on {state}:\n" + "\n".join(
        f"- {v['id']} ({v['impact']}): {v['help']}\n    " + "\n    ".join(v["nodes"])
        for v in found)


MERCHANT_PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Test shop</title>
  <link rel="stylesheet" href="/demo/shop.css">
  <script src="{{ checkout_origin }}/checkout/static/embed.js" defer></script>
  <script src="/demo/shop.js" defer></script>
</head>
<body>
  <header><h1>Test shop</h1></header>
  <main class="shop-layout">
    <div id="checkout" class="shop-checkout" data-checkout-url="{{ launch }}"
         data-checkout-title="Buy stablecoins"
         {%- if auto_deposit %} data-auto-deposit="1"{% endif %}></div>
    <ol id="checkout-events" class="shop-events"></ol>
  </main>
</body>
</html>
"""


def merchant_app(checkout_origin: str) -> Flask:
    """The merchant's page: mounts whatever launch URL on the checkout's origin it is given."""
    app = Flask("test_shop", static_folder=str(STATIC / "demo"), static_url_path="/demo")

    @app.get("/")
    def shop() -> Response:
        launch = request.args.get("launch", "")
        if not launch.startswith(checkout_origin + "/"):
            abort(400)
        # auto_deposit=1: the shop answers deposit-requested from its own wallet (shop.js).
        response = Response(render_template_string(
            MERCHANT_PAGE, launch=launch, checkout_origin=checkout_origin,
            auto_deposit=request.args.get("auto_deposit") == "1"))
        # A merchant with a strict policy of its own: embed.js must need nothing inline.
        response.headers["Content-Security-Policy"] = (
            f"default-src 'none'; script-src 'self' {checkout_origin}; style-src 'self'; "
            f"frame-src {checkout_origin}; base-uri 'none'")
        return response

    return app


@pytest.fixture(scope="session")
def shop_server() -> Iterator[LiveServer]:
    live = LiveServer.start("127.0.0.1")
    yield live
    live.stop()


@pytest.fixture(scope="session")
def checkout_server(tmp_path_factory, shop_server) -> Iterator[LiveServer]:
    """The checkout on the embedded sandbox, framed only by the test shop."""
    live = LiveServer.start("localhost")
    folder = tmp_path_factory.mktemp("checkout-browser")
    app = Flask("browser_host", instance_path=str(folder / "instance"))
    app.config.update(
        CHECKOUT_DATABASE_URL=f"sqlite:///{folder}/checkout.sqlite3",
        CHECKOUT_FRAME_ANCESTORS=[shop_server.origin],
        # The default colours, offered light and dark: a launch token's colorScheme chooses.
        CHECKOUT_THEME={"scheme": "auto"},
        CHECKOUT_SANDBOX={
            # The manual clock: an order moves on when a test says time has passed
            # (Shop.advance), never while a slow machine's browser is still on its way.
            **MANUAL,
            "SANDBOX_WEBHOOK_URL": f"{live.origin}/checkout/webhooks",
            "SANDBOX_WEBHOOK_ALLOW_LOOPBACK": True,
            # No SANDBOX_PUBLIC_URL: the checkout serves the sandbox's payment pages itself.
        },
    )
    Checkout(app)
    _add_probe_routes(app)
    live.app = app
    shop_server.app = merchant_app(live.origin)
    yield live
    live.stop()


def _add_probe_routes(app: Flask) -> None:
    """A session POST that htmx calls in the embed test (CSRF header, swap, parent event)."""
    from checkout.views.context import session_route

    @session_route
    def htmx_probe(session):
        return render_template_string(
            '{% from "checkout/macros.html" import parent_event with context %}'
            '<p id="htmx-probe-result">{{ _("Checkout") }} {{ checkout_session.flow }}</p>'
            '{{ parent_event("status-changed", {"id": "probe", "status": "probe"}, '
            'key="probe") }}')

    app.add_url_rule("/checkout/s/<session_id>/test-htmx-probe",
                     endpoint="checkout.test_htmx_probe", view_func=htmx_probe,
                     methods=["POST"])


@pytest.fixture(scope="session")
def checkout_app(checkout_server) -> Flask:
    return checkout_server.app


@pytest.fixture(autouse=True)
def counted_from_zero(request):
    """The one checkout server, and so its rate limiter, serves every browser test, all from
    127.0.0.1: each test starts with nothing counted, as a new shopper would, and then runs under
    the default limits (a test that met one would have found a limit a person can meet)."""
    if "checkout_server" in request.fixturenames:
        request.getfixturevalue("checkout_app").extensions["checkout"].ratelimits.reset()


@pytest.fixture
def rate_limits(checkout_app, monkeypatch):
    """``rate_limits(quote_per_session="2/minute", ...)``: these limits, counted from now, for
    the rest of one test (start-up checks the strings; a test gives well-formed ones)."""
    ratelimits = checkout_app.extensions["checkout"].ratelimits

    def configure(**overrides: str) -> None:
        for name, value in overrides.items():
            assert name in ratelimits.limits, name
            monkeypatch.setitem(ratelimits.limits, name, value)
        ratelimits.reset()

    return configure


@pytest.fixture
def checkout_config(checkout_app):
    """``checkout_config(KEY=value, ...)`` sets the running checkout's config for one test; the
    values before are put back after it (the server is shared by the whole session)."""
    saved: dict[str, Any] = {}

    def configure(**overrides: Any) -> None:
        for key, value in overrides.items():
            saved.setdefault(key, checkout_app.config.get(key))
            checkout_app.config[key] = value

    yield configure
    for key, value in saved.items():
        if value is None:
            checkout_app.config.pop(key, None)
        else:
            checkout_app.config[key] = value


@pytest.fixture
def quote_max_age(checkout_app):
    """``quote_max_age(seconds)``: the running checkout honours a quote that long (on its own
    clock) for one test; as configured again after it (the server serves the whole session)."""
    from checkout.state import get_state

    from ..views.conftest import journey_settings

    with checkout_app.app_context():
        kept = {name: built.settings for name, built in get_state().flows.items()}
    yield lambda seconds: journey_settings(checkout_app, quote_max_age=seconds)
    with checkout_app.app_context():
        for name, built in get_state().flows.items():
            built.settings = kept[name]


@pytest.fixture(scope="session")
def playwright_instance():
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        yield playwright


@pytest.fixture(scope="session")
def browser(playwright_instance):
    browser = playwright_instance.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
    yield browser
    browser.close()


@dataclass
class BrowserLog:
    """What the browser said: console errors and CSP violations, from every frame."""

    console_errors: list[str] = field(default_factory=list)
    csp_violations: list[dict] = field(default_factory=list)

    def on_console(self, message: Any) -> None:
        if message.type == "error":
            self.console_errors.append(message.text)
            if "Content Security Policy" in message.text:
                self.csp_violations.append({"console": message.text})


@pytest.fixture
def browser_log() -> BrowserLog:
    return BrowserLog()


def until(page: Any, predicate: Any, timeout: float = 15.0) -> Any:
    """Until ``predicate()`` holds (its value returned). What the browser sends (a route to
    handle, a console message) reaches this thread only while it makes a Playwright call, so each
    look makes one, a cheap one (the context's cookies)."""
    return wait_for(lambda: page.context.cookies() is not None and predicate(), timeout)


def close_context(context: Any) -> None:
    """Close a browser context whose pages may still be navigating by themselves.

    Chromium drops a close that races a navigation's commit (crbug.com/536385539, see
    microsoft/playwright#42068 and #42366): ``Target.disposeBrowserContext`` is then never
    answered, and Playwright's ``close()``, which takes no timeout, waits for ever. Our pages start
    navigations of their own at any moment: the KYC page's follow-along poll (htmx, every second
    in these tests) answers with ``HX-Redirect`` once the verdict is in, the status page's too.
    The handoff test hung there in about one run of eight: the phone's context was closed just
    as its page, left on "pending", went on to the review by itself.

    So each page goes to about:blank first, and the context is closed once that has committed
    (``goto`` returns then): no script of ours runs there any more, so no navigation can race the
    close.
    """
    try:
        for page in context.pages:
            if not page.is_closed():
                page.goto("about:blank")
    finally:
        context.close()


@pytest.fixture
def context(browser, browser_log):
    # A phone-sized window: most users are on phones.
    context = browser.new_context(viewport={"width": 390, "height": 844}, device_scale_factor=2)
    context.expose_binding("__reportCspViolation",
                           lambda source, violation: browser_log.csp_violations.append(violation))
    context.add_init_script(RECORD_VIOLATIONS)
    yield context
    close_context(context)


@pytest.fixture
def page(context, browser_log, request):
    page = context.new_page()
    page.on("console", browser_log.on_console)
    page.on("pageerror", lambda error: browser_log.console_errors.append(str(error)))
    yield page
    report = getattr(request.node, "rep_call", None)
    if report is not None and report.failed:
        screenshot(page, f"FAILED-{request.node.name}")
        explain_failure(page)
    assert browser_log.csp_violations == [], f"CSP violations: {browser_log.csp_violations}"


@pytest.hookimpl(wrapper=True, tryfirst=True)
def pytest_runtest_makereport(item, call):
    report = yield
    if report.when == "call":
        item.rep_call = report
    return report


def explain_failure(page: Any) -> None:
    """What CI keeps of a failed browser test: each frame's URL and text, and every thread's stack.

    The servers run in this process, so a request that hangs shows up in the stacks; the text shows
    what the user was looking at. Both go to stderr, which pytest prints with the failure.
    """
    for frame in page.frames:
        try:
            text = frame.evaluate("() => document.body ? document.body.innerText : ''")
        except Exception as exc:  # a frame navigating away cannot be read; say so, go on
            text = f"<unreadable: {exc}>"
        print(f"--- frame {frame.url}\n{text[:3000]}", file=sys.stderr)
    print("--- threads of the test process", file=sys.stderr)
    faulthandler.dump_traceback(file=sys.stderr, all_threads=True)


def screenshot(page: Any, name: str) -> Path:
    """Save a full-page screenshot under test-artifacts/browser/ and return its path."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / (re.sub(r"[^A-Za-z0-9_.-]+", "_", name) + ".png")
    # scale="css": a capture at the device's scale (2 here) overrides the page's metrics for a
    # moment, and afterwards Chromium sometimes routes a click aimed at the cross-site frame to the
    # <iframe> element of the shop instead (seen under load: "Continue" clicked, no click event in
    # the frame, no navigation). At CSS scale nothing is overridden.
    page.screenshot(path=str(path), full_page=True, scale="css")
    return path


class Held:
    """Requests to ``pattern`` (with ``method``, if given) held back, as a slow network would,
    until the test lets each go: ``held.first(page).continue_()``. Others pass."""

    def __init__(self, router: Any, pattern: str, method: str | None = None) -> None:
        self.method = method
        self.routes: list[Any] = []
        router.route(pattern, self._hold)

    def _hold(self, route: Any) -> None:
        if self.method is not None and route.request.method != self.method:
            route.continue_()
            return
        self.routes.append(route)

    def first(self, page: Any, timeout: float = 15.0) -> Any:
        """The first request held, once there is one."""
        return until(page, lambda: self.routes, timeout)[0]


class Shop:
    """The merchant page with the checkout in it."""

    def __init__(self, shop_server: LiveServer, checkout_server: LiveServer) -> None:
        self.shop_server = shop_server
        self.checkout_server = checkout_server

    @property
    def origin(self) -> str:
        return self.shop_server.origin

    @property
    def checkout_origin(self) -> str:
        return self.checkout_server.origin

    def launch_url(self, flow: str = "onramp", **claims: Any) -> str:
        """A launch URL on the checkout's origin, framed by (and reporting to) this shop."""
        claims.setdefault("parentOrigin", self.origin)
        app = self.checkout_server.app
        with app.app_context():
            return launch_url(app, flow, _base_url=self.checkout_origin, **claims)

    def open(self, page: Any, flow: str = "onramp", *, auto_deposit: bool = False,
             **claims: Any) -> Any:
        """Open the shop with a fresh launch token; return the checkout's frame once loaded.

        ``auto_deposit``: the shop sends the crypto from its own wallet when asked.
        """
        url = self.launch_url(flow, **claims)
        flag = "&auto_deposit=1" if auto_deposit else ""
        page.goto(f"{self.origin}/?launch={quote(url, safe='')}{flag}")
        page.wait_for_selector("iframe.checkout-frame")
        self.wait_for_event(page, "ready")
        return self.frame(page)

    def frame(self, page: Any) -> Any:
        for frame in page.frames:
            if frame.url.startswith(self.checkout_origin + "/"):
                return frame
        raise AssertionError(f"no checkout frame among {[f.url for f in page.frames]}")

    def steady(self, page: Any) -> Any:
        """Wait until the iframe has taken the height its page reported, and return the frame.

        A new page in the frame first shows at the previous page's height, then posts "resize".
        A click aimed while the iframe grows can land where the button was a moment ago (outside
        the frame, even), and nothing happens: CI saw exactly that on "Confirm and pay". So every
        click that navigates waits for the frame to stop moving first.

        The shop's page moves too: embed.js scrolls it smoothly to the frame's top when a new page
        loads there (a refused form answered in place, say). Playwright checks that the button is
        still within the frame's own page, which does not move, and then clicks where the button
        was on the screen: the click landed beside it and nothing was sent (the KYC step's Back
        test, in file runs). So the shop's scroll position must be still as well.
        """
        frame = self.frame(page)
        frame.wait_for_load_state("load")
        seen: list[tuple[int, int] | None] = [None]

        def still() -> bool:
            """The frame at its page's height, and it and the shop's scroll position as they
            were at the look before (a tenth of a second earlier)."""
            height = frame.evaluate(
                "() => Math.ceil(document.documentElement.getBoundingClientRect().height)")
            shown, scrolled = page.evaluate(
                "() => { const f = document.querySelector('iframe.checkout-frame');"
                " return [f ? Math.round(parseFloat(f.style.height)) : null,"
                " Math.round(window.scrollY)]; }")
            now = (height, scrolled) if shown == height else None
            steady, seen[0] = now is not None and seen[0] == now, now
            return steady

        try:
            wait_for(still, STEADY_TIMEOUT, interval=0.1)
        except AssertionError:
            raise AssertionError("the checkout frame never settled at its page's height and its "
                                 "shop's scroll position") from None
        return frame

    def click(self, page: Any, role: str, name: str) -> None:
        """Click a control of the checkout's current page once the frame holds still."""
        self.steady(page).get_by_role(role, name=name).click()

    def click_and_load(self, page: Any, role: str, name: str) -> Any:
        """Click a control that loads a new page into the frame; return once that page has loaded.

        Playwright waits for navigations that a click starts in the top page only, not in an
        iframe: right after the click the frame still shows the old page (until the server
        answers), and a selector the old page also matches would be found there.
        """
        frame = self.steady(page)
        with frame.expect_navigation():
            frame.get_by_role(role, name=name).click()
        return frame

    def click_and_wait_for(self, page: Any, role: str, name: str, selector: str) -> Any:
        """Click a control that sends a form; return once ``selector`` shows on the page it
        leads to, in the frame.

        Not click_and_load()'s expect_navigation(): a page that looks for changes by itself (the
        KYC step, every second here) finds the form's effect once the server has it, and loads
        the next page itself, which may cut the form's own redirect short (net::ERR_ABORTED)
        though the user sees the same page."""
        frame = self.steady(page)
        frame.get_by_role(role, name=name).click()
        frame.wait_for_selector(selector)
        return frame

    def decide_kyc(self, phone: str, decision: str, reason: str | None = None) -> None:
        """Decide the phone's pending KYC submission as a reviewer would, on the sandbox's
        console: ``approve`` or ``reject`` (with ``reason``)."""
        console = self.checkout_server.app.extensions["checkout"].sandbox.test_client()
        users = console.get("/sandbox/kyc/users.json").get_json()["users"]
        [user] = [u for u in users if (u.get("phone") or "").endswith(phone[1:])]
        decided = console.post(
            f"/sandbox/kyc/submissions/{user['submissions'][-1]['id']}/decision",
            json={"decision": decision, "reason": reason})
        assert decided.status_code == 200, decided.get_data(as_text=True)

    def advance(self, page: Any | None, seconds: float) -> dict:
        """Move the embedded sandbox's clock ``seconds`` forward through its test route (``POST
        /checkout/sandbox/clock/advance``, as a developer's test would): every timer falling due
        meanwhile (the agent's confirmation, a payout, an expiry, a webhook's retry) has run
        when this returns. From ``page``'s browser context when given, else from this process."""
        url = f"{self.checkout_origin}/checkout/sandbox/clock/advance?seconds={seconds:g}"
        headers = {"Accept": "application/json"}
        if page is not None:
            answer = page.request.post(url, headers=headers)
            assert answer.ok, answer.text()
            return answer.json()
        request = urllib.request.Request(url, method="POST", headers=headers)
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def events(self, page: Any) -> list[dict]:
        return page.evaluate("() => window.checkoutEvents || []")

    def wait_for_event(self, page: Any, type_: str, timeout: float = 15_000) -> dict:
        """Wait until the parent received an event of ``type_``; return the first such one."""
        page.wait_for_function(
            "(type) => (window.checkoutEvents || []).some((e) => e.type === type)",
            arg=type_, timeout=timeout)
        return next(e for e in self.events(page) if e["type"] == type_)


@pytest.fixture
def shop(shop_server, checkout_server) -> Shop:
    return Shop(shop_server, checkout_server)


def as_json(value: Any) -> str:  # pragma: no cover - debugging aid for test failures
    return json.dumps(value, indent=2, sort_keys=True)
