"""The built-in deck art (issue 3): every card drawn, distinct, legible both ways up."""

from __future__ import annotations

import itertools

import cv2
import numpy as np
import pytest

from companion.core.cards import BACK_IDS, CARD_IDS, TWILIGHT_ID, Card, Cult
from vision.deck_art import ALL_IDS, CARD_MM, STYLES, render_card, render_print

PX = 4.0


def grey(img: np.ndarray) -> np.ndarray:
    return cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)


def test_ids_are_the_28_cards_twilight_and_backs() -> None:
    assert set(ALL_IDS) == {*CARD_IDS, TWILIGHT_ID, *BACK_IDS}
    assert len(ALL_IDS) == 31
    assert STYLES == (0, 1)
    assert CARD_MM == (63, 88)


@pytest.mark.parametrize("style", STYLES)
def test_every_card_renders_upright_at_card_size(style: int) -> None:
    for card_id in ALL_IDS:
        img = render_card(card_id, style, PX)
        assert img.dtype == np.uint8
        assert img.shape == (round(88 * PX), round(63 * PX), 3)
    assert render_card("moon-adept", style, 2.5).shape == (220, 158, 3)


def test_renders_are_cached_and_read_only() -> None:
    a = render_card("sun-temple", 0, PX)
    assert render_card("sun-temple", 0, PX) is a
    with pytest.raises(ValueError):
        a[0, 0, 0] = 1


def test_unknown_ids_and_styles_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown card id"):
        render_card("sun-joker")
    with pytest.raises(ValueError, match="style"):
        render_card("sun-temple", style=2)
    with pytest.raises(ValueError):
        render_card("sun-temple", px_per_mm=0)


@pytest.mark.parametrize("style", STYLES)
def test_all_faces_differ_even_in_grey(style: int) -> None:
    """Colour-blind or badly white-balanced, every face still differs from every other."""
    faces = {cid: grey(render_card(cid, style, PX)) for cid in ALL_IDS}
    worst = min(float(np.abs(faces[a] - faces[b]).mean())
                for a, b in itertools.combinations(ALL_IDS, 2))
    # Mean absolute grey difference over the whole face; the closest pairs are
    # clerics of one cult (numeral and headgear differ), about 5 in style 0.
    assert worst > {0: 4.5, 1: 3.0}[style]


def test_sun_and_moon_differ_in_brightness_in_the_built_in_deck() -> None:
    """Style 0's cult cue survives losing colour: sun faces light, moon faces dark."""
    sun = [grey(render_card(c.id, 0, PX)).mean() for c in map(Card.parse, CARD_IDS)
           if c.cult is Cult.SUN]
    moon = [grey(render_card(c.id, 0, PX)).mean() for c in map(Card.parse, CARD_IDS)
            if c.cult is Cult.MOON]
    assert min(sun) > max(moon) + 40


def test_sun_warm_moon_cool() -> None:
    for style in STYLES:
        for cult, back in ((Cult.SUN, "sun-back"), (Cult.MOON, "moon-back")):
            b, _, r = render_card(back, style, PX).reshape(-1, 3).astype(float).mean(axis=0)
            assert (r > b) if cult is Cult.SUN else (b > r), (style, back)


def test_styles_look_different() -> None:
    for cid in ALL_IDS:
        diff = np.abs(render_card(cid, 0, PX).astype(float) - render_card(cid, 1, PX)).mean()
        assert diff > 15, cid


@pytest.mark.parametrize("card_id", ["sun-high-priest", "moon-souls-6", "sun-obelisk",
                                     "moon-purgatory"])
def test_corner_index_reads_upside_down(card_id: str) -> None:
    """The top-left corner index appears, turned, in the bottom-right corner."""
    img = render_card(card_id, 0, PX).astype(float)
    box = (slice(round(5 * PX), round(26 * PX)), slice(round(4.5 * PX), round(14 * PX)))
    turned = img[::-1, ::-1]
    assert np.abs(img[box] - turned[box]).mean() < 3.0
    # ... and it is not blank: the index has ink in it.
    assert img[box].std() > 20


def test_twilight_card_moon_sides_top_and_bottom() -> None:
    for style in STYLES:
        img = render_card(TWILIGHT_ID, style, PX).astype(float)
        h, w = img.shape[:2]
        top = img[round(4 * PX):round(8 * PX), w // 2 - 10:w // 2 + 10].reshape(-1, 3).mean(0)
        left = img[h // 2 + 30:h // 2 + 40, round(3 * PX):round(5 * PX)].reshape(-1, 3).mean(0)
        bottom = img[h - round(8 * PX):h - round(4 * PX),
                     w // 2 - 10:w // 2 + 10].reshape(-1, 3).mean(0)
        # Moon sides cool (blue over red), sun sides warm (red over blue).
        assert top[0] > top[2] and bottom[0] > bottom[2], style
        assert left[2] > left[0], style


def test_print_art_has_square_corners() -> None:
    rounded = render_card("sun-altar", 0, PX)
    square = render_print("sun-altar", 0, PX)
    assert rounded.shape == square.shape
    assert tuple(rounded[0, 0]) == (128, 128, 128)
    assert tuple(square[0, 0]) != (128, 128, 128)
