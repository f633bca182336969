"""The checkout's static files: named by their content, compressed once, cached for a year.

A phone on a slow network pays a round trip for every file it must ask about again. So a page
names each file by ``checkout_asset_url(name)``, an address that carries the file's fingerprint
(``{prefix}/assets/<fingerprint>/<name>``): served with a year's ``immutable`` cache, it is never
asked for again, and a new version of the file is a new address. An address with an older
fingerprint (a page rendered before a deploy) still gets the file, without the long cache.

``{prefix}/static/<name>`` stays, revalidated at each use: merchants put ``embed.js`` on their
pages by that fixed address (CONTRACT.md).

Files are read, their scripts and styles minified (the comments that explain them stay in the
source), and gzip and Brotli made of the text ones, once at start-up: a request only picks the
encoding the browser takes (``Accept-Encoding``, its q-values honoured by Werkzeug).
"""
from __future__ import annotations

import functools
import gzip
import hashlib
import mimetypes
from dataclasses import dataclass
from pathlib import Path

import brotli
import rcssmin
import rjsmin
from flask import Response, abort, request, url_for

FOREVER = "public, max-age=31536000, immutable"
# The fixed addresses: used as they are, but asked about each time (304 when unchanged).
REVALIDATE = "no-cache"
_TEXT = ("text/", "application/javascript", "image/svg+xml")
ENCODINGS = ("br", "gzip")
STYLESHEET = "checkout.css"


@dataclass(frozen=True)
class Asset:
    mimetype: str
    fingerprint: str
    bodies: dict[str, bytes]        # by content encoding; "identity" is the file itself


def _minified(path: Path, data: bytes) -> bytes:
    if path.name.endswith(".min.js"):
        return data
    if path.suffix == ".js":
        minified: bytes = rjsmin.jsmin(data, keep_bang_comments=True)
        return minified
    if path.suffix == ".css":
        minified = rcssmin.cssmin(data, keep_bang_comments=True)
        return minified
    return data


def _load(path: Path, data: bytes | None = None) -> Asset:
    data = _minified(path, path.read_bytes() if data is None else data)
    mimetype = mimetypes.guess_type(path.name)[0] or "application/octet-stream"
    bodies = {"identity": data}
    if mimetype.startswith(_TEXT):
        bodies["gzip"] = gzip.compress(data, compresslevel=9, mtime=0)
        bodies["br"] = brotli.compress(data, mode=brotli.MODE_TEXT, quality=11)
    return Asset(mimetype, hashlib.sha256(data).hexdigest()[:16], bodies)


class Assets:
    """Every file under ``folder``, by its path there (``vendor/htmx-2.0.11.min.js``)."""

    def __init__(self, folder: Path | None, files: dict[str, Asset] | None = None) -> None:
        self.files = files if files is not None else {
            path.relative_to(folder).as_posix(): _load(path)
            for path in sorted(folder.rglob("*")) if path.is_file()} if folder else {}

    def url(self, name: str) -> str:
        """The address of ``name`` that a browser may keep for a year."""
        asset = self.files[name]
        return url_for("checkout.asset", fingerprint=asset.fingerprint, filename=name)

    def response(self, name: str, cache_control: str) -> Response:
        asset = self.files.get(name)
        if asset is None:
            abort(404)
        encoding = request.accept_encodings.best_match(
            [e for e in ENCODINGS if e in asset.bodies], default="identity")
        response = Response(asset.bodies[encoding], mimetype=asset.mimetype)
        if encoding != "identity":
            response.headers["Content-Encoding"] = encoding
        response.headers["Cache-Control"] = cache_control
        response.vary.add("Accept-Encoding")
        if cache_control != FOREVER:
            # Asked about again at each use: an unchanged file costs a 304. A content address
            # is never asked about again, and is its own version: an ETag there is bytes spent
            # on every first page.
            response.set_etag(f"{asset.fingerprint}-{encoding}")
            response.make_conditional(request)
        return response


@functools.cache
def shipped(folder: Path) -> Assets:
    """The files under ``folder``, read once per process: every app in it serves the same ones,
    and reading them (Brotli at its best) costs about 0.2 s of CPU."""
    return Assets(folder)


@functools.cache
def themed(base: Assets, theme_css: str) -> Assets:
    """``base`` with ``checkout.css`` followed by ``theme_css`` (checkout.theme): its own
    address and encodings, made once per theme and process. No theme: ``base`` itself."""
    if not theme_css:
        return base
    source = Path(STYLESHEET)
    css = _load(source, base.files[STYLESHEET].bodies["identity"] + theme_css.encode())
    return Assets(None, {**base.files, STYLESHEET: css})
