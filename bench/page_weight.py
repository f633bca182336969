"""Page weight of every page of both flows, and the upstream calls of one complete order of each.

Run: ``.venv/bin/python bench/page_weight.py`` (on the embedded sandbox; nothing leaves the process).

For each page it prints the HTML and the page's CSS + JavaScript (checkout.css, checkout.js, htmx)
as the checkout serves them (minified), raw and gzipped; the first page of each flow must stay
within 25 KB gzipped with its assets, and each flow's receipt within 15 KB with its own (the
script exits 1 otherwise). Then it counts the upstream
calls each step made, through a response hook on the client's one ``requests.Session``: reference
data is cached, so a page waits on at most the one call it needs. The embedded sandbox delivers its
webhooks to the checkout in process, so status polls read what webhooks stored and cost the upstream
nothing (they are counted apart).
"""
from __future__ import annotations

import gzip
import re
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlencode, urlsplit

from flask import Flask

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checkout import Checkout  # noqa: E402
from checkout.state import get_state  # noqa: E402

BUDGET_GZIP = 25 * 1024
RECEIPT_BUDGET_GZIP = 15 * 1024
ASSETS = ("checkout.css", "checkout.js", "vendor/htmx-2.0.11.min.js")
ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
HTMX = {"HX-Request": "true"}


def gz(data: bytes) -> int:
    return len(gzip.compress(data, compresslevel=9))


def build_app(folder: str) -> Flask:
    app = Flask("bench_host", instance_path=f"{folder}/instance")
    app.config.update(
        SERVER_NAME="shop.test", CHECKOUT_DATABASE_URL=f"sqlite:///{folder}/checkout.sqlite3",
        CHECKOUT_FRAME_ANCESTORS=["https://shop.test"], CHECKOUT_WEBHOOK_SWEEP_INTERVAL=0.2,
        CHECKOUT_SANDBOX={"SANDBOX_TIME_SCALE": 0.01})
    Checkout(app)
    return app


class Walk:
    """One user through a flow; records every page and the upstream calls of each step."""

    def __init__(self, app: Flask, flow: str) -> None:
        self.flow = flow
        self.client = app.test_client()
        self.calls: Counter[str] = Counter()
        self.step_calls: dict[str, list[str]] = {}
        self.pages: dict[str, bytes] = {}
        self.csrf = ""
        start = self.client.get(f"/checkout/{flow}")
        self.path = urlsplit(start.headers["Location"].rstrip("/")).path
        with app.app_context():
            get_state().upstream.http.hooks["response"].append(self._count)

    def _count(self, response: Any, *args: Any, **kwargs: Any) -> None:
        self.calls[urlsplit(response.request.url).path] += 1

    def step(self, name: str, method: str, path: str, data: dict[str, str] | None = None,
             page: bool = True, headers: dict[str, str] | None = None) -> Any:
        before = Counter(self.calls)
        url = self.path + path
        if method == "GET":
            response = self.client.get(url, headers=headers)
        else:
            response = self.client.post(url, data={"csrf_token": self.csrf, **(data or {})})
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

    def confirm(self, name: str, review: Any) -> Any:
        html = review.get_data(as_text=True)
        quote_id = re.search(r'name="quote_id" value="([^"]+)"', html)
        digest = re.search(r'name="review_digest" value="([^"]+)"', html)
        assert quote_id and digest, html[:2000]
        return self.step(name, "POST", "/create",
                         {"quote_id": quote_id.group(1), "review_digest": digest.group(1)})

    def poll_until(self, status: str) -> tuple[int, list[str]]:
        polls, calls = 0, []
        for _ in range(200):
            response = self.step("status poll", "GET", "/status/live", page=False, headers=HTMX)
            polls += 1
            calls += self.step_calls.pop("status poll")
            if f'data-status="{status}"'.encode() in response.get_data():
                return polls, calls
            time.sleep(0.05)
        raise SystemExit(f"the {self.flow} order never reached {status}")


def onramp(app: Flask) -> tuple[Walk, int, list[str]]:
    walk = Walk(app, "onramp")
    walk.step("choose (first page)", "GET", "/")
    corridor = {"countryIsoCode": "NG", "paymentChannel": "airtime", "carrierCode": "MTN",
                "network": "CELO", "asset": "USDT", "currency": "local", "amount": "5000"}
    walk.step("live quote (partial)", "GET", "/quote?" + urlencode(corridor), headers=HTMX)
    walk.step("wallet", "POST", "/choose", corridor)
    walk.step("details", "POST", "/wallet", {"address": ADDRESS, "email": "a@example.com"})
    review = walk.step("review", "POST", "/details", {"phoneNumber": "08012345678"})
    walk.confirm("pay (create)", review)
    walk.step("status (confirm)", "POST", "/pay/confirm")
    polls, poll_calls = walk.poll_until("payout_successful")
    walk.step("status (complete)", "GET", "/status")
    return walk, polls, poll_calls


def offramp(app: Flask) -> tuple[Walk, int, list[str]]:
    walk = Walk(app, "offramp")
    walk.step("choose (first page)", "GET", "/")
    corridor = {"countryIsoCode": "NG", "paymentChannel": "bank", "network": "POLYGON",
                "asset": "USDC", "currency": "local", "amount": "20000"}
    walk.step("live quote (partial)", "GET", "/quote?" + urlencode(corridor), headers=HTMX)
    walk.step("payout", "POST", "/choose", corridor)
    payee = walk.step("payee (check)", "POST", "/payout",
                      {"bankCode": "011:02", "bankAccountNumber": "0123456789"})
    check = re.search(r'name="check" value="([^"]+)"', payee.get_data(as_text=True))
    assert check, "the account check page names the check it shows"
    walk.step("wallet", "POST", "/payee", {"confirm": "yes", "check": check.group(1)})
    review = walk.step("review", "POST", "/wallet", {"address": ADDRESS})
    walk.confirm("deposit (create)", review)
    walk.step("status (hash sent)", "POST", "/deposit/sent", {"tx_hash": "0x" + "5e" * 32})
    polls, poll_calls = walk.poll_until("payout_successful")
    walk.step("status (paid out)", "GET", "/status")
    return walk, polls, poll_calls


def report(walk: Walk, polls: int, poll_calls: list[str], assets_gz: int) -> int:
    print(f"\n== {walk.flow}")
    print(f"{'page':24} {'HTML raw':>10} {'HTML gzip':>10} {'+assets gzip':>13}")
    first_total = 0
    for name, body in walk.pages.items():
        total = gz(body) + assets_gz
        first_total = first_total or total
        print(f"{name:24} {len(body):>10,} {gz(body):>10,} {total:>13,}")
    print(f"First page with its CSS and JavaScript: {first_total:,} B gzipped "
          f"(budget {BUDGET_GZIP:,} B)")
    print("Upstream calls per step:")
    total_calls = 0
    for name, calls in walk.step_calls.items():
        total_calls += len(calls)
        print(f"  {name:24} {len(calls)}  {', '.join(calls)}")
    print(f"  {'status polls':24} {len(poll_calls)} in {polls} polls (webhooks keep the status)")
    print(f"One complete {walk.flow} order: {total_calls} upstream calls "
          f"+ {len(poll_calls)} for polling")
    return first_total


def receipt_weight(app: Flask, walk: Walk) -> int:
    """The order's receipt with the files it loads (not htmx nor checkout.js), gzipped."""
    with app.app_context():
        order_id = get_state().sessions.get(walk.path.rsplit("/", 1)[-1]).order_id
        link = Checkout.receipt_url(order_id, walk.flow)
    page = walk.client.get(urlsplit(link).path).get_data()
    files = re.findall(rb'(?:src|href)="(/checkout/assets/[^"]+)"', page)
    total = gz(page) + sum(len(walk.client.get(f.decode(), headers={"Accept-Encoding": "gzip"})
                               .get_data()) for f in files)
    print(f"Receipt with its {len(files)} files: {total:,} B gzipped "
          f"(HTML {gz(page):,} B; budget {RECEIPT_BUDGET_GZIP:,} B)")
    return total


def run() -> int:
    folder = tempfile.mkdtemp(prefix="checkout-bench-")
    app = build_app(folder)
    # As the checkout serves them (minified, compressed once at start-up), not as they lie in
    # static/checkout/.
    client = app.test_client()
    assets = {name: (client.get(f"/checkout/static/{name}").get_data(),
                     client.get(f"/checkout/static/{name}",
                                headers={"Accept-Encoding": "gzip"}).get_data())
              for name in ASSETS}
    assets_gz = sum(len(served) for _, served in assets.values())
    print("Assets as served (kept a year after the first page):")
    for name, (data, served) in assets.items():
        print(f"  {name:32} {len(data):>8,} B raw {len(served):>8,} B gzip")
    print(f"  {'total':32} {sum(len(b) for b, _ in assets.values()):>8,} B raw "
          f"{assets_gz:>8,} B gzip")
    over = []
    for walked in (onramp(app), offramp(app)):
        first = report(*walked, assets_gz)
        receipt = receipt_weight(app, walked[0])
        over += [first] if first > BUDGET_GZIP else []
        over += [receipt] if receipt > RECEIPT_BUDGET_GZIP else []
    if over:
        print(f"\nOver budget: {over}")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(run())
