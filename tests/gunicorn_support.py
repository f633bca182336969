"""Real gunicorn workers for the tests that need several processes (shared limits, concurrent
webhook deliveries): start them, wait until each has built its app, stop them whatever happens.

The app module's factory calls :func:`mark_ready` once its app exists; :func:`gunicorn_workers`
waits for that mark from every worker, since the master listens before its workers load the app
and a worker booting late on a loaded machine would miss the test's requests.
"""
from __future__ import annotations

import os
import socket
import subprocess
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path

from .support.waiting import wait_for

ROOT = Path(__file__).resolve().parents[1]
READY_LOG = "CHECKOUT_TEST_READY_LOG"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def mark_ready() -> None:
    """In a worker, once its app is built: say so (one O_APPEND write, never mixed with
    another worker's)."""
    ready = os.environ.get(READY_LOG)
    if not ready:
        return
    fd = os.open(ready, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, f"{os.getpid()}\n".encode())
    finally:
        os.close(fd)


def _wait_for_workers(ready_log: Path, proc: subprocess.Popen[bytes], count: int,
                      timeout: float = 60.0) -> None:
    def started() -> bool:
        assert proc.poll() is None, "gunicorn exited"
        return ready_log.exists() and len(set(ready_log.read_text().split())) >= count

    try:
        wait_for(started, timeout, interval=0.05)
    except AssertionError as exc:
        raise AssertionError(f"gunicorn's workers did not start: {exc}") from None


@contextmanager
def gunicorn_workers(app: str, env: Mapping[str, str], tmp_path: Path, *,
                     access_format: str, workers: int = 2,
                     extra_args: Sequence[str] = (), shipped_settings: bool = False,
                     port: int | None = None,
                     stderr: Path | None = None) -> Iterator[tuple[int, Path]]:
    """Serve ``app`` (``module:factory()``) with ``workers`` gthread workers on a free port (or
    ``port``); yield the port and the access log (one line per request, in ``access_format``).
    ``extra_args`` go on gunicorn's command line before the app. ``shipped_settings``: the
    checkout's own gunicorn configuration (checkout.gunicorn_config) rather than 8 threads.
    ``stderr``: a file for the processes' error output (gunicorn's error log, and the log
    lines of the app's loggers), else a pipe nobody reads."""
    port = port or free_port()
    access_log, ready_log = tmp_path / "access.log", tmp_path / "ready.log"
    settings = ["-c", "python:checkout.gunicorn_config"] if shipped_settings \
        else ["-k", "gthread", "--threads", "8"]
    command = [str(Path(sys.executable).with_name("gunicorn")), "-w", str(workers),
               *settings, "-b", f"127.0.0.1:{port}",
               "--access-logfile", str(access_log), "--access-logformat", access_format,
               *extra_args, app]
    errors = open(stderr, "ab") if stderr is not None else None
    proc = subprocess.Popen(command, cwd=ROOT, env={**os.environ, **env, READY_LOG: str(ready_log)},
                            stdout=subprocess.DEVNULL,
                            stderr=errors if errors is not None else subprocess.PIPE)
    try:
        _wait_for_workers(ready_log, proc, workers)
        yield port, access_log
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if errors is not None:
            errors.close()
