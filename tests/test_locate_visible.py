"""What a Twilight card partly covered shows of its face (vision.locate.visible_cells).

Simulator-rendered cards of tuning decks (vision/sim/split.py) at their true outline,
a part of each covered by a plain patch (a sleeve, a palm) from one side: the cells
the face still explains are found and correlate with the face; another deck's Twilight
face is not explained by them. (Even light, no noise or blur: this pins the method;
tests/test_twilight_find.py and the bench weigh it on randomised scenes.)
"""

from __future__ import annotations

import functools

import cv2
import numpy as np
import pytest

from vision.faces import rectify
from vision.locate import VISIBLE_SCORE, VISIBLE_SHARE, _cut_cells, visible_cells
from vision.profile import load_deck
from vision.recognise import Recogniser
from vision.sim.decks import taught_deck
from vision.sim.simulator import render_scene
from vision.sim.split import TUNING_DECKS, TUNING_SEEDS

#: scene seeds of these tests: tuning seeds, a block no other test uses
BASE = TUNING_SEEDS.start + 640_000


@functools.cache
def _finder(deck):
    return Recogniser(load_deck(taught_deck(deck))).twilight


def _seen(finder, card: np.ndarray) -> np.ndarray:
    return _cut_cells(finder.bank._prepared(card[None])[0], finder.cells)


def _covered(finder, deck, k: int, share: float) -> np.ndarray:
    """The Twilight card of a scene of *deck* (even light), upright at the finder's
    size, its part *share* deep from side k % 4 (top, right, bottom, left) painted over
    plainly."""
    scene = render_scene(BASE + 100 * k, size=(1280, 720), deck=deck, hand=False,
                         card_px=110.0, effects=False)
    card = rectify(scene.image, np.float32(scene.twilight_quad), finder.size).copy()
    h, w = card.shape[:2]
    skin = (120, 150, 200)  # B, G, R
    side = k % 4
    if side == 0:
        card[:round(share * h)] = skin
    elif side == 1:
        card[:, w - round(share * w):] = skin
    elif side == 2:
        card[h - round(share * h):] = skin
    else:
        card[:, :round(share * w)] = skin
    return cv2.GaussianBlur(card, (0, 0), 0.6)


@pytest.mark.parametrize("k", range(4))
def test_the_part_left_shows_the_face(k):
    """A fifth to a third of the card covered from any side (its whole face then
    correlates far less): what is left correlates with the face at least VISIBLE_SCORE
    and holds at least VISIBLE_SHARE of its print."""
    deck = TUNING_DECKS[(3 * k + 1) % len(TUNING_DECKS)]
    finder = _finder(deck)
    for share in (0.2, 0.35):
        card = _covered(finder, deck, k, share)
        score, seen_share, _ = visible_cells(_seen(finder, card), finder.face_cells,
                                             finder.cells)
        assert score >= VISIBLE_SCORE, (deck, k, share, score)
        assert seen_share >= VISIBLE_SHARE, (deck, k, share, seen_share)


@pytest.mark.parametrize("k", range(4))
def test_another_face_is_not_seen(k):
    """The same covered card against another deck's Twilight face: no part of it passes
    (layouts of bands and an emblem are alike across decks; their print is not)."""
    deck = TUNING_DECKS[(3 * k + 1) % len(TUNING_DECKS)]
    other = TUNING_DECKS[(3 * k + 2) % len(TUNING_DECKS)]
    finder, wrong = _finder(deck), _finder(other)
    card = _covered(finder, deck, k, 0.35)
    card = cv2.resize(card, wrong.size, interpolation=cv2.INTER_AREA)
    score, seen_share, _ = visible_cells(_seen(wrong, card), wrong.face_cells, wrong.cells)
    assert score < VISIBLE_SCORE or seen_share < VISIBLE_SHARE, (deck, other, score,
                                                                  seen_share)
