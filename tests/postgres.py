"""A throw-away PostgreSQL cluster for one test run (see shared TESTING.md).

Started by the tests themselves; never optional. Needs Debian's ``postgresql`` server binaries
(installed by ``scripts/test``).
"""
from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import tempfile
import uuid
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


@contextmanager
def cluster():
    """Yield the base URL of a fresh cluster (database ``postgres``, user ``app``), then remove it."""
    bindir = _bindir()
    root = tempfile.mkdtemp(prefix="checkout-pg-")
    if os.geteuid() == 0:
        shutil.chown(root, "postgres", "postgres")
    data, log = os.path.join(root, "data"), os.path.join(root, "log")
    port = _free_port()
    subprocess.run(_as_postgres([f"{bindir}/initdb", "-D", data, "-U", "app", "--auth=trust",
                                 "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"]),
                   check=True, capture_output=True)
    subprocess.run(_as_postgres([f"{bindir}/pg_ctl", "-D", data, "-l", log, "-w", "-o",
                                 f"-p {port} -k {root} -c listen_addresses=127.0.0.1 "
                                 "-c fsync=off -c max_connections=200", "start"]),
                   check=True, capture_output=True)
    try:
        yield f"postgresql+psycopg://app@127.0.0.1:{port}/postgres"
    finally:
        subprocess.run(_as_postgres([f"{bindir}/pg_ctl", "-D", data, "-m", "immediate", "-w",
                                     "stop"]), capture_output=True)
        shutil.rmtree(root, ignore_errors=True)


def fresh_database(base_url: str) -> str:
    """Create an empty database on the cluster and return its URL."""
    import sqlalchemy

    name = "t_" + uuid.uuid4().hex[:12]
    engine = sqlalchemy.create_engine(base_url, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        conn.exec_driver_sql(f'CREATE DATABASE "{name}"')
    engine.dispose()
    return base_url.rsplit("/", 1)[0] + "/" + name
