"""What standing in the middle costs: the checkout's live price and a whole checkout of each flow,
beside the same upstream calls made directly with the client, over real HTTP with a slow upstream.

    .venv/bin/python bench/proxy_overhead.py [--latency 0.1] [--samples 7] [--workers 1]

Two gunicorn servers on loopback: the sandbox upstream (``checkout.sandbox``) answering every
``/api/`` request ``--latency`` seconds late (its ``SANDBOX_LATENCY`` setting: a round trip to the
real service), and the checkout (``CHECKOUT_API_BASE_URL`` pointing at it, SQLite, no rate limits).
In front of the sandbox, a small WSGI wrapper writes down each API call as it arrives, so the calls
of one checkout are counted at the upstream's side; ``GET /bench/calls`` hands them over.

In one run it measures (medians of ``--samples``):

- the direct call: ``UpstreamClient.onramp_best_offer``, as a merchant calling the API would;
- the first live price of a fresh session (``GET /s/<id>/quote`` after the session's page was
  served), each sample on a corridor no earlier session priced (its limits not yet seen);
- later ("warm") live prices of the same session, a different amount each time (so the few
  seconds' memory of shown prices does not answer them);
- a whole checkout of each flow (on-ramp: choose, price, wallet, review, create, pay page;
  off-ramp: choose, price, payout, payee check, wallet, review, create, deposit page), first on a
  checkout that never served the flow, then again, and the upstream calls each made, beside the
  minimum the flow needs and the time those calls take made directly.

Ratios are within one run, so a loaded machine slows both sides alike. Target (issue 11): a live
price, first or later, within 1.10 times the direct call.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

TARGET = 1.10
PREFIX = "/checkout"
WALLET = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
NG_ACCOUNT = {"bankCode": "011:02", "bankAccountNumber": "0123456789"}


@dataclass(frozen=True)
class Purchase:
    """What one checkout of a flow is, for the bench: its draft, the calls it cannot do without
    (the minimum), the reference data it needs once per reference TTL, not per checkout, and
    why the checkout makes the calls it makes beyond the minimum (by design, each of them)."""

    flow: str
    draft: dict[str, str]
    minimum: tuple[str, ...]
    reference: tuple[str, ...]
    beyond: dict[str, str]


SHOWN_PRICE = ("the price shown while typing is shared by sessions for a few seconds; the "
               "order's own quote is asked for this session alone")
OTHER_WORKER = ("the pay or deposit page was served by another worker than the create, which "
                "alone has the create's answer")
# A bank transfer in Nigeria each way (manual transfer instructions; a bank payout).
BUY = Purchase(
    "onramp", {"countryIsoCode": "NG", "paymentChannel": "bank", "network": "CELO",
               "asset": "USDT", "currency": "local", "amount": "5000"},
    minimum=("GET /api/onramp/best-offer", "POST /api/onramp/order/create"),
    reference=("GET /api/onramp/payment-channels", "GET /api/onramp/assets",
               "GET /api/onramp/limits", "GET /api/util/countries"),
    # The pay page shows the create's answer (checkout.journey.just_created), when one worker
    # serves both.
    beyond={"GET /api/onramp/best-offer": SHOWN_PRICE, "GET /api/onramp/order": OTHER_WORKER})
SELL = Purchase(
    "offramp", {"countryIsoCode": "NG", "paymentChannel": "bank", "network": "POLYGON",
                "asset": "USDC", "currency": "local", "amount": "20000"},
    minimum=("GET /api/offramp/best-offer", "POST /api/offramp/validate-fields",
             "POST /api/offramp/create-order"),
    # Not /api/util/countries: both flows read it through one cache, and the on-ramp's checkout
    # has just asked it.
    reference=("GET /api/offramp/countries", "GET /api/offramp/wallets",
               "GET /api/offramp/limits"),
    beyond={"GET /api/offramp/best-offer": SHOWN_PRICE, "GET /api/offramp/order/<id>": OTHER_WORKER})


# -- the served apps (gunicorn imports these) ------------------------------------------------------

class CallLog:
    """WSGI wrapper of the sandbox: each ``/api/`` call is written down when it arrives."""

    def __init__(self, app: Callable[..., Any]) -> None:
        self.app = app
        self.calls: list[str] = []
        self.lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Callable[..., Any]) -> Any:
        path = environ.get("PATH_INFO", "")
        if path == "/bench/calls":
            with self.lock:
                calls, self.calls = self.calls, []
            start_response("200 OK", [("Content-Type", "application/json")])
            return [json.dumps(calls).encode()]
        if path.startswith("/api/"):
            path = re.sub(r"^/api/offramp/order/[^/]+$", "/api/offramp/order/<id>", path)
            with self.lock:
                self.calls.append(f"{environ['REQUEST_METHOD']} {path}")
        return self.app(environ, start_response)


def create_sandbox() -> CallLog:
    from checkout.sandbox import create_app

    # No webhooks: the calls of a checkout are those its pages make, counted exactly. A status
    # webhook would add one order fetch by the receiver, later (CHECKOUT_WEBHOOK_FETCH_ORDERS).
    return CallLog(create_app({"SANDBOX_LATENCY": float(os.environ["BENCH_LATENCY"])}))


def create_checkout() -> Any:
    from flask import Flask

    from checkout import Checkout
    from checkout import config as defaults

    app = Flask("bench_shop")
    app.config.update(
        CHECKOUT_API_BASE_URL=os.environ["BENCH_UPSTREAM"],
        CHECKOUT_CLIENT_ID=defaults.SANDBOX_CLIENT_ID,
        CHECKOUT_WEBHOOK_SECRET=defaults.SANDBOX_WEBHOOK_SECRET,
        CHECKOUT_LAUNCH_SECRET=defaults.SANDBOX_LAUNCH_SECRET,
        CHECKOUT_PUBLIC_URL=os.environ["BENCH_PUBLIC_URL"],
        CHECKOUT_DATABASE_URL=os.environ["BENCH_DATABASE_URL"],
        CHECKOUT_RATELIMIT_ENABLED=False,       # one client asks fast: not what is measured
        CHECKOUT_TESTNET=True,
    )
    Checkout(app)
    return app


# -- servers ---------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def serve(factory: str, port: int, env: dict[str, str], workers: int) -> Iterator[str]:
    """gunicorn (gthread) serving ``factory`` of this file, with this worktree's code."""
    gunicorn = Path(sys.executable).with_name("gunicorn")
    proc = subprocess.Popen(
        [str(gunicorn), "-w", str(workers), "-k", "gthread", "--threads", "16",
         "-b", f"127.0.0.1:{port}", "--log-level", "warning", "--chdir", str(ROOT / "bench"),
         f"proxy_overhead:{factory}()"],
        env={**os.environ, **env, "PYTHONPATH": str(ROOT)}, stdout=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}"
    try:
        import requests

        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"gunicorn ({factory}) exited")
            try:
                # An answer, not just a listening socket: the workers have built their apps.
                requests.get(f"{base}/", timeout=5)
                break
            except (requests.ConnectionError, requests.Timeout):     # booting, on a busy machine
                if time.monotonic() > deadline:
                    raise RuntimeError(f"gunicorn ({factory}) did not start") from None
                time.sleep(0.1)
        yield base
    finally:
        proc.terminate()
        proc.wait(15)


# -- one shopper through the checkout -------------------------------------------------------------

class Shopper:
    """One browser: a session of the checkout, driven over HTTP as its pages would."""

    def __init__(self, base: str) -> None:
        import requests

        self.http = requests.Session()
        self.base = base
        self.session_id = ""
        self.csrf = ""

    def _keep(self, response: Any) -> Any:
        assert response.status_code < 400, (response.status_code, response.text[:500])
        found = re.search(r'name="csrf_token" value="([^"]+)"', response.text)
        if found:
            self.csrf = found.group(1)
        return response

    def get(self, path: str, **kwargs: Any) -> Any:
        return self._keep(self.http.get(self.base + path, timeout=60, **kwargs))

    def post(self, path: str, form: dict[str, Any]) -> Any:
        """A form posted, and the page its redirect leads to."""
        return self._keep(self.http.post(self.base + path, data={"csrf_token": self.csrf, **form},
                                         timeout=60))

    @property
    def page(self) -> str:
        return f"{PREFIX}/s/{self.session_id}"

    def open(self, flow: str = "onramp") -> Any:
        """The merchant's link opened: the session is made and its first page served."""
        response = self.get(f"{PREFIX}/{flow}")
        self.session_id = response.url.split("/s/", 1)[1].split("/", 1)[0]
        return response

    def live_price(self, draft: dict[str, Any]) -> float:
        """Seconds for the price under the amount (what htmx asks as the user types)."""
        t = time.perf_counter()
        response = self.get(f"{self.page}/quote", params=draft,
                            headers={"HX-Request": "true"})
        elapsed = time.perf_counter() - t
        # A price, not a message in its place ("outside the limits", "not available").
        assert '<p id="quote-message"></p>' in response.text, response.text[:500]
        return elapsed

    def checkout(self, purchase: Purchase) -> Any:
        """The whole checkout of a fresh session: its pay (or deposit) page."""
        self.open(purchase.flow)
        self.live_price(purchase.draft)
        self.post(f"{self.page}/choose", purchase.draft)
        if purchase.flow == "offramp":
            page = self.post(f"{self.page}/payout", NG_ACCOUNT)
            check = re.search(r'name="check" value="([^"]*)"', page.text)
            assert page.url.endswith("/payee") and check, page.url
            self.post(f"{self.page}/payee", {"check": check.group(1), "confirm": "yes"})
            page = self.post(f"{self.page}/wallet", {"address": WALLET})
        else:
            page = self.post(f"{self.page}/wallet", {"address": WALLET,
                                                     "email": "ada@example.com"})
            if page.url.endswith("/details"):
                page = self.post(f"{self.page}/details", {"phoneNumber": "08012345678"})
        assert page.url.endswith("/review"), page.url
        quote = re.search(r'name="quote_id" value="([^"]+)"', page.text)
        digest = re.search(r'name="review_digest" value="([^"]+)"', page.text)
        assert quote and digest, page.text[:2000]
        page = self.post(f"{self.page}/create", {"quote_id": quote.group(1),
                                                 "review_digest": digest.group(1)})
        assert page.url.endswith(("/pay", "/deposit")), page.url
        return page


# -- measuring -------------------------------------------------------------------------------------

def calls_seen(upstream: str) -> list[str]:
    import requests

    return list(requests.get(f"{upstream}/bench/calls", timeout=10).json())


def corridors(client: Any, count: int) -> list[dict[str, str]]:
    """``count`` on-ramp corridors the sandbox prices (no carrier to pick), with an amount
    inside their limits; the checkout's own corridor is never one of them."""
    pairs = [(p.network, p.asset) for p in client.onramp_assets()]
    found: list[dict[str, str]] = []
    for country in client.onramp_payment_channels():
        for channel in country.payment_channels:
            if channel.requires_carrier:
                continue
            for network, asset in pairs:
                if (country.country_iso_code, channel.payment_channel, network, asset) == \
                        tuple(BUY.draft[k] for k in ("countryIsoCode", "paymentChannel",
                                                     "network", "asset")):
                    continue
                limits = client.onramp_limits(network=network, asset=asset,
                                              country_iso_code=country.country_iso_code,
                                              payment_channel=channel.payment_channel)
                if not limits.available:
                    continue
                amount = (limits.min_local_currency * 3).quantize(Decimal(1))
                if amount > limits.max_local_currency:
                    continue
                found.append({"countryIsoCode": country.country_iso_code,
                              "paymentChannel": channel.payment_channel, "network": network,
                              "asset": asset, "currency": "local", "amount": str(amount)})
                if len(found) == count:
                    return found
    raise RuntimeError(f"the sandbox prices fewer than {count} corridors")


def median_ms(samples: list[float]) -> float:
    return statistics.median(samples) * 1000


def run(args: argparse.Namespace) -> dict[str, Any]:
    from checkout import config as defaults
    from checkout.upstream.client import UpstreamClient

    sandbox_port, shop_port = _free_port(), _free_port()
    shop = f"http://127.0.0.1:{shop_port}"
    with tempfile.TemporaryDirectory(prefix="bench-proxy-") as tmp:
        database = f"sqlite:///{tmp}/bench.sqlite3"
        os.environ["BENCH_DATABASE_URL"] = database
        sandbox_env = {"BENCH_LATENCY": str(args.latency)}
        shop_env = {"BENCH_UPSTREAM": f"http://127.0.0.1:{sandbox_port}",
                    "BENCH_PUBLIC_URL": shop, "BENCH_DATABASE_URL": database}
        with serve("create_sandbox", sandbox_port, sandbox_env, 1) as upstream:
            # The tables, once, before the checkout's workers start (as a deploy step would).
            os.environ.update(shop_env)
            create_checkout().extensions["checkout"].engine.dispose()
            client = UpstreamClient(upstream, client_id=defaults.SANDBOX_CLIENT_ID)
            fresh = corridors(client, args.samples)
            with serve("create_checkout", shop_port, shop_env, args.workers) as base:
                return measure(args, client, upstream, base, fresh)


def direct_checkout(client: Any, purchase: Purchase, n: int) -> None:
    """The minimum of one checkout, made directly with the client."""
    draft = purchase.draft
    amount = Decimal(draft["amount"])
    reference = f"bench-direct-{n}-{time.time_ns()}"
    if purchase.flow == "onramp":
        quote = client.onramp_best_offer(
            network=draft["network"], asset=draft["asset"], currency="local", amount=amount,
            country_iso_code=draft["countryIsoCode"], payment_channel=draft["paymentChannel"])
        client.onramp_create_order(quote_id=quote.quote_id, network=draft["network"],
                                   asset=draft["asset"], amount=amount, currency="local",
                                   email="ada@example.com", user_ip="127.0.0.1", address=WALLET,
                                   order_params=reference)
        return
    offer = client.offramp_typed_best_offer(
        amount=amount, currency="local", country=draft["countryIsoCode"],
        type=draft["paymentChannel"], network=draft["network"], asset=draft["asset"])
    client.offramp_validate_fields(offer.offer_id, NG_ACCOUNT)
    client.offramp_create_order(offer_id=offer.offer_id, payment_type="CRYPTO_WALLET",
                                network=draft["network"], asset=draft["asset"], address=WALLET,
                                currency="local", amount=amount, ip="127.0.0.1",
                                order_params=reference, required_fields=NG_ACCOUNT)


def measure(args: argparse.Namespace, client: Any, upstream: str, base: str,
            fresh: list[dict[str, str]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for purchase in (BUY, SELL):
        # A whole checkout on a checkout that never served this flow: what a session costs when
        # nothing is cached yet (the first shopper after a deploy, or after the reference TTL);
        # then another: reference data cached, as for nearly every shopper.
        for state in ("cold", "warm"):
            calls_seen(upstream)
            t = time.perf_counter()
            Shopper(base).checkout(purchase)
            result[purchase.flow, state] = (time.perf_counter() - t, calls_seen(upstream))
        direct = []
        for n in range(args.samples):
            t = time.perf_counter()
            direct_checkout(client, purchase, n)
            direct.append(time.perf_counter() - t)
        result[purchase.flow, "direct"] = median_ms(direct)

    # Live prices: first of a fresh session, then warm ones, each beside a direct call made just
    # before it, so that a busy moment of the machine falls on both sides alike.
    draft = BUY.draft
    direct: list[float] = []
    first: list[float] = []
    warm: list[float] = []

    def direct_price(n: int) -> None:
        t = time.perf_counter()
        client.onramp_best_offer(
            network=draft["network"], asset=draft["asset"], currency="local",
            amount=Decimal(5000 + n), country_iso_code=draft["countryIsoCode"],
            payment_channel=draft["paymentChannel"])
        direct.append(time.perf_counter() - t)

    for n, corridor in enumerate(fresh):
        shopper = Shopper(base)
        shopper.open()
        direct_price(n)
        first.append(shopper.live_price(corridor))
        for k in range(1, 4):
            direct_price(n * 10 + k)
            warm.append(shopper.live_price({**corridor,
                                            "amount": str(int(corridor["amount"]) + k)}))
    calls_seen(upstream)
    result.update(direct_ms=median_ms(direct), first_ms=median_ms(first), warm_ms=median_ms(warm),
                  first_all=[round(s * 1000) for s in first])
    return result


def report(args: argparse.Namespace, r: dict[str, Any]) -> bool:
    direct = r["direct_ms"]
    print(f"\nupstream latency {args.latency * 1000:.0f} ms per request; checkout: gunicorn "
          f"{args.workers} worker(s) x 16 threads; {os.cpu_count()} CPUs; medians of "
          f"{args.samples}\n")
    print(f"{'live price (on-ramp)':<44} {'ms':>8} {'x direct':>9} {'target':>8}")
    print(f"{'direct client call (best-offer)':<44} {direct:>8.0f} {1:>9.2f}")
    met = True
    for label, key in (("first of a fresh session (new corridor)", "first_ms"),
                       ("later ones (warm)", "warm_ms")):
        ratio = r[key] / direct
        met &= ratio <= TARGET
        print(f"{label:<44} {r[key]:>8.0f} {ratio:>9.2f} "
              f"{'met' if ratio <= TARGET else 'MISSED':>8}")
    print(f"  first prices, each sample (ms): {r['first_all']}")

    for purchase in (BUY, SELL):
        print(f"\n{'whole ' + purchase.flow + ' checkout':<44} {'ms':>8} {'calls':>9} "
              f"{'minimum':>8}")
        print(f"{'direct: the minimum':<44} {r[purchase.flow, 'direct']:>8.0f} "
              f"{len(purchase.minimum):>9} {len(purchase.minimum):>8}")
        for label, state, minimum in (
                ("through the checkout, first of its flow", "cold",
                 purchase.minimum + purchase.reference),
                ("through the checkout, reference cached", "warm", purchase.minimum)):
            seconds, calls = r[purchase.flow, state]
            print(f"{label:<44} {seconds * 1000:>8.0f} {len(calls):>9} {len(minimum):>8}")
            needed = Counter(minimum)
            for call, count in sorted(Counter(calls).items()):
                extra = count - needed.get(call, 0)
                why = purchase.beyond.get(call, "?")
                print(f"    {count} x {call}"
                      + (f"  ({extra} beyond the minimum: {why})" if extra > 0 else ""))
    print("\n(a checkout's time is all its pages, one after another with no time to think; the "
          "sandbox sends\nno webhooks here: each status webhook costs one more order fetch, "
          "later, by the receiver)")
    print(f"\ntarget {TARGET:.2f} x direct for every live price: {'MET' if met else 'MISSED'}")
    return met


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--latency", type=float, default=0.1,
                        help="seconds the sandbox waits before each API answer")
    parser.add_argument("--samples", type=int, default=7)
    parser.add_argument("--workers", type=int, default=1)
    args = parser.parse_args()
    met = report(args, run(args))
    sys.exit(0 if met else 1)


if __name__ == "__main__":
    main()
