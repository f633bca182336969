"""The upstream's webhooks: verify over the raw bytes, store first, then act, once.

Import what you use from its modules (``checkout.webhooks.dispatcher.process_pending``): this
package itself imports nothing, so that a module reading one of its tables does not load the
whole pipeline.

``events``      signature verification (spec 6.3, or the opt-in ``data`` mode) and payload parsing
``store``       the tables (written as :mod:`checkout.store.writing` says)
``processing``  storing a delivery, one transaction (in the request); the newer-only status move
                (after the acknowledgement)
``dispatch``    sending owed signals after commit
``fetch``       the full-order fetch with retries
``dispatcher``  one sweep of the background work, and :func:`process_pending` (one round, now)
``background``  the per-process thread that runs the sweep
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
