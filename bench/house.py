"""How easy the house is to walk, at two revisions side by side (issue 24's figures).

    .venv/bin/python bench/house.py [BEFORE [AFTER]]     # default: 2140474 and the working tree

For each revision (a commit, extracted with ``git archive``; or the working tree itself):

- import circles, counted by *this* tree's ``scripts/import-circles`` (every import statement,
  and the package ``__init__`` an import runs), so that both sides are counted alike;
- modules that look the app's state up (``get_state()`` / ``state_of()``) outside the views, the
  CLI commands, the composition and the state itself;
- lines of Python under ``checkout/``;
- session writes and reads of one order's creation: the SQL statements on ``checkout_sessions``
  while one "Confirm" is served, counted by a SQLAlchemy listener, on the embedded sandbox with
  that revision's own code and test helpers (``tests/views/conftest.Flow``).
"""
from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

from revisions import export  # bench/, first on the path of a script run from there

ROOT = Path(__file__).resolve().parents[1]
ENTRY_POINTS = re.compile(r"^checkout/(views/|cli\.py$|.*/cli\.py$|composition\.py$|state\.py$)")

# Run inside a revision's tree, with that tree first on sys.path: one "Confirm", its SQL counted.
CREATION = r"""
import json, shutil, sys, tempfile
from pathlib import Path
from checkout.store import make_engine
from checkout.store.schema import prepare
from tests.conftest import make_app
from tests.views.conftest import Flow

folder = Path(tempfile.mkdtemp())
url = f"sqlite:///{folder}/checkout.sqlite3"
engine = make_engine(url)
prepare(engine, auto_upgrade=True)
engine.dispose()
app = make_app({"TESTING": True, "SERVER_NAME": "shop.test", "CHECKOUT_DATABASE_URL": url,
                "CHECKOUT_FRAME_ANCESTORS": ["https://shop.test"],
                "CHECKOUT_SANDBOX": {"SANDBOX_TIME_SCALE": 0.001}})
flow = Flow(app, app.test_client())
flow.start()
review = flow.to_review()
engine = app.extensions["checkout"].engine
sys.path.insert(0, sys.argv[1])         # this tree's counter, whatever the revision's tests hold
from session_sql import session_statements
response, writes, reads = session_statements(engine, lambda: flow.create(review))
assert response.status_code in (302, 303) and response.headers["Location"].endswith("/pay"), \
    response.status_code
print(json.dumps({"writes": len(writes), "reads": len(reads)}))
shutil.rmtree(folder, ignore_errors=True)
"""


def tree_of(revision: str, into: Path) -> Path:
    """The revision's files (``.`` is the working tree itself)."""
    return ROOT if revision == "." else export(revision, into / revision)


def circles(tree: Path) -> str:
    script = ROOT / "scripts" / "import-circles"
    if tree != ROOT:            # this tree's script, in the other tree: it counts from where it is
        script = tree / "scripts" / "import-circles-now"
        script.write_text((ROOT / "scripts" / "import-circles").read_text())
    counted = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    last = counted.stdout.strip().splitlines()[-1] if counted.stdout.strip() else counted.stderr
    found = re.match(r"(\d+) import circle", last)
    sizes = re.findall(r"^(\d+) modules:", counted.stdout, re.M)
    if not found:
        return f"? ({last[:60]})"
    return found.group(1) + (f" ({', '.join(sizes)} modules)" if sizes else "")


def state_lookups(tree: Path) -> tuple[int, list[str]]:
    found = []
    for path in sorted((tree / "checkout").rglob("*.py")):
        relative = path.relative_to(tree).as_posix()
        if re.search(r"\b(get_state|state_of)\(", path.read_text()) \
                and not relative.startswith("checkout/state.py"):
            found.append(relative)
    others = [name for name in found if not ENTRY_POINTS.match(name)]
    return len(found), others


def lines(tree: Path) -> int:
    return sum(len(path.read_text().splitlines()) for path in (tree / "checkout").rglob("*.py"))


def creation(tree: Path) -> dict[str, int]:
    counter = str(ROOT / "tests" / "support")
    ran = subprocess.run([sys.executable, "-c", CREATION, counter], capture_output=True, text=True,
                         cwd=tree, env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"})
    if ran.returncode != 0:
        raise SystemExit(f"creation at {tree}: {ran.stderr[-2000:]}")
    return json.loads(ran.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("before", nargs="?", default="2140474")
    parser.add_argument("after", nargs="?", default=".", help="a commit, or . (working tree)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        rows: dict[str, list[str]] = {}
        notes: list[str] = []
        for revision in (args.before, args.after):
            tree = tree_of(revision, Path(scratch))
            total, others = state_lookups(tree)
            made = creation(tree)
            rows.setdefault("import circles", []).append(circles(tree))
            rows.setdefault("modules looking the state up", []).append(str(total))
            rows.setdefault("  of them outside views, CLI", []).append(str(len(others)))
            rows.setdefault("checkout/ Python lines", []).append(f"{lines(tree):,}")
            rows.setdefault("session writes per creation", []).append(str(made["writes"]))
            rows.setdefault("session reads per creation", []).append(str(made["reads"]))
            notes.append(f"{revision}: outside views and CLI: {', '.join(others) or 'none'}")
    name = "working tree" if args.after == "." else args.after
    print(f"{'':34}{args.before:>22}{name:>22}")
    for label, values in rows.items():
        print(f"{label:34}{values[0]:>22}{values[1]:>22}")
    print()
    print("\n".join(notes))


if __name__ == "__main__":
    main()
