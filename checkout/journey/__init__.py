"""The journey every flow shares: steps, quote records, creating the one order, and tracking it.

A flow (``checkout.flows``: the on-ramp, the off-ramp) declares its steps and knows its own upstream
calls; everything that decides where the user is, when a price is still good, and how an order is
created exactly once lives here, written once for every flow:

- :mod:`.flow`: the :class:`~.flow.Flow` interface each flow implements.
- :mod:`.steps`: each flow's declarative list of steps, each with a ``needed(session)`` predicate;
  the one place that says which step comes next and which are done.
- :mod:`.quotes`: the quote record a session keeps, and when it must be renewed.
- :mod:`.creation`: the create-once protocol (the pending attempt saved by compare-and-set, the
  grace period, the review digest, the lookup of an order whose create had no answer), returning
  an :class:`~.creation.Outcome`.
- :mod:`.attempts`: the claim a call made once per session writes before it is sent (an attempt,
  by compare-and-set on the session's version), and what settles it only while it is the same.
- :mod:`.hash_confirmation`: the off-ramp's transaction hash, passed on once by the same claim.
- :mod:`.clock`: the time creation and quotes read.

Parent events and order statuses are in :mod:`checkout.views.tracking`.
"""
