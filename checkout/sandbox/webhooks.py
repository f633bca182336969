"""The sandbox's webhook sender: signed POSTs with the retry rules of spec 6.4, and a delivery log.

One :class:`Delivery` is one event to one URL. Its body is serialised once and never again, so every
attempt (and every redelivery) carries the same bytes and the same ``x-signature`` (spec 6.3 signs
the raw bytes). Attempts are timed by the sandbox :class:`~checkout.sandbox.clock.Scheduler` and run
on a few worker threads of the sender's own, because an attempt may block for up to 20 s and the
scheduler thread also serves the order timers.

Delivery rules (spec 6.4): 2xx is success, anything else a failure; redirects are not followed (a
3xx is a failed attempt, "redirect refused"); 20 s to answer; 10 attempts in all, waiting 1, 2, 4 ...
256 sandbox seconds between them. A URL that is not http(s) or that resolves to a private or internal
address is *refused*: recorded once as the delivery result and not retried, since the policy would
refuse every retry too (see :mod:`checkout.sandbox.webhook_targets`). A DNS failure is an ordinary
failed attempt and is retried.

In-process targets (``in_process``): a sandbox embedded in its receiver's own process cannot reach
it over the network (the receiver may not listen on any socket at all), so URLs under a base
given there go through the transport adapter given with it (the embedding host's, which calls its
WSGI app): no DNS, no socket, no address policy, but the same bytes, headers, status rules,
retries and log as any other delivery.
"""
from __future__ import annotations

import dataclasses
import http.cookiejar
import io
import json
import logging
import queue
import secrets
import socket
import ssl
import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from decimal import Decimal
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit, urlunsplit

import requests
from requests.adapters import BaseAdapter, HTTPAdapter
from urllib3.exceptions import NewConnectionError

from ..signature import sign
from .clock import Scheduler
from .webhook_targets import (
    IPAddress,
    Resolver,
    Target,
    TargetRefused,
    TargetUnresolvable,
    resolve_target,
)

if TYPE_CHECKING:
    from requests.adapters import _HostParams, _PoolKwargs  # names in types-requests only

__all__ = [
    "Attempt", "Delivery", "WebhookSender", "encode_payload", "retry_waits",
    "order_status_payload", "auth_payload", "kyc_payload",
    "EVENT_ORDER_STATUS", "EVENT_AUTH", "EVENT_KYC",
]

log = logging.getLogger(__name__)

EVENT_ORDER_STATUS = "order-status-change"
EVENT_AUTH = "auth"
EVENT_KYC = "kyc"

EXCERPT_BYTES = 500
USER_AGENT = "checkout-sandbox-webhooks/1"

PENDING, SUCCEEDED, FAILED, REFUSED = "pending", "succeeded", "failed", "refused"
IN_PROCESS = "in-process"          # the address an in-process attempt shows in the log


def retry_waits(max_attempts: int = 10) -> list[int]:
    """Sandbox seconds to wait after each failed attempt but the last: 1, 2, 4 ... (spec 6.4)."""
    return [2 ** n for n in range(max_attempts - 1)]


# -- the delivery log -----------------------------------------------------------------------------

@dataclass(frozen=True)
class Attempt:
    """One POST (or one refusal) and what came of it."""

    number: int                         # 1-based
    started_at: datetime
    duration: float                     # real seconds
    status: int | None                  # HTTP status, None when no response came
    result: str                         # "200 OK", "HTTP 500 ...", "redirect refused (302 to ...)", ...
    ok: bool
    response_excerpt: str = ""          # the first 500 bytes of the response body, decoded leniently
    address: str | None = None          # the checked IP address connected to, or "in-process"
    retry_in: float | None = None       # sandbox seconds until the next attempt; None: no next attempt
    next_attempt_at: datetime | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "number": self.number,
            "startedAt": _iso(self.started_at),
            "durationMs": round(self.duration * 1000, 1),
            "status": self.status,
            "result": self.result,
            "ok": self.ok,
            "responseExcerpt": self.response_excerpt,
            "address": self.address,
            "retryIn": self.retry_in,
            "nextAttemptAt": _iso(self.next_attempt_at) if self.next_attempt_at else None,
        }


@dataclass(eq=False)
class Delivery:
    """One event to one URL, with every attempt made so far.

    Only the sender changes it, under its lock; ``attempts`` is a tuple replaced whole, so a reader
    on another thread always sees a consistent list.
    """

    id: str
    url: str
    event: str | None
    order_id: str | None
    body: bytes                         # exactly the bytes sent, every time
    signature: str                      # the x-signature header sent with them
    created_at: datetime
    attempts: tuple[Attempt, ...] = ()
    state: str = PENDING
    redelivery_of: str | None = None
    _finished: threading.Event = field(default_factory=threading.Event, init=False, repr=False)

    @property
    def done(self) -> bool:
        return self.state != PENDING

    @property
    def display_url(self) -> str:
        """The URL without any password in it, for pages and logs."""
        return _redact(self.url)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until the delivery succeeded, failed or was refused. True if it did in time."""
        return self._finished.wait(timeout)

    def to_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "url": self.display_url,
            "event": self.event,
            "orderId": self.order_id,
            "state": self.state,
            "createdAt": _iso(self.created_at),
            "signature": self.signature,
            "body": self.body.decode("utf-8"),
            "redeliveryOf": self.redelivery_of,
            "attempts": [attempt.to_dict() for attempt in self.attempts],
        }


# -- the sender -----------------------------------------------------------------------------------

class WebhookSender:
    """Signs, sends and retries webhooks; keeps the last ``max_deliveries`` deliveries.

    ``allow_loopback`` lets a merchant on the same machine (127.0.0.0/8, ::1) receive webhooks during
    development; every other private range stays refused. ``session`` is taken over by the sender:
    its adapters for ``http://`` and ``https://`` are replaced by the address-pinning one, it sends no
    cookies and ignores proxy settings from the environment. Pass one to trust a test CA (``verify``).
    ``in_process`` maps base URLs (``http://checkout.embedded.invalid``) to transport adapters that
    serve the deliveries to URLs under them in this process.
    """

    def __init__(self, secret: str, *, scheduler: Scheduler, allow_loopback: bool = False,
                 timeout: float = 20.0, max_attempts: int = 10,
                 resolver: Resolver = socket.getaddrinfo,
                 session: requests.Session | None = None,
                 max_deliveries: int = 5000, workers: int = 4,
                 in_process: Mapping[str, BaseAdapter] | None = None) -> None:
        if not secret:
            raise ValueError("a webhook secret is required")
        if max_attempts < 1:
            raise ValueError("max_attempts must be at least 1")
        self._secret = secret
        self.scheduler = scheduler
        self.clock = scheduler.clock
        self.allow_loopback = allow_loopback
        self.timeout = float(timeout)
        self.max_attempts = int(max_attempts)
        self._resolver = resolver
        self._session = _prepare_session(session or requests.Session())
        self._in_process_bases = tuple(_in_process_base(base) for base in (in_process or {}))
        self._in_process_session = _in_process_session(in_process or {})
        self._max_deliveries = max_deliveries
        self._deliveries: OrderedDict[str, Delivery] = OrderedDict()
        self._lock = threading.Condition(threading.Lock())
        self._in_flight = 0
        self._closed = False
        self._workers = _WorkerPool(workers, self._attempt)

    def __repr__(self) -> str:
        # Never the secret.
        return (f"WebhookSender(allow_loopback={self.allow_loopback}, timeout={self.timeout:g}, "
                f"max_attempts={self.max_attempts}, deliveries={len(self._deliveries)})")

    # -- public API ---------------------------------------------------------------------------

    def send(self, url: str, payload: Mapping[str, Any], *, order_id: str | None = None,
             event: str | None = None) -> Delivery:
        """Queue ``payload`` for delivery to ``url``; the first attempt starts at once."""
        body = encode_payload(payload)
        return self._start(url, body, order_id=order_id,
                           event=event if event is not None else _event_of(payload))

    def redeliver(self, delivery_id: str) -> Delivery:
        """A fresh delivery of the same bytes to the same URL (raises ``KeyError`` if unknown)."""
        original = self.get(delivery_id)
        if original is None:
            raise KeyError(delivery_id)
        return self._start(original.url, original.body, order_id=original.order_id,
                           event=original.event, redelivery_of=original.id)

    def get(self, delivery_id: str) -> Delivery | None:
        with self._lock:
            return self._deliveries.get(delivery_id)

    def deliveries(self, order_id: str | None = None) -> list[Delivery]:
        """Deliveries kept, newest first; only those of ``order_id`` if given."""
        with self._lock:
            kept = list(self._deliveries.values())
        return [d for d in reversed(kept) if order_id is None or d.order_id == order_id]

    def drain(self, timeout: float = 10.0) -> bool:
        """Wait (real seconds) until no delivery is pending. True if that happened in time."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while self._in_flight:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return False
                self._lock.wait(remaining)
            return True

    def close(self) -> None:
        """Stop sending: pending deliveries end as 'failed', workers stop, connections close."""
        with self._lock:
            self._closed = True
            pending = [d for d in self._deliveries.values() if not d.done]
        for delivery in pending:
            self._finish(delivery, FAILED)
        self._workers.close()
        self._session.close()
        self._in_process_session.close()

    # -- the delivery loop --------------------------------------------------------------------

    def _start(self, url: str, body: bytes, *, order_id: str | None, event: str | None,
               redelivery_of: str | None = None) -> Delivery:
        delivery = Delivery(id=f"dlv_{secrets.token_hex(8)}", url=url, event=event,
                            order_id=order_id, body=body, signature=sign(body, self._secret),
                            created_at=self.clock.now(), redelivery_of=redelivery_of)
        with self._lock:
            if self._closed:
                raise RuntimeError("the webhook sender is closed")
            self._deliveries[delivery.id] = delivery
            while len(self._deliveries) > self._max_deliveries:
                # A dropped delivery still pending keeps its retries; it is only no longer listed.
                self._deliveries.popitem(last=False)
            self._in_flight += 1
        self._schedule(delivery, 1, 0)
        return delivery

    def _schedule(self, delivery: Delivery, number: int, wait: float) -> None:
        try:
            self.scheduler.call_later(wait, self._dispatch, delivery, number)
        except RuntimeError:        # the scheduler was shut down: the sandbox is stopping
            self._finish(delivery, FAILED)

    def _dispatch(self, delivery: Delivery, number: int) -> None:
        # Runs on the scheduler thread: hand over at once, an attempt may block for `timeout`.
        if not delivery.done:
            self._workers.submit(delivery, number)

    def _attempt(self, delivery: Delivery, number: int) -> None:
        if delivery.done:           # finished by close() while queued
            return
        started_at = self.clock.now()
        t0 = time.monotonic()
        address: str | None
        if self._served_in_process(delivery.url):
            outcome, address = self._post_in_process(delivery), IN_PROCESS
        else:
            try:
                target = resolve_target(delivery.url, resolver=self._resolver,
                                        allow_loopback=self.allow_loopback)
            except TargetRefused as refusal:
                self._record(delivery, Attempt(number=number, started_at=started_at,
                                               duration=time.monotonic() - t0, status=None,
                                               result=str(refusal), ok=False), final=REFUSED)
                return
            except TargetUnresolvable as exc:
                outcome, address = _Outcome(None, str(exc), False), None
            else:
                outcome, address = self._post_to_first_reachable(target, delivery)
        attempt = Attempt(number=number, started_at=started_at, duration=time.monotonic() - t0,
                          status=outcome.status, result=outcome.result, ok=outcome.ok,
                          response_excerpt=outcome.excerpt, address=address)
        if outcome.ok:
            self._record(delivery, attempt, final=SUCCEEDED)
        elif number >= self.max_attempts:
            self._record(delivery, attempt, final=FAILED)
        else:
            wait = 2 ** (number - 1)
            # Recorded before scheduling: with a small time scale the next attempt may otherwise
            # be logged before this one.
            attempt = dataclasses.replace(attempt, retry_in=wait,
                                          next_attempt_at=self.clock.due_at(wait))
            self._record(delivery, attempt, final=None)
            self._schedule(delivery, number + 1, wait)

    def _post_to_first_reachable(self, target: Target, delivery: Delivery) -> tuple[_Outcome, str]:
        """POST to the target's addresses in turn until one accepts the connection.

        Only a refused connection moves on (nothing was sent, so no duplicate): "localhost" often
        resolves to ::1 first while a development server listens on 127.0.0.1 only.
        """
        for address in target.addresses:
            outcome = self._post(target, address, delivery)
            if not outcome.unreachable:
                break
        return outcome, address.compressed

    def _post(self, target: Target, address: IPAddress, delivery: Delivery) -> _Outcome:
        headers = {"Host": target.host_header, **_signed_headers(delivery)}
        return self._exchange(lambda: self._session.post(
            target.pinned_url(address), data=delivery.body, headers=headers, auth=target.auth,
            timeout=(self.timeout, self.timeout), allow_redirects=False, stream=True))

    def _served_in_process(self, url: str) -> bool:
        # The same prefix rule requests uses to pick the adapter, so both always agree.
        folded = url.lower()
        return any(folded == base or folded.startswith((base + "/", base + "?"))
                   for base in self._in_process_bases)

    def _post_in_process(self, delivery: Delivery) -> _Outcome:
        """POST to an in-process app. It runs on this worker thread and cannot be interrupted, so
        the timeout is judged once it has answered (a slow answer still counts as a timeout)."""
        return self._exchange(lambda: self._in_process_session.post(
            delivery.url, data=delivery.body, headers=_signed_headers(delivery),
            timeout=(self.timeout, self.timeout), allow_redirects=False, stream=True))

    def _exchange(self, send: Callable[[], requests.Response]) -> _Outcome:
        """Make one POST and judge its answer by spec 6.4."""
        t0 = time.monotonic()
        try:
            response = send()
        except requests.Timeout:
            return _Outcome(None, f"timeout: no answer within {self.timeout:g} s", False)
        except requests.exceptions.SSLError as exc:
            return _Outcome(None, f"TLS error: {plain_reason(exc, 'the TLS handshake failed')}",
                            False)
        except requests.ConnectionError as exc:
            return _Outcome(None, f"connection failed: {plain_reason(exc, 'no connection')}",
                            False, unreachable=_never_connected(exc))
        except requests.RequestException as exc:
            return _Outcome(None, f"request failed: {plain_reason(exc, 'the request failed')}",
                            False)
        except Exception as exc:    # an in-process app may raise anything (TESTING propagates)
            log.info("in-process webhook receiver raised", exc_info=exc)
            return _Outcome(None, "the receiver failed while handling it (an error in its code;"
                                  " see its log)", False)
        answered_in = time.monotonic() - t0
        with response:
            excerpt = _read_excerpt(response)
            status = response.status_code
            if answered_in > self.timeout:
                # requests' timeout bounds each read, not the whole answer: a receiver dribbling
                # its headers could otherwise take far longer than the spec's 20 s.
                return _Outcome(status, f"timeout: answered {status} after more than "
                                        f"{self.timeout:g} s", False, excerpt)
            if 200 <= status < 300:
                return _Outcome(status, f"{status} {response.reason or ''}".strip(), True, excerpt)
            if 300 <= status < 400:
                location = response.headers.get("Location")
                where = f"to {_redact(location)}" if location else "without Location"
                return _Outcome(status, f"redirect refused ({status} {where})", False, excerpt)
            return _Outcome(status, f"HTTP {status} {response.reason or ''}".strip(), False, excerpt)

    def _record(self, delivery: Delivery, attempt: Attempt, *, final: str | None) -> None:
        with self._lock:
            delivery.attempts = (*delivery.attempts, attempt)
        log.info("webhook %s attempt %d to %s: %s", delivery.id, attempt.number,
                 delivery.display_url, attempt.result)
        if final is not None:
            self._finish(delivery, final)

    def _finish(self, delivery: Delivery, state: str) -> None:
        with self._lock:
            if delivery.done:
                return
            delivery.state = state
            self._in_flight -= 1
            self._lock.notify_all()
        delivery._finished.set()


@dataclass(frozen=True)
class _Outcome:
    status: int | None
    result: str
    ok: bool
    excerpt: str = ""
    unreachable: bool = False       # the TCP connection itself failed: nothing reached the receiver


def _never_connected(exc: requests.ConnectionError) -> bool:
    reason = getattr(exc.args[0], "reason", None) if exc.args else None
    return isinstance(reason, NewConnectionError)


class _PinnedAddressAdapter(HTTPAdapter):
    """Connects to the IP address in the URL, but does TLS for the name in the Host header.

    The sender puts the checked address in the URL (no second DNS lookup) and the real name in
    ``Host``; for https this adapter makes urllib3 send that name as SNI and check the certificate
    against it, exactly as if the URL had carried the name.
    """

    def build_connection_pool_key_attributes(self, request: requests.PreparedRequest, verify: Any,
                                             cert: Any = None) -> tuple[_HostParams, _PoolKwargs]:
        host_params, pool_kwargs = super().build_connection_pool_key_attributes(request, verify, cert)
        host = request.headers.get("Host")
        if host_params.get("scheme") == "https" and host:
            name = urlsplit(f"//{host}").hostname
            if name:
                # urllib3 takes server_hostname (SNI and the certificate's name) in the pool key;
                # the stubs' TypedDict lists only the TLS keys requests itself sets.
                pool_kwargs["server_hostname"] = name  # type: ignore[typeddict-unknown-key]
        return host_params, pool_kwargs


def _prepare_session(session: requests.Session) -> requests.Session:
    adapter = _PinnedAddressAdapter(max_retries=0)      # retries follow spec 6.4, not urllib3
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.trust_env = False       # an environment proxy would bypass the address pinning
    # No cookie is ever kept, so nothing a receiver sets is sent on to anyone.
    session.cookies = requests.cookies.RequestsCookieJar(
        policy=http.cookiejar.DefaultCookiePolicy(allowed_domains=[]))
    session.headers["User-Agent"] = USER_AGENT
    return session


def _signed_headers(delivery: Delivery) -> dict[str, str]:
    return {"Content-Type": "application/json", "x-signature": delivery.signature}


def _in_process_base(base: str) -> str:
    if not isinstance(base, str) or not base.lower().startswith(("http://", "https://")):
        raise ValueError(f"in-process webhook base {base!r} must be an absolute http(s) URL")
    return base.rstrip("/").lower()


class _NoNetworkAdapter(BaseAdapter):
    """What the in-process session does with any other URL: never touch the network."""

    def send(self, request: requests.PreparedRequest, *args: Any, **kwargs: Any) -> requests.Response:
        raise requests.ConnectionError(f"{request.url} is not served in process")

    def close(self) -> None:
        """Nothing to release."""


def _in_process_session(adapters: Mapping[str, BaseAdapter]) -> requests.Session:
    """A session whose only "network" is the given transport adapters (each serving its base URL
    in process), set up like the HTTP one."""
    session = _prepare_session(requests.Session())
    session.mount("http://", _NoNetworkAdapter())
    session.mount("https://", _NoNetworkAdapter())
    for base, adapter in adapters.items():
        if not isinstance(adapter, BaseAdapter):
            raise ValueError(f"in-process webhook target for {base!r} is not a transport adapter")
        # With a trailing slash: http://a.invalid does not also capture http://a.invalid.example.
        session.mount(base.rstrip("/") + "/", adapter)
    return session


def _read_excerpt(response: requests.Response) -> str:
    raw = response.raw
    try:
        if isinstance(raw, io.BytesIO):     # an in-process answer, already whole in memory
            data = raw.read(EXCERPT_BYTES)
        else:
            data = raw.read(EXCERPT_BYTES, decode_content=True) or b""
    except Exception as exc:   # a broken body does not change the status already received
        log.debug("webhook response body unreadable: %s", exc)
        return ""
    return data[:EXCERPT_BYTES].decode("utf-8", errors="replace")


# What the sandbox console says of a failed connection, in words: requests' own messages are a
# nest of class names and object addresses ("HTTPConnectionPool(...): Max retries exceeded ...
# NewConnectionError('<urllib3.connection.HTTPConnection object at 0x7f...>: ...')").
_PLAIN_REASONS: tuple[tuple[type[BaseException], str], ...] = (
    (ConnectionRefusedError, "connection refused (nothing listens at that address and port)"),
    (ConnectionResetError, "the receiver closed the connection"),
    (socket.gaierror, "the host name could not be found"),
    (ssl.SSLCertVerificationError, "the receiver's certificate could not be verified"),
    (ssl.SSLError, "the TLS handshake failed"),
    (TimeoutError, "the connection timed out"),
    (OSError, "the network refused the connection"),
)


def plain_reason(exc: BaseException, default: str) -> str:
    """Why a connection failed, in plain words, from the first known cause in ``exc``'s chain."""
    seen: list[BaseException] = []
    pending: list[object] = [exc]
    while pending and len(seen) < 16:
        current = pending.pop(0)
        if not isinstance(current, BaseException) or current in seen:
            continue
        seen.append(current)
        pending.extend([getattr(current, "reason", None), current.__cause__, current.__context__,
                        *current.args[:1]])
    for kind, words in _PLAIN_REASONS:
        if any(isinstance(e, kind) for e in seen):
            return words
    return default


def _redact(url: str) -> str:
    parts = urlsplit(url)
    if parts.password is None:
        return url
    netloc = parts.netloc.rsplit("@", 1)[1]
    return urlunsplit(parts._replace(netloc=f"{parts.username}:***@{netloc}"))


def _event_of(payload: Mapping[str, Any]) -> str | None:
    event = payload.get("event")
    return event if isinstance(event, str) else None


class _WorkerPool:
    """A few daemon threads that run attempts, so a slow receiver never holds up the scheduler."""

    def __init__(self, size: int, run: Callable[[Delivery, int], None]) -> None:
        self._queue: queue.SimpleQueue[tuple[Delivery, int] | None] = queue.SimpleQueue()
        self._run = run
        self._size = max(1, size)
        self._threads: list[threading.Thread] = []
        self._lock = threading.Lock()

    def submit(self, delivery: Delivery, number: int) -> None:
        with self._lock:
            if len(self._threads) < self._size:
                # Daemon: the interpreter never waits for a receiver at exit.
                thread = threading.Thread(target=self._serve, daemon=True,
                                          name=f"sandbox-webhook-{len(self._threads) + 1}")
                self._threads.append(thread)
                thread.start()
        self._queue.put((delivery, number))

    def close(self) -> None:
        with self._lock:
            for _ in self._threads:
                self._queue.put(None)
            self._threads = []

    def _serve(self) -> None:
        while (job := self._queue.get()) is not None:
            try:
                self._run(*job)
            except Exception:
                log.exception("webhook attempt crashed")


# -- payloads -------------------------------------------------------------------------------------

def encode_payload(payload: Mapping[str, Any]) -> bytes:
    """The body to send: compact JSON in UTF-8 (non-ASCII left as is), datetimes in ISO 8601 UTC."""
    return json.dumps(payload, separators=(",", ":"), ensure_ascii=False, allow_nan=False,
                      default=_json_default).encode("utf-8")


def _json_default(value: Any) -> Any:
    if isinstance(value, datetime):
        return _iso(value)
    if isinstance(value, Decimal):
        # JSON has one number type; an integral amount stays an integer.
        return int(value) if value == value.to_integral_value() else float(value)
    raise TypeError(f"cannot put {type(value).__name__} in a webhook body")


def _iso(moment: datetime) -> str:
    """``2026-11-22T01:55:00.123Z``, the shape the upstream uses for its date-times."""
    if moment.tzinfo is None:
        raise ValueError("webhook date-times must be timezone-aware")
    utc = moment.astimezone(UTC)
    return utc.strftime("%Y-%m-%dT%H:%M:%S.") + f"{utc.microsecond // 1000:03d}Z"


_ORDER_FIELDS = ("_id", "userId", "userEmail", "merchantOrderParams", "countryIsoCode", "flow",
                 "type", "source", "status", "utm", "deposit", "payout", "refund",
                 "createdAt", "updatedAt")
_ORDER_REQUIRED = ("_id", "userId", "userEmail", "countryIsoCode", "flow", "type", "source",
                   "status", "deposit", "payout", "createdAt", "updatedAt")
_LEG_FIELDS = ("paymentChannel", "currencyType", "currencyCode", "currencyDetails", "cashout",
               "transaction")
_CASHOUT_FIELDS = ("exchangeRate", "exchangeRateAfterFees", "amountBeforeFees", "amountAfterFees",
                   "amountBeforeFeesUsd", "amountAfterFeesUsd")
_META_FIELDS = ("transactionHash", "fromAddress", "toAddress")
_USER_KYC_FIELDS = ("passedKycType", "passedKycHash", "latestKycType", "latestKycStatus")


def order_status_payload(order_summary: Mapping[str, Any],
                         user_kyc: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """``{event: 'order-status-change', data: {order, userKyc}}`` exactly as spec 6.2.

    Takes the order in its webhook-summary shape (camelCase) and keeps only the fields 6.2 lists:
    the webhook is a summary, so fees, transfer instructions, logs and ``expiresAt`` never leak into
    it even if the caller passes a full order. Optional fields that are None are left out.
    Raises ``ValueError`` naming any required field that is missing.
    """
    missing = [name for name in _ORDER_REQUIRED if order_summary.get(name) is None]
    if missing:
        raise ValueError(f"order summary lacks {', '.join(missing)}")
    order = _pick(order_summary, _ORDER_FIELDS)
    for leg in ("deposit", "payout", "refund"):
        if leg in order:
            order[leg] = _summary_leg(order[leg])
    if "utm" in order:
        order["utm"] = _pick(order["utm"], ("source", "medium", "campaign"))
    return {
        "event": EVENT_ORDER_STATUS,
        "data": {"order": order, "userKyc": _pick(user_kyc or {}, _USER_KYC_FIELDS)},
    }


def _summary_leg(leg: Mapping[str, Any]) -> dict[str, Any]:
    summary = _pick(leg, _LEG_FIELDS)
    if "cashout" in summary:
        summary["cashout"] = _pick(summary["cashout"], _CASHOUT_FIELDS)
    if "transaction" in summary:
        meta = _pick((summary["transaction"] or {}).get("meta") or {}, _META_FIELDS)
        # 6.2: `meta` appears only when at least one of its three fields exists.
        summary["transaction"] = {"meta": meta} if meta else {}
    return summary


def auth_payload(*, operation: str, status: str, user_email: str, date: datetime | str,
                 user_country_iso_code: str, user_id: str | None = None) -> dict[str, Any]:
    """The opt-in ``auth`` event (notes 4): a user's login or registration step."""
    _one_of("operation", operation, ("login", "register"))
    _one_of("status", status, ("initiate", "success", "failed"))
    data: dict[str, Any] = {"authOperation": operation, "authStatus": status,
                            "userEmail": user_email, "date": date,
                            "userCountryIsoCode": user_country_iso_code}
    if user_id is not None:
        data["userId"] = user_id
    return {"event": EVENT_AUTH, "data": data}


def kyc_payload(*, kyc_id: str, status: str, kyc_type: str, user_id: str, user_email: str,
                user_country_iso_code: str, kyc_document: Any,
                date: datetime | str) -> dict[str, Any]:
    """The opt-in ``kyc`` event (notes 4): a KYC submission was made, approved or rejected."""
    _one_of("status", status, ("initiated", "approved", "rejected"))
    _one_of("kyc_type", kyc_type, ("basic", "advanced"))
    return {"event": EVENT_KYC, "data": {
        "kycId": kyc_id, "kycStatus": status, "kycType": kyc_type, "userId": user_id,
        "userEmail": user_email, "userCountryIsoCode": user_country_iso_code,
        "kycDocument": kyc_document, "date": date,
    }}


def _pick(source: Mapping[str, Any], names: Iterable[str]) -> dict[str, Any]:
    return {name: source[name] for name in names if source.get(name) is not None}


def _one_of(name: str, value: str, allowed: tuple[str, ...]) -> None:
    if value not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(allowed)}; got {value!r}")
