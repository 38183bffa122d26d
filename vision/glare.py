"""Glare: a lamp's reflection washes a patch of a card out to white, where no ink shows.

A washed-out pixel says nothing about the face, yet a white blob correlates with
whichever face has paper there, and can make one card look like another. So the
patch (every channel at least :data:`GLARE_LEVEL`) and a ring round it as wide as the
patch's radius, up to :data:`GLARE_RING_SHARE` of the card's width (its fading
edge, where ink shows paled), are set to the mean colour of the rest of the card
before it is matched: a pixel at the mean adds nothing to a correlation. A card more
than :data:`GLARE_MAX_SHARE` that bright is a white card in bright light, not glare.
"""

from __future__ import annotations

import cv2
import numpy as np

#: Darkest channel at or above which a pixel is washed out: clipped, as no paper under
#: the light of the rest of the card is (no ink shows there).
GLARE_LEVEL = 250
#: Widest ring (share of the card's width) left out round a washed-out patch.
GLARE_RING_SHARE = 0.07
#: Share of the card above which the bright part is the card itself, not glare.
GLARE_MAX_SHARE = 0.5


def glare_mask(card: np.ndarray) -> np.ndarray | None:
    """Where *card* (B,G,R uint8, upright) is washed out by glare, ring included: a
    boolean mask, or None where there is none."""
    spot = cv2.inRange(card, (GLARE_LEVEL,) * 3, (255,) * 3)
    area = cv2.countNonZero(spot)
    if not area:
        return None
    core = float(np.sqrt(area / np.pi))
    r = max(1, round(min(core, GLARE_RING_SHARE * card.shape[1])))
    blank = cv2.dilate(spot, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1,) * 2)) > 0
    return None if blank.mean() > GLARE_MAX_SHARE else blank


def without_glare(card: np.ndarray) -> np.ndarray:
    """*card* with its glare (:func:`glare_mask`) set to the mean colour of the rest."""
    blank = glare_mask(card)
    if blank is None:
        return card
    out = card.copy()
    out[blank] = card[~blank].mean(axis=0).astype(np.uint8)
    return out
