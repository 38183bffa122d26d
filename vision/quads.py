"""Card-like quadrilaterals anywhere in a picture, at any orientation.

A card is a flat rectangle (rounded corners) of a known outline ratio. Its four sides
are straight edges, whatever its print, the light or the cloth, and the uppermost
card of a pile is the one whose four sides are all seen. So:

1. :class:`EdgeMaps` — Canny edges of the picture (the strongest colour channel's
   gradient, so a card of the cloth's brightness but another hue still has edges),
   sorted by the edge line's direction into four overlapping bins and thickened by a
   pixel. A straight side of a card lies on edge pixels of its own direction.
2. :func:`segments` — the straight runs of the edge curves (a polygon fit).
3. :func:`hypotheses` — every segment long enough to be most of a card's side says
   where a card may lie: on either side of it, the segment as its long side or its
   short side (the other side from the outline ratio).
4. :func:`support` — the share of points along a quadrilateral's four sides (corners,
   where cards are rounded, left out) that lie on edges of the side's direction; the
   *least* of its four sides' shares, so a quad is only as good as its worst side.
5. :func:`refine` — each side moved and turned a little to lie best on the edges,
   the corners where the sides meet (this also takes in the camera's perspective).

Coordinates are picture px; a quad is 4x2 float32, corners in order round the quad.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

#: Canny hysteresis thresholds on the strongest channel's Sobel gradient (L2, 3x3
#: kernel; a step of d grey levels gives about 4 d): an edge is a step of at least
#: EDGE_HIGH / 4 grey levels somewhere along it, continued down to EDGE_LOW / 4. A card's
#: outline against any cloth is a step of tens of levels; sensor noise in dim light is
#: a few.
EDGE_LOW = 40
EDGE_HIGH = 100
#: A picture's contrast: the span from its CONTRAST_PERCENT darkest to lightest level;
#: the thresholds are lowered for a dim picture at most MAX_GAIN times (past that,
#: sensor noise makes edges everywhere).
CONTRAST_PERCENT = 1.0
MAX_GAIN = 4.0
#: Blur (sigma, px) before the edges are found: a cloth's grain and sensor noise a
#: px or two fine fade, while a card's outline, a step between wide areas, stays.
PRE_BLUR_PX = 0.7
#: Edges are kept only where the gradient (Sobel, after PRE_BLUR_PX) is at least this
#: many times the sensor noise's deviation about them (:func:`_local_noise`): white
#: noise alone reaches 5.4 deviations at 1% of its pixels after that blur (2.1 at the
#: median). Tuning (blocks A-C, 44 hands): dim, noisy hands 1800019 (0 -> 27 of 28
#: plays, with the flattened Twilight check) and 1800021 (13 -> 14, its wrong play
#: gone); sides right 746 -> 750 of 813, wrong 8 -> 6. At 6.6 (0.1%): right 746, wrong 6.
NOISE_FLOOR = 5.4
#: The window (px) the sensor noise is taken over: a median, so a pattern's lines in
#: it (a few of its pixels) do not count as noise.
NOISE_WINDOW = 10
#: Width (degrees) of each of the four direction bins (centred 45 degrees apart, so
#: they overlap: a side is looked up in the bin nearest its direction, within 22.5).
BIN_HALF_WIDTH_DEG = 30.0
#: Share of each side, at either end, left out of :func:`support` (rounded corners,
#: and where two cards' corners meet).
CORNER_SHARE = 0.12
#: Share of a card's side that is straight (the rest is its rounded corners): a
#: segment that long is a whole side.
FULL_SIDE = 0.92
#: Two segments this near parallel (degrees) may be a card's opposite sides; the
#: longest PAIR_SEGMENTS segments of a picture are paired.
PARALLEL_DEG = 6.0
PAIR_SEGMENTS = 160
#: A quad is card-like when its outline ratio is within this factor of the cards': a
#: camera tilted 15 degrees changes it by 4%, an outline refined freely a little more.
ASPECT_TOLERANCE = 1.25
#: Points sampled along each side for :func:`support` (and for the first, rough
#: ranking of the many proposals).
SIDE_SAMPLES = 16
ROUGH_SAMPLES = 8
#: Polygon fit of the edge curves: tolerance (px) of :func:`cv2.approxPolyDP`.
POLY_TOLERANCE_PX = 1.5
#: :func:`refine`: offsets each side is tried at in each round (shares of the quad's
#: shorter side: a hypothesis from one segment is a few percent off, more under
#: perspective; then finer), at least a px apart, and turns (degrees).
REFINE_OFFSETS = (np.linspace(-0.12, 0.12, 9), np.linspace(-0.03, 0.03, 7))
REFINE_TURNS_DEG = ((-2.0, 0.0, 2.0), (-1.0, 0.0, 1.0))


#: A quad's corners from corner r on (the same as ``np.roll(q, -r)`` along the
#: corners, without its cost on small arrays): ``q[CORNERS_FROM[r]]``.
CORNERS_FROM = [np.array([(i + r) % 4 for i in range(4)]) for r in range(4)]


def roll_corners(q: np.ndarray, r: int, axis: int = 0) -> np.ndarray:
    """*q* (a quad, 4 x ..., or with *axis* 1 quads, N x 4 x ...) from its corner r on:
    ``np.roll(q, -r, axis)``."""
    index = CORNERS_FROM[r % 4]
    return q[index] if axis == 0 else q[:, index]


@dataclass
class EdgeMaps:
    """Edges of one picture by direction: ``bins[k]`` holds edge pixels whose line runs
    within BIN_HALF_WIDTH_DEG of k * 45 degrees (x right, y down), thickened by one px.
    They are kept with a border of one empty px all round (*padded*, 4 x H+2 x W+2): a
    point off the picture, clipped onto that border, is on no edge."""

    edges: np.ndarray
    padded: np.ndarray  # 4 x (H + 2) x (W + 2) uint8 (0/1), the border 0

    @property
    def bins(self) -> np.ndarray:
        """4 x H x W uint8 (0/1)."""
        return self.padded[:, 1:-1, 1:-1]

    @property
    def shape(self) -> tuple[int, int]:
        return self.edges.shape


#: An edge pixel's line direction m (0..180 degrees, x right, y down) lies in bin b
#: when |m - 90| <= BIN_HALF_WIDTH_DEG for m = (its direction - 45 b + 90) mod 180:
#: with y = its direction - 45 b + 90 (-45..270), m is y, or y - 180 from 180 on
#: (exactly), or y + 180 (135 and more) below 0; and m - 90 is exact from 45 on. So
#: the bin holds y within 90 -+ BIN_HALF_WIDTH_DEG, or within that + 180.
_BIN_LO, _BIN_HI = 90.0 - BIN_HALF_WIDTH_DEG, 90.0 + BIN_HALF_WIDTH_DEG


def edge_maps(img: np.ndarray, low: float = EDGE_LOW, high: float = EDGE_HIGH) -> EdgeMaps:
    """The :class:`EdgeMaps` of *img* (B,G,R or grey uint8): the edges of each colour
    channel together (a card as bright as the cloth but of another hue has edges in
    some channel), each edge pixel's direction from its strongest channel. The
    thresholds are for a picture spanning the grey levels (its CONTRAST_PERCENT darkest
    to lightest); a dimmer one's are lowered as much (at most MAX_GAIN times)."""
    lo, hi = np.percentile(img[::4, ::4], (CONTRAST_PERCENT, 100 - CONTRAST_PERCENT))
    gain = float(np.clip(255.0 / max(float(hi - lo), 1.0), 1.0, MAX_GAIN))
    low, high = low / gain, high / gain
    raw = img
    img = cv2.GaussianBlur(img, (0, 0), PRE_BLUR_PX)
    channels = cv2.split(img) if img.ndim == 3 else [img]
    edges = None
    for ch in channels:
        e = cv2.Canny(ch, low, high, L2gradient=True)
        edges = e if edges is None else cv2.bitwise_or(edges, e)
    h, w = edges.shape
    padded = np.zeros((4, h + 2, w + 2), np.uint8)
    pts = cv2.findNonZero(edges)
    if pts is None:
        return EdgeMaps(edges, padded)
    pts = pts.reshape(-1, 2)
    x, y = pts[:, 0], pts[:, 1]
    at = y * w + x
    # (np.take: the same values as indexing, gathered faster)
    dx = np.take(cv2.Sobel(img, cv2.CV_16S, 1, 0, ksize=3).reshape(h * w, -1), at, axis=0)
    dy = np.take(cv2.Sobel(img, cv2.CV_16S, 0, 1, ksize=3).reshape(h * w, -1), at, axis=0)
    # an edge the sensor's noise about it could make is none (a dim room's gain, and
    # more so a sheen's brighter light, make such edges everywhere: the card's outline
    # is lost among them)
    # (each channel's squared gradient, exact in int32)
    square = dx.astype(np.int32) ** 2 + dy.astype(np.int32) ** 2
    noise = _local_noise(raw)[y // 2, x // 2]
    strong = square.max(axis=1) >= (NOISE_FLOOR * noise) ** 2
    if not strong.all():
        edges.reshape(-1)[at[~strong]] = 0
        x, y, at = x[strong], y[strong], at[strong]
        dx, dy, square = dx[strong], dy[strong], square[strong]
        if not len(at):
            return EdgeMaps(edges, padded)
    if dx.shape[1] > 1:  # the strongest channel's gradient
        k = np.argmax(square, axis=1)
        pick = np.arange(len(k)) * dx.shape[1] + k
        gx = np.take(dx.reshape(-1), pick).astype(np.float32)
        gy = np.take(dy.reshape(-1), pick).astype(np.float32)
    else:
        gx, gy = dx[:, 0].astype(np.float32), dy[:, 0].astype(np.float32)
    # the edge line's direction is the gradient's turned a quarter (mod 180 by hand:
    # numpy's float remainder is slow, and the angle here lies within -90..270)
    deg = np.degrees(np.arctan2(gy, gx)) + 90.0
    ang = np.where(deg < 0, deg + 180.0, np.where(deg >= 180.0, deg - 180.0, deg))
    at = (y + 1) * (w + 2) + x + 1
    kernel = np.ones((3, 3), np.uint8)
    for b in range(4):
        t = ang - 45.0 * b + 90.0
        sel = ((t >= _BIN_LO) & (t <= _BIN_HI)) | ((t >= _BIN_LO + 180.0) & (t <= _BIN_HI + 180.0))
        padded[b].reshape(-1)[at[sel]] = 1
        padded[b] = cv2.dilate(padded[b], kernel)
    # the border stays empty (a dilated edge at the picture's rim spilled onto it)
    padded[:, 0] = 0
    padded[:, -1] = 0
    padded[:, :, 0] = 0
    padded[:, :, -1] = 0
    return EdgeMaps(edges, padded)


_NOISE_KERNEL = np.float32([[1, -2, 1], [-2, 4, -2], [1, -2, 1]])


def _local_noise(img: np.ndarray) -> np.ndarray:
    """The sensor noise (the grey levels' standard deviation) about each pixel of *img*
    (uint8), at half its size: Immerkaer's estimate, from the picture's second
    differences (a smooth picture has none; white noise of deviation s gives a median
    |response| of 4.05 s), the median over a window NOISE_WINDOW px across (the lines
    of a pattern are few of its pixels), each channel's the largest."""
    a = cv2.convertScaleAbs(cv2.filter2D(img, cv2.CV_16S, _NOISE_KERNEL))
    if a.ndim == 3:
        b, g, r = cv2.split(a)
        a = cv2.max(cv2.max(b, g), r)
    med = cv2.medianBlur(np.ascontiguousarray(a[::2, ::2]), NOISE_WINDOW // 2 | 1)
    return med.astype(np.float32) / 4.05


def segments(edges: np.ndarray, min_length: float) -> np.ndarray:
    """Straight runs (N x 4: x0, y0, x1, y1) of at least *min_length* px along the
    edge curves of *edges*."""
    contours, _ = cv2.findContours(edges, cv2.RETR_LIST, cv2.CHAIN_APPROX_NONE)
    polys = [cv2.approxPolyDP(c, POLY_TOLERANCE_PX, closed=False)
             for c in contours if len(c) >= min_length]
    if not polys:
        return np.zeros((0, 4), np.float32)
    # all polygons' points in a row: a segment runs from each point but a polygon's
    # last to the next
    pts = np.concatenate(polys).reshape(-1, 2).astype(np.float32)
    starts = np.ones(len(pts), bool)
    starts[np.cumsum([len(p) for p in polys]) - 1] = False
    i = np.flatnonzero(starts)
    a, b = pts[i], pts[i + 1]
    keep = np.hypot(*(b - a).T) >= min_length
    if not keep.any():
        return np.zeros((0, 4), np.float32)
    segs = np.hstack([a[keep], b[keep]])
    # a closed curve walks each side twice (there and back): keep one of each (the
    # ends rounded to 2 px, as one integer)
    key = np.round(np.hstack([np.minimum(segs[:, :2], segs[:, 2:]),
                              np.maximum(segs[:, :2], segs[:, 2:])]) / 2).astype(np.int64)
    key -= key.min()
    span = int(key.max()) + 1
    one = ((key[:, 0] * span + key[:, 1]) * span + key[:, 2]) * span + key[:, 3]
    _, first = np.unique(one, return_index=True)
    return segs[np.sort(first)]


def hypotheses(segs: np.ndarray, aspect: float, long_range: tuple[float, float],
               full_side: float = FULL_SIDE, long_px: float | None = None) -> np.ndarray:
    """Quads (N x 4 x 2) of cards of outline ratio *aspect* (long / short) whose long
    side is within *long_range* px, one of whose sides each segment may be: the
    segment as most of the long or the short side, the card on either side of it; and,
    given the cards' expected long side *long_px*, a card that size with the segment
    on its long or short side's middle (a side seen only in part)."""
    if not len(segs):
        return np.zeros((0, 4, 2), np.float32)
    a, b = segs[:, :2], segs[:, 2:]
    mid = (a + b) / 2
    d = b - a
    length = np.hypot(d[:, 0], d[:, 1])[:, None]
    u = d / np.maximum(length, 1e-6)
    n = np.stack([-u[:, 1], u[:, 0]], axis=1)
    quads = []
    sides = [length / full_side]
    if long_px is not None:
        sides.append(None)
    for side in sides:
        for along_long in (True, False):
            if side is None:  # the expected size
                s = np.full_like(length, long_px if along_long else long_px / aspect)
                ok = (length[:, 0] <= s[:, 0])
            else:
                s = side
                long = s if along_long else s * aspect
                ok = ((long >= long_range[0]) & (long <= long_range[1]))[:, 0]
            other = s / aspect if along_long else s * aspect
            for sign in (1.0, -1.0):
                half = u * s / 2
                far = n * other * sign
                q = np.stack([mid - half, mid + half, mid + half + far, mid - half + far], axis=1)
                quads.append(q[ok])
    return np.concatenate(quads).astype(np.float32)


def pair_hypotheses(segs: np.ndarray, aspect: float, long_range: tuple[float, float],
                    limit: int = PAIR_SEGMENTS) -> np.ndarray:
    """Quads (N x 4 x 2) from pairs of parallel segments (within PARALLEL_DEG) facing
    each other: two opposite sides of a card, however little of each shows. Their
    distance is the card's short side (the long one from *aspect*) or its long side;
    the quad is centred between them. Only the *limit* longest segments pair up."""
    if len(segs) < 2:
        return np.zeros((0, 4, 2), np.float32)
    d = segs[:, 2:] - segs[:, :2]
    length = np.hypot(d[:, 0], d[:, 1])
    keep = np.argsort(-length)[:limit]
    segs, d, length = segs[keep], d[keep], length[keep]
    u = d / np.maximum(length, 1e-6)[:, None]
    mid = (segs[:, :2] + segs[:, 2:]) / 2
    ang = np.degrees(np.arctan2(u[:, 1], u[:, 0])) % 180.0
    i, j = np.triu_indices(len(segs), 1)
    dang = np.abs((ang[i] - ang[j] + 90.0) % 180.0 - 90.0)
    ok = dang < PARALLEL_DEG
    i, j = i[ok], j[ok]
    n = np.stack([-u[i, 1], u[i, 0]], axis=1)
    rel = mid[j] - mid[i]
    dist = np.abs((rel * n).sum(axis=1))
    along = (rel * u[i]).sum(axis=1)
    # facing each other: each overlaps the other's span along the sides
    ok = np.abs(along) < (length[i] + length[j]) / 2
    i, j, n, dist = i[ok], j[ok], n[ok], dist[ok]
    centre = (mid[i] + mid[j]) / 2
    ui = u[i]
    quads = []
    for across_short in (True, False):
        across = dist
        other = dist * aspect if across_short else dist / aspect
        long = np.maximum(across, other)
        sel = (long >= long_range[0]) & (long <= long_range[1])
        c, uu, nn = centre[sel], ui[sel], n[sel]
        ha = (uu * other[sel][:, None]) / 2
        hn = (nn * across[sel][:, None]) / 2
        quads.append(np.stack([c - ha - hn, c + ha - hn, c + ha + hn, c - ha + hn], axis=1))
    return np.concatenate(quads).astype(np.float32)


def side_support(quads: np.ndarray, maps: EdgeMaps, samples: int = SIDE_SAMPLES
                 ) -> np.ndarray:
    """Share (N x 4) of each side's *samples* points on edges of its direction."""
    if not len(quads):
        return np.zeros((0, 4), np.float32)
    q = np.asarray(quads, np.float32)
    p0 = q.reshape(-1, 2)
    p1 = roll_corners(q, 1, axis=1).reshape(-1, 2)
    return _line_support(p0, p1, maps, samples).reshape(len(q), 4)


def run_on(quads: np.ndarray, maps: EdgeMaps, reach: tuple[float, float] = (0.15, 0.45)
           ) -> np.ndarray:
    """Share (N x 8) of points on edges of each side's direction along the side's line
    continued past either corner, from *reach*[0] to *reach*[1] of the quad's shorter
    side beyond it (side i past its start corner, then past its end): a card's sides
    end at its corners, a cloth's lines (gingham, planks) run on."""
    if not len(quads):
        return np.zeros((0, 8), np.float32)
    q = np.asarray(quads, np.float32)
    a, b = q, roll_corners(q, 1, axis=1)
    d = np.hypot(*(b - a).transpose(2, 0, 1))
    short = np.minimum(d[:, 0] + d[:, 2], d[:, 1] + d[:, 3]) / 2
    u = (b - a) / np.maximum(d, 1e-6)[..., None]
    r0, r1 = (short[:, None, None] * np.float32(r) for r in reach)
    before = _line_support((a - u * r0).reshape(-1, 2), (a - u * r1).reshape(-1, 2), maps)
    after = _line_support((b + u * r0).reshape(-1, 2), (b + u * r1).reshape(-1, 2), maps)
    return np.concatenate([before.reshape(-1, 4), after.reshape(-1, 4)], axis=1)


def support(quads: np.ndarray, maps: EdgeMaps) -> np.ndarray:
    """Each quad's worst side's :func:`side_support` (N)."""
    s = side_support(quads, maps)
    return s.min(axis=1) if len(s) else np.zeros(0, np.float32)


#: :func:`_line_support`'s points along a segment (0..1), by their count: made once.
_SAMPLE_AT: dict[int, np.ndarray] = {}


def _line_support(p0: np.ndarray, p1: np.ndarray, maps: EdgeMaps,
                  samples: int = SIDE_SAMPLES) -> np.ndarray:
    """Share of points on edges of the line's direction along segments p0 -> p1
    (M x 2 each; their ends, CORNER_SHARE each, left out)."""
    t = _SAMPLE_AT.get(samples)
    if t is None:
        t = _SAMPLE_AT[samples] = np.linspace(CORNER_SHARE, 1 - CORNER_SHARE, samples,
                                              dtype=np.float32)
    d = p1 - p0
    k = np.round(np.degrees(np.arctan2(d[:, 1], d[:, 0])) / 45.0).astype(np.int64) % 4
    h, w = maps.shape
    # the points rounded to px (x, y apart: M x samples each), clipped onto the padded
    # bins' empty border when off the picture
    # (p0 + d t + 0.5 as before, in place)
    x = d[:, :1] * t
    x += p0[:, :1]
    x += 0.5
    y = d[:, 1:] * t
    y += p0[:, 1:]
    y += 0.5
    x = x.astype(np.int32)
    y = y.astype(np.int32)
    np.clip(x, -1, w, out=x)
    np.clip(y, -1, h, out=y)
    row = w + 2
    y *= row
    x += y
    x += ((k * (h + 2) + 1) * row + 1).astype(np.int32)[:, None]
    on = np.take(maps.padded.reshape(-1), x)  # M x samples, 0 or 1 (take: a faster gather)
    if samples % 8 == 0:
        # eight 0/1 bytes at a time: their sum is the top byte of the word times 0x0101..
        words = on.view(np.uint64) * np.uint64(0x0101010101010101) >> np.uint64(56)
        hits = words.sum(axis=1)
    else:
        hits = on.sum(axis=1, dtype=np.int32)
    return hits / np.float64(samples)


def _refine_round(shares: np.ndarray, degrees: tuple[float, ...]) -> tuple:
    """One round of :func:`refine`, made once: its turns' cosines and sines, the
    offsets in steps from the middle one (float32), a step's share of the quad's
    shorter side, and the index of the try neither moved nor turned."""
    turns = np.radians(np.asarray(degrees, np.float32))
    n_t, n_o = len(turns), len(shares)
    return (np.cos(turns), np.sin(turns), np.arange(n_o, dtype=np.float32) - n_o // 2,
            float(shares[1] - shares[0]), (n_t // 2) * n_o + n_o // 2)


_REFINE_ROUNDS = [_refine_round(shares, degrees)
                  for shares, degrees in zip(REFINE_OFFSETS, REFINE_TURNS_DEG, strict=True)]


def refine(quads: np.ndarray, maps: EdgeMaps) -> np.ndarray:
    """*quads* (N x 4 x 2) with each side moved (REFINE_OFFSETS along its normal) and
    turned (REFINE_TURNS_DEG about its middle) to lie best on edges of its direction,
    and the corners where the refined sides' lines meet."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    if not len(q):
        return q
    for cos, sin, base, share, centre in _REFINE_ROUNDS:
        n_t, n_o = len(cos), len(base)
        a = q
        b = roll_corners(q, 1, axis=1)
        mid = (a + b) / 2
        dv = b - a
        d = np.hypot(dv[..., 0], dv[..., 1])                              # N x 4
        short = np.minimum(d[:, 0] + d[:, 2], d[:, 1] + d[:, 3]) / 2
        step = np.maximum(short * share, 1.0)
        offs = base[None, :] * step[:, None]
        half = d[..., None] / 2                                           # N x 4 x 1
        u = dv / np.maximum(2 * half, 1e-6)
        ut = np.stack([cos * u[..., :1] - sin * u[..., 1:], sin * u[..., :1] + cos * u[..., 1:]],
                      axis=-1)
        nt = np.stack([-ut[..., 1], ut[..., 0]], axis=-1)
        m = mid[:, :, None, None, :] + nt[:, :, :, None, :] * offs[:, None, None, :, None]
        hv = (ut * half[..., None])[:, :, :, None, :]
        p0 = (m - hv).reshape(-1, 2)
        p1 = (m + hv).reshape(-1, 2)
        score = _line_support(p0, p1, maps).reshape(len(q), 4, n_t * n_o)
        best = np.argmax(score, axis=2)
        keep = score[..., centre] >= score.max(axis=2)
        best = np.where(keep, centre, best)
        p0 = p0.reshape(len(q), 4, n_t * n_o, 2)
        p1 = p1.reshape(len(q), 4, n_t * n_o, 2)
        l0 = np.take_along_axis(p0, best[..., None, None], 2)[:, :, 0]
        l1 = np.take_along_axis(p1, best[..., None, None], 2)[:, :, 0]
        # corner i is where side i-1 meets side i
        q = _intersect(roll_corners(l0, -1, axis=1), roll_corners(l1, -1, axis=1), l0, l1, q)
    return q.astype(np.float32)


def _intersect(a: np.ndarray, b: np.ndarray, c: np.ndarray, d: np.ndarray,
               fallback: np.ndarray) -> np.ndarray:
    """Where lines a-b and c-d meet (arrays of points, ... x 2); *fallback* where they
    are parallel."""
    r, s = b - a, d - c
    den = r[..., 0] * s[..., 1] - r[..., 1] * s[..., 0]
    ok = np.abs(den) > 1e-6
    t = ((c[..., 0] - a[..., 0]) * s[..., 1] - (c[..., 1] - a[..., 1]) * s[..., 0]) \
        / np.where(ok, den, 1.0)
    p = a + t[..., None] * r
    return np.where(ok[..., None], p, fallback)


def _overlap(a: np.ndarray, b: np.ndarray) -> float:
    """Intersection over the smaller area of two convex quads."""
    inter, _ = cv2.intersectConvexConvex(a.astype(np.float32), b.astype(np.float32))
    small = min(abs(cv2.contourArea(a)), abs(cv2.contourArea(b)))
    return float(inter) / max(small, 1e-6)


def distinct(quads: list[np.ndarray], scores: list[float], same: float = 0.8
             ) -> list[int]:
    """Indices of *quads* in order of *scores* (best first), leaving out a quad that
    overlaps a better one by more than *same* of the smaller's area."""
    order = np.argsort(-np.asarray(scores), kind="stable")
    kept: list[int] = []
    for i in order:
        if all(_overlap(quads[i], quads[j]) < same for j in kept):
            kept.append(int(i))
    return kept


def rough_distinct(quads: np.ndarray, order: np.ndarray, limit: int) -> list[int]:
    """Up to *limit* indices from *order* (best first) whose quads differ from every
    earlier one kept: centre a quarter of the short side away, or size or turn apart."""
    idx = np.asarray(order[: limit * 4])
    if not len(idx):
        return []
    q = quads[idx]
    c = q.mean(axis=1)
    d01 = q[:, 1] - q[:, 0]
    d12 = q[:, 2] - q[:, 1]
    s1 = np.hypot(d01[:, 0], d01[:, 1])
    s2 = np.hypot(d12[:, 0], d12[:, 1])
    axis = np.where((s1 >= s2)[:, None], d01, d12)
    ang = np.degrees(np.arctan2(axis[:, 1], axis[:, 0])) % 180.0
    long = np.maximum(np.maximum(s1, s2), 1e-6)
    short = np.minimum(s1, s2)
    # alike: centres near (the cheap test first), then turn and size where they are
    same = np.hypot(c[:, None, 0] - c[None, :, 0], c[:, None, 1] - c[None, :, 1]) \
        < 0.25 * short[:, None]
    i, j = np.nonzero(same)
    same[i, j] = ((np.abs((ang[i] - ang[j] + 90.0) % 180.0 - 90.0) < 8.0)
                  & (np.abs(np.log(long[i] / long[j])) < 0.1))
    # each quad kept leaves out the later ones alike; the next kept is the first left
    free = np.ones(len(idx), bool)
    kept = [0]
    while len(kept) < limit and kept[-1] + 1 < len(idx):
        i = kept[-1]
        rest = free[i + 1:]
        rest &= ~same[i + 1:, i]
        nxt = int(rest.argmax())
        if not rest[nxt]:
            break
        kept.append(i + 1 + nxt)
    return [int(idx[i]) for i in kept]


def card_hypotheses(maps: EdgeMaps, aspect: float, long_range: tuple[float, float],
                    long_px: float | None = None) -> np.ndarray:
    """Rough outlines (N x 4 x 2) of cards of outline ratio *aspect* (long / short) and
    long side within *long_range* px from the straight runs of the edges of *maps*
    (:func:`hypotheses` from each run, :func:`pair_hypotheses` from runs facing each
    other; *long_px*: the cards' expected long side, when known)."""
    short_min = long_range[0] / aspect
    segs = segments(maps.edges, 0.4 * short_min)
    # no side of a card is longer than its long side (a longer run is a plank joint,
    # a stripe of the cloth, or a side merged with one)
    seg_len = np.hypot(segs[:, 2] - segs[:, 0], segs[:, 3] - segs[:, 1])
    segs = segs[seg_len <= long_range[1]]
    return np.concatenate([hypotheses(segs, aspect, long_range, long_px=long_px),
                           pair_hypotheses(segs, aspect, long_range)])


def card_quads(img: np.ndarray, aspect: float, long_range: tuple[float, float], *,
               maps: EdgeMaps | None = None, keep: int = 24, rough: int | None = None,
               long_px: float | None = None, hyp: np.ndarray | None = None
               ) -> tuple[np.ndarray, np.ndarray]:
    """Card-like quads in *img* (grey uint8) of outline ratio about *aspect* (long /
    short; the sides are then refined freely) and long side within *long_range* px:
    up to *keep* distinct ones, best supported first, as (quads K x 4 x 2, side
    supports K x 4). The best *rough* (default twice *keep*) distinct hypotheses are
    refined: a picture with many cards needs more. *long_px*: the cards' expected long
    side, when known; *hyp*: the rough outlines, when already made
    (:func:`card_hypotheses`)."""
    maps = edge_maps(img) if maps is None else maps
    if hyp is None:
        hyp = card_hypotheses(maps, aspect, long_range, long_px)
    if not len(hyp):
        return np.zeros((0, 4, 2), np.float32), np.zeros((0, 4), np.float32)
    first = side_support(hyp, maps, ROUGH_SAMPLES).mean(axis=1)
    order = np.argsort(-first, kind="stable")
    idx = rough_distinct(hyp, order, 2 * keep if rough is None else rough)
    q = refine(hyp[idx], maps)
    sides = side_support(q, maps)
    score = np.where(card_shaped(q, aspect, long_range), sides.mean(axis=1), -1.0)
    order = np.argsort(-score, kind="stable")
    order = [i for i in rough_distinct(q, order, keep) if score[i] >= 0]
    return q[order], sides[order]


def card_shaped(quads: np.ndarray, aspect: float, long_range: tuple[float, float]
                ) -> np.ndarray:
    """Which of *quads* (N x 4 x 2) have a card's shape: outline ratio within
    ASPECT_TOLERANCE of *aspect* (long / short) and long side within *long_range* px
    (a tenth either way beyond it: the sides were refined freely)."""
    q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
    d = np.hypot(*(roll_corners(q, 1, axis=1) - q).transpose(2, 0, 1))
    long = np.maximum(d[:, 0] + d[:, 2], d[:, 1] + d[:, 3]) / 2
    short = np.minimum(d[:, 0] + d[:, 2], d[:, 1] + d[:, 3]) / 2
    return ((long >= long_range[0] * 0.9) & (long <= long_range[1] * 1.1) & (short >= 3)
            & (np.abs(np.log(long / np.maximum(short, 1e-6) / aspect))
               <= np.log(ASPECT_TOLERANCE)))


def refine_to(frame: np.ndarray, quad: np.ndarray, margin: float = 0.15) -> np.ndarray:
    """*quad* (frame px, found on a shrunk frame) refined on the edges of *frame*
    itself around it (a window *margin* of its size wider): corners keep their order."""
    q = np.asarray(quad, np.float32)
    fh, fw = frame.shape[:2]
    span = float(np.ptp(q, axis=0).max())
    pad = margin * span + 4
    x0, y0 = np.clip(np.floor(q.min(axis=0) - pad).astype(int), 0, (fw - 1, fh - 1))
    x1, y1 = np.clip(np.ceil(q.max(axis=0) + pad).astype(int), 1, (fw, fh))
    maps = edge_maps(frame[y0:y1, x0:x1])
    off = np.float32([x0, y0])
    return refine((q - off)[None], maps)[0] + off
