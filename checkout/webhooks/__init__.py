"""The upstream's webhooks: verify over the raw bytes, store first, then act, once.

``events``      signature verification (spec 6.3, or the opt-in ``data`` mode) and payload parsing
``store``       the tables
``processing``  storing a delivery (in the request); the newer-only status move (after the ack)
``group_commit`` concurrent deliveries of a process stored by one INSERT and one commit
``dispatch``    sending owed signals after commit
``fetch``       the full-order fetch with retries
``dispatcher``  the per-process background thread and :func:`process_pending`
``admin``       list, show, replay (the ``flask checkout webhooks`` commands)

Settings (``app.config``; defaults in checkout.config.DEFAULTS):

``CHECKOUT_WEBHOOK_SIGNATURE_MODE``  ``"body"`` (spec 6.3, default) or ``"data"``
``CHECKOUT_WEBHOOK_MAX_BYTES``       larger bodies get 413 (256 KiB)
``CHECKOUT_WEBHOOK_BACKGROUND``      run the dispatcher thread (True); False: call process_pending
``CHECKOUT_WEBHOOK_SWEEP_INTERVAL``  seconds between sweeps for work left by other processes (5)
``CHECKOUT_WEBHOOK_FETCH_ORDERS``    fetch the full order after each status move (True)
``CHECKOUT_WEBHOOK_FETCH_ATTEMPTS``  attempts of one full-order fetch (8)
``CHECKOUT_SIGNAL_LEASE``            seconds before an interrupted signal is sent again (300)
``CHECKOUT_STATUS_CLOCK_TOLERANCE``  seconds of clock skew allowed for fetched statuses (2)
"""
from __future__ import annotations

from .admin import find_event, recent_events, replay
from .background import Dispatcher
from .dispatcher import Round, get_dispatcher, process_pending

__all__ = ["Dispatcher", "Round", "find_event", "get_dispatcher", "process_pending",
           "recent_events", "replay"]
