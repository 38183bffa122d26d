"""The edges outlines are made of (vision.quads.edge_maps), in sensor noise.

A camera in dim light turns its gain up, and its noise with it; where a lamp's
reflection or a sheen lies, the picture is brighter and its noise stronger (shot noise
grows with the light). Edges are the outlines' material: noise must not make them,
and a card's sides must still make them.
"""

from __future__ import annotations

import cv2
import numpy as np
import pytest

from vision.quads import card_shaped, edge_maps, side_support

SIZE = (640, 360)  # the size the Twilight card is looked for at


def _dim_table(seed: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A dark cloth with a card of a little more light on it, turned, and a sheen over
    part of it; shot noise (deviation growing with the square root of the light) at a
    dim room's gain. The picture, the card's outline (4 x 2 px) and a mask of the
    cloth under the sheen away from the card's sides."""
    rng = np.random.default_rng(seed)
    w, h = SIZE
    light = np.full((h, w), 28.0, np.float32)
    centre = (w / 2 + rng.uniform(-40, 40), h / 2 + rng.uniform(-30, 30))
    rect = (centre, (70.0, 48.0), float(rng.uniform(0, 180)))
    card = np.float32(cv2.boxPoints(rect))
    inside = np.zeros((h, w), np.uint8)
    cv2.fillConvexPoly(inside, card.astype(np.int32), 1)
    light += 22.0 * inside
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    sx, sy = centre[0] + 35.0, centre[1]
    sheen = 90.0 * np.exp(-((xx - sx) ** 2 + (yy - sy) ** 2) / (2 * 40.0 ** 2))
    light += sheen
    gain = 0.6  # grey levels per unit of shot noise's deviation
    noisy = light[..., None] + gain * np.sqrt(light)[..., None] * rng.normal(size=(h, w, 3))
    img = np.clip(noisy, 0, 255).astype(np.uint8)
    near_sides = cv2.dilate(cv2.Canny(inside * 255, 50, 100), np.ones((9, 9), np.uint8))
    cloth = (sheen > 30.0) & (inside == 0) & (near_sides == 0)
    return img, card, cloth


@pytest.mark.parametrize("seed", range(3))
def test_noise_makes_no_edges_and_a_cards_sides_still_do(seed):
    """In a dim room's noise, under a sheen, the cloth beside a card makes (almost) no
    edges, while the card's four sides lie on edges all along."""
    img, card, cloth = _dim_table(seed)
    maps = edge_maps(img)
    noise_edges = float((maps.edges[cloth] > 0).mean())
    assert noise_edges < 0.02, f"{noise_edges:.3f} of the noisy cloth makes edges"
    support = side_support(card[None], maps)[0]
    assert support.min() >= 0.8, support


def test_card_shaped_takes_a_cards_outline_ratio_and_size_turned_any_way():
    """A card 88 x 63 px (ratio 1.4) turned any way, or its outline ratio a tenth off
    (a tilted camera, an outline refined freely), is card-shaped for cards 60-150 px
    long; a quad at half that size, a
    square, or a card twice as long is not (a patch of a card's face that an
    alignment shrank onto, a cloth's square)."""
    def rect(w: float, h: float, turn_deg: float = 0.0) -> np.ndarray:
        a = np.radians(turn_deg)
        r = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
        local = np.array([(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)])
        return (local @ r.T + 200).astype(np.float32)

    aspect, long_range = 88 / 63, (60.0, 150.0)
    cards = [rect(63, 88, t) for t in (0, 33, 90, 145)] + [rect(58, 92), rect(88, 63, 10)]
    assert card_shaped(np.stack(cards), aspect, long_range).all()
    others = np.stack([rect(31, 44, 20), rect(60, 60), rect(126, 176)])
    assert not card_shaped(others, aspect, long_range).any()
