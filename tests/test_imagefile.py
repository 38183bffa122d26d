"""Reading image files (vision.imagefile): the same pixels as ``cv2.imread(path,
cv2.IMREAD_COLOR)`` for every kind of PNG and every other file, PNG through libspng."""

from __future__ import annotations

import io
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from vision import imagefile
from vision.imagefile import read_image
from vision.sim.simulator import render_scene


@pytest.fixture(scope="module")
def frame() -> np.ndarray:
    """A part of a real simulator frame: cards, table and the Twilight card's colours."""
    return render_scene(17, size=(640, 480)).image[120:330, 180:470].copy()


def _cv_png(img: np.ndarray, *params: int) -> bytes:
    return cv2.imencode(".png", img, list(params))[1].tobytes()


def _pil_png(img: Image.Image, **options) -> bytes:
    out = io.BytesIO()
    img.save(out, format="PNG", **options)
    return out.getvalue()


def _kinds(bgr: np.ndarray) -> dict[str, bytes]:
    gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    ramp = np.arange(bgr.size, dtype=np.uint32).reshape(bgr.shape) % 256
    rgb = Image.fromarray(np.ascontiguousarray(bgr[..., ::-1]))
    return {
        "bgr8": _cv_png(bgr),
        "bgr8 best compression": _cv_png(bgr, cv2.IMWRITE_PNG_COMPRESSION, 9),
        "grey8": _cv_png(gray),
        "bgra8": _cv_png(np.dstack([bgr, gray[::-1]])),
        "bgr16": _cv_png(bgr.astype(np.uint16) * 257 + ramp.astype(np.uint16)),
        "grey16": _cv_png(gray.astype(np.uint16) * 250),
        "rgb (Pillow's filters)": _pil_png(rgb),
        "palette": _pil_png(rgb.quantize(64)),
        "palette with transparency": _pil_png(rgb.quantize(64), transparency=3),
        "grey and alpha": _pil_png(rgb.convert("LA")),
        "one bit": _pil_png(rgb.convert("1")),
        "grey16 (Pillow)": _pil_png(Image.fromarray(gray.astype(np.uint16) * 200)),
    }


def test_every_kind_of_png_reads_as_opencv_reads_it_and_through_libspng(
        tmp_path: Path, frame: np.ndarray, monkeypatch) -> None:
    assert imagefile._pyspng() is not None  # a declared dependency: installed here
    wanted = {}
    for name, data in _kinds(frame).items():
        path = tmp_path / f"{name}.png"
        path.write_bytes(data)
        wanted[path] = cv2.imread(str(path), cv2.IMREAD_COLOR)
    # OpenCV reads none of them now: each is decoded by libspng
    monkeypatch.setattr(cv2, "imread", lambda *a, **k: pytest.fail(f"cv2.imread{a}"))
    for path, want in wanted.items():
        got = read_image(path)
        assert got is not None and got.dtype == np.uint8 and got.flags.c_contiguous, path.name
        np.testing.assert_array_equal(got, want, err_msg=path.name)


def test_other_files_and_unreadable_ones_read_as_opencv_reads_them(
        tmp_path: Path, frame: np.ndarray) -> None:
    png = _cv_png(frame)
    files = {
        "frame.jpg": cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_QUALITY, 95])[1].tobytes(),
        "frame.bmp": cv2.imencode(".bmp", frame)[1].tobytes(),
        "a jpeg named png.png": cv2.imencode(".jpg", frame)[1].tobytes(),
        "a png named jpg.jpg": png,
        "cut short.png": png[:len(png) // 2],
        "bad checksum.png": png[:40] + bytes([png[40] ^ 0xFF]) + png[41:],
        "only the signature.png": imagefile.PNG_SIGNATURE,
        "notes.png": b"not a picture at all\n",
        "empty.png": b"",
    }
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    for name in [*files, "missing.png"]:
        path = tmp_path / name
        want = cv2.imread(str(path), cv2.IMREAD_COLOR)
        got = read_image(path)
        if want is None:
            assert got is None, name
        else:
            np.testing.assert_array_equal(got, want, err_msg=name)
    assert read_image(tmp_path) is None  # a folder
    assert read_image(tmp_path / "frame.jpg") is not None


def test_a_png_with_an_exif_orientation_is_turned_as_opencv_turns_it(
        tmp_path: Path, frame: np.ndarray) -> None:
    exif = Image.Exif()
    exif[0x0112] = 6  # orientation: turned a quarter clockwise
    path = tmp_path / "turned.png"
    path.write_bytes(_pil_png(Image.fromarray(np.ascontiguousarray(frame[..., ::-1])),
                              exif=exif.tobytes()))
    want = cv2.imread(str(path), cv2.IMREAD_COLOR)
    assert want.shape[:2] == frame.shape[1::-1]  # OpenCV turned it
    np.testing.assert_array_equal(read_image(path), want)


def test_without_pyspng_every_png_is_read_by_opencv(tmp_path: Path, frame: np.ndarray,
                                                     monkeypatch) -> None:
    monkeypatch.setattr(imagefile, "_pyspng", lambda: None)
    path = tmp_path / "frame.png"
    path.write_bytes(_cv_png(frame))
    np.testing.assert_array_equal(read_image(path), frame)
