"""A gunicorn configuration for the checkout: threaded workers that outlast a slow upstream, masked
access logs, and metrics summed over workers.

::

    gunicorn -c python:checkout.gunicorn_config -w 4 'wsgi:app'

or, from a configuration file of your own (its settings and hooks are plain names)::

    from checkout.gunicorn_config import *    # noqa: F403   (or name the ones you want)

* ``worker_class = "gthread"`` with ``threads = 16``: a request waiting on the upstream holds one
  thread, not the whole worker, so the host's own pages are answered meanwhile. (With gunicorn's
  default sync workers, four checkout pages waiting on a hanging upstream hold four workers, and
  the shop's home page waits behind them.) The checkout lets at most
  ``CHECKOUT_UPSTREAM_MAX_IN_FLIGHT`` (8) of a worker's threads wait on the upstream at once.
* ``timeout = 60``: above the most a checkout request can take. Its upstream calls get
  ``CHECKOUT_REQUEST_BUDGET`` (25 s) in all, and its database waits are bounded too; a worker is
  killed only if something else hangs it. With gthread workers the timeout watches the worker's
  own loop, which keeps beating while threads wait.
* ``logger_class``: :class:`checkout.logs.GunicornLogger`, which masks session ids and tokens
  (the metrics token in an ``Authorization`` header too) in gunicorn's own lines.
* ``PROMETHEUS_MULTIPROC_DIR``: prometheus_client's multiprocess mode, so that a scrape of
  ``{prefix}/metrics``, whichever worker answers it, shows the sum of every worker's counts. The
  variable must be set before prometheus_client is imported: importing this module sets it, in
  gunicorn's master process, before any app is loaded (workers inherit it). When it is not set
  already, a private directory is made for this server and removed when it stops.
* ``on_starting``: empties that directory of prometheus_client's files left by an earlier run
  (only ``counter_*.db``, ``histogram_*.db``, ``gauge_*.db``, ``summary_*.db``), but for those of
  processes still running: a ``flask checkout worker`` given the same directory counts there
  too, and a file removed under it would take its counts out of every scrape.
* ``child_exit``: ``prometheus_client.multiprocess.mark_process_dead`` for a worker that stopped.
  Its counts stay (the totals must not go down); live gauges of that worker go.
"""
from __future__ import annotations

import glob
import os
import shutil
import tempfile
from typing import Any

from .metrics import MULTIPROC_ENV

__all__ = ["child_exit", "logger_class", "on_exit", "on_starting", "threads", "timeout",
           "worker_class"]

worker_class = "gthread"
threads = 16
timeout = 60

logger_class = "checkout.logs.GunicornLogger"

# prometheus_client's file names (values.py: "<type>_<pid>.db", gauges "gauge_<mode>_<pid>.db").
_PROMETHEUS_FILES = ("counter_*.db", "histogram_*.db", "gauge_*.db", "summary_*.db")


def _directory() -> tuple[str, bool]:
    """The multiprocess directory, and whether this module made it."""
    given = os.environ.get(MULTIPROC_ENV)
    if given:
        os.makedirs(given, exist_ok=True)
        return given, False
    made = tempfile.mkdtemp(prefix="checkout-metrics-")
    os.environ[MULTIPROC_ENV] = made
    return made, True


_DIRECTORY, _MADE_HERE = _directory()


def on_starting(server: Any) -> None:
    """In the master, before any worker: no count of an earlier run is added to this one's."""
    for pattern in _PROMETHEUS_FILES:
        for path in glob.glob(os.path.join(_DIRECTORY, pattern)):
            if not _of_a_running_process(path):
                os.remove(path)


def _of_a_running_process(path: str) -> bool:
    """Whether the process that wrote ``path`` (``<type>_<pid>.db``) still runs."""
    try:
        pid = int(os.path.basename(path).removesuffix(".db").rsplit("_", 1)[1])
        os.kill(pid, 0)
    except (ValueError, IndexError, ProcessLookupError):
        return False
    except PermissionError:         # another user's process
        return True
    return True


def child_exit(server: Any, worker: Any) -> None:
    """In the master, for each worker that stopped."""
    from prometheus_client import multiprocess

    multiprocess.mark_process_dead(worker.pid, _DIRECTORY)  # type: ignore[no-untyped-call]


def on_exit(server: Any) -> None:
    if _MADE_HERE:
        shutil.rmtree(_DIRECTORY, ignore_errors=True)
