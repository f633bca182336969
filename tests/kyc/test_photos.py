"""What a KYC photo may cost before it is refused or sent: checks from the header alone, decoding
at the size kept, and the files that would cost far more than a phone's photo."""
from __future__ import annotations

import io
import re
import time

import pytest
from PIL import Image, ImageFile

from checkout.kyc import photos
from checkout.kyc.photos import PhotoError


def jpeg(width: int, height: int, **save: object) -> bytes:
    """A camera-like JPEG (grain on a gradient), quick to make at any size."""
    grain = Image.effect_noise((max(1, width // 16), max(1, height // 16)), 30).convert("RGB")
    out = io.BytesIO()
    grain.resize((width, height)).save(out, "JPEG", quality=80, **save)
    return out.getvalue()


def png(width: int, height: int) -> bytes:
    """A PNG with enough in it to pass the decompression-bomb rule (pixels per byte)."""
    grain = Image.effect_noise((max(1, width // 8), max(1, height // 8)), 30).convert("RGB")
    out = io.BytesIO()
    grain.resize((width, height), Image.Resampling.NEAREST).save(out, "PNG", compress_level=1)
    return out.getvalue()


@pytest.fixture
def decoded_sizes(monkeypatch) -> list[tuple[int, int]]:
    """The size of each picture when Pillow decodes it (after any draft)."""
    sizes: list[tuple[int, int]] = []
    real = ImageFile.ImageFile.load

    def load(self):
        if self.tile:                      # not yet decoded: this call decodes it
            sizes.append(self.size)
        return real(self)

    monkeypatch.setattr(ImageFile.ImageFile, "load", load)
    return sizes


@pytest.mark.parametrize("size, decoded", [
    ((6000, 4000), (3000, 2000)),         # 24 MP: half scale is the smallest above 2000 px
    ((8000, 3000), (2000, 750)),          # a panorama: its long side decides, a quarter
    ((3000, 8000), (750, 2000)),
])
def test_a_jpeg_is_decoded_at_the_scale_of_the_size_kept(size, decoded, decoded_sizes):
    out = photos.prepare(photos.received(io.BytesIO(jpeg(*size))))
    assert decoded_sizes == [decoded]
    assert max(Image.open(io.BytesIO(out)).size) == photos.LONGEST_SIDE


def test_a_png_or_progressive_jpeg_over_12_mp_is_refused_from_its_header(decoded_sizes):
    """Both are decoded whole (24 MP: ~100 MB, ~0.7 s each): at most 12 MP. A baseline JPEG,
    decoded at a smaller scale, may have 24."""
    for data in (png(4000, 3008), jpeg(4000, 3008, progressive=True)):
        with pytest.raises(PhotoError, match="This photo cannot be used"):
            photos.received(io.BytesIO(data))
    assert decoded_sizes == []
    for data in (png(4000, 3000), jpeg(4000, 3000, progressive=True), jpeg(6000, 4000)):
        photos.prepare(photos.received(io.BytesIO(data)))
    assert len(decoded_sizes) == 3


def test_a_jpeg_of_many_scans_is_refused_before_it_is_decoded(decoded_sizes):
    """Each scan is another pass over the picture and can be 17 bytes: a 10 MB file of them is
    minutes of CPU. Here the last scan of a progressive JPEG is repeated (libjpeg only warns)."""
    data = jpeg(1600, 1200, progressive=True)
    last_scan = data[data.rindex(b"\xff\xda"):-2]
    assert data.endswith(b"\xff\xd9")
    bomb = data[:-2] + last_scan * 150 + data[-2:]
    start = time.process_time()
    with pytest.raises(PhotoError, match="This photo cannot be used"):
        photos.received(io.BytesIO(bomb))
    assert decoded_sizes == [] and time.process_time() - start < 0.5
    # The same picture as its encoder wrote it is a photo like any other.
    photos.prepare(photos.received(io.BytesIO(data)))


def test_a_file_that_is_not_a_photo_is_refused_by_its_content():
    for data, said in ((b"", "Add this photo"), (b"%PDF-1.7", "not a photo we can read"),
                       (jpeg(150, 1000), "cannot be used")):
        with pytest.raises(PhotoError, match=re.escape(said)):
            photos.received(io.BytesIO(data))
    truncated = jpeg(1200, 900)[:5000]           # its header is whole, its pixels are not
    with pytest.raises(PhotoError, match="not a photo we can read"):
        photos.prepare(photos.received(io.BytesIO(truncated)))
