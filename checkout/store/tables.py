"""Imports every table module, so that ``metadata`` holds them all (what the migrations' head is
compared with: tests/test_schema.py, scripts/new-migration)."""
from .. import sessions  # noqa: F401
from ..kyc import memory as kyc_memory  # noqa: F401
from ..webhooks import store as webhooks_store  # noqa: F401
