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
#: A spot lifting every channel over its face by this many of the fit's residual
#: sigmas (and SPOT_MIN_LEVELS grey levels), between SPOT_MIN_SHARE and
#: SPOT_MAX_SHARE of the card, is a reflection (:func:`specular_spot`).
SPOT_SIGMAS = 3.0
SPOT_MIN_LEVELS = 8.0
SPOT_MIN_SHARE = 0.005
SPOT_MAX_SHARE = 0.3


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


def specular_spot(card: np.ndarray, face: np.ndarray) -> np.ndarray | None:
    """Where *card* (h x w x 3 float32) is brighter in every channel than *face* (its
    best face, prepared alike) predicts, by more than SPOT_SIGMAS of the fit's
    residual: a lamp's reflection adds the light itself, so it lifts every channel,
    washed out or not (on a dark card it stays far from white). The largest such
    region, grown by a ring as :func:`glare_mask`'s, if it is a spot (at most
    SPOT_MAX_SHARE of the card); else None."""
    x = card.reshape(-1, 3).astype(np.float64)
    f = face.reshape(-1, 3).astype(np.float64)
    fc = f - f.mean(axis=0)
    gain = (fc * (x - x.mean(axis=0))).sum(axis=0) / np.maximum((fc * fc).sum(axis=0), 1e-6)
    resid = x - x.mean(axis=0) - fc * gain
    lift = resid.min(axis=1)
    spread = 1.4826 * float(np.median(np.abs(resid - np.median(resid, axis=0))))
    over = (lift > max(SPOT_SIGMAS * spread, SPOT_MIN_LEVELS)).reshape(card.shape[:2])
    n, labels, stats, _ = cv2.connectedComponentsWithStats(over.astype(np.uint8), 4)
    if n < 2:
        return None
    k = 1 + int(np.argmax(stats[1:, cv2.CC_STAT_AREA]))
    area = int(stats[k, cv2.CC_STAT_AREA])
    if area < SPOT_MIN_SHARE * over.size or area > SPOT_MAX_SHARE * over.size:
        return None
    spot = (labels == k).astype(np.uint8)
    r = max(1, round(min(np.sqrt(area / np.pi), GLARE_RING_SHARE * card.shape[1])))
    return cv2.dilate(spot, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1,) * 2)) > 0


def without_glare(card: np.ndarray) -> np.ndarray:
    """*card* with its glare (:func:`glare_mask`) set to the mean colour of the rest."""
    blank = glare_mask(card)
    if blank is None:
        return card
    out = card.copy()
    out[blank] = card[~blank].mean(axis=0).astype(np.uint8)
    return out
