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


def _chunk(kind: bytes, data: bytes) -> bytes:
    import struct
    import zlib

    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))


def bomb_png(side: int = 30_000) -> bytes:
    """A real, decodable PNG of side x side one-bit grey pixels, all black: about 110 kB
    on disk for 30000 x 30000, 2.7 GB once decoded to B,G,R."""
    import struct
    import zlib

    packer = zlib.compressobj(9)
    row = b"\0" * (1 + (side + 7) // 8)  # filter byte and the row's bits
    rows = b"".join(packer.compress(row * 1000) for _ in range(side // 1000))
    rows += packer.compress(row * (side % 1000)) + packer.flush()
    ihdr = struct.pack(">IIBBBBB", side, side, 1, 0, 0, 0, 0)
    return (imagefile.PNG_SIGNATURE + _chunk(b"IHDR", ihdr) + _chunk(b"IDAT", rows)
            + _chunk(b"IEND", b""))


def test_an_image_over_the_pixel_limit_is_refused_from_its_header(
        tmp_path: Path, frame: np.ndarray, monkeypatch) -> None:
    import struct

    png = tmp_path / "bomb.png"
    png.write_bytes(bomb_png())
    assert png.stat().st_size < 200_000
    jpeg = bytearray(cv2.imencode(".jpg", frame)[1].tobytes())
    sof = jpeg.index(b"\xff\xc0")
    assert struct.unpack_from(">HH", jpeg, sof + 5) == frame.shape[:2]
    struct.pack_into(">HH", jpeg, sof + 5, 9000, 9000)  # the header now claims 81 MP
    (tmp_path / "bomb.jpg").write_bytes(jpeg)
    bmp = bytearray(cv2.imencode(".bmp", frame)[1].tobytes())
    struct.pack_into("<ii", bmp, 18, 8000, 8000)  # 64 MP, read by Pillow's header reader
    (tmp_path / "bomb.bmp").write_bytes(bmp)
    # nothing is decoded: the header alone says no
    monkeypatch.setattr(cv2, "imread", lambda *a, **k: pytest.fail(f"cv2.imread{a}"))
    monkeypatch.setattr(imagefile, "_pyspng", lambda: pytest.fail("pyspng"))
    for name, size in (("bomb.png", "30000x30000"), ("bomb.jpg", "9000x9000"),
                       ("bomb.bmp", "8000x8000")):
        with pytest.raises(imagefile.ImageError, match=f"too many pixels \\({size}; at most 50 MP"):
            imagefile.load_image(tmp_path / name)
        assert read_image(tmp_path / name) is None


def test_the_header_sizes_are_the_decoded_sizes(tmp_path: Path, frame: np.ndarray) -> None:
    h, w = frame.shape[:2]
    exif = Image.Exif()
    exif[0x010E] = "x" * 50_000  # with the colour profile: the size comes after 64 kB
    rgb = Image.fromarray(np.ascontiguousarray(frame[..., ::-1]))
    big_meta = io.BytesIO()
    rgb.save(big_meta, format="JPEG", exif=exif.tobytes(), icc_profile=b"\0" * 60_000)
    files = {"a.png": _cv_png(frame), "a.jpg": cv2.imencode(".jpg", frame)[1].tobytes(),
             "progressive.jpg": cv2.imencode(".jpg", frame, [cv2.IMWRITE_JPEG_PROGRESSIVE, 1])[1]
             .tobytes(), "metadata.jpg": big_meta.getvalue(),
             "a.bmp": cv2.imencode(".bmp", frame)[1].tobytes(),
             "a.tif": cv2.imencode(".tif", frame)[1].tobytes(),
             "a.webp": cv2.imencode(".webp", frame)[1].tobytes()}
    assert imagefile.pixel_size(files["metadata.jpg"][:65536]) is None
    for name, data in files.items():
        path = tmp_path / name
        path.write_bytes(data)
        if name != "metadata.jpg":
            assert imagefile.pixel_size(data[:65536], path) == (w, h), name
        assert read_image(path).shape == (h, w, 3), name
    assert imagefile.pixel_size(b"not a picture", tmp_path / "a.txt") is None


def test_a_decoder_failure_is_an_image_error(tmp_path: Path, frame: np.ndarray,
                                             monkeypatch) -> None:
    path = tmp_path / "frame.jpg"
    path.write_bytes(cv2.imencode(".jpg", frame)[1].tobytes())

    def out_of_memory(*args, **kwargs):
        raise cv2.error("OpenCV(4.x) error: (-4:Insufficient memory) Failed to allocate")

    monkeypatch.setattr(cv2, "imread", out_of_memory)
    with pytest.raises(imagefile.ImageError, match="cannot be decoded.*Insufficient memory"):
        imagefile.load_image(path)
    assert read_image(path) is None
    with pytest.raises(imagefile.ImageError, match="no such file"):
        imagefile.load_image(tmp_path / "missing.png")


def test_recognise_reads_on_past_a_bomb_within_bounded_memory(tmp_path: Path) -> None:
    """``recognise`` on a batch with a decompression bomb first: one C6 error line for
    it, the next image read, under an address-space limit of 1.5 GB (the bomb decoded
    would be 2.7 GB)."""
    import json
    import resource
    import subprocess
    import sys

    bomb = tmp_path / "bomb.png"
    bomb.write_bytes(bomb_png())
    good = tmp_path / "table.png"
    cv2.imwrite(str(good), render_scene(3, size=(640, 480)).image)

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (1_500_000_000, 1_500_000_000))

    run = subprocess.run([sys.executable, "-m", "companion", "recognise", str(bomb), str(good)],
                         capture_output=True, text=True, timeout=120, preexec_fn=limit,
                         env={**__import__("os").environ, "OPENBLAS_NUM_THREADS": "1"})
    assert "Traceback" not in run.stderr, run.stderr
    lines = [json.loads(line) for line in run.stdout.splitlines()]
    assert [line["image"] for line in lines] == [str(bomb), str(good)]
    assert "error" in lines[0] and "error" not in lines[1] and "sides" in lines[1]
    assert run.returncode == 2
