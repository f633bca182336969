"""Page weight of every on-ramp page, and the upstream calls of one complete checkout.

Run: ``.venv/bin/python bench/page_weight.py`` (on the embedded sandbox; nothing leaves the process).

For each page of the flow it prints the HTML and the page's CSS + JavaScript (checkout.css,
checkout.js, htmx), raw and gzipped; the first page must stay within 35 KB gzipped with its assets
(the script exits 1 otherwise). Then it counts the upstream calls each step made, through a response
hook on the client's one ``requests.Session``: reference data is cached, so a page waits on at most
the one call it needs. Status polls are counted apart: here no webhook reaches the checkout, so each
poll reads the upstream; with webhooks flowing (``CHECKOUT_STATUS_MAX_AGE``) polls cost nothing.
"""
from __future__ import annotations

import gzip
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from urllib.parse import urlsplit

from flask import Flask

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checkout import Checkout  # noqa: E402
from checkout.paths import STATIC  # noqa: E402
from checkout.state import get_state  # noqa: E402

BUDGET_GZIP = 35 * 1024
ASSETS = ("checkout.css", "checkout.js", "vendor/htmx-2.0.11.min.js")
ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"


def gz(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=9))


def build_app(folder: str) -> Flask:
    app = Flask("bench_host", instance_path=f"{folder}/instance")
    app.config.update(
        SERVER_NAME="shop.test", CHECKOUT_DATABASE_URL=f"sqlite:///{folder}/checkout.sqlite3",
        CHECKOUT_FRAME_ANCESTORS=["https://shop.test"], CHECKOUT_STATUS_MAX_AGE=0,
        CHECKOUT_SANDBOX={"SANDBOX_TIME_SCALE": 0.01})
    Checkout(app)
    return app


class Walk:
    """One user through the flow; records every page and the upstream calls of each step."""

    def __init__(self, app: Flask) -> None:
        self.client = app.test_client()
        self.calls: Counter[str] = Counter()
        self.step_calls: dict[str, list[str]] = {}
        self.pages: dict[str, bytes] = {}
        self.csrf = ""
        self.base = ""
        with app.app_context():
            get_state().upstream.http.hooks["response"].append(self._count)

    def _count(self, response, *args, **kwargs):
        self.calls[urlsplit(response.request.url).path] += 1

    def step(self, name: str, method: str, path: str, data: dict | None = None,
             page: bool = True, headers: dict | None = None):
        before = Counter(self.calls)
        if method == "GET":
            response = self.client.get(path, headers=headers)
        else:
            response = self.client.post(path, data={"csrf_token": self.csrf, **(data or {})})
        while response.status_code == 303:
            response = self.client.get(response.headers["Location"])
        body = response.get_data()
        match = re.search(rb'name="csrf_token" value="([^"]+)"', body)
        if match:
            self.csrf = match.group(1).decode()
        self.step_calls[name] = sorted((self.calls - before).elements())
        if page:
            self.pages[name] = body
        return response


def run() -> int:
    folder = tempfile.mkdtemp(prefix="checkout-bench-")
    app = build_app(folder)
    walk = Walk(app)
    start = walk.client.get("/checkout/onramp")
    walk.base = start.headers["Location"].rstrip("/")
    path = urlsplit(walk.base).path
    walk.step("choose (first page)", "GET", path + "/")
    corridor = {"countryIsoCode": "NG", "paymentChannel": "airtime", "carrierCode": "MTN",
                "network": "CELO", "asset": "USDT", "currency": "local", "amount": "5000"}
    query = "&".join(f"{k}={v}" for k, v in corridor.items())
    walk.step("live quote (partial)", "GET", f"{path}/quote?{query}",
              headers={"HX-Request": "true"})
    walk.step("wallet", "POST", path + "/choose", corridor)
    walk.step("details", "POST", path + "/wallet", {"address": ADDRESS, "email": "a@example.com"})
    review = walk.step("review", "POST", path + "/details", {"phoneNumber": "08012345678"})
    html = review.get_data(as_text=True)
    quote_id = re.search(r'name="quote_id" value="([^"]+)"', html)
    digest = re.search(r'name="review_digest" value="([^"]+)"', html)
    walk.step("pay (create)", "POST", path + "/create",
              {"quote_id": quote_id.group(1), "review_digest": digest.group(1)})
    walk.step("status (confirm)", "POST", path + "/pay/confirm")
    polls = 0
    poll_calls: list[str] = []
    for _ in range(100):
        response = walk.step("status poll", "GET", path + "/status/live", page=False,
                             headers={"HX-Request": "true"})
        polls += 1
        poll_calls += walk.step_calls["status poll"]
        if b'data-status="payout_successful"' in response.get_data():
            break
        time.sleep(0.1)
    walk.step("status (complete)", "GET", path + "/status")
    walk.step_calls.pop("status poll", None)

    assets = {name: (STATIC / "checkout" / name).read_bytes() for name in ASSETS}
    assets_raw = sum(len(b) for b in assets.values())
    assets_gz = sum(gz(b) for b in assets.values())
    print("Assets (cached after the first page):")
    for name, data in assets.items():
        print(f"  {name:32} {len(data):>8,} B raw {gz(data):>8,} B gzip")
    print(f"  {'total':32} {assets_raw:>8,} B raw {assets_gz:>8,} B gzip\n")
    print(f"{'page':24} {'HTML raw':>10} {'HTML gzip':>10} {'+assets gzip':>13}")
    first_total = 0
    for name, body in walk.pages.items():
        total = gz(body) + assets_gz
        first_total = first_total or total
        print(f"{name:24} {len(body):>10,} {gz(body):>10,} {total:>13,}")
    print(f"\nFirst page with its CSS and JavaScript: {first_total:,} B gzipped "
          f"(budget {BUDGET_GZIP:,} B)\n")
    print("Upstream calls per step:")
    total_calls = 0
    for name, calls in walk.step_calls.items():
        total_calls += len(calls)
        print(f"  {name:24} {len(calls)}  {', '.join(calls)}")
    print(f"  {'status polls':24} {len(poll_calls)} in {polls} polls "
          f"(0 with webhooks and CHECKOUT_STATUS_MAX_AGE)")
    print(f"One complete checkout: {total_calls} upstream calls + {len(poll_calls)} for polling")
    return 0 if first_total <= BUDGET_GZIP else 1


if __name__ == "__main__":
    sys.exit(run())
