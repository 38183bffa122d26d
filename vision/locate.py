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
from vision import proposals as P
from vision import quads as Q
from vision.faces import MIN_SCORE, FaceBank, ecc_align, ecc_margin, rectify, rectify_all
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
#: First (the card seen whole, as in most frames): the QUICK hypotheses most like the
#: face refined, and the best QUICK_VERIFIED of them verified, passing only with a face
#: seen clearly (QUICK_SCORE); the full search only when none does. (Tuning: 89% of the
#: Twilight cards found in place correlate 0.8 or more; of the outlines found off the
#: card, one of 11 did. A lesser outline found first must not pre-empt a better one.)
QUICK = 8
QUICK_VERIFIED = 2
QUICK_SCORE = 0.8
#: The same, ranked by how much their inside looks like the Twilight face (a cloth's
#: own squares have better sides than a small or dim card, never its face).
FACE_ROUGH = 32
FACE_CANDIDATES = 8
#: The same again, ranked by how much of their inside shows the face's colours where
#: the rest of the frame does not (a ratio histogram of hue and saturation, HS_BINS):
#: on a checked cloth an outline a sixth of the card off the card has a face grid no
#: better than the cloth's squares, but its colours are still the card's.
HS_BINS = (16, 8)
#: The best candidates refined on the frame's own edges and weighed again, if their
#: face correlates at least this share of MIN_SCORE (a quad a few px off a small card
#: correlates much less than the card).
REFINED = 5
REFINE_SHARE = 0.6
#: A face seen less than clearly may be a part of the card that looks like the whole
#: (:meth:`TwilightFinder.outgrown`): its outline grown by these (the part a half to
#: two thirds of the card) is tried too.
OUTGROW = (1.5, 2.0, 2.5)
#: ... and a card found so by what shows of it must be larger than the part by this
#: (linear; halfway between the same card and the least growth tried).
PART_OF = 1.25
#: When no outline leads to the card, the face is looked for all over the frame
#: (:func:`vision.proposals.dense_quads`) at sizes from this share of the height up: a
#: card this big has cells of a few px in the frame shrunk to WORK_HEIGHT.
DENSE_LONG_MIN = 0.1
#: Such a search weighs tens of thousands of outlines, so a card found by it must show
#: its whole face clearly, as a card is named (on the tuning material the Twilight
#: cards found so scored 0.95 and more, the best look-alikes at most 0.64).
DENSE_SCORE = 0.8
#: The best distinct outlines of that search moved to fit the face better
#: (:func:`vision.proposals.polish`) before the best REFINED of them are aligned.
POLISHED = 24
#: ECC alignment of a rough outline with the face: the face's most width (px), the
#: margin (share of its width) the window reaches beyond the outline, most iterations,
#: and the most a corner may move (share of the width: more slid onto something else).
ALIGN_WIDTH_PX = 48
ALIGN_MARGIN = 0.25
ALIGN_ITERATIONS = 30
ALIGN_MAX_MOVE = 0.5
#: A Twilight card's outline has the taught shape within this factor (perspective, a
#: rough outline): the face squeezed onto another shape is a part of the card or
#: something else.
SHAPE_WITHIN = 1.25
#: ... and its corners within this of square: a camera tilted 15 degrees skews a card's
#: corners by a few degrees; an alignment that shears an outline more has slid onto
#: something else (tuning: Twilight cards found at most 18 degrees off, outlines found
#: off the card or on tables without one up to 44).
SKEW_DEG = 20.0
#: The face's parts (cells across, down) and how well the better half of them must
#: correlate: a Twilight card shows some of its print clearly (0.9 and more where not
#: covered), a look-alike of it (a card of like layout, an arm, a band of the cloth)
#: only vaguely everywhere (about 0.6 on the tuning material).
PARTS = (2, 2)
PART_SCORE = 0.75
#: A Twilight card partly covered (an arm, a hand): the face's cells (4 across its short
#: side, :func:`vision.proposals.grid_shape`) the card shows are those the face explains
#: (one gain and offset per channel, fitted on them) up to VISIBLE_FIT of the face's
#: variance; starting from the whole face and from each half, the fit and the cells
#: seen are settled in turn (VISIBLE_ROUNDS). A card is found by what it shows when
#: the cells seen correlate at least VISIBLE_SCORE with the face and are at least
#: VISIBLE_SHARE of its print (variance). (Tuning: at the true outline, 66 of 82
#: covered cards pass and 184 of 193 uncovered ones; none of 8900 outlines elsewhere.)
VISIBLE_FIT = 0.3
VISIBLE_ROUNDS = 3
VISIBLE_SCORE = 0.95
VISIBLE_SHARE = 0.3
#: ... and the fit's gains must lie within this factor of each other across the
#: channels: the light's colour and the camera's balance scale them alike to that
#: much; a fit needing more is the face's layout printed in other colours (on the
#: tuning material a card's frame of dark bars on a light ground fitted a Twilight
#: face's blue bands at 3.4; covered Twilight cards needed at most 1.9).
VISIBLE_GAIN_RATIO = 2.5
#: outlines weighed by what they show, when no whole face passed: the best by their
#: parts (the better half of PARTS)
VISIBLE_CANDIDATES = 6
#: ... and a card found by what it shows must lie on edges along two of its sides at
#: least (the second best side's support on the frame's edges): an outline on a
#: look-alike inside a print or on the cloth runs along one edge at most.
VISIBLE_SIDES = 0.5
#: A card covered so much that no outline of its size is proposed, by its corners seen
#: (:func:`corner_hypotheses`): runs within CORNER_DEG of square to each other, an end
#: of each within CORNER_PX (px of the frame shrunk to WORK_HEIGHT) of their lines'
#: meeting point — a rounded corner, at most quads.CORNER_SHARE of the side, or the
#: edges' blur (CORNER_BLUR_PX): a corner of CORNER_PX is a twelfth of a card's short
#: side of 67 px, a third of the frame's height; CORNER_SIZES sizes each
#: CORNER_SIZE_STEP apart; the best CORNER_CANDIDATES by the face's best half weighed.
CORNER_DEG = 10.0
CORNER_PX = 8.0
CORNER_BLUR_PX = 2.0
CORNER_SIZES = 3
CORNER_SIZE_STEP = 1.3
CORNER_POLISHED = 48
CORNER_CANDIDATES = 8
#: A Twilight card whose whole face correlates under QUICK_SCORE (an arm, a shadow or
#: a sheen over part of it) must show what it shows as its face: the cells seen
#: (:func:`visible_cells`) correlate at least this (tuning: Twilight cards found so
#: 0.94 and more; the look-alikes found on tables without one 0.15-0.45). An outline
#: of a covered card whose cells seen correlate this much but under VISIBLE_SCORE is
#: aligned again on those cells only (:meth:`TwilightFinder.align`): the hand pulls
#: an alignment on the whole face off the card.
SHOWN_SCORE = 0.9
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
    """How far (mm) points (card mm, ... x 2) lie out beyond each side (0 top .. 3
    left): ... x 4."""
    w, h = size_mm
    p = np.asarray(p_mm, np.float64)
    x, y = p[..., 0], p[..., 1]
    return np.stack([-y, x - w, y - h, -x], axis=-1)


# -- the search --------------------------------------------------------------------------------


def clockwise(quad: np.ndarray) -> np.ndarray:
    """*quad*'s corners clockwise on the picture (y down), from the same first one."""
    q = np.asarray(quad, np.float32)
    x, y = q[:, 0], q[:, 1]
    area = float(np.dot(x, Q.roll_corners(y, 1)) - np.dot(y, Q.roll_corners(x, 1)))
    return q if area > 0 else q[[0, 3, 2, 1]]


def art_aspect(quad: Quad) -> float:
    """Height / width of *quad* taken as the art's TL, TR, BR, BL."""
    q = np.asarray(quad, np.float32)
    d = np.hypot(*(Q.roll_corners(q, 1) - q).T)
    return float((d[1] + d[3]) / max(d[0] + d[2], 1e-6))


def _area(quad: Quad) -> float:
    """The area (px²) inside *quad*."""
    return abs(float(cv2.contourArea(np.asarray(quad, np.float32))))


def clockwise_all(quads: np.ndarray) -> np.ndarray:
    """Each of *quads* (N x 4 x 2) with its corners clockwise on the picture."""
    q = np.asarray(quads, np.float32)
    x, y = q[..., 0], q[..., 1]
    area = (x * Q.roll_corners(y, 1, axis=1) - y * Q.roll_corners(x, 1, axis=1)).sum(axis=1)
    return np.where((area > 0)[:, None, None], q, q[:, [0, 3, 2, 1]])


def shrunk(frame: np.ndarray, height: int = WORK_HEIGHT) -> tuple[np.ndarray, float]:
    """*frame* shrunk by area to at most *height* rows, and the scale."""
    scale = min(1.0, height / frame.shape[0])
    if scale >= 1.0:
        return frame, 1.0
    return cv2.resize(frame, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA), scale


def _hs_hist(bgr: np.ndarray) -> np.ndarray:
    """The hue and saturation histogram (HS_BINS) of a picture, summing to 1."""
    hist = cv2.calcHist([cv2.cvtColor(bgr, cv2.COLOR_BGR2HSV)], [0, 1], None, list(HS_BINS),
                        [0, 180, 0, 256])
    return hist / max(float(hist.sum()), 1.0)


def _cut_cells(img: np.ndarray, cells: tuple[int, int]) -> np.ndarray:
    """*img* (h x w x 3) cut into a grid of *cells* (across, down): C x P x 3."""
    h, w = img.shape[:2]
    cx, cy = cells
    ch, cw = h // cy, w // cx
    cut = img[:ch * cy, :cw * cx].reshape(cy, ch, cx, cw, 3)
    return np.ascontiguousarray(cut.transpose(0, 2, 1, 3, 4)).reshape(cx * cy, ch * cw, 3)


def _masked_ncc(seen: np.ndarray, face: np.ndarray, mask: np.ndarray) -> float:
    """Mean per-channel correlation of *seen* and *face* (C x P x 3) over the cells of
    *mask*."""
    return _ncc(*_centred_sums(seen[mask].reshape(-1, 3), face[mask].reshape(-1, 3))[2:])


def _centred_sums(x: np.ndarray, f: np.ndarray) -> tuple[np.ndarray, ...]:
    """Per channel of *x* and *f* (M x 3): their means, and the sums of products of the
    two, each less its mean (x f, x x, f f): what a gain fit and a correlation need."""
    xm, fm = x.mean(axis=0), f.mean(axis=0)
    xc, fc = x - xm, f - fm
    return xm, fm, (xc * fc).sum(axis=0), (xc * xc).sum(axis=0), (fc * fc).sum(axis=0)


def _ncc(cross: np.ndarray, xx: np.ndarray, ff: np.ndarray) -> float:
    """The mean over the channels of the correlation whose :func:`_centred_sums` these
    are."""
    return float((cross / np.sqrt(np.maximum(xx * ff, 1e-6))).mean())


def _halves(cells: tuple[int, int]) -> list[np.ndarray]:
    """The whole grid of *cells* (across, down), its top, bottom, left and right halves,
    and its outer thirds on those sides (a cover over half of the card leaves no half
    whole), as masks of its cells (row by row)."""
    cx, cy = cells
    rows, cols = np.divmod(np.arange(cx * cy), cx)
    tx, ty = max(1, round(cx / 3)), max(1, round(cy / 3))
    return [rows >= 0, rows < cy / 2, rows >= cy / 2, cols < cx / 2, cols >= cx / 2,
            rows < ty, rows >= cy - ty, cols < tx, cols >= cx - tx]


def visible_cells(seen: np.ndarray, face: np.ndarray, cells: tuple[int, int]
                  ) -> tuple[float, float, np.ndarray]:
    """What a card partly covered shows of its face: *seen* and *face* (C x P x 3,
    a grid of *cells*, prepared alike) -> (correlation over the cells seen, their share
    of the face's print (its variance: a plain cell anything plain explains), which
    cells: C bools).

    The cells seen are those the face explains, with one gain and offset per channel
    fitted on them, up to VISIBLE_FIT of the face's variance; the fit starts from the
    whole face and from each of its halves (top, bottom, left, right: an arm covers
    one side more), and fit and cells are settled in turn. Of all the states on the
    way, the one seeing most while correlating at least VISIBLE_SCORE (else the one
    correlating best) is kept. A fit whose gains differ across the
    channels by more than VISIBLE_GAIN_RATIO scores -1."""
    var = face.reshape(-1, 3).var(axis=0) + 1e-3
    # each cell's share of the face's print (a plain cell anything plain explains)
    energy = (((face - face.reshape(-1, 3).mean(axis=0)) ** 2) / var).mean(axis=(1, 2))
    energy = energy / max(float(energy.sum()), 1e-6)
    best = (-2.0, -1.0, np.zeros(len(seen), bool))
    best_key = (-1.0, -2.0)
    for keep in _halves(cells):
        for rounds in range(VISIBLE_ROUNDS + 1):
            xm, fm, cross, xx, ff = _centred_sums(seen[keep].reshape(-1, 3),
                                                  face[keep].reshape(-1, 3))
            gain = np.maximum(cross / np.maximum(ff, 1e-3), 1e-3)
            # each state on the way is weighed (growing from a half may take in a plain
            # patch of the cover that a plain part of the face explains, and drift)
            share = float(energy[keep].sum())
            score = _ncc(cross, xx, ff)
            if gain.max() > VISIBLE_GAIN_RATIO * gain.min():
                score = min(score, -1.0)  # the print's layout in other colours
            key = (share if score >= VISIBLE_SCORE else -1.0, score)
            if key > best_key:
                best_key, best = key, (score, share, keep)
            if rounds == VISIBLE_ROUNDS:
                break
            res = ((seen - gain * face - (xm - gain * fm)) ** 2 / (gain * gain * var)
                   ).mean(axis=(1, 2))
            new = res <= VISIBLE_FIT
            if not new.any() or (new == keep).all():
                break
            keep = new
    return best


def window_mask(seen: np.ndarray, cells: tuple[int, int], size: tuple[int, int],
                margin: int) -> np.ndarray:
    """The cells *seen* (C bools of a grid of *cells* across, down, row by row) as a mask
    (uint8 0 / 255) of an alignment window: a face of *size* (w, h px) with *margin* px
    round it, each cell over its part of the face, the rim's cells reaching out across
    the margin (a hand over a card's edge covers the table beyond it too)."""
    cx, cy = cells
    w, h = size
    grid = np.zeros((cy + 2, cx + 2), np.uint8)
    grid[1:-1, 1:-1] = np.asarray(seen, bool).reshape(cy, cx)
    grid[0], grid[-1] = grid[1], grid[-2]
    grid[:, 0], grid[:, -1] = grid[:, 1], grid[:, -2]
    # each pixel's cell: the margin, the grid's cells, the margin
    xs = np.searchsorted(margin + np.arange(cx + 1) * w / cx, np.arange(w + 2 * margin) + 0.5)
    ys = np.searchsorted(margin + np.arange(cy + 1) * h / cy, np.arange(h + 2 * margin) + 0.5)
    return grid[ys[:, None], xs[None, :]] * np.uint8(255)


def corner_turn(quad: Quad) -> float:
    """How far (radians) the most skewed of *quad*'s corners is from square."""
    q = np.asarray(quad, np.float64)
    a = Q.roll_corners(q, 1) - q  # each side, corner k to k+1
    b = Q.roll_corners(a, 3)  # the side before it
    cos = -(a * b).sum(axis=1) / np.maximum(np.hypot(*a.T) * np.hypot(*b.T), 1e-9)
    return float(np.abs(np.arccos(np.clip(cos, -1, 1)) - np.pi / 2).max())


def near_pairs(points: np.ndarray, radius: float) -> tuple[np.ndarray, np.ndarray]:
    """Index pairs (i < j) of *points* (N x 2) at most *radius* apart (a grid of cells
    *radius* wide: each point's own and the next cells' points only)."""
    if len(points) < 2:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    cell = np.floor(points / radius).astype(np.int64)
    cell -= cell.min(axis=0)
    span = int(cell[:, 1].max()) + 3
    key = (cell[:, 0] + 1) * span + cell[:, 1] + 1
    order = np.argsort(key, kind="stable")
    sk = key[order]
    out_i, out_j = [], []
    for dx, dy in ((0, 0), (0, 1), (1, -1), (1, 0), (1, 1)):
        target = key + dx * span + dy
        lo = np.searchsorted(sk, target, "left")
        hi = np.searchsorted(sk, target, "right")
        n = hi - lo
        i = np.repeat(np.arange(len(points)), n)
        j = order[np.repeat(lo - np.cumsum(n) + n, n) + np.arange(int(n.sum()))]
        out_i.append(i)
        out_j.append(j)
    i, j = np.concatenate(out_i), np.concatenate(out_j)
    ok = (i != j) & (np.hypot(*(points[i] - points[j]).T) <= radius)
    # (a cell's own points pair both ways: each pair once)
    pair = np.unique(np.minimum(i[ok], j[ok]) * len(points) + np.maximum(i[ok], j[ok]))
    return np.divmod(pair, len(points))


def corner_hypotheses(segs: np.ndarray, aspect: float, long_range: tuple[float, float]
                      ) -> np.ndarray:
    """Outlines (N x 4 x 2) of a card of outline ratio *aspect* (long / short) from its
    corners seen: two straight runs near square to each other (within CORNER_DEG), an
    end of each near their lines' meeting point (a rounded corner: within CORNER_PX,
    and quads.CORNER_SHARE of the side or CORNER_BLUR_PX), are two sides from a
    corner, the card between them, each run along its long or its short side; its size
    the least that holds both runs, and CORNER_SIZES - 1 steps larger (an arm hides how
    far the sides go on), long side within *long_range*."""
    # runs long enough that their direction is known to CORNER_DEG (their ends lie
    # within the polygon fit's tolerance of the edge)
    d = segs[:, 2:] - segs[:, :2]
    segs = segs[np.hypot(d[:, 0], d[:, 1])
                >= Q.POLY_TOLERANCE_PX / np.tan(np.radians(CORNER_DEG))]
    if len(segs) < 2:
        return np.zeros((0, 4, 2), np.float32)
    ends = np.concatenate([segs[:, :2], segs[:, 2:]])  # run k's ends: k and k + n
    n = len(segs)
    p, q = near_pairs(ends, CORNER_PX)
    i, j = p % n, q % n
    ok = i != j
    p, q, i, j = p[ok], q[ok], i[ok], j[ok]
    d = segs[:, 2:] - segs[:, :2]
    length = np.hypot(d[:, 0], d[:, 1])
    u = d / np.maximum(length, 1e-6)[:, None]
    cross = u[i, 0] * u[j, 1] - u[i, 1] * u[j, 0]
    ok = np.abs(cross) >= np.cos(np.radians(90.0 - CORNER_DEG))
    p, q, i, j, cross = p[ok], q[ok], i[ok], j[ok], cross[ok]
    # where the lines meet: a + ta u_i = b + tb u_j, from the ends that meet
    a, b = ends[p], ends[q]
    rel = b - a
    ta = (rel[:, 0] * u[j, 1] - rel[:, 1] * u[j, 0]) / cross
    corner = a + ta[:, None] * u[i]
    gap_a, gap_b = np.hypot(*(corner - a).T), np.hypot(*(corner - b).T)
    ok = (gap_a <= CORNER_PX) & (gap_b <= CORNER_PX)
    p, q, corner, gap_a, gap_b = p[ok], q[ok], corner[ok], gap_a[ok], gap_b[ok]
    # each run goes away from the corner, to its other end
    fa, fb = ends[(p + n) % (2 * n)], ends[(q + n) % (2 * n)]
    reach_a = np.hypot(*(fa - corner).T)
    reach_b = np.hypot(*(fb - corner).T)
    ok = (reach_a > gap_a) & (reach_b > gap_b)
    corner, fa, fb, reach_a, reach_b, gap_a, gap_b = (
        x[ok] for x in (corner, fa, fb, reach_a, reach_b, gap_a, gap_b))
    ua = (fa - corner) / np.maximum(reach_a, 1e-6)[:, None]
    ub = (fb - corner) / np.maximum(reach_b, 1e-6)[:, None]
    # one of each corner (the runs along a card's side are often several, and a
    # corner's two runs pair both ways): its place to 2 px, its sides' directions to
    # CORNER_DEG; the one whose runs reach furthest
    key = np.column_stack([np.round(corner / 2),
                           np.round(np.degrees(np.arctan2(ua[:, 1], ua[:, 0])) / CORNER_DEG),
                           np.round(np.degrees(np.arctan2(ub[:, 1], ub[:, 0])) / CORNER_DEG)])
    swap = key[:, 2] < key[:, 3]  # (a, b) and (b, a) the same corner
    key[swap] = key[swap][:, [0, 1, 3, 2]]
    order = np.argsort(-(reach_a + reach_b), kind="stable")
    _, first = np.unique(key[order].astype(np.int64), axis=0, return_index=True)
    one = order[first]
    corner, ua, ub, reach_a, reach_b, gap_a, gap_b = (
        x[one] for x in (corner, ua, ub, reach_a, reach_b, gap_a, gap_b))
    quads = []
    for a_long in (True, False):
        least = np.maximum(reach_a, reach_b * aspect) if a_long else \
            np.maximum(reach_a * aspect, reach_b)  # the long side's least length
        for k in range(CORNER_SIZES):
            long = least * CORNER_SIZE_STEP ** k
            la = long if a_long else long / aspect
            lb = long / aspect if a_long else long
            # a run stops short of the corner by a rounded corner at most (as
            # quads.CORNER_SHARE leaves out of a side's support), or the edges' blur
            sel = ((long >= long_range[0]) & (long <= long_range[1])
                   & (gap_a <= np.maximum(CORNER_BLUR_PX, Q.CORNER_SHARE * la))
                   & (gap_b <= np.maximum(CORNER_BLUR_PX, Q.CORNER_SHARE * lb)))
            la, lb, c = la[sel, None], lb[sel, None], corner[sel]
            quads.append(np.stack([c, c + ua[sel] * la, c + ua[sel] * la + ub[sel] * lb,
                                   c + ub[sel] * lb], axis=1))
    return np.concatenate(quads).astype(np.float32)


@dataclass
class _Hypotheses:
    """Outline hypotheses in the frame shrunk (*small*): its edge maps and pyramid, the
    quads (N x 4 x 2), the frame at the face grid's cells in them
    (:meth:`~vision.proposals.FaceGrid.seen_turns`) and their best turn's face grid
    correlation."""

    small: np.ndarray
    maps: Q.EdgeMaps
    pyramid: P.Pyramid
    hyp: np.ndarray
    seen: np.ndarray
    whole: np.ndarray
    long_aspect: float
    long_range: tuple[float, float]
    segs: np.ndarray


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
        self.upright = face[:, ::-1] if mirror else face
        self.align_faces: dict[int, np.ndarray] = {}
        self._tries: dict[bytes, list[Quad]] = {}  # :meth:`tries` in the frame at hand
        self._warps: dict[bytes, np.ndarray] = {}  # :meth:`warps` in the frame at hand
        self._dense: dict[tuple[int, int], tuple[np.ndarray, np.ndarray]] = {}  # :meth:`dense`
        #: a list to record each weighed candidate in (quad, score, parts score, the
        #: quarter turns' score, which try), for diagnostics; None: not recorded
        self.trace: list | None = None
        self.grid = P.FaceGrid(face[:, ::-1] if mirror else face, aspect)
        self.face_hs = _hs_hist(self.upright)
        self.square = abs(np.log(aspect)) < np.log(SQUARE_WITHIN)
        # how alike the face is to itself turned a quarter (squeezed to its shape): a
        # square card's moon sides rest on the difference
        quarter = cv2.resize(cv2.rotate(f, cv2.ROTATE_90_CLOCKWISE), self.size,
                             interpolation=cv2.INTER_AREA)
        self.quarter_alike = float(self.bank.scores(quarter[None])[0, 0])
        # the face's cells for what a covered card shows (visible_cells), and for a
        # square card its quarter turns' (its moon sides rest on telling them apart)
        self.cells = P.grid_shape(aspect)
        self.face_cells = _cut_cells(self.bank._cores[0], self.cells)
        self.quarter_cells = [_cut_cells(self.bank._prepare(cv2.resize(
            cv2.rotate(f, turn), self.size, interpolation=cv2.INTER_AREA)), self.cells)
            for turn in (cv2.ROTATE_90_CLOCKWISE, cv2.ROTATE_90_COUNTERCLOCKWISE)]

    def hypotheses(self, small: np.ndarray) -> _Hypotheses | None:
        """Outline hypotheses of the Twilight card's shape in *small* (the frame shrunk)
        from the straight runs of its edges (:func:`vision.quads.hypotheses`), weighed by
        how much their inside looks like the face (:class:`~vision.proposals.FaceGrid`);
        None without any."""
        h = small.shape[0]
        long_aspect = max(self.aspect, 1 / self.aspect)
        long_range = (TWILIGHT_LONG_RANGE[0] * h, TWILIGHT_LONG_RANGE[1] * h)
        maps = Q.edge_maps(small)
        segs = Q.segments(maps.edges, 0.4 * long_range[0] / long_aspect)
        seg_len = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
        segs = segs[seg_len <= long_range[1]]
        hyp = np.concatenate([Q.hypotheses(segs, long_aspect, long_range),
                              Q.pair_hypotheses(segs, long_aspect, long_range)])
        if not len(hyp):
            return None
        hyp = clockwise_all(hyp)
        pyramid = P.Pyramid(small)
        seen = self.grid.seen_turns(pyramid, hyp)
        return _Hypotheses(small, maps, pyramid, hyp, seen,
                           self.grid.weigh(seen, False)[0].max(axis=1), long_aspect, long_range,
                           segs)

    def candidates(self, hy: _Hypotheses, quick: bool = False) -> np.ndarray:
        """Outlines (K x 4 x 2, clockwise, px of the frame shrunk) the Twilight card may
        have: :func:`vision.quads.card_quads`'s steps on the hypotheses *hy*, ranked
        three ways — by how well their sides lie on edges, how much their inside looks
        like the face and how much its best half does (a card partly covered) — the best
        of each refined onto the edges and the best of each kept. *quick*: only the
        QUICK best by the face, refined (the card seen whole, as in most frames)."""
        hyp = hy.hyp
        face_rank = np.argsort(-hy.whole, kind="stable")
        if quick:
            idx = Q.rough_distinct(hyp, face_rank, QUICK)
        else:
            edge = Q.side_support(hyp, hy.maps, Q.ROUGH_SAMPLES).mean(axis=1)
            halves = self.grid.weigh_halves(hy.seen).max(axis=1)
            idx = Q.rough_distinct(hyp, np.argsort(-edge, kind="stable"), ROUGH_CANDIDATES)
            idx += [i for i in Q.rough_distinct(hyp, face_rank, FACE_ROUGH) if i not in idx]
            idx += [i for i in Q.rough_distinct(hyp, np.argsort(-halves, kind="stable"),
                                                 FACE_ROUGH) if i not in idx]
            colour = self.colour_likeness(hy.seen, self.colour_ratio(hy.small))
            idx += [i for i in Q.rough_distinct(hyp, np.argsort(-colour, kind="stable"),
                                                 FACE_ROUGH) if i not in idx]
        q = Q.refine(hyp[idx], hy.maps)
        d = np.hypot(*(Q.roll_corners(q, 1, axis=1) - q).transpose(2, 0, 1))
        long = np.maximum(d[:, 0] + d[:, 2], d[:, 1] + d[:, 3]) / 2
        short = np.minimum(d[:, 0] + d[:, 2], d[:, 1] + d[:, 3]) / 2
        lo, hi = hy.long_range
        ok = ((long >= lo * 0.9) & (long <= hi * 1.1) & (short >= 3)
              & (np.abs(np.log(long / np.maximum(short, 1e-6) / hy.long_aspect))
                 <= np.log(1.25)))
        if quick:
            return clockwise_all(q[ok])
        sides = Q.side_support(q, hy.maps)
        edge_score = np.where(ok, sides.mean(axis=1), -1.0)
        whole, halves = self.grid.scores_and_halves(hy.pyramid, q)
        face_score = np.where(ok, whole.max(axis=1), -2.0)
        half_score = np.where(ok, halves.max(axis=1), -2.0)
        keep = [i for i in Q.rough_distinct(q, np.argsort(-edge_score, kind="stable"),
                                             CANDIDATES) if edge_score[i] >= 0]
        keep += [i for i in Q.rough_distinct(q, np.argsort(-face_score, kind="stable"),
                                              FACE_CANDIDATES)
                 if face_score[i] > -2 and i not in keep]
        keep += [i for i in Q.rough_distinct(q, np.argsort(-half_score, kind="stable"),
                                              FACE_CANDIDATES)
                 if half_score[i] > -2 and i not in keep]
        return clockwise_all(q[keep])

    def colour_ratio(self, small: np.ndarray) -> np.ndarray:
        """The ratio of the face's hue and saturation histogram to the frame's (*small*,
        shrunk), at most 1 (Swain and Ballard's ratio histogram): a colour the cloth is
        full of counts little."""
        return np.minimum(self.face_hs / np.maximum(_hs_hist(small), 1e-6), 1.0)

    @staticmethod
    def colour_likeness(seen: np.ndarray, ratio: np.ndarray) -> np.ndarray:
        """How much each outline whose grid's cells are *seen* (as
        :meth:`~vision.proposals.FaceGrid.seen_turns` gives them) shows the face's
        colours where the rest of the frame does not: the mean of *ratio*
        (:meth:`colour_ratio`) over its cells."""
        cells = seen[0::2].reshape(-1, 1, 3)  # turn 0's cells (turn 1 reads the same)
        hsv = cv2.cvtColor(np.clip(cells, 0, 255).astype(np.uint8), cv2.COLOR_BGR2HSV)
        hb = hsv[:, 0, 0].astype(np.int32) * HS_BINS[0] // 180
        sb = hsv[:, 0, 1].astype(np.int32) * HS_BINS[1] // 256
        return ratio[hb, sb].reshape(len(seen) // 2, -1).mean(axis=1)

    def find(self, frame: np.ndarray) -> tuple[Quad, float] | None:
        """(quad TL, TR, BR, BL of the upright art in frame px, score) or None."""
        small, scale = shrunk(frame)
        self.new_frame()
        hy = self.hypotheses(small)
        if hy is not None:
            pyramid = hy.pyramid
            # first the few outlines most like the face: in most frames the card is one
            qs = self.candidates(hy, quick=True)
            if len(qs):
                score = self.turn_scores(frame, [q / scale for q in qs])
                found = self.verify(frame, qs / scale, score, QUICK_SCORE, QUICK_VERIFIED)
                if found is not None:
                    return found
            qs = self.candidates(hy)
        else:
            pyramid, qs = P.Pyramid(small), np.zeros((0, 4, 2), np.float32)
        if len(qs):
            # and each moved a little to fit the face's grid better: an outline a fifth of
            # the card off correlates less than a look-alike well placed
            qs = np.concatenate([qs, P.polish(self.grid, pyramid, qs)[0]])
            score, part = self.turn_and_part_scores(frame, [q / scale for q in qs])
            found = self.verify(frame, qs / scale, score)
            if found is not None and found[1] < QUICK_SCORE:
                found = self.outgrown(frame, found, pyramid, scale, hy.maps)
            if found is None:
                found = self.verify_visible(frame, qs / scale, pyramid, scale, hy.maps,
                                            part=part)
            if found is None and hy is not None:
                found = self.verify_corners(frame, hy, scale)
            if found is None:
                # a sheen or a lamp's reflection over the card, whose light swamps a
                # face of broad shapes in the plain correlation: the same test with the
                # light's smooth field left out (tuning hand 1800019: 0.38 plain, 0.90
                # so, at its outline)
                flat = self.turn_scores(frame, [q / scale for q in qs], flat=True)
                found = self.verify(frame, qs / scale, flat, flat=True)
            if found is not None:
                return found
        # no outline led to it: the face looked for all over the frame
        if self.trace is not None:
            self.trace.append("dense")
        dense, where = self.dense(pyramid)
        cells = pyramid.read(where).reshape(len(where), -1)
        score = self.grid.weigh(cells, False)[0]
        best = np.argsort(-score.max(axis=1), kind="stable")
        keep = Q.rough_distinct(dense, best, POLISHED)
        moved, score = P.polish(self.grid, pyramid, dense[keep])
        found = self.verify(frame, moved / scale, score, DENSE_SCORE)
        if found is None:
            found = self.covered_anywhere(frame, pyramid, scale,
                                          Q.edge_maps(small) if hy is None else hy.maps, cells)
        return found

    def covered_anywhere(self, frame: np.ndarray, pyramid: P.Pyramid, scale: float,
                         maps: Q.EdgeMaps, cells: np.ndarray | None = None
                         ) -> tuple[Quad, float] | None:
        """A card under a hand whose outline is lost in the hand's (no outline leads to
        it, nor its corners): the face looked for all over the frame (:meth:`dense`) by
        its best half on the grid, the POLISHED best moved to fit that half better, and
        the CORNER_CANDIDATES best weighed by what they show (:meth:`verify_visible`;
        *pyramid*, *scale*, *maps*: the frame shrunk, as it takes them; *cells*: the
        frame at the grid's cells of those outlines, when already read)."""
        if self.trace is not None:
            self.trace.append("dense halves")
        dense, where = self.dense(pyramid)
        if cells is None:
            cells = pyramid.read(where).reshape(len(where), -1)
        half = self.grid.weigh_halves(cells)
        keep = Q.rough_distinct(dense, np.argsort(-half.max(axis=1), kind="stable"), POLISHED)
        moved, score = P.polish(self.grid, pyramid, dense[keep], halves=True)
        moved = clockwise_all(moved)
        keep = Q.rough_distinct(moved, np.argsort(-score.max(axis=1), kind="stable"),
                                CORNER_CANDIDATES)
        return self.verify_visible(frame, moved[keep] / scale, pyramid, scale, maps,
                                   polished=True)

    def outgrown(self, frame: np.ndarray, found: tuple[Quad, float], pyramid: P.Pyramid,
                 scale: float, maps: Q.EdgeMaps) -> tuple[Quad, float]:
        """*found* (quad, score), a face seen less than clearly, or the card it is a part
        of: a frame's inside, a light middle, can look like the whole face where the
        card's own outline is lost in a cloth of its colours or under a hand (tuning
        deck 106: a light square in a bevelled frame, found at 0.4-0.46 of the card's
        size). Its outline grown by OUTGROW about its middle and each corner is
        verified as any outline is, and kept where the face fits it better; failing
        that, put to the covered card's check (*pyramid*, *scale*, *maps*: the frame
        shrunk, as :meth:`verify_visible` takes them)."""
        quad = np.asarray(found[0], np.float32)
        grown = clockwise_all(np.float32([(quad - a) * g + a for g in OUTGROW
                                          for a in (quad.mean(axis=0), *quad)]))
        score = self.turn_scores(frame, list(grown))
        better = self.verify(frame, grown, score, found[1], len(grown))
        if better is not None and better[1] > found[1]:
            return better
        # the card under a hand: what shows of it within a grown outline (the covered
        # card's check, as strict as where no outline shows the face whole), where
        # that is a card the part could be a part of: its sides at least PART_OF times
        # the part's (its score says how well the cells seen fit, not the whole face,
        # so it cannot outbid a card found whole; a card found under a hand, and
        # found again by what shows of it a tenth off, is no part of it)
        covered = self.verify_visible(frame, grown, pyramid, scale, maps)
        if covered is None or _area(covered[0]) < PART_OF ** 2 * _area(quad):
            return found
        return covered

    def new_frame(self) -> None:
        """Forget the tries and warps kept of the frame before."""
        self._tries, self._warps = {}, {}

    def dense(self, pyramid: P.Pyramid) -> tuple[np.ndarray, np.ndarray]:
        """The outlines the face is looked for in all over a frame shrunk to *pyramid*'s
        size (:func:`vision.proposals.dense_quads`), and where the face grid reads
        them there (:meth:`~vision.proposals.FaceGrid.where_turns`): the same in every
        frame of that size, made once."""
        h, w = (int(n) for n in pyramid.shapes[0])
        got = self._dense.get((w, h))
        if got is None:
            quads = P.dense_quads((w, h), self.aspect,
                                  (DENSE_LONG_MIN * h, TWILIGHT_LONG_RANGE[1] * h), 0.6, 6, 1.3)
            got = self._dense[(w, h)] = quads, self.grid.where_turns(pyramid, quads)
        return got

    def verify(self, frame: np.ndarray, quads: np.ndarray, score: np.ndarray,
               least: float = MIN_SCORE, tries: int = REFINED, flat: bool = False
               ) -> tuple[Quad, float] | None:
        """Of the *tries* best of *quads* (frame px, clockwise; *score* N x 4 their
        faces' correlation at each turn), the Twilight card, aligned with its face and
        refined on the frame's edges, its face correlating at least *least*: the first
        whose face shows clearly (QUICK_SCORE), else the best that passes; (quad, score)
        or None."""
        found = None
        for i in np.argsort(-score.max(axis=1), kind="stable")[:tries]:
            if score[i].max() < MIN_SCORE * REFINE_SHARE:
                break
            r = int(np.argmax(score[i]))
            rough = Q.roll_corners(quads[i], r)
            tries = self.tries(frame, rough, refined=False)
            # each try at the turns that give the taught shape (other turns squeeze the
            # face onto another shape: a part of the card, or something else)
            raw = self.turn_scores(frame, tries, flat)
            ts = np.where([self.fits(t) for t in tries], raw, -2.0)
            if ts.max() >= least:  # refined only where the face fits (tries)
                tries = self.tries(frame, rough)
                raw = np.vstack([raw, self.turn_scores(frame, tries[2:], flat)])
                ts = np.where([self.fits(t) for t in tries], raw, -2.0)
            k = int(np.argmax(ts.max(axis=1)))
            r = int(np.argmax(ts[k]))
            s = raw[k]
            quad = Q.roll_corners(tries[k], r)
            best = float(s[r])
            if ts[k, r] <= -2.0:
                continue
            part = float(self.warp_scores(self.warps(frame, [tries[k]])[r:r + 1], flat)[1][0])
            # the quarter turns (moon and sun sides swapped) must fit clearly worse: by
            # the deck's margin rule, with the face's likeness to its quarter turn (a
            # square card; an oblong card's shape already rules them out, its
            # quarter-turned warp is squeezed)
            other = max(s[(r + 1) % 4], s[(r + 3) % 4])
            c = self.quarter_alike if self.square else 0.0
            turn_sure = other <= best * (c + QUARTER_MARGIN_SHARE * (1 - c))
            if self.trace is not None:
                self.trace.append((quad, best, part, float(other), k))
            if best >= least and part >= PART_SCORE and turn_sure:
                if best >= QUICK_SCORE:
                    return quad, best  # a face seen clearly
                # a face seen less clearly: what shows of it must be the face
                if self.shown(frame, tries[k], r) < SHOWN_SCORE:
                    continue
                if found is None or best > found[1]:
                    found = quad, best  # a lesser one must not pre-empt a better one
        return found

    def seen_cells(self, frame: np.ndarray, quad: Quad, r: int) -> np.ndarray:
        """The face's cells as *quad* (frame px, clockwise) taken from its corner r shows
        them, prepared as the face's (C x P x 3, for :func:`visible_cells`)."""
        return _cut_cells(self.bank._prepared(self.warps(frame, [quad])[r:r + 1])[0],
                          self.cells)

    def shown(self, frame: np.ndarray, quad: Quad, r: int) -> float:
        """How well the cells of the face that *quad* (frame px, clockwise) taken from
        its corner r shows correlate with it (:func:`visible_cells`)."""
        return visible_cells(self.seen_cells(frame, quad, r), self.face_cells, self.cells)[0]

    def verify_visible(self, frame: np.ndarray, quads: np.ndarray, pyramid: P.Pyramid,
                       scale: float, maps: Q.EdgeMaps, polished: bool = False,
                       part: np.ndarray | None = None) -> tuple[Quad, float] | None:
        """A Twilight card partly covered, found by what it shows: of the
        VISIBLE_CANDIDATES best of *quads* (frame px, clockwise) by their faces' better
        half of PARTS, each rough, aligned with the face and refined on the frame's
        edges, at its turn of the taught shape whose parts fit best, the one whose cells
        seen (:func:`visible_cells`) correlate at least VISIBLE_SCORE and are the most,
        at least VISIBLE_SHARE of the face, its parts at least PART_SCORE (as a card
        found whole): (quad, score) or None. An outline whose cells seen correlate
        SHOWN_SCORE or more but under VISIBLE_SCORE is tried again aligned on those
        cells alone. A square card's quarter turns must fit those cells worse by the
        deck's margin rule. *part*: the quads' parts' scores (:meth:`part_scores`) when
        already weighed."""
        if not len(quads):
            return None
        if part is None:
            part = self.part_scores(frame, list(quads))
        best: tuple[float, float, Quad] | None = None
        top = np.argsort(-part.max(axis=1), kind="stable")[:VISIBLE_CANDIDATES]
        # each also moved to fit the face's best half (what an arm leaves of it), unless
        # *polished* so already
        moved = quads[top] if polished else \
            P.polish(self.grid, pyramid, quads[top] * scale, halves=True)[0] / scale
        for i, shifted in zip(top, clockwise_all(moved), strict=True):
            if part[i].max() < PART_SCORE * REFINE_SHARE:
                break
            rough = Q.roll_corners(quads[i], int(np.argmax(part[i])))
            tries = self.tries(frame, rough, refined=False)
            if not polished:
                p = self.part_scores(frame, [shifted])[0]
                shifted = Q.roll_corners(shifted, int(np.argmax(p)))
                tries += self.tries(frame, shifted, refined=False)
            ps = np.where([self.fits(t) for t in tries], self.part_scores(frame, tries), -2.0)
            if ps[:2].max() >= PART_SCORE:  # refined only where the parts fit (tries)
                t = self.tries(frame, rough)[2]
                tries.insert(2, t)
                ps = np.insert(ps, 2, np.where(self.fits(t), self.part_scores(frame, [t])[0],
                                               -2.0), axis=0)
            todo = list(enumerate(zip(tries, ps, strict=True)))
            while todo:
                j, (t, p) = todo.pop(0)
                r = int(np.argmax(p))
                if p[r] < PART_SCORE:  # (-2: no turn of the taught shape)
                    continue
                quad = Q.roll_corners(t, r)
                seen = self.seen_cells(frame, t, r)
                score, share, mask = visible_cells(seen, self.face_cells, self.cells)
                sides = np.sort(Q.side_support((quad * scale)[None], maps)[0])
                if self.trace is not None:
                    self.trace.append((quad, score, share, float(p[r]), f"visible {j}",
                                       sides, corner_turn(quad)))
                if (j != "on what shows" and SHOWN_SCORE <= score < VISIBLE_SCORE
                        and 0 < mask.sum() < len(mask)):
                    # what shows is the face, a little off: aligned again on it alone
                    moved_q = self.align(frame, quad, mask)
                    todo.append(("on what shows", (moved_q, np.where(
                        self.fits(moved_q), self.part_scores(frame, [moved_q])[0], -2.0))))
                if score < VISIBLE_SCORE or share < VISIBLE_SHARE:
                    continue
                if sides[-2] < VISIBLE_SIDES:
                    continue
                if self.square:
                    other = max(_masked_ncc(seen, f, mask) for f in self.quarter_cells)
                    c = self.quarter_alike
                    if other > score * (c + QUARTER_MARGIN_SHARE * (1 - c)):
                        continue
                if best is None or (share, score) > best[:2]:
                    best = (share, score, quad)
        return None if best is None else (best[2], best[1])

    def verify_corners(self, frame: np.ndarray, hy: _Hypotheses, scale: float
                       ) -> tuple[Quad, float] | None:
        """A Twilight card an arm covers so much of that no outline hypothesis of its
        size lies on it: outlines from its corners seen (:func:`corner_hypotheses`),
        the CORNER_CANDIDATES best by the face's best half on the grid weighed by what
        they show (:meth:`verify_visible`)."""
        hyp = corner_hypotheses(hy.segs, hy.long_aspect, hy.long_range)
        if not len(hyp):
            return None
        hyp = clockwise_all(hyp)
        half = self.grid.weigh_halves(self.grid.seen_turns(hy.pyramid, hyp)).max(axis=1)
        keep = Q.rough_distinct(hyp, np.argsort(-half, kind="stable"), CORNER_POLISHED)
        # each moved to fit the face's best half (a corner's runs are short: their
        # turn and the card's size are rough)
        moved, score = P.polish(self.grid, hy.pyramid, hyp[keep], halves=True)
        moved = clockwise_all(moved)
        keep = Q.rough_distinct(moved, np.argsort(-score.max(axis=1), kind="stable"),
                                CORNER_CANDIDATES)
        if self.trace is not None:
            self.trace.append(f"corners {len(hyp)}")
        return self.verify_visible(frame, moved[keep] / scale, hy.pyramid, scale, hy.maps,
                                   polished=True)

    def part_scores(self, frame: np.ndarray, quads: list[Quad]) -> np.ndarray:
        """The better half of PARTS of the face's correlation (N x 4) with each of
        *quads* (frame px, clockwise) taken from its corner r as the face's top left."""
        return self.warp_scores(self.warps(frame, quads))[1].reshape(len(quads), 4)

    def warps(self, frame: np.ndarray, quads: list[Quad]) -> np.ndarray:
        """Each of *quads* (frame px) warped upright to the face's size from its corner
        r as the face's top left (r = 0..3): 4N pictures, kept for the frame (the
        passes and checks weigh many outlines again)."""
        if not len(quads):
            return np.zeros((0, self.size[1], self.size[0], 3), np.uint8)
        quads = [np.asarray(q, np.float32) for q in quads]
        keys = [q.tobytes() for q in quads]
        new = {k: q for k, q in zip(keys, quads, strict=True) if k not in self._warps}
        if new:
            # all at once, from corners 0 and 1; from corners 2 and 3 the same pixels,
            # turned half round (to a grey level's rounding)
            firsts = [t for q in new.values() for t in (q, Q.roll_corners(q, 1))]
            turns = rectify_all(frame, firsts, self.size)
            turns = turns.reshape(len(new), 2, *turns.shape[1:])
            for key, pics in zip(new, turns, strict=True):
                self._warps[key] = np.concatenate([pics, pics[:, ::-1, ::-1]])
        return np.concatenate([self._warps[k] for k in keys])

    def tries(self, frame: np.ndarray, rough: Quad, refined: bool = True) -> list[Quad]:
        """*rough* (frame px, the art's TL first), it aligned with the face
        (:meth:`align`) and (with *refined*) that refined on the frame's edges: each
        outline weighed is tried so (kept for the frame: the passes and checks share
        them). The checks ask for the refined try (the costliest) only when the face
        already fits the rough or aligned one as the check asks of a card found (its
        least score, MIN_SCORE or more; a covered card's parts PART_SCORE): refining
        moves an outline a few px onto edges, it does not make a look-alike the card
        (tuning: of 130 outlines whose rough and aligned tries scored under MIN_SCORE,
        and 57 covered ones under PART_SCORE, the refined try passed for none; where
        the refined try was the best of a card found, the aligned one scored 0.97 and
        more)."""
        key = np.round(rough, 2).tobytes()
        if key not in self._tries:
            self._tries[key] = [rough, self.align(frame, rough)]
        tries = self._tries[key]
        if refined and len(tries) < 3:
            tries.append(Q.refine_to(frame, tries[1]))
        return list(tries[:3 if refined else 2])

    def fits(self, quad: Quad) -> np.ndarray:
        """Which of *quad*'s four turns (its corner r as the art's TL) have the taught
        shape, within SHAPE_WITHIN (both for a square card; two for an oblong one), with
        its corners within SKEW_DEG of square."""
        a = art_aspect(quad)
        shapes = np.array([a, 1 / max(a, 1e-6), a, 1 / max(a, 1e-6)])
        return ((np.abs(np.log(shapes / self.aspect)) <= np.log(SHAPE_WITHIN))
                & (corner_turn(quad) <= np.radians(SKEW_DEG)))

    def align(self, frame: np.ndarray, quad: Quad, seen: np.ndarray | None = None) -> Quad:
        """*quad* (the art's TL, TR, BR, BL, frame px) moved by an affine ECC alignment
        of the frame around it with the face (grey): the face, not the edges, pulls a
        rough outline onto the card. *seen*: the face's cells (:func:`visible_cells`)
        to align on, the rest left out (a hand over it), None for all. *quad* itself
        when ECC fails or slides off."""
        width = float(np.hypot(*(quad[1] - quad[0])))
        w = int(np.clip(round(width), 8, ALIGN_WIDTH_PX))
        h = max(8, round(w * self.aspect))
        tmpl = self.align_faces.get(w)
        if tmpl is None:
            f = cv2.cvtColor(cv2.resize(self.upright, (w, h), interpolation=cv2.INTER_AREA),
                             cv2.COLOR_BGR2GRAY).astype(np.float32)
            tmpl = self.align_faces[w] = cv2.GaussianBlur(f, (0, 0), 0.8)
        mask = None if seen is None else window_mask(seen, self.cells, (w, h),
                                                     ecc_margin(w, ALIGN_MARGIN))
        return ecc_align(frame, quad, tmpl, ALIGN_MARGIN, ALIGN_ITERATIONS, ALIGN_MAX_MOVE,
                         mask)

    def turn_and_part_scores(self, frame: np.ndarray, quads: list[Quad]
                             ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`turn_scores` and :meth:`part_scores` at once."""
        whole, part = self.warp_scores(self.warps(frame, quads))
        return whole.reshape(len(quads), 4), part.reshape(len(quads), 4)

    def turn_scores(self, frame: np.ndarray, quads: list[Quad], flat: bool = False
                    ) -> np.ndarray:
        """Correlation (N x 4) of the face with each of *quads* (frame px, clockwise)
        taken from its corner r as the face's top left (r = 0..3); *flat*: the light's
        smooth field left out (:meth:`warp_scores`)."""
        return self.warp_scores(self.warps(frame, quads), flat)[0].reshape(len(quads), 4)

    def warp_scores(self, pics: np.ndarray, flat: bool = False
                    ) -> tuple[np.ndarray, np.ndarray]:
        """The face's correlation with each of *pics* (N x h x w x 3 uint8, at the face's
        size) and the better half of its PARTS' (:meth:`~vision.faces.FaceBank.one_face`):
        N each. *flat*: each picture and the face without the smooth light field
        (:meth:`~vision.faces.FaceBank.flattened`: a sheen over the card)."""
        return (self.bank.flattened() if flat else self.bank).one_face(pics, 0, PARTS)

    def light(self, frame: np.ndarray, quad: Quad) -> tuple[float, float, float]:
        """Per channel, how much brighter the Twilight card at *quad* shows than taught."""
        seen = rectify(frame, quad, self.size).reshape(-1, 3).astype(np.float32).mean(axis=0)
        taught = self.face.reshape(-1, 3).astype(np.float32).mean(axis=0)
        g = seen / np.maximum(taught, 1.0)
        return (float(g[0]), float(g[1]), float(g[2]))
