"""Calibration pictures for people: what the recogniser found, drawn on the frame.

>>> img = annotate(frame, rec.last_pose, rec.last_readings)   # doctest: +SKIP

Draws the Twilight card's outline with its moon sides thick, each seat's name at its
side, the four side zones, and each side card's outline and label (green when read,
orange for ``"unknown"``). ``recognise --annotate DIR`` writes these; the web page
shows them live.
"""

from __future__ import annotations

from collections.abc import Mapping

import cv2
import numpy as np

from vision.locate import TwilightPose, zone_outline

#: Colours (BGR) of the drawing.
TWILIGHT_COLOUR = (255, 255, 255)
MOON_COLOUR = (255, 160, 60)
ZONE_COLOUR = (150, 150, 150)
CARD_COLOUR = (60, 220, 60)
UNKNOWN_COLOUR = (0, 140, 255)
MISSING_COLOUR = (0, 0, 230)


def _poly(img: np.ndarray, quad: np.ndarray, colour, thickness: int) -> None:
    pts = np.round(np.asarray(quad, np.float32) * 4).astype(np.int32).reshape(-1, 1, 2)
    cv2.polylines(img, [pts], True, colour, thickness, cv2.LINE_AA, shift=2)


def _label(img: np.ndarray, text: str, at, colour, scale: float) -> None:
    x, y = int(at[0]), int(at[1])
    (w, h), _ = cv2.getTextSize(text, cv2.FONT_HERSHEY_SIMPLEX, scale, 1)
    x = min(max(2, x - w // 2), img.shape[1] - w - 2)
    y = min(max(h + 2, y), img.shape[0] - 2)
    cv2.rectangle(img, (x - 2, y - h - 3), (x + w + 2, y + 3), (0, 0, 0), -1)
    cv2.putText(img, text, (x, y), cv2.FONT_HERSHEY_SIMPLEX, scale, colour, 1, cv2.LINE_AA)


def annotate(frame: np.ndarray, pose: TwilightPose | None,
             readings: Mapping[str, object] | None = None, *, card: bool = False
             ) -> np.ndarray:
    """A copy of *frame* with the Twilight card, its zones and the side cards drawn.

    *readings* maps seat names to :class:`~vision.recognise.SideReading` (anything
    with ``card_id``, ``confidence`` and ``quad``). With ``card`` the frame is one card
    alone (``recognise --card``) and only the readings are drawn."""
    img = frame.copy() if frame.ndim == 3 else cv2.cvtColor(frame, cv2.COLOR_GRAY2BGR)
    scale = max(0.4, img.shape[0] / 1400)
    thick = max(1, round(img.shape[0] / 360))
    if card:
        _readings(img, readings, scale, thick)
        return img
    if pose is None:
        _label(img, "Twilight card not found", (img.shape[1] // 2, 30), MISSING_COLOUR, scale * 1.4)
        return img
    for side in range(4):
        _poly(img, zone_outline(pose, side), ZONE_COLOUR, 1)
    q = pose.quad
    _poly(img, q, TWILIGHT_COLOUR, thick)
    for a, b in ((0, 1), (2, 3)):  # moon sides
        p1 = tuple(int(v) for v in q[a]), tuple(int(v) for v in q[b])
        cv2.line(img, p1[0], p1[1], MOON_COLOUR, thick * 3, cv2.LINE_AA)
    centre = q.mean(axis=0)
    for side, seat in enumerate(pose.side_seat):
        mid = (q[side] + q[(side + 1) % 4]) / 2
        at = centre + (mid - centre) * 0.6
        moon = side in (0, 2)
        _label(img, seat.value[0].upper(), at, MOON_COLOUR if moon else TWILIGHT_COLOUR, scale)
    _readings(img, readings, scale, thick)
    return img


def _readings(img: np.ndarray, readings: Mapping[str, object] | None, scale: float,
              thick: int) -> None:
    for seat, reading in (readings or {}).items():
        quad = getattr(reading, "quad", None)
        card_id = getattr(reading, "card_id", None)
        if quad is None or card_id is None:
            continue
        colour = UNKNOWN_COLOUR if card_id == "unknown" else CARD_COLOUR
        _poly(img, quad, colour, thick)
        conf = getattr(reading, "confidence", 0.0)
        _label(img, f"{seat}: {card_id} {conf:.2f}", np.asarray(quad).mean(axis=0), colour,
               scale)
