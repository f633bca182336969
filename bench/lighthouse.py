"""Lighthouse's mobile scores of the first page of each flow and of the identity step, as a
user's phone would load them.

Run: ``npm ci --prefix bench/node`` once (Lighthouse at the locked version; the tests do not
need it), then ``.venv/bin/python bench/lighthouse.py``.

It serves the checkout on the embedded sandbox on a local port (real HTTP, the production CSP and
headers), opens a session of each flow with a signed launch token, and runs Lighthouse (mobile form
factor, its slow-4G network, Debian's Chromium) on the first page of each, and on the identity step
of a purchase that needs one. It prints the performance, accessibility and best-practices scores
(the median of ``LIGHTHOUSE_RUNS``, default 5, runs: Lighthouse's docs/variability.md finds
that the median of five halves the spread of one) and the metrics behind them; the target is
1.0 (Lighthouse's 100) in each of the three, and the script exits 1 when one is missed.

Lighthouse slows the CPU down 4 times by default, which makes a high-end desktop behave like the
mid-tier phone it scores for. On a host that is not such a desktop, it warns that the score is
skewed and says to calibrate ("Calibrating the CPU slowdown" in Lighthouse's docs/throttling.md):
the slowdown that brings this host to the same phone follows from the ``benchmarkIndex`` Lighthouse
measures in each run (4 at about 1,530; 2 at 800; 6 at 2,000). So each page is scored twice, side by
side: at the default 4 times, for reference, then at the slowdown calibrated from the highest
benchmark index of those first runs (the host at its fastest: the strictest), which is the score
held to the target. ``LIGHTHOUSE_CPU_SLOWDOWN`` pins that slowdown instead, to compare runs of the
script over time. Forty Lighthouse runs: about ten minutes here. A benchmark, not a test: the
figures depend on the machine (run it on a quiet one).
"""
from __future__ import annotations

import json
import logging
import math
import os
import statistics
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass
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


def calibrated_slowdown(benchmark_index: float) -> float:
    """The CPU slowdown that brings a host of this benchmark index to Lighthouse's mid-tier phone.

    The piecewise-linear scale of Lighthouse's CPU throttling calculator, which its
    docs/throttling.md points to: 1 at 150, 2 at 800, 3 at 1,300, then one more for each 233 (4
    at about 1,530, Lighthouse's default, made for a high-end desktop)."""
    if benchmark_index >= 1300:
        return 3 + (benchmark_index - 1300) / 233
    if benchmark_index >= 800:
        return 2 + (benchmark_index - 800) / 500
    return max(1.0, 1 + (benchmark_index - 150) / 650)


@dataclass
class Run:
    scores: dict[str, float]        # per category
    benchmark_index: float          # the host's CPU, as Lighthouse measured it before this run


def audit(url: str, folder: str, slowdown: float | None = None) -> Run:
    """One Lighthouse run, at its default CPU slowdown or at ``slowdown``."""
    out = Path(folder) / "report.json"
    throttling = [] if slowdown is None else [f"--throttling.cpuSlowdownMultiplier={slowdown:.2f}"]
    subprocess.run(
        [str(LIGHTHOUSE), url, "--quiet", "--form-factor=mobile", "--output=json",
         f"--output-path={out}", f"--only-categories={','.join(CATEGORIES)}",
         f"--chrome-flags={CHROME_FLAGS}", *throttling],
        check=True, env={**os.environ, "CHROME_PATH": CHROMIUM})
    report = json.loads(out.read_text())
    metrics = ", ".join(f"{m} {report['audits'][m]['displayValue']}" for m in METRICS)
    benchmark_index = report["environment"]["benchmarkIndex"]
    print(f"    CPU slowdown {report['configSettings']['throttling']['cpuSlowdownMultiplier']:.2f}"
          f" (benchmark index {benchmark_index:.0f}): {metrics}")
    # What a slow network pays for: text sent uncompressed, scripts and styles not minified.
    findings = [f"{name} {report['audits'][name].get('displayValue') or 'flagged'}"
                for name in BYTES_AUDITS if report["audits"][name].get("score") not in (None, 1)]
    print(f"    bytes: {', '.join(findings) if findings else 'no compression or minification finding'}")
    return Run({name: report["categories"][name]["score"] for name in CATEGORIES}, benchmark_index)


def median_scores(runs: list[Run]) -> dict[str, float]:
    # Lighthouse's scores vary from run to run (CPU load): their median.
    return {c: statistics.median(run.scores[c] for run in runs) for c in CATEGORIES}


def settings() -> tuple[int, float | None]:
    """LIGHTHOUSE_RUNS (5 by default) and LIGHTHOUSE_CPU_SLOWDOWN (unset: calibrated), checked
    before the first run: a mistyped one is said at once, not after ten minutes of runs."""
    runs_text = os.environ.get("LIGHTHOUSE_RUNS", "5")
    if not runs_text.isdigit() or int(runs_text) < 1:
        raise ValueError(f"LIGHTHOUSE_RUNS must be a whole number of runs, 1 or more, "
                         f"not {runs_text!r}")
    pinned_text = os.environ.get("LIGHTHOUSE_CPU_SLOWDOWN")
    if not pinned_text:
        return int(runs_text), None
    try:
        pinned = float(pinned_text)
    except ValueError:
        pinned = math.nan
    if not 1 <= pinned <= 20:
        raise ValueError(f"LIGHTHOUSE_CPU_SLOWDOWN must be a slowdown from 1 to 20 (Lighthouse's "
                         f"default is 4), not {pinned_text!r}")
    return int(runs_text), pinned


def host_slowdown(indexes: list[float], pinned: float | None) -> float:
    """The slowdown the target is held at: ``pinned`` (LIGHTHOUSE_CPU_SLOWDOWN, to compare runs
    of the script over time) if given, else the one calibrated from the host at its fastest. The
    benchmark index moves from run to run, by half again even on a quiet machine here, and falls
    while the machine is busy: the highest one seen is closest to the host itself, and gives the
    strictest slowdown."""
    fastest = max(indexes)
    print(f"\nBenchmark index of this host over the runs: {min(indexes):.0f} to {fastest:.0f}")
    if fastest < 150:
        print("  (below 150 Lighthouse's calculator has no slowdown to give: this host is slower "
              "than the phone it scores for, and runs without one)")
    slowdown = pinned if pinned is not None else calibrated_slowdown(fastest)
    print(f"CPU slowdown held to the target: {slowdown:.2f}"
          f" ({'LIGHTHOUSE_CPU_SLOWDOWN' if pinned is not None else 'calibrated'};"
          " Lighthouse's default: 4)")
    return slowdown


def main() -> int:
    logging.getLogger("werkzeug").setLevel(logging.WARNING)
    if not LIGHTHOUSE.exists():
        print(f"Lighthouse is not installed: npm ci --prefix {LIGHTHOUSE.parents[2]}",
              file=sys.stderr)
        return 2
    try:
        runs, pinned = settings()
    except ValueError as exc:
        print(exc, file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as folder:
        origin, (app, server) = serve(folder)
        try:
            def launch_link(label: str) -> str:
                # A link of its own for each page's runs: a launch link lives 15 minutes.
                with app.app_context():
                    return launch_url(app, label.split()[0], _base_url=origin,
                                      **FIRST_PAGES[label])

            at_default: dict[str, list[Run]] = {}
            for label in FIRST_PAGES:
                print(f"{label}, at Lighthouse's default CPU slowdown:")
                url = launch_link(label)
                at_default[label] = [audit(url, folder) for _ in range(runs)]
            slowdown = host_slowdown([run.benchmark_index for page_runs in at_default.values()
                                      for run in page_runs], pinned)
            held: dict[str, dict[str, float]] = {}
            for label in FIRST_PAGES:
                print(f"{label}, at a CPU slowdown of {slowdown:.2f}:")
                url = launch_link(label)
                held[label] = median_scores([audit(url, folder, slowdown) for _ in range(runs)])
        finally:
            server.shutdown()
    columns = ("performance at 4", f"performance at {slowdown:.2f}", *CATEGORIES[1:])
    print(f"\n{'first page':<26}" + "".join(f"{c:>22}" for c in columns))
    missed = []
    for label in FIRST_PAGES:
        row = (median_scores(at_default[label])["performance"], *(held[label][c] for c in CATEGORIES))
        print(f"{label:<26}" + "".join(f"{score:>22.2f}" for score in row))
        missed += [f"{label}: {c} {held[label][c]:.2f} < {target}"
                   + (f" at a CPU slowdown of {slowdown:.2f}" if c == "performance" else "")
                   for c, target in TARGETS.items() if held[label][c] < target]
    for line in missed:
        print("target missed:", line)
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
