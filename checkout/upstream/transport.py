"""The one place where HTTP happens: signed requests, timeouts, safe retries, one error mapping.

Shape borrowed from stripe-python's HTTP layer: a single ``requests.Session`` (connection pooling),
explicit ``(connect, read)`` timeouts, ``requests`` exceptions wrapped exactly once, and one function
(``error_for``) that turns a status and body into the checkout's exception tree.

Retries are limited to what is safe and useful to repeat: GET requests, after a connection error
(refused, reset, connect timeout) or a 502/503/504. Not after a read timeout: the upstream got the
request and is slow, and a user is waiting on the page; asking again would only multiply the wait.
Every attempt is prepared and signed again, because the signature covers a timestamp that
the upstream accepts for about a minute only. A POST is never repeated: one that may have reached the
upstream surfaces as ``UpstreamUnavailable``/``UpstreamTimeout`` and the caller reconciles by reading
the order back (creating a second order would charge the user twice). One that certainly did not
(``never_sent``: refused, connect timeout, breaker open, no time left) may simply be tried again.

How long a call may take (:mod:`.budget`): its kind's ``(connect, read)`` timeouts, never more than
what is left of the page's budget. Whether it is sent at all: the breaker of its family and
corridor (:mod:`.breaker`) must allow it, and at most ``max_in_flight`` calls of the process wait on
the upstream at once; a call beyond waits a moment for one of them, then is refused without being
sent. So an upstream that hangs holds a few threads for a few seconds, never every thread of every
worker. The breaker is told once per request, whatever its retries: a GET retried three times is
one failure. The trial call of a half-open breaker is sent once, never retried.

A 429 is never retried either, here or later in a loop: the upstream's ``Retry-After`` (else
``RATE_LIMIT_WAIT``) is kept on the ``UpstreamRateLimited`` and remembered for what was refused,
and until it has passed this process refuses those calls itself, without sending them. Status
polls, a user pressing again, the webhook fetcher: none of them reaches an upstream that asked us
to wait. What was refused is the endpoint and, for a call about one order (``orderId`` or
``orderParams`` in its query or body; an id in the path is part of the path), that order alone:
one order's wait never stops the reads of every other order (receipts, status pages). A call that
names no order (prices, limits, reference data) waits for its whole endpoint.

Logging: one line per attempt with method, path, status and duration. Never the query string (it may
carry e-mail addresses, phone numbers and wallet addresses), never a header. The same attempt is
told to ``on_call`` (the app's metrics) by endpoint *template*: a path that names an order is
given as ``/api/offramp/order/{id}``, so no id becomes a metric label.
"""
from __future__ import annotations

import contextlib
import json
import logging
import random
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from decimal import Decimal
from email.utils import parsedate_to_datetime
from http.cookiejar import Cookie, DefaultCookiePolicy
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlencode

import requests
import urllib3.exceptions

from ..errors import (
    FeatureNotAvailable,
    OrderExpired,
    OrderNotAvailable,
    QuoteExpired,
    UpstreamAuthError,
    UpstreamBadRequest,
    UpstreamBadResponse,
    UpstreamCircuitOpen,
    UpstreamError,
    UpstreamNotFound,
    UpstreamRateLimited,
    UpstreamRejected,
    UpstreamTimeout,
    UpstreamUnavailable,
)
from . import budget
from .breaker import Admission, Breakers, note_used
from .signing import Credentials

if TYPE_CHECKING:
    import urllib.request

log = logging.getLogger("checkout.upstream")

Timeout = tuple[float, float]
# (method, endpoint template, status or "timeout"/"unreachable", seconds) of one attempt.
CallObserver = Callable[[str, str, str, float], None]

RETRYABLE_STATUSES = frozenset({502, 503, 504})
RETRYABLE_METHODS = frozenset({"GET"})
ORDER_NOT_AVAILABLE = "ORDER_NOT_AVAILABLE"
# Codes that mean the same as the observed message "The order is expired" (upstream-notes 2).
EXPIRED_CODES = frozenset({"QUOTE_EXPIRED", "ORDER_EXPIRED", "OFFER_EXPIRED"})
# The upstream says "The order is expired" both for a stale quote at creation and for an order that
# has died (e.g. "The order is expired: too many wrong OTP attempts"). Only the creates consume a
# quote or offer, so only there does "expired" mean that quoting again may help.
QUOTE_CONSUMING_PATHS = frozenset({"/api/onramp/order/create", "/api/offramp/create-order"})
_ERROR_BODY_CHARS = 500
# Seconds to wait after a 429 that says nothing of how long, and the longest wait believed: a
# Retry-After of a day (a misconfigured proxy) must not stop this process's checkout for a day.
RATE_LIMIT_WAIT = 30.0
RATE_LIMIT_MAX_WAIT = 900.0
# What names the one order a call is about, in its query or its body: a 429 for it is that
# order's wait, not its endpoint's.
ORDER_KEYS = ("orderId", "orderParams")
# Calls of one process waiting on the upstream at once, and how long one more waits for a place.
MAX_IN_FLIGHT = 8
PLACE_WAIT = 1.0


class _NoCookies(DefaultCookiePolicy):
    """Refuses every cookie. The one session serves every shopper of the checkout: a cookie the
    upstream set while serving one of them must never ride along on another's request."""

    def set_ok(self, cookie: Cookie, request: urllib.request.Request) -> bool:
        return False

    def return_ok(self, cookie: Cookie, request: urllib.request.Request) -> bool:
        return False


def new_session() -> requests.Session:
    """The pooled session of one client: keep-alive connections, no cookies, our own User-Agent."""
    session = requests.Session()
    session.cookies.set_policy(_NoCookies())
    session.headers["User-Agent"] = "checkout-upstream-client (python-requests)"
    return session


@dataclass(frozen=True)
class Backoff:
    """Exponential backoff with jitter: ``base * 2**(n-1)`` capped at ``cap``, then between half and
    all of it, so that many checkouts retrying at once do not hit the upstream in lockstep."""

    base: float = 0.5
    cap: float = 4.0

    def delay(self, attempt: int, retry_after: float | None = None) -> float:
        ceiling: float = min(self.cap, self.base * 2 ** (attempt - 1))
        delay = ceiling / 2 + random.uniform(0, ceiling / 2)
        if retry_after is not None:
            # Honour the upstream's own hint, but never wait longer than the cap: a page is waiting.
            delay = max(delay, min(retry_after, self.cap))
        return delay


def query_value(value: object) -> str:
    """How a parameter value is written in the query string."""
    if isinstance(value, bool):                  # before int: bool is an int
        return "true" if value else "false"
    if isinstance(value, float):
        value = Decimal(repr(value))
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"cannot send {value} as an amount")
        # Never exponent notation: 1E+3 is not a number to the upstream.
        return format(value, "f")
    if isinstance(value, (int, str)):
        return str(value)
    raise TypeError(f"cannot send a {type(value).__name__} as a query parameter")


def encode_query(params: Mapping[str, object] | None) -> str:
    """Encode once, in the caller's order, leaving out ``None``.

    RFC 3986 quoting (``%20``, ``%2B``, ``%40``) survives requests' own re-quoting untouched, so the
    query that is signed is byte for byte the query that is sent.
    """
    if not params:
        return ""
    items = [(name, query_value(value)) for name, value in params.items() if value is not None]
    return urlencode(items, quote_via=quote)


def _json_default(value: object) -> object:
    if isinstance(value, Decimal):
        if not value.is_finite():
            raise ValueError(f"cannot send {value} as an amount")
        # JSON numbers: the upstream expects numbers, not strings. A float keeps 17 significant
        # digits, more than any amount the checkout handles.
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"cannot send a {type(value).__name__} in a JSON body")


def encode_body(body: Mapping[str, object]) -> bytes:
    """JSON for a request body, leaving out ``None``: the upstream rejects keys it does not know,
    and an explicit ``null`` for an optional field is not something it documents."""
    present = {name: value for name, value in body.items() if value is not None}
    return json.dumps(present, default=_json_default, separators=(",", ":"),
                      ensure_ascii=False).encode("utf-8")


def upstream_message(body: object) -> str | None:
    if isinstance(body, Mapping):
        message = body.get("message")
        if isinstance(message, list):            # some frameworks send a list of validation messages
            message = "; ".join(str(m) for m in message)
        if isinstance(message, str) and message.strip():
            return message.strip()
    if isinstance(body, str) and body.strip():
        return body.strip()[:_ERROR_BODY_CHARS]
    return None


def _says_expired(message: str) -> bool:
    text = message.lower()
    return "expired" in text and any(word in text for word in ("quote", "order", "offer"))


def error_for(status: int, body: object, method: str, path: str) -> UpstreamError:
    """The exception for an upstream answer that is not a success (upstream-notes section 2)."""
    code = body.get("code") if isinstance(body, Mapping) else None
    code = code if isinstance(code, str) else None
    message = upstream_message(body) or code or f"the upstream answered HTTP {status}"
    cls: type[UpstreamError]
    if status == 400:
        expired = (code in EXPIRED_CODES) or _says_expired(message)
        if not expired:
            cls = UpstreamBadRequest
        elif path.split("?", 1)[0] in QUOTE_CONSUMING_PATHS:
            cls = QuoteExpired
        else:
            cls = OrderExpired
    elif status == 401:
        cls = UpstreamAuthError
    elif status == 403:
        cls = FeatureNotAvailable
    elif status == 404:
        cls = OrderNotAvailable if code == ORDER_NOT_AVAILABLE else UpstreamNotFound
    elif status == 429:
        cls = UpstreamRateLimited
    elif 400 <= status < 500:
        cls = UpstreamRejected
    elif 500 <= status < 600:
        cls = UpstreamUnavailable
    else:                                        # 1xx, 3xx: redirects are never followed (they would
        cls = UpstreamBadResponse                # carry the credentials to another address)
    return cls(message, status=status, code=code, method=method, path=path, body=body)


def _connection_failed(exc: UpstreamUnavailable) -> bool:
    """True when no answer could even start: the connection failed (a connect timeout included).

    ``requests.ConnectTimeout`` is a ``ConnectionError``; ``ReadTimeout`` is not.
    """
    return isinstance(exc.__cause__, requests.ConnectionError)


def _never_sent(exc: requests.RequestException) -> bool:
    """True when the request certainly did not reach the upstream: no connection was made (it was
    refused, its name did not resolve, it timed out). A connection reset or closed once made may
    have carried the request: that is not certain, and is not counted here."""
    if isinstance(exc, requests.ConnectTimeout):
        return True
    if not isinstance(exc, requests.ConnectionError):
        return False
    reason: object = exc.args[0] if exc.args else None
    reason = getattr(reason, "reason", reason)          # urllib3's MaxRetryError wraps it
    return isinstance(reason, (urllib3.exceptions.NewConnectionError,
                               urllib3.exceptions.ConnectTimeoutError))


def _read_body(content: bytes) -> object:
    """Parsed JSON when the body is JSON, else its text (for error messages), else None."""
    if not content:
        return None
    try:
        return json.loads(content)
    except ValueError:
        return content.decode("utf-8", "replace")[:_ERROR_BODY_CHARS]


class _UnfinishedAnswer(requests.ReadTimeout):
    """The answer began but did not arrive whole: too slowly for the call's deadline, or cut
    short. A timeout, for what follows: the upstream had the request (not to be retried, and a
    create's outcome is unknown)."""


def _read_by(response: requests.Response, deadline: float) -> bytes:
    """The body of ``response``, or ``_UnfinishedAnswer`` once ``deadline`` (monotonic) is past
    or the answer breaks off."""
    chunks = []
    raw = response.raw
    # urllib3's read1 returns what one read of the socket brings: the deadline is looked at
    # between reads however slowly the bytes come (read(n) would wait for all n of them).
    read_some = getattr(raw, "read1", None)
    pieces = iter(lambda: read_some(64 * 1024, decode_content=True), b"") \
        if read_some is not None and hasattr(raw, "stream") else response.iter_content(64 * 1024)
    try:
        for chunk in pieces:
            chunks.append(chunk)
            if time.monotonic() > deadline:
                raise _UnfinishedAnswer("the answer did not arrive whole in time")
    except _UnfinishedAnswer:
        raise
    except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as exc:
        # read1 is urllib3's: its errors come as they are, not wrapped by requests.
        raise _UnfinishedAnswer("the answer was cut short") from exc
    finally:
        response.close()
    return b"".join(chunks)


def _retry_after(response: requests.Response) -> float | None:
    """``Retry-After`` in seconds from now: delta-seconds or an HTTP date (RFC 9110 10.2.3)."""
    value = response.headers.get("Retry-After", "").strip()
    if not value:
        return None
    try:
        seconds = float(value)
    except ValueError:
        try:
            moment = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        if moment.tzinfo is None:
            moment = moment.replace(tzinfo=UTC)
        seconds = max(0.0, (moment - datetime.now(UTC)).total_seconds())
    return seconds if seconds >= 0 else None


def refused_subject(params: Mapping[str, object] | None,
                    body: Mapping[str, object] | None) -> str:
    """The one order a call is about (``orderId=...``), as its 429 wait is kept; "" for a call
    about no one order (its whole endpoint waits)."""
    for given in (params, body):
        for name in ORDER_KEYS:
            value = (given or {}).get(name)
            if value is not None:
                return f"{name}={value}"
    return ""


class WaitList:
    """What the upstream asked us to leave alone (429), each until when (monotonic clock): an
    endpoint, or one order of it (``subject``, :func:`refused_subject`).

    Thread-safe: one client serves every request of the process. Entries go once their time is
    over, so the list holds at most what was limited in the last ``RATE_LIMIT_MAX_WAIT``.
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self.clock = clock
        self._until: dict[tuple[str, str, str], float] = {}
        self._lock = threading.Lock()

    def remaining(self, method: str, path: str, subject: str = "") -> float:
        """Seconds still to wait before ``method path`` (about ``subject``) may be sent (0: send
        it)."""
        key = (method, path, subject)
        with self._lock:
            until = self._until.get(key)
            if until is None:
                return 0.0
            left = until - self.clock()
            if left <= 0:
                del self._until[key]
                return 0.0
            return left

    def wait(self, method: str, path: str, seconds: float, subject: str = "") -> None:
        key = (method, path, subject)
        now = self.clock()
        with self._lock:
            self._until = {kept: until for kept, until in self._until.items() if until > now}
            self._until[key] = max(self._until.get(key, now), now + seconds)


@dataclass(frozen=True)
class _Call:
    """One logical request, as its attempts send it."""

    method: str
    path: str
    params: Mapping[str, object] | None
    body: Mapping[str, object] | None
    expect_json: bool
    endpoint: str                       # the route template (metrics, the breaker's family)
    subject: str = ""                   # the one order it is about, if any (the 429 wait list)


@dataclass
class _Verdict:
    """Whether a request got a usable answer, its retries included (None: nothing learnt)."""

    answered: bool | None = None


class Transport:
    """Sends one logical request to the upstream and returns its parsed JSON body."""

    def __init__(self, base_url: str, credentials: Credentials, *,
                 timeouts: Mapping[str, Timeout] | None = None, timeout: Timeout | None = None,
                 retries: int, session: requests.Session | None = None,
                 backoff: Backoff | None = None,
                 sleep: Callable[[float], None] = time.sleep,
                 on_call: CallObserver | None = None, breakers: Breakers | None = None,
                 max_in_flight: int = MAX_IN_FLIGHT) -> None:
        if retries < 0:
            raise ValueError("retries must be 0 or more")
        if max_in_flight < 1:
            raise ValueError("max_in_flight must be 1 or more")
        self.base_url = base_url.rstrip("/")
        self.credentials = credentials
        if timeout is not None:
            connect, read = timeout              # a single number would hide a missing read timeout
            self.timeout: Timeout | None = (float(connect), float(read))
            # One (connect, read) for every kind of call, as it was given.
            self.timeouts = {kind: self.timeout for kind in budget.KINDS}
        else:
            self.timeout = None
            self.timeouts = budget.timeouts(timeouts)
        self.retries = retries
        self.session = session if session is not None else new_session()
        self.backoff = backoff or Backoff()
        self.sleep = sleep
        self.waits = WaitList()
        self.on_call = on_call
        self.breakers = breakers or Breakers()
        self._places = threading.BoundedSemaphore(max_in_flight)

    def request(self, method: str, path: str, *, params: Mapping[str, object] | None = None,
                body: Mapping[str, object] | None = None, expect_json: bool = True,
                endpoint: str | None = None, probe: bool = False) -> Any:
        """Parsed JSON of a 2xx answer, or raise from ``checkout.errors``.

        ``path`` is the endpoint path without query; it is what logs and errors show.
        ``endpoint`` is its template when the path carries an id (metrics); else the path.
        With ``expect_json=False`` a 2xx body that is not JSON is accepted and ``None`` returned
        (the confirm endpoint answers with the text ``order confirmed``). A ``probe`` (the
        readiness check) is sent once, around the breakers: it asks whether the upstream answers
        now, whatever they remember of the last seconds, and its answer is not theirs to count.
        """
        method = method.upper()
        subject = refused_subject(params, body)
        waiting = self.waits.remaining(method, path, subject)
        if waiting:
            log.debug("upstream %s %s: not sent, the upstream asked us to wait %.0f s more",
                     method, path, waiting)
            limited = UpstreamRateLimited("the upstream asked us to wait before asking again",
                                          status=429, method=method, path=path)
            limited.retry_after = waiting
            raise limited
        call = _Call(method, path, params, body, expect_json, endpoint or path, subject)
        if probe:
            return self._attempts(call, 1, _Verdict())
        breaker = self.breakers.of(method, call.endpoint, params)
        admission = breaker.allow()
        if not admission:
            raise UpstreamCircuitOpen("the upstream failed too often lately: not sent",
                                      retry_in=breaker.snapshot().retry_in,
                                      method=method, path=path)
        note_used(breaker)
        # A trial is one call: the breaker wants one answer, and a failed one sent again would
        # only give an upstream that is not back yet more of what it cannot take.
        retried = method in RETRYABLE_METHODS and admission is not Admission.TRIAL
        verdict = _Verdict()
        try:
            return self._attempts(call, 1 + self.retries if retried else 1, verdict)
        finally:
            # One request, one count, its retries included.
            if verdict.answered is not None:
                breaker.record(verdict.answered)
            elif admission is Admission.TRIAL:
                breaker.release_trial()

    def _attempts(self, call: _Call, attempts: int, verdict: _Verdict) -> Any:
        """Send ``call`` up to ``attempts`` times (retrying what is safe to), and tell
        ``verdict`` whether the upstream gave a usable answer (left None when nothing was
        learnt of it: not sent for want of time or of a place, or cut short by the page's
        budget)."""
        method, path = call.method, call.path
        kind = budget.kind_of(method, path)
        for attempt in range(1, attempts + 1):
            # Not sent, for want of time or of a place: no news of the upstream.
            timeout = self._timeout_for(kind, method, path)
            place = self._place(method, path)
            place.__enter__()
            # The page's budget cut this attempt short: its timeout is no sign of an outage.
            shortened = timeout != self.timeouts[kind]
            try:
                # Prepared afresh every time: a retry needs a new timestamp and signature.
                prepared = self._prepare(method, path, call.params, call.body)
                response, content = self._send(prepared, method, path, attempt,
                                               call.endpoint, timeout)
            except UpstreamUnavailable as exc:
                if not (shortened and isinstance(exc, UpstreamTimeout)):
                    verdict.answered = False
                if attempt == attempts or not _connection_failed(exc) \
                        or not self._time_for_another(attempt, kind):
                    raise
                self._pause(method, path, attempt, None)
                continue
            finally:
                place.__exit__(None, None, None)
            if response.status_code in RETRYABLE_STATUSES and attempt < attempts \
                    and self._time_for_another(attempt, kind, _retry_after(response)):
                verdict.answered = False
                self._pause(method, path, attempt, _retry_after(response))
                continue
            try:
                answer = self._interpret(response, content, method, path, call.expect_json,
                                         call.subject)
            except (UpstreamUnavailable, UpstreamBadResponse):
                verdict.answered = False
                raise
            except UpstreamError:
                verdict.answered = True         # a refusal is an answer: the upstream works
                raise
            verdict.answered = True
            return answer
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _timeout_for(self, kind: str, method: str, path: str) -> Timeout:
        """This attempt's ``(connect, read)``: its kind's, within what is left of the page's
        budget; ``UpstreamTimeout`` (never sent) when too little is left to be worth sending."""
        connect, read = self.timeouts[kind]
        left = budget.remaining()
        if left is None:
            return connect, read
        if left < budget.MIN_USEFUL:
            log.warning("upstream %s %s: not sent, the page's time for the upstream is spent",
                        method, path)
            raise UpstreamTimeout("no time was left to ask the upstream", never_sent=True,
                                  method=method, path=path)
        return min(connect, left), min(read, left)

    def _time_for_another(self, attempt: int, kind: str, retry_after: float | None = None
                          ) -> bool:
        """Whether the page's budget leaves room for the pause and a useful attempt after it."""
        left = budget.remaining()
        if left is None:
            return True
        pause = self.backoff.delay(attempt, retry_after)
        return left - pause >= max(budget.MIN_USEFUL, self.timeouts[kind][0])

    @contextlib.contextmanager
    def _place(self, method: str, path: str) -> Iterator[None]:
        """One of the process's places for a call waiting on the upstream."""
        left = budget.remaining()
        wait = PLACE_WAIT if left is None else min(PLACE_WAIT, left)
        if not self._places.acquire(timeout=wait):
            log.warning("upstream %s %s: not sent, every place for a call waiting on the "
                        "upstream is taken", method, path)
            raise UpstreamUnavailable("too many calls are waiting on the upstream: not sent",
                                      never_sent=True, method=method, path=path)
        try:
            yield
        finally:
            self._places.release()

    def _prepare(self, method: str, path: str, params: Mapping[str, object] | None,
                 body: Mapping[str, object] | None) -> requests.PreparedRequest:
        if not path.startswith("/"):
            raise ValueError("an upstream path starts with '/'")
        url = self.base_url + path
        query = encode_query(params)
        if query:
            url = f"{url}?{query}"
        headers = {"Accept": "application/json"}
        data = None
        if body is not None:
            data = encode_body(body)
            headers["Content-Type"] = "application/json"
        prepared = self.session.prepare_request(
            requests.Request(method, url, headers=headers, data=data))
        # Signed over the prepared request's own path and query: exactly the bytes on the wire.
        prepared.headers.update(self.credentials.headers(prepared.path_url))
        return prepared

    def _send(self, prepared: requests.PreparedRequest, method: str, path: str,
              attempt: int, endpoint: str, timeout: Timeout
              ) -> tuple[requests.Response, bytes]:
        """The answer and its whole body, read by ``connect + read`` seconds from now (requests'
        read timeout is per read: an upstream sending its answer a byte at a time would
        otherwise hold the page as long as it liked)."""
        # Session.send skips the environment (proxies, CA bundle) that Session.request would add.
        settings = self.session.merge_environment_settings(prepared.url, {}, None, None, None)
        started = time.monotonic()
        deadline = started + timeout[0] + timeout[1]
        settings["stream"] = True             # the body is read below, by the deadline
        try:
            response = self.session.send(prepared, timeout=timeout, allow_redirects=False,
                                         **settings)
            content = _read_by(response, deadline)
        except requests.Timeout as exc:
            self._log_failure(method, path, started, attempt, exc)
            self._observe(method, endpoint, "timeout", started)
            raise UpstreamTimeout("the upstream did not answer in time", never_sent=_never_sent(exc),
                                  method=method, path=path) from exc
        except requests.RequestException as exc:
            self._log_failure(method, path, started, attempt, exc)
            self._observe(method, endpoint, "unreachable", started)
            raise UpstreamUnavailable("the upstream could not be reached",
                                      never_sent=_never_sent(exc), method=method,
                                      path=path) from exc
        self._observe(method, endpoint, str(response.status_code), started)
        # Every call, so DEBUG: a log at INFO shows events (checkout.logs), not each request.
        log.debug("upstream %s %s -> %s in %.0f ms (attempt %d)", method, path,
                 response.status_code, (time.monotonic() - started) * 1000, attempt)
        return response, content

    def _observe(self, method: str, endpoint: str, status: str, started: float) -> None:
        if self.on_call is not None:
            self.on_call(method, endpoint, status, time.monotonic() - started)

    @staticmethod
    def _log_failure(method: str, path: str, started: float, attempt: int,
                     exc: Exception) -> None:
        # The exception's text names the URL with its query string: log only its class.
        log.warning("upstream %s %s -> %s after %.0f ms (attempt %d)", method, path,
                    type(exc).__name__, (time.monotonic() - started) * 1000, attempt)

    def _pause(self, method: str, path: str, attempt: int, retry_after: float | None) -> None:
        delay = self.backoff.delay(attempt, retry_after)
        log.debug("upstream %s %s: retrying in %.2f s", method, path, delay)
        self.sleep(delay)

    def _interpret(self, response: requests.Response, content: bytes, method: str, path: str,
                   expect_json: bool, subject: str = "") -> Any:
        status = response.status_code
        if 200 <= status < 300:
            if not expect_json:
                body = _read_body(content)
                return body if not isinstance(body, str) else None
            try:
                return json.loads(content)
            except ValueError as exc:
                raise UpstreamBadResponse(
                    f"the upstream answered HTTP {status} with a body that is not JSON",
                    status=status, method=method, path=path) from exc
        body = self._redacted(_read_body(content))
        error = error_for(status, body, method, path)
        if isinstance(error, UpstreamRateLimited):
            asked = _retry_after(response)
            error.retry_after = min(RATE_LIMIT_MAX_WAIT,
                                    RATE_LIMIT_WAIT if asked is None else asked)
            self.waits.wait(method, path, error.retry_after, subject)
            log.warning("upstream %s %s asked us to wait %.0f s (429)", method, path,
                        error.retry_after)
        raise error

    def _redacted(self, body: object) -> object:
        """The error body with the credentials scrubbed from every string in it."""
        if isinstance(body, str):
            return self.credentials.redact(body)
        if isinstance(body, Mapping):
            return {key: self._redacted(value) for key, value in body.items()}
        if isinstance(body, list):
            return [self._redacted(value) for value in body]
        return body

    def close(self) -> None:
        self.session.close()
