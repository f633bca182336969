"""The checkout on a slow phone network, before and after, side by side (issue 25's figures).

    .venv/bin/python bench/slow_network.py [--before REV] [--runs N]

Each version (``REV`` exported with ``git archive``; the working tree) is served as the README
says, by gunicorn with ``checkout.gunicorn_config`` (one worker), on the demo's embedded sandbox.
A real Chromium (Debian's) opens the on-ramp on its own page (unframed) with the network emulated
through DevTools: 600 ms round trip, 400 kbit/s each way. For each version it prints:

- **first page**: from opening the link to the first step ready to use (its heading on screen and
  the page loaded), an empty cache; its bytes on the wire (HTML and every file it loads, as
  received: compressed where the server compressed) and its requests;
- **a step, with JavaScript**: from the tap on "Continue" to the next step's heading on screen,
  for the first step (amount) and the second (wallet), caches warm;
- **the same steps without JavaScript**;
- **files asked again** by the second page of the session (CSS, JavaScript, icons);
- **steps in the demo shop's frame**, with JavaScript: the on-ramp chosen by the customer
  (amount, wallet), a sale chosen by the customer (amount, to the payout details, a page with a
  script of its own) and the Nigerian sale (payout details, account check, wallet); the same
  sale without JavaScript, in the shop's own <noscript> frame;
- **the identity step** (Kenya, basic: a document number, no photo), on its own page and in the
  shop's frame: "Continue" from the choice of document to its form, and "Send" from the form to
  "we are checking". The advanced documents' photos are not timed: their bytes alone take
  seconds at 50 KB/s, whatever the number of round trips.

Times are the median of ``--runs`` (3) walks, each in a new browser context. A benchmark, not a
test: the figures depend on the machine and its load, the emulated network on Chromium's shaping.
"""
from __future__ import annotations

import argparse
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from revisions import export  # bench/, first on the path of a script run from there

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "5c17dbb"
SLOW = {"offline": False, "latency": 600, "downloadThroughput": 50_000,
        "uploadThroughput": 50_000}
ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
ASSET_TYPES = {"stylesheet", "script", "image", "font"}
TARGETS = {"first_seconds": 3.0, "first_kb": 25.0, "step_js": 1.0, "step_plain": 1.6,
           "asked_again": 0}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """gunicorn serving ``tree``'s demo (its own code first on the path)."""

    def __init__(self, tree: Path) -> None:
        self.port = free_port()
        self.folder = tempfile.mkdtemp()
        env = {**os.environ, "PYTHONPATH": str(tree), "PORT": str(self.port),
               "SANDBOX_TIME_SCALE": "0.01"}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "gunicorn", "-c", "python:checkout.gunicorn_config", "-w", "1",
             "-b", f"127.0.0.1:{self.port}", "wsgi:app"],
            cwd=tree, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", self.port), 0.2).close()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"gunicorn for {tree} did not start")

    @property
    def origin(self) -> str:
        return f"http://localhost:{self.port}"

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(10)


class Wire:
    """Bytes and requests as the browser received them (DevTools' encoded lengths)."""

    def __init__(self, page: Any) -> None:
        self.cdp = page.context.new_cdp_session(page)
        self.cdp.send("Network.enable")
        self.cdp.send("Network.emulateNetworkConditions", SLOW)
        self.types: dict[str, str] = {}
        self.cached: set[str] = set()
        self.bytes = 0
        self.assets = 0
        self.cdp.on("Network.requestWillBeSent", self._sent)
        self.cdp.on("Network.requestServedFromCache", self._from_cache)
        self.cdp.on("Network.responseReceived", self._received)
        self.cdp.on("Network.loadingFinished", self._finished)

    def _sent(self, event: dict) -> None:
        self.types[event["requestId"]] = event.get("type", "").lower()

    def _from_cache(self, event: dict) -> None:
        self.cached.add(event["requestId"])

    def _received(self, event: dict) -> None:
        if event["response"].get("fromDiskCache") or event["response"].get("fromPrefetchCache"):
            self.cached.add(event["requestId"])

    def _finished(self, event: dict) -> None:
        """A request answered over the network (a 304 counts: it is a round trip)."""
        self.bytes += int(event["encodedDataLength"])
        if (self.types.get(event["requestId"]) in ASSET_TYPES
                and event["requestId"] not in self.cached):
            self.assets += 1

    def reset(self) -> None:
        self.bytes = self.assets = 0


def heading(page: Any, text: str) -> None:
    page.wait_for_selector(f"h1:has-text('{text}')", timeout=60_000)


def still(page: Any) -> None:
    """Wait until the shop's frame holds still: it grows to each new page's height and the shop
    scrolls to its top, and a tap aimed meanwhile lands beside the button (as a user's would)."""
    frame = page.locator("iframe.checkout-frame")
    last = None
    while True:
        now = (frame.bounding_box(), page.evaluate("window.scrollY"))
        if now == last:
            return
        last = now
        page.wait_for_timeout(150)


def timed_step(page: Any, text: str, button: str = "Continue", kind: str = "h1",
               shop: Any = None) -> float:
    """Tap ``button`` (in a page, or a frame of ``shop`` once it holds still); the seconds until
    the next step's heading ``text`` (or ``text`` anywhere) is on screen."""
    wanted = {"h1": f"h1:has-text('{text}')", "css": text}.get(kind, f"text={text}")
    if shop is not None:
        still(shop)
    start = time.perf_counter()
    page.get_by_role("button", name=button).click()
    try:
        page.wait_for_selector(wanted, timeout=60_000)
    except Exception:
        # What the user was left looking at, to tell a lost tap from an error page.
        print(f"no {text!r} after {button!r}: at {page.url}\n"
              f"{page.locator('main').inner_text()[:600]}", file=sys.stderr)
        raise
    return time.perf_counter() - start


def walk(browser: Any, origin: str, javascript: bool) -> dict[str, float]:
    context = browser.new_context(java_script_enabled=javascript,
                                  viewport={"width": 360, "height": 780})
    page = context.new_page()
    wire = Wire(page)
    start = time.perf_counter()
    page.goto(f"{origin}/checkout/onramp", wait_until="load")
    page.wait_for_selector("select[name=countryIsoCode]")
    figures = {"first_seconds": time.perf_counter() - start, "first_kb": wire.bytes / 1024}
    page.locator("select[name=countryIsoCode]").select_option("NG")
    if not javascript:
        page.get_by_role("button", name="Update price").click()
        page.wait_for_load_state("load")
    page.locator("input[name=paymentChannel][value=bank]").check()
    page.locator("select[name=network]").select_option("CELO")
    page.locator("select[name=asset]").select_option("USDT")
    page.locator("input[name=amount]").fill("5000")
    if javascript:
        page.wait_for_selector("#quote [data-testid=receive-amount]", timeout=60_000)
        page.wait_for_function("() => !document.querySelector('.htmx-request')")
    wire.reset()
    figures["step_amount"] = timed_step(page, "Where should we send")
    page.wait_for_load_state("load")
    figures["asked_again"] = wire.assets
    page.locator("input[name=address]").fill(ADDRESS)
    page.locator("input[name=email]").fill("slow@example.com")
    figures["step_wallet"] = timed_step(page, "Review your order")
    context.close()
    return figures


PEOPLE = iter(range(10, 100))    # each identity walk is another person (a phone of their own)


def identity_step(target: Any, shop: Any = None) -> dict[str, float]:
    """From the amount step (Kenya chosen, M-PESA), through wallet and phone, to the identity
    step: its two taps timed ("Continue" on a document, "Send" of its form)."""
    target.locator("input[name=paymentChannel][value=mobile_money]").check()
    target.wait_for_selector("#quote [data-testid=receive-amount]", timeout=60_000)
    target.wait_for_function("() => !document.querySelector('.htmx-request')")
    timed_step(target, "Where should we send", shop=shop)
    target.locator("input[name=address]").fill(ADDRESS)
    target.locator("input[name=email]").fill(f"kyc{next(PEOPLE)}@example.com")
    timed_step(target, "Your payment details", shop=shop)
    target.locator("input[name=phoneNumber]").fill(f"07120009{next(PEOPLE):02d}")
    timed_step(target, "Verify your identity", shop=shop)
    target.locator("input[name=document][value=NATIONAL_ID]").check()
    figures = {"choose": timed_step(target, "input[name=id_number]", kind="css", shop=shop)}
    for name, value in (("first_name", "Wanjiru"), ("last_name", "Kamau"),
                        ("dob", "1990-05-17"), ("id_number", "12345678")):
        target.locator(f"[name={name}]").fill(value)
    figures["send"] = timed_step(target, "[data-testid=kyc-pending]", "Send for verification",
                                 kind="css", shop=shop)
    return figures


def kyc_walks(browser: Any, origin: str) -> dict[str, float]:
    """The identity step on the checkout's own page, then in the demo shop's frame."""
    context = browser.new_context(viewport={"width": 360, "height": 780})
    page = context.new_page()
    Wire(page)
    page.goto(f"{origin}/checkout/onramp", wait_until="load")
    page.wait_for_selector("select[name=countryIsoCode]")
    page.locator("select[name=countryIsoCode]").select_option("KE")
    page.locator("select[name=network]").select_option("CELO")
    page.locator("select[name=asset]").select_option("USDT")
    page.locator("input[name=amount]").fill("8000")
    own = identity_step(page)
    context.close()
    context = browser.new_context(viewport={"width": 360, "height": 780})
    page = context.new_page()
    Wire(page)
    shop = origin.replace("localhost", "127.0.0.1")
    page.goto(f"{shop}/?preset=ke-kyc", wait_until="load")
    frame = page.wait_for_selector("iframe.checkout-frame", timeout=60_000).content_frame()
    throttle = context.new_cdp_session(frame)
    throttle.send("Network.enable")
    throttle.send("Network.emulateNetworkConditions", SLOW)
    frame.wait_for_selector("input[name=paymentChannel]", timeout=60_000)
    framed = identity_step(frame, shop=page)
    context.close()
    return {"kyc_choose": own["choose"], "kyc_send": own["send"],
            "framed_kyc_choose": framed["choose"], "framed_kyc_send": framed["send"]}


def framed_walks(browser: Any, origin: str, javascript: bool = True) -> dict[str, float]:
    """The steps of both flows in the demo shop's frame; without JavaScript (the shop's own
    <noscript> frame), the Nigerian sale's."""
    shop = origin.replace("localhost", "127.0.0.1")
    figures: dict[str, float] = {}
    frames_throttled: list[Any] = []

    def open_shop(preset: str) -> tuple[Any, Any, Any]:
        context = browser.new_context(viewport={"width": 360, "height": 780},
                                      java_script_enabled=javascript)
        page = context.new_page()
        Wire(page)
        page.goto(f"{shop}/?preset={preset}", wait_until="load")
        frames = "iframe.checkout-frame" if javascript else "iframe.shop-frame"
        frame = page.wait_for_selector(frames, timeout=60_000).content_frame()
        # The checkout is another site: Chromium runs its frame in a process of its own, which
        # the page's emulation does not reach. The frame gets the same network.
        throttle = context.new_cdp_session(frame)
        throttle.send("Network.enable")
        throttle.send("Network.emulateNetworkConditions", SLOW)
        frames_throttled.append(throttle)
        return context, page, frame

    def nigerian_bank(frame: Any, network: str, asset: str, amount: str) -> None:
        """The amount step filled in (Nigeria, bank), its price shown."""
        frame.wait_for_selector("select[name=countryIsoCode]", timeout=60_000)
        frame.locator("select[name=countryIsoCode]").select_option("NG")
        frame.locator("input[name=paymentChannel][value=bank]").check()
        frame.locator("select[name=network]").select_option(network)
        frame.locator("select[name=asset]").select_option(asset)
        frame.locator("input[name=amount]").fill(amount)
        frame.wait_for_selector("#quote [data-testid=receive-amount]", timeout=60_000)
        frame.wait_for_function("() => !document.querySelector('.htmx-request')")

    if not javascript:
        # The frame keeps its height without script: nothing moves under a tap.
        context, page, frame = open_shop("sell-ng")
        frame.wait_for_selector("select[name=bankCode]", timeout=60_000)
        frame.locator("select[name=bankCode]").select_option("011:02")
        frame.locator("input[name=bankAccountNumber]").fill("0123456789")
        figures["plain_sell_payout"] = timed_step(frame, "We found this account", "Continue",
                                                  "text")
        figures["plain_sell_payee"] = timed_step(frame, "Which wallet do you send",
                                                 "Yes, pay this account")
        frame.locator("input[name=address]").fill(ADDRESS)
        figures["plain_sell_wallet"] = timed_step(frame, "Review your order")
        context.close()
        return figures

    context, page, frame = open_shop("open")
    nigerian_bank(frame, "CELO", "USDT", "5000")
    figures["framed_amount"] = timed_step(frame, "Where should we send", shop=page)
    frame.locator("input[name=address]").fill(ADDRESS)
    frame.locator("input[name=email]").fill("slow@example.com")
    figures["framed_wallet"] = timed_step(frame, "Review your order", shop=page)
    context.close()

    context, page, frame = open_shop("sell-ng")
    frame.wait_for_selector("select[name=bankCode]", timeout=60_000)
    frame.locator("select[name=bankCode]").select_option("011:02")
    frame.locator("input[name=bankAccountNumber]").fill("0123456789")
    figures["sell_payout"] = timed_step(frame, "We found this account", "Continue", "text",
                                        shop=page)
    figures["sell_payee"] = timed_step(frame, "Which wallet do you send",
                                       "Yes, pay this account", shop=page)
    frame.locator("input[name=address]").fill(ADDRESS)
    figures["sell_wallet"] = timed_step(frame, "Review your order", shop=page)
    context.close()

    context, page, frame = open_shop("sell-open")
    nigerian_bank(frame, "POLYGON", "USDC", "20000")
    figures["sell_amount"] = timed_step(frame, "Where should we pay you", shop=page)
    context.close()
    return figures


def measure(origin: str, runs: int) -> dict[str, float]:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
    from playwright.sync_api import sync_playwright

    lost = 0

    def walked(walker: Any, *args: Any) -> dict[str, float]:
        """One walk; a walk whose tap did nothing is walked once more, and counted (printed
        under the table: a tap lost by the checkout is a defect, not noise to average)."""
        nonlocal lost
        try:
            return walker(*args)  # type: ignore[no-any-return]
        except PlaywrightTimeout:
            lost += 1
            return walker(*args)  # type: ignore[no-any-return]

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path="/usr/bin/chromium")
        try:
            scripted = [walked(walk, browser, origin, True) for _ in range(runs)]
            plain = [walked(walk, browser, origin, False) for _ in range(runs)]
            framed = [walked(framed_walks, browser, origin) for _ in range(runs)]
            framed_plain = [walked(framed_walks, browser, origin, False) for _ in range(runs)]
            identity = [walked(kyc_walks, browser, origin) for _ in range(runs)]
        finally:
            browser.close()

    def median(walks: list[dict[str, float]], key: str) -> float:
        return statistics.median(w[key] for w in walks)

    return {
        "first_seconds": median(scripted, "first_seconds"),
        "first_kb": median(scripted, "first_kb"),
        "step_js": max(median(scripted, "step_amount"), median(scripted, "step_wallet")),
        "step_js_amount": median(scripted, "step_amount"),
        "step_js_wallet": median(scripted, "step_wallet"),
        "step_plain": max(median(plain, "step_amount"), median(plain, "step_wallet")),
        "step_plain_amount": median(plain, "step_amount"),
        "step_plain_wallet": median(plain, "step_wallet"),
        "asked_again": median(scripted, "asked_again"),
        **{key: median(framed, key) for key in FRAMED},
        **{key: median(framed_plain, key) for key in FRAMED_PLAIN},
        **{key: median(identity, key) for key in IDENTITY},
        "lost_taps": lost,
    }


ROWS = [
    ("first page: seconds to the first step", "first_seconds", "{:.2f}"),
    ("first page: KB on the wire", "first_kb", "{:.1f}"),
    ("step with JS, amount -> wallet (s)", "step_js_amount", "{:.2f}"),
    ("step with JS, wallet -> review (s)", "step_js_wallet", "{:.2f}"),
    ("step without JS, amount -> wallet (s)", "step_plain_amount", "{:.2f}"),
    ("step without JS, wallet -> review (s)", "step_plain_wallet", "{:.2f}"),
    ("files asked again by the second page", "asked_again", "{:.0f}"),
    ("framed, JS, amount -> wallet (s)", "framed_amount", "{:.2f}"),
    ("framed, JS, wallet -> review (s)", "framed_wallet", "{:.2f}"),
    ("framed, JS, sell: amount -> payout details (s)", "sell_amount", "{:.2f}"),
    ("framed, JS, sell: payout -> account check (s)", "sell_payout", "{:.2f}"),
    ("framed, JS, sell: account check -> wallet (s)", "sell_payee", "{:.2f}"),
    ("framed, JS, sell: wallet -> review (s)", "sell_wallet", "{:.2f}"),
    ("framed, no JS, sell: payout -> account check (s)", "plain_sell_payout", "{:.2f}"),
    ("framed, no JS, sell: account check -> wallet (s)", "plain_sell_payee", "{:.2f}"),
    ("framed, no JS, sell: wallet -> review (s)", "plain_sell_wallet", "{:.2f}"),
    ("identity step, JS: document -> its form (s)", "kyc_choose", "{:.2f}"),
    ("identity step, JS: form -> checking (s)", "kyc_send", "{:.2f}"),
    ("framed, JS, identity: document -> form (s)", "framed_kyc_choose", "{:.2f}"),
    ("framed, JS, identity: form -> checking (s)", "framed_kyc_send", "{:.2f}"),
]
FRAMED = ("framed_amount", "framed_wallet", "sell_amount", "sell_payout", "sell_payee",
          "sell_wallet")
FRAMED_PLAIN = ("plain_sell_payout", "plain_sell_payee", "plain_sell_wallet")
IDENTITY = ("kyc_choose", "kyc_send", "framed_kyc_choose", "framed_kyc_send")
TARGET_OF = {"first_seconds": "first_seconds", "first_kb": "first_kb",
             "step_js_amount": "step_js", "step_js_wallet": "step_js",
             "step_plain_amount": "step_plain", "step_plain_wallet": "step_plain",
             "asked_again": "asked_again", **{key: "step_js" for key in FRAMED},
             **{key: "step_plain" for key in FRAMED_PLAIN},
             **{key: "step_js" for key in IDENTITY}}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="the revision before the changes")
    parser.add_argument("--runs", type=int, default=3, help="walks of each kind (the median)")
    args = parser.parse_args()
    results = {}
    with tempfile.TemporaryDirectory() as folder:
        for label, tree in ((args.before, export(args.before, Path(folder))),
                            ("now", ROOT)):
            server = Server(tree)
            print(f"walking {label}", file=sys.stderr, flush=True)
            try:
                results[label] = measure(server.origin, args.runs)
            finally:
                server.stop()
    before, now = results[args.before], results["now"]
    print(f"600 ms round trip, 400 kbit/s; median of {args.runs} walks; the on-ramp on its own "
          f"page, then both flows in the demo shop's frame")
    print(f"{'':48} {args.before:>9} {'now':>9} {'target':>8}")
    missed = 0
    for title, key, form in ROWS:
        target = TARGETS[TARGET_OF[key]]
        met = now[key] <= target
        missed += not met
        print(f"{title:48} {form.format(before[key]):>9} {form.format(now[key]):>9} "
              f"{'<= ' + format(target, 'g'):>8} {'met' if met else 'MISSED'}")
    print(f"{'walks walked again (a tap that did nothing)':48} "
          f"{before['lost_taps']:>9} {now['lost_taps']:>9}")
    return 1 if missed or now["lost_taps"] else 0


if __name__ == "__main__":
    sys.exit(main())
