"""Finding the Twilight card in a frame, and the four side zones that follow from its pose.

Steps (each a small function on arrays, runnable on a saved frame):

1. :func:`ring_holes` — downscale to :data:`WORK_HEIGHT` rows, mark what is brighter
   than its neighbourhood (an adaptive threshold, so no global light level), and
   keep the holes of bright rings that are roughly quadrilateral: the Twilight card's
   light border encloses its face, whatever the table, the light or cards touching it.
2. :func:`verify` — warp each candidate to the profile's Twilight face (both ways
   round) and score it by normalised colour correlation; the best above
   :data:`MIN_TWILIGHT_SCORE` is the card, and the winning assignment says which
   edges are its moon sides.
3. :func:`side_frames` — a homography per side from a zone's own millimetre frame
   (u along the side, v outward) to image px, and the seat (C1) it faces.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from companion.core.cards import SEATS, Seat
from vision.profile import CARD_MM

#: Rows of the downscaled image the search runs on (the fill-colour search: fewer).
WORK_HEIGHT = 480
COLOUR_WORK_HEIGHT = 320
#: Adaptive threshold: neighbourhood (fraction of the work height) and how much
#: brighter than it (grey levels) a pixel of the light border must be.
RING_BLOCK_FRACTION = 1 / 24
RING_CONTRAST = 8
#: Width (fraction of the work height) up to which a light line counts as thin.
RING_TOPHAT_FRACTION = 1 / 50
#: Card size limits, as fractions of the work image height (camera height varies).
MIN_CARD_HEIGHT_FRACTION = 0.06
MAX_CARD_HEIGHT_FRACTION = 0.6
#: Aspect (long/short) of a candidate's inner face, allowing perspective and a border.
ASPECT_RANGE = (1.12, 1.8)
#: How much of its bounding rectangle a candidate hole must fill (a quadrilateral does).
MIN_FILL = 0.8
#: Normalised cross-correlation a candidate needs to be the Twilight card.
MIN_TWILIGHT_SCORE = 0.45
#: ... and by how much its face must fit it better as found than turned a quarter
#: either way (which would swap the moon and sun sides): the face is far from
#: symmetric under a quarter turn, so a card seen well fits by 0.23 or more (seeds
#: 600000+, both styles and sizes; 0.59 on style 0), while a card a hand half covers
#: can fit a wrong outline nearly as well turned (600292, style 1: by 0.097, and its
#: moon sides were named wrong). Below this the candidate is not taken.
MIN_QUARTER_TURN_MARGIN = 0.15
#: How near a pixel must be to a Twilight fill colour: hue angle (degrees in Lab a*b*),
#: and its chroma and lightness as a ratio of the fill's (the light may be dim or bright).
FILL_HUE_TOLERANCE_DEG = 25.0
FILL_RATIO_RANGE = (0.4, 1.8)
#: Score a Twilight card completed from a part in view must reach.
MIN_COMPLETED_SCORE = 0.5
#: Hidden-card completion: how many of the largest fill-colour regions are tried, and
#: the least area (as a fraction of the smallest card's squared height) worth it.
PARTIAL_REGIONS = 6
PARTIAL_MIN_AREA = 0.15
#: ... and the share of its pixels each fill colour must have to count as showing both.
PARTIAL_MIN_SHARE = 0.15
#: How many of a stage's best candidates get the precise fit before the next stage.
MAX_REFINED = 3
#: Resolution (px/mm) of the verification warp.
VERIFY_PX_PER_MM = 1.0
#: Final, precise pass on the whole face: resolution, shifts, turns and scales searched.
REFINE_PX_PER_MM = 1.6
REFINE_SHIFT_MM = 3.0
REFINE_TURNS_DEG = (-1.0, 0.0, 1.0)
REFINE_SCALES = (0.98, 1.02)
#: Blur (mm) of face and frame in the precise passes (:func:`refine_quad`).
REFINE_BLUR_MM = 1.0
#: Below this precise-fit score a hand probably covers part of the Twilight card: the
#: occlusion-robust alignment (:func:`refine_occluded`) runs — resolution (px/mm), margin
#: searched (mm), rounds of leaving the hand out and ECC iterations per round; the
#: standardised grey difference (blurred) above which a pixel counts as covered; and
#: the difference within which a pixel agrees with the face.
OCCLUDED_BELOW = 0.9
OCCLUSION_PX_PER_MM = 1.0
OCCLUSION_MARGIN_MM = 14.0
OCCLUSION_ROUNDS = 3
OCCLUSION_ITERATIONS = 25
OCCLUSION_RESIDUAL = 1.0
OCCLUSION_AGREE = 0.5
#: ... and before it, a wider precise fit of the same face: shifts up to
#: COVERED_SHIFT_MM and the scales COVERED_SCALES, then the usual precise pass. A hand
#: over the card cuts the part its candidate was completed from, and the whole card
#: taken from a cut part is often a tenth too small or too big (and off by several mm):
#: on bench and fresh seeds (400000+ and 600000+, 8 x 500 scenes) 54 Twilight cards
#: found had a corner more than 3 mm off (51 of them under a hand; some 10-25 mm), and
#: their zones missed side cards; the precise pass searched only +-2% and +-3 mm. The
#: wider fit leaves 46.
COVERED_SHIFT_MM = 12.0
COVERED_SCALES = (0.85, 0.9, 0.95, 1.05, 1.1, 1.15, 1.2)
#: Last pass over a Twilight card seen whole (precise fit >= OCCLUDED_BELOW): an area
#: alignment (ECC) of its face under a full homography, at TWILIGHT_ALIGN_PX_PER_MM
#: (face and frame blurred by TWILIGHT_ALIGN_BLUR_MM), within TWILIGHT_ALIGN_MARGIN_MM.
#: The fits before it keep the outline's shape as the coarse search found it (on a
#: frame shrunk to WORK_HEIGHT rows): its corners were 1.2 mm off in the median, and
#: the zones, reaching 150 mm beyond the card, magnify that. The alignment halves it.
#: A corner it moves further than TWILIGHT_ALIGN_MAX_MOVE_MM slipped (onto a card
#: touching the edge, say): the outline is then kept as it was.
TWILIGHT_ALIGN_PX_PER_MM = 2.0
TWILIGHT_ALIGN_BLUR_MM = 0.35
TWILIGHT_ALIGN_MARGIN_MM = 4.0
TWILIGHT_ALIGN_ITERATIONS = 50
TWILIGHT_ALIGN_MAX_MOVE_MM = 8.0
#: Share of the perspective (the homography's projective terms, about the card's centre)
#: that the side zones keep. Four corners a fraction of a mm off give a perspective
#: many times too strong or turned the wrong way, and 150 mm out that makes a side card
#: look 10-30% too big or small (one scene in twenty on fresh simulator seeds); none at
#: all is wrong by up to 8% there under a 12-degree tilt. Half of it keeps both within
#: about 5% (measured on 100 scenes: true corners, and corners as found).
PERSPECTIVE_KEEP = 0.5
#: How far (fraction of the image height) a found Twilight card may reach out of view.
IN_VIEW_MARGIN = 0.02
#: Geometry a found Twilight card must have (perspective of a camera tilted <= ~12°):
#: opposite sides' and the aspect's relative mismatch, corners' departure from square.
MAX_SIDE_MISMATCH = 0.15
MAX_CORNER_SKEW_DEG = 12.0
#: Border of the Twilight face (mm) assumed when the profile's face shows none.
DEFAULT_INSET_MM = 2.5

Quad = np.ndarray  # 4x2 float32 image px: the card's own TL, TR, BR, BL (upright art)
#: A card's own corners (TL, TR, BR, BL) in its millimetres.
CARD_CORNERS_MM = np.float32([(0, 0), (CARD_MM[0], 0), CARD_MM, (0, CARD_MM[1])])


@dataclass(frozen=True)
class TwilightPose:
    """Where the Twilight card lies: ``quad`` its corners (TL, TR, BR, BL of its upright
    art, so edges 0-1 and 2-3 are the moon sides), ``homography`` from its millimetre
    frame (0..63 x 0..88) to image px, ``moon_seats`` (C1 order), ``side_seat`` the seat
    each of its sides 0 top, 1 right, 2 bottom, 3 left faces, ``angle`` (degrees the
    upright art is turned clockwise in the image) and ``score`` (0..1)."""

    quad: Quad
    homography: np.ndarray
    moon_seats: tuple[str, str]
    side_seat: tuple[Seat, Seat, Seat, Seat]
    angle: float
    score: float

    def seat_side(self, seat: Seat) -> int:
        return self.side_seat.index(seat)


class TwilightModel:
    """The profile's Twilight face prepared for :func:`verify`."""

    def __init__(self, face: np.ndarray) -> None:
        self.inset_mm = face_inset_mm(face)
        w_mm, h_mm = CARD_MM
        i = self.inset_mm
        s = VERIFY_PX_PER_MM
        self.size = (max(8, round((w_mm - 2 * i) * s)), max(8, round((h_mm - 2 * i) * s)))
        px = face.shape[1] / w_mm
        x0, y0 = round(i * px), round(i * px)
        inner = face[y0:face.shape[0] - y0, x0:face.shape[1] - x0]
        inner = cv2.resize(inner, self.size, interpolation=cv2.INTER_AREA)
        self.vector = _unit(cv2.GaussianBlur(inner, (0, 0), 1.0))
        # where a candidate's corners go in the patch verify scores: on its outer pixel
        # edges (pixel centres at 0 .. w-1), so the patch turned half round is exactly
        # the warp from the quad turned half round
        w, h = self.size
        self.patch_corners = np.float32([(0, 0), (w, 0), (w, h), (0, h)]) - np.float32(0.5)
        # the face turned half round (what a card lying the other way up shows)
        self.turned_vector = np.ascontiguousarray(
            self.vector.reshape(inner.shape)[::-1, ::-1]).ravel()
        fine = (round(w_mm * REFINE_PX_PER_MM), round(h_mm * REFINE_PX_PER_MM))
        occ = (round(w_mm * OCCLUSION_PX_PER_MM), round(h_mm * OCCLUSION_PX_PER_MM))
        self.occlusion_face = cv2.cvtColor(cv2.resize(face, occ, interpolation=cv2.INTER_AREA),
                                           cv2.COLOR_BGR2GRAY).astype(np.float32)
        self.occlusion_standard = _standard(cv2.GaussianBlur(
            self.occlusion_face, (0, 0), OCCLUSION_PX_PER_MM))
        self.fine = cv2.cvtColor(cv2.resize(face, fine, interpolation=cv2.INTER_AREA),
                                 cv2.COLOR_BGR2GRAY).astype(np.float32)
        self.fine_blurred = refine_blur(self.fine, REFINE_PX_PER_MM)
        r = TWILIGHT_ALIGN_PX_PER_MM
        self.homography_face = cv2.GaussianBlur(cv2.cvtColor(
            cv2.resize(face, (round(w_mm * r), round(h_mm * r)), interpolation=cv2.INTER_AREA),
            cv2.COLOR_BGR2GRAY).astype(np.float32), (0, 0), TWILIGHT_ALIGN_BLUR_MM * r)
        # inner rectangle in card mm, TL TR BR BL
        self.inner_mm = np.float32([(i, i), (w_mm - i, i), (w_mm - i, h_mm - i), (i, h_mm - i)])
        # the fill colours of its moon (top/bottom) and sun (left/right) quarters, Lab
        lab = cv2.cvtColor(inner, cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float32)
        yy, xx = np.mgrid[0:self.size[1], 0:self.size[0]]
        dx = (xx - self.size[0] / 2) / self.size[0]
        dy = (yy - self.size[1] / 2) / self.size[1]
        moon = (np.abs(dy) > np.abs(dx)).ravel()
        self.fills = (np.median(lab[moon], axis=0), np.median(lab[~moon], axis=0))


def _unit(img: np.ndarray) -> np.ndarray:
    v = img.astype(np.float32).ravel()
    v -= v.mean()
    n = float(np.linalg.norm(v))
    return v / n if n > 1e-6 else v


def face_inset_mm(face: np.ndarray) -> float:
    """Width (mm) of a card face's light border, measured on the upright face image."""
    small = cv2.resize(face, (CARD_MM[0] * 4, CARD_MM[1] * 4), interpolation=cv2.INTER_AREA)
    holes = ring_holes(small, work_height=small.shape[0], card_fraction=(0.5, 1.01))
    if not holes:
        return DEFAULT_INSET_MM
    quad = max(holes, key=lambda q: cv2.contourArea(q))
    xs, ys = quad[:, 0], quad[:, 1]
    left, right = np.sort(xs)[:2].mean(), np.sort(xs)[2:].mean()
    top, bottom = np.sort(ys)[:2].mean(), np.sort(ys)[2:].mean()
    h, w = small.shape[:2]
    inset = float(np.mean([left, top, w - 1 - right, h - 1 - bottom])) / 4.0
    return float(inset) if 0.5 <= inset <= 8.0 else DEFAULT_INSET_MM


def warp_source(frame: np.ndarray) -> np.ndarray:
    """*frame* (B,G,R) as the warps here read it fastest: B,G,R,A. OpenCV warps a picture
    of four channels about twice as fast as one of three, to the very same values
    channel by channel, so a frame warped many times is converted once. The functions
    that warp a frame take it either way, and give B,G,R (or grey) back alike."""
    return cv2.cvtColor(frame, cv2.COLOR_BGR2BGRA) if frame.ndim == 3 and frame.shape[2] == 3 \
        else frame


def as_bgr(patch: np.ndarray) -> np.ndarray:
    """A patch warped out of a frame as B,G,R (the alpha of a :func:`warp_source` dropped)."""
    return cv2.cvtColor(patch, cv2.COLOR_BGRA2BGR) if patch.ndim == 3 and patch.shape[2] == 4 \
        else patch


def as_gray(patch: np.ndarray) -> np.ndarray:
    """A patch warped out of a frame (B,G,R, B,G,R,A or grey) in grey."""
    if patch.ndim == 2:
        return patch
    return cv2.cvtColor(patch, cv2.COLOR_BGRA2GRAY if patch.shape[2] == 4 else cv2.COLOR_BGR2GRAY)


def shrunk_gray(frame: np.ndarray, scale: float) -> np.ndarray:
    """*frame* in grey, shrunk bilinearly to *scale* (<= 1): what the ring stages look
    for in it (a light border around a darker face, a sixth of the picture's height or
    more) survives a bilinear 2/3 as well as an area shrink, at a fifth of its time."""
    gray = frame if frame.ndim == 2 else cv2.cvtColor(frame, cv2.COLOR_BGR2GRAY)
    if scale < 1.0:
        gray = cv2.resize(gray, None, fx=scale, fy=scale, interpolation=cv2.INTER_LINEAR)
    return gray


def ring_holes(frame: np.ndarray, *, work_height: int = WORK_HEIGHT,
               card_fraction: tuple[float, float] = (MIN_CARD_HEIGHT_FRACTION,
                                                     MAX_CARD_HEIGHT_FRACTION),
               thin: bool = False, shrunk: np.ndarray | None = None) -> list[Quad]:
    """Quadrilateral holes of light rings in *frame*, as 4x2 quads in frame px.

    The ring is what is lighter than its neighbourhood (adaptive threshold) or, with
    ``thin``, only the thin light lines (a morphological top-hat): the second keeps a
    light triangle next to a dark one from joining the border."""
    scale = min(1.0, work_height / frame.shape[0])
    if shrunk is not None and shrunk.shape[0] == round(frame.shape[0] * scale):
        gray = shrunk
    else:
        gray = shrunk_gray(frame, scale)
    h = gray.shape[0]
    block = max(3, int(h * RING_BLOCK_FRACTION) | 1)
    if thin:
        # only thin light lines: what is lighter than the grey-level opening around it
        k = max(3, int(h * RING_TOPHAT_FRACTION) | 1)
        hat = cv2.morphologyEx(gray, cv2.MORPH_TOPHAT,
                               cv2.getStructuringElement(cv2.MORPH_RECT, (k, k)))
        bright = cv2.threshold(hat, RING_CONTRAST, 255, cv2.THRESH_BINARY)[1]
        # a thin border blurred by the lens and JPEG breaks here and there: mend it
        # (the hull of the hole, used below, does not mind what the mending joins)
        bright = cv2.morphologyEx(bright, cv2.MORPH_CLOSE, np.ones((5, 5), np.uint8))
    else:
        bright = cv2.adaptiveThreshold(gray, 255, cv2.ADAPTIVE_THRESH_MEAN_C,
                                       cv2.THRESH_BINARY, block, -RING_CONTRAST)
    contours, hierarchy = cv2.findContours(bright, cv2.RETR_CCOMP, cv2.CHAIN_APPROX_SIMPLE)
    if hierarchy is None:
        return []
    lo, hi = card_fraction[0] * h, card_fraction[1] * h
    quads = []
    # holes only (a parent ring): picked out at once, most contours are not
    for i in np.flatnonzero(hierarchy[0][:, 3] >= 0):
        contour = contours[i]
        if len(contour) < 4:
            continue
        # no side of a rectangle around it is longer than its bounding box's diagonal
        # (which is a pixel longer than the points' own): small holes go at once
        _, _, bw, bh = cv2.boundingRect(contour)
        if bw * bw + bh * bh < lo * lo:
            continue
        (cx, cy), (rw, rh), _ = cv2.minAreaRect(contour)
        long_side, short_side = max(rw, rh), min(rw, rh)
        if not (lo <= long_side <= hi) or short_side < 4:
            continue
        if not ASPECT_RANGE[0] <= long_side / short_side <= ASPECT_RANGE[1]:
            continue
        hull = cv2.convexHull(contour)
        area = cv2.contourArea(hull)
        if area < MIN_FILL * rw * rh:
            continue
        quad = _quad_of(hull)
        quads.append(quad / scale)
    return quads


def colour_regions(frame: np.ndarray, fills: tuple[np.ndarray, ...], *,
                   work_height: int = COLOUR_WORK_HEIGHT,
                   partial: tuple[float, float] | None = None) -> list[Quad]:
    """Quadrilateral regions of the Twilight card's fill colours (its four quarters
    together), as 4x2 quads in frame px: the second way to find the card, for tables
    as light as its border.

    With ``partial`` (the inner face's width and height, mm), regions cut by a hand
    are completed instead: each is taken as the visible end of a card of that shape
    whose width or length it shows in full (see :func:`_completions`)."""
    return _colour_regions(fill_masks(frame, fills, work_height=work_height), partial)


@dataclass(frozen=True)
class FillMasks:
    """Where a frame (shrunk by *scale*) shows each Twilight fill colour (``each``), and
    the outlines of their union (closed, eroded: ``mask`` and ``contours``): what both
    :func:`colour_regions` stages start from."""

    scale: float
    each: list[np.ndarray]
    mask: np.ndarray
    contours: tuple


#: Lookup tables of fill_masks per fills (a*, b* -> near in hue and chroma; L* -> near in
#: lightness), for a few Twilight models.
_FILL_TABLES: dict[bytes, list[tuple[np.ndarray, np.ndarray]]] = {}


def _fill_tables(fills: tuple[np.ndarray, ...]) -> list[tuple[np.ndarray, np.ndarray]]:
    """Per fill, whether each Lab a*, b* (256 x 256) and each L* (256) is near it: the
    float32 arithmetic :func:`fill_masks` did per pixel, done once on every value a
    pixel can have (each element's result depends on its own value only)."""
    key = b"".join(np.asarray(f, np.float64).tobytes() for f in fills)
    if key not in _FILL_TABLES:
        values = np.arange(256, dtype=np.float32)
        a = (values - 128)[:, None]
        b = (values - 128)[None, :]
        chroma = np.sqrt(a * a + b * b) + 1e-3
        tables = []
        for fill in fills:
            fa, fb = float(fill[1]) - 128, float(fill[2]) - 128
            fc = max(float(np.hypot(fa, fb)), 1e-3)
            # hue and saturation survive dim light and a colour cast better than Lab distance
            cos_hue = (a * fa + b * fb) / (chroma * fc)
            ratio = chroma / fc
            light = values / max(float(fill[0]), 1.0)
            near_ab = ((cos_hue > np.cos(np.radians(FILL_HUE_TOLERANCE_DEG)))
                       & (ratio > FILL_RATIO_RANGE[0]) & (ratio < FILL_RATIO_RANGE[1]))
            near_l = (light > FILL_RATIO_RANGE[0]) & (light < FILL_RATIO_RANGE[1])
            tables.append((near_ab.ravel(), near_l))
        if len(_FILL_TABLES) > 16:
            _FILL_TABLES.clear()
        _FILL_TABLES[key] = tables
    return _FILL_TABLES[key]


def fill_masks(frame: np.ndarray, fills: tuple[np.ndarray, ...], *,
               work_height: int = COLOUR_WORK_HEIGHT) -> FillMasks:
    """The pixels of *frame* (shrunk by area to *work_height* rows) near each of the
    Twilight card's fill colours in hue, chroma and lightness (see :class:`FillMasks`)."""
    scale = min(1.0, work_height / frame.shape[0])
    small = frame
    if scale < 1.0:
        small = cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA)
    lab = cv2.cvtColor(small, cv2.COLOR_BGR2Lab)
    ab = (lab[..., 1].astype(np.intp) << 8) | lab[..., 2]
    mask = np.zeros(small.shape[:2], np.uint8)
    each = []
    for near_ab, near_l in _fill_tables(fills):
        near = near_ab[ab] & near_l[lab[..., 0]]
        each.append(near)
        mask |= near.astype(np.uint8)
    mask = cv2.morphologyEx(mask * 255, cv2.MORPH_CLOSE, np.ones((3, 3), np.uint8))
    mask = cv2.erode(mask, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(mask, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    return FillMasks(scale, each, mask, contours)


def _colour_regions(masks: FillMasks, partial: tuple[float, float] | None) -> list[Quad]:
    """:func:`colour_regions` from the fill masks already found."""
    scale, each, mask, contours = masks.scale, masks.each, masks.mask, masks.contours
    h = mask.shape[0]
    lo, hi = MIN_CARD_HEIGHT_FRACTION * h, MAX_CARD_HEIGHT_FRACTION * h
    quads = []
    if partial is not None:
        # a part of the Twilight card shows both its fill colours (the table or a card
        # may show one); it is no longer than a card
        tried = []
        for contour in contours:
            area = cv2.contourArea(contour)
            (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
            if area < PARTIAL_MIN_AREA * lo * lo or max(rw, rh) > hi:
                continue
            # (drawn in its bounding box: the same pixels as on the whole mask)
            x, y, bw, bh = cv2.boundingRect(contour)
            region = np.zeros((bh, bw), np.uint8)
            cv2.drawContours(region, [contour], -1, 1, -1, offset=(-x, -y))
            inside = region.astype(bool)
            # a part showing both fill colours is the likeliest; one colour alone (a
            # quarter whose neighbour merged with a table of its colour) comes after
            share = min(float(e[y:y + bh, x:x + bw][inside].mean()) for e in each)
            tried.append((area * (2.0 if share >= PARTIAL_MIN_SHARE else 1.0), contour))
        tried.sort(key=lambda t: -t[0])
        for _, contour in tried[:PARTIAL_REGIONS]:
            quads += [_grow(q, 1.0) / scale for q in _completions(contour, partial)]
        # each quarter of the face is a triangle with its apex at the centre: one
        # quarter in view gives the whole face (its base mirrored through the apex)
        quarters = []
        for near in each:
            part = cv2.erode(near.astype(np.uint8) * 255, np.ones((3, 3), np.uint8))
            found, _ = cv2.findContours(part, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
            for contour in found:
                area = cv2.contourArea(contour)
                (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
                if area >= PARTIAL_MIN_AREA * lo * lo / 4 and max(rw, rh) <= hi:
                    quarters.append((area, contour))
        quarters.sort(key=lambda t: -t[0])
        for _, contour in quarters[:PARTIAL_REGIONS]:
            quad = _mirrored_triangle(contour)
            if quad is not None:
                quads.append(_grow(quad, 1.0) / scale)
        return quads
    for contour in contours:
        (_, _), (rw, rh), _ = cv2.minAreaRect(contour)
        long_side, short_side = max(rw, rh), min(rw, rh)
        if not (lo <= long_side <= hi) or short_side < 4:
            continue
        if not ASPECT_RANGE[0] <= long_side / short_side <= ASPECT_RANGE[1]:
            continue
        hull = cv2.convexHull(contour)
        if cv2.contourArea(hull) < MIN_FILL * rw * rh:
            continue
        # the erosion took a pixel off each side
        quads.append(_grow(_quad_of(hull), 1.0) / scale)
    return quads


def _mirrored_triangle(contour: np.ndarray) -> Quad | None:
    """The face a triangular quarter belongs to: its longest side is one of the face's
    sides and its apex the face's centre."""
    _, tri = cv2.minEnclosingTriangle(contour.astype(np.float32))
    if tri is None:
        return None
    tri = tri.reshape(3, 2)
    lengths = [np.linalg.norm(tri[(i + 1) % 3] - tri[i]) for i in range(3)]
    i = int(np.argmax(lengths))
    b1, b2, apex = tri[i], tri[(i + 1) % 3], tri[(i + 2) % 3]
    if lengths[i] < 4:
        return None
    return _clockwise(np.float32([b1, b2, 2 * apex - b1, 2 * apex - b2]))


def _completions(contour: np.ndarray, inner_mm: tuple[float, float]) -> list[Quad]:
    """Whole-card quads a partly hidden region may belong to: its minimum-area
    rectangle's one side taken as the card's full width (or length), the card then
    reaching out from either end of the other side."""
    box = _clockwise(cv2.boxPoints(cv2.minAreaRect(contour)).astype(np.float32))
    out = []
    for k in (0, 1):
        b = np.roll(box, -k, axis=0)
        across, along = b[1] - b[0], b[3] - b[0]
        n_across, n_along = float(np.linalg.norm(across)), float(np.linalg.norm(along))
        if n_across < 3 or n_along < 3:
            continue
        for full, other in (inner_mm, inner_mm[::-1]):
            length = n_across / full * other
            if length < n_along * 0.95:
                continue
            unit = along / n_along
            for start in (b[0], b[0] + along - unit * length):
                quad = np.float32([start, start + across, start + across + unit * length,
                                   start + unit * length])
                out.append(_clockwise(quad))
    return out


def _grow(quad: Quad, px: float) -> Quad:
    c = quad.mean(axis=0)
    d = quad - c
    n = np.linalg.norm(d, axis=1, keepdims=True)
    return (quad + d / np.maximum(n, 1e-6) * px * 1.414).astype(np.float32)


def _quad_of(hull: np.ndarray) -> Quad:
    """Four corners of a convex outline: a 4-point polygon approximation when one
    exists, else the minimum-area rectangle; clockwise in image coordinates."""
    peri = cv2.arcLength(hull, True)
    quad = None
    for eps in (0.02, 0.04, 0.06):
        approx = cv2.approxPolyDP(hull, eps * peri, True)
        if len(approx) == 4:
            quad = approx.reshape(4, 2).astype(np.float32)
            break
    if quad is None:
        quad = cv2.boxPoints(cv2.minAreaRect(hull)).astype(np.float32)
    return _clockwise(quad)


def _clockwise(quad: np.ndarray) -> np.ndarray:
    c = quad.mean(axis=0)
    ang = np.arctan2(quad[:, 1] - c[1], quad[:, 0] - c[0])
    return quad[np.argsort(ang)].astype(np.float32)  # y down: increasing angle = clockwise


def verify(frame: np.ndarray, quad: Quad, model: TwilightModel) -> tuple[float, Quad]:
    """Score *quad* (a candidate inner face) as the Twilight card in *frame* (B,G,R, or
    its :func:`warp_source`), trying it all four ways round; returns (score, inner quad
    ordered TL, TR, BR, BL of the upright art). Each way and the way half round from it
    share one warp (:func:`_both_ways`)."""
    best = (-1.0, quad)
    for k in range(2):
        q = np.roll(quad, -k, axis=0)
        # the upright face is portrait: its first edge (moon side) is a short one
        if np.linalg.norm(q[1] - q[0]) > np.linalg.norm(q[2] - q[1]) * 1.05:
            continue
        for turn, score in zip((k, k + 2), _both_ways(frame, q, model), strict=True):
            if score > best[0]:
                best = (score, np.roll(quad, -turn, axis=0))
    return best


def _both_ways(frame: np.ndarray, quad: Quad, model: TwilightModel) -> tuple[float, float]:
    """The Twilight face's correlation with the frame inside *quad* (an inner face, TL,
    TR, BR, BL) as ordered and turned half round: one warp, the card's edges on the
    patch's outer pixel edges, so the patch turned half round is exactly the warp from
    the quad turned half round (scored against the face turned half round)."""
    M = cv2.getPerspectiveTransform(np.asarray(quad, np.float32), model.patch_corners)
    patch = as_bgr(cv2.warpPerspective(frame, M, model.size, flags=cv2.INTER_LINEAR,
                                       borderMode=cv2.BORDER_REPLICATE))
    seen = _unit(cv2.GaussianBlur(patch, (0, 0), 1.0))
    return float(seen @ model.vector), float(seen @ model.turned_vector)


def quarter_turn_margin(frame: np.ndarray, quad: Quad, score: float,
                        model: TwilightModel) -> float:
    """How much better the face fits the inner face *quad* (as :func:`verify` ordered
    it, with *score*) than turned a quarter either way."""
    return score - max(_both_ways(frame, np.roll(np.asarray(quad), -1, axis=0), model))


def locate(frame: np.ndarray, model: TwilightModel, *, mirror: bool = False,
           min_score: float = MIN_TWILIGHT_SCORE,
           warpable: np.ndarray | None = None) -> TwilightPose | None:
    """The Twilight card's pose in *frame* (BGR), or None when it is not seen
    (*warpable*: its :func:`warp_source`, when the caller has it already)."""
    # the light border first; the fill colours when that finds nothing (a table as
    # light as the border, or a hand breaking the border's ring); last, regions a
    # hand cut, completed to whole cards
    inner = (CARD_MM[0] - 2 * model.inset_mm, CARD_MM[1] - 2 * model.inset_mm)
    # (a card completed from a part in view must fit better than one seen whole)
    completed = max(min_score, MIN_COMPLETED_SCORE)
    # both ring stages work on the same shrunk grey picture (made once)
    shrunk = shrunk_gray(frame, min(1.0, WORK_HEIGHT / frame.shape[0]))
    # ... and every warp reads the frame converted once (see warp_source)
    warpable = warp_source(frame) if warpable is None else warpable
    # ... and both fill-colour stages on the same fill masks (found when first needed)
    masks: list[FillMasks] = []

    def colours(f: np.ndarray, partial: tuple[float, float] | None = None) -> list[Quad]:
        if not masks:
            masks.append(fill_masks(f, model.fills))
        return _colour_regions(masks[0], partial)

    stages = ((lambda f: ring_holes(f, shrunk=shrunk), min_score),
              (lambda f: ring_holes(f, thin=True, shrunk=shrunk), min_score),
              (lambda f: colours(f), min_score),
              (lambda f: colours(f, partial=inner), completed))
    w_mm, h_mm = CARD_MM
    outer_mm = np.float32([(0, 0), (w_mm, 0), (w_mm, h_mm), (0, h_mm)]).reshape(-1, 1, 2)
    for candidates, needed in stages:
        scored = sorted((verify(warpable, quad, model) for quad in candidates(frame)),
                        key=lambda c: -c[0])
        for score, inner_quad in scored[:MAX_REFINED]:
            if score < needed:
                break
            if quarter_turn_margin(warpable, inner_quad, score, model) < MIN_QUARTER_TURN_MARGIN:
                continue  # which sides are moon is not clear (a hand over it)
            H_inner = cv2.getPerspectiveTransform(model.inner_mm, inner_quad.astype(np.float32))
            quad = cv2.perspectiveTransform(outer_mm, H_inner).reshape(4, 2)
            quad, fine = fit_face(warpable, quad, model)
            # a hand over the card can leave a fragment that fits nothing well; and the
            # card lies on the table in view (a sleeve of its colour at the image edge
            # does not)
            h, w = frame.shape[:2]
            inside = bool(np.all((quad >= -IN_VIEW_MARGIN * h)
                                 & (quad <= np.array([w, h]) + IN_VIEW_MARGIN * h)))
            if fine >= needed and plausible(quad) and inside:
                if fine < OCCLUDED_BELOW:
                    quad = refit_covered(warpable, quad, model)
                    quad = refine_occluded(warpable, quad, model)
                    quad = align_twilight(warpable, quad, model, covered=True)
                else:
                    quad = align_twilight(warpable, quad, model)
                return pose_from_quad(quad, min(score, fine), mirror=mirror)
    return None


def _warped_gray(frame: np.ndarray, M: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    patch = cv2.warpPerspective(frame, M, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                borderMode=cv2.BORDER_REPLICATE)
    return as_gray(patch).astype(np.float32)


def _standard(img: np.ndarray) -> np.ndarray:
    return (img - img.mean()) / max(float(img.std()), 1e-3)


def agreement(frame: np.ndarray, quad: Quad, model: TwilightModel) -> float:
    """Share of the Twilight face (blurred, standardised grey) that the frame inside
    *quad* shows within OCCLUSION_AGREE of: what a hand leaves of a well placed card."""
    r = OCCLUSION_PX_PER_MM
    h, w = model.occlusion_face.shape
    card = np.float32([(0, 0), (w, 0), (w, h), (0, h)])
    M = cv2.getPerspectiveTransform(card, np.asarray(quad, np.float32))
    seen = cv2.GaussianBlur(_warped_gray(frame, M, (w, h)), (0, 0), r)
    return float((np.abs(model.occlusion_standard - _standard(seen)) < OCCLUSION_AGREE).mean())


def fit_face(frame: np.ndarray, quad: Quad, model: TwilightModel,
             shift_mm: float = REFINE_SHIFT_MM, turns: tuple[float, ...] = REFINE_TURNS_DEG,
             scales: tuple[float, ...] = REFINE_SCALES) -> tuple[Quad, float]:
    """:func:`refine_quad` with the Twilight face (blurred once, in the model) at
    REFINE_PX_PER_MM: the precise pass by default, wider with *shift_mm*, *turns* and
    *scales*. Returns (quad, score)."""
    return refine_quad(frame, quad, model.fine_blurred, REFINE_PX_PER_MM, shift_mm, turns,
                       scales, blurred=True)


def refit_covered(frame: np.ndarray, quad: Quad, model: TwilightModel) -> Quad:
    """The outline of a Twilight card a hand partly covers, fitted again over a wider
    range of places and sizes (COVERED_SHIFT_MM, COVERED_SCALES), then precisely as
    before; *quad* as it was when that leaves no plausible card."""
    wide, _ = fit_face(frame, quad, model, COVERED_SHIFT_MM, (0.0,), COVERED_SCALES)
    new, _ = fit_face(frame, wide, model)
    return new if plausible(new) else quad


def refine_occluded(frame: np.ndarray, quad: Quad, model: TwilightModel) -> Quad:
    """The outline of a Twilight card a hand partly covers, made precise by
    :func:`align_face` with the hand left out; kept only when it is a plausible card and
    more of the face agrees with the frame than before."""
    new = align_face(frame, quad, model.occlusion_face, OCCLUSION_PX_PER_MM,
                     OCCLUSION_MARGIN_MM, OCCLUSION_ROUNDS)
    if new is not None and plausible(new) and (agreement(frame, new, model)
                                                > agreement(frame, quad, model)):
        return new
    return quad


def align_twilight(frame: np.ndarray, quad: Quad, model: TwilightModel,
                   covered: bool = False) -> Quad:
    """The outline of a Twilight card made precise by an area alignment of its face
    under a full homography (see TWILIGHT_ALIGN_PX_PER_MM); *quad* as it was when the
    alignment fails, slips or leaves no plausible card. With *covered* (a hand lies
    over part of it, and *quad* is placed well enough to see where), what does not
    look like the face as placed is left out, and the new outline is kept only when
    more of the face agrees with the frame."""
    r, m = TWILIGHT_ALIGN_PX_PER_MM, TWILIGHT_ALIGN_MARGIN_MM
    face = model.homography_face
    h, w = face.shape
    H, seen = _card_window(frame, quad, r, m)
    seen = cv2.GaussianBlur(seen, (0, 0), TWILIGHT_ALIGN_BLUR_MM * r)
    W = np.float32([[1, 0, m * r], [0, 1, m * r], [0, 0, 1]])
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, TWILIGHT_ALIGN_ITERATIONS, 1e-4)
    valid = None
    if covered:
        o = round(m * r)
        inside = seen[o:o + h, o:o + w]
        off = cv2.GaussianBlur(np.abs(_standard(face) - _standard(inside)), (0, 0),
                               2 * r) > OCCLUSION_RESIDUAL
        valid = np.full(seen.shape, 255, np.uint8)
        valid[o:o + h, o:o + w][off] = 0
    try:
        _, W = cv2.findTransformECC(face, seen, W, cv2.MOTION_HOMOGRAPHY, criteria, valid, 5)
    except cv2.error:  # did not converge
        return quad
    corners = cv2.perspectiveTransform(
        np.float64([[(0, 0)], [(w, 0)], [(w, h)], [(0, h)]]), W.astype(np.float64))
    new = _window_to_frame(corners, H, r, m)
    moved_mm = float(np.linalg.norm(new - quad, axis=1).max()) / float(
        np.linalg.norm(quad[1] - quad[0]) / CARD_MM[0])
    if moved_mm > TWILIGHT_ALIGN_MAX_MOVE_MM or not plausible(new):
        return quad
    if covered and agreement(frame, new, model) <= agreement(frame, quad, model):
        return quad
    return new


def align_face(frame: np.ndarray, quad: Quad, face: np.ndarray, px_per_mm: float,
               margin_mm: float, rounds: int = 1, iterations: int = OCCLUSION_ITERATIONS
               ) -> Quad | None:
    """A card's outline made precise by an area alignment (ECC, affine: gain and offset
    of the light do not matter) of its *face* (grey float32 at *px_per_mm*) with the
    frame around *quad* (TL, TR, BR, BL), within about *margin_mm*. With more than one
    round, what does not look like the face where it should (a hand, a card on top) is
    left out of the next round; each round at most *iterations* ECC iterations. None
    when the alignment does not converge."""
    r, m = px_per_mm, margin_mm
    h, w = face.shape
    H, seen = _card_window(frame, quad, r, m)
    A = np.float32([[1, 0, m * r], [0, 1, m * r]])
    # the pixels the alignment may use: all of them at first (no mask: the same
    # alignment as a mask of every pixel, a tenth faster)
    valid: np.ndarray | None = None
    criteria = (cv2.TERM_CRITERIA_EPS | cv2.TERM_CRITERIA_COUNT, iterations, 1e-3)
    face_std = _standard(cv2.GaussianBlur(face, (0, 0), r)) if rounds > 1 else None
    for n in range(rounds):
        try:
            _, A = cv2.findTransformECC(face, seen, A, cv2.MOTION_AFFINE, criteria, valid, 5)
        except cv2.error:  # did not converge (too little of the face left)
            return None
        if face_std is None or n == rounds - 1:
            break
        back = cv2.warpAffine(seen, A, (w, h), flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP)
        off = cv2.GaussianBlur(np.abs(face_std - _standard(cv2.GaussianBlur(back, (0, 0), r))),
                               (0, 0), 2 * r) > OCCLUSION_RESIDUAL
        hidden = cv2.warpAffine(off.astype(np.uint8) * 255, A, (seen.shape[1], seen.shape[0]),
                                flags=cv2.INTER_NEAREST)
        valid = np.where(hidden > 0, 0, 255).astype(np.uint8)
    corners = (A[:, :2] @ (np.float32([(0, 0), (w, 0), (w, h), (0, h)])).T).T + A[:, 2]
    return _window_to_frame(corners, H, r, m)


def _card_window(frame: np.ndarray, quad: Quad, px_per_mm: float, margin_mm: float
                 ) -> tuple[np.ndarray, np.ndarray]:
    """(H: card mm -> frame px of the card inside *quad*, the frame around that card
    warped upright at *px_per_mm* with *margin_mm* all round, grey float32): what the
    area alignments (:func:`align_face`, :func:`align_twilight`) align a face in."""
    H, P, size = _card_frame(quad, px_per_mm, margin_mm)
    return H, _warped_gray(frame, H @ P, size)


def _card_frame(quad: Quad, px_per_mm: float, margin_mm: float
                ) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
    """(H: card mm -> frame px of the card inside *quad*; P: window px -> card mm; the
    window's size) of an upright window on that card at *px_per_mm* with *margin_mm*
    all round."""
    r, m = px_per_mm, margin_mm
    w_mm, h_mm = CARD_MM
    H = cv2.getPerspectiveTransform(CARD_CORNERS_MM, np.asarray(quad, np.float32))
    P = np.array([[1 / r, 0, -m], [0, 1 / r, -m], [0, 0, 1]])
    return H, P, (round((w_mm + 2 * m) * r), round((h_mm + 2 * m) * r))


def _window_to_frame(points: np.ndarray, H: np.ndarray, px_per_mm: float,
                     margin_mm: float) -> Quad:
    """Points in a :func:`_card_window` (px) as frame px (4x2 float32 for 4 points)."""
    mm = (np.asarray(points) / px_per_mm - margin_mm).reshape(-1, 1, 2).astype(np.float64)
    return cv2.perspectiveTransform(mm, H).reshape(-1, 2).astype(np.float32)


def plausible(quad: Quad) -> bool:
    """Whether *quad* (TL, TR, BR, BL) can be a flat card seen by a camera tilted at most
    about 12°: opposite sides of similar length, corners near square, card aspect."""
    q = np.asarray(quad, np.float64)
    sides = [np.linalg.norm(q[(i + 1) % 4] - q[i]) for i in range(4)]
    if min(sides) < 4:
        return False
    for a, b in ((0, 2), (1, 3)):
        if max(sides[a], sides[b]) / min(sides[a], sides[b]) > 1 + MAX_SIDE_MISMATCH:
            return False
    for i in range(4):
        u, v = q[(i + 1) % 4] - q[i], q[i - 1] - q[i]
        cos = abs(float(u @ v)) / (np.linalg.norm(u) * np.linalg.norm(v))
        if cos > np.sin(np.radians(MAX_CORNER_SKEW_DEG)):
            return False
    aspect = (sides[1] + sides[3]) / (sides[0] + sides[2])
    return abs(aspect / (CARD_MM[1] / CARD_MM[0]) - 1) <= MAX_SIDE_MISMATCH


def pose_from_quad(quad: Quad, score: float = 1.0, *, mirror: bool = False) -> TwilightPose:
    """The pose of a Twilight card whose corners (TL, TR, BR, BL of its upright art)
    are *quad*: homography, seats of its sides (C1: north up the image) and moon seats."""
    quad = np.asarray(quad, np.float32)
    H = _damped_homography(quad)
    centre = quad.mean(axis=0)
    up = (quad[0] + quad[1]) / 2 - centre  # towards the top (a moon side) of the art
    angle = float(np.degrees(np.arctan2(up[0], -up[1])))  # clockwise from image-up
    k = round(angle / 90.0) % 4  # the art's top faces SEATS[k]
    side_seat = tuple(SEATS[(i + k) % 4] for i in range(4))
    if mirror:
        swap = {Seat.EAST: Seat.WEST, Seat.WEST: Seat.EAST}
        side_seat = tuple(swap.get(s, s) for s in side_seat)
    moon = sorted((side_seat[0], side_seat[2]), key=lambda s: s.index)
    return TwilightPose(quad, H, (moon[0].value, moon[1].value), side_seat, angle, score)


def _damped_homography(quad: Quad) -> np.ndarray:
    """Card mm -> frame px for a card whose corners (TL, TR, BR, BL) are *quad*, with
    PERSPECTIVE_KEEP of the perspective its four corners alone imply (about the card's
    centre); the rest of the mapping fitted to the corners by least squares."""
    w_mm, h_mm = CARD_MM
    # about the centre: mm relative to it
    T = np.array([[1.0, 0, -w_mm / 2], [0, 1.0, -h_mm / 2], [0, 0, 1]])
    Hc = cv2.getPerspectiveTransform(CARD_CORNERS_MM, quad).astype(np.float64) @ np.linalg.inv(T)
    Hc /= Hc[2, 2]
    g = Hc[2, :2] * PERSPECTIVE_KEEP
    rel = CARD_CORNERS_MM.astype(np.float64) - (w_mm / 2, h_mm / 2)
    # x' (g.x + 1) = A (x, 1): linear in A
    X = np.hstack([rel, np.ones((4, 1))])
    A = np.linalg.lstsq(X, quad.astype(np.float64) * (rel @ g + 1)[:, None], rcond=None)[0].T
    return np.vstack([A, [g[0], g[1], 1.0]]) @ T


# -- side zones ------------------------------------------------------------------------------

#: A side zone in its own frame: u along the side (mm, centred), v outward from the edge.
ZONE_HALF_WIDTH_MM = 95.0
ZONE_DEPTH_MM = 150.0

# twilight mm = origin + u * along + v * outward, per side 0 top, 1 right, 2 bottom, 3 left
_SIDE_AXES = (
    ((CARD_MM[0] / 2, 0.0), (1.0, 0.0), (0.0, -1.0)),
    ((CARD_MM[0], CARD_MM[1] / 2), (0.0, 1.0), (1.0, 0.0)),
    ((CARD_MM[0] / 2, CARD_MM[1]), (-1.0, 0.0), (0.0, 1.0)),
    ((0.0, CARD_MM[1] / 2), (0.0, -1.0), (-1.0, 0.0)),
)


def side_half_length(side: int) -> float:
    """Half the length (mm) of the Twilight card's side *side*."""
    return CARD_MM[0] / 2 if side in (0, 2) else CARD_MM[1] / 2


def zone_homography(pose: TwilightPose, side: int, px_per_mm: float) -> np.ndarray:
    """Homography from a zone image (px at *px_per_mm*; outward is up, the Twilight
    card below its bottom edge) to frame px."""
    (ox, oy), (ax, ay), (nx, ny) = _SIDE_AXES[side]
    s = px_per_mm
    # zone px (x, y) -> (u, v) = (x/s - U, D - y/s) -> twilight mm
    U, D = ZONE_HALF_WIDTH_MM, ZONE_DEPTH_MM
    zone_to_uv = np.array([[1 / s, 0, -U], [0, -1 / s, D], [0, 0, 1]])
    uv_to_mm = np.array([[ax, nx, ox], [ay, ny, oy], [0, 0, 1]])
    return pose.homography @ uv_to_mm @ zone_to_uv


def zone_size(px_per_mm: float) -> tuple[int, int]:
    return (round(2 * ZONE_HALF_WIDTH_MM * px_per_mm), round(ZONE_DEPTH_MM * px_per_mm))


def zone_outline(pose: TwilightPose, side: int, within_mm: float | None = None
                 ) -> np.ndarray:
    """The zone's outline in frame px (4x2), or of its part within *within_mm* of the
    Twilight card's edge (the zone's far edge at ZONE_DEPTH_MM)."""
    H = zone_homography(pose, side, 1.0)
    w, h = zone_size(1.0)
    top = 0.0 if within_mm is None else ZONE_DEPTH_MM - min(within_mm, ZONE_DEPTH_MM)
    pts = np.float32([(0, top), (w, top), (w, h), (0, h)]).reshape(-1, 1, 2)
    return cv2.perspectiveTransform(pts, H).reshape(4, 2)


def refine_blur(template: np.ndarray, px_per_mm: float) -> np.ndarray:
    """*template* (at *px_per_mm*) blurred as :func:`refine_quad` blurs it: a template
    used often can be blurred once and passed with ``blurred=True``."""
    return cv2.GaussianBlur(template, (0, 0), REFINE_BLUR_MM * px_per_mm)


def refine_quad(frame: np.ndarray, quad: Quad, template: np.ndarray, px_per_mm: float,
                shift_mm: float, turns: tuple[float, ...], scales: tuple[float, ...],
                *, blurred: bool = False) -> tuple[Quad, float]:
    """Make a card's outline precise: correlate *template* (the card's face, gray
    float32, at *px_per_mm*; already through :func:`refine_blur` when *blurred*) with
    the frame around *quad* (TL, TR, BR, BL) over shifts up to *shift_mm*, the given
    turns (degrees) and then scales. Returns (quad, score)."""
    r, m = px_per_mm, shift_mm
    # fine print and stripes (a purgatory's) would let the fit slip by a period: the
    # outline and the big shapes place a card, so both sides are blurred alike
    blur = REFINE_BLUR_MM * r
    if not blurred:
        template = refine_blur(template, r)
    w_mm, h_mm = CARD_MM
    H, P, size = _card_frame(quad, r, m)

    def at(turn: float, zoom: float):
        # patch px -> card mm (turned and scaled about the card's centre) -> frame
        R = np.vstack([cv2.getRotationMatrix2D((w_mm / 2, h_mm / 2), turn, zoom), [0, 0, 1]])
        patch = cv2.warpPerspective(frame, H @ R @ P, size,
                                    flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                    borderMode=cv2.BORDER_REPLICATE)
        patch = cv2.GaussianBlur(as_gray(patch).astype(np.float32), (0, 0), blur)
        res = cv2.matchTemplate(patch, template, cv2.TM_CCOEFF_NORMED)
        _, mx, _, loc = cv2.minMaxLoc(res)
        return mx, loc, turn, zoom, R

    best = max((at(turn, 1.0) for turn in turns), key=lambda b: b[0])
    for zoom in scales:
        if zoom != 1.0:
            cand = at(best[2], zoom)
            if cand[0] > best[0]:
                best = cand
    score, (x, y), _, _, R = best
    local = CARD_CORNERS_MM + np.float32([x / r - m, y / r - m])
    pts = cv2.perspectiveTransform(local.reshape(-1, 1, 2).astype(np.float64), H @ R)
    return pts.reshape(4, 2).astype(np.float32), float(score)
