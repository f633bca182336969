"""Acknowledgement latency and throughput of the webhook receiver, against a bare Flask endpoint.

    .venv/bin/python bench/webhook_ack.py [--seconds 10] [--senders 50] [--workers 2]

For SQLite and for PostgreSQL (a throw-away cluster, as the tests start one), this starts gunicorn
(gthread) serving the checkout app, which also has a bare endpoint (``POST /bare``: read the body,
answer JSON). 50 concurrent senders (5 processes x 10 threads, each thread with its own
``requests.Session``) post distinct signed deliveries for N seconds to each endpoint in turn, and
the script prints p50/p99 ack latency and throughput side by side. The receiver's own dispatcher
thread runs meanwhile (processing and signals after the ack), as in production; the full-order
fetch is off (nothing upstream to measure).

Target (issue 4): the receiver's p99 within 3 times the bare endpoint's.
"""
from __future__ import annotations

import argparse
import multiprocessing
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SENDER_PROCESSES = 5


def create_app():
    """The served app (gunicorn imports this): checkout + a bare endpoint on the same server."""
    from flask import Flask, jsonify, request

    from checkout import Checkout

    app = Flask("bench_host")
    app.config.update(CHECKOUT_DATABASE_URL=os.environ["BENCH_DATABASE_URL"],
                      CHECKOUT_WEBHOOK_FETCH_ORDERS=False,
                      CHECKOUT_WEBHOOK_BACKGROUND=os.environ.get("BENCH_BACKGROUND", "1") == "1")
    Checkout(app)

    @app.post("/bare")
    def bare():
        request.get_data(cache=False)
        return jsonify(received=True, duplicate=False)

    return app


# -- senders ---------------------------------------------------------------------------------------

def _deliveries(count: int, tag: str) -> list[tuple[bytes, str]]:
    import json
    from datetime import UTC, datetime, timedelta

    from checkout.config import SANDBOX_WEBHOOK_SECRET
    from checkout.signature import sign

    t0 = datetime.now(UTC)
    out = []
    for n in range(count):
        moment = (t0 + timedelta(milliseconds=n)).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
        payload = {"event": "order-status-change", "data": {"order": {
            "_id": f"{tag}-{n}", "userId": "u", "userEmail": "a@example.com",
            "countryIsoCode": "NG", "flow": "regular", "type": "on_ramp", "source": "api",
            "status": "deposit_awaiting", "merchantOrderParams": f"ref-{n}",
            "deposit": {"paymentChannel": "bank", "currencyType": "fiat", "currencyCode": "NGN"},
            "payout": {"paymentChannel": "bank", "currencyType": "crypto", "currencyCode": "USDC"},
            "createdAt": moment, "updatedAt": moment}, "userKyc": {}}}
        body = json.dumps(payload, separators=(",", ":")).encode()
        out.append((body, sign(body, SANDBOX_WEBHOOK_SECRET)))
    return out


def _sender_process(url: str, threads: int, seconds: float, tag: str, queue) -> None:
    import requests

    per_thread = [_deliveries(int(seconds * 400) + 50, f"{tag}-{t}") for t in range(threads)]
    latencies: list[float] = []
    errors = [0]
    lock = threading.Lock()
    start = threading.Barrier(threads)

    def run(index: int) -> None:
        session = requests.Session()
        mine: list[float] = []
        bad = 0
        start.wait()
        stop = time.monotonic() + seconds
        for body, signature in per_thread[index]:
            if time.monotonic() >= stop:
                break
            t = time.perf_counter()
            response = session.post(url, data=body, timeout=30, allow_redirects=False,
                                    headers={"Content-Type": "application/json",
                                             "x-signature": signature})
            mine.append(time.perf_counter() - t)
            bad += response.status_code != 200
        with lock:
            latencies.extend(mine)
            errors[0] += bad

    workers = [threading.Thread(target=run, args=(i,)) for i in range(threads)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    queue.put((latencies, errors[0]))


def measure(url: str, senders: int, seconds: float, tag: str) -> dict[str, float]:
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    per_process = senders // SENDER_PROCESSES
    procs = [ctx.Process(target=_sender_process,
                         args=(url, per_process, seconds, f"{tag}-{p}", queue))
             for p in range(SENDER_PROCESSES)]
    for p in procs:
        p.start()
    latencies: list[float] = []
    errors = 0
    for _ in procs:
        lat, err = queue.get()
        latencies += lat
        errors += err
    for p in procs:
        p.join()
    latencies.sort()

    def pct(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000

    return {"requests": len(latencies), "errors": errors, "rps": len(latencies) / seconds,
            "p50": pct(0.50), "p99": pct(0.99)}


# -- servers ---------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(database_url: str, workers: int, threads: int):
    port = _free_port()
    env = {**os.environ, "BENCH_DATABASE_URL": database_url, "PYTHONPATH": str(ROOT)}
    gunicorn = Path(sys.executable).with_name("gunicorn")
    proc = subprocess.Popen([str(gunicorn), "-w", str(workers), "-k", "gthread", "--threads",
                             str(threads), "-b", f"127.0.0.1:{port}", "--log-level", "warning",
                             "--chdir", str(ROOT / "bench"), "webhook_ack:create_app()"],
                            env=env, stdout=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("gunicorn did not start")


def bench_backend(name: str, database_url: str, args) -> list[tuple[str, dict]]:
    # Create the tables once, before the workers start (as a deploy step would).
    os.environ["BENCH_DATABASE_URL"] = database_url
    create_app().extensions["checkout"].engine.dispose()
    proc, base = serve(database_url, args.workers, args.threads)
    try:
        measure(f"{base}/bare", args.senders, 1.0, f"warm-{name}")           # warm up both
        measure(f"{base}/checkout/webhooks", args.senders, 1.0, f"warm-{name}")
        bare = measure(f"{base}/bare", args.senders, args.seconds, f"bare-{name}")
        hooks = measure(f"{base}/checkout/webhooks", args.senders, args.seconds, f"wh-{name}")
        hooks["backlog"], hooks["drain"] = _drain(database_url)
    finally:
        proc.terminate()
        proc.wait(15)
    return [(f"{name}: bare Flask endpoint", bare), (f"{name}: POST /checkout/webhooks", hooks)]


def _drain(database_url: str) -> tuple[int, float]:
    """Events still unprocessed when the senders stopped, and seconds until none are."""
    from sqlalchemy import create_engine, func, select

    from checkout.webhooks.store import events_table

    engine = create_engine(database_url)
    stored = select(func.count()).select_from(events_table).where(events_table.c.state == "stored")
    t0 = time.monotonic()
    with engine.connect() as conn:
        backlog = conn.execute(stored).scalar_one()
    left = backlog
    while left and time.monotonic() - t0 < 120:
        time.sleep(0.2)
        with engine.connect() as conn:
            left = conn.execute(stored).scalar_one()
    engine.dispose()
    return backlog, time.monotonic() - t0 if backlog else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--senders", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=25)
    parser.add_argument("--only", choices=["sqlite", "postgresql"])
    args = parser.parse_args()

    from tests import postgres

    rows: list[tuple[str, dict]] = []
    with tempfile.TemporaryDirectory(prefix="bench-webhooks-") as tmp:
        if args.only in (None, "sqlite"):
            rows += bench_backend("SQLite", f"sqlite:///{tmp}/bench.sqlite3", args)
        if args.only in (None, "postgresql"):
            with postgres.cluster() as base_url:
                rows += bench_backend("PostgreSQL", postgres.fresh_database(base_url), args)

    print(f"\n{args.senders} concurrent senders, {args.seconds:g} s each, gunicorn "
          f"{args.workers} workers x {args.threads} threads, {os.cpu_count()} CPUs\n")
    print(f"{'target':<36} {'requests':>9} {'non-200':>8} {'req/s':>8} {'p50 ms':>8} "
          f"{'p99 ms':>8} {'p99/bare':>9}")
    for i, (label, r) in enumerate(rows):
        bare_p99 = rows[i - i % 2][1]["p99"]
        print(f"{label:<36} {r['requests']:>9} {r['errors']:>8} {r['rps']:>8.0f} "
              f"{r['p50']:>8.1f} {r['p99']:>8.1f} {r['p99'] / bare_p99:>9.2f}")
    for label, r in rows:
        if "backlog" in r:
            print(f"{label}: {r['backlog']} events not yet processed when the senders stopped; "
                  f"processed {r['drain']:.1f} s later")


if __name__ == "__main__":
    main()
