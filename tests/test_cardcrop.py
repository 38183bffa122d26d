"""The deck wizard's card cropper (vision/cardcrop.py): one card alone on the table,
cut out upright."""

from __future__ import annotations

import cv2
import numpy as np


def test_card_crop_finds_one_card_upright():
    from vision.cardcrop import CARD_PX, crop_card

    frame = np.full((480, 640, 3), (40, 110, 50), np.uint8)
    assert crop_card(frame) is None  # an empty table
    rect = ((320, 240), (126, 176), 12.0)  # a 63 x 88 card at 2 px/mm, turned a little
    box = cv2.boxPoints(rect).astype(np.int32)
    cv2.fillPoly(frame, [box], (235, 235, 235))
    cv2.rectangle(frame, (300, 200), (340, 215), (20, 20, 200), -1)  # some red art near the top
    card = crop_card(frame)
    assert card is not None and card.shape[:2] == (CARD_PX[1], CARD_PX[0])
    assert card[CARD_PX[1] // 2, CARD_PX[0] // 2].mean() > 200  # the card's face, not the table
    red = (card[:, :, 2] > 150) & (card[:, :, 0] < 100)
    half = CARD_PX[1] // 2
    assert red[:half].sum() > 100 and red[half:].sum() == 0  # the art stays on top: upright
