"""The sandbox's published credentials. They protect nothing (the sandbox moves no money) and are
documented in the README, so merchants can point their own code at a standalone sandbox; an
embedded sandbox makes them the checkout's defaults (``checkout.embedded_sandbox``)."""
from __future__ import annotations

CLIENT_ID = "sandbox-client-7f3c2a"
CLIENT_SECRET = "c2FuZGJveC1jbGllbnQtc2VjcmV0LWZvci10ZXN0cy0wMQ"  # base64, unpadded
WEBHOOK_SECRET = "sandbox-webhook-secret-4be1"
