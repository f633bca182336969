"""The webhook receiver against a bare Flask endpoint, on SQLite and PostgreSQL; then a storm.

    PYTHONPATH=. .venv/bin/python bench/webhook_ack.py                  # both parts, ~3 minutes
    PYTHONPATH=. .venv/bin/python bench/webhook_ack.py --no-storm --rounds 3 --seconds 8
    PYTHONPATH=. .venv/bin/python bench/webhook_ack.py --storm-only --storm 10000

Needs Debian's ``postgresql`` server binaries (a throw-away cluster is started, as the tests do).

**Acknowledgements.** For SQLite and for PostgreSQL, gunicorn (gthread, 2 workers x 25 threads by
default) serves the checkout app, which also has a bare endpoint on the same server (``POST /bare``:
read the body, answer JSON; every app-level hook runs for it too). 50 concurrent senders (5
processes x 10 threads, each thread with its own ``requests.Session``) post distinct signed
deliveries for N seconds to one endpoint, then the other, for ``--rounds`` rounds (the order
alternates; before each run the dispatcher has processed what the last one stored, so neither
endpoint runs beside the other's leftovers). The receiver's dispatcher runs as in production
(processing and signals after the ack); the full-order fetch is off (nothing upstream). One
table shows both databases side by side: throughput and p50/p99 latency pooled over the rounds,
the ratios to the bare endpoint, and whether the targets are met (issue 11: throughput at least
0.8 of the bare endpoint's, p99 at most 1.5 times its). The machine's cores are shared: compare the
ratios of one run, not figures across runs. Beside them, the server's own CPU per request (gunicorn's
workers, and PostgreSQL's processes): the load generator runs on the same cores, so requests a
second move with it from run to run; the server's cost per request moves much less.

**Storm.** 10,000 deliveries against 2 workers on PostgreSQL: the order-status histories of many
orders (statuses skipped at random, as the upstream may), plus 30 % exact duplicates and 5 %
forgeries (a newer final status signed with a wrong key, or a real body with a wrong signature),
all shuffled and sent by 50 concurrent senders. Every ``order_status_changed`` a worker sends is
appended to a file. It prints, all required to be 0:

* lost: a valid distinct delivery that was acknowledged but whose effect is missing (no processed
  event for its bytes; or it is its order's newest update and its signal never fired);
* doubled: signals fired more than once for one order and status (the extra firings);
* regressed: orders whose stored status is not their newest acknowledged update;
* forged accepted: forgeries answered 2xx, stored, or whose status was signalled;

and the time from the first send until every signal has fired (every event processed, every owed
signal sent).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import multiprocessing
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

SENDER_PROCESSES = 5
TARGET_THROUGHPUT = 0.8     # at least this fraction of the bare endpoint's requests per second
TARGET_P99 = 1.5            # at most this multiple of the bare endpoint's p99

Send = tuple[Any, bytes, str]       # (key, body, x-signature)


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

    signal_log = os.environ.get("BENCH_SIGNAL_LOG")
    if signal_log:
        from checkout.signals import order_status_changed

        @order_status_changed.connect_via(app)
        def write_down(sender, order_id, status, **kwargs):
            fd = os.open(signal_log, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            try:
                os.write(fd, f"{order_id} {status}\n".encode())   # one write: lines never mix
            finally:
                os.close(fd)

    return app


# -- deliveries ------------------------------------------------------------------------------------

T0 = datetime(2026, 1, 1, tzinfo=UTC)


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def _order_body(order_id: str, status: str, updated_at: datetime, ref: str) -> bytes:
    payload = {"event": "order-status-change", "data": {"order": {
        "_id": order_id, "userId": "u", "userEmail": "a@example.com",
        "countryIsoCode": "NG", "flow": "regular", "type": "on_ramp", "source": "api",
        "status": status, "merchantOrderParams": ref,
        "deposit": {"paymentChannel": "bank", "currencyType": "fiat", "currencyCode": "NGN"},
        "payout": {"paymentChannel": "bank", "currencyType": "crypto", "currencyCode": "USDC"},
        "createdAt": _iso(T0), "updatedAt": _iso(updated_at)}, "userKyc": {}}}
    return json.dumps(payload, separators=(",", ":")).encode()


def _sign(body: bytes, secret: str | None = None) -> str:
    from checkout.config import SANDBOX_WEBHOOK_SECRET
    from checkout.signature import sign

    return sign(body, secret or SANDBOX_WEBHOOK_SECRET)


def _distinct_deliveries(count: int, tag: str) -> list[Send]:
    t0 = datetime.now(UTC)
    return [(None, body, _sign(body)) for body in (
        _order_body(f"{tag}-{n}", "deposit_awaiting", t0 + timedelta(milliseconds=n), f"ref-{n}")
        for n in range(count))]


# -- senders ---------------------------------------------------------------------------------------

def _sender_process(url: str, per_thread: list[list[Send]], seconds: float | None,
                    queue: Any) -> None:
    import requests

    results: list[tuple[Any, int, float]] = []       # (key, status, seconds)
    lock = threading.Lock()
    start = threading.Barrier(len(per_thread))

    def run(sends: list[Send]) -> None:
        session = requests.Session()
        mine = []
        start.wait()
        stop = time.monotonic() + seconds if seconds else None
        for key, body, signature in sends:
            if stop is not None and time.monotonic() >= stop:
                break
            t = time.perf_counter()
            response = session.post(url, data=body, timeout=60, allow_redirects=False,
                                    headers={"Content-Type": "application/json",
                                             "x-signature": signature})
            mine.append((key, response.status_code, time.perf_counter() - t))
        with lock:
            results.extend(mine)

    threads = [threading.Thread(target=run, args=(sends,)) for sends in per_thread]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    queue.put(results)


def send_all(url: str, per_sender: list[list[Send]],
             seconds: float | None = None) -> list[tuple[Any, int, float]]:
    """Each list posted in order by its own thread (``SENDER_PROCESSES`` processes share them),
    for ``seconds`` or until the lists are sent; returns (key, status, latency) of each post."""
    ctx = multiprocessing.get_context("fork")
    queue = ctx.Queue()
    procs = [ctx.Process(target=_sender_process,
                         args=(url, per_sender[p::SENDER_PROCESSES], seconds, queue))
             for p in range(SENDER_PROCESSES)]
    for p in procs:
        p.start()
    results = [r for _ in procs for r in queue.get()]
    for p in procs:
        p.join()
    return results


def measure(url: str, senders: int, seconds: float, tag: str,
            server_cpu: Callable[[], float] = lambda: 0.0) -> dict[str, Any]:
    """Distinct deliveries at ``url`` from ``senders`` threads for ``seconds``; ``server_cpu``:
    the CPU seconds the server has used so far, read before and after the sending."""
    per_sender = [_distinct_deliveries(int(seconds * 400) + 50, f"{tag}-{s}")
                  for s in range(senders)]
    cpu = server_cpu()
    results = send_all(url, per_sender, seconds)
    return {"latencies": [latency for _, _, latency in results], "seconds": seconds,
            "errors": sum(status != 200 for _, status, _ in results),
            "cpu": server_cpu() - cpu}


def summary(runs: list[dict[str, Any]]) -> dict[str, float]:
    latencies = sorted(x for run in runs for x in run["latencies"])

    def pct(q: float) -> float:
        return latencies[min(len(latencies) - 1, int(q * len(latencies)))] * 1000

    return {"requests": len(latencies), "errors": sum(run["errors"] for run in runs),
            "rps": len(latencies) / sum(run["seconds"] for run in runs),
            "cpu_ms": 1000 * sum(run["cpu"] for run in runs) / max(1, len(latencies)),
            "p50": pct(0.50), "p99": pct(0.99)}


# -- servers ---------------------------------------------------------------------------------------

def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def serve(database_url: str, workers: int, threads: int, log: Path, **env: str):
    # Create the tables once, before the workers start (as a deploy step would).
    os.environ["BENCH_DATABASE_URL"] = database_url
    create_app().extensions["checkout"].engine.dispose()
    port = _free_port()
    gunicorn = Path(sys.executable).with_name("gunicorn")
    # --chdir and PYTHONPATH: the workers import this tree's checkout, not an installed one.
    proc = subprocess.Popen([str(gunicorn), "-w", str(workers), "-k", "gthread", "--threads",
                             str(threads), "-b", f"127.0.0.1:{port}", "--log-level", "warning",
                             "--chdir", str(ROOT / "bench"), "webhook_ack:create_app()"],
                            env={**os.environ, "BENCH_DATABASE_URL": database_url,
                                 "PYTHONPATH": str(ROOT), **env},
                            stdout=subprocess.DEVNULL, stderr=log.open("ab"))
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return proc, f"http://127.0.0.1:{port}"
        except OSError:
            time.sleep(0.1)
    proc.kill()
    raise RuntimeError("gunicorn did not start")


def server_cpu(proc: subprocess.Popen) -> Callable[[], float]:
    """The CPU seconds used so far by gunicorn's workers and by every PostgreSQL process (none
    for SQLite, which runs in the workers), from Linux's /proc. The load generator shares the
    machine's cores, so the ratio of requests a second moves with it; this is the server's own
    cost per request."""
    def used() -> float:
        ticks = 0
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit():
                continue
            try:
                stat = (entry / "stat").read_text()
            except OSError:         # it has exited
                continue
            name = stat[stat.index("(") + 1:stat.rindex(")")]
            fields = stat[stat.rindex(")") + 1:].split()    # [1] ppid, [11] utime, [12] stime
            if int(fields[1]) == proc.pid or name == "postgres":
                ticks += int(fields[11]) + int(fields[12])  # user and system, all threads
        return ticks / os.sysconf("SC_CLK_TCK")
    return used


def _stop(proc: subprocess.Popen) -> None:
    proc.terminate()
    proc.wait(15)


def _wait_until(done: Callable[[], bool], timeout: float) -> float:
    """Seconds until ``done()`` held (polled every 0.1 s), or the timeout."""
    t0 = time.monotonic()
    while not done() and time.monotonic() - t0 < timeout:
        time.sleep(0.1)
    return time.monotonic() - t0


def _stored_count(engine) -> int:
    from sqlalchemy import func, select

    from checkout.webhooks.store import STORED, events_table

    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(events_table)
                            .where(events_table.c.state == STORED)).scalar_one()


# -- acknowledgements ------------------------------------------------------------------------------

def bench_backend(name: str, database_url: str, args) -> dict[str, Any]:
    from sqlalchemy import create_engine

    engine = create_engine(database_url)
    proc, base = serve(database_url, args.workers, args.threads, args.log)
    urls = {"bare": f"{base}/bare", "webhooks": f"{base}/checkout/webhooks"}
    runs: dict[str, list[dict[str, Any]]] = {"bare": [], "webhooks": []}
    backlog: list[tuple[int, float]] = []
    try:
        for kind, url in urls.items():                      # warm up both
            measure(url, args.senders, 1.0, f"warm-{name}-{kind}")
        for r in range(args.rounds):
            for kind in ("bare", "webhooks") if r % 2 == 0 else ("webhooks", "bare"):
                _wait_until(lambda: _stored_count(engine) == 0, 120)
                runs[kind].append(measure(urls[kind], args.senders, args.seconds,
                                          f"{name}-{r}-{kind}", server_cpu(proc)))
                if kind == "webhooks":
                    left = _stored_count(engine)
                    backlog.append((left, _wait_until(lambda: _stored_count(engine) == 0, 120)
                                    if left else 0.0))
    finally:
        _stop(proc)
        engine.dispose()
    rounds = [len(w["latencies"]) / max(1, len(b["latencies"]))
              for b, w in zip(runs["bare"], runs["webhooks"], strict=True)]
    return {"bare": summary(runs["bare"]), "webhooks": summary(runs["webhooks"]),
            "round_ratios": rounds, "backlog": backlog}


def print_ack_table(results: dict[str, dict[str, Any]], args) -> bool:
    print(f"\nAcknowledgements: {args.senders} concurrent senders, {args.rounds} rounds of "
          f"{args.seconds:g} s per endpoint, gunicorn {args.workers} workers x {args.threads} "
          f"threads, {os.cpu_count()} CPUs (shared: compare ratios within this run)\n")
    names = list(results)
    print(f"{'':<22}" + "".join(f"{name:^33}" for name in names))
    print(f"{'':<22}" + "".join(f"{'bare':>11}{'webhooks':>11}{'ratio':>11}" for _ in names))
    all_met = True
    for key, label, fmt in (("requests", "requests", "{:.0f}"), ("errors", "non-200", "{:.0f}"),
                            ("rps", "req/s", "{:.0f}"), ("p50", "p50 ms", "{:.1f}"),
                            ("p99", "p99 ms", "{:.1f}"),
                            ("cpu_ms", "server CPU ms/req", "{:.2f}")):
        line = f"{label:<22}"
        for name in names:
            bare, hooks = results[name]["bare"][key], results[name]["webhooks"][key]
            ratio = f"{hooks / bare:.2f}" if key in ("rps", "p50", "p99", "cpu_ms") and bare \
                else ""
            line += f"{fmt.format(bare):>11}{fmt.format(hooks):>11}{ratio:>11}"
        print(line)
    print()
    for name in names:
        bare, hooks = results[name]["bare"], results[name]["webhooks"]
        throughput, tail = hooks["rps"] / bare["rps"], hooks["p99"] / bare["p99"]
        met = throughput >= TARGET_THROUGHPUT and tail <= TARGET_P99 and not hooks["errors"]
        all_met &= met
        print(f"{name}: throughput {throughput:.2f} of bare (target >= {TARGET_THROUGHPUT}), "
              f"p99 {tail:.2f} x bare (target <= {TARGET_P99}): "
              f"{'met' if met else 'NOT MET'}; per round throughput "
              + ", ".join(f"{r:.2f}" for r in results[name]["round_ratios"]))
        print(f"{'':<{len(name)}}  left unprocessed when the senders stopped (then seconds to "
              "process): " + ", ".join(f"{n} ({s:.1f} s)" for n, s in results[name]["backlog"]))
    return all_met


# -- storm -----------------------------------------------------------------------------------------

# The webhook status set's transitions, as the storm test walks them.
from tests.webhooks.helpers import NEXT_STATUSES as NEXT  # noqa: E402


class Storm:
    """The deliveries of a storm and what each one is."""

    def __init__(self, total: int, seed: int = 11, duplicates: float = 0.30,
                 forged: float = 0.05) -> None:
        rng = random.Random(seed)
        n_forged = round(total * forged)
        n_duplicates = round(total * duplicates)
        distinct = total - n_forged - n_duplicates
        self.valid: dict[str, tuple[str, str, datetime]] = {}     # sha256 -> order, status, time
        self.forged: set[str] = set()                             # sha256 of forged bodies
        sends: list[Send] = []
        order = 0
        while len(self.valid) < distinct:
            order_id, path = f"storm-{order:05d}", ["deposit_awaiting"]
            while NEXT[path[-1]] and len(path) < 8:
                path.append(rng.choice(NEXT[path[-1]]))
            # Statuses can be skipped: the upstream never sends some of them.
            path = [s for i, s in enumerate(path) if i == len(path) - 1 or rng.random() > 0.15]
            for i, status in enumerate(path[:distinct - len(self.valid)]):
                moment = T0 + timedelta(seconds=order + 3 * i, milliseconds=rng.randrange(3))
                body = _order_body(order_id, status, moment, f"ref-{order}")
                key = hashlib.sha256(body).hexdigest()
                self.valid[key] = (order_id, status, moment)
                sends.append((key, body, _sign(body)))
            order += 1
        originals = list(sends)
        sends += [rng.choice(originals) for _ in range(n_duplicates)]
        for n in range(n_forged):
            if n % 2:       # a real body under a wrong signature
                key, body, _ = rng.choice(originals)
            else:           # a newer final status nobody signed
                order_id, _, moment = self.valid[rng.choice(originals)[0]]
                body = _order_body(order_id, "refund_successful", moment + timedelta(days=1),
                                   "forged")
                key = hashlib.sha256(body).hexdigest()
                self.forged.add(key)
            sends.append((("forged", key), body, _sign(body, "not-the-webhook-secret")))
        rng.shuffle(sends)
        self.sends = sends


def run_storm(base_url: str, args) -> dict[str, Any]:
    from sqlalchemy import create_engine, select

    from checkout.webhooks.store import (
        DISPATCHED,
        PROCESSED,
        events_table,
        orders_table,
        signal_log_table,
    )

    storm = Storm(args.storm)
    from tests import postgres

    database_url = postgres.fresh_database(base_url)
    engine = create_engine(database_url)
    with tempfile.TemporaryDirectory(prefix="bench-storm-") as tmp:
        signal_log = Path(tmp) / "signals.log"
        signal_log.touch()
        proc, base = serve(database_url, args.workers, args.threads, args.log,
                           BENCH_SIGNAL_LOG=str(signal_log))
        try:
            # Both workers up and their dispatchers started, as in production before a storm.
            measure(f"{base}/bare", args.senders, 1.0, "warm-storm")
            t0 = time.monotonic()
            results = send_all(f"{base}/checkout/webhooks",
                               [storm.sends[i::args.senders] for i in range(args.senders)])
            sent = time.monotonic() - t0
            acked = {key for key, status, _ in results if status == 200 and key in storm.valid}
            newest: dict[str, tuple[datetime, str, str]] = {}      # order -> time, status, sha
            for key in acked:
                order_id, status, moment = storm.valid[key]
                if order_id not in newest or newest[order_id][0] < moment:
                    newest[order_id] = (moment, status, key)

            def fired() -> Counter:
                return Counter(tuple(line.split()) for line in
                               signal_log.read_text().splitlines())

            def settled() -> bool:
                with engine.connect() as conn:
                    busy = conn.execute(select(events_table.c.id).where(
                        events_table.c.state != PROCESSED).limit(1)).first()
                    owed = conn.execute(select(signal_log_table.c.id).where(
                        signal_log_table.c.state != DISPATCHED).limit(1)).first()
                if busy or owed:
                    return False
                seen = fired()
                return all((o, s) in seen for o, (_, s, _) in newest.items())

            _wait_until(settled, 300)
            until_fired = time.monotonic() - t0
            time.sleep(1.0)           # a signal sent twice would show by now
            seen = fired()
            with engine.connect() as conn:
                processed = {sha for sha, state in conn.execute(
                    select(events_table.c.body_sha256, events_table.c.state))
                    if state == PROCESSED}
                stored = {o: (s, t) for o, s, t in conn.execute(select(
                    orders_table.c.order_id, orders_table.c.status,
                    orders_table.c.status_updated_at))}
        finally:
            _stop(proc)
            engine.dispose()
    forged_sent = [r for r in results if isinstance(r[0], tuple)]
    lost = sum(key not in processed for key in acked) + sum(
        (o, s) not in seen for o, (_, s, _) in newest.items())
    regressed = sum(stored.get(o, (None,))[0] != s for o, (_, s, _) in newest.items())
    legit = {(o, s) for o, s, _ in storm.valid.values()}
    forged_accepted = (sum(status // 100 == 2 for _, status, _ in forged_sent)
                       + len(storm.forged & processed)
                       + sum(pair not in legit for pair in seen))
    latencies = sorted(latency for _, _, latency in results)
    return {"deliveries": len(storm.sends), "distinct": len(storm.valid),
            "forged": len(forged_sent), "orders": len({o for o, _, _ in storm.valid.values()}),
            "codes": Counter(status for _, status, _ in results),
            "valid_refused": sum(status != 200 for key, status, _ in results
                                 if key in storm.valid),
            "lost": lost, "doubled": sum(n - 1 for n in seen.values() if n > 1),
            "regressed": regressed, "forged_accepted": forged_accepted,
            "sent": sent, "until_fired": until_fired, "signals": sum(seen.values()),
            "p99": latencies[int(0.99 * (len(latencies) - 1))] * 1000}


def print_storm(r: dict[str, Any], args) -> bool:
    ok = not (r["lost"] or r["doubled"] or r["regressed"] or r["forged_accepted"])
    print(f"\nStorm on PostgreSQL: {r['deliveries']} deliveries ({r['distinct']} distinct valid "
          f"for {r['orders']} orders, {r['deliveries'] - r['distinct'] - r['forged']} duplicates, "
          f"{r['forged']} forged; shuffled), {args.senders} senders, gunicorn {args.workers} "
          f"workers x {args.threads} threads")
    print(f"  answers: {dict(sorted(r['codes'].items()))}; valid deliveries not acknowledged "
          f"(the sender would retry): {r['valid_refused']}")
    print(f"  lost {r['lost']}, doubled {r['doubled']}, regressed {r['regressed']}, "
          f"forged accepted {r['forged_accepted']} (all required 0): {'ok' if ok else 'FAILED'}")
    print(f"  sent in {r['sent']:.1f} s ({r['deliveries'] / r['sent']:.0f}/s, ack p99 "
          f"{r['p99']:.0f} ms); every signal fired {r['until_fired']:.1f} s after the first send "
          f"({r['signals']} signals)")
    return ok


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=8.0, help="per endpoint and round")
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--senders", type=int, default=50)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--threads", type=int, default=25)
    parser.add_argument("--only", choices=["sqlite", "postgresql"], help="acknowledgements")
    parser.add_argument("--storm", type=int, default=10_000, help="deliveries in the storm")
    parser.add_argument("--no-storm", action="store_true")
    parser.add_argument("--storm-only", action="store_true")
    args = parser.parse_args()

    from tests import postgres

    ok = True
    with tempfile.TemporaryDirectory(prefix="bench-webhooks-") as tmp, \
            postgres.cluster() as base_url:
        # gunicorn's own log (forgeries refused, anything unexpected), shown at the end.
        args.log = Path(tmp) / "gunicorn.log"
        if not args.storm_only:
            results: dict[str, dict[str, Any]] = {}
            if args.only in (None, "sqlite"):
                results["SQLite"] = bench_backend("SQLite", f"sqlite:///{tmp}/bench.sqlite3",
                                                  args)
            if args.only in (None, "postgresql"):
                results["PostgreSQL"] = bench_backend("PostgreSQL",
                                                      postgres.fresh_database(base_url), args)
            ok &= print_ack_table(results, args)
        if not args.no_storm:
            ok &= print_storm(run_storm(base_url, args), args)
        lines = args.log.read_text(errors="replace").splitlines()
        unexpected = [line for line in lines if "webhook refused" not in line]
        print(f"\ngunicorn logged {len(lines) - len(unexpected)} refused forgeries and "
              f"{len(unexpected)} other lines" + "".join(f"\n  {line}" for line in unexpected[:20]))
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
