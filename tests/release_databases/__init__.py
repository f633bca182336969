"""Databases made by previous releases, with rows (dumps made by ``make_dumps.sh``, see their
headers), loaded into a new SQLite file or PostgreSQL database for the upgrade tests."""
from __future__ import annotations

import json
import os
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from sqlalchemy import MetaData, create_engine, inspect, select
from sqlalchemy.engine import make_url

HERE = Path(__file__).resolve().parent
# The release before migrations (main's HEAD then), and one before the reconciler's table.
PREVIOUS, OLDER = "1b4918f", "3a0b7d8"
RELEASES = (PREVIOUS, OLDER)


def ids(release: str, dialect: str) -> dict[str, Any]:
    """What make_database.py made in that dump: session and order ids, row counts."""
    found: dict[str, Any] = json.loads((HERE / f"{release}.{dialect}.json").read_text())
    return found


def load(release: str, url: str) -> dict[str, Any]:
    """Load the release's dump for ``url``'s dialect into that (new, empty) database."""
    parsed = make_url(url)
    dialect = parsed.get_backend_name()
    dump = HERE / f"{release}.{dialect}.sql"
    if dialect == "sqlite":
        assert parsed.database
        with sqlite3.connect(parsed.database) as conn:
            conn.executescript(dump.read_text())
        conn.close()
    else:
        # psql, as pg_dump's plain format expects (COPY ... FROM stdin, \restrict).
        from ..postgres import _bindir

        plain = parsed.set(drivername="postgresql").render_as_string(hide_password=False)
        subprocess.run([os.path.join(_bindir(), "psql"), "-X", "-q", "-v", "ON_ERROR_STOP=1",
                        "-d", plain, "-f", str(dump)], check=True, capture_output=True)
    return ids(release, dialect)


def snapshot(url: str) -> dict[str, list[dict[str, Any]]]:
    """Every row of every checkout table, in primary-key order, as plain values."""
    engine = create_engine(url)
    try:
        tables = MetaData()
        names = [name for name in inspect(engine).get_table_names()
                 if name.startswith("checkout_") and name != "checkout_alembic_version"]
        tables.reflect(engine, only=names)
        rows: dict[str, list[dict[str, Any]]] = {}
        with engine.connect() as conn:
            for name, table in tables.tables.items():
                order = list(table.primary_key.columns) or list(table.columns)
                rows[name] = [dict(row._mapping)
                              for row in conn.execute(select(table).order_by(*order))]
        return rows
    finally:
        engine.dispose()
