"""The shop while its checkout's upstream hangs: with the breaker and without it, side by side.

    PYTHONPATH=. .venv/bin/python bench/slow_upstream.py            # about a minute and a half
    PYTHONPATH=. .venv/bin/python bench/slow_upstream.py --shoppers 40 --sync

For each variant: the standalone sandbox over HTTP (with signing) behind the fault proxy of the
tests (``tests/faults.py``), set to *hang* (connections taken, never answered); the shop of
``tests/resilience_gunicorn_app.py`` under real gunicorn with the shipped settings
(``checkout.gunicorn_config``: 2 workers, gthread). Then:

* a first wave of N shoppers opens the checkout at once (each page asks the upstream for its
  reference data), while one visitor loads the shop's own page again and again;
* a second wave of N shoppers comes once the first is answered.

Printed per variant: the shop's own page (p50, p99) during the first wave; the time each shopper
waited for the "payment partner is not answering" page (median, max) in each wave; and the calls
that reached the hanging upstream. "no breaker" is the same checkout with a breaker that never
opens (``CHECKOUT_BREAKER_MIN_CALLS`` = 10^9): the page's budget and the places for waiting calls
still bound each page. ``--sync`` adds gunicorn's default sync workers (no threads) with the
breaker, to show what the checkout's own settings spare the shop.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import requests

from tests.faults import fault_proxy
from tests.resilience_support import open_checkout, shop, standalone_sandbox


def _quantile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100)[q - 1]


def run(variant: str, shoppers: int, env: dict[str, str], extra: list[str]) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder, standalone_sandbox() as sandbox, \
            fault_proxy(sandbox) as proxy:
        proxy.set("hang")
        with shop(Path(folder), proxy.url, extra_args=extra, **env) as base:
            host: list[float] = []
            with ThreadPoolExecutor(shoppers) as pool:
                first = [pool.submit(open_checkout, base) for _ in range(shoppers)]
                time.sleep(0.3)
                with requests.Session() as visitor:
                    while not all(f.done() for f in first) or len(host) < 50:
                        started = time.monotonic()
                        visitor.get(f"{base}/", timeout=120)
                        host.append(time.monotonic() - started)
                waited = [f.result()[1] for f in first]
                sent_first = proxy.calls["hang"]
                second = [f.result()[1] for f in
                          [pool.submit(open_checkout, base) for _ in range(shoppers)]]
            return {"host p50 (ms)": 1000 * _quantile(host, 50),
                    "host p99 (ms)": 1000 * _quantile(host, 99),
                    "wave 1: wait median (s)": statistics.median(waited),
                    "wave 1: wait max (s)": max(waited),
                    "wave 2: wait median (s)": statistics.median(second),
                    "wave 2: wait max (s)": max(second),
                    "calls sent, wave 1": sent_first,
                    "calls sent, wave 2": proxy.calls["hang"] - sent_first}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--shoppers", type=int, default=20)
    parser.add_argument("--sync", action="store_true", help="also gunicorn's sync workers")
    args = parser.parse_args()
    variants = [("breaker (shipped)", {}, []),
                ("no breaker", {"CHECKOUT_TEST_BREAKER_MIN_CALLS": str(10 ** 9)}, [])]
    if args.sync:
        variants.append(("sync workers, breaker", {}, ["-k", "sync"]))
    results = {}
    for name, env, extra in variants:
        print(f"running: {name} ...", file=sys.stderr, flush=True)
        results[name] = run(name, args.shoppers, env, extra)
    rows = list(next(iter(results.values())))
    width = max(len(r) for r in rows) + 2
    print(f"{args.shoppers} shoppers while the upstream hangs, 2 gunicorn workers")
    print("".ljust(width) + "".join(name.rjust(24) for name in results))
    for row in rows:
        print(row.ljust(width) + "".join(f"{results[name][row]:24.2f}" for name in results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
