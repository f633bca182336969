"""The built wheel carries templates/, static/ and the schema migrations: in a fresh virtual
environment it renders a page, and upgrades a database of the previous release."""
from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import sysconfig
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
    # The embedded sandbox's console and its style, from its own folders in the package.
    console = client.get("/checkout/sandbox/")
    assert console.status_code == 200 and b"sandbox.css" in console.data, console.status_code
    assert client.get("/checkout/sandbox/sandbox.css").status_code == 200
    print("RENDERED")

    # Every distribution the package imports is declared by the wheel (directly, in one of its
    # extras, or through a declared dependency): the environment lends them all, so this says
    # what a fresh install would have missed.
    import ast
    import importlib.metadata as metadata
    import pathlib
    import re
    import sys

    from packaging.requirements import Requirement

    def key(name):
        return re.sub(r"[-_.]+", "-", name).lower()

    extras = {"", *(metadata.metadata("checkout").get_all("Provides-Extra") or ())} - {"test"}
    declared, todo = set(), ["checkout"]
    while todo:
        name = todo.pop()
        if key(name) in declared:
            continue
        declared.add(key(name))
        for line in metadata.requires(name) or ():
            requirement = Requirement(line)
            if requirement.marker is None or any(
                    requirement.marker.evaluate({"extra": extra}) for extra in extras):
                todo.append(requirement.name)
    imported = set()
    for source in pathlib.Path(checkout.__file__).parent.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text())):
            if isinstance(node, ast.Import):
                imported |= {alias.name.split(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                imported.add(node.module.split(".")[0])
    # gunicorn: its logger class is imported only under gunicorn, which the host installs.
    imported -= {*sys.stdlib_module_names, "checkout", "_typeshed", "gunicorn"}
    owners = metadata.packages_distributions()
    needed = {key(owners[name][0]) for name in imported}
    assert needed and needed <= declared, sorted(needed - declared)
    print("DECLARED", len(needed))
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
    # The sandbox's pages and style, in folders of its own (it shares none with the checkout).
    assert "checkout/sandbox/templates/sandbox/pay.html" in names
    assert "checkout/sandbox/static/sandbox.css" in names
    assert not any(name.startswith("checkout/templates/checkout/sandbox/") for name in names)
    for name in ("script.py.mako", "env.py", "versions/0001_released_schema.py"):
        assert f"checkout/store/migrations/{name}" in names
    assert not any(name.startswith("tests/") for name in names)

    # A new environment holding the wheel and no source tree. Its dependencies are lent by the
    # tests' own environment (a .pth line) rather than installed again from the package index,
    # which took most of this test's time (30 s alone, 150 s beside the suite's other workers);
    # RENDER checks that the wheel declares every one the page needed.
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / "bin" / "python"
    subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                    "--no-deps", str(wheel)], check=True, capture_output=True)
    lent = sysconfig.get_paths()["purelib"]
    site_dir = next((env_dir / "lib").glob("python3*/site-packages"))
    (site_dir / "lent-by-the-tests.pth").write_text(lent + "\n")
    result = subprocess.run([str(python), "-c", RENDER], cwd=tmp_path,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr[-3000:]
    assert "RENDERED" in result.stdout and "DECLARED" in result.stdout

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
    flask = [str(python), "-m", "flask", "--app", "shop:create", "checkout", "db"]
    current = subprocess.run([*flask, "current"], cwd=tmp_path, env=env, capture_output=True,
                             text=True)
    assert current.returncode == 1 and current.stdout.startswith("none:"), current
    upgrade = subprocess.run([*flask, "upgrade"], cwd=tmp_path, env=env, capture_output=True,
                             text=True)
    assert upgrade.returncode == 0, upgrade.stderr[-3000:]
    assert upgrade.stdout.strip() == f"upgraded the checkout's database from none to {head} (head)"
