"""The wallet step of any flow: an address checked for the network it will be used on.

The on-ramp's wallet receives (with the email the receipt goes to), the off-ramp's sends (a refund
goes back to it); both keep the address only if the network it was checked for is still the
session's when it is saved: another tab may have changed the network meanwhile.
"""
from __future__ import annotations

from flask_babel import gettext as _

from ..forms import FormResult
from ..names import network_name
from ..sessions import CheckoutSession
from .journey import StepPage, StepRefused, save_before_order


class WalletPage(StepPage):
    """Subclasses check the form (``clean``, recording the network in ``result.facts``) and
    render it; saving is the same for every flow."""

    name = "wallet"
    keep_after: tuple[str, ...] = ()     # later steps that hold whatever the wallet

    def save(self, session: CheckoutSession, result: FormResult, *,
             by_user: bool) -> CheckoutSession:
        network = result.facts["network"]

        def change(fresh: CheckoutSession) -> None:
            if fresh.value("network") != network:
                # Another tab chose another network while this address was checked for the old.
                raise StepRefused(FormResult.error("address", _(
                    "Your network changed. Enter the wallet address for %(network)s.",
                    network=network_name(fresh.value("network")))))
            fresh.answer(result.values)
            # Checksummed now, but as typed it had none: the review asks to compare it.
            fresh.wallet_checked(network, result.notices.get("address"))
            self.flow.journey.complete(fresh, self.name, keep=self.keep_after, by_user=by_user)

        return save_before_order(session, change)
