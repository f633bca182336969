"""What the journey is told of the app's configuration, once, when the app builds its flows
(``checkout.composition``): creating an order, honouring a quote or signing a review never reads
the app, so the journey's functions run without one (a test calls them as they are)."""
from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class JourneySettings:
    # Seconds a quote is honoured, on the checkout's clock: CHECKOUT_QUOTE_MAX_AGE in the
    # upstream's time (an embedded sandbox that runs faster makes it shorter: journey.quotes).
    quote_max_age: float
    # Seconds after an unanswered create during which the order is only looked up, never created
    # again, whatever a lookup finds: the upstream may still be processing it
    # (CHECKOUT_CREATE_GRACE, from when the create was sent: at least twice the longest a create
    # call may wait, checked at start-up, so a create the upstream was still working on when the
    # checkout stopped waiting has had at least as long again).
    create_grace: float
    # The key of the review's digest, derived from CHECKOUT_LAUNCH_SECRET (checkout.keys).
    digest_key: bytes
