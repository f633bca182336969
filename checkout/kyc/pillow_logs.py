"""Pillow's log records, dropped while a KYC photo is read.

Pillow logs at DEBUG what it reads of a file: each EXIF tag with its value (the phone's make and
model, the GPS position, the time), PNG chunks, an ICC profile's name. A host that logs at DEBUG
would write a user's photo metadata, which must never leave the photo code (the module
docstring of :mod:`checkout.kyc.photos`), into its logs. So Pillow's records are dropped, at every
level, while :func:`photo_being_read` is active in this thread or task, and only then: the host's
own use of Pillow logs as it always did.

The filter sits on Pillow's loggers themselves: a logger's filters apply to the records made on
it, and handlers (the host's, pytest's) never see a record a logger dropped.
"""
from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator
from contextlib import contextmanager

# The modules that read JPEG and PNG files and their EXIF (TiffImagePlugin), those with a logger
# today and those that may get one; getLogger makes each logger now if Pillow has not yet, and the
# module gets this same one when imported.
PILLOW_LOGGERS = ("PIL.Image", "PIL.ImageFile", "PIL.ImageOps", "PIL.JpegImagePlugin",
                  "PIL.PngImagePlugin", "PIL.TiffImagePlugin")

_reading = contextvars.ContextVar("checkout_kyc_photo_being_read", default=False)


def _not_while_a_photo_is_read(record: logging.LogRecord) -> bool:
    return not _reading.get()


for _name in PILLOW_LOGGERS:
    logging.getLogger(_name).addFilter(_not_while_a_photo_is_read)


@contextmanager
def photo_being_read() -> Iterator[None]:
    """Pillow logs nothing inside this block (in this thread or task)."""
    token = _reading.set(True)
    try:
        yield
    finally:
        _reading.reset(token)
