"""Receipt reloads counted at the upstream (issue 38, section 5).

    PYTHONPATH=. .venv/bin/python bench/receipt_reads.py              # about 40 s
    PYTHONPATH=. .venv/bin/python bench/receipt_reads.py --seconds 20 --threads 3
    PYTHONPATH=. .venv/bin/python bench/receipt_reads.py --max-age 0   # every view's read due

The checkout in this process on the embedded sandbox (SQLite, the webhook dispatcher running as
in production, ``CHECKOUT_STATUS_MAX_AGE`` at its default of 30 s, or ``--max-age``). Three
on-ramp orders are made straight through the upstream client: one paid out (final), two left
unpaid. Their receipt links are made as the merchant's emails make them
(``Checkout.receipt_url``). Between the checkout and the sandbox a counting stand-in sees every
call that reaches the upstream.

Then, for each phase, three client addresses (``--threads`` each) reload the three receipts as
fast as they are answered, for ``--seconds``:

* **reload, shipped limits**: the shipped settings;
* **reload, no limits of ours**: ``CHECKOUT_RATELIMIT_ENABLED = False``, so that only what the
  receipts themselves cost the upstream is counted;
* **one order refused**: as the second, but the upstream answers 429 (``Retry-After: 600``) to
  every read of one of the unpaid orders: how many views of the *other two* receipts were still
  answered with their order.

Printed per phase: receipt views by answer (200, 429, other), the order reads that reached the
upstream (in all, per second, and how many of them were answered 429), and for the last phase the
views of the other orders' receipts answered 200 without the "as we last read" note, and the
reads of those orders that reached the upstream. The same script runs on any tree of the project
(no name it imports is new), so the figures of two trees can be set side by side.
"""
from __future__ import annotations

import argparse
import logging
import re
import shutil
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

from flask import Flask

from checkout import Checkout, embedded_sandbox
from checkout.config import EMBEDDED_SANDBOX_URL
from checkout.upstream.inprocess import mount_wsgi_app

ORDER_READ = "/api/onramp/order"
ADDRESSES = ("198.51.100.7", "198.51.100.8", "203.0.113.20")
LAST_READ = "as we last read them"
WALLET = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"


class CountingUpstream:
    """WSGI stand-in in front of the embedded sandbox: counts order reads (by order id) and the
    429s it answers; answers 429 to the reads of the orders in ``refused``."""

    def __init__(self, sandbox: Callable[..., Any]) -> None:
        self.sandbox = sandbox
        self.reads: Counter[str] = Counter()
        self.too_many: Counter[str] = Counter()
        self.refused: set[str] = set()
        self.counting = False
        self._lock = threading.Lock()

    def __call__(self, environ: dict[str, Any], start_response: Any) -> Any:
        if environ["REQUEST_METHOD"] == "GET" and environ["PATH_INFO"] == ORDER_READ:
            found = re.search(r"(?:^|&)orderId=([^&]+)", environ.get("QUERY_STRING", ""))
            order_id = found.group(1) if found else "?"
            with self._lock:
                if self.counting:
                    self.reads[order_id] += 1
                if order_id in self.refused:
                    if self.counting:
                        self.too_many[order_id] += 1
                    start_response("429 Too Many Requests",
                                   [("Content-Type", "application/json"),
                                    ("Retry-After", "600")])
                    return [b'{"message": "Too many requests"}']
        return self.sandbox(environ, start_response)


def make_app(folder: Path, max_age: float, **settings: Any) -> Flask:
    app = Flask("receipt_bench")
    app.config.update(
        CHECKOUT_STATUS_MAX_AGE=max_age,
        SERVER_NAME="shop.test",
        CHECKOUT_DATABASE_URL=f"sqlite:///{folder}/checkout.sqlite3",
        CHECKOUT_FRAME_ANCESTORS=["https://shop.test"],
        CHECKOUT_SANDBOX={"SANDBOX_TIME_SCALE": 0.01},
        **settings)
    Checkout(app)
    return app


def make_orders(app: Flask) -> tuple[list[str], list[str]]:
    """Three on-ramp orders (the first paid out, the others unpaid) and their receipt links."""
    state = app.extensions["checkout"]
    client = state.upstream
    orders = []
    for n in range(3):
        quote = client.onramp_best_offer(network="CELO", asset="USDT", currency="local",
                                         amount=5000, country_iso_code="NG",
                                         payment_channel="bank")
        order = client.onramp_create_order(
            quote_id=quote.quote_id, network="CELO", asset="USDT", amount=5000,
            currency="local", email=f"buyer{n}@example.com", user_ip="203.0.113.7",
            address=WALLET, order_params=f"bench-{n}-{time.time_ns()}")
        orders.append(order.id)
    client.onramp_confirm_order(order_id=orders[0])
    deadline = time.monotonic() + 30
    while client.onramp_order(order_id=orders[0]).status != "complete":
        if time.monotonic() > deadline:
            raise SystemExit("the paid order did not complete in 30 s")
        time.sleep(0.1)
    with app.app_context():
        links = [Checkout.receipt_url(order_id, "onramp") for order_id in orders]
    # Relative to the site: the test client is given the path.
    return orders, [re.sub(r"^https?://[^/]+", "", link) for link in links]


def reload(app: Flask, links: list[str], seconds: float, threads: int) -> list[tuple[int, str]]:
    """Every address's threads reload the receipts in turn until the time is over; each view's
    (status, which link)."""
    views: list[tuple[int, str]] = []
    lock = threading.Lock()
    until = time.monotonic() + seconds

    def reader(address: str, first: int) -> None:
        client = app.test_client()
        n = first
        mine = []
        while time.monotonic() < until:
            link = links[n % len(links)]
            page = client.get(link, environ_base={"REMOTE_ADDR": address})
            body = page.get_data(as_text=True)
            mine.append((page.status_code, link if LAST_READ not in body else link + "#last"))
            n += 1
        with lock:
            views.extend(mine)

    workers = [threading.Thread(target=reader, args=(address, i))
               for address in ADDRESSES for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return views


def phase(name: str, folder: Path, seconds: float, threads: int, max_age: float, *,
          refuse_one: bool = False, **settings: Any) -> dict[str, Any]:
    app = make_app(folder, max_age, **settings)
    state = app.extensions["checkout"]
    upstream = CountingUpstream(state.sandbox)
    mount_wsgi_app(state.upstream.http, EMBEDDED_SANDBOX_URL, upstream,
                   environ_extras=embedded_sandbox.public_base)
    orders, links = make_orders(app)
    time.sleep(1.0)                     # the orders' webhooks land, as they would
    if refuse_one:
        upstream.refused.add(orders[1])
    upstream.counting = True
    started = time.monotonic()
    views = reload(app, links, seconds, threads)
    elapsed = time.monotonic() - started
    upstream.counting = False
    state.dispatcher.stop()
    answers = Counter(status for status, _link in views)
    reads = sum(upstream.reads.values())
    result: dict[str, Any] = {
        "phase": name,
        "receipt views": len(views),
        "answered 200": answers[200],
        "answered 429": answers[429],
        "answered other": len(views) - answers[200] - answers[429],
        "upstream order reads": reads,
        "upstream order reads/s": reads / elapsed,
        "upstream 429 answers": sum(upstream.too_many.values()),
    }
    if refuse_one:
        others = {links[0], links[2]}
        result["other receipts: views"] = sum(1 for _s, link in views
                                              if link.split("#")[0] in others)
        result["other receipts: 200 with their order"] = sum(
            1 for status, link in views if link in others and status == 200)
        result["other orders: reads reaching the upstream"] = \
            upstream.reads[orders[0]] + upstream.reads[orders[2]]
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--threads", type=int, default=2, help="threads per address")
    parser.add_argument("--max-age", type=float, default=30.0,
                        help="CHECKOUT_STATUS_MAX_AGE (seconds)")
    args = parser.parse_args()
    # The checkout's INFO lines (each webhook delivered) would bury the figures.
    logging.getLogger("checkout").setLevel(logging.ERROR)
    results = []
    for name, extra in (("reload, shipped limits", {}),
                        ("reload, no limits of ours", {"CHECKOUT_RATELIMIT_ENABLED": False}),
                        ("one order refused (429)", {"CHECKOUT_RATELIMIT_ENABLED": False,
                                                     "refuse_one": True})):
        folder = Path(tempfile.mkdtemp(prefix="receipt-bench-"))
        try:
            results.append(phase(name, folder, args.seconds, args.threads, args.max_age,
                                 **extra))
        finally:
            shutil.rmtree(folder, ignore_errors=True)
    print(f"receipt reloads: 3 orders (1 paid out, 2 unpaid), {len(ADDRESSES)} addresses x "
          f"{args.threads} threads, {args.seconds:g} s per phase, CHECKOUT_STATUS_MAX_AGE "
          f"{args.max_age:g} s")
    for result in results:
        print(f"\n{result.pop('phase')}")
        for key, value in result.items():
            shown = f"{value:.1f}" if isinstance(value, float) else str(value)
            print(f"  {key:<44} {shown}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
