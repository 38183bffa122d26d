"""Where the Twilight card may lie, by its face: proposals that do not rest on its
outline alone.

The Twilight card is the one card of its design on the table, and its taught face is
known. Its outline (:func:`vision.quads.card_quads`) is often lost among a cloth's
straight edges (gingham, stripes, planks), in dim light, or when it is small: the
outline proposals then rank it below the cloth's own squares, or never propose it.
Two cheap looks at the face fix that:

1. :class:`FaceGrid` — the taught face as a coarse grid of cell means, correlated
   (per colour channel, like :mod:`vision.faces`) with the frame sampled at the same
   cells inside each of thousands of outline hypotheses at their four quarter turns.
   The hypotheses whose inside looks like the face are refined and weighed too, not
   only those whose sides lie best on edges.
2. :func:`colour_blobs` — the frame back-projected through the ratio of the face's
   colour histogram to the frame's (Swain and Ballard's ratio histogram: colours the
   face has and the rest of the frame lacks light up); each blob of them gives
   outlines of the taught shape at a few turns and sizes about it. These need no edge
   at all.

Coordinates are px of the picture given (the shrunk frame); quads 4x2 float32, corners
round the quad.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

#: Cells across the face's short side of :class:`FaceGrid` (its long side gets as many
#: more as its shape asks): coarse enough that a few thousand outlines cost a few ms,
#: fine enough to tell the moon sides' print from the sun sides'.
GRID_SHORT = 4
#: Share of the card at its rim left out of the grid (rounded corners, misplacement).
GRID_RIM = 0.06
#: Levels of the frame's pyramid the grid samples from: a cell is read at the level
#: whose pixel is about half its size (a cell's mean, not one noisy pixel).
PYRAMID_LEVELS = 5
#: :func:`polish`: steps (shares of the card) a rough outline is moved, turned and
#: grown by to fit the face better: half a step of the search that proposed it, then
#: half that.
POLISH_STEPS = (0.15, 0.07)
#: a quad's corners from its second on (np.roll(q, -1) along the corners)
_NEXT = np.array([1, 2, 3, 0])


def grid_shape(aspect: float) -> tuple[int, int]:
    """Cells (across, down) of a face of height / width *aspect*."""
    if aspect >= 1:
        return GRID_SHORT, max(GRID_SHORT, round(GRID_SHORT * aspect))
    return max(GRID_SHORT, round(GRID_SHORT / aspect)), GRID_SHORT


class Pyramid:
    """A picture (B, G, R) at PYRAMID_LEVELS halvings, flattened for gathering points."""

    def __init__(self, img: np.ndarray) -> None:
        levels = [img]
        for _ in range(PYRAMID_LEVELS - 1):
            if min(levels[-1].shape[:2]) < 8:
                break
            levels.append(cv2.pyrDown(levels[-1]))
        self.shapes = np.array([lv.shape[:2] for lv in levels], np.int32)
        self.offsets = np.concatenate([[0], np.cumsum(self.shapes[:, 0] * self.shapes[:, 1])]
                                      ).astype(np.int32)
        # every level's pixels in a row, B, G, R as float32 (what sample gives): one
        # gather of a row per point, nothing converted per point
        self.flat = np.concatenate([lv.reshape(-1, 3) for lv in levels]).astype(np.float32)

    def sample(self, xs: np.ndarray, ys: np.ndarray, cell_px: np.ndarray) -> np.ndarray:
        """Colours (M x G x 3, float32) at points (*xs*, *ys*: M x G each, level-0 px):
        each row of points read at the level whose pixel is about half its *cell_px*
        (M)."""
        return self.read(self.where(xs, ys, cell_px))

    def read(self, where: np.ndarray) -> np.ndarray:
        """The colours (... x 3, float32) at rows *where* of :attr:`flat`."""
        return np.take(self.flat, where, axis=0)  # (take: the same gather as indexing, faster)

    def where(self, xs: np.ndarray, ys: np.ndarray, cell_px: np.ndarray) -> np.ndarray:
        """The rows of :attr:`flat` (M x G) :meth:`sample` reads: the same for every
        picture of this size."""
        lv = np.clip(np.log2(np.maximum(cell_px, 1.0)).astype(np.int32), 0,
                     len(self.shapes) - 1)
        h = self.shapes[lv, 0][:, None]
        w = self.shapes[lv, 1][:, None]
        s = (np.float32(0.5) ** lv).astype(np.float32)[:, None]
        x = xs + 0.5
        x *= s
        x = x.astype(np.int32)
        np.clip(x, 0, w - 1, out=x)
        y = ys + 0.5
        y *= s
        y = y.astype(np.int32)
        np.clip(y, 0, h - 1, out=y)
        y *= w
        y += x
        y += self.offsets[lv][:, None]
        return y


class FaceGrid:
    """The taught face (upright B, G, R; height / width *aspect*) as a grid of cell
    means, to weigh many outlines cheaply (:meth:`scores`)."""

    def __init__(self, face: np.ndarray, aspect: float) -> None:
        self.cells = grid_shape(aspect)
        gw, gh = self.cells
        small = cv2.resize(cv2.resize(face, (gw * 8, gh * 8), interpolation=cv2.INTER_AREA),
                           (gw, gh), interpolation=cv2.INTER_AREA).astype(np.float32)
        f = small.reshape(gw * gh, 3)
        f = f - f.mean(axis=0)
        f = f / np.maximum(np.linalg.norm(f, axis=0), 1e-3)  # G x 3, unit columns
        # the face upright and turned half round (its cells read backwards), each
        # channel a column, over the whole grid and over each of its halves (top,
        # bottom, left, right: a card an arm covers part of still shows one of them
        # whole), for :func:`correlations`
        g = gw * gh
        self.masks, self.count, self.faces = parts(f, [np.ones(g, bool)])
        rows, cols = np.divmod(np.arange(g), gw)
        halves = [rows < gh / 2, rows >= gh / 2, cols < gw / 2, cols >= gw / 2]
        self.half_masks, self.half_count, self.half_faces = parts(f, halves)
        # the unit square's cell centres, rim left out
        u = GRID_RIM + (1 - 2 * GRID_RIM) * (np.arange(gw, dtype=np.float32) + 0.5) / gw
        v = GRID_RIM + (1 - 2 * GRID_RIM) * (np.arange(gh, dtype=np.float32) + 0.5) / gh
        uu, vv = np.meshgrid(u, v)
        u, v = uu.reshape(-1), vv.reshape(-1)
        # bilinear weights of the corners TL, TR, BR, BL at each cell centre (G x 4)
        self.weights = np.stack([(1 - u) * (1 - v), u * (1 - v), u * v, (1 - u) * v],
                                axis=1).astype(np.float32)

    def seen(self, pyramid: Pyramid, quads: np.ndarray) -> np.ndarray:
        """The frame at the grid's cells inside each of *quads* (N x 4 x 2, corner 0 the
        face's top left): N x G*3, each cell's B, G, R in a row."""
        return pyramid.sample(*self.points(quads)).reshape(len(quads), -1)

    def where(self, pyramid: Pyramid, quads: np.ndarray) -> np.ndarray:
        """Where :meth:`seen` reads the grid's cells inside each of *quads* in
        *pyramid* (:meth:`Pyramid.where`): N x G, the same for every picture of its
        size."""
        return pyramid.where(*self.points(quads))

    def points(self, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The grid's cell centres inside each of *quads* (x, y: N x G each) and their
        cells' size (N), as a pyramid samples them."""
        gw, gh = self.cells
        # N x 2 x G (x, then y), as one product (2N x 4 corners' coordinates by G x 4
        # weights)
        pts = (quads.transpose(0, 2, 1).reshape(-1, 4) @ self.weights.T
               ).reshape(len(quads), 2, -1)
        across = np.hypot(*(quads[:, 1] - quads[:, 0]).T) / gw
        down = np.hypot(*(quads[:, 3] - quads[:, 0]).T) / gh
        return pts[:, 0], pts[:, 1], np.minimum(across, down)

    def scores(self, pyramid: Pyramid, quads: np.ndarray) -> np.ndarray:
        """Correlation (N x 4) of the face with the inside of each of *quads* (N x 4 x 2)
        taken from its corner r, r+1, .. as the face's TL, TR, BR, BL (r = 0..3)."""
        return self.scores_and_halves(pyramid, quads, halves=False)[0]

    def scores_and_halves(self, pyramid: Pyramid, quads: np.ndarray, halves: bool = True
                          ) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`scores`, and (with *halves*) the best of the face's halves (top,
        bottom, left, right) correlated each on its own (N x 4): what a card partly
        covered still shows."""
        return self.weigh(self.seen_turns(pyramid, quads), halves)

    def seen_turns(self, pyramid: Pyramid, quads: np.ndarray) -> np.ndarray:
        """The frame at the grid's cells inside each of *quads* (N x 4 x 2) read from its
        corners 0 and 1 as the face's top left (turns 2 and 3 read the same cells
        backwards): 2N x G*3, for :meth:`weigh`."""
        q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        if not len(q):
            return np.zeros((0, len(self.weights) * 3), np.float32)
        return self.seen(pyramid, _turns(q))

    def where_turns(self, pyramid: Pyramid, quads: np.ndarray) -> np.ndarray:
        """Where :meth:`seen_turns` reads the cells (2N x G, :meth:`where`)."""
        return self.where(pyramid, _turns(np.asarray(quads, np.float32).reshape(-1, 4, 2)))

    def weigh(self, seen: np.ndarray, halves: bool = True
              ) -> tuple[np.ndarray, np.ndarray | None]:
        """:meth:`scores_and_halves` of the cells *seen* (:meth:`seen_turns`)."""
        if not len(seen):
            return np.zeros((0, 4), np.float32), np.zeros((0, 4), np.float32)
        whole = correlations(seen, self.masks, self.count, self.faces)[:, 0]  # 2N x 2
        scores = np.hstack([whole[:, 0].reshape(-1, 2), whole[:, 1].reshape(-1, 2)])
        return scores, self.weigh_halves(seen) if halves else None

    def weigh_halves(self, seen: np.ndarray) -> np.ndarray:
        """The halves' part of :meth:`weigh` alone (N x 4)."""
        part = correlations(seen, self.half_masks, self.half_count, self.half_faces
                            ).max(axis=1)
        return np.hstack([part[:, 0].reshape(-1, 2), part[:, 1].reshape(-1, 2)])


def _turns(quads: np.ndarray) -> np.ndarray:
    """Each of *quads* (N x 4 x 2) from its corners 0 and 1: 2N x 4 x 2."""
    return np.stack([quads, quads[:, _NEXT]], axis=1).reshape(-1, 4, 2)


def parts(face: np.ndarray, regions: list[np.ndarray], dtype: type = np.float32
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A face's cells (G x 3) over each of *regions* (masks of the G cells) as
    :func:`correlations` takes them: (masks G*3 x 3P, counts P, faces G*3 x 6P), the
    faces upright and reversed (turned half round), each zero mean and unit length over
    the region; in *dtype*."""
    g = len(face)
    face = face.astype(dtype)
    masks = np.zeros((g * 3, 3 * len(regions)), dtype)
    faces = np.zeros((g * 3, 6 * len(regions)), dtype)
    for p, m in enumerate(regions):
        for c in range(3):
            masks[c::3, 3 * p + c] = m
            for k, f in enumerate((face[:, c], face[::-1, c])):
                part = np.where(m, f - f[m].mean(), 0.0)
                part /= max(float(np.linalg.norm(part)), 1e-3)
                faces[c::3, 6 * p + 3 * k + c] = part
    return masks, np.array([m.sum() for m in regions], dtype), faces


def correlations(seen: np.ndarray, masks: np.ndarray, count: np.ndarray,
                 faces: np.ndarray) -> np.ndarray:
    """Correlation, per colour channel and averaged over them, of the cells *seen* (M x
    G*3, a cell's B, G, R in a row) with K faces over P parts of the grid: *masks*
    (G*3 x 3P) picks part p's channel c (column 3p + c), *count* (P) its cells, and
    *faces* (G*3 x 3PK) are each face's channel over the part, zero mean and unit
    length (column 3(pK + k) + c). One product gives the sums, one the squares and one
    the dot products: M x P x K."""
    m, p = len(seen), len(count)
    sums = (seen @ masks).reshape(m, p, 3)
    squares = ((seen * seen) @ masks).reshape(m, p, 3)
    spread = np.sqrt(np.maximum(squares - sums ** 2 / count[:, None], 1e-6))
    ncc = (seen @ faces).reshape(m, p, -1, 3) / spread[:, :, None, :]
    # the mean over the channels as numpy's mean(axis=3) makes it (its short strided
    # reduction is slow): summed in order, divided by the count (an intp)
    mean = (ncc[..., 0] + ncc[..., 1]) + ncc[..., 2]
    return np.true_divide(mean, np.intp(3), out=mean, casting="unsafe")


def dense_quads(size: tuple[int, int], aspect: float, long_range: tuple[float, float],
                step: float = 0.5, turns: int = 8, scale_step: float = 1.25) -> np.ndarray:
    """Outlines (N x 4 x 2, clockwise, the art's TL first) of a card of height / width
    *aspect* laid all over a picture of *size* (w, h): long sides within *long_range*
    px, a factor *scale_step* apart; centres *step* of the short side apart; *turns*
    turns over a half turn (the half turns beyond are the same outlines from their
    third corner, :meth:`FaceGrid.scores` weighs both)."""
    w, h = size
    long_aspect = max(aspect, 1 / aspect)
    out = []
    angles = np.radians(np.arange(turns) * 180.0 / turns)
    rot = np.stack([np.stack([np.cos(angles), -np.sin(angles)], -1),
                    np.stack([np.sin(angles), np.cos(angles)], -1)], 1)  # T x 2 x 2
    long = float(long_range[0])
    while long <= long_range[1]:
        short = long / long_aspect
        cw, ch = (short, long) if aspect >= 1 else (long, short)
        box = np.float32([(-cw / 2, -ch / 2), (cw / 2, -ch / 2), (cw / 2, ch / 2),
                          (-cw / 2, ch / 2)])
        turned = np.einsum("tij,kj->tki", rot, box)  # T x 4 x 2
        d = max(step * short, 1.0)
        xs = np.arange(d / 2, w, d, dtype=np.float32)
        ys = np.arange(d / 2, h, d, dtype=np.float32)
        cx, cy = np.meshgrid(xs, ys)
        centres = np.stack([cx.ravel(), cy.ravel()], 1)
        out.append((centres[:, None, None, :] + turned[None]).reshape(-1, 4, 2))
        long *= scale_step
    if not out:
        return np.zeros((0, 4, 2), np.float32)
    return np.concatenate(out).astype(np.float32)


def moved(quads: np.ndarray, moves: np.ndarray) -> np.ndarray:
    """*quads* (N x 4 x 2) each moved about its centre by each of *moves* (M x 4: shift
    along its side 0-1 and side 1-2 as shares of them, turn in radians, growth):
    N x M x 4 x 2."""
    c = quads.mean(axis=1)[:, None, None]  # N x 1 x 1 x 2
    rel = (quads - quads.mean(axis=1, keepdims=True))[:, None]  # N x 1 x 4 x 2
    along = (quads[:, 1] - quads[:, 0])[:, None, None]
    across = (quads[:, 2] - quads[:, 1])[:, None, None]
    sx, sy, turn, grow = (moves[:, k][None, :, None, None] for k in range(4))
    cos, sin = np.cos(turn) * grow, np.sin(turn) * grow
    x = rel[..., :1] * cos - rel[..., 1:] * sin
    y = rel[..., :1] * sin + rel[..., 1:] * cos
    return (c + sx * along + sy * across + np.concatenate([x, y], axis=-1)).astype(np.float32)


def polish(grid: FaceGrid, pyramid: Pyramid, quads: np.ndarray,
           steps: tuple[float, ...] = POLISH_STEPS, halves: bool = False, *,
           grow: bool = True, any_turn: bool = True, most: int = 1
           ) -> tuple[np.ndarray, np.ndarray]:
    """*quads* (N x 4 x 2) each moved to where :meth:`FaceGrid.scores` is best (with
    *halves*: the best of its halves, for a card partly covered): at each step (a
    share of the card) shifted either way along both its sides, turned (that many
    radians) and, with *grow*, grown by as much (without, its size is left: a coarse
    grid tells where a face is far better than how big it is), or left; a move is
    taken only when it scores better than where the quad lies, up to *most* moves a
    step (:func:`climb`). Weighed at its best turn, or (not *any_turn*) at its corner
    0 as the face's top left only. Returns the quads and their scores (N x 4)."""
    def weigh(quads: np.ndarray) -> np.ndarray:
        seen = grid.seen_turns(pyramid, quads)
        return grid.weigh_halves(seen) if halves else grid.weigh(seen, False)[0]

    def rank(score: np.ndarray) -> np.ndarray:
        return score.max(axis=-1) if any_turn else score[..., 0]

    moves = []
    for d in steps:
        v = np.float32([-d, 0.0, d])
        g = np.float32([1 / (1 + d), 1.0, 1 + d]) if grow else np.float32([1.0])
        moves.append(np.stack(np.meshgrid(v, v, v, g, indexing="ij"), -1).reshape(-1, 4))
    return climb(np.asarray(quads, np.float32), weigh, rank, moves, most)


def climb(quads: np.ndarray, weigh: Callable[[np.ndarray], np.ndarray],
          rank: Callable[[np.ndarray], np.ndarray], steps: list[np.ndarray],
          most: int = 1) -> tuple[np.ndarray, np.ndarray]:
    """*quads* (N x 4 x 2) each moved by the best of each step's moves (M x 4, as
    :func:`moved` takes them) in turn, where that scores better than where it lies,
    and again from there while that scores better, at most *most* times a step:
    *weigh* scores quads (K x 4 x 2 -> K x ...), *rank* orders scores (... -> K).
    Returns the quads and their scores."""
    q = np.array(quads, np.float32)
    best = np.array(weigh(q))
    for moves in steps:
        live = np.arange(len(q))
        for _ in range(most):
            if not len(live):
                break
            tried = moved(q[live], moves)  # L x M x 4 x 2
            score = weigh(tried.reshape(-1, 4, 2))
            score = score.reshape(len(live), len(moves), *score.shape[1:])
            k = np.argmax(rank(score), axis=1)
            n = np.arange(len(live))
            better = rank(score[n, k]) > rank(best[live])
            q[live[better]] = tried[n[better], k[better]]
            best[live[better]] = score[n[better], k[better]]
            live = live[better]
    return q, best
