"""The checkout's one exception tree.

::

    CheckoutError
    ├── ConfigurationError            a setting is missing or wrong; raised at start-up
    ├── SchemaError                   the database's tables are not at this code's revision
    │   ├── SchemaBehind              an upgrade is due (and start-up may not make it)
    │   └── SchemaAhead               a revision this code does not know: a newer release made it
    ├── UpstreamError                 anything the upstream service did or did not answer
    │   ├── UpstreamUnavailable       no usable answer: connection refused, 502/503/504, other 5xx
    │   │   ├── UpstreamTimeout       connect or read timeout, or no time left in the page's budget
    │   │   └── UpstreamCircuitOpen   not sent: the upstream kept failing (checkout.upstream.breaker)
    │   ├── UpstreamBadResponse       an answer we cannot read (not JSON, wrong shape)
    │   └── UpstreamRejected          a 4xx: the upstream understood and said no
    │       ├── UpstreamBadRequest        400 {message}
    │       │   ├── QuoteExpired          400 "expired" from an order create: quote again
    │       │   └── OrderExpired          400 "expired" from anywhere else: the order is dead
    │       ├── UpstreamAuthError         401 bad client id or signature
    │       ├── FeatureNotAvailable       403 feature not enabled for this merchant
    │       ├── OrderNotAvailable         404 {code: ORDER_NOT_AVAILABLE}
    │       ├── UpstreamNotFound          other 404
    │       └── UpstreamRateLimited       429: not "no" but "not now" (``retry_after`` seconds)
    ├── LaunchTokenError              a launch token is unsigned, tampered, expired, over-long, reused
    ├── SessionConflict               someone else saved the session in between: reload, try again
    ├── OrderUnderway                 the session's order exists or is being created: what it was
    │                                 made from can no longer change
    ├── StepRefused                   a step's values were checked but cannot be saved; it carries
    │                                 the form that says why (``checkout.views.journey``, beside it)
    └── WebhookError                  an incoming webhook we must not act on
        ├── WebhookSignatureError     missing, malformed or wrong signature (401)
        └── WebhookPayloadError       signed, but not the payload of spec 6.2 (400)

No message, ``str()`` or ``repr()`` of these ever contains a credential: they carry the HTTP method,
the path (never the headers) and the upstream's own message.
"""
from __future__ import annotations


class CheckoutError(Exception):
    """Base of every error the checkout raises on purpose."""


class ConfigurationError(CheckoutError):
    """A required setting is missing or malformed. Raised by ``Checkout.init_app``."""


class SchemaError(CheckoutError):
    """The checkout's tables are not at the revision this code needs (checkout.store.schema).

    ``current`` is the database's revision (None: no version recorded), ``head`` this code's."""

    def __init__(self, message: str, *, current: str | None, head: str) -> None:
        super().__init__(message)
        self.current = current
        self.head = head


class SchemaBehind(SchemaError):
    """The database is behind this code; ``flask checkout db upgrade`` brings it up."""


class SchemaAhead(SchemaError):
    """The database is at a revision this code does not know (a newer release, rolled back)."""


class UpstreamError(CheckoutError):
    """The upstream call did not give the answer we needed."""

    status: int | None = None

    def __init__(self, message: str, *, status: int | None = None, code: str | None = None,
                 method: str | None = None, path: str | None = None,
                 body: object | None = None) -> None:
        super().__init__(message)
        self.message = message
        if status is not None:
            self.status = status
        self.code = code
        self.method = method
        self.path = path
        self.body = body

    @property
    def retryable(self) -> bool:
        """Whether trying the same thing again later may succeed."""
        return False

    def __repr__(self) -> str:
        return (f"{type(self).__name__}(status={self.status!r}, code={self.code!r}, "
                f"method={self.method!r}, path={self.path!r}, message={self.message!r})")


class UpstreamUnavailable(UpstreamError):
    """No usable answer. ``never_sent`` is True when the request certainly never reached the
    upstream (the connection was refused or timed out before it was made, the breaker is open, no
    time was left to send it): a create that failed so created nothing and may be tried again."""

    never_sent: bool = False

    def __init__(self, message: str, *, never_sent: bool = False, status: int | None = None,
                 code: str | None = None, method: str | None = None, path: str | None = None,
                 body: object | None = None) -> None:
        super().__init__(message, status=status, code=code, method=method, path=path, body=body)
        self.never_sent = never_sent

    @property
    def retryable(self) -> bool:
        return True


class UpstreamTimeout(UpstreamUnavailable):
    pass


class UpstreamCircuitOpen(UpstreamUnavailable):
    """Not sent: the upstream failed too often lately, and this process waits before trying it
    again (``retry_in`` seconds)."""

    def __init__(self, message: str, *, retry_in: float | None = None,
                 method: str | None = None, path: str | None = None) -> None:
        super().__init__(message, never_sent=True, method=method, path=path)
        self.retry_in = retry_in


class UpstreamBadResponse(UpstreamError):
    pass


class UpstreamRejected(UpstreamError):
    pass


class UpstreamBadRequest(UpstreamRejected):
    status = 400


class QuoteExpired(UpstreamBadRequest):
    """The quote (or off-ramp offer) an order create used has expired: a new quote may succeed."""


class OrderExpired(UpstreamBadRequest):
    """An existing order has expired (its time ran out, or too many wrong OTP codes): a new quote
    would not revive it, so a caller must not re-quote on this one."""


class UpstreamAuthError(UpstreamRejected):
    status = 401


class FeatureNotAvailable(UpstreamRejected):
    status = 403


class OrderNotAvailable(UpstreamRejected):
    status = 404


class UpstreamNotFound(UpstreamRejected):
    status = 404


class UpstreamRateLimited(UpstreamRejected):
    """The upstream asked us to slow down (429). Nothing was done: the same request may succeed
    after ``retry_after`` seconds (the upstream's ``Retry-After``, else the client's default)."""

    status = 429
    retry_after: float | None = None

    @property
    def retryable(self) -> bool:
        return True


class LaunchTokenError(CheckoutError):
    """A launch token that must not open a session. The message is safe to show to the user."""


class SessionConflict(CheckoutError):
    """Someone else saved the session in between; reload and try again."""


class OrderUnderway(CheckoutError):
    """The session's order exists or is being created: what it was made from can no longer change."""


class WebhookError(CheckoutError):
    """An incoming webhook that must not be acted upon."""


class WebhookSignatureError(WebhookError):
    pass


class WebhookPayloadError(WebhookError):
    pass
