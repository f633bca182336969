"""The flows a checkout session can follow: the on-ramp (buy crypto) and the off-ramp (sell it).

Each implements :class:`checkout.journey.flow.Flow`, what differs between them behind one small
interface. Everything else (the order of steps, quote records, creating once, tracking, the pages'
frame) is the shared journey (:mod:`checkout.journey`), so a new flow or a new step slots in
without a copy.
"""
from __future__ import annotations

from collections.abc import Mapping

from ..journey.flow import Breakdown, Flow, PriceRow
from .offramp import OfframpFlow
from .onramp import OnrampFlow

__all__ = ["Flow", "PriceRow", "Breakdown", "FLOW_TYPES", "flow_type", "OnrampFlow",
           "OfframpFlow"]

# Each app builds its own of each (checkout.composition), with its upstream client, its catalog
# and its steps (declared with their pages by the flow's view module, checkout/views); the app's
# are found with checkout.state.flow_named / flow_of.
FLOW_TYPES: Mapping[str, type[Flow]] = {"onramp": OnrampFlow, "offramp": OfframpFlow}


def flow_type(name: str) -> type[Flow]:
    """The class of the flow called ``name``: what it declares without an app (its statuses, quote
    keys, status texts); its steps are the app's flow's (``Flow.journey``)."""
    return FLOW_TYPES[name]
