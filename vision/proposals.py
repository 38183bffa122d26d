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
        # a pixel's B, G, R (and a pad byte) as one 32-bit word: one gather per point
        self.flat = np.concatenate([cv2.cvtColor(lv, cv2.COLOR_BGR2BGRA).reshape(-1, 4)
                                    for lv in levels]).view(np.uint32)[:, 0]

    def sample(self, pts: np.ndarray, cell_px: np.ndarray) -> np.ndarray:
        """Colours (M x G x 3, float32) at points *pts* (M x G x 2, level-0 px): each row of
        points read at the level whose pixel is about half its *cell_px* (M)."""
        lv = np.clip(np.log2(np.maximum(cell_px, 1.0)).astype(np.int32), 0,
                     len(self.shapes) - 1)
        h = self.shapes[lv, 0].astype(np.int32)[:, None]
        w = self.shapes[lv, 1].astype(np.int32)[:, None]
        s = (np.float32(0.5) ** lv).astype(np.float32)[:, None]
        x = np.minimum(((pts[..., 0] + 0.5) * s).astype(np.int32).clip(0), w - 1)
        y = np.minimum(((pts[..., 1] + 0.5) * s).astype(np.int32).clip(0), h - 1)
        words = self.flat[self.offsets[lv][:, None] + y * w + x]
        return words.view(np.uint8).reshape(words.shape + (4,))[..., :3].astype(np.float32)


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
        # one product gives each channel's sum and its dot products with the face and
        # the face reversed (a cell's three channels are adjacent in a row)
        g = gw * gh
        self.sums = np.zeros((g * 3, 9), np.float32)
        for c in range(3):
            self.sums[c::3, c] = 1.0
            self.sums[c::3, 3 + c] = f[:, c]
            self.sums[c::3, 6 + c] = f[::-1, c]
        self.channel_sums = np.ascontiguousarray(self.sums[:, :3])
        # the unit square's cell centres, rim left out
        u = GRID_RIM + (1 - 2 * GRID_RIM) * (np.arange(gw, dtype=np.float32) + 0.5) / gw
        v = GRID_RIM + (1 - 2 * GRID_RIM) * (np.arange(gh, dtype=np.float32) + 0.5) / gh
        uu, vv = np.meshgrid(u, v)
        u, v = uu.reshape(-1), vv.reshape(-1)
        # bilinear weights of the corners TL, TR, BR, BL at each cell centre (G x 4)
        self.weights = np.stack([(1 - u) * (1 - v), u * (1 - v), u * v, (1 - u) * v],
                                axis=1).astype(np.float32)

    def scores(self, pyramid: Pyramid, quads: np.ndarray) -> np.ndarray:
        """Correlation (N x 4) of the face with the inside of each of *quads* (N x 4 x 2)
        taken from its corner r, r+1, .. as the face's TL, TR, BR, BL (r = 0..3)."""
        q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        if not len(q):
            return np.zeros((0, 4), np.float32)
        gw, gh = self.cells
        g = gw * gh
        # each quad from its corners 0 and 1 (turns 2 and 3 read the same points
        # backwards: the face reversed)
        corners = np.stack([q, np.roll(q, -1, axis=1)], axis=1).reshape(-1, 4, 2)
        pts = self.weights @ corners  # 2N x G x 2
        across = np.hypot(*(corners[:, 1] - corners[:, 0]).T) / gw
        down = np.hypot(*(corners[:, 3] - corners[:, 0]).T) / gh
        seen = pyramid.sample(pts, np.minimum(across, down)).reshape(len(corners), g * 3)
        sums = seen @ self.sums  # 2N x 9: per channel the sum, the dot products
        squares = (seen * seen) @ self.channel_sums
        spread = np.sqrt(np.maximum(squares - sums[:, :3] ** 2 / g, 1e-6))
        up = (sums[:, 3:6] / spread).mean(axis=1).reshape(-1, 2)
        back = (sums[:, 6:9] / spread).mean(axis=1).reshape(-1, 2)
        return np.hstack([up, back])
