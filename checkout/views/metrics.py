"""``GET /metrics``: Prometheus metrics (:mod:`checkout.metrics`) for requests bearing
``CHECKOUT_METRICS_TOKEN`` (``Authorization: Bearer <token>``).

The route exists only when the token is set: otherwise the address is an unknown one and gets the
ordinary 404 page. A missing or wrong token gets 401 with ``WWW-Authenticate: Bearer`` (RFC 6750)
and no metrics. The token is compared in constant time and accepted from the header only, never
from the query string, where it would land in access logs and browser histories.
"""
from __future__ import annotations

import hmac

from flask import Response, current_app, request
from werkzeug.exceptions import NotFound

from ..metrics import TOKEN_KEY, enabled
from ..ratelimits import unlimited
from ..state import get_state
from .blueprint import bp

REALM = 'Bearer realm="checkout metrics"'


@bp.get("/metrics", endpoint="metrics")
@unlimited("a scraper every few seconds from one address; without the bearer token "
           "a request costs one comparison, and a scrape's one query is cached: a 429 "
           "would only leave holes in the graphs")
def metrics() -> Response:
    """Serve the metrics to a scraper that bears the token."""
    if not enabled(current_app):
        raise NotFound()                 # no CHECKOUT_METRICS_TOKEN: no metrics, no endpoint
    # Here, not at the top: prometheus_client is imported only when metrics are on.
    from ..metrics.prometheus import PrometheusMetrics

    counts = get_state().metrics
    assert isinstance(counts, PrometheusMetrics)     # made so with the token (composition)
    bears = bears_metrics_token()
    if bears is None:
        return _unauthorized(REALM)
    if not bears:
        return _unauthorized(REALM + ', error="invalid_token"')
    body, content_type = counts.exposition(request.headers.get("Accept"))
    return Response(body, status=200, content_type=content_type)


def bears_metrics_token() -> bool | None:
    """Whether this request bears ``CHECKOUT_METRICS_TOKEN`` as its bearer token, compared in
    constant time: True; another token: False; none (or metrics off, no token to bear): None."""
    sent = _bearer_token()
    if sent is None or not enabled(current_app):
        return None
    expected = current_app.config[TOKEN_KEY].encode()
    return hmac.compare_digest(sent.encode("utf-8", "surrogateescape"), expected)


def _bearer_token() -> str | None:
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        return None
    return token.strip()


def _unauthorized(challenge: str) -> Response:
    response = Response("401 Unauthorized: send the metrics token as a bearer token\n",
                        status=401, content_type="text/plain; charset=utf-8")
    response.headers["WWW-Authenticate"] = challenge
    return response
