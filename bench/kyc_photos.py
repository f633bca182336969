"""CPU time and peak memory of the costliest KYC posts, before and after the photo changes, side
by side in one run.

Run: ``.venv/bin/python bench/kyc_photos.py [--before REV]`` (REV: the checkout before those
changes, ``1ab3900`` unless told; ``git`` must be able to read it).

Each post carries the three photos of an advanced document (selfie, front, back), the same three
times. The script makes the photos once, exports the checkout at REV with ``git archive``, and for
each version and each post starts a fresh Python process that walks an on-ramp on the embedded
sandbox to the KYC step (Kenya, 15,000 KES: an advanced document, three photos) and sends that
post once. It measures that post alone: the process's CPU time (``time.process_time``) and how
far its resident memory peaked above where it was (Linux's ``VmHWM``, reset just before the
post). Each post runs ``--runs`` times (3), in a new process each time; the median is shown.

The last lines name the worst post each version lets through (the costliest one whose document
was sent, by CPU time). A benchmark, not a test: the figures depend on the machine and on its load.
"""
from __future__ import annotations

import argparse
import io
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from revisions import export  # bench/, first on the path of a script run from there

ROOT = Path(__file__).resolve().parents[1]
BEFORE = "1ab3900"
PERSON = {"first_name": "Wanjiru", "last_name": "Kamau", "dob": "1990-05-17",
          "email": "wanjiru@example.com", "document": "ALIEN_CARD", "id_number": "1234567"}
EVM_ADDRESS = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"
EXTRA_SCANS = 3000          # repeated 17-byte scans: 51 KB; 10 MB would hold ~600,000


# -- the photos ---------------------------------------------------------------------------------

def _grain(width: int, height: int, cell: int) -> Any:
    """A picture with detail every ``cell`` pixels: how well it compresses is set by ``cell``."""
    from PIL import Image

    small = Image.effect_noise((max(1, width // cell), max(1, height // cell)), 20)
    return small.convert("RGB").resize((width, height), Image.Resampling.NEAREST)


def _save(image: Any, kind: str, **options: Any) -> bytes:
    out = io.BytesIO()
    image.save(out, kind, **options)
    return out.getvalue()


def _with_extra_scans(jpeg: bytes, count: int) -> bytes:
    """``jpeg`` (progressive) with its smallest scan repeated ``count`` times before the end:
    libjpeg only warns, and makes one more pass over the picture for each."""
    starts = [m.start() for m in re.finditer(b"\xff\xda", jpeg)]
    scans = []
    for start in starts:
        after = re.search(b"\xff[\xc4\xda\xd9]", jpeg[start + 2:])
        assert after is not None
        scans.append(jpeg[start:start + 2 + after.start()])
    smallest = min(scans, key=len)
    return jpeg[:-2] + smallest * count + jpeg[-2:]


def make_photos(folder: Path) -> dict[str, tuple[str, bool]]:
    """Each post's photo in ``folder``: {label: (file name, whether its fields are right)}."""
    from PIL import Image

    noise_24mp = Image.effect_noise((6000, 4000), 30).convert("RGB")
    smooth_24mp = _grain(6000, 4000, 16)
    files = {
        "png-24mp.png": _save(_grain(6000, 4000, 9), "PNG"),              # ~0.9 MB
        "png-12mp.png": _save(_grain(4000, 3000, 9), "PNG"),
        "jpeg-24mp.jpg": _save(noise_24mp, "JPEG", quality=80),           # ~10 MB: the limit
        "progressive-24mp.jpg": _save(noise_24mp, "JPEG", quality=75, progressive=True),
        "progressive-12mp.jpg": _save(noise_24mp.resize((4000, 3000)), "JPEG", quality=80,
                                      progressive=True),
        "scans.jpg": _with_extra_scans(_save(smooth_24mp, "JPEG", quality=80, progressive=True),
                                       EXTRA_SCANS),
    }
    for name, data in files.items():
        assert len(data) <= 10 * 1024 * 1024, (name, len(data))
        (folder / name).write_bytes(data)
    size = {name: f"{len(data) / 1e6:.1f} MB" for name, data in files.items()}
    return {
        f"PNG 24 MP ({size['png-24mp.png']})": ("png-24mp.png", True),
        f"PNG 24 MP ({size['png-24mp.png']}), a field wrong": ("png-24mp.png", False),
        f"progressive JPEG 24 MP ({size['progressive-24mp.jpg']})": ("progressive-24mp.jpg", True),
        f"JPEG 24 MP + {EXTRA_SCANS:,} scans ({size['scans.jpg']})": ("scans.jpg", True),
        f"baseline JPEG 24 MP ({size['jpeg-24mp.jpg']})": ("jpeg-24mp.jpg", True),
        f"baseline JPEG 24 MP ({size['jpeg-24mp.jpg']}), a field wrong": ("jpeg-24mp.jpg",
                                                                        False),
        f"PNG 12 MP ({size['png-12mp.png']})": ("png-12mp.png", True),
        f"progressive JPEG 12 MP ({size['progressive-12mp.jpg']})": ("progressive-12mp.jpg", True),
    }


# -- one post, in a process of its own ------------------------------------------------------------

def one_post(tree: str, photo: str, fields_right: bool) -> dict[str, Any]:
    """In a fresh process: the checkout of ``tree``, an on-ramp walked to the KYC step, then the
    measured post of three copies of ``photo``."""
    sys.path.insert(0, tree)
    import logging

    from flask import Flask
    from PIL import Image

    from checkout import Checkout

    logging.disable(logging.WARNING)
    folder = tempfile.mkdtemp(prefix="kyc-bench-")
    app = Flask("kyc_bench", instance_path=f"{folder}/instance")
    app.config.update(TESTING=True, SERVER_NAME="shop.test",
                      CHECKOUT_DATABASE_URL=f"sqlite:///{folder}/checkout.sqlite3",
                      CHECKOUT_WEBHOOK_BACKGROUND=False,
                      CHECKOUT_SANDBOX={"SANDBOX_TIME_SCALE": 1.0})
    Checkout(app)
    client = app.test_client()
    csrf = ""

    def answer(response: Any) -> Any:
        nonlocal csrf
        found = re.search(r'name="csrf_token" value="([^"]+)"', response.get_data(as_text=True))
        csrf = found.group(1) if found else csrf
        return response

    def walk(response: Any) -> Any:
        while response.status_code in (302, 303):
            response = answer(client.get(response.headers["Location"]))
        return response

    page = walk(answer(client.get("/checkout/onramp")))
    base = page.request.path.rsplit("/", 1)[0]
    for step, form in (("choose", {"countryIsoCode": "KE", "paymentChannel": "mobile_money",
                                   "network": "CELO", "asset": "USDT", "currency": "local",
                                   "amount": "15000"}),
                       ("wallet", {"address": EVM_ADDRESS, "email": "ada@example.com"}),
                       ("details", {"phoneNumber": "0712345678"})):
        page = walk(answer(client.post(f"{base}/{step}", data={"csrf_token": csrf, **form})))
    assert page.request.path.endswith("/kyc"), page.request.path
    answer(client.get(f"{base}/kyc?document=ALIEN_CARD"))
    data = Path(photo).read_bytes()
    Image.new("RGB", (300, 300)).save(io.BytesIO(), "JPEG")        # the encoder loaded once

    form: dict[str, Any] = {"csrf_token": csrf, **PERSON}
    if not fields_right:
        form["id_number"] = ""
    for name in ("selfie", "front", "back"):
        form[f"photo_{name}"] = (io.BytesIO(data), Path(photo).name)
    resident_before = _memory_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")          # the peak starts again from here
    cpu_before = time.process_time()
    response = client.post(f"{base}/kyc", data=form)
    cpu = time.process_time() - cpu_before
    peak = _memory_kb("VmHWM") - resident_before
    if response.status_code == 303:
        outcome = "sent"
    elif response.status_code == 200:
        html = response.get_data(as_text=True)
        outcome = "photo refused" if re.search(r'field-photo_\w+-error', html) else "form refused"
    else:
        outcome = f"HTTP {response.status_code}"
    return {"cpu": cpu, "peak_mb": peak / 1024, "outcome": outcome}


def _memory_kb(field: str) -> int:
    """``VmRSS`` (resident now) or ``VmHWM`` (its peak) of this process, in kB. Linux's; not
    ``ru_maxrss``, which a child inherits from its parent across exec (here: the photos' maker)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"no {field} in /proc/self/status")


def measure(tree: Path, photo: Path, fields_right: bool, runs: int) -> dict[str, Any]:
    """The median run of ``runs`` (by CPU time; its memory beside it), and what the post did."""
    results = sorted((_run(tree, photo, fields_right) for _ in range(runs)),
                     key=lambda got: got["cpu"])
    return results[len(results) // 2]


def _run(tree: Path, photo: Path, fields_right: bool) -> dict[str, Any]:
    child = subprocess.run(
        [sys.executable, __file__, "--one-post", str(tree), str(photo), str(int(fields_right))],
        capture_output=True, text=True, check=False, cwd=tree,
        env={**os.environ, "PYTHONPATH": str(tree)})
    if child.returncode != 0:
        raise SystemExit(f"the post failed in {tree}:\n{child.stderr[-3000:]}")
    return dict(json.loads(child.stdout.strip().splitlines()[-1]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before", default=BEFORE, help="the revision before the changes")
    parser.add_argument("--runs", type=int, default=3, help="runs of each post (the median)")
    parser.add_argument("--one-post", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_post:
        tree, photo, right = args.one_post
        print(json.dumps(one_post(tree, photo, right == "1")))
        return 0
    with tempfile.TemporaryDirectory(prefix="kyc-photos-bench-") as scratch:
        folder = Path(scratch)
        print("making the photos...", file=sys.stderr)
        posts = make_photos(folder)
        versions = {f"before ({args.before})": export(args.before, folder / "before"),
                    "after (this tree)": ROOT}
        width = max(map(len, posts)) + 2
        print(f"{'three photos of each, in one post':<{width}}"
              + "".join(f"{name:^36}" for name in versions))
        print(" " * width + f"{'CPU s':>8}{'peak MB':>9}  {'outcome':<17}" * len(versions))
        worst: dict[str, tuple[float, float, str]] = {}
        for label, (name, fields_right) in posts.items():
            row = f"{label:<{width}}"
            for version, tree in versions.items():
                got = measure(tree, folder / name, fields_right, args.runs)
                row += f"{got['cpu']:>8.2f}{got['peak_mb']:>9.0f}  {got['outcome']:<17}"
                if got["outcome"] == "sent" and got["cpu"] > worst.get(version, (0.0,))[0]:
                    worst[version] = (got["cpu"], got["peak_mb"], label)
            print(row, flush=True)
        print()
        for version, (cpu, peak, label) in worst.items():
            print(f"worst post let through, {version}: {label}: {cpu:.2f} s CPU, "
                  f"{peak:.0f} MB more peak memory")
    return 0


if __name__ == "__main__":
    sys.exit(main())
