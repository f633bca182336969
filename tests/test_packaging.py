"""The built wheel carries templates/, static/ and the schema migrations: in a fresh virtual
environment it renders a page, and upgrades a database of the previous release."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import textwrap
import venv
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

RENDER = textwrap.dedent("""
    import tempfile
    from flask import Flask
    import checkout
    from checkout import Checkout

    # Imported from site-packages, not from the source tree.
    assert "site-packages" in checkout.__file__, checkout.__file__
    tmp = tempfile.mkdtemp()
    app = Flask("shop", instance_path=tmp)
    app.config["CHECKOUT_DATABASE_URL"] = f"sqlite:///{tmp}/c.sqlite3"
    Checkout(app)
    client = app.test_client()
    start = client.get("/checkout/onramp")
    assert start.status_code == 303, start.status_code
    page = client.get(start.headers["Location"])
    assert page.status_code == 200, page.status_code
    assert b"vendor/htmx-2.0.11.min.js" in page.data
    js = client.get("/checkout/static/vendor/htmx-2.0.11.min.js")
    assert js.status_code == 200 and len(js.data) == 52182
    print("RENDERED")
""")


# A host site's app module, for the installed ``flask`` command.
SHOP = textwrap.dedent("""
    import os
    from flask import Flask
    from checkout import Checkout

    def create():
        app = Flask("shop", instance_path=os.environ["SHOP_DIR"])
        app.config["CHECKOUT_DATABASE_URL"] = os.environ["SHOP_DATABASE_URL"]
        app.config["CHECKOUT_DATABASE_AUTO_UPGRADE"] = False
        Checkout(app)
        return app
""")

UPGRADE = textwrap.dedent("""
    import sqlite3, sys, tempfile
    from flask import Flask
    import checkout
    from checkout import Checkout

    assert "site-packages" in checkout.__file__, checkout.__file__
    dump, database = sys.argv[1], sys.argv[2]
    with sqlite3.connect(database) as conn:
        conn.executescript(open(dump).read())
    app = Flask("shop", instance_path=tempfile.mkdtemp())
    app.config["CHECKOUT_DATABASE_URL"] = f"sqlite:///{database}"
    Checkout(app)                                   # upgrades it at start-up
    with sqlite3.connect(database) as conn:
        print("REVISION", conn.execute("SELECT version_num FROM checkout_alembic_version").fetchone()[0])
        print("SESSIONS", conn.execute("SELECT count(*) FROM checkout_sessions").fetchone()[0])
""")


def test_wheel_ships_templates_and_static_and_renders(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
                   check=True, capture_output=True)
    wheel = next(dist.glob("checkout-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "checkout/templates/checkout/base.html" in names
    assert "checkout/static/checkout/vendor/htmx-2.0.11.min.js" in names
    for name in ("script.py.mako", "env.py", "versions/0001_released_schema.py"):
        assert f"checkout/store/migrations/{name}" in names
    assert not any(name.startswith("tests/") for name in names)

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "-q", str(wheel)], check=True,
                   capture_output=True)
    result = subprocess.run([str(python), "-c", RENDER], cwd=tmp_path, capture_output=True,
                            text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "RENDERED" in result.stdout

    # The installed package upgrades a database made by the previous release, at start-up...
    from checkout.store import schema

    from .release_databases import HERE, PREVIOUS, ids

    head = schema.head()

    dump = HERE / f"{PREVIOUS}.sqlite.sql"
    result = subprocess.run([str(python), "-c", UPGRADE, str(dump), str(tmp_path / "old.sqlite3")],
                            cwd=tmp_path, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    sessions = ids(PREVIOUS, "sqlite")["rows"]["checkout_sessions"]
    assert f"REVISION {head}\nSESSIONS {sessions}" in result.stdout, result.stdout
    # ... and with the installed `flask checkout db upgrade`.
    (tmp_path / "shop.py").write_text(SHOP)
    database = tmp_path / "cli.sqlite3"
    with sqlite3.connect(database) as conn:
        conn.executescript(dump.read_text())
    conn.close()
    env = {"PATH": os.environ["PATH"], "SHOP_DIR": str(tmp_path),
           "SHOP_DATABASE_URL": f"sqlite:///{database}"}
    flask = [str(env_dir / "bin" / "flask"), "--app", "shop:create", "checkout", "db"]
    current = subprocess.run([*flask, "current"], cwd=tmp_path, env=env, capture_output=True,
                             text=True)
    assert current.returncode == 1 and current.stdout.startswith("none:"), current
    upgrade = subprocess.run([*flask, "upgrade"], cwd=tmp_path, env=env, capture_output=True,
                             text=True)
    assert upgrade.returncode == 0, upgrade.stderr[-3000:]
    assert upgrade.stdout.strip() == f"upgraded the checkout's database from none to {head} (head)"
