"""Log lines without secrets, and one request id on every line of a request.

* :class:`MaskSecretsFilter` rewrites a record's message, arguments and traceback so that no
  session id (``/s/<id>``), order view token (``/o/<token>``), launch token or other JWT,
  ``*token=`` query value (``token``, ``csrf_token``) or credential header reaches a log. Each
  becomes ``[masked:<12 hex>]``, the first characters of the value's sha256: the same value always
  gets the same hint, and a session's hint is its name in the checkout's own log lines
  (``checkout.journey.creation.short_id``). It matches those shapes anywhere in a line, so it needs
  neither the URL prefix nor an app context, and works on any server's access log: werkzeug's
  (a request line among the arguments) and gunicorn's (a dict of atoms, headers included: a
  ``Referer`` can carry a session's address).
* :class:`GunicornLogger` (``gunicorn --logger-class checkout.logs.GunicornLogger``) puts that filter
  on gunicorn's access and error logs. gunicorn is imported only when the class is asked for.
* :class:`RequestIdFilter` sets ``record.request_id``: the current request's id (an incoming sane
  ``X-Request-ID``, else a random one; echoed on checkout responses), ``-`` outside a request. Put it
  on a handler to use ``%(request_id)s`` in that handler's format.

:func:`init_app` (called by ``Checkout.init_app``) adds the request id filter to the checkout's own
loggers and, unless ``CHECKOUT_MASK_ACCESS_LOGS`` is False, the masking filter to the ``werkzeug``,
``gunicorn.access`` and ``gunicorn.error`` loggers and to ``app.logger``. It only adds filters: the
host's handlers, levels and formats stay as they are.

Visible by default (:func:`show_by_default`): when the host has set up no logging at all (no
handler on the root logger nor on ``checkout``), the checkout's lines would be lost, or reach
stderr without time or level (Python's last-resort handler, warnings only). Then one handler,
with time, level, logger and request id, is put on the ``checkout`` logger, writing where
gunicorn's error log writes when gunicorn runs, else to stderr; INFO shows. The checkout logs at
INFO only what happens once per event (the schema upgraded, the breaker opened and closed, an
order attached, the sweep's purges): every call and request is DEBUG.
"""
from __future__ import annotations

import copy
import hashlib
import logging
import re
import secrets
import sys
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from flask import Flask, Response, g, has_request_context, request

if TYPE_CHECKING:
    from _typeshed.wsgi import WSGIEnvironment

# GunicornLogger too, made on first use (see __getattr__ at the end).
__all__ = ["MaskSecretsFilter", "RequestIdFilter", "mask", "request_id", "reraised", "init_app"]

MASKED = "[masked:"

# One pass over a line. The values' own alphabets end each match, so what follows (a space, a
# quote, "&", "/live") stays. "[masked:" never matches again: masking twice changes nothing.
_SECRETS = re.compile(
    # a session id after /s/ (also percent-encoded, as in a query string's ?next=%2Fs%2F...)
    r"(?P<s>(?:/|%2[fF])s(?:/|%2[fF]))(?P<sid>[A-Za-z0-9_-]{16,})"
    # an order view token (a JWE: base64url parts and dots) after /o/
    r"|(?P<o>(?:/|%2[fF])o(?:/|%2[fF]))(?P<otok>[A-Za-z0-9_.-]{16,})"
    # token=, csrf_token=, access_token=... in a query string or a form body
    r"|(?P<q>(?<![A-Za-z0-9_-])(?i:[A-Za-z_-]*token)(?:=|%3[dD]))(?!\[masked:)(?P<qval>[^&\s\"'#;]+)"
    # anything shaped like a JWT or JWE (its header is base64 JSON: "eyJ"), wherever it is
    r"|(?P<jwt>eyJ[A-Za-z0-9_-]{8,}(?:\.[A-Za-z0-9_-]*){2,4})"
)

# Request headers whose whole value is a credential (gunicorn atoms "{name}i", lower case).
# X-Checkout-Session: htmx sends the bare session id in it, with no "/s/" for the pattern to see.
_SECRET_ATOMS = frozenset(
    "{" + name + "}i" for name in ("x-checkout-csrf", "x-checkout-session", "authorization",
                                   "proxy-authorization", "cookie")
)


def _hint(value: str) -> str:
    return MASKED + hashlib.sha256(value.encode()).hexdigest()[:12] + "]"


def _replace(match: re.Match[str]) -> str:
    for prefix, value in (("s", "sid"), ("o", "otok"), ("q", "qval")):
        if match.group(value) is not None:
            return match.group(prefix) + _hint(match.group(value))
    return _hint(match.group("jwt"))


def mask(text: str) -> str:
    """``text`` with every session id, order view token, launch token and ``*token=`` value
    replaced by a short stable hint."""
    return _SECRETS.sub(_replace, text)


def _mask_value(value: object) -> object:
    return mask(value) if isinstance(value, str) else value


def _mask_atoms(args: Mapping[Any, Any]) -> Mapping[Any, Any]:
    masked = {k: "[masked]" if k in _SECRET_ATOMS and v not in (None, "", "-") else _mask_value(v)
              for k, v in args.items()}
    if isinstance(args, dict) and type(args) is not dict:
        # gunicorn's SafeAtoms answers "-" for a missing atom: keep its class.
        same_class = copy.copy(args)
        same_class.update(masked)
        return same_class
    return masked


class MaskSecretsFilter(logging.Filter):
    """Masks session ids, order view tokens, launch tokens and ``*token=`` values in a record.

    The line is masked as it will be printed (message and arguments together: a secret may sit
    across both, as in ``"token=%s"``); a record with nothing to mask is left as it came. Never
    drops a record and never raises: a filter that raises loses the line.
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            if isinstance(record.args, Mapping):
                # gunicorn's atoms: whole credential headers by name, before the line is made.
                record.args = _mask_atoms(record.args)
            text = record.getMessage()
            masked = mask(text)
            if masked != text:
                record.msg, record.args = masked, None
            _mask_traceback(record)
        except Exception:
            # getMessage failed (arguments that do not fit the message): the handler will report
            # the message and arguments as they are, so mask those one by one.
            try:
                _mask_parts(record)
            except Exception:  # keep the line as it came rather than lose it
                pass
        return True


_TRACEBACKS = logging.Formatter()


def _mask_traceback(record: logging.LogRecord) -> None:
    """Masks the record's traceback and stack too: an exception's text often quotes a URL or a
    token (``404 Not Found for url: .../s/<id>``).

    Handlers format a traceback after filters have run, so it is formatted here, once, into
    ``exc_text``, which formatters print as it is when it is set (the standard library's
    ``Formatter.format`` does).
    """
    if record.exc_info and not record.exc_text:
        record.exc_text = _TRACEBACKS.formatException(record.exc_info)
    if record.exc_text:
        record.exc_text = mask(record.exc_text)
    if record.stack_info:
        record.stack_info = mask(record.stack_info)


def _mask_parts(record: logging.LogRecord) -> None:
    _mask_traceback(record)
    if isinstance(record.msg, str):
        record.msg = mask(record.msg)
    if isinstance(record.args, Mapping):
        record.args = _mask_atoms(record.args)
    elif isinstance(record.args, tuple):
        record.args = tuple(_mask_value(a) for a in record.args)


# -- request ids ------------------------------------------------------------------------------------

REQUEST_ID_HEADER = "X-Request-ID"
ENVIRON_KEY = "checkout.request_id"
# What a proxy's id looks like (a UUID, nginx's $request_id): anything else is replaced, so a
# client cannot put a newline, a control character or a novel into our log lines.
_SANE_REQUEST_ID = re.compile(r"[A-Za-z0-9._:+=-]{1,128}")


def request_id() -> str:
    """The current request's id (in a request context): the incoming ``X-Request-ID`` when it
    looks like one, else a new random id; the same for the whole request.

    Kept in the WSGI environ (``checkout.request_id``: gunicorn's access log can show it as
    ``%({checkout.request_id}e)s``), and on ``g.checkout_request_id``.
    """
    rid = environ_request_id(request.environ)
    g.checkout_request_id = rid
    return rid


def environ_request_id(environ: WSGIEnvironment) -> str:
    """:func:`request_id` read from (or first kept in) a request's WSGI environ, which is where
    the id lives; :func:`request_id` also puts it on ``g``."""
    rid: str | None = environ.get(ENVIRON_KEY)
    if rid is None:
        sent = environ.get(_REQUEST_ID_ENVIRON, "")
        rid = sent if _SANE_REQUEST_ID.fullmatch(sent) else secrets.token_hex(16)
        environ[ENVIRON_KEY] = rid
    return rid


_REQUEST_ID_ENVIRON = "HTTP_" + REQUEST_ID_HEADER.upper().replace("-", "_")


class RequestIdFilter(logging.Filter):
    """Sets ``record.request_id``: the request's id in a request context, ``-`` outside one (a
    value given with ``extra=`` stays). Never drops a record."""

    def filter(self, record: logging.LogRecord) -> bool:
        if getattr(record, "request_id", None) is None:
            try:
                record.request_id = request_id() if has_request_context() else "-"
            except Exception:  # a line without an id beats no line
                record.request_id = "-"
        return True


def _add_filter(logger: logging.Logger, kind: type[logging.Filter]) -> None:
    if not any(isinstance(f, kind) for f in logger.filters):
        logger.addFilter(kind())


def _checkout_loggers() -> list[logging.Logger]:
    # A filter on a logger sees only the records logged on that very logger, not its children's.
    names = [n for n in list(logging.Logger.manager.loggerDict)
             if n == "checkout" or n.startswith("checkout.")]
    return [logging.getLogger(n) for n in ["checkout", *names]]


def add_request_id_header(response: Response) -> Response:
    from .security import is_machine_request, under_prefix

    # An answer to a machine is made with its id (the webhook receiver's), and skips the path test.
    if not is_machine_request() and under_prefix(request.path):
        response.headers[REQUEST_ID_HEADER] = request_id()
    return response


DEFAULT_FORMAT = "%(asctime)s %(levelname)s %(name)s [%(request_id)s] %(message)s"
# The loggers whose lines the checkout shows when the host set up no logging.
SHOWN_BY_DEFAULT = ("checkout",)


class _DefaultHandler(logging.Handler):
    """The handler :func:`show_by_default` adds (recognised, so that it is added once).

    It writes where gunicorn's error log writes at the time of each line (gunicorn reopens its
    files on SIGUSR1, closing the streams it had), else to stderr; and writes nothing once the
    host has set up logging after all (a handler on the root logger, which the records reach
    anyway): never a line twice.
    """

    def emit(self, record: logging.LogRecord) -> None:
        if logging.getLogger().handlers:
            return
        try:
            line = self.format(record) + "\n"
            targets = [h for h in logging.getLogger("gunicorn.error").handlers
                       if isinstance(h, logging.StreamHandler)]
            if not targets:
                sys.stderr.write(line)
                sys.stderr.flush()
                return
            for target in targets:
                target.acquire()
                try:
                    target.stream.write(line)
                    target.flush()
                finally:
                    target.release()
        except Exception:
            self.handleError(record)


def reraised(app: Flask) -> bool:
    """Whether Flask re-raises an unexpected error of ``app`` (testing, debug) rather than logging
    it and answering 500: the checkout's own error handlers do as it would, so that a test or a
    developer sees the traceback."""
    propagate = app.config.get("PROPAGATE_EXCEPTIONS")
    return bool(app.testing or app.debug) if propagate is None else bool(propagate)


def show_by_default() -> None:
    """With no logging set up by the host (see the module docstring), a handler of our own; with
    any, nothing: the host's configuration decides."""
    if logging.getLogger().handlers:
        return
    targets = [logging.getLogger(name) for name in SHOWN_BY_DEFAULT]
    if any(not isinstance(h, _DefaultHandler) for h in targets[0].handlers):
        return                      # the host configured the checkout's logger itself
    if any(isinstance(h, _DefaultHandler) for h in targets[0].handlers):
        return                      # done already (another app of this process)
    for logger in targets:
        handler = _DefaultHandler()
        handler.setFormatter(logging.Formatter(DEFAULT_FORMAT))
        handler.addFilter(RequestIdFilter())
        handler.addFilter(MaskSecretsFilter())
        logger.addHandler(handler)
        if logger.level == logging.NOTSET:
            logger.setLevel(logging.INFO)


def init_app(app: Flask) -> None:
    """Request ids on the checkout's loggers and responses; masking on the servers' loggers;
    the checkout's lines shown when the host set up no logging."""
    show_by_default()
    for logger in _checkout_loggers():
        _add_filter(logger, RequestIdFilter)
    if app.config["CHECKOUT_MASK_ACCESS_LOGS"]:
        # app.logger too: Flask logs an unhandled error as "Exception on <path> [GET]".
        for logger in (*map(logging.getLogger, ("werkzeug", "gunicorn.access", "gunicorn.error")),
                       app.logger):
            _add_filter(logger, MaskSecretsFilter)
    # On the app: also on responses under the prefix that no checkout view answered.
    app.after_request(add_request_id_header)


# -- gunicorn ---------------------------------------------------------------------------------------

def _gunicorn_logger_class() -> type:
    from gunicorn.glogging import Logger

    class GunicornLogger(Logger):  # type: ignore[misc]
        """gunicorn's logger with :class:`MaskSecretsFilter` on its access and error logs."""

        def setup(self, cfg: Any) -> None:
            super().setup(cfg)
            # On the loggers, not the handlers: a reload replaces gunicorn's handlers, and a
            # logconfig's handlers get the masked records too.
            for logger in (self.access_log, self.error_log):
                _add_filter(logger, MaskSecretsFilter)

    GunicornLogger.__module__ = __name__
    return GunicornLogger


_gunicorn_logger: type | None = None


def __getattr__(name: str) -> Any:
    # gunicorn is not a dependency of the package: import it only for whoever names the class.
    global _gunicorn_logger
    if name == "GunicornLogger":
        if _gunicorn_logger is None:
            _gunicorn_logger = _gunicorn_logger_class()
        return _gunicorn_logger
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
