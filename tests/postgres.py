"""Throw-away PostgreSQL clusters (see shared TESTING.md): the one every test run shares (its tests
each take a fresh database on it, ``fresh_database``), and clusters a test stops, starts again or
freezes (the database "going down" for real, not a mock). One harness for both: :class:`Cluster`.

Started by the tests themselves; never optional. Needs Debian's ``postgresql`` server binaries
(installed by ``scripts/test``).
"""
from __future__ import annotations

import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import uuid
from collections.abc import Iterator
from contextlib import contextmanager


def _bindir() -> str:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"))
    if found:
        return os.path.dirname(found[-1])
    initdb = shutil.which("initdb")
    if initdb:
        return os.path.dirname(initdb)
    raise RuntimeError("PostgreSQL server binaries not found: run scripts/test (installs postgresql)")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _as_postgres(cmd: list[str]) -> list[str]:
    # initdb refuses to run as root.
    if os.geteuid() == 0:
        return ["runuser", "-u", "postgres", "--", *cmd]
    return cmd


class Cluster:
    """A cluster of its own (database ``postgres``, user ``app``): made, not yet started."""

    def __init__(self, max_connections: int = 100) -> None:
        self.bindir = _bindir()
        self.max_connections = max_connections
        self.root = tempfile.mkdtemp(prefix="checkout-pg-")
        if os.geteuid() == 0:
            shutil.chown(self.root, "postgres", "postgres")
        self.data = os.path.join(self.root, "data")
        self.port = _free_port()
        subprocess.run(_as_postgres([f"{self.bindir}/initdb", "-D", self.data, "-U", "app",
                                     "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8",
                                     "--no-sync"]), check=True, capture_output=True)
        self.url = f"postgresql+psycopg://app@127.0.0.1:{self.port}/postgres"
        self.started = False

    def start(self) -> None:
        """Start it (again). Its port was free when it was chosen; by its first start another
        process may have taken it (two test runs side by side): a new one is chosen then. Later
        starts keep the port the apps were given."""
        for _attempt in range(3):
            log = os.path.join(self.root, "log")
            done = subprocess.run(_as_postgres([
                f"{self.bindir}/pg_ctl", "-D", self.data, "-l", log, "-w",
                "-o", f"-p {self.port} -k {self.root} -c listen_addresses=127.0.0.1 -c fsync=off "
                      f"-c max_connections={self.max_connections}",
                "start"]), capture_output=True, text=True)
            if done.returncode == 0:
                self.started = True
                return
            said = open(log, errors="replace").read() if os.path.exists(log) else ""
            if self.started or "could not bind" not in said:
                raise RuntimeError(f"PostgreSQL did not start: {done.stderr}\n{said[-2000:]}")
            taken, self.port = self.port, _free_port()
            self.url = self.url.replace(f"127.0.0.1:{taken}/", f"127.0.0.1:{self.port}/")
        raise RuntimeError("PostgreSQL found no free port in three tries")

    def stop(self) -> None:
        subprocess.run(_as_postgres([f"{self.bindir}/pg_ctl", "-D", self.data, "-m", "fast",
                                     "-w", "stop"]), check=True, capture_output=True)

    def running(self) -> bool:
        return subprocess.run(_as_postgres([f"{self.bindir}/pg_ctl", "-D", self.data, "status"]),
                              capture_output=True).returncode == 0

    def remove(self) -> None:
        subprocess.run(_as_postgres([f"{self.bindir}/pg_ctl", "-D", self.data, "-m", "immediate",
                                     "-w", "stop"]), capture_output=True)
        shutil.rmtree(self.root, ignore_errors=True)

    def _processes(self) -> list[int]:
        """The postmaster and every process it started."""
        with open(os.path.join(self.data, "postmaster.pid")) as pid_file:
            postmaster = int(pid_file.readline())
        children = subprocess.run(["pgrep", "-P", str(postmaster)], capture_output=True,
                                  text=True).stdout.split()
        return [postmaster, *map(int, children)]

    def freeze(self) -> None:
        """Every process of the cluster stopped (SIGSTOP): connections are still accepted by the
        kernel, and nothing ever answers. What the checkout's time limits must bound."""
        for pid in self._processes():
            os.kill(pid, signal.SIGSTOP)

    def thaw(self) -> None:
        for pid in self._processes():
            os.kill(pid, signal.SIGCONT)


@contextmanager
def cluster(max_connections: int = 200) -> Iterator[str]:
    """Yield the base URL of a fresh, started cluster, then remove it."""
    made = Cluster(max_connections)
    try:
        made.start()
        yield made.url
    finally:
        made.remove()


def fresh_database(base_url: str) -> str:
    """Create an empty database on the cluster and return its URL."""
    import sqlalchemy

    name = "t_" + uuid.uuid4().hex[:12]
    engine = sqlalchemy.create_engine(base_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    engine.dispose()
    return base_url.rsplit("/", 1)[0] + "/" + name
