"""Imports every table module so that ``metadata.create_all`` sees them all."""
from .. import sessions  # noqa: F401
from ..webhooks import store as webhooks_store  # noqa: F401
