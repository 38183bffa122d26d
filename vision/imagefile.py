"""Reading an image file as a B,G,R ``uint8`` frame: exactly what
``cv2.imread(path, cv2.IMREAD_COLOR)`` gives, PNG decoded faster, and never an
image with more than :data:`MAX_PIXELS` pixels.

Every image the product reads (``recognise``, a folder of frames, ``deck enrol``)
comes through here. The pixel count is read from the file's header before
anything is decoded: a 1 MB PNG may claim 30000 x 30000 pixels, 2.7 GB once
decoded. Such a file, and any file a decoder fails on, is an :class:`ImageError`
naming why (:func:`load_image`), or None (:func:`read_image`); never a crash.

A 1280x720 PNG frame takes OpenCV about 14.5 ms to decode on one core (10.8 ms of it
zlib's inflate), a quarter of what ``recognise`` spends on a frame. libspng (through
pyspng) decodes the same file to the same pixels in about 10.3 ms. Everything else,
and any PNG libspng refuses or that carries an EXIF orientation (which OpenCV applies),
is read by OpenCV as before; so is every PNG where pyspng is not installed (it is
imported lazily, once).
"""

from __future__ import annotations

import functools
import os
import struct
from typing import Any

import cv2
import numpy as np

#: The eight bytes every PNG file starts with.
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
#: The most pixels an image may have, for the whole product. A camera frame is about
#: 1 MP, a phone photo 12-50 MP; 50 MP decodes to 150 MB of B,G,R.
MAX_PIXELS = 50_000_000


class ImageError(ValueError):
    """An image file that is not read: missing, not an image, too many pixels, or
    refused by its decoder. The message says which, without the path."""


@functools.cache
def _pyspng() -> Any:
    """The pyspng module, or None where it cannot be imported (tried once)."""
    try:
        import pyspng
    except ImportError:
        return None
    return pyspng


def png_decoder() -> str:
    """Which library :func:`read_image` decodes PNG files with (for benchmarks)."""
    spng = _pyspng()
    return f"libspng (pyspng {spng.__version__})" if spng is not None else \
        f"OpenCV {cv2.__version__}"


def read_image(path: str | os.PathLike) -> np.ndarray | None:
    """The image at *path* as B,G,R ``uint8`` (alpha dropped, grey spread to three
    channels, 16 bits cut to 8), or None when it cannot be read or has more than
    :data:`MAX_PIXELS` pixels: ``cv2.imread(path, cv2.IMREAD_COLOR)``, pixel for pixel."""
    try:
        return load_image(path)
    except ImageError:
        return None


def load_image(path: str | os.PathLike) -> np.ndarray:
    """:func:`read_image`, but an :class:`ImageError` says why an image is not read."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            head = fh.read(64 * 1024)
            size = pixel_size(head, path)
            if size is None and head.startswith(b"\xff\xd8"):
                # a JPEG whose metadata (EXIF, colour profiles) runs past the first 64 kB
                head += fh.read(4 * 1024 * 1024)
                size = pixel_size(head, path)
            if size is None:
                raise ImageError("not a readable image (no known image header)")
            w, h = size
            if w * h > MAX_PIXELS:
                raise ImageError(f"too many pixels ({w}x{h}; at most "
                                 f"{MAX_PIXELS / 1e6:.0f} MP)")
            if w <= 0 or h <= 0:
                raise ImageError(f"not a readable image (its header says {w}x{h} pixels)")
            # only a PNG is read whole here: anything else is OpenCV's to read
            png = head.startswith(PNG_SIGNATURE)
            data = head + fh.read() if png else b""
    except FileNotFoundError:
        raise ImageError("no such file") from None
    except IsADirectoryError:
        raise ImageError("a folder, not an image") from None
    except OSError as exc:
        raise ImageError(f"cannot be read ({exc.strerror or exc})") from None
    spng = _pyspng() if png and not _exif_before_pixels(data) else None
    if spng is not None:
        try:
            return cv2.cvtColor(spng.load(data, "RGB"), cv2.COLOR_RGB2BGR)
        except Exception:  # noqa: BLE001 - libspng refused it: OpenCV decides below
            pass
    del data
    try:
        image = cv2.imread(path, cv2.IMREAD_COLOR)
    except (cv2.error, MemoryError) as exc:
        reason = " ".join(str(exc).split()) or type(exc).__name__
        raise ImageError(f"cannot be decoded ({reason[-200:]})") from None
    if image is None:
        raise ImageError("not a readable image")
    return image


def pixel_size(head: bytes, path: str | os.PathLike | None = None) -> tuple[int, int] | None:
    """(width, height) as an image file's header says, from its first bytes *head*
    (64 kB is plenty), without decoding any pixel; None when no known header is found.
    PNG and JPEG are read here; other formats by Pillow's header reader (from *path*)."""
    if head.startswith(PNG_SIGNATURE):
        if len(head) < 24 or head[12:16] != b"IHDR":
            return None
        w, h = struct.unpack_from(">II", head, 16)
        return int(w), int(h)
    if head.startswith(b"\xff\xd8"):
        return _jpeg_size(head)
    if path is None:
        return None
    import warnings

    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # judged by the caller
            with Image.open(path) as img:
                return int(img.size[0]), int(img.size[1])
    except Image.DecompressionBombError as exc:  # over twice Pillow's own limit
        numbers = [int(n) for n in str(exc).split() if n.isdigit()]
        return (numbers[0], 1) if numbers else (MAX_PIXELS + 1, 1)
    except (UnidentifiedImageError, OSError, ValueError, SyntaxError):
        return None


#: JPEG start-of-frame markers (baseline, progressive, lossless, arithmetic …): they
#: carry the size. C4 (Huffman tables), C8 (reserved) and CC (arithmetic) do not.
_SOF_MARKERS = frozenset(range(0xC0, 0xD0)) - {0xC4, 0xC8, 0xCC}


def _jpeg_size(head: bytes) -> tuple[int, int] | None:
    """The size in a JPEG's start-of-frame segment, walking the segments from the start;
    None if it is not within *head*."""
    at = 2
    while at + 4 <= len(head):
        if head[at] != 0xFF:
            return None
        marker = head[at + 1]
        if marker == 0xFF:  # fill byte
            at += 1
            continue
        if marker in (0x01, *range(0xD0, 0xD8)):  # stand-alone markers
            at += 2
            continue
        (length,) = struct.unpack_from(">H", head, at + 2)
        if marker in _SOF_MARKERS:
            if at + 9 > len(head):
                return None
            h, w = struct.unpack_from(">HH", head, at + 5)
            return int(w), int(h)
        if length < 2:
            return None
        at += 2 + length
    return None


def _exif_before_pixels(data: bytes) -> bool:
    """Whether the PNG *data* has an ``eXIf`` chunk before its pixels (its first
    ``IDAT``): OpenCV turns the picture as its orientation says, libspng does not."""
    at = len(PNG_SIGNATURE)
    while at + 8 <= len(data):
        length, kind = struct.unpack_from(">I4s", data, at)
        if kind == b"eXIf":
            return True
        if kind == b"IDAT":
            return False
        at += 12 + length
    return False


__all__ = ["MAX_PIXELS", "PNG_SIGNATURE", "ImageError", "load_image", "pixel_size",
           "png_decoder", "read_image"]
