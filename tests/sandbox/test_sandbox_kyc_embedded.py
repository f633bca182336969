"""The hosted KYC page (``kycUrl``) of a sandbox embedded in a checkout: served under the checkout's
prefix on the host's own site, so a checkout that sends its user there sees the user come back
verified."""
from __future__ import annotations

import re
from urllib.parse import urlsplit

from checkout.state import get_state

KE_PHONE = "254110611756"


def test_kyc_url_is_served_under_the_checkout_prefix(app):
    with app.test_request_context(base_url="http://shop.test"):
        state = get_state().upstream.kyc_state(phone_number=KE_PHONE)
    assert state.kyc_url == f"http://shop.test/checkout/sandbox/kyc?phoneNumber={KE_PHONE}"
    assert not state.passed_kyc
    client = app.test_client()
    url = urlsplit(state.kyc_url)
    page = client.get(url.path, query_string=url.query)
    assert page.status_code == 200
    html = page.get_data(as_text=True)
    assert 'href="/checkout/sandbox/sandbox.css"' in html
    [action] = set(re.findall(r'<form method="post" action="([^"]+)"', html))
    assert action == "/checkout/sandbox/kyc"
    assert "script-src 'self'" in page.headers["Content-Security-Policy"]
    # Another site's page cannot make the browser pass the user's verification.
    forged = client.post(action, data={"phoneNumber": KE_PHONE, "level": "basic"},
                         headers={"Sec-Fetch-Site": "cross-site"})
    assert forged.status_code == 403
    done = client.post(action, data={"phoneNumber": KE_PHONE, "level": "basic"},
                       headers={"Sec-Fetch-Site": "same-origin"})
    assert done.status_code == 303
    assert done.headers["Location"] == f"/checkout/sandbox/kyc?phoneNumber={KE_PHONE}"
    with app.test_request_context(base_url="http://shop.test"):
        after = get_state().upstream.kyc_state(phone_number=KE_PHONE)
    assert after.passed_kyc and after.kyc_status == "approved"
    assert "Verified: basic" in client.get(done.headers["Location"]).get_data(as_text=True)
