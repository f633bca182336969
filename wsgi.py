"""The demo host site: a merchant page that frames the checkout, on the embedded sandbox.

``python wsgi.py`` serves, from one process on 127.0.0.1:5000 (``PORT`` to change it):

* http://127.0.0.1:5000/ : the merchant's page. It launches the checkout with a signed token
  (``parentOrigin`` = this page's origin) and lists the events the checkout posts to it.
* http://localhost:5000/checkout/... : the checkout. ``localhost`` and ``127.0.0.1`` are two
  sites to a browser, so the checkout runs in a cross-site iframe with third-party cookies
  blocked, as it will on a real merchant's page.
* http://localhost:5000/checkout/sandbox/ : the sandbox's console (orders with outcome buttons,
  webhook deliveries), served by the checkout itself like the sandbox's payment pages. The sandbox
  delivers its webhooks to this same server's ``/checkout/webhooks``.

The shop keeps one launch per basket, as the README asks of merchants: the visitor gets a basket id
in a first-party cookie, and a reload (or "Back to the shop" after a redirect payment) mounts the
same launch URL again, so the same checkout session opens where it stood. "New basket" starts over.

With gunicorn: ``gunicorn -b 127.0.0.1:5000 wsgi:app`` (one worker: the sandbox keeps its orders,
and the shop its baskets, in memory).
"""
from __future__ import annotations

import os
import re
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from flask import Flask, Response, redirect, render_template_string, request
from werkzeug.wrappers import Response as BaseResponse

from checkout import Checkout
from checkout.errors import LaunchTokenError
from checkout.paths import STATIC

PORT = int(os.environ.get("PORT", "5000"))
SHOP_ORIGIN = f"http://127.0.0.1:{PORT}"        # the merchant's site
CHECKOUT_ORIGIN = f"http://localhost:{PORT}"    # the checkout's site (same server, another name)
# The sandbox's clock: 0.2 makes a minute of upstream processing take 12 seconds, slow enough to
# watch each status arrive, fast enough not to wait.
TIME_SCALE = float(os.environ.get("SANDBOX_TIME_SCALE", "0.2"))

# The shop's own wallet on Celo (a demo address: the sandbox moves no real money).
MERCHANT_WALLET = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

# What the shop sells. "flow" picks the checkout's flow; the claims prefill (and lock) its choices.
PRESETS: dict[str, dict[str, Any]] = {
    "ng": {"flow": "onramp", "label": "5,000 NGN of USDC on Celo (Nigeria, bank transfer)",
           "claims": {"network": "CELO", "asset": "USDC", "amount": "5000",
                      "currency": "local", "countryIsoCode": "NG", "paymentChannel": "bank",
                      "lock": ["network", "asset"]}},
    "ke": {"flow": "onramp", "label": "1,500 KES of USDT on Celo (Kenya, in Swahili)",
           "claims": {"network": "CELO", "asset": "USDT", "amount": "1500",
                      "currency": "local", "countryIsoCode": "KE", "locale": "sw",
                      "lock": ["network", "asset"]}},
    # About 60 USD: above Kenya's 15 USD threshold, so the checkout asks for basic KYC first (the
    # sandbox approves a document in 12 s at this time scale; last name "Reject" to see a refusal).
    "ke-kyc": {"flow": "onramp",
               "label": "8,000 KES of USDT on Celo (Kenya: verify your identity first)",
               "claims": {"network": "CELO", "asset": "USDT", "amount": "8000",
                          "currency": "local", "countryIsoCode": "KE",
                          "lock": ["network", "asset"]}},
    "open": {"flow": "onramp", "label": "Let the customer choose everything", "claims": {}},
    "sell-ng": {"flow": "offramp",
                "label": "Sell USDC on Polygon for NGN to a bank account (Nigeria)",
                "claims": {"network": "POLYGON", "asset": "USDC", "amount": "20000",
                           "currency": "local", "countryIsoCode": "NG", "paymentChannel": "bank",
                           "lock": ["network", "asset"]}},
    "sell-ke": {"flow": "offramp", "label": "Sell USDT on Celo to M-PESA (Kenya, in Swahili)",
                "claims": {"network": "CELO", "asset": "USDT", "countryIsoCode": "KE",
                           "paymentChannel": "mobile_money", "locale": "sw",
                           "lock": ["network", "asset"]}},
    # The merchant pays the customer out of its own funds: the amount is the merchant's to set,
    # and the sending wallet is the merchant's (where a refund would go).
    "payout-ke": {"flow": "offramp", "label": "Merchant-funded payout to M-PESA",
                  "claims": {"network": "CELO", "asset": "USDT", "amount": "1500",
                             "currency": "local", "countryIsoCode": "KE",
                             "paymentChannel": "mobile_money", "paymentType": "VIRTUAL_WALLET",
                             "address": MERCHANT_WALLET, "lock": ["amount", "currency"]}},
    "sell-open": {"flow": "offramp", "label": "Let the customer choose everything (sell)",
                  "claims": {}},
}
GROUPS = (("Buy", "onramp"), ("Sell", "offramp"))
# The shop's two looks: its page and the checkout in it, light or dark.
MODES = ("light", "dark")
FRAME_TITLES = {"onramp": "Buy stablecoins", "offramp": "Sell stablecoins"}

# One launch per basket: a token lives 30 minutes (the most a launch token may), and the shop
# hands out the same launch URL while more than a minute of it is left, so that the checkout has
# time to open the session before the token expires.
LAUNCH_TTL = 30 * 60
REUSE_MARGIN = 60
BASKET_COOKIE = "demo_basket"
BASKET_ID = re.compile(r"^[0-9a-f]{16}$")
MAX_LAUNCHES = 10_000          # a demo in memory: bounded, whoever reloads it how often


@dataclass(frozen=True)
class Launch:
    url: str
    expires_at: float


class Baskets:
    """Launch URLs per (basket, preset), kept in memory while their tokens are valid.

    A launch token opens one checkout session and presenting it again returns to that session: so
    the same URL for the same basket makes a reload, or the way back from a payment page, land on
    the checkout where the customer left it, and never on an empty one.
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._launches: dict[tuple[str, str], Launch] = {}

    @staticmethod
    def order_params(basket: str, preset: str) -> str:
        """The shop's reference of this basket's order: the same for every token it is given."""
        return f"demo-{preset}-{basket}"

    def launch_url(self, basket: str, preset: str, issue: Callable[[str], str]) -> str:
        """The basket's launch URL for ``preset``; ``issue(order_params)`` signs a new one."""
        now = time.time()
        with self._lock:  # two tabs reloading at once still share one token
            launch = self._launches.get((basket, preset))
            if launch is not None and launch.expires_at - now > REUSE_MARGIN:
                return launch.url
            launch = Launch(issue(self.order_params(basket, preset)), now + LAUNCH_TTL)
            self._launches[(basket, preset)] = launch
            self._prune(now)
            return launch.url

    def forget(self, basket: str) -> None:
        with self._lock:
            for key in [k for k in self._launches if k[0] == basket]:
                del self._launches[key]

    def _prune(self, now: float) -> None:
        for key in [k for k, v in self._launches.items() if v.expires_at <= now]:
            del self._launches[key]
        if len(self._launches) > MAX_LAUNCHES:
            oldest = sorted(self._launches, key=lambda k: self._launches[k].expires_at)
            for key in oldest[:len(self._launches) - MAX_LAUNCHES]:
                del self._launches[key]


SHOP_PAGE = """<!doctype html>
<html lang="en" data-mode="{{ mode }}">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <meta name="color-scheme" content="{{ mode }}">
  <title>Demo shop</title>
  <link rel="stylesheet" href="/demo/shop.css">
  {#- The shop's own icon: without one the browser asks for /favicon.ico, which is not here. #}
  <link rel="icon" href="/demo/favicon.svg" type="image/svg+xml">
  <script src="{{ checkout_origin }}/checkout/static/embed.js" defer></script>
  <script src="/demo/shop.js" defer></script>
</head>
<body>
  <header>
    <h1>Demo shop</h1>
    <p>A merchant's page on {{ shop_origin }} with the checkout from {{ checkout_origin }} in an
       iframe. Everything runs on the sandbox: no real money moves.</p>
    <nav aria-label="What to try" class="shop-presets">
      {%- for heading, flow in groups %}
      <section>
        <h2>{{ heading }}</h2>
        <ul>
          {%- for key, preset in presets.items() if preset.flow == flow %}
          <li><a href="/?preset={{ key }}&amp;mode={{ mode }}"
                 {%- if key == current %} aria-current="page"{% endif %}>{{ preset.label }}</a></li>
          {%- endfor %}
        </ul>
      </section>
      {%- endfor %}
    </nav>
    <p class="shop-modes">Look:
      {%- for each in modes %}
      <a href="/?preset={{ current }}&amp;mode={{ each }}"
         {%- if each == mode %} aria-current="page"{% endif %}>{{ each|capitalize }}</a>
      {%- endfor %}</p>
    <p class="shop-basket">Basket <code>{{ basket }}</code>: reloading this page, or coming back
       from a payment page, reopens the same checkout.
       <a href="/basket/new?preset={{ current }}">New basket</a></p>
    <p><a href="{{ checkout_origin }}/checkout/sandbox/">Sandbox console: orders, forced outcomes,
       webhook deliveries</a></p>
  </header>
  <main class="shop-layout">
    {%- if launch %}
    <div id="checkout" class="shop-checkout" data-checkout-url="{{ launch }}"
         data-checkout-title="{{ frame_title }}">
      {#- Without JavaScript embed.js does not run: the page frames the launch itself (README,
          "Without JavaScript"). -#}
      <noscript><iframe class="shop-frame" src="{{ launch }}" title="{{ frame_title }}"
                        allow="clipboard-write; payment; camera"></iframe></noscript>
    </div>
    {%- else %}
    <div class="shop-checkout shop-notice" role="alert">
      <p>This checkout cannot open this preset: {{ launch_error }}</p>
    </div>
    {%- endif %}
    <section>
      <h2>Events received from the checkout</h2>
      <ol id="checkout-events" class="shop-events"></ol>
    </section>
  </main>
</body>
</html>
"""


def create_app() -> Flask:
    app = Flask(__name__, static_folder=str(STATIC / "demo"), static_url_path="/demo")
    app.config.update(
        # Resume links and return addresses are built from this, never from a request's Host.
        CHECKOUT_PUBLIC_URL=CHECKOUT_ORIGIN,
        CHECKOUT_FRAME_ANCESTORS=[SHOP_ORIGIN],
        CHECKOUT_MERCHANT_NAME="Demo shop",
        # Whom a customer contacts about an order: shown on failure, waiting and status pages.
        CHECKOUT_SUPPORT={"email": "help@shop.example", "whatsapp": "+254712345678"},
        # The checkout in the shop's own colours and type, light or dark as the shop is
        # (the launch token's colorScheme: see MODES).
        CHECKOUT_THEME={"accent": "#6b3d12", "accent_text": "#ffffff", "radius": 6,
                        "font": "serif", "scheme": "auto"},
        CHECKOUT_SANDBOX={
            "SANDBOX_TIME_SCALE": TIME_SCALE,
            "SANDBOX_WEBHOOK_URL": f"{SHOP_ORIGIN}/checkout/webhooks",
            "SANDBOX_WEBHOOK_ALLOW_LOOPBACK": True,
        },
    )
    checkout = Checkout(app)

    baskets = Baskets()

    def shop_only() -> BaseResponse | None:
        # The shop must be another site than the checkout, or the demo would prove nothing.
        if request.host != f"127.0.0.1:{PORT}":
            return redirect(f"{SHOP_ORIGIN}{request.full_path.rstrip('?')}", code=302)
        return None

    def mode_of() -> str:
        mode = request.args.get("mode", "light")
        return mode if mode in MODES else "light"

    def preset_key() -> str:
        key = request.args.get("preset", "ng")
        return key if key in PRESETS else "ng"

    def remember_basket(response: BaseResponse, basket: str) -> None:
        # First-party (the shop's own origin), out of scripts' reach, and sent when the customer
        # comes back from a payment page by a top-level link (Lax), not by other sites' requests.
        response.set_cookie(BASKET_COOKIE, basket, max_age=7 * 24 * 3600, httponly=True,
                            samesite="Lax", secure=request.is_secure)

    @app.get("/")
    def shop() -> BaseResponse:
        """The merchant's page with the basket's checkout: the same launch until it expires."""
        other_host = shop_only()
        if other_host is not None:
            return other_host
        current, mode = preset_key(), mode_of()
        preset = PRESETS[current]
        basket = request.cookies.get(BASKET_COOKIE, "")
        fresh_basket = not BASKET_ID.match(basket)
        if fresh_basket:
            basket = secrets.token_hex(8)

        def issue(order_params: str) -> str:
            return checkout.launch_url(preset["flow"], _base_url=CHECKOUT_ORIGIN, _ttl=LAUNCH_TTL,
                                       parentOrigin=SHOP_ORIGIN, colorScheme=mode,
                                       returnUrl=f"{SHOP_ORIGIN}/?preset={current}&mode={mode}",
                                       orderParams=order_params, **preset["claims"])

        launch, launch_error = None, None
        try:
            # Each look is its own launch (the token carries it): one per basket, as ever.
            launch = baskets.launch_url(basket, f"{current}:{mode}", issue)
        except LaunchTokenError as exc:
            # A preset this checkout does not take (yet): say so rather than fail the whole page.
            launch_error = getattr(exc, "detail", None) or str(exc)
        response = Response(render_template_string(
            SHOP_PAGE, launch=launch, launch_error=launch_error, presets=PRESETS, groups=GROUPS,
            current=current, mode=mode, modes=MODES, basket=basket,
            frame_title=FRAME_TITLES[preset["flow"]],
            shop_origin=SHOP_ORIGIN, checkout_origin=CHECKOUT_ORIGIN))
        if fresh_basket:
            remember_basket(response, basket)
        response.headers["Content-Security-Policy"] = (
            f"default-src 'none'; script-src 'self' {CHECKOUT_ORIGIN}; style-src 'self'; "
            f"img-src 'self'; frame-src {CHECKOUT_ORIGIN}; base-uri 'none'; form-action 'self'")
        response.headers["Cache-Control"] = "no-store"
        return response

    @app.get("/basket/new")
    def new_basket() -> BaseResponse:
        """Start over: a new basket, so the next checkout is a new session."""
        other_host = shop_only()
        if other_host is not None:
            return other_host
        old = request.cookies.get(BASKET_COOKIE, "")
        if BASKET_ID.match(old):
            baskets.forget(old)
        response = redirect(f"/?preset={preset_key()}", code=303)
        remember_basket(response, secrets.token_hex(8))
        response.headers["Cache-Control"] = "no-store"
        return response

    return app


app = create_app()

if __name__ == "__main__":
    print(f"Demo shop:       {SHOP_ORIGIN}/")
    print(f"Sandbox console: {CHECKOUT_ORIGIN}/checkout/sandbox/")
    app.run(host="127.0.0.1", port=PORT, threaded=True, use_reloader=False)
