"""Lighthouse's mobile scores of the first page of each flow and of the identity step, as a
user's phone would load them.

Run: ``npm ci --prefix bench/node`` once (Lighthouse at the locked version; the tests do not
need it), then ``.venv/bin/python bench/lighthouse.py``.

It serves the checkout on the embedded sandbox on a local port (real HTTP, the production CSP and
headers), opens a session of each flow with a signed launch token, and runs Lighthouse (mobile form
factor, its default slow-4G and CPU throttling, Debian's Chromium) on the first page of each, and
on the identity step of a purchase that needs one. It
prints the performance, accessibility and best-practices scores (the median of
``LIGHTHOUSE_RUNS``, default 3, runs) and the metrics behind them; the target is 1.0 (Lighthouse's
100) in each of the three, and the script exits 1 when one is missed. A benchmark, not a test: the
figures depend on the machine (its performance score moves with the load of the CPU; run it on a
quiet one).
"""
from __future__ import annotations

import json
import logging
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from flask import Flask
from werkzeug.serving import make_server

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from checkout import Checkout  # noqa: E402
from checkout.launch import launch_url  # noqa: E402

LIGHTHOUSE = ROOT / "bench" / "node" / "node_modules" / ".bin" / "lighthouse"
CHROMIUM = "/usr/bin/chromium"
CHROME_FLAGS = "--headless --no-sandbox --disable-gpu --disable-quic --no-first-run " \
               "--disable-background-networking --disable-component-update --disable-sync"
CATEGORIES = ("performance", "accessibility", "best-practices")
TARGETS = {category: 1.0 for category in CATEGORIES}
RUNS = int(os.environ.get("LIGHTHOUSE_RUNS", "3"))
FIRST_PAGES = {
    # The first page each flow opens on when the shop gives nothing: the amount step.
    "onramp": {},
    "offramp": {},
    # A shop that gave the amount: the sale opens on its payout details.
    "offramp (amount given)": {"countryIsoCode": "NG", "paymentChannel": "bank",
                               "network": "POLYGON", "asset": "USDC", "currency": "local",
                               "amount": 20000},
    # A purchase above Kenya's threshold with everything else given: the identity step.
    "onramp (identity step)": {"countryIsoCode": "KE", "paymentChannel": "mobile_money",
                               "network": "CELO", "asset": "USDT", "currency": "local",
                               "amount": 8000, "phoneNumber": "0712345678",
                               "address": "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed",
                               "email": "kyc@example.com"},
}


def serve(folder: str) -> tuple[str, object]:
    app = Flask("lighthouse_host", instance_path=f"{folder}/instance")
    server = make_server("127.0.0.1", 0, app, threaded=True)
    origin = f"http://127.0.0.1:{server.server_port}"
    app.config.update(CHECKOUT_DATABASE_URL=f"sqlite:///{folder}/checkout.sqlite3",
                      CHECKOUT_LAUNCH_SECRET="lighthouse-bench-launch-secret-0123456789",
                      CHECKOUT_SANDBOX={"SANDBOX_TIME_SCALE": 0.01})
    Checkout(app)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return origin, (app, server)


BYTES_AUDITS = ("uses-text-compression", "unminified-css", "unminified-javascript")
METRICS = ("first-contentful-paint", "largest-contentful-paint", "total-blocking-time",
           "cumulative-layout-shift", "speed-index")


def audit(url: str, folder: str) -> dict[str, float]:
    out = Path(folder) / "report.json"
    subprocess.run(
        [str(LIGHTHOUSE), url, "--quiet", "--form-factor=mobile", "--output=json",
         f"--output-path={out}", f"--only-categories={','.join(CATEGORIES)}",
         f"--chrome-flags={CHROME_FLAGS}"],
        check=True, env={**os.environ, "CHROME_PATH": CHROMIUM})
    report = json.loads(out.read_text())
    metrics = ", ".join(f"{m} {report['audits'][m]['displayValue']}" for m in METRICS)
    print(f"    {metrics}")
    # What a slow network pays for: text sent uncompressed, scripts and styles not minified.
    findings = [f"{name} {report['audits'][name].get('displayValue') or 'flagged'}"
                for name in BYTES_AUDITS if report["audits"][name].get("score") not in (None, 1)]
    print(f"    bytes: {', '.join(findings) if findings else 'no compression or minification finding'}")
    return {name: report["categories"][name]["score"] for name in CATEGORIES}


def main() -> int:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    if not LIGHTHOUSE.exists():
        print(f"Lighthouse is not installed: npm ci --prefix {LIGHTHOUSE.parents[2]}",
              file=sys.stderr)
        return 2
    missed = []
    with tempfile.TemporaryDirectory() as folder:
        origin, (app, server) = serve(folder)
        try:
            print(f"{'first page':<26}" + "".join(f"{c:>16}" for c in CATEGORIES))
            for label, claims in FIRST_PAGES.items():
                flow = label.split()[0]
                with app.app_context():
                    url = launch_url(app, flow, _base_url=origin, **claims)
                # Lighthouse's scores vary from run to run (CPU load): the median of RUNS.
                runs = [audit(url, folder) for _ in range(RUNS)]
                scores = {c: statistics.median(run[c] for run in runs) for c in CATEGORIES}
                print(f"{label:<26}" + "".join(f"{scores[c]:>16.2f}" for c in CATEGORIES))
                missed += [f"{label}: {c} {scores[c]:.2f} < {target}"
                           for c, target in TARGETS.items() if scores[c] < target]
        finally:
            server.shutdown()
    for line in missed:
        print("target missed:", line)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
