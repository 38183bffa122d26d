"""Where a side's card lies, by its face: outlines that do not rest on its edges.

The card on top of a side's pile shows its whole face, but not always its outline:
laid on cards of the same print (a border on a like border), under soft focus or in
dim light, one or more of its sides make no edge, and the edges of the cards beneath
make outlines of their own. The outline proposals (:func:`vision.quads.card_quads`)
then miss it. Its face does not go missing, so the deck's faces look for it:

1. :class:`DeckGrid` — every taught face as a coarse grid of cell means
   (:class:`vision.proposals.FaceGrid`, one per face), correlated at once with the
   frame sampled at the same cells inside many outlines, each face upright and turned
   half round.
2. :func:`search` — outlines of the cards' expected size laid all over the zone at
   every turn (:func:`vision.proposals.dense_quads`), the best few whose inside looks
   like some face kept (a card beneath shows part of its face, the card on top all of
   it), each moved and turned to where its face fits best, and proposed at a few
   sizes (a coarse grid tells where a face is, hardly how big).

The reader then weighs these outlines with the outline proposals, finely.
"""

from __future__ import annotations

from collections.abc import Callable

import cv2
import numpy as np

from vision import quads as Q
from vision.proposals import FaceGrid, Pyramid, correlations, dense_quads, polish

#: Centres of the outlines laid over the zone, as shares of the card's short side
#: apart, and turns over a half turn: the best is then at most an eighth of the card
#: and 6 degrees off, within :func:`vision.proposals.polish`'s first step.
SEARCH_STEP = 0.25
SEARCH_TURNS = 16
#: Steps (shares of the card; radians for the turn) a place found is moved by to fit
#: its face better (:func:`vision.proposals.polish`, its size left): half the search's
#: step, then half that.
PLACE_STEPS = (0.12, 0.06)
#: Moves a place may make at each of those steps while its face fits better. The
#: lattice's best outline lies within half a lattice step of *a* good fit, not always
#: of the best one (on a pile of like cards the card beneath fits a little too): one
#: move a step left places a fifth of a card off the card on top. Four moves of
#: PLACE_STEPS[0] reach half a card.
PLACE_MOVES = 4
#: Sizes a place is proposed at, about the cards' expected size (the median of the
#: last cards named, or the nominal card's): a camera tilted 15 degrees shows a card
#: near it a sixth bigger than one across the table.
SIZES = (0.85, 1.0, 1.15)
#: Outlines kept and polished.
KEEP = 4


class CellMeans:
    """A picture (B, G, R) read as the mean colour of a square about each point
    (an integral image: any square's mean for four look-ups). A face of small marks on
    plain paper needs each cell's mean over the cell itself: read from a pyramid level
    as coarse as a cell, the marks fall half a cell either way."""

    def __init__(self, img: np.ndarray) -> None:
        self.h, self.w = img.shape[:2]
        self.sums = cv2.integral(img).astype(np.float32).reshape(-1, 3)

    def sample(self, xs: np.ndarray, ys: np.ndarray, cell_px: np.ndarray) -> np.ndarray:
        """Mean colours (M x G x 3, float32) of squares *cell_px* (M) wide about points
        (*xs*, *ys*: M x G each, px)."""
        half = (np.maximum(np.asarray(cell_px, np.float32), 1.0) / 2)[:, None]
        x0 = np.clip(np.rint(xs - half), 0, self.w - 1).astype(np.int32)
        y0 = np.clip(np.rint(ys - half), 0, self.h - 1).astype(np.int32)
        x1 = np.clip(np.rint(xs + half), x0 + 1, self.w).astype(np.int32)
        y1 = np.clip(np.rint(ys + half), y0 + 1, self.h).astype(np.int32)
        row = self.w + 1
        # (np.take: the same rows as indexing, gathered faster)
        total = (np.take(self.sums, y1 * row + x1, axis=0) - np.take(self.sums, y0 * row + x1, axis=0)
                 - np.take(self.sums, y1 * row + x0, axis=0)
                 + np.take(self.sums, y0 * row + x0, axis=0))
        return total / ((x1 - x0) * (y1 - y0)).astype(np.float32)[..., None]


class DeckGrid:
    """The deck's faces (id -> upright B, G, R; outline ratio *aspect*, height /
    width) as coarse grids, weighed against many outlines at once (:meth:`scores`)."""

    def __init__(self, faces: dict[str, np.ndarray], aspect: float, *,
                 mirror: bool = False) -> None:
        self.ids = list(faces)
        self.aspect = aspect
        self.grids = [FaceGrid(f[:, ::-1] if mirror else f, aspect) for f in faces.values()]
        self.first = self.grids[0]
        self.cells = self.first.cells
        # each face's three channels upright (the first F) and turned half round (the
        # cells read backwards), for :func:`vision.proposals.correlations`
        self.faces = np.hstack([g.faces[:, 3 * k:3 * k + 3] for k in (0, 1)
                                for g in self.grids])

    def scores(self, pyramid: CellMeans | Pyramid, quads: np.ndarray) -> np.ndarray:
        """Correlation (N x 2F) of each face, upright (first F) and turned half round,
        with the inside of each of *quads* (N x 4 x 2, corner 0 the face's top left)."""
        q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        if not len(q):
            return np.zeros((0, 2 * len(self.ids)), np.float32)
        seen = self.first.seen(pyramid, q)
        first = self.first
        return correlations(seen, first.masks, first.count, self.faces)[:, 0].astype(np.float32)


def search(grid: DeckGrid, img: np.ndarray, long_px: float,
           keep_centre: Callable[[np.ndarray], np.ndarray] | None = None,
           keep: int = KEEP) -> tuple[np.ndarray, np.ndarray]:
    """The *keep* places in *img* (B, G, R) where a card about *long_px* long looks most
    like a face of *grid*, each moved and turned to where its face fits best, best
    first, at the sizes :data:`SIZES` about *long_px*: (quads K x len(SIZES) x 4 x 2,
    clockwise from the face's top left or bottom right; their best scores K).
    *keep_centre* (M x 2 centres -> M bools) limits where their centres may lie."""
    h, w = img.shape[:2]
    quads = dense_quads((w, h), grid.aspect, (long_px, long_px),
                        step=SEARCH_STEP, turns=SEARCH_TURNS)
    if keep_centre is not None and len(quads):
        quads = quads[keep_centre(quads.mean(axis=1))]
    if not len(quads):
        return np.zeros((0, len(SIZES), 4, 2), np.float32), np.zeros(0, np.float32)
    pyramid = CellMeans(img)
    s = grid.scores(pyramid, quads)
    order = np.argsort(-s.max(axis=1), kind="stable")
    idx = Q.rough_distinct(quads, order, keep)
    n_faces = len(grid.ids)
    found = []
    for i in idx:
        j = int(np.argmax(s[i]))
        q = quads[i] if j < n_faces else Q.roll_corners(quads[i], 2)
        q, sc = polish(grid.grids[j % n_faces], pyramid, q[None], PLACE_STEPS, grow=False,
                       any_turn=False, most=PLACE_MOVES)
        found.append((q[0], float(sc[0, 0])))
    out = np.stack([q for q, _ in found])
    scores = np.float32([sc for _, sc in found])
    if keep_centre is not None:  # moving may have taken one into another's zone
        ok = keep_centre(out.mean(axis=1))
        out, scores = out[ok], scores[ok]
    order = np.argsort(-scores, kind="stable")
    out, scores = out[order], scores[order]
    c = out.mean(axis=1)[:, None, None]
    sized = np.stack([c + (out[:, None] - c) * np.float32(g) for g in SIZES], axis=1)
    return sized.astype(np.float32), scores

