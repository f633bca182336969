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

With gunicorn: ``gunicorn -b 127.0.0.1:5000 wsgi:app`` (one worker: the sandbox keeps its orders
in memory).
"""
from __future__ import annotations

import os
import secrets
from typing import Any

from flask import Flask, Response, redirect, render_template_string, request

from checkout import Checkout
from checkout.paths import STATIC

PORT = int(os.environ.get("PORT", "5000"))
SHOP_ORIGIN = f"http://127.0.0.1:{PORT}"        # the merchant's site
CHECKOUT_ORIGIN = f"http://localhost:{PORT}"    # the checkout's site (same server, another name)
# The sandbox's clock: 0.2 makes a minute of upstream processing take 12 seconds, slow enough to
# watch each status arrive, fast enough not to wait.
TIME_SCALE = float(os.environ.get("SANDBOX_TIME_SCALE", "0.2"))

PRESETS: dict[str, dict[str, Any]] = {
    "ng": {"label": "5,000 NGN of USDC on Celo (Nigeria, bank transfer)",
           "claims": {"network": "CELO", "asset": "USDC", "amount": "5000",
                      "currency": "local", "countryIsoCode": "NG", "paymentChannel": "bank",
                      "lock": ["network", "asset"]}},
    "ke": {"label": "1,500 KES of USDT on Celo (Kenya, in Swahili)",
           "claims": {"network": "CELO", "asset": "USDT", "amount": "1500",
                      "currency": "local", "countryIsoCode": "KE", "locale": "sw",
                      "lock": ["network", "asset"]}},
    "open": {"label": "Let the customer choose everything", "claims": {}},
}

SHOP_PAGE = """<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>Demo shop</title>
  <link rel="stylesheet" href="/demo/shop.css">
  <script src="{{ checkout_origin }}/checkout/static/embed.js" defer></script>
  <script src="/demo/shop.js" defer></script>
</head>
<body>
  <header>
    <h1>Demo shop</h1>
    <p>A merchant's page on {{ shop_origin }} with the checkout from {{ checkout_origin }} in an
       iframe. Everything runs on the sandbox: no real money moves.</p>
    <nav><ul>
      {%- for key, preset in presets.items() %}
      <li><a href="/?preset={{ key }}"
             {%- if key == current %} aria-current="page"{% endif %}>{{ preset.label }}</a></li>
      {%- endfor %}
      <li><a href="{{ checkout_origin }}/checkout/sandbox/">Sandbox console: orders, forced outcomes, webhook deliveries</a></li>
    </ul></nav>
  </header>
  <main class="shop-layout">
    <div id="checkout" class="shop-checkout" data-checkout-url="{{ launch }}"
         data-checkout-title="Buy stablecoins"></div>
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
        CHECKOUT_FRAME_ANCESTORS=[SHOP_ORIGIN],
        CHECKOUT_MERCHANT_NAME="Demo shop",
        CHECKOUT_SANDBOX={
            "SANDBOX_TIME_SCALE": TIME_SCALE,
            "SANDBOX_WEBHOOK_URL": f"{SHOP_ORIGIN}/checkout/webhooks",
            "SANDBOX_WEBHOOK_ALLOW_LOOPBACK": True,
        },
    )
    checkout = Checkout(app)

    @app.get("/")
    def shop() -> Response:
        """The merchant's page with a freshly launched checkout."""
        if request.host != f"127.0.0.1:{PORT}":
            # The shop must be another site than the checkout, or the demo would prove nothing.
            return redirect(f"{SHOP_ORIGIN}/", code=302)
        current = request.args.get("preset", "ng")
        preset = PRESETS.get(current, PRESETS["ng"])
        launch = checkout.launch_url("onramp", _base_url=CHECKOUT_ORIGIN,
                                     parentOrigin=SHOP_ORIGIN, returnUrl=f"{SHOP_ORIGIN}/",
                                     orderParams=f"demo-{current}-{secrets.token_hex(6)}",
                                     **preset["claims"])
        response = Response(render_template_string(
            SHOP_PAGE, launch=launch, presets=PRESETS, current=current,
            shop_origin=SHOP_ORIGIN, checkout_origin=CHECKOUT_ORIGIN))
        response.headers["Content-Security-Policy"] = (
            f"default-src 'none'; script-src 'self' {CHECKOUT_ORIGIN}; style-src 'self'; "
            f"frame-src {CHECKOUT_ORIGIN}; base-uri 'none'; form-action 'self'")
        response.headers["Cache-Control"] = "no-store"
        return response

    return app


app = create_app()

if __name__ == "__main__":
    print(f"Demo shop:       {SHOP_ORIGIN}/")
    print(f"Sandbox console: {CHECKOUT_ORIGIN}/checkout/sandbox/")
    app.run(host="127.0.0.1", port=PORT, threaded=True, use_reloader=False)
