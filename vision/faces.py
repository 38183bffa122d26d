"""Naming a rectified card by its face: correlation with the taught faces, and how
sure that is, measured on the taught deck itself.

A card found on the table is warped to an upright rectangle (:func:`rectify`) and
compared with every taught face at its two half turns (a card's outline fixes which
of its sides is long, so only "upright" and "upside down" remain) by normalised
correlation of each colour channel (so the light's level and colour do not matter),
blurred and shrunk alike. :class:`FaceBank` holds the faces prepared once per
resolution, with the deck's **self-similarity**: how well each face correlates with
every other face (both ways up) at that resolution. That is what decides whether a
reading is sure:

* the best face must correlate at least :data:`MIN_SCORE`: below it the picture is
  not a card of this deck (a table, a hand, the back of a card);
* a card that is face *i* seen through noise correlates with face *j* about
  ``score_i * C[i, j]`` (C the self-similarity); so the second best face *j* must
  score under a bound a share (:data:`MARGIN_SHARE`) of the way from that to a tie:
  ``score_j <= score_i * (C[i, j] + MARGIN_SHARE * (1 - C[i, j]))``. Faces that are
  much alike (a numeral apart) thus need a clearer lead than faces that are not.

``deck enrol`` refuses a deck two of whose faces are so alike at the finest
resolution that this margin is less than a noise-free reading can show
(:func:`alike_pairs`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import NamedTuple

import cv2
import numpy as np

from companion.core.cards import CARD_IDS
from vision.glare import specular_spot
from vision.proposals import correlations, parts

#: Resolutions (px per mm of the card's width as 63 mm) the faces are kept at; a card
#: is matched at the finest of them not finer than it appears in the frame.
RESOLUTIONS = (0.35, 0.5, 0.7, 1.0)
#: Blur (sigma, px) of face and card alike before correlating: a pixel of placement
#: error or sensor noise must not decide.
BLUR_PX = 0.8
#: Share (each side) of the card's width left out at its edge: the rounded corners
#: and a mm or two of misplacement show the table there.
EDGE_SHARE = 0.05
#: Least correlation with the best face for a card of the deck to be there at all. A
#: card of the deck reaches 0.8 and more when seen whole; a table, an arm or a card's
#: back stays under 0.4.
MIN_SCORE = 0.5
#: Where, between what face i alone predicts for face j (C[i, j]) and a tie, the
#: second best face's score must stay (see the module's docstring): the midpoint, a
#: linear discriminant with the deck's own geometry. Faces above it are settled by a
#: duel on the pixels where the two differ (:meth:`FaceBank.duels`): the card must lie
#: at least DUEL_SHARE of the way from the midpoint between the two faces to one.
MARGIN_SHARE = 0.5
DUEL_SHARE = 0.25
#: Shifts (px at the matched resolution, each way) a duel tries: what the alignment
#: of the whole card leaves for the fine print where two faces differ.
DUEL_SHIFT_PX = 1
DUEL_BLUR_PX = (0.0, 0.8, 1.6)
#: Blurs (sigma, px at the matched resolution) beyond the faces' own a card may show
#: (soft focus, motion, a card a few px across): the deck's self-similarity is taken
#: with the faces blurred as much as the card is (see :meth:`FaceBank.decide`).
CARD_BLUR_PX = (0.0, 0.5, 1.0, 1.5, 2.0, 3.0)
#: Bytes of duel pairs' prepared faces kept per bank, the last used: the alike faces of
#: a deck duel again and again (the built-in deck's filled 96 in 60 scenes). A pair
#: takes about 280 kB at the finest bank (about 85 pairs kept) and a tenth of that at
#: the coarsest, where a small soft card's many close faces make many pairs (tuning
#: deck 104's hand: 1,400 pairs; a bound of 128 pairs remade 8,272 of 12,721). (16 MB,
#: when a pair's new bytes were counted only at its next use, held 19-28 MB a bank.)
DUEL_BYTES = 24 << 20
#: Two faces correlating this well at the finest resolution differ in less than half
#: a percent of their variance (a mark a couple of mm across on a plain face): no
#: reading through a camera's noise and a mm of misplacement tells them apart, so
#: ``deck enrol`` refuses such a deck. (The built-in deck's most alike pair, an adept
#: and a priest a numeral apart, correlate 0.978.)
ALIKE_LIMIT = 0.995
#: A face's neutral parts (:meth:`FaceBank.light_on`): chroma (Lab) under LIGHT_CHROMA,
#: lightness (0-100) over LIGHT_LIGHTNESS, at least LIGHT_SHARE of the face.
LIGHT_CHROMA = 15.0
LIGHT_LIGHTNESS = 40.0
LIGHT_SHARE = 0.05
#: Cosines across and down (the constant the first) that make a card's smooth light
#: field (:meth:`FaceBank.flattened`): the finest a half period of a third of the card.
FLAT_COSINES = 4
#: Nominal card width (mm) the resolutions are counted in.
WIDTH_MM = 63.0



def _centred(x: np.ndarray) -> tuple[np.ndarray, np.floating]:
    """*x* less its mean over all its values, and that's sum of squares: one side of
    a correlation over all values at once (:func:`_joint_ncc`)."""
    xm = x - x.mean()
    return xm, (xm * xm).sum()


def _joint_ncc(x: tuple[np.ndarray, np.floating], y: tuple[np.ndarray, np.floating]) -> float:
    """Correlation over all their values at once of two pictures, each as
    :func:`_centred` gives it."""
    (xm, xx), (ym, yy) = x, y
    return float((xm * ym).sum()) / max(float(np.sqrt(xx * yy)), 1e-6)


def _channel_sums(stack: np.ndarray) -> np.ndarray:
    """Each row's sum per channel (N x 1 x 3) of *stack* (N x P x 3 float32, C order),
    added up in order along the row as numpy's ``sum(axis=1)`` does (the same float32
    values), by OpenCV's row reduction: numpy's strided reduction costs ~5 ns a value."""
    out = np.empty((len(stack), 1, 3), np.float32)
    for i, rows in enumerate(stack):
        cv2.reduce(rows, 0, cv2.REDUCE_SUM, dst=out[i], dtype=cv2.CV_32F)
    return out


def _channel_means(stack: np.ndarray) -> np.ndarray:
    """numpy's ``stack.mean(axis=1, keepdims=True)`` of *stack* (N x P x 3 float32, C
    order): :func:`_channel_sums` divided by the count (an intp, as numpy divides), in
    float32."""
    sums = _channel_sums(stack)
    return np.true_divide(sums, np.intp(stack.shape[1]), out=sums, casting="unsafe")


def _column_sums(a: np.ndarray) -> np.ndarray:
    """``a.sum(axis=0)`` of *a* (P x C float64, C order), the same values (added in
    order down the columns), by OpenCV's row reduction."""
    return cv2.reduce(a, 0, cv2.REDUCE_SUM, dtype=cv2.CV_64F)[0]


def _standard_rows(stack: np.ndarray) -> np.ndarray:
    """Each picture of *stack* (N x ... x 3 float32, any layout) standardised per
    channel, flattened (N rows) and scaled so a row's dot product with another is the
    mean of the channels' NCC."""
    n = len(stack)
    if n >= SIDE_BY_SIDE and n * (stack[0].size // 3) <= SIDE_BY_SIDE_PX:
        return _standard_side_by_side(stack)
    stack = np.ascontiguousarray(stack, np.float32).reshape(n, -1, 3)
    # the mean as numpy's mean(axis=1): the sum divided by the count, an intp
    m = stack - _channel_means(stack)
    m /= np.maximum(np.sqrt(_channel_sums(m * m)), 1e-3)
    m *= np.float32(1 / np.sqrt(3))
    return m.reshape(n, -1)


#: :func:`_standard_rows` lays out at least this many pictures side by side (one row
#: reduction for all of them rather than two for each), up to SIDE_BY_SIDE_PX pixels in
#: all (beyond that the strided copies cost more than the reductions save).
SIDE_BY_SIDE = 8
SIDE_BY_SIDE_PX = 200_000


def _standard_side_by_side(stack: np.ndarray) -> np.ndarray:
    """:func:`_standard_rows` of many small pictures, laid side by side (P x N x 3) so
    that one row reduction adds up each picture's channels in order, as for each
    picture alone (the same float32 values), then back as rows."""
    n = len(stack)
    side = np.empty((*stack.shape[1:-1], n, 3), np.float32)
    side[...] = np.moveaxis(stack, 0, -2)
    cols = side.reshape(-1, 3 * n)
    p = len(cols)
    sums = cv2.reduce(cols, 0, cv2.REDUCE_SUM, dtype=cv2.CV_32F)
    cols -= np.true_divide(sums, np.intp(p), out=sums, casting="unsafe")  # (as above)
    cols /= np.maximum(np.sqrt(cv2.reduce(cols * cols, 0, cv2.REDUCE_SUM, dtype=cv2.CV_32F)),
                       1e-3)
    cols *= np.float32(1 / np.sqrt(3))
    out = np.empty((n, p, 3), np.float32)
    out[...] = side.reshape(p, n, 3).transpose(1, 0, 2)
    return out.reshape(n, -1)


def _cellwise(seen: np.ndarray, faces: np.ndarray) -> np.ndarray:
    """Each cell's correlation (N x K x C) of *seen* (N x C x P) with *faces* (K x C x
    P), both :func:`_cell_rows`: one matrix product per cell (BLAS; numpy's einsum
    does not use it for float32 here and costs ~10 times as much)."""
    return (seen.transpose(1, 0, 2) @ faces.transpose(1, 2, 0)).transpose(1, 2, 0)


def _cell_rows(cores: np.ndarray, cells: tuple[int, int]) -> np.ndarray:
    """Cores (N x h x w x 3 float32) cut into a grid of *cells* (across, down), each
    cell standardised per channel (N x C x P, rows of unit length)."""
    n, h, w = cores.shape[:3]
    cx, cy = cells
    ch, cw = h // cy, w // cx
    cut = cores[:, :ch * cy, :cw * cx].reshape(n, cy, ch, cx, cw, 3)
    cut = cut.transpose(0, 1, 3, 2, 4, 5).reshape(n * cy * cx, ch * cw, 3)
    return _standard_rows(np.ascontiguousarray(cut)).reshape(n, cy * cx, -1)


class Decision(NamedTuple):
    """What :meth:`FaceBank.decide` makes of a card: the card id or "unknown", the best
    score, whether upside down, the margin -1..1 (how far the closest rival stays under
    its bound, or the duel's lead; > 0 when named), the closest rival's id, and whether
    the name was won by a duel (:meth:`FaceBank.duels`) against a face alike."""

    card_id: str
    score: float
    upside_down: bool
    margin: float
    rival: str
    duelled: bool = False


@dataclass
class _DuelPair:
    """What :meth:`FaceBank.duels` keeps of two faces: ``mids``, at each of DUEL_BLUR_PX,
    their mean inside the shift margin, centred (as :func:`_centred`); ``made``, at each
    blur a duel chose, what :meth:`FaceBank._made` keeps (float32 rows mc and half, the
    weight per pixel, the float64 sums)."""

    mids: dict[float, tuple[np.ndarray, np.floating]] = field(default_factory=dict)
    made: dict[float, tuple[np.ndarray, ...]] = field(default_factory=dict)
    counted: int = 0  # its bytes when last counted in its bank's total

    def nbytes(self) -> int:
        return (sum(m.nbytes for m, _ in self.mids.values())
                + sum(x.nbytes for got in self.made.values() for x in got))


class FaceBank:
    """The faces *faces* (id -> upright B,G,R uint8, any one size) prepared for
    matching at one card size *size* (w, h px), with their self-similarity."""

    def __init__(self, faces: dict[str, np.ndarray], size: tuple[int, int],
                 mirror: bool = False, flat: int = 0) -> None:
        self.ids = list(faces)
        self.size = size
        w, h = size
        self.edge = max(1, round(EDGE_SHARE * w))
        #: the smooth light field left out of every picture (see :meth:`flattened`): an
        #: orthonormal basis (P x flat^2) of the lowest *flat* cosines across and down
        #: the prepared card, or None
        self._field = None if not flat else _cosines(h - 2 * self.edge, w - 2 * self.edge, flat)
        #: whether the smooth light field is left out (:meth:`flattened`'s bank)
        self.flat = bool(flat)
        self._source = (faces, mirror)
        self._flattened: FaceBank | None = None
        self._colours: np.ndarray | None = None  # see :meth:`tint`
        pics = []
        for cid in self.ids:
            f = faces[cid]
            if mirror:
                f = f[:, ::-1]
            pics.append(self._prepare(cv2.resize(f, size, interpolation=cv2.INTER_AREA)))
        up = np.stack(pics)
        #: each face's grey picture (blurred alike, edges kept) for alignment
        self.grey = [cv2.GaussianBlur(cv2.cvtColor(cv2.resize(
            faces[c][:, ::-1] if mirror else faces[c], size, interpolation=cv2.INTER_AREA),
            cv2.COLOR_BGR2GRAY).astype(np.float32), (0, 0), BLUR_PX) for c in self.ids]
        turned = up[:, ::-1, ::-1]
        # rows: each face upright, then each face turned half round
        self.vectors = _standard_rows(np.concatenate([up, turned]).reshape(
            2 * len(self.ids), -1, 3))
        self._cores = np.concatenate([up, turned])  # 2K x h' x w' x 3, for cell scores
        self._cells: dict[tuple[int, int], np.ndarray] = {}
        self._one: dict[tuple[int, tuple[int, int]], tuple] = {}  # see :meth:`one_face`
        self._quartered: tuple = (None, 0.0)  # the last :meth:`quarters` asked and its answer
        # the across and down coordinates of a prepared card's pixels (P x 1, -0.5..0.5)
        # and what :meth:`quarters` fits each face with (see :meth:`_shading`)
        ch, cw = self._cores.shape[1:3]
        yy, xx = np.mgrid[0:ch, 0:cw].astype(np.float64)
        self._across = (xx / max(cw - 1, 1) - 0.5).reshape(-1, 1)
        self._down = (yy / max(ch - 1, 1) - 0.5).reshape(-1, 1)
        self._shade: dict[int, tuple] = {}
        #: faces blurred for duels, and the duels' pairs (see :meth:`_pair`)
        self._blur: dict[tuple[int, float], np.ndarray] = {}
        self._soft: dict[float, tuple[np.ndarray, np.ndarray]] = {}  # see :meth:`_at_blur`
        self._pairs: dict[tuple[int, int], _DuelPair] = {}  # see :meth:`_pair`
        self._pair_bytes = 0  # the pairs' bytes as last counted
        n = len(self.ids)
        sim = self.vectors[:n] @ self.vectors.T  # upright faces vs all, both ways
        # C[i, j]: face i against face j at either turn (the most alike)
        self.alike = np.maximum(sim[:, :n], sim[:, n:])
        np.fill_diagonal(self.alike, sim[np.arange(n), n + np.arange(n)])  # i vs i turned

    def _prepare(self, bgr: np.ndarray) -> np.ndarray:
        img = cv2.GaussianBlur(bgr.astype(np.float32), (0, 0), BLUR_PX)
        e = self.edge
        return self._unshaded(img[None, e:img.shape[0] - e, e:img.shape[1] - e])[0]

    def _unshaded(self, cores: np.ndarray) -> np.ndarray:
        """*cores* (N x h' x w' x 3 float32, prepared) less their smooth light field (the
        basis :attr:`_field`'s part of each channel), or as they are without one."""
        if self._field is None:
            return cores
        x = cores.reshape(len(cores), -1, 3)
        # each channel's part in the basis (N x k x 3), and back (matrix products: BLAS)
        field = self._field @ (self._field.T @ x)
        return (x - field).astype(np.float32).reshape(cores.shape)

    def flattened(self) -> FaceBank:
        """These faces at this size, every picture (face and card alike) without its
        smooth light field: the part of each channel the lowest FLAT_COSINES cosines
        across and down the card explain (the smallest a half period of a third of the
        card) is left out. A sheen, a lamp's falloff or a shadow's soft edge adds or
        scales a field that smooth, which can swamp a sparse print (a few small marks)
        in the plain correlation; here it leaves it alone, and the deck's
        self-similarity (its margins, its duels) is taken under the same score. Made
        once, when first asked for."""
        if self._flattened is None:
            faces, mirror = self._source
            self._flattened = FaceBank(faces, self.size, mirror, flat=FLAT_COSINES)
        return self._flattened

    def scores(self, cards: np.ndarray) -> np.ndarray:
        """Correlations (N x 2K) of rectified *cards* (N x h x w x 3 uint8, at
        :attr:`size`) with each face upright (first K) and turned half round."""
        core = self._prepared(cards)
        return _standard_rows(core) @ self.vectors.T

    def _prepared(self, cards: np.ndarray) -> np.ndarray:
        n, h, w = cards.shape[:3]
        # one blur over the cards stacked (what bleeds between them is cut off below)
        tall = cv2.GaussianBlur(cards.reshape(n * h, w, 3).astype(np.float32), (0, 0), BLUR_PX)
        e = self.edge
        return self._unshaded(tall.reshape(n, h, w, 3)[:, e:h - e, e:w - e])

    def cell_scores(self, cards: np.ndarray, cells: tuple[int, int]) -> np.ndarray:
        """Like :meth:`scores`, but each face correlated cell by cell (a grid of *cells*
        across and down) and the better half of the cells' correlations averaged: a
        card partly covered still matches its face where it shows."""
        if cells not in self._cells:
            self._cells[cells] = _cell_rows(self._cores, cells)  # 2K x C x P
        faces = self._cells[cells]
        seen = _cell_rows(self._prepared(cards), cells)  # N x C x P
        per = _cellwise(seen, faces)
        per.sort(axis=2)
        half = (per.shape[2] + 1) // 2
        return per[:, :, -half:].mean(axis=2)

    def decide(self, row: np.ndarray, allowed: np.ndarray | None = None,
               card: np.ndarray | None = None,
               gains: tuple[float, float, float] = (1.0, 1.0, 1.0)
               ) -> Decision:
        """From one card's :meth:`scores` row, the :class:`Decision`. *allowed* (K
        booleans): the faces it may be (its colours decided its cult), default all.

        The whole card rules out every face j scoring under the midpoint bound
        (:data:`MARGIN_SHARE`). Faces it cannot rule out are too alike over the whole
        card to be told apart there; with *card* (the rectified card, at :attr:`size`,
        upright as the row's faces) each such pair is settled by a duel
        (:meth:`duels`) on the pixels where the two faces differ, and a face is named
        only when it wins every duel. Without *card* a close rival leaves the card unnamed."""
        n = len(self.ids)
        mask = None if allowed is None else np.concatenate([allowed, allowed])
        if mask is not None:
            row = np.where(mask, row, -1.0)
        best = int(np.argmax(row))
        i, turned = best % n, best >= n
        s = float(row[best])
        per_face = np.maximum(row[:n], row[n:])
        turn_of = np.where(row[n:] > row[:n], np.arange(n) + n, np.arange(n))
        others = per_face.copy()
        others[i] = -1.0
        j = int(np.argmax(others))
        c = self.alike[i]
        bounds = s * (c + MARGIN_SHARE * (1 - c))
        unsure = others > bounds
        # the card prepared as the faces are (for the blurred bound and the duels)
        prepared = None if card is None else self._prepared(card[None])[0]
        if prepared is not None:
            # a card blurred beyond the faces' blur (soft focus, a card a few dozen px
            # across) shows alike faces more alike than the deck's self-similarity
            # says: the faces blurred as much as fits the card best, the card scored
            # against them and their self-similarity then give a second bound, and a
            # face under only one of the two is not ruled out
            seen = _standard_rows(prepared.reshape(1, -1, 3))[0]
            sigma = max(CARD_BLUR_PX, key=lambda b: float(seen @ self._at_blur(b)[0][best]))
            if sigma:
                vectors, alike = self._at_blur(sigma)
                soft = vectors @ seen
                if mask is not None:
                    soft = np.where(mask, soft, -1.0)
                s_soft = float(soft[best])
                o_soft = np.maximum(soft[:n], soft[n:])
                o_soft[i] = -1.0
                c_soft = alike[i]
                b_soft = s_soft * (c_soft + MARGIN_SHARE * (1 - c_soft))
                unsure |= o_soft > b_soft
        # faces the whole card cannot rule out, and faces it cannot tell from this one
        # at all (alike but for their colours, which per-channel correlation ignores)
        close = [int(k) for k in np.flatnonzero(unsure
                                                 | ((c >= ALIKE_LIMIT) & (others > -1.0)))]
        margin = float(np.clip((bounds[j] - others[j]) / max(bounds[j] - s * c[j], 1e-6),
                               -1.0, 1.0))
        if s < MIN_SCORE:
            return Decision("unknown", s, turned, margin, self.ids[j])
        if not close:
            return Decision(self.ids[i], s, turned, margin, self.ids[j])
        if prepared is None:
            return Decision("unknown", s, turned, margin, self.ids[j])
        # the close faces and the best one: the face that wins every duel is the card
        core = prepared / np.float32(np.maximum(gains, 0.05))
        field = [best] + [int(turn_of[k]) for k in close]
        (w, worst), (r, _) = self._two_best(self._duel_card(core), field)
        winner, runner = field[w], field[r]
        lead = float(np.clip(worst, -1.0, 1.0))
        if lead < 0:
            return Decision("unknown", s, turned, lead, self.ids[runner % n])
        return Decision(self.ids[winner % n], float(row[winner]), winner >= n, lead,
                        self.ids[runner % n], duelled=True)

    def _two_best(self, card: tuple[np.ndarray, ...], field: list[int]
                  ) -> list[tuple[int, float]]:
        """The two faces of *field* (rows) whose worst duel with the others is the best,
        the first in *field*'s order where equal: (index in *field*, worst duel) each. A
        duel (:meth:`duels` of the card, as :meth:`_duel_card` makes it, with the face
        earlier in *field* first) counts as the share of the way from DUEL_SHARE to a
        win. A face's worst duel so far bounds its worst from above, so only the duels
        that can change the two are fought: all of the face ranked first by those
        bounds, until the first two so ranked have fought all theirs (where one face
        wins clearly, the duels of two faces: of a dozen, 21 duels of 66)."""
        n = len(field)
        worst = [np.inf] * n  # each face's worst duel so far
        whole = [False] * n  # whether it has fought every other face
        fought: set[tuple[int, int]] = set()
        ranked: list[int] = []
        while len(ranked) < 2:
            top = max((k for k in range(n) if k not in ranked), key=lambda k: worst[k])
            if whole[top]:
                ranked.append(top)
                continue
            pairs = [(min(top, k), max(top, k)) for k in range(n)
                     if k != top and (min(top, k), max(top, k)) not in fought]
            if pairs:
                duels = self.duels(card, [(field[x], field[y]) for x, y in pairs])
                for (x, y), t in zip(pairs, duels, strict=True):
                    worst[x] = min(worst[x], (t - DUEL_SHARE) / (1 - DUEL_SHARE))
                    worst[y] = min(worst[y], (-t - DUEL_SHARE) / (1 - DUEL_SHARE))
                fought.update(pairs)
            whole[top] = True
        return [(k, worst[k]) for k in ranked]

    def _at_blur(self, sigma: float) -> tuple[np.ndarray, np.ndarray]:
        """The faces (rows, as :attr:`vectors`) blurred *sigma* more, and their
        self-similarity then (as :attr:`alike`), made once per blur."""
        if not sigma:
            return self.vectors, self.alike
        got = self._soft.get(sigma)
        if got is None:
            n = len(self.ids)
            cores = np.stack([cv2.GaussianBlur(np.ascontiguousarray(f), (0, 0), sigma)
                              for f in self._cores])
            vectors = _standard_rows(cores.reshape(2 * n, -1, 3))
            sim = vectors[:n] @ vectors.T
            alike = np.maximum(sim[:, :n], sim[:, n:])
            np.fill_diagonal(alike, sim[np.arange(n), n + np.arange(n)])
            got = self._soft[sigma] = (vectors, alike)
        return got

    def _duel_card(self, core: np.ndarray) -> tuple[np.ndarray, ...]:
        """What a duel (:meth:`duels`) needs of the card *core* whatever the faces: the card
        inside the shift margin centred (and its sum of squares), and the card at every
        shift (rows, float64), their means and their squares."""
        k = DUEL_SHIFT_PX
        h, w = self._cores.shape[1:3]
        inner = core[k:h - k, k:w - k]
        shifts = np.lib.stride_tricks.sliding_window_view(core, inner.shape)
        x = shifts.reshape(-1, inner.size).astype(np.float64)
        return *_centred(inner), x, x.mean(axis=1), x * x

    def duels(self, card: tuple[np.ndarray, ...], pairs: list[tuple[int, int]]
              ) -> np.ndarray:
        """Where a prepared card (blurred and cut as :meth:`_prepared`, the light divided
        out; *card*: what :meth:`_duel_card` makes of it) lies between the faces of each
        of *pairs* (a, b; rows: a face upright or turned), in order: +1 on face a, -1 on
        face b, 0 at the midpoint. The card is fitted to the faces' mean (one gain and
        offset for all channels, so faces alike but for their colours stay apart), and
        what is left is projected on the faces' difference: a linear discriminant. Only
        where the faces differ in what they show counts, not where the same shape lies a
        pixel apart (a figure printed a little larger), and the card is taken at the best
        of the shifts of up to DUEL_SHIFT_PX (what the whole card's alignment leaves for
        fine print)."""
        xm, xs, x, m, xx = card
        # per pair, the card at every shift (rows, in the loops' order: dy, then dx)
        # times what :meth:`_made` lays out (one matrix product), and the card's
        # squares times the weights; and the pair's own sums
        prods = np.empty((len(pairs), 5, len(x)))
        sums = np.empty((len(pairs), 7, 1))
        rows = np.empty((4, x.shape[1]))
        for j, (a, b) in enumerate(pairs):
            # the card may be blurrier than the faces (focus, motion, a small card): the
            # faces are blurred as much more as makes them fit the card best, so the
            # difference between them is measured as the card can show it
            # (only the chosen blur's pair is made whole: the others' means are enough)
            pair = self._pair(a, b)
            sigma = max(DUEL_BLUR_PX, key=lambda s: _joint_ncc((xm, xs), pair.mids[s]))
            sums[j, :, 0] = self._made(pair, a, b, sigma, rows)
            for i in range(4):  # (one by one: as the duel of one pair adds them up)
                np.dot(x, rows[i], out=prods[j, i])
            np.dot(xx, rows[1], out=prods[j, 4])
        # the card at every shift, each fitted to the faces' mean and the rest
        # projected on their half difference, from those sums (all pairs at once):
        # with xc = x - mean(x), g = <xc, mc> / <mc, mc>, r = xc - g mc, d = g half,
        # t = <r, d>_w / <d, d>_w and err = <r, r>_w - t <r, d>_w
        sx_mc, sx_w, sx_wmc, sx_wh, sxx_w = prods.transpose(1, 0, 2)  # x @ each row
        mcmc, sw, sw_mc, sw_h, wmcmc, wmch, whh = sums.transpose(1, 0, 2)
        g = sx_mc / np.maximum(mcmc, 1e-6)  # mc sums to 0: <xc, mc> = <x, mc>
        wxx = sxx_w - 2 * m * sx_w + m * m * sw                   # <xc, xc>_w
        wxmc = sx_wmc - m * sw_mc                                  # <xc, mc>_w
        wxh = sx_wh - m * sw_h                                     # <xc, half>_w
        wrr = wxx - 2 * g * wxmc + g * g * wmcmc                   # <r, r>_w
        wrh = wxh - g * wmch                                       # <r, half>_w
        dd = g * g * whh                                           # <d, d>_w
        rd = g * wrh                                               # <r, d>_w
        t = rd / np.maximum(dd, 1e-6)
        err = wrr - 2 * t * rd + t * t * dd
        return t[np.arange(len(pairs)), np.argmin(err, axis=1)]

    def _blurred(self, face: int, sigma: float) -> np.ndarray:
        """Face *face* (a row: upright or turned) as prepared, blurred *sigma* more."""
        if not sigma:
            return self._cores[face]
        key = (face, sigma)
        if key not in self._blur:
            self._blur[key] = cv2.GaussianBlur(self._cores[face], (0, 0), sigma)
        return self._blur[key]

    def _pair(self, a: int, b: int) -> _DuelPair:
        """What :meth:`duels` keeps of faces *a* and *b* (rows: upright or turned), made
        once per pair and kept while DUEL_BYTES allow (the last used)."""
        pair = self._pairs.pop((a, b), None)
        fresh = pair is None
        if fresh:
            k = DUEL_SHIFT_PX
            pair = _DuelPair()
            twin = self._pairs.get((b, a))
            if twin is not None:  # the same faces the other way round: the same means
                pair.mids = twin.mids
            for sigma in () if twin is not None else DUEL_BLUR_PX:
                fa, fb = self._blurred(a, sigma), self._blurred(b, sigma)
                h, w = fa.shape[:2]
                pair.mids[sigma] = _centred((fa[k:h - k, k:w - k] + fb[k:h - k, k:w - k]) / 2)
        self._pairs[(a, b)] = pair  # most recently used last
        if fresh:
            self._count(pair)
        return pair

    def _count(self, pair: _DuelPair) -> None:
        """*pair*'s bytes (it has made more) counted in the pairs' total again, and the
        pairs least recently used let go while over DUEL_BYTES (not the last one)."""
        self._pair_bytes -= pair.counted
        pair.counted = pair.nbytes()
        self._pair_bytes += pair.counted
        while self._pair_bytes > DUEL_BYTES and len(self._pairs) > 1:
            self._pair_bytes -= self._pairs.pop(next(iter(self._pairs))).counted

    def _made(self, pair: _DuelPair, a: int, b: int, sigma: float, rows: np.ndarray
              ) -> np.ndarray:
        """What a duel (:meth:`duels`) of faces *a* and *b* blurred *sigma* more needs: laid out
        in *rows* (4 x P, float64), inside the shift margin, their mean centred
        (``mc``), the weight of each pixel over each channel (``w``: how far the faces
        differ there however face b is shifted by up to DUEL_SHIFT_PX), ``w mc`` and
        ``w half`` (half their difference); returned, the sums <mc, mc>, sum(w),
        <w, mc>, <w, half>, <w mc, mc>, <w mc, half>, <w half, half>. Kept in their
        *pair* (:meth:`_pair`): mc and half (float32), the weight per pixel and the
        sums."""
        got = pair.made.get(sigma)
        if got is None:
            k, n = DUEL_SHIFT_PX, 2 * DUEL_SHIFT_PX + 1
            fa_full, fb_full = self._blurred(a, sigma), self._blurred(b, sigma)
            h, w = fa_full.shape[:2]
            fa, fb = fa_full[k:h - k, k:w - k], fb_full[k:h - k, k:w - k]
            # how far the faces differ at each pixel with face b at each shift (the
            # channels added in order, as numpy's sum(axis=2) adds them: its reduction
            # over three values is slow), and the least of that over the shifts
            d = np.empty((n * n, *fa.shape), np.float32)
            for i, (dy, dx) in enumerate((dy, dx) for dy in range(-k, k + 1)
                                         for dx in range(-k, k + 1)):
                cv2.absdiff(fa, fb_full[k + dy:h - k + dy, k + dx:w - k + dx], dst=d[i])
            apart = d[..., 0] + d[..., 1]
            apart += d[..., 2]
            weight = apart.reshape(n * n, -1).min(axis=0)
            mid = (fa + fb) / 2
            got = (mid - mid.mean()).reshape(-1), weight, ((fa - fb) / 2).reshape(-1), None
        mc, weight, half, sums = got
        rows[0] = mc
        rows[1].reshape(len(weight), -1)[:] = weight[:, None]
        np.multiply(rows[1], rows[0], out=rows[2])
        np.multiply(rows[1], half, out=rows[3])
        if sums is None:
            (mc64, wv, wmc, whv), hv = rows, half.astype(np.float64)
            sums = np.array([float(mc64 @ mc64), wv.sum(), wv @ mc64, wv @ hv,
                             float(wmc @ mc64), float(wmc @ hv), float(whv @ hv)])
            pair.made[sigma] = (mc, weight, half, sums)
            self._count(pair)
        return sums

    def quarters(self, card: np.ndarray, index: int) -> float:
        """How well each quarter of *card* (upright, at :attr:`size`) is explained by
        face *index* upright, the least of the four, as a correlation: the card is
        fitted to the face over the whole card (per channel, a gain and an offset, each
        free to vary linearly across and down the card: a lamp's falloff is no part
        of the card missing), and
        each quarter's unexplained energy is counted against a quarter's share of the
        card's whole variance (so a plain quarter, where the face has nothing to
        correlate with, passes when the card is plain there too, and a quarter where
        another card or a hand lies fails)."""
        key = (index, card.tobytes())
        if self._quartered[0] == key:  # the same card just asked about (read asks twice)
            return self._quartered[1]
        x = self._prepared(card[None])[0].reshape(-1, 3)
        xm = x - _channel_means(x[None])[0, 0]
        h, w = self._cores.shape[1:3]
        # the light may fall off across the card: the face's gain may vary linearly
        # over it, and so may an offset (a lamp's falloff, a sheen's edge)
        u, v = self._across, self._down
        fm, fmu, fmv, inv, means = self._shading(index)
        xs = xm.astype(np.float64)
        # (the column sums in numpy's order, by OpenCV's row reduction: see _channel_sums)
        rhs = np.stack([_column_sums(fm * xs), _column_sums(fmu * xs), _column_sums(fmv * xs),
                        _column_sums(u * xs), _column_sums(v * xs)], axis=1)  # 3 x 5
        coef = np.einsum("cij,cj->ci", inv, rhs)                          # 3 x 5
        fit = (fm * (coef[:, 0] + coef[:, 1] * u + coef[:, 2] * v) + coef[:, 3] * u
               + coef[:, 4] * v - (means * coef).sum(axis=1))
        resid = (xs - fit).reshape(h, w, 3)
        total = float((xm * xm).sum())
        worst = 0.0
        for ys in (slice(0, h // 2), slice(h // 2, h)):
            for xs in (slice(0, w // 2), slice(w // 2, w)):
                worst = max(worst, 4 * float((resid[ys, xs] ** 2).sum()) / max(total, 1e-6))
        got = float(np.sqrt(max(0.0, 1.0 - worst)))
        self._quartered = (key, got)
        return got

    def _shading(self, index: int) -> tuple[np.ndarray, ...]:
        """What :meth:`quarters` fits face row *index* with, made once a face: the face
        less its mean per channel (P x 3), that times the across and the down
        coordinates (float64 P x 3 each), and per channel the inverse of the normal
        matrix (3 x 5 x 5) and the means (3 x 5) of the columns face, face x across,
        face x down, across, down."""
        got = self._shade.get(index)
        if got is None:
            u, v = self._across, self._down
            f = self._cores[index].reshape(-1, 3)
            fm = f - f.mean(axis=0)
            wide = fm.astype(np.float64)
            inv, means = [], []
            for c in range(3):
                fc = wide[:, c:c + 1]
                A = np.hstack([fc, fc * u, fc * v, u, v])
                m = A.mean(axis=0)
                Ac = A - m
                inv.append(np.linalg.pinv(Ac.T @ Ac))
                means.append(m)
            got = self._shade[index] = (fm, fm * u, fm * v, np.stack(inv), np.stack(means))
        return got

    def one_face(self, cards: np.ndarray, index: int, cells: tuple[int, int]
                 ) -> tuple[np.ndarray, np.ndarray]:
        """:meth:`scores` and :meth:`cell_scores` of *cards* (N x h x w x 3 uint8, at
        :attr:`size`) with face row *index* alone (N each), from sums and dot products
        (no card standardised on its own): for weighing many pictures against one face."""
        if not len(cards):
            return np.zeros(0, np.float32), np.zeros(0, np.float32)
        key = (index, cells)
        if key not in self._one:
            core = self._cores[index]
            h, w = core.shape[:2]
            rows, cols = np.divmod(np.arange(h * w), w)
            (cx, cy), ch, cw = cells, h // cells[1], w // cells[0]
            regions = [(rows // ch == y) & (cols // cw == x) for y in range(cy) for x in range(cx)]
            # (in float64: a plain cell's sum of squares is the square of its sum within
            # float32's precision); the whole face a region too, upright only
            masks, count, faces = parts(np.ascontiguousarray(core).reshape(-1, 3),
                                        [np.ones(h * w, bool), *regions], np.float64)
            self._one[key] = masks, count, np.ascontiguousarray(
                faces.reshape(len(faces), len(count), 2, 3)[:, :, 0].reshape(len(faces), -1))
        seen = self._prepared(cards).astype(np.float64).reshape(len(cards), -1)  # one copy
        per = correlations(seen, *self._one[key])[:, :, 0]
        part = np.sort(per[:, 1:], axis=1)
        return per[:, 0], part[:, -((part.shape[1] + 1) // 2):].mean(axis=1)

    def light_on(self, card: np.ndarray, index: int) -> tuple[float, float, float] | None:
        """The light on *card* (h x w x 3 uint8, at :attr:`size`), per channel (B, G,
        R) how much brighter it shows than face row *index*, read where that face is
        white or grey (its chroma under LIGHT_CHROMA, its lightness over
        LIGHT_LIGHTNESS): a print's neutral parts show the light's colour. None where
        less than LIGHT_SHARE of the face is neutral."""
        face = self._cores[index]
        lab = cv2.cvtColor(np.clip(face, 0, 255).astype(np.uint8),
                           cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float32)
        neutral = ((np.hypot(lab[:, 1] - 128, lab[:, 2] - 128) < LIGHT_CHROMA)
                   & (lab[:, 0] > LIGHT_LIGHTNESS * 2.55))
        if neutral.mean() < LIGHT_SHARE:
            return None
        x = self._prepared(card[None])[0].reshape(-1, 3)[neutral].sum(axis=0)
        f = face.reshape(-1, 3)[neutral].sum(axis=0)
        g = x / np.maximum(f, 1e-6)
        return float(g[0]), float(g[1]), float(g[2])

    def tint(self, card: np.ndarray, index: int) -> float:
        """The tint of the light *card* (h x w x 3 uint8, at :attr:`size`) shows, were it
        face row *index* (either way up): the card's gain over the face's in each
        channel (log, summed over the card), green's less the mean of blue's and red's.
        Lamps and daylight lie along warm to cool, red against blue, with green between
        them: near 0. A face whose light would be green or magenta is not the card's."""
        e = self.edge

        def summed(pic: np.ndarray) -> np.ndarray:
            return pic[e:-e, e:-e].reshape(-1, 3).sum(axis=0, dtype=np.float64)

        if self._colours is None:  # each face's colours as printed (a flattened bank's
            # pictures leave the light's field out); a half turn sums alike
            faces, _ = self._source
            self._colours = np.stack([summed(cv2.resize(faces[c], self.size,
                                                        interpolation=cv2.INTER_AREA))
                                      for c in self.ids])
        x = summed(card)
        f = self._colours[index % len(self.ids)]
        g = np.log(np.maximum(x, 1e-6) / np.maximum(f, 1e-6))
        return float(g[1] - (g[0] + g[2]) / 2)

    def without_reflection(self, card: np.ndarray, index: int) -> np.ndarray | None:
        """*card* (h x w x 3 uint8, at :attr:`size`) with a reflection that face row
        *index* does not explain (:func:`vision.glare.specular_spot`) set to the mean
        colour of the rest, as washed-out glare is; None where there is none."""
        spot = specular_spot(self._prepared(card[None])[0], self._cores[index])
        if spot is None:
            return None
        e = self.edge
        blank = np.zeros(card.shape[:2], bool)
        blank[e:e + spot.shape[0], e:e + spot.shape[1]] = spot
        out = card.copy()
        out[blank] = card[~blank].mean(axis=0).astype(np.uint8)
        return out

    def cell_scores_each(self, cards: np.ndarray, cells: tuple[int, int]) -> np.ndarray:
        """Per-cell correlations (N x 2K x C) of *cards* with each face."""
        if cells not in self._cells:
            self._cells[cells] = _cell_rows(self._cores, cells)
        seen = _cell_rows(self._prepared(cards), cells)
        return _cellwise(seen, self._cells[cells])


def _cosines(h: int, w: int, k: int) -> np.ndarray:
    """An orthonormal basis (h*w x k*k, float32) of the pictures h x w that are products
    of the lowest *k* cosines across and down (the DCT's lowest frequencies)."""
    u = np.cos(np.pi * np.arange(k)[None] * (np.arange(w)[:, None] + 0.5) / w)  # w x k
    v = np.cos(np.pi * np.arange(k)[None] * (np.arange(h)[:, None] + 0.5) / h)  # h x k
    basis = (v[:, None, :, None] * u[None, :, None, :]).reshape(h * w, k * k)
    return np.linalg.qr(basis)[0].astype(np.float32)


def rectify(frame: np.ndarray, quad: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """The card inside *quad* (its TL, TR, BR, BL in frame px) warped upright to
    *size* (w, h), anti-aliased (warped at twice the size, then shrunk by area)."""
    w, h = size
    # supersampled only where the quad is much bigger than the picture
    span = float(np.hypot(*(np.asarray(quad[2], np.float32) - quad[0])))
    k = 2 if span > 2.5 * float(np.hypot(w, h)) else 1
    dst = np.float32([(0, 0), (w * k, 0), (w * k, h * k), (0, h * k)]) - 0.5
    M = cv2.getPerspectiveTransform(np.asarray(quad, np.float32), dst)
    big = cv2.warpPerspective(frame, M, (w * k, h * k), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
    return big if k == 1 else cv2.resize(big, (w, h), interpolation=cv2.INTER_AREA)


def rectify_all(frame: np.ndarray, quads: list[np.ndarray] | np.ndarray,
                size: tuple[int, int]) -> np.ndarray:
    """:func:`rectify` of each of *quads* (N x h x w x channels, in one array): the
    warps written in place, without a picture each to stack; those supersampled shrunk
    all at once (an area shrink by exactly two is each 2 x 2 block's rounded mean,
    wherever the block lies, so the stack shrinks as each picture would)."""
    w, h = size
    out = np.empty((len(quads), h, w) + frame.shape[2:], frame.dtype)
    if not len(quads):
        return out
    dst, dst2, diag = _rectify_targets(w, h)
    big = _supersampled(quads, diag)
    if big.any():
        many = np.empty((int(big.sum()), 2 * h, 2 * w) + frame.shape[2:], frame.dtype)
        for j, i in enumerate(np.flatnonzero(big)):
            M = cv2.getPerspectiveTransform(np.asarray(quads[i], np.float32), dst2)
            cv2.warpPerspective(frame, M, (w * 2, h * 2), dst=many[j], flags=cv2.INTER_LINEAR,
                                borderMode=cv2.BORDER_REPLICATE)
        shrunk = cv2.resize(many.reshape((len(many) * 2 * h, 2 * w) + frame.shape[2:]),
                            (w, len(many) * h), interpolation=cv2.INTER_AREA)
        out[big] = shrunk.reshape((len(many), h, w) + frame.shape[2:])
    for i in np.flatnonzero(~big):
        M = cv2.getPerspectiveTransform(np.asarray(quads[i], np.float32), dst)
        cv2.warpPerspective(frame, M, (w, h), dst=out[i], flags=cv2.INTER_LINEAR,
                            borderMode=cv2.BORDER_REPLICATE)
    return out


#: :func:`rectify_all`'s corners to warp onto and the diagonal past which it
#: supersamples, by card size (w, h): made once.
_TARGETS: dict[tuple[int, int], tuple[np.ndarray, np.ndarray, float]] = {}


def _rectify_targets(w: int, h: int) -> tuple[np.ndarray, np.ndarray, float]:
    got = _TARGETS.get((w, h))
    if got is None:
        got = _TARGETS[(w, h)] = (
            np.float32([(0, 0), (w, 0), (w, h), (0, h)]) - 0.5,
            np.float32([(0, 0), (w * 2, 0), (w * 2, h * 2), (0, h * 2)]) - 0.5,
            2.5 * float(np.hypot(w, h)))
    return got


def _supersampled(quads: list[np.ndarray] | np.ndarray, diag: float) -> np.ndarray:
    """Which of *quads* :func:`rectify` would supersample (its TL-BR diagonal, as
    rectify measures it, longer than *diag*): for float32 quads all at once."""
    if all(getattr(q, "dtype", None) == np.float32 for q in quads):
        q = np.asarray(quads, np.float32).reshape(-1, 4, 2)
        d = q[:, 2] - q[:, 0]
        return np.hypot(d[:, 0], d[:, 1]).astype(np.float64) > diag
    return np.array([float(np.hypot(*(np.asarray(q[2], np.float32) - q[0]))) > diag
                     for q in quads], bool)


def ecc_align(frame: np.ndarray, quad: np.ndarray, template: np.ndarray, margin: float,
              iterations: int, max_move: float, mask: np.ndarray | None = None,
              homography: bool = False) -> np.ndarray:
    """*quad* (frame px; the corners of *template*'s TL, TR, BR, BL) moved by an affine
    ECC alignment with *template* (grey float32, blurred like the frame here) of the
    frame around it: a window *margin* of the template's width wider each way, at most
    *iterations* steps. *mask* (uint8, the window's size: the template's plus
    :func:`ecc_margin` each way): the window's pixels to align on, None for all (a
    hand over part of the card pulls an alignment off it). *homography*: a
    perspective alignment instead of an affine one (a card close to the camera shows
    its perspective). *quad* itself when ECC fails or moves a corner further than
    *max_move* of the quad's width (it slid onto something else)."""
    h, w = template.shape[:2]
    m = ecc_margin(w, margin)
    dst = np.float32([(m, m), (m + w, m), (m + w, m + h), (m, m + h)]) - 0.5
    M = cv2.getPerspectiveTransform(np.asarray(quad, np.float32), dst)
    win = cv2.warpPerspective(frame, M, (w + 2 * m, h + 2 * m), flags=cv2.INTER_LINEAR,
                              borderMode=cv2.BORDER_REPLICATE)
    win = cv2.GaussianBlur(cv2.cvtColor(win, cv2.COLOR_BGR2GRAY).astype(np.float32), (0, 0),
                           BLUR_PX)
    warp = np.float32([[1, 0, m], [0, 1, m], [0, 0, 1]][:3 if homography else 2])
    motion = cv2.MOTION_HOMOGRAPHY if homography else cv2.MOTION_AFFINE
    try:
        _, warp = cv2.findTransformECC(template, win, warp, motion,
                                       (cv2.TERM_CRITERIA_COUNT | cv2.TERM_CRITERIA_EPS,
                                        iterations, 1e-4), mask, 1)
    except cv2.error:
        return quad
    corners = np.float32([(0, 0), (w, 0), (w, h), (0, h)]) - 0.5
    in_win = cv2.perspectiveTransform(corners[:, None], warp)[:, 0] if homography \
        else corners @ warp[:, :2].T + warp[:, 2]
    back = cv2.perspectiveTransform(in_win.reshape(-1, 1, 2).astype(np.float64),
                                    np.linalg.inv(M)).reshape(4, 2).astype(np.float32)
    width = float(np.hypot(*(np.asarray(quad[1], np.float32) - quad[0])))
    if np.abs(back - quad).max() > max_move * width:
        return quad
    return back


def ecc_margin(width: int, margin: float) -> int:
    """The px :func:`ecc_align`'s window reaches beyond a template *width* px wide."""
    return max(2, round(margin * width))


def bank_sizes(aspect: float) -> list[tuple[int, int]]:
    """Card sizes (w, h px) of the :data:`RESOLUTIONS` for outline ratio *aspect*."""
    return [(max(8, round(WIDTH_MM * r)), max(8, round(WIDTH_MM * r * aspect)))
            for r in RESOLUTIONS]


def alike_pairs(faces: dict[str, np.ndarray], aspect: float) -> list[tuple[str, str, float]]:
    """Pairs of the 28 card faces too alike to be told apart: correlating at least
    :data:`ALIKE_LIMIT` at the finest resolution, with each pair's correlation. Faces
    are compared as the reading compares them: by their print (each colour channel
    standardised) within a cult, and across the cults also by their colours (the
    reading takes a card's cult from its colours), as one picture of all channels."""
    cards = {c: faces[c] for c in CARD_IDS if c in faces}
    bank = FaceBank(cards, bank_sizes(aspect)[-1])
    ids = bank.ids
    size = bank.size
    joint = np.stack([cv2.resize(cards[c], size, interpolation=cv2.INTER_AREA)
                      for c in ids]).reshape(len(ids), -1).astype(np.float32)
    joint -= joint.mean(axis=1, keepdims=True)
    joint /= np.maximum(np.linalg.norm(joint, axis=1, keepdims=True), 1e-6)
    colour = joint @ joint.T
    out = []
    for i in range(len(ids)):
        for j in range(i + 1, len(ids)):
            same_cult = ids[i].split("-")[0] == ids[j].split("-")[0]
            c = float(bank.alike[i, j]) if same_cult else float(min(bank.alike[i, j],
                                                                     colour[i, j]))
            if c >= ALIKE_LIMIT:
                out.append((ids[i], ids[j], c))
    return out
