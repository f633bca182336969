"""One corridor failing: does it switch off the others? And what do the log, the metrics and
readiness say of an outage?

    .venv/bin/python bench/corridor_outage.py [--outages 3] [--seconds 30] [--save after.json]
    .venv/bin/python bench/corridor_outage.py --compare before.json after.json

The standalone sandbox over HTTP (with signing) behind a fault proxy (``tests/faults.py``), and the
checkout under real gunicorn with the shipped settings (``checkout.gunicorn_config``: 2 gthread
workers), its log in a file, its metrics on. Then:

1. *Kenya's prices fail*, ``--outages`` times for ``--seconds`` each, ten seconds apart: the proxy
   answers 503 to every on-ramp best offer for Kenya (M-PESA), and only to those, as a partner's
   single provider outage does. Meanwhile one unsigned session asks Kenya's price about once a
   second (a shopper pressing on, or an attacker), and another shopper's session asks Ghana's
   price (bank) about once a second, a new amount each time. Counted: the share of Ghana's prices
   that failed while Kenya's were failing, "breaker opened" lines in the log, and the metrics'
   ``checkout_upstream_breaker_opened_total``.
2. *The whole upstream fails* for ``--down`` seconds (503 to everything), the reference data's
   cache time run out (``CHECKOUT_REFERENCE_TTL`` is 5 s here), the Ghana shopper still asking and
   a monitor probing ``/healthz/ready`` every second; then it is back. Counted: "serving the
   cached copy" and "breaker opened" lines, and how long readiness said 503 after the upstream was
   back (probed every quarter of a second until it says 200 four times in a row).

The script carries its own app factory, proxy and clients, so that a copy of it runs as well on an
older checkout (the figures before a change): ``--save`` writes a run's figures, ``--compare``
prints two side by side.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

PREFIX = "/checkout"
TOKEN = "corridor-outage-bench-metrics-token-0123456789"
PRICE_SHOWN = '<p id="quote-message"></p>'
DRAFTS = {
    "KE": {"countryIsoCode": "KE", "paymentChannel": "mobile_money", "amount": 1000},
    "GH": {"countryIsoCode": "GH", "paymentChannel": "bank", "amount": 100},
}
OPENED = re.compile(r"breaker opened")
STALE = re.compile(r"serving the cached copy")


# -- the served app (gunicorn imports it) -----------------------------------------------------------

def create() -> Any:
    from flask import Flask

    from checkout import Checkout
    from tests.resilience_gunicorn_app import CLIENT_ID, CLIENT_SECRET, WEBHOOK_SECRET

    app = Flask("corridor_outage_shop")
    app.config.update(
        CHECKOUT_API_BASE_URL=os.environ["BENCH_UPSTREAM"],
        CHECKOUT_CLIENT_ID=CLIENT_ID, CHECKOUT_CLIENT_SECRET=CLIENT_SECRET,
        CHECKOUT_WEBHOOK_SECRET=WEBHOOK_SECRET, CHECKOUT_LAUNCH_SECRET="l" * 40,
        CHECKOUT_PUBLIC_URL=os.environ["BENCH_PUBLIC_URL"],
        CHECKOUT_DATABASE_URL=os.environ["BENCH_DATABASE_URL"],
        CHECKOUT_WEBHOOK_BACKGROUND=False, CHECKOUT_TESTNET=True,
        CHECKOUT_METRICS_TOKEN=TOKEN,
        # Short, so that the whole upstream's outage finds the reference data to refresh.
        CHECKOUT_REFERENCE_TTL=5,
    )
    Checkout(app)
    return app


# -- the upstream: the standalone sandbox behind a proxy that fails what it is told to ------------

def _kenyas_price(path: str) -> bool:
    return path.startswith("/api/onramp/best-offer?") and "countryIsoCode=KE" in path


def corridor_proxy(upstream: str) -> Any:
    """The tests' fault proxy, answering 503 to Kenya's prices (``kenya_down``) or to everything
    (``all_down``); the rest passes."""
    from tests.faults import FaultProxy

    class CorridorProxy(FaultProxy):
        kenya_down = False
        all_down = False

        def _handle(self, request: BaseHTTPRequestHandler) -> None:
            if self.all_down or (self.kenya_down and _kenyas_price(request.path)):
                self._answer(request, 503, b'{"message": "provider unavailable"}',
                             "application/json")
                return
            super()._handle(request)

    return CorridorProxy(upstream)


# -- the shop under gunicorn ---------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def shop(folder: Path, upstream: str) -> Iterator[tuple[str, Path]]:
    """The checkout under gunicorn with the shipped settings; its base URL and its log file."""
    import requests

    port = _free_port()
    log = folder / "error.log"
    base = f"http://127.0.0.1:{port}"
    gunicorn = Path(sys.executable).with_name("gunicorn")
    proc = subprocess.Popen(
        [str(gunicorn), "-c", "python:checkout.gunicorn_config", "-w", "2",
         "-b", f"127.0.0.1:{port}", "--error-logfile", str(log), "--chdir", str(ROOT / "bench"),
         "corridor_outage:create()"],
        env={**os.environ, "PYTHONPATH": str(ROOT), "BENCH_UPSTREAM": upstream,
             "BENCH_PUBLIC_URL": base,
             "BENCH_DATABASE_URL": f"sqlite:///{folder}/shop.sqlite3"},
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"gunicorn exited: {log.read_text()[-2000:]}")
            try:
                if requests.get(f"{base}{PREFIX}/healthz", timeout=5).status_code == 200:
                    break
            except (requests.ConnectionError, requests.Timeout):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("gunicorn did not start")
            time.sleep(0.2)
        yield base, log
    finally:
        proc.terminate()
        proc.wait(15)


# -- shoppers ------------------------------------------------------------------------------------------

class Shopper:
    """One unsigned session asking its corridor's price, as the amount field does while typing."""

    def __init__(self, base: str, country: str) -> None:
        import requests

        self.http = requests.Session()
        self.base = base
        self.draft: dict[str, Any] = {"network": "CELO", "asset": "USDT",
                                      "currency": "local", **DRAFTS[country]}
        answer = self.http.get(f"{base}{PREFIX}/onramp", timeout=60)
        self.page = answer.url.split("?", 1)[0].rsplit("/", 1)[0]
        self.amount = int(self.draft["amount"])
        # (when asked, "price" | "failed" | "limited")
        self.results: list[tuple[float, str]] = []

    def ask(self) -> str:
        self.amount += 1                    # a new amount: never the short cache's answer
        asked = time.monotonic()
        # A connection per request, as behind a load balancer: a kept-alive one would stay
        # with one gunicorn worker, and each worker has breakers of its own.
        answer = self.http.get(f"{self.page}/quote", params={**self.draft, "amount": self.amount},
                               headers={"HX-Request": "true", "Connection": "close"}, timeout=60)
        result = ("limited" if answer.status_code == 429
                  else "price" if answer.status_code == 200 and PRICE_SHOWN in answer.text
                  else "failed")
        self.results.append((asked, result))
        return result

    def keep_asking(self, stop: threading.Event, every: float) -> None:
        while not stop.is_set():
            started = time.monotonic()
            self.ask()
            stop.wait(max(0.0, every - (time.monotonic() - started)))


def _share_failed(results: list[tuple[float, str]],
                  windows: list[tuple[float, float]]) -> tuple[int, int]:
    asked = [r for when, r in results if any(a <= when <= b for a, b in windows)
             and r != "limited"]
    return len(asked), sum(1 for r in asked if r == "failed")


def _lines(log: Path, pattern: re.Pattern[str], since: int = 0) -> int:
    return sum(1 for line in log.read_text().splitlines()[since:] if pattern.search(line))


def _opened_total(base: str) -> float:
    import requests

    text = requests.get(f"{base}{PREFIX}/metrics", timeout=30,
                        headers={"Authorization": f"Bearer {TOKEN}"}).text
    return sum(float(line.rsplit(" ", 1)[1]) for line in text.splitlines()
               if line.startswith("checkout_upstream_breaker_opened_total"))


# -- the run -------------------------------------------------------------------------------------------

def run(outages: int, seconds: float, down: float) -> dict[str, float]:
    import logging

    import requests

    logging.getLogger("werkzeug").setLevel(logging.ERROR)       # the sandbox's request lines

    from tests.test_resilience_gunicorn import standalone_sandbox

    with tempfile.TemporaryDirectory() as folder, standalone_sandbox() as sandbox:
        proxy = corridor_proxy(sandbox)
        proxy._listen()
        try:
            with shop(Path(folder), proxy.url) as (base, log):
                kenya, ghana = Shopper(base, "KE"), Shopper(base, "GH")
                assert kenya.ask() == "price" and ghana.ask() == "price", "no price to start"
                stop = threading.Event()
                clients = [threading.Thread(target=s.keep_asking, args=(stop, 1.05), daemon=True)
                           for s in (kenya, ghana)]
                for client in clients:
                    client.start()
                windows = []
                for _ in range(outages):
                    proxy.kenya_down = True
                    started = time.monotonic()
                    time.sleep(seconds)
                    proxy.kenya_down = False
                    windows.append((started, time.monotonic()))
                    time.sleep(10)
                ghana_asked, ghana_failed = _share_failed(ghana.results, windows)
                kenya_asked, kenya_failed = _share_failed(kenya.results, windows)
                figures = {
                    "Ghana prices asked": ghana_asked,
                    "Ghana prices failed (%)": 100 * ghana_failed / max(1, ghana_asked),
                    "Kenya prices failed (%)": 100 * kenya_failed / max(1, kenya_asked),
                    "'breaker opened' log lines": _lines(log, OPENED),
                    "breaker_opened_total": _opened_total(base),
                }
                # The whole upstream down, then back.
                lines_before = len(log.read_text().splitlines())
                probes: list[tuple[float, int]] = []

                def monitor() -> None:
                    while not stop.is_set():
                        probes.append((time.monotonic(), requests.get(
                            f"{base}{PREFIX}/healthz/ready", timeout=30).status_code))
                        stop.wait(1.0)

                watcher = threading.Thread(target=monitor, daemon=True)
                watcher.start()
                proxy.all_down = True
                time.sleep(down)
                proxy.all_down = False
                back = time.monotonic()
                stop.set()
                for thread in (*clients, watcher):
                    thread.join(60)
                in_a_row, first_ok, ready_at = 0, 0.0, None
                while ready_at is None and time.monotonic() - back < 60:
                    status = requests.get(f"{base}{PREFIX}/healthz/ready", timeout=30).status_code
                    in_a_row = in_a_row + 1 if status == 200 else 0
                    if in_a_row == 1:
                        first_ok = time.monotonic()
                    if in_a_row == 4:
                        ready_at = first_ok
                    time.sleep(0.25)
                figures.update({
                    "down: readiness 503 seen": sum(1 for _, s in probes if s == 503),
                    "down: 'serving the cached copy' lines": _lines(log, STALE, lines_before),
                    "down: 'breaker opened' lines": _lines(log, OPENED, lines_before),
                    "readiness back after (s)": (ready_at - back) if ready_at else float("inf"),
                })
                return figures
        finally:
            proxy.close()


def show(columns: dict[str, dict[str, float]], title: str) -> None:
    rows = list(next(iter(columns.values())))
    width = max(len(r) for r in rows) + 2
    print(title)
    print("".ljust(width) + "".join(name.rjust(14) for name in columns))
    for row in rows:
        print(row.ljust(width) + "".join(f"{columns[name].get(row, float('nan')):14.1f}"
                                         for name in columns))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--outages", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=30.0, help="each Kenya outage")
    parser.add_argument("--down", type=float, default=20.0, help="the whole upstream's outage")
    parser.add_argument("--save", type=Path, help="write this run's figures (JSON)")
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"),
                        help="print two saved runs side by side, and run nothing")
    args = parser.parse_args()
    title = (f"Kenya's prices failing {args.outages} x {args.seconds:g} s, then the whole "
             f"upstream {args.down:g} s; 2 gunicorn workers")
    if args.compare:
        before, after = (json.loads(path.read_text()) for path in args.compare)
        show({"before": before, "after": after}, title)
        return 0
    figures = run(args.outages, args.seconds, args.down)
    if args.save:
        args.save.write_text(json.dumps(figures, indent=2))
    show({"this run": figures}, title)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
