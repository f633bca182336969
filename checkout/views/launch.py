"""Opening a session: ``/launch`` with a signed token, or unsigned ``/onramp`` and ``/offramp``.

All three create the server-side session and send the browser (303) to its first page, at that
page's own address (``/s/<session_id>/<step>``: ``views.journey.landing_url``), so the token never
stays in the address bar or in the browser's history, reloading the page does not present it again,
and Back from the next step returns to this one.
"""
from __future__ import annotations

from flask import abort, current_app, redirect, request
from flask_babel import gettext
from werkzeug.exceptions import HTTPException
from werkzeug.wrappers import Response

from ..errors import LaunchTokenError
from ..launch import MALFORMED, session_claims, verify_token
from ..ratelimits import limited, unlimited
from ..sessions import CheckoutSession
from ..state import get_state
from .blueprint import bp
from .journey import landing_url
from .pages import render_error


def _to_session(session: CheckoutSession) -> Response:
    return redirect(landing_url(session), code=303)


@bp.get("/launch", endpoint="launch")
@limited("open")
def launch() -> Response:
    """Open (or reopen) the session of a signed launch token and go to its page."""
    token = request.args.get("token", "")
    try:
        if not token:
            raise LaunchTokenError(MALFORMED)
        claims = verify_token(current_app, token)
    except LaunchTokenError as exc:
        # No retry link: the same token would fail the same way; the shop must make a new one.
        return render_error(400, str(exc.args[0]),
                            title=gettext("This checkout link cannot be used"),
                            use_default_retry=False)
    kept, locked = session_claims(claims)
    session = get_state().sessions.create(claims["flow"], claims=kept, locked=locked,
                                          jti=claims["jti"])
    return _to_session(session)


@bp.get("/onramp", endpoint="onramp")
@limited("open")
def onramp() -> Response:
    """Start an unsigned on-ramp session: the user chooses everything, nothing is locked."""
    session = get_state().sessions.create("onramp", claims=_unsigned_claims(), locked=[])
    return _to_session(session)


@bp.get("/offramp", endpoint="offramp")
@limited("open")
def offramp() -> Response:
    """Start an unsigned off-ramp session: the user types everything and pays from their own
    wallet (a merchant-funded payout needs a signed token)."""
    session = get_state().sessions.create("offramp", claims=_unsigned_claims(), locked=[])
    return _to_session(session)


def _unsigned_claims() -> dict[str, str]:
    # Only the language may come from the query string of an unsigned start: anything else could
    # be planted by a third party's link, and unsigned sessions have no prefill.
    locale = request.args.get("locale")
    return {"locale": locale} if locale and len(locale) <= 35 else {}


# Every method a browser or a scanner may send (HEAD comes with GET, OPTIONS is answered by Flask).
ANY_METHOD = ["GET", "POST", "PUT", "PATCH", "DELETE", "TRACE", "CONNECT", "PROPFIND"]


# Routing failures have no blueprint, so the blueprint's 404 and 405 pages would not apply to
# them: these rules catch what no other rule under the prefix takes, the prefix itself included,
# with any method (PUT, DELETE, TRACE... get the friendly 405).
@bp.route("", endpoint="not_found", methods=ANY_METHOD)
@bp.route("/", endpoint="not_found", methods=ANY_METHOD)
@bp.route("/<path:unknown>", endpoint="not_found", methods=ANY_METHOD)
@unlimited("a 404 or 405 page: no work behind it")
def not_found(unknown: str = "") -> Response:
    """Any other path or method under the prefix: the friendly 404 (or 405) page rather than
    the host's (or Werkzeug's bare one)."""
    adapter = current_app.url_map.bind_to_environ(request.environ)
    for method in ("GET", "POST"):
        if method == request.method:
            continue
        try:
            endpoint, _ = adapter.match(method=method)
        except HTTPException:
            continue
        if endpoint != "checkout.not_found":
            abort(405)   # the page exists, just not for this method
    abort(404)
