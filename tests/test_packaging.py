"""The built wheel carries templates/ and static/ and renders a page in a fresh virtual environment."""
from __future__ import annotations

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


def test_wheel_ships_templates_and_static_and_renders(tmp_path):
    dist = tmp_path / "dist"
    subprocess.run([sys.executable, "-m", "build", "--wheel", "--outdir", str(dist), str(ROOT)],
                   check=True, capture_output=True)
    wheel = next(dist.glob("checkout-*.whl"))
    names = zipfile.ZipFile(wheel).namelist()
    assert "checkout/templates/checkout/base.html" in names
    assert "checkout/static/checkout/vendor/htmx-2.0.11.min.js" in names
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
