"""The shop while its checkout's PostgreSQL database is frozen, under load.

    PYTHONPATH=. .venv/bin/python bench/frozen_database.py               # about 40 s
    PYTHONPATH=. .venv/bin/python bench/frozen_database.py --seconds 30 --shoppers 20

The shop of ``tests/resilience_gunicorn_app.py`` under real gunicorn with the shipped settings (2
workers, gthread), on a throw-away PostgreSQL cluster, its upstream the standalone sandbox; the
load of ``tests/frozen_database_load.py``: shoppers reloading their checkout page every half
second, a sender of signed webhooks, a readiness probe twice a second and a visitor of the shop's
own page. Once the load runs, every process of the cluster is stopped (SIGSTOP) for ``--seconds``,
then started again (SIGCONT); each delivery refused is sent again until taken.

Printed, for what was asked while the database was frozen: the shop's own page (p50, p99, max),
and for checkout pages, webhook deliveries and the readiness probe their answers by status and how
long the refused ones took (p50, p99, max); then the warning lines and tracebacks in the shop's
log, and the deliveries sent and stored after the thaw.
"""
from __future__ import annotations

import argparse
import collections
import statistics
import sys
import tempfile
import time
from pathlib import Path

from tests import frozen_database_load


def _quantile(values: list[float], q: int) -> float:
    if len(values) < 2:
        return values[0] if values else float("nan")
    return statistics.quantiles(values, n=100, method="inclusive")[q - 1]


def _times(values: list[float]) -> str:
    if not values:
        return "-"
    return (f"p50 {_quantile(values, 50):.2f} s, p99 {_quantile(values, 99):.2f} s, "
            f"max {max(values):.2f} s")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=20.0, help="how long it stays frozen")
    parser.add_argument("--shoppers", type=int, default=10)
    parser.add_argument("--webhooks", type=float, default=10.0, help="deliveries per second")
    args = parser.parse_args()

    def thawed_after(run: frozen_database_load.Run) -> bool:
        return time.monotonic() - run.frozen_at >= args.seconds

    with tempfile.TemporaryDirectory() as folder:
        run = frozen_database_load.run(Path(folder), shoppers=args.shoppers,
                                       webhooks_per_second=args.webhooks, thaw_when=thawed_after)
    print(f"PostgreSQL frozen {run.thawed_at - run.frozen_at:.0f} s; {args.shoppers} shoppers, "
          f"{args.webhooks:g} webhooks/s, gunicorn 2 workers x 16 threads (shipped settings)")
    home = [s.seconds for s in run.during_freeze("home")]
    print(f"{'shop home page':<22} {len(home):>5} asked   {_times(home)}")
    for kind, name in (("checkout", "checkout page"), ("webhook", "webhook delivery"),
                       ("ready", "readiness probe")):
        answered = run.during_freeze(kind)
        statuses = collections.Counter(s.status for s in answered)
        refused = [s.seconds for s in answered if s.status >= 500 or s.status == 0]
        print(f"{name:<22} {len(answered):>5} asked   "
              f"{dict(sorted(statuses.items()))}; refused in {_times(refused)}")
    warnings = [line for line in run.log.splitlines() if "WARNING" in line or "ERROR" in line]
    kinds = collections.Counter(line.split("] ", 2)[-1][:60] for line in warnings)
    print(f"log: {len(warnings)} warning/error lines, {run.log.count('Traceback')} tracebacks")
    for line, count in kinds.most_common(8):
        print(f"  {count:>5} x {line}")
    print(f"deliveries: {run.deliveries} sent, {run.stored} stored after the thaw "
          f"({run.deliveries - run.stored} lost)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
