"""KYC inside the checkout: what an order's amount needs, where the user stands, and the forms.

- :mod:`.levels`: none < basic < advanced, and the level a country's rules ask for an amount.
- :mod:`.standing`: the user's verification, read from the upstream (``/api/kyc/state`` by phone,
  or ``/api/user/kyc/status`` by email when the merchant's user API is enabled), once per decision,
  kept in the session with what it was decided for.
- :mod:`.photos`: the selfie and document photos: checked by content, re-encoded without their
  metadata, sent with the documented ``image_type_id`` values.

The KYC step is one more step of the journey (``checkout.views.kyc``), before review, for both
flows: no order is created for an amount the user's verification does not cover.
"""
