"""The selfie and document photos of an advanced KYC document.

A photo is checked by its content, not by its name or the type the browser claims: only JPEG and
PNG are opened (Pillow reads nothing else here), at most ``MAX_UPLOAD_BYTES`` and ``MAX_PIXELS``,
all read from the file's header (:func:`received`), so that a form's photos are decoded only
once all of them and the form's fields are right. Decoded at about the size kept
(:func:`prepare`), it is turned the right way up and re-encoded as a JPEG of at most
``LONGEST_SIDE`` pixels from its pixels alone: the EXIF block (GPS location, phone model, time), a
comment (a JPEG's COM segment, a PNG's text chunks), XMP and the colour profile never leave the
server, and Pillow's debug records, which carry EXIF values, are dropped while a photo is read
(:mod:`checkout.kyc.pillow_logs`). The result is sent base64 in the document's
``smile-identity-images`` field, each with the ``image_type_id`` the identity vendor uses (notes
7), and is not kept.
"""
from __future__ import annotations

import base64
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import IO

from flask_babel import gettext as _
from flask_babel import lazy_gettext as _l
from PIL import Image, ImageOps, UnidentifiedImageError

from ..forms import PHOTOS_TYPE
from ..upstream.types import KycDocument, RequiredField
from .pillow_logs import photo_being_read

MAX_UPLOAD_BYTES = 10 * 1024 * 1024      # before shrinking (the page shrinks to ~1 MB first)
MAX_PIXELS = 24_000_000                  # a 24 MP camera; more is not a phone's photo
# A PNG and a progressive JPEG are decoded whole before they are shrunk: PNG has no smaller scale
# to decode at, and a progressive JPEG's decoder keeps every coefficient of the picture (24 MP:
# ~100 MB and ~0.7 s a photo). A phone's camera writes baseline JPEGs, and so does kyc.js; for
# the others, at most a 4000 x 3000 picture (a phone's screenshot, a page scanned at 300 dpi).
MAX_PIXELS_DECODED_WHOLE = 12_000_000
# A PNG that packs more pixels per byte than this is a blank, or a decompression bomb (a 7000 px
# square in 155 KB would take ~500 MB to decode); a camera's PNG is near 1 byte a pixel.
MAX_PNG_PIXELS_PER_BYTE = 200
# Each scan of a progressive JPEG is one more pass over the whole picture, and a scan can be 17
# bytes long: 10 MB of them is minutes of CPU (~1 ms each at 24 MP). libjpeg's progressions use
# about ten; its cjpeg writes 100 at most.
MAX_JPEG_SCANS = 100
# A JPEG's start-of-scan marker. Coded data never holds it (a 0xFF byte there is followed by 0x00
# or a restart marker), so counting it counts the scans, and those of an EXIF thumbnail.
_START_OF_SCAN = b"\xff\xda"
LONGEST_SIDE = 2000                      # plenty for a face match and an ID's text
JPEG_QUALITY = 85

@dataclass(frozen=True)
class PhotoKind:
    name: str                  # the file input's name is photo_<name>
    image_type_id: int         # the identity vendor's number for it (notes 7)
    label: object              # lazy gettext
    help: object


# Smile ID's image types: 0 a selfie, 1 the document's front, 5 its back (one public page says
# 2 for the back; 5 is what the vendor's API takes). The one table of them.
SELFIE = PhotoKind("selfie", 0, _l("A photo of your face"),
                   _l("Look at the camera in good light, without glasses or a hat."))
FRONT = PhotoKind("front", 1, _l("The front of your document"),
                  _l("All four corners in the picture, the text sharp, no glare."))
BACK = PhotoKind("back", 5, _l("The back of your document"),
                 _l("All four corners in the picture, the text sharp, no glare."))
KINDS = (SELFIE, FRONT, BACK)
_BY_TYPE_ID = {kind.image_type_id: kind for kind in KINDS} | {2: BACK}


class PhotoError(ValueError):
    """A photo that cannot be used; the message says what to do, for the user."""


UNREADABLE = _l("This file is not a photo we can read. Use a JPEG or PNG picture, for example "
                "one taken with your phone's camera.")


def photos_field(document: KycDocument) -> RequiredField | None:
    """The document's ``smile-identity-images`` descriptor, when it asks photos."""
    return next((spec for spec in document.required_fields
                 if (spec.type or "").strip().lower() == PHOTOS_TYPE), None)


def kinds_asked(document: KycDocument) -> tuple[PhotoKind, ...]:
    """The photos a document asks: those its descriptor lists as options (``image_type_id``
    values), else a selfie and the front, and the back unless it is a passport (one page)."""
    spec = photos_field(document)
    if spec is None:
        return ()
    listed = []
    for option in spec.options:
        value = option.value.strip()
        kind = _BY_TYPE_ID.get(int(value)) if value.isascii() and value.isdecimal() else None
        if kind is not None and kind not in listed:
            listed.append(kind)
    if listed:
        return tuple(kind for kind in KINDS if kind in listed)
    passport = "PASSPORT" in f"{document.value or ''} {document.title or ''}".upper()
    return (SELFIE, FRONT) if passport else KINDS


@dataclass(frozen=True)
class Upload:
    """A photo's file, checked by its header (type, size, pixels) and not yet decoded. The
    upload's own stream (Werkzeug keeps a large one in a temporary file), not a copy in memory:
    three photos of 10 MB are not all held while each is decoded."""
    stream: IO[bytes] = field(repr=False)


def received(stream: IO[bytes]) -> Upload:
    """The file in ``stream``, checked from its header alone, or ``PhotoError``. Cheap: every
    photo of a form is checked so before any is decoded (:func:`prepare`)."""
    data = stream.read(MAX_UPLOAD_BYTES + 1)
    if not data:
        raise PhotoError(_("Add this photo."))
    if len(data) > MAX_UPLOAD_BYTES:
        raise PhotoError(_("This photo is too large. Take it again, or choose one under 10 MB."))
    with photo_being_read():        # Pillow's debug log would carry what the file says
        try:
            with Image.open(io.BytesIO(data), formats=("JPEG", "PNG")) as image:
                usable = _usable(image, data)
        except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError,
                ValueError):
            raise PhotoError(str(UNREADABLE)) from None
    if not usable:
        raise PhotoError(_("This photo cannot be used. Take it again with your phone's camera."))
    stream.seek(0)
    return Upload(stream)


def _usable(image: Image.Image, data: bytes) -> bool:
    """What the header says (nothing is decoded yet) is within what a phone's photo is."""
    width, height = image.size
    pixels = width * height
    whole = image.format == "PNG" or bool(image.info.get("progressive"))
    return not (
        pixels > (MAX_PIXELS_DECODED_WHOLE if whole else MAX_PIXELS)
        or min(width, height) < 200
        or (image.format == "PNG" and pixels > MAX_PNG_PIXELS_PER_BYTE * len(data))
        or (image.format == "JPEG" and data.count(_START_OF_SCAN) > MAX_JPEG_SCANS))


def prepare(upload: Upload) -> bytes:
    """The photo as a clean JPEG (see the module docstring), or ``PhotoError`` when its pixels
    cannot be decoded. The costly part, CPU and memory: only for a form that will be sent."""
    with photo_being_read():        # Pillow's debug log would carry the EXIF values
        try:
            with Image.open(upload.stream, formats=("JPEG", "PNG")) as image:
                # Decoded at about the size kept: a JPEG at the smallest of its 1/2, 1/4, 1/8
                # scales still larger than that (the decoder skips the detail); then a whole
                # factor of reduction (box averaging, cheap) before the last, finer resampling.
                image.draft("RGB", _kept_size(image.size))
                image.thumbnail((LONGEST_SIDE, LONGEST_SIDE), reducing_gap=1.0)
                ImageOps.exif_transpose(image, in_place=True)    # before that EXIF is left
                picture = image if image.mode == "RGB" else image.convert("RGB")
                # What Pillow read of the file rides along in .info, and the JPEG encoder
                # writes some of it back unasked (a "comment": the upload's COM segment, or a
                # PNG's text chunk of that name). The new file holds the pixels alone.
                picture.info.clear()
                out = io.BytesIO()
                picture.save(out, "JPEG", quality=JPEG_QUALITY, optimize=True)
        except (UnidentifiedImageError, Image.DecompressionBombError, OSError, SyntaxError,
                ValueError):
            raise PhotoError(str(UNREADABLE)) from None
    return out.getvalue()


def _kept_size(size: tuple[int, int]) -> tuple[int, int]:
    """``size`` shrunk, its proportions kept, to fit ``LONGEST_SIDE``."""
    width, height = size
    scale = max(width, height) / LONGEST_SIDE
    if scale <= 1:
        return size
    return max(1, int(width / scale)), max(1, int(height / scale))


def images_value(photos: Sequence[tuple[PhotoKind, bytes]]) -> list[dict[str, object]]:
    """The ``smile-identity-images`` value: ``[{image_type_id, image}]`` with base64 JPEGs."""
    return [{"image_type_id": kind.image_type_id, "image": base64.b64encode(jpeg).decode()}
            for kind, jpeg in photos]
