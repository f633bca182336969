"""The checkout's own pages and fragments sent compressed (Flask-Compress): a merchant without a
front server that compresses still sends a phone a quarter of the bytes.

Only the checkout's answers: the host's own pages are the host's to compress or not, so the
extension's hook sits on the blueprint, never on the app (``COMPRESS_REGISTER`` defaults to off).
A host that sets the ``COMPRESS_*`` keys tunes this too; where a front server compresses already,
it leaves an answer that says ``Content-Encoding`` as it is (README, "Compression").

Static files are compressed once, at start-up (:mod:`.assets`), not here.

Compressed pages and BREACH: a page that reflects what a request sent beside a secret can leak the
secret through its compressed length. Every page that reflects anything is under the session's own
unguessable address, so a third party cannot make a browser ask for it; and the CSRF token it
carries belongs to that same session.
"""
from __future__ import annotations

from flask import Flask, Response, request
from flask.blueprints import BlueprintSetupState
from flask_compress import Compress

from ..security import STATIC_ENDPOINTS
from .blueprint import bp

# One Compress for every app: its settings are read from the app answering (COMPRESS_*).
compress = Compress()


@bp.record_once
def set_up(state: BlueprintSetupState) -> None:
    """Once per app: Flask-Compress set up, never on the app's own answers."""
    assert isinstance(state.app, Flask)
    state.app.config.setdefault("COMPRESS_REGISTER", False)
    compress.init_app(state.app)


@bp.after_request
def compressed(response: Response) -> Response:
    if request.endpoint in STATIC_ENDPOINTS:
        return response
    return compress.after_request(response)
