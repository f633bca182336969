"""A throw-away Redis server for one test run (see shared TESTING.md), like ``tests/postgres.py``.

Started by the tests themselves; never optional. Needs Debian's ``redis-server`` (installed by
``scripts/test``). Nothing is saved to disk; the server is stopped by the pid in its pid file.
"""
from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
from contextlib import contextmanager
from pathlib import Path

from .gunicorn_support import free_port
from .support.waiting import wait_for


def _binary() -> str:
    found = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if os.access("/usr/bin/redis-server", os.X_OK) else None)
    if not found:
        raise RuntimeError("redis-server not found: run scripts/test (installs redis-server)")
    return found


class RedisServer:
    """One ``redis-server`` on 127.0.0.1, in a folder of its own; :meth:`stop` ends it."""

    def __init__(self) -> None:
        self.binary = _binary()
        self.root = Path(tempfile.mkdtemp(prefix="checkout-redis-"))
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"

    @property
    def pidfile(self) -> Path:
        return self.root / "r.pid"

    def start(self, timeout: float = 10.0) -> None:
        subprocess.run([self.binary, "--port", str(self.port), "--bind", "127.0.0.1",
                        "--save", "", "--appendonly", "no", "--daemonize", "yes",
                        "--dir", str(self.root), "--pidfile", str(self.pidfile),
                        "--logfile", str(self.root / "log")], check=True, capture_output=True)
        def answers() -> bool:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as conn:
                    conn.sendall(b"PING\r\n")
                    return conn.recv(16).startswith(b"+PONG")
            except OSError:
                return False

        try:
            wait_for(answers, timeout, interval=0.02)
        except AssertionError:
            raise RuntimeError(f"redis-server did not start; its log:\n{self.log()}") from None

    def stop(self) -> None:
        """Stop the server (by the pid it wrote) and wait until its port is closed."""
        try:
            pid = int(self.pidfile.read_text().strip())
        except (OSError, ValueError):
            return
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            return
        def gone() -> bool:
            try:
                os.kill(pid, 0)
            except ProcessLookupError:
                return True
            return False

        try:
            wait_for(gone, 10, interval=0.02)
        except AssertionError:
            os.kill(pid, signal.SIGKILL)

    def log(self) -> str:
        path = self.root / "log"
        return path.read_text(errors="replace") if path.exists() else "(no log)"

    def remove(self) -> None:
        self.stop()
        shutil.rmtree(self.root, ignore_errors=True)


@contextmanager
def server():
    """Yield a started :class:`RedisServer`, then stop it and remove its folder."""
    redis = RedisServer()
    try:
        redis.start()
        yield redis
    finally:
        redis.remove()
