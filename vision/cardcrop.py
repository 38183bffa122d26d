"""Cut one card out of a camera frame for the deck wizard (C5 wants flat, upright,
tightly cropped faces): the card lies alone on the table, upright as the camera
sees it, and may be small in the frame (a camera 60-90 cm up).

The wiring hands :func:`crop_card` to the web app (``create_app(crop_card=...)``).
"""

from __future__ import annotations

from typing import Any

#: Output size: a standard card's 63 x 88 mm at 5 px/mm.
CARD_PX = (315, 440)
#: A card covers this share of the frame, at least and at most.
MIN_AREA, MAX_AREA = 0.003, 0.6
#: Long side over short side of a card (63 x 88 mm: 1.40), with room for perspective.
MIN_ASPECT, MAX_ASPECT = 1.2, 1.65


def crop_card(frame: Any) -> Any | None:
    """The one card lying alone in ``frame``, warped upright to :data:`CARD_PX`, or None
    when no single card-shaped outline is found."""
    import cv2
    import numpy as np

    h, w = frame.shape[:2]
    scale = min(1.0, 640.0 / max(h, w))
    small = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    edges = cv2.Canny(cv2.GaussianBlur(gray, (5, 5), 0), 30, 90)
    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    area = small.shape[0] * small.shape[1]
    best = None
    for contour in contours:
        (cx, cy), (rw, rh), angle = cv2.minAreaRect(contour)
        if not MIN_AREA * area <= rw * rh <= MAX_AREA * area:
            continue
        aspect = max(rw, rh) / max(min(rw, rh), 1.0)
        if not MIN_ASPECT <= aspect <= MAX_ASPECT:
            continue
        if best is None or rw * rh > best[1][0] * best[1][1]:
            best = ((cx, cy), (rw, rh), angle)
    if best is None:
        return None
    box = cv2.boxPoints(best).astype(np.float32) / scale
    # Corners clockwise from the top-left as the camera sees it; the long edges upright.
    centre = box.mean(axis=0)
    order = np.argsort(np.arctan2(box[:, 1] - centre[1], box[:, 0] - centre[0]))
    box = box[order]  # clockwise in image coordinates (y down), starting anywhere
    start = int(np.argmin(box[:, 0] + box[:, 1]))
    box = np.roll(box, -start, axis=0)
    if np.linalg.norm(box[1] - box[0]) > np.linalg.norm(box[2] - box[1]):
        box = np.roll(box, -1, axis=0)  # landscape as seen: turn it to portrait
    dst = np.float32([(0, 0), (CARD_PX[0], 0), CARD_PX, (0, CARD_PX[1])])
    matrix = cv2.getPerspectiveTransform(box, dst)
    return cv2.warpPerspective(frame, matrix, CARD_PX, flags=cv2.INTER_LINEAR)
