"""Deck profiles (C5): the built-in deck without enrolment, `deck enrol` and its errors,
`recognise --card` with enrolled decks. Card images come from vision.deck_art."""

from __future__ import annotations

import json

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.core.cards import CARD_IDS
from vision.deck_art import render_card
from vision.profile import REQUIRED_IDS, DeckProfile, builtin_profile, hue_hist


def _write_deck(folder, style: int, ext: str = ".png", skip=()):
    folder.mkdir(parents=True, exist_ok=True)
    for cid in (*REQUIRED_IDS, "sun-back", "moon-back"):
        if cid not in skip:
            cv2.imwrite(str(folder / f"{cid}{ext}"), render_card(cid, style=style, px_per_mm=5.0))
    return folder


def test_builtin_profile_needs_no_enrolment():
    profile = builtin_profile(0)
    assert set(REQUIRED_IDS) <= set(profile.ids)
    sun, moon = (np.array(profile.cult_bgr[c], float) for c in ("sun", "moon"))
    assert np.abs(sun - moon).max() > 60  # the cults' colours as they appear differ
    assert builtin_profile(0) is profile


@pytest.fixture(scope="module")
def style1_deck(tmp_path_factory):
    root = tmp_path_factory.mktemp("deck1")
    src = _write_deck(root / "photos", style=1, ext=".jpg")
    assert main(["deck", "enrol", str(src), "--out", str(root / "deck")]) == 0
    return root / "deck"


def test_enrol_writes_a_profile_that_loads(style1_deck):
    profile = DeckProfile.load(style1_deck)
    assert set(REQUIRED_IDS) <= set(profile.ids)
    assert set(profile.cult_hist) == {"sun", "moon"}


def _photo(card_id: str, style: int, angle: float, margin: int = 40) -> np.ndarray:
    """One card alone, turned and with a light background margin, like a phone photo."""
    face = render_card(card_id, style=style, px_per_mm=3.0)
    h, w = face.shape[:2]
    size = int(np.hypot(w, h)) + 2 * margin
    canvas = np.full((size, size, 3), 225, np.uint8)
    M = cv2.getRotationMatrix2D((w / 2, h / 2), angle, 1.0)
    M[:, 2] += (size - w) / 2, (size - h) / 2
    mask = cv2.warpAffine(np.full((h, w), 255, np.uint8), M, (size, size))
    turned = cv2.warpAffine(np.ascontiguousarray(face), M, (size, size))
    canvas[mask > 128] = turned[mask > 128]
    return cv2.GaussianBlur(canvas, (3, 3), 0.8)


@pytest.mark.parametrize("style", [0, 1])
def test_recognise_card_any_turn(tmp_path, capsys, style1_deck, style):
    ids = ["sun-hierarch", "moon-souls-4", "sun-temple", "moon-purgatory", "moon-novice"]
    paths = []
    for i, cid in enumerate(ids):
        path = tmp_path / f"{cid}.png"
        cv2.imwrite(str(path), _photo(cid, style, angle=37 * i + 15))
        paths.append(str(path))
    deck = [] if style == 0 else ["--deck", str(style1_deck)]
    out = tmp_path / "ann"
    assert main(["recognise", "--card", *deck, *paths, "--annotate", str(out)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["card"] for x in lines] == ids
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{cid}.png" for cid in ids)


def test_enrol_missing_card_names_it_and_writes_nothing(tmp_path, capsys):
    src = _write_deck(tmp_path / "photos", 0, skip=("moon-altar", "twilight"))
    out = tmp_path / "deck"
    assert main(["deck", "enrol", str(src), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "moon-altar" in err and "twilight" in err
    assert not out.exists()


def test_enrol_unreadable_or_doubled_image(tmp_path, capsys):
    src = _write_deck(tmp_path / "photos", 0)
    (src / "sun-priest.png").write_bytes(b"\x89PNG broken")
    cv2.imwrite(str(src / "moon-adept.jpg"), render_card("moon-adept", px_per_mm=2.0))
    out = tmp_path / "deck"
    assert main(["deck", "enrol", str(src), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "sun-priest.png" in err
    assert "moon-adept.jpg" in err and "moon-adept.png" in err
    assert not out.exists()


def test_recognise_with_a_missing_deck_is_invalid(tmp_path, capsys):
    img = tmp_path / "x.png"
    cv2.imwrite(str(img), render_card("sun-adept", px_per_mm=2.0))
    assert main(["recognise", "--deck", str(tmp_path / "nodeck"), str(img)]) == 2
    assert "nodeck" in capsys.readouterr().err


def test_all_card_ids_are_enrolled():
    assert all(cid in builtin_profile(0).faces for cid in CARD_IDS)


def test_enrol_refuses_huge_images_before_decoding(tmp_path, capsys):
    """An image whose header claims more pixels than a card photo needs (or a file too
    large) is refused by name, without decoding it; nothing is written."""
    import struct
    import zlib

    def chunk(kind: bytes, data: bytes) -> bytes:
        return (struct.pack(">I", len(data)) + kind + data
                + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF))

    src = _write_deck(tmp_path / "photos", 0)
    # a PNG claiming 10000 x 10000 grey pixels: 100 KB on disk, 100 MB decoded
    rows = zlib.compress(b"\0" * (10_001 * 10_000), 9)
    png = (b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 10_000, 10_000,
                                                                8, 0, 0, 0, 0))
           + chunk(b"IDAT", rows) + chunk(b"IEND", b""))
    (src / "sun-altar.png").write_bytes(png)
    out = tmp_path / "deck"
    assert main(["deck", "enrol", str(src), "--out", str(out)]) == 2
    err = capsys.readouterr().err
    assert "sun-altar.png" in err and "too many pixels" in err
    assert not out.exists()


def _patch_at_hue(degrees: float, chroma: float = 40.0) -> np.ndarray:
    """A plain BGR patch whose Lab a*, b* lie at *degrees* and *chroma*."""
    t = np.radians(degrees)
    lab = np.uint8([[[150, round(128 + chroma * np.cos(t)), round(128 + chroma * np.sin(t))]]])
    return np.repeat(np.repeat(cv2.cvtColor(lab, cv2.COLOR_Lab2BGR), 8, 0), 8, 1)


def test_hues_a_few_degrees_apart_fill_alike_bins_wherever_the_bins_edges_fall():
    # a light's colour, misjudged a little, turns a card's hue by a few degrees: the
    # cult's hues must still meet the card's where a bin's edge lies between them
    for degrees in range(0, 360, 3):
        a, b = hue_hist(_patch_at_hue(degrees)), hue_hist(_patch_at_hue(degrees + 12))
        assert float(np.minimum(a, b).sum()) > 0.25, degrees
    # and hues far apart still meet nowhere
    assert float(np.minimum(hue_hist(_patch_at_hue(100)), hue_hist(_patch_at_hue(250))).sum()) == 0
