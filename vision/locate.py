"""Finding the Twilight card, and the four side zones that follow from its pose.

1. Card-like quadrilaterals of the Twilight card's own outline ratio (from the
   taught ``twilight`` image: square to 1:1.8, either way) anywhere in the frame
   shrunk to :data:`WORK_HEIGHT` rows, at any turn (:func:`vision.quads.card_quads`).
2. Each is warped upright at its four quarter turns and correlated with the taught
   Twilight face (:class:`~vision.faces.FaceBank`). The best quad whose face is sure
   (MIN_SCORE) is the card; the turn that fits it says
   which sides are its moon sides, and must beat the quarter turns by the margin the
   face's own likeness to its quarter turn calls for (a square card).
3. :func:`pose_from_quad` — its homography (card mm -> frame px) and the seats its
   sides face; :func:`zone_outline` — the part of the table beyond one side.

The Twilight card's millimetre frame has a nominal card's area (63 x 88 mm) and the
taught card's shape: its true size is unknown and nothing depends on it.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from companion.core.cards import SEATS, Seat
from vision import quads as Q
from vision.faces import MIN_SCORE, FaceBank, rectify
from vision.profile import CARD_MM

#: Rows of the shrunk frame the Twilight card is looked for in (a card 45 px long at
#: 720 rows is 30 px long there: its sides are still straight runs of edges).
WORK_HEIGHT = 360
#: Long side of the Twilight card, as a share of the frame's height, it may have.
TWILIGHT_LONG_RANGE = (0.05, 0.6)
#: Candidate outlines weighed by their faces, and rough ones refined to find them (a
#: table with many cards has many card-like outlines, the Twilight card's among them).
CANDIDATES = 16
ROUGH_CANDIDATES = 64
#: Width (px) of the Twilight face it is matched at.
FACE_WIDTH_PX = 28
#: The deck's margin rule (vision.faces) for the Twilight card's turn: its quarter
#: turns must stay under the midpoint between what the face alone predicts for them
#: and a tie (on the tuning material no moon side was ever named wrong with it).
QUARTER_MARGIN_SHARE = 0.5
#: A Twilight card with a height / width this near 1 is square: its shape does not
#: tell its moon sides, only its face.
SQUARE_WITHIN = 1.15
#: A side zone in its own frame: u along the side (mm, centred), v outward from the edge.
ZONE_HALF_WIDTH_MM = 95.0
ZONE_DEPTH_MM = 150.0
#: Share of the perspective its four corners imply that the zones keep: corners a
#: fraction of a px off imply far too much of it 150 mm out, none at all is wrong by up
#: to 8% there under a 12-degree tilt; half keeps both within about 5%.
PERSPECTIVE_KEEP = 0.5

Quad = np.ndarray  # 4x2 float32 image px: the card's own TL, TR, BR, BL (upright art)


def twilight_mm(aspect: float) -> tuple[float, float]:
    """Size (w, h mm) of the Twilight card's frame: a nominal card's area, height /
    width *aspect* (its moon sides are top and bottom)."""
    w = float(np.sqrt(CARD_MM[0] * CARD_MM[1] / aspect))
    return (w, w * aspect)


@dataclass(frozen=True)
class TwilightPose:
    """Where the Twilight card lies: ``quad`` its corners (TL, TR, BR, BL of its upright
    art, so edges 0-1 and 2-3 are the moon sides), ``homography`` from its millimetre
    frame (0..w x 0..h, ``size_mm``) to image px, ``moon_seats`` (C1 order),
    ``side_seat`` the seat each of its sides 0 top, 1 right, 2 bottom, 3 left faces,
    ``angle`` (degrees the upright art is turned clockwise in the image) and ``score``
    (0..1)."""

    quad: Quad
    homography: np.ndarray
    moon_seats: tuple[str, str]
    side_seat: tuple[Seat, Seat, Seat, Seat]
    angle: float
    score: float
    size_mm: tuple[float, float] = (float(CARD_MM[0]), float(CARD_MM[1]))
    #: the light on the table: per channel (B, G, R), how much brighter the Twilight
    #: card shows than its taught face (a card's colours divided by it are as taught)
    light: tuple[float, float, float] = (1.0, 1.0, 1.0)

    def seat_side(self, seat: Seat) -> int:
        return self.side_seat.index(seat)


def pose_from_quad(quad: Quad, score: float = 1.0, *, mirror: bool = False,
                   size_mm: tuple[float, float] | None = None,
                   light: tuple[float, float, float] = (1.0, 1.0, 1.0)) -> TwilightPose:
    """The pose of a Twilight card whose corners (TL, TR, BR, BL of its upright art)
    are *quad*: homography, seats of its sides (C1: north up the image) and moon seats."""
    quad = np.asarray(quad, np.float32)
    size_mm = (float(CARD_MM[0]), float(CARD_MM[1])) if size_mm is None else size_mm
    H = damped_homography(quad, size_mm)
    centre = quad.mean(axis=0)
    up = (quad[0] + quad[1]) / 2 - centre  # towards the top (a moon side) of the art
    angle = float(np.degrees(np.arctan2(up[0], -up[1])))  # clockwise from image-up
    k = round(angle / 90.0) % 4  # the art's top faces SEATS[k]
    side_seat = tuple(SEATS[(i + k) % 4] for i in range(4))
    if mirror:
        swap = {Seat.EAST: Seat.WEST, Seat.WEST: Seat.EAST}
        side_seat = tuple(swap.get(s, s) for s in side_seat)
    moon = sorted((side_seat[0], side_seat[2]), key=lambda s: s.index)
    return TwilightPose(quad, H, (moon[0].value, moon[1].value), side_seat, angle, score,
                        size_mm, light)


def damped_homography(quad: Quad, size_mm: tuple[float, float]) -> np.ndarray:
    """Card mm (0..w x 0..h) -> frame px for a card whose corners (TL, TR, BR, BL) are
    *quad*, with PERSPECTIVE_KEEP of the perspective its corners imply (about its
    centre) and the rest fitted to the corners by least squares."""
    w_mm, h_mm = size_mm
    corners = np.float32([(0, 0), (w_mm, 0), (w_mm, h_mm), (0, h_mm)])
    quad = np.asarray(quad, np.float32)
    T = np.array([[1.0, 0, -w_mm / 2], [0, 1.0, -h_mm / 2], [0, 0, 1]])
    Hc = cv2.getPerspectiveTransform(corners, quad).astype(np.float64) @ np.linalg.inv(T)
    Hc /= Hc[2, 2]
    g = Hc[2, :2] * PERSPECTIVE_KEEP
    rel = corners.astype(np.float64) - (w_mm / 2, h_mm / 2)
    X = np.hstack([rel, np.ones((4, 1))])
    A = np.linalg.lstsq(X, quad.astype(np.float64) * (rel @ g + 1)[:, None], rcond=None)[0].T
    return np.vstack([A, [g[0], g[1], 1.0]]) @ T


# -- side zones ------------------------------------------------------------------------------


def _side_axes(size_mm: tuple[float, float], side: int):
    """(origin, along, outward) of *side* (0 top, 1 right, 2 bottom, 3 left) in card mm."""
    w, h = size_mm
    return (((w / 2, 0.0), (1.0, 0.0), (0.0, -1.0)),
            ((w, h / 2), (0.0, 1.0), (1.0, 0.0)),
            ((w / 2, h), (-1.0, 0.0), (0.0, 1.0)),
            ((0.0, h / 2), (0.0, -1.0), (-1.0, 0.0)))[side]


def zone_homography(pose: TwilightPose, side: int, px_per_mm: float) -> np.ndarray:
    """Homography from a zone image (px at *px_per_mm*; outward is up, the Twilight
    card below its bottom edge) to frame px."""
    (ox, oy), (ax, ay), (nx, ny) = _side_axes(pose.size_mm, side)
    s = px_per_mm
    U, D = ZONE_HALF_WIDTH_MM, ZONE_DEPTH_MM
    zone_to_uv = np.array([[1 / s, 0, -U], [0, -1 / s, D], [0, 0, 1]])
    uv_to_mm = np.array([[ax, nx, ox], [ay, ny, oy], [0, 0, 1]])
    return pose.homography @ uv_to_mm @ zone_to_uv


def zone_outline(pose: TwilightPose, side: int, within_mm: float | None = None
                 ) -> np.ndarray:
    """The zone's outline in frame px (4x2), or of its part within *within_mm* of the
    Twilight card's edge (the zone's far edge is ZONE_DEPTH_MM out)."""
    H = zone_homography(pose, side, 1.0)
    w, h = 2 * ZONE_HALF_WIDTH_MM, ZONE_DEPTH_MM
    top = 0.0 if within_mm is None else ZONE_DEPTH_MM - min(within_mm, ZONE_DEPTH_MM)
    pts = np.float32([(0, top), (w, top), (w, h), (0, h)]).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, H).reshape(4, 2)


def beyond(p_mm: np.ndarray, size_mm: tuple[float, float]) -> np.ndarray:
    """How far (mm) a point (card mm) lies out beyond each side (0 top .. 3 left)."""
    w, h = size_mm
    x, y = float(p_mm[0]), float(p_mm[1])
    return np.array([-y, x - w, y - h, -x])


# -- the search --------------------------------------------------------------------------------


def clockwise(quad: np.ndarray) -> np.ndarray:
    """*quad*'s corners clockwise on the picture (y down), from the same first one."""
    q = np.asarray(quad, np.float32)
    x, y = q[:, 0], q[:, 1]
    area = float(np.dot(x, np.roll(y, -1)) - np.dot(y, np.roll(x, -1)))
    return q if area > 0 else q[[0, 3, 2, 1]]


def shrunk(frame: np.ndarray, height: int = WORK_HEIGHT) -> tuple[np.ndarray, float]:
    """*frame* shrunk by area to at most *height* rows, and the scale."""
    scale = min(1.0, height / frame.shape[0])
    if scale >= 1.0:
        return frame, 1.0
    return cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA), scale


class TwilightFinder:
    """The taught Twilight face (height / width *aspect*) prepared for :meth:`find`."""

    def __init__(self, face: np.ndarray, aspect: float, *, mirror: bool = False) -> None:
        self.aspect = aspect
        self.size_mm = twilight_mm(aspect)
        self.mirror = mirror
        w = FACE_WIDTH_PX
        self.size = (w, max(8, round(w * aspect)))
        f = cv2.resize(face[:, ::-1] if mirror else face, self.size,
                       interpolation=cv2.INTER_AREA)
        self.face = f
        self.bank = FaceBank({"twilight": f}, self.size)
        self.square = abs(np.log(aspect)) < np.log(SQUARE_WITHIN)
        # how alike the face is to itself turned a quarter (squeezed to its shape): a
        # square card's moon sides rest on the difference
        quarter = cv2.resize(cv2.rotate(f, cv2.ROTATE_90_CLOCKWISE), self.size,
                             interpolation=cv2.INTER_AREA)
        self.quarter_alike = float(self.bank.scores(quarter[None])[0, 0])

    def find(self, frame: np.ndarray) -> tuple[Quad, float] | None:
        """(quad TL, TR, BR, BL of the upright art in frame px, score) or None."""
        small, scale = shrunk(frame)
        h = small.shape[0]
        long_aspect = max(self.aspect, 1 / self.aspect)
        qs, _ = Q.card_quads(small, long_aspect,
                             (TWILIGHT_LONG_RANGE[0] * h, TWILIGHT_LONG_RANGE[1] * h),
                             keep=CANDIDATES, rough=ROUGH_CANDIDATES)
        if not len(qs):
            return None
        rolls = [np.roll(clockwise(q) / scale, -r, axis=0) for q in qs for r in range(4)]
        pics = np.stack([rectify(frame, r, self.size) for r in rolls])
        score = self.bank.scores(pics)[:, 0].reshape(len(qs), 4)
        i, r = np.unravel_index(int(np.argmax(score)), score.shape)
        best = float(score[i, r])
        if best < MIN_SCORE:
            return None
        # the quarter turns (moon and sun sides swapped) must fit clearly worse: by the
        # deck's margin rule, with the face's likeness to its quarter turn (a square
        # card; an oblong card's shape already rules them out, its quarter-turned warp
        # is squeezed)
        other = max(score[i, (r + 1) % 4], score[i, (r + 3) % 4])
        c = self.quarter_alike if self.square else 0.0
        if other > best * (c + QUARTER_MARGIN_SHARE * (1 - c)):
            return None
        quad = Q.refine_to(frame, rolls[i * 4 + r])
        return quad, best

    def light(self, frame: np.ndarray, quad: Quad) -> tuple[float, float, float]:
        """Per channel, how much brighter the Twilight card at *quad* shows than taught."""
        seen = rectify(frame, quad, self.size).reshape(-1, 3).astype(np.float32).mean(axis=0)
        taught = self.face.reshape(-1, 3).astype(np.float32).mean(axis=0)
        g = seen / np.maximum(taught, 1.0)
        return (float(g[0]), float(g[1]), float(g[2]))
