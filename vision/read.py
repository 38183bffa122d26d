"""Reading one side of the Twilight card: find the uppermost card in the side's zone,
make its outline precise, and name it.

* :class:`CardFinder` — in a zone image rectified to the table plane (known px/mm, so
  a card has a known size; the frame is shrunk by area first, so stripes and fine
  print do not alias), correlate the deck's generic faces (each cult's mean face,
  and faces unlike it such as a purgatory) over turns within :data:`MAX_TURN_DEG` of
  the seat's direction and centres near the side; the card on top shows its whole
  face, older cards beneath it only part. A few distinct poses are kept, and the
  best whole-card *outlines* (edges all round, standing out from the lines just
  inside and outside) as fallbacks for a plain card no generic face fits where it
  lies. Each pose is made precise on the frame at :data:`REFINE_PX_PER_MM`
  (:func:`refine_quad`); once nearly named, the recogniser aligns that card's own
  face by ECC (:func:`vision.locate.align_face`): a mm of misplacement is what makes
  one cleric look like another.
* :class:`CardMatcher` — identity by normalised correlation of the rectified, blurred
  grey face with every face of the profile, both ways up, weighted towards where the
  deck's faces differ (the frame every card shares says nothing) and searched over
  small shifts. It must reach :data:`MIN_MATCH`, lead the best card of another name by
  :data:`MIN_MARGIN` of the gap between those two faces, and three of the card's four
  quarters must look like it (a hand or the table over half a "card" fails). Cult by
  colour: the chroma histogram, white-balanced on the card's own paper, against each
  cult's; colour and shape must agree, and faces alike in grey but for their cult
  (same name) need colour to decide. Weak or ambiguous evidence gives ``"unknown"``.
* :class:`PairJudge` — faces too alike at the match resolution (:data:`CONFUSABLE`:
  adept, priest and novice; hierarch and high priest) are decided again on a finer
  picture, only where they differ (a numeral, a head); none fitting clearly better
  gives ``"unknown"``.

Correlations are normalised and colours balanced on the card itself, so no light
level is assumed; the constants below are in the card's own millimetres.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from companion.core.cards import BACK_IDS, CARD_IDS, Card
from vision.locate import as_gray, refine_blur, refine_quad
from vision.profile import (
    CARD_MM,
    CHROMA_MIN,
    COLOUR_MARGIN_MM,
    HIST_BINS,
    DeckProfile,
    chroma_hist,
)

#: Resolution (px/mm) of the rectified zone the card search runs on.
ZONE_PX_PER_MM = 0.35
#: Turns of a side card away from its seat's direction that are searched (degrees),
#: how many edge-orientation peaks are tried, and the fine steps around the best.
MAX_TURN_DEG = 24.0
TURN_STEP_DEG = 8.0
TURN_CANDIDATES = 3
FINE_TURN_STEPS_DEG = (-2.0, 2.0)
#: Card poses kept per zone for when the best cannot be named, and how far apart
#: (centre, mm, or turn, degrees) two must be to count as different.
HYPOTHESES = 3
DISTINCT_MM = 8.0
DISTINCT_TURN_DEG = 6.0
#: Outline fallback poses per zone, and how far (zone px) inside and outside the
#: outline its edges must stand out.
OUTLINE_HYPOTHESES = 2
OUTLINE_RIDGE_PX = 2
#: A face correlating less than this with its cult's mean face gets its own template.
OWN_TEMPLATE_BELOW = 0.5
#: Second, precise pass over a found card: resolution, shifts and turns searched.
REFINE_PX_PER_MM = 1.6
REFINE_SHIFT_MM = 6.0
REFINE_TURNS_DEG = (0.0,)
#: ... and card sizes, relative to the size the Twilight card's pose implies.
REFINE_SCALES = (1.0,)
#: Correlation with a generic face a card on top reaches (an empty table does not).
MIN_CARD_SCORE = 0.25
#: Above this a card surely lies there: an unreadable one is then "unknown", below it
#: only a card whose face matched counts.
SURE_CARD_SCORE = 0.6
#: Where a side card's centre may lie in its zone: u along the side, v outward (mm).
CENTRE_U_MM = 30.0
CENTRE_V_MM = (36.0, 100.0)
#: Resolution (px/mm) of the rectified card matched against the profile's faces,
#: and the margin (mm) left out at its edge (where the table or a neighbour shows).
MATCH_PX_PER_MM = 1.25
MATCH_MARGIN_MM = 2.5
MATCH_BLUR_SIGMA = 1.5
#: Below this correlation (before the shift search) with every face, identification
#: gives up at once: the shift search gains hundredths, not this much.
GIVE_UP_SCORE = 0.3
#: Misalignment (mm) searched each way for the SHIFT_CANDIDATES best-matching faces.
SHIFT_MM = 1.6
SHIFT_CANDIDATES = 8
#: Identity evidence: the best correlation must reach MIN_MATCH, and lead the best
#: card of another name by MIN_MARGIN of the gap between those two faces themselves;
#: otherwise "unknown".
MIN_MATCH = 0.7
MIN_MARGIN = 0.3
#: Unweighted correlation with some face of the deck below which nothing counts as a
#: card (wood grain between plank joints can fake a card's outline, not its face).
MIN_PRESENCE = 0.3
#: Correlation three of the four quarters of the card must reach with the face named.
MIN_QUARTER = 0.5
#: How much better a face of the other cult than the colour's may match before the
#: disagreement makes the card "unknown".
MAX_CULT_DISAGREEMENT = 0.05
#: Share (percent) of a card's lightest pixels taken as its paper for white balance.
PAPER_PERCENT = 10
#: Cult by colour counts when one cult's histogram overlap beats the other's by this.
MIN_CULT_MARGIN = 0.08


#: Faces this alike at the match resolution (weighted correlation of the two faces) are
#: told apart again at PAIR_PX_PER_MM, only where they differ (a numeral, a head):
#: within PAIR_SHIFT_MM of the placement, on the pixels where the two faces' grey
#: levels differ by PAIR_DIFF_LEVEL standard deviations; one must fit PAIR_DECIDES
#: times better than the other, or the card is "unknown".
CONFUSABLE = 0.95
PAIR_PX_PER_MM = 2.5
PAIR_SHIFT_MM = 0.8
PAIR_DIFF_LEVEL = 0.8
PAIR_DECIDES = 0.8
#: Least share of the pixels where two alike faces differ that must show (not glare)
#: for their duel to decide.
PAIR_MIN_SEEN = 0.3


@dataclass(frozen=True)
class Identity:
    """What a rectified card is: ``card_id`` (C1 id or ``"unknown"``), ``cult`` by colour
    (``None`` if undecided), ``confidence`` (0..1), ``score``/``margin`` of the match and
    ``upside_down`` (the face matched turned 180°), ``presence`` (correlation with the
    most alike face of the deck, unweighted: is this a card of the deck at all),
    ``colour`` (chroma-histogram overlap with the named face) and ``quarters`` (the
    least correlation of a quarter of the card with the named face)."""

    card_id: str
    cult: str | None
    confidence: float
    score: float
    margin: float
    upside_down: bool
    presence: float = 1.0
    colour: float = 1.0
    quarters: float = 1.0
    #: the best-matching face's id even when the evidence was too weak to name it
    best: str | None = None
    #: the best face of another name, and whether every test but the margin passed
    rival: str | None = None
    plausible: bool = False


class PairJudge:
    """Tells two faces that look nearly the same at the match resolution apart on a
    finer, rectified picture of the card, where they differ (see :data:`CONFUSABLE`)."""

    def __init__(self, profile: DeckProfile) -> None:
        w, h = CARD_MM
        r = PAIR_PX_PER_MM
        self.size = (round(w * r), round(h * r))
        self.pad = round(PAIR_SHIFT_MM * r)
        self.margin = round(MATCH_MARGIN_MM * r)
        self.faces = {cid: self._standard(cv2.resize(face, self.size, interpolation=cv2.INTER_AREA))
                      for cid, face in profile.faces.items() if cid in CARD_IDS}
        self._masks: dict[tuple[str, str], tuple[np.ndarray, np.ndarray]] = {}

    def _standard(self, bgr: np.ndarray) -> np.ndarray:
        gray = bgr if bgr.ndim == 2 else cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
        gray = cv2.GaussianBlur(gray.astype(np.float32), (0, 0), 1.0)
        m = self.margin
        core = gray[m:gray.shape[0] - m, m:gray.shape[1] - m]
        return (core - core.mean()) / max(float(core.std()), 1e-3)

    def _where(self, a: str, b: str) -> tuple[np.ndarray, np.ndarray]:
        key = (a, b) if a < b else (b, a)
        if key not in self._masks:
            differ = np.abs(self.faces[a] - self.faces[b]) > PAIR_DIFF_LEVEL
            self._masks[key] = np.nonzero(differ)
        return self._masks[key]

    def judge(self, card: np.ndarray, candidates: list[str],
              hidden: np.ndarray | None = None) -> str | None:
        """Which of the alike faces *candidates* the upright card picture *card*
        (:attr:`size` plus :attr:`pad` px on every side, BGR) shows: the one that fits
        clearly better than each other one where the two differ; None when none does.
        *hidden* (a boolean mask like *card*) marks pixels that show nothing (glare):
        they are left out, and a duel that loses most of its pixels so decides nothing."""
        candidates = [c for c in candidates if c in self.faces]
        if len(candidates) < 2:
            return None
        p = self.pad
        gray = cv2.cvtColor(card, cv2.COLOR_BGR2GRAY) if card.ndim == 3 else card
        gray = cv2.GaussianBlur(gray.astype(np.float32), (0, 0), 1.0)
        m = self.margin
        core = gray[m:gray.shape[0] - m, m:gray.shape[1] - m]
        centre = core[p:core.shape[0] - p, p:core.shape[1] - p]
        core = (core - centre.mean()) / max(float(centre.std()), 1e-3)
        seen = None
        if hidden is not None:
            seen = ~hidden[m + p:hidden.shape[0] - m - p, m + p:hidden.shape[1] - m - p]
        wins = {c: 0 for c in candidates}
        for i, a in enumerate(candidates):
            for b in candidates[i + 1:]:
                winner = self._duel(core, a, b, seen)
                if winner is not None:
                    wins[winner] += 1
        champion = max(candidates, key=lambda c: wins[c])
        return champion if wins[champion] == len(candidates) - 1 else None

    def _duel(self, core: np.ndarray, a: str, b: str,
              seen: np.ndarray | None = None) -> str | None:
        ys, xs = self._where(a, b)
        if seen is not None:
            keep = seen[ys, xs]
            if keep.mean() < PAIR_MIN_SEEN:
                return None
            ys, xs = ys[keep], xs[keep]
        if len(ys) == 0:
            return None
        p = self.pad
        fa, fb = self.faces[a][ys, xs], self.faces[b][ys, xs]
        width = core.shape[1]
        shifts = np.arange(2 * p + 1)
        offsets = (shifts[:, None] * width + shifts[None, :]).ravel()
        # every shift at once: flat indices of the differing pixels, shifted
        seen = np.take(core.ravel(), (ys * width + xs)[None, :] + offsets[:, None])
        best_a = float(np.square(seen - fa).mean(axis=1).min())
        best_b = float(np.square(seen - fb).mean(axis=1).min())
        if best_a < PAIR_DECIDES * best_b:
            return a
        if best_b < PAIR_DECIDES * best_a:
            return b
        return None


def paper_balanced(bgr: np.ndarray) -> np.ndarray:
    """*bgr* with its lightest tenth made grey: a white balance on the card itself."""
    gray = cv2.cvtColor(bgr, cv2.COLOR_BGR2GRAY)
    light = gray >= percentile_u8(gray, 100 - PAPER_PERCENT)
    # bgr[light], faster: the light pixels in the same order
    pixels = np.ascontiguousarray(bgr).reshape(-1, 3).compress(light.ravel(), axis=0)
    mean = pixels.astype(np.float32).mean(axis=0)
    gains = mean.mean() / np.maximum(mean, 1.0)
    # np.clip(bgr.astype(np.float32) * gains, 0, 255).astype(np.uint8), as a table per
    # channel of the same products
    table = np.clip(np.arange(256, dtype=np.float32)[:, None] * gains, 0, 255).astype(np.uint8)
    return cv2.LUT(bgr, table.reshape(256, 1, 3))


def percentile_u8(gray: np.ndarray, percent: float) -> float:
    """``np.percentile(gray, percent)`` (linear interpolation) of a uint8 array, from its
    histogram instead of a partial sort: the same arithmetic on the same two values."""
    n = gray.size
    q = percent / 100
    virtual = (n - 1) * q  # numpy's virtual index of the linear method
    cum = np.cumsum(np.bincount(gray.ravel(), minlength=256))
    if virtual >= n - 1:
        return float(np.searchsorted(cum, n - 1, side="right"))
    virtual = max(virtual, 0.0)
    prev = np.floor(virtual)
    gamma = virtual - prev
    a, b = (float(np.searchsorted(cum, k, side="right")) for k in (int(prev), int(prev) + 1))
    diff = b - a
    return b - diff * (1 - gamma) if gamma >= 0.5 else a + diff * gamma


def percentile_f32(values: np.ndarray, percent: int) -> float:
    """``float(np.percentile(values, percent))`` (linear interpolation) of a 1-D float32
    array without NaNs, from one partial sort of its two neighbouring values and without
    numpy's general machinery (four times faster on a few thousand values): the same
    float64 index and float32 interpolation, bit for bit."""
    n = values.size
    q = percent / 100
    virtual = n * q + (1 + q * -1) - 1  # numpy's virtual index of the linear method
    if virtual >= n - 1:
        return float(values.max())
    virtual = max(virtual, 0.0)
    prev = int(np.floor(virtual))
    gamma = virtual - prev
    part = np.partition(values, (prev, prev + 1))
    a, b = part[prev], part[prev + 1]
    diff = b - a
    return float(b - diff * np.float32(1 - gamma) if gamma >= 0.5 else a + diff * np.float32(gamma))


def colour_signature(bgr: np.ndarray) -> np.ndarray:
    """Shares of a card's pixels (inside COLOUR_MARGIN_MM) that are grey and that fall
    in each Lab a*b* hue bin: sums to 1. Two faces agree when both their paper and
    their inks agree."""
    m = round(COLOUR_MARGIN_MM * MATCH_PX_PER_MM)
    lab = cv2.cvtColor(bgr[m:bgr.shape[0] - m, m:bgr.shape[1] - m], cv2.COLOR_BGR2Lab)
    a = lab[..., 1].astype(np.float32) - 128
    b = lab[..., 2].astype(np.float32) - 128
    mask = ((a * a + b * b) > CHROMA_MIN ** 2).astype(np.uint8)
    hist = cv2.calcHist([lab], [1, 2], mask, [HIST_BINS, HIST_BINS], [0, 256, 0, 256]).ravel()
    total = float(lab.shape[0] * lab.shape[1])
    return np.concatenate([[total - hist.sum()], hist]) / max(total, 1.0)


def _unit_rows(stack: np.ndarray) -> np.ndarray:
    return _unit_rows_inplace(stack.reshape(stack.shape[0], -1).astype(np.float32))


def _unit_rows_inplace(m: np.ndarray) -> np.ndarray:
    """:func:`_unit_rows` of a 2-D float32 array *m*, in place (no copies of *m*)."""
    m -= m.mean(axis=1, keepdims=True)
    # np.linalg.norm(m, axis=1) without its overhead: the same sum of squares
    m /= np.maximum(np.sqrt(np.add.reduce(np.square(m), axis=1, keepdims=True)), 1e-6)
    return m


def _quarter_slices(h: int, w: int) -> list[tuple[slice, slice]]:
    """The four quarters (rows, columns) of an h x w picture."""
    return [(ys, xs) for ys in (slice(0, h // 2), slice(h // 2, h))
            for xs in (slice(0, w // 2), slice(w // 2, w))]


class CardMatcher:
    """The profile's faces prepared for matching rectified cards."""

    def __init__(self, profile: DeckProfile) -> None:
        self.profile = profile
        w, h = CARD_MM
        s = MATCH_PX_PER_MM
        self.size = (round(w * s), round(h * s))
        m = round(MATCH_MARGIN_MM * s)
        self.margin_px = m
        self.ids = [cid for cid in profile.faces if cid in CARD_IDS or cid in BACK_IDS]
        self.pad = max(1, round(SHIFT_MM * s))
        grays = [self.prepare(profile.faces[cid]) for cid in self.ids]
        self.core_shape = grays[0].shape
        # Weight each pixel by how much the faces differ there: the frame and the
        # corner layout every card shares carry no identity and would swamp the symbol.
        faces = _unit_rows(np.stack(grays + [g[::-1, ::-1] for g in grays]))
        n = len(self.ids)
        cults = [cid.split("-", 1)[0] for cid in self.ids] * 2
        spread = np.mean([faces[[i for i in range(2 * n) if cults[i] == c]].std(axis=0)
                          for c in sorted(set(cults))], axis=0)
        self.weight = (spread / max(float(spread.max()), 1e-9)).astype(np.float32)
        self.templates = _unit_rows(faces * self.weight)  # 2n rows: upright then turned
        self.plain = faces  # unweighted: how much it looks like a card of this deck at all
        # the shift search's products (see identify): each template times the weight,
        # and the weight itself as the last row; and the weight squared
        self._folded = np.vstack([self.templates * self.weight, self.weight[None]])
        self._weight_sq = np.square(self.weight)
        # each face's four quarters, each made unit alone (see _quarters)
        h, w = self.core_shape
        self._face_quarters = [
            [_unit_rows(face.reshape(self.core_shape)[ys, xs][None])[0] for ys, xs in _quarter_slices(h, w)]
            for face in faces]
        self.gram = self.templates @ self.templates.T
        self.cult_of = [Card.parse(cid).cult.value if cid in CARD_IDS else None
                        for cid in self.ids]
        self.names = [cid.split("-", 1)[1] for cid in self.ids]
        self._alike = {cid: self._alike_faces(i) for i, cid in enumerate(self.ids)}
        # colours compared after balancing each card on its own lightest part (paper
        # or light ink), in the profile's faces and in the frame alike: a warm lamp
        # must not turn a purple cult red
        self.face_hist = [chroma_hist(paper_balanced(cv2.resize(
            profile.faces[cid], self.size, interpolation=cv2.INTER_AREA)),
            px_per_mm=MATCH_PX_PER_MM) for cid in self.ids]
        # ... but not for telling a card from the table: balanced on its lightest part,
        # plain wood turns grey like paper
        self.face_sig = [colour_signature(cv2.resize(
            profile.faces[cid], self.size, interpolation=cv2.INTER_AREA))
            for cid in self.ids]
        self.cult_hist = {}
        for cult in ("sun", "moon"):
            hist = sum(h for h, c in zip(self.face_hist, self.cult_of, strict=True) if c == cult)
            self.cult_hist[cult] = hist / max(float(np.sum(hist)), 1e-9)

    def alike(self, card_id: str) -> list[str]:
        """*card_id* and the faces too alike to it at this resolution to be told apart
        surely (see :class:`PairJudge`); of its cult when it has one."""
        return self._alike[card_id]

    def _alike_faces(self, i: int) -> list[str]:
        cult = self.cult_of[i]
        return [cid for j, cid in enumerate(self.ids)
                if j == i or (float(self.gram[i, j]) >= CONFUSABLE and cid in CARD_IDS
                              and self.cult_of[j] in (cult, None) and self.names[j] != self.names[i])]

    def prepare(self, face_bgr: np.ndarray) -> np.ndarray:
        """A face (any size, upright, full card) as the gray, blurred core matched."""
        img = cv2.resize(face_bgr, self.size, interpolation=cv2.INTER_AREA)
        return self._core(img)

    def _core(self, img: np.ndarray, pad: int = 0) -> np.ndarray:
        gray = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        gray = cv2.GaussianBlur(gray.astype(np.float32), (0, 0), MATCH_BLUR_SIGMA)
        m = self.margin_px - pad
        return gray[m:gray.shape[0] - m, m:gray.shape[1] - m]

    def _quarters(self, seen: np.ndarray, index: int) -> float:
        """The second-least correlation, over the card's four quarters, of *seen* (a
        core window) with face *index* (either way up): 1 when all of the face shows."""
        h, w = self.core_shape
        each = []
        for (ys, xs), b in zip(_quarter_slices(h, w), self._face_quarters[index], strict=True):
            a = _unit_rows(seen[ys, xs][None])[0]
            each.append(float(a @ b))
        # one quarter may be lost to a glare spot or a fingertip; two may not
        return sorted(each)[1]

    def identify(self, card_bgr: np.ndarray, glance: bool = False) -> Identity:
        """Name a rectified card image: portrait, :attr:`size` plus :attr:`pad` px on
        every side (so small misalignments can be searched), either way up. A *glance*
        only scores the faces as placed (no shifts, colours or quarters): ``score`` and
        ``best`` say whether a closer look is worth it."""
        p = self.pad
        gray = self._core(card_bgr, pad=p)
        h, w = self.core_shape
        n = len(self.ids)
        plain = _unit_rows(gray[p:p + h, p:p + w][None])
        presence = float((self.plain @ plain[0]).max())
        centre = _unit_rows(plain * self.weight)[0]
        scores = self.templates @ centre
        if glance or float(scores.max()) < GIVE_UP_SCORE:
            # nothing here is like any face (an empty side, a fallback pose on the table)
            i = int(np.argmax(scores))
            return Identity("unknown", None, 0.0, float(scores.max()), 0.0, i >= n, presence,
                            0.0, 0.0, self.ids[i % n])
        # search small shifts for the few best faces: the outline is found to a mm or so
        top = np.argsort(-scores)[:SHIFT_CANDIDATES]
        # every shifted window (row dy * (2p+1) + dx) correlated as the centre was:
        # _unit_rows(_unit_rows(windows) * weight) @ templates[top].T, folded into
        # products: the templates' rows are zero-mean (the second centring drops out of
        # the product) and the first unit's scale cancels in the second, so it is the
        # centred windows times weight * template, over the spread of the centred
        # windows times the weight (about half the passes over the windows)
        k = 2 * p + 1
        windows = np.array(np.lib.stride_tricks.sliding_window_view(
            gray[:h + k - 1, :w + k - 1], (h, w)), np.float32).reshape(k * k, h * w)
        windows -= windows.mean(axis=1, keepdims=True)
        products = windows @ self._folded[np.append(top, len(self._folded) - 1)].T
        weighted_sum = products[:, -1].astype(np.float64)  # sum of window * weight
        squares = (np.square(windows) @ self._weight_sq).astype(np.float64)
        spread = np.sqrt(np.maximum(squares - weighted_sum * weighted_sum / (h * w), 0.0))
        shifted = products[:, :-1] / np.maximum(spread, 1e-6)[:, None].astype(np.float32)
        # each face's best shift, where it beats the placement as found
        peaks, peak_at = shifted.max(axis=0), shifted.argmax(axis=0)
        better = peaks > scores[top]
        where = dict(zip(top[better].tolist(), peak_at[better].tolist(), strict=True))
        scores[top] = np.maximum(scores[top], peaks)
        both = np.maximum(scores[:n], scores[n:])
        turned = scores[n:] > scores[:n]
        card_bgr = card_bgr[p:card_bgr.shape[0] - p, p:card_bgr.shape[1] - p]
        balanced = paper_balanced(card_bgr)
        hist = chroma_hist(balanced, px_per_mm=MATCH_PX_PER_MM)
        overlap = {c: float(np.minimum(hist, h).sum()) for c, h in self.cult_hist.items()}
        colour_cult = None
        if hist.sum() > 0:
            ranked = sorted(overlap, key=overlap.get, reverse=True)
            if overlap[ranked[0]] - overlap[ranked[1]] >= MIN_CULT_MARGIN:
                colour_cult = ranked[0]
        # identity: among the colour cult's faces when colour decided, else all
        allowed = [i for i in range(n) if colour_cult is None or self.cult_of[i] in
                   (colour_cult, None)]
        best = max(allowed, key=lambda i: both[i])
        best_any = int(np.argmax(both))
        others = [i for i in range(n) if self.names[i] != self.names[best]
                  and (colour_cult is None or self.cult_of[i] in (colour_cult, None))]
        # Margin against the best card of another name, as a fraction of the gap those
        # two faces would show if this were exactly the best one (1: exactly it, 0:
        # half-way between, < 0: nearer the other): fair to faces that differ only in
        # a numeral as well as to faces that differ everywhere.
        margin = 1.0
        if others:
            second = max(others, key=lambda i: both[i])
            i1 = best + (n if turned[best] else 0)
            i2 = second + (n if turned[second] else 0)
            gap = max(1.0 - float(self.gram[i1, i2]), 1e-3)
            margin = float(both[best] - both[second]) / gap
        # a face of the same name in the other cult may look alike in grey (style 1
        # cards differ only in colour and corner marks): then colour must decide
        twin_ok = True
        twins = [i for i in range(n) if self.names[i] == self.names[best] and i != best]
        if twins and colour_cult is None:
            twin = twins[0]
            i1 = best + (n if turned[best] else 0)
            i2 = twin + (n if turned[twin] else 0)
            gap = max(1.0 - float(self.gram[i1, i2]), 1e-3)
            twin_ok = float(both[best] - both[twin]) / gap >= MIN_MARGIN
        score = float(both[best])
        cid = self.ids[best]
        shape_cult = self.cult_of[best_any]
        agree = (colour_cult is None or shape_cult is None or shape_cult == colour_cult
                 or both[best_any] - both[best] < MAX_CULT_DISAGREEMENT)
        # every quarter of the card must look like that face: a hand or the table
        # over part of it (or a fake outline) fails somewhere
        i1 = best + (n if turned[best] else 0)
        if i1 in where:
            dy, dx = divmod(where[i1], k)
            seen = gray[dy:dy + h, dx:dx + w]
        else:
            seen = gray[p:p + h, p:p + w]
        quarters = self._quarters(seen, i1)
        # how far its colours (grey share and hues) are that face's colours
        colour = float(np.minimum(colour_signature(card_bgr), self.face_sig[best]).sum())
        plausible = (score >= MIN_MATCH and agree and presence >= MIN_PRESENCE
                     and quarters >= MIN_QUARTER and twin_ok and cid in CARD_IDS)
        ok = plausible and margin >= MIN_MARGIN
        rival = self.ids[max(others, key=lambda i: both[i])] if others else None
        confidence = float(np.clip(min((score - MIN_MATCH) / (1 - MIN_MATCH),
                                       margin / (2 * MIN_MARGIN)), 0, 1)) if ok else 0.0
        return Identity(cid if ok else "unknown", colour_cult or self.cult_of[best],
                        confidence, score, margin, bool(turned[best]), presence,
                        colour, quarters, cid, rival, plausible)


# -- finding the uppermost card in a zone ------------------------------------------------------


#: np.histogram's bin edges for 90 bins over -45..45 of float32 angles (its own, so a
#: value on an edge falls in the same bin).
_ANGLE_EDGES = np.histogram_bin_edges(np.zeros(1, np.float32), bins=90, range=(-45, 45))


def _angle_histogram(ang: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """``np.histogram(ang, bins=90, range=(-45, 45), weights=weights)[0]`` for float32
    *ang* and *weights*, without its overhead: the same bins (edges[i] <= a < edges[i+1],
    the last closed) and the same float64 sums cast to float32."""
    a, w = ang.ravel(), weights.ravel()
    keep = (a >= -45.0) & (a <= 45.0)
    if not keep.all():
        a, w = a[keep], w[keep]
    a = a.astype(_ANGLE_EDGES.dtype, copy=False)
    # the bin by arithmetic (the edges are whole degrees), then set right as numpy does
    index = (a + np.float32(45.0)).astype(np.intp)
    np.minimum(index, 89, out=index)
    index[a < _ANGLE_EDGES[index]] -= 1
    index[(a >= _ANGLE_EDGES[index + 1]) & (index != 89)] += 1
    return np.bincount(index, weights=w, minlength=90).astype(weights.dtype)


def _dominant_turns(img: np.ndarray, limit: float) -> list[float]:
    """Candidate turns (cv2 degrees, within +-limit) that make the straight edges in
    *img* axis-aligned: peaks of the gradient orientation histogram, folded to 90°."""
    gray = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
    g = cv2.GaussianBlur(gray, (3, 3), 0.8)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    mag = cv2.magnitude(gx, gy)
    ang = np.degrees(np.arctan2(gy, gx)) % 90.0  # the four edges of a card fold together
    ang = np.where(ang >= 45.0, ang - 90.0, ang)
    hist = _angle_histogram(ang, mag)
    hist = np.convolve(np.concatenate([hist[-2:], hist, hist[:2]]), np.ones(5) / 5, "valid")
    hist = hist.tolist()
    peaks = [i for i in range(90) if hist[i] >= hist[i - 1] and hist[i] >= hist[(i + 1) % 90]]
    peaks.sort(key=lambda i: -hist[i])
    # (the turns beyond the limit are left out before the best are taken: a
    # purgatory's stripes, 45 degrees across its edges, make a strong peak out there)
    turns = [i - 44.5 for i in peaks]
    return [t for t in turns if abs(t) <= limit][:TURN_CANDIDATES]


#: Least window spread :class:`TemplateBank` divides by (a flat window's is 0).
_TINY = 1e-30


class TemplateBank:
    """``cv2.matchTemplate(picture, template, cv2.TM_CCOEFF_NORMED)`` of one picture with
    many templates of one size, by the DFT: each template's spectrum is made once per
    picture size and the picture's once per picture, so each template costs a product
    of spectra and an inverse transform (about half what matchTemplate costs, which
    transforms both every call; a zone is searched with up to ten templates at a
    turn). The same correlation, normalisation and treatment of flat windows; the
    float32 transforms round differently (by up to ~2e-4, in windows of little
    contrast)."""

    def __init__(self, templates: list[np.ndarray]) -> None:
        self.shape = templates[0].shape
        # zero-mean templates: the window's mean then drops out of the product
        self._zero_mean = [(t - t.mean()).astype(np.float32) for t in templates]
        self._norms = [float(np.sqrt(np.square(t, dtype=np.float64).sum())) for t in self._zero_mean]
        self._spectra: dict[tuple[int, int], list[np.ndarray]] = {}

    def prepare(self, picture: np.ndarray) -> tuple[np.ndarray, np.ndarray, tuple[int, int]]:
        """What :meth:`match` needs of a float32 *picture*: its spectrum and each
        window's root of summed squared deviations from its mean."""
        ph, pw = picture.shape
        th, tw = self.shape
        size = (cv2.getOptimalDFTSize(ph), cv2.getOptimalDFTSize(pw))
        if size not in self._spectra:
            spectra = []
            for t in self._zero_mean:
                padded = np.zeros(size, np.float32)
                padded[:th, :tw] = t
                spectra.append(cv2.dft(padded))
            self._spectra[size] = spectra
        spectrum = cv2.dft(cv2.copyMakeBorder(picture, 0, size[0] - ph, 0, size[1] - pw,
                                              cv2.BORDER_CONSTANT, value=0))
        rh, rw = ph - th + 1, pw - tw + 1
        s, sq = cv2.integral2(picture, sdepth=cv2.CV_64F)
        total = s[th:, tw:] - s[:rh, tw:] - s[th:, :rw] + s[:rh, :rw]
        squares = sq[th:, tw:] - sq[:rh, tw:] - sq[th:, :rw] + sq[:rh, :rw]
        spread = np.sqrt(np.maximum(squares - total * total / (th * tw), 0.0))
        # (a flat window's 0 kept off 0: the division below then needs no guard)
        return spectrum, np.maximum(spread, _TINY).astype(np.float32), size

    def match(self, prepared: tuple[np.ndarray, np.ndarray, tuple[int, int]], k: int
              ) -> np.ndarray:
        """The normalised correlation of the prepared picture with template *k*, at each
        top-left position where the template lies wholly inside (as matchTemplate)."""
        spectrum, spread, size = prepared
        rh, rw = spread.shape
        product = cv2.mulSpectrums(spectrum, self._spectra[size][k], 0, conjB=True)
        num = cv2.dft(product, flags=cv2.DFT_INVERSE | cv2.DFT_SCALE | cv2.DFT_REAL_OUTPUT
                      )[:rh, :rw]
        scale = spread * np.float32(self._norms[k])
        res = num / scale
        if not cv2.checkRange(res, True, -1.0, 1.0)[0]:
            # a flat window (or rounding at +-1): as matchTemplate, the sign where the
            # product is within 1/8 of its bound, else 0
            inside = np.abs(num) < scale
            res = np.where(inside, res, np.where(np.abs(num) < scale * 1.125, np.sign(num), 0.0)
                           ).astype(np.float32)
        return res


class FoundPoses(list):
    """The card poses :meth:`CardFinder.find_all` placed by the faces, best first (a
    list of (4x2 corners in zone px, score, template index, ``"face"``)); the poses
    their outline places are found only when :meth:`fallbacks` is first asked for
    (most sides are named by their best pose and never need them)."""

    def __init__(self, faces: list, outlines) -> None:
        super().__init__(faces)
        self._outlines = outlines
        self._more: list | None = None

    def fallbacks(self) -> list:
        """Every pose but the best: the other faces', then the outlines'."""
        if self._more is None:
            self._more = self._outlines()
        return self[1:] + self._more


class CardFinder:
    """Finds the uppermost card in a side zone by correlating the profile's *generic*
    faces over candidate turns and positions: the mean face of each cult (the frame and
    corner layout every card of the deck shares) and every face unlike its cult's mean
    (a purgatory, say), each both ways up. A card lying on top shows all of its face;
    older cards beneath it only part, and an empty table nothing.

    :meth:`find` works on a coarse zone image (:data:`ZONE_PX_PER_MM`), :meth:`refine`
    then makes the outline precise on the frame itself."""

    def __init__(self, profile: DeckProfile, px_per_mm: float = ZONE_PX_PER_MM) -> None:
        self.px_per_mm = px_per_mm
        self.size = (round(CARD_MM[0] * px_per_mm), round(CARD_MM[1] * px_per_mm))
        fine = (round(CARD_MM[0] * REFINE_PX_PER_MM), round(CARD_MM[1] * REFINE_PX_PER_MM))
        by_cult: dict[str, list[np.ndarray]] = {}
        for cid in CARD_IDS:
            face = cv2.cvtColor(profile.faces[cid], cv2.COLOR_BGR2GRAY).astype(np.float32)
            by_cult.setdefault(cid.split("-", 1)[0], []).append(face)
        means, unlike = [], []
        for faces in by_cult.values():
            mean = np.mean(faces, axis=0)
            means.append(mean)
            unit = _unit_rows(np.stack([cv2.resize(f, self.size) for f in [mean, *faces]]))
            unlike += [f for f, r in zip(faces, unit[1:] @ unit[0], strict=True)
                       if r < OWN_TEMPLATE_BELOW]
        generic = means + unlike
        self.n_mean_templates = 2 * len(means)
        self.templates, self.fine_templates = [], []
        self.face_templates = {
            cid: cv2.cvtColor(cv2.resize(face, fine, interpolation=cv2.INTER_AREA),
                              cv2.COLOR_BGR2GRAY).astype(np.float32)
            for cid, face in profile.faces.items()}
        for face in generic:
            for turned in (face, face[::-1, ::-1]):
                self.templates.append(cv2.resize(turned, self.size, interpolation=cv2.INTER_AREA))
                self.fine_templates.append(cv2.resize(turned, fine, interpolation=cv2.INTER_AREA))
        self._geometry: dict[tuple[int, int, float], tuple[np.ndarray, ...]] = {}
        # every template correlated with a turned zone at once (see TemplateBank)
        self._bank = TemplateBank(self.templates)
        # the precise fit's templates blurred once (refine_quad would blur them every call)
        self._fine_blurred = [refine_blur(t, REFINE_PX_PER_MM) for t in self.fine_templates]
        self._face_blurred = {cid: refine_blur(t, REFINE_PX_PER_MM)
                              for cid, t in self.face_templates.items()}

    def find(self, zone: np.ndarray, *, min_score: float = MIN_CARD_SCORE
             ) -> tuple[np.ndarray, float, int] | None:
        """(4x2 corners in zone px, score, template index) of the uppermost card in a
        zone image (outward up, the side's middle at the bottom centre), or None."""
        found = self.find_all(zone, min_score=min_score, limit=1)
        return found[0][:3] if found else None

    def find_all(self, zone: np.ndarray, *, min_score: float = MIN_CARD_SCORE,
                 limit: int = HYPOTHESES) -> FoundPoses:
        """Up to *limit* distinct card poses in the zone placed by the faces, best
        first, as :meth:`find` gives them plus how each was found (``"face"``), and,
        when asked for (:meth:`FoundPoses.fallbacks`), up to OUTLINE_HYPOTHESES more
        placed by their outline (``"outline"``): the best is usually the card on top;
        the others are there for when it cannot be named (an older card beneath, or a
        neighbour, won; or no face fitted the card well)."""
        gray = as_gray(zone)  # (a zone warped out of a warp_source is B,G,R,A)
        gray = gray.astype(np.float32)
        zh, zw = gray.shape
        s = self.px_per_mm
        tw, th = self.size
        grid = [float(a) for a in np.arange(-MAX_TURN_DEG, MAX_TURN_DEG + 1e-6, TURN_STEP_DEG)]
        dominant = _dominant_turns(gray, MAX_TURN_DEG)
        means = list(range(self.n_mean_templates))

        turned: dict[float, tuple] = {}

        def rotated(angle: float) -> tuple:
            """(M, the zone turned by *angle*, where a card's top-left may not lie in it
            (see _turn_geometry), M inverted, the turned zone prepared for the template
            bank), once per turn."""
            if angle not in turned:
                M, Minv, off, allowed = self._turn_geometry(zh, zw, angle)
                rot = cv2.warpAffine(gray, M, (zw, zh), flags=cv2.INTER_LINEAR,
                                     borderMode=cv2.BORDER_REPLICATE)
                turned[angle] = (M, rot, off, Minv, self._bank.prepare(rot), allowed)
            return turned[angle]

        def at(angle: float, which):
            """(score, loc, template, M, angle) of each template's best at *angle*."""
            M, _, _, _, prepared, allowed = rotated(angle)
            out = []
            for k in which:
                # the best where a card's top-left may lie
                _, mx, _, loc = cv2.minMaxLoc(self._bank.match(prepared, k), allowed)
                out.append((mx, loc, k, M, angle))
            return out

        outline_best: list = []

        def outline_at(angle: float) -> None:
            """The best whole-card outline at *angle* (an edge all round, stronger than
            just inside and outside it), kept for when the faces place no card."""
            M, rot, off, _, _, _ = rotated(angle)
            d = OUTLINE_RIDGE_PX
            res = self._outline_response(rot)
            # the outline's window starts d px before the card's top-left
            res[off[d:d + res.shape[0], d:d + res.shape[1]]] = -np.inf
            _, mx, _, (x, y) = cv2.minMaxLoc(res)
            if np.isfinite(mx):
                outline_best.append((mx, (x + d, y + d), -1, M, angle))

        centres: dict[tuple, np.ndarray] = {}

        def centre_of(h) -> np.ndarray:
            # (a pose's centre depends on its place and turn only: computed once)
            key = (h[1], h[4])
            if key not in centres:
                x, y = h[1]
                centres[key] = cv2.transform(np.float32([[(x + tw / 2, y + th / 2)]]),
                                             rotated(h[4])[3])[0, 0]
            return centres[key]

        # the cults' mean faces on the whole grid of turns; every template at the turns
        # the edges suggest (a card unlike the mean is found there)
        every = range(len(self.templates))
        results = [r for a in grid for r in at(a, means)]
        results += [r for a in dominant for r in at(a, every)]
        results.sort(key=lambda r: -r[0])
        chosen: list = []

        def distinct(r) -> bool:
            c = centre_of(r)
            return all(np.linalg.norm(c - centre_of(o)) / s >= DISTINCT_MM
                       or abs(r[4] - o[4]) >= DISTINCT_TURN_DEG for o in chosen)

        for r in results:
            if r[0] < min_score or len(chosen) >= limit:
                break
            if distinct(r):
                chosen.append(r)

        def pose(n: int, best) -> tuple[np.ndarray, float, int, str]:
            # the finer turns only for the likeliest pose: the others are fallbacks,
            # and the precise fit searches turns anyway
            for d in FINE_TURN_STEPS_DEG if n == 0 else ():
                r = at(best[4] + d, [best[2]])[0]
                if r[0] > best[0]:
                    best = r
            score, (x, y), k, M = best[:4]
            corners = np.float32([(x, y), (x + tw, y), (x + tw, y + th), (x, y + th)])
            pts = cv2.transform(corners.reshape(-1, 1, 2), cv2.invertAffineTransform(M))
            return (pts.reshape(4, 2).astype(np.float32), float(score), k,
                    best[5] if len(best) > 5 else "face")

        def outlines() -> list[tuple[np.ndarray, float, int, str]]:
            """A plain card on a plain table, or one unlike every generic face, may fit
            no face well where it lies: its outline then places it (as a fallback — a
            card's inner frame is an outline too, so faces come first)."""
            if limit <= 1:
                return []
            for a in sorted(set(grid) | set(dominant)):
                outline_at(a)
            outline_best.sort(key=lambda r: -r[0])
            extra = []
            for r in outline_best[:OUTLINE_HYPOTHESES]:
                if distinct(r):
                    chosen.append((results[0][0], r[1], results[0][2], r[3], r[4], "outline"))
                    extra.append(pose(len(chosen) - 1, chosen[-1]))
            return extra

        return FoundPoses([pose(n, best) for n, best in enumerate(chosen)],
                          outlines if chosen else list)

    def _turn_geometry(self, zh: int, zw: int, angle: float
                       ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(M, M inverted, where a card's top-left may NOT lie, where it may as a uint8
        mask) for a zh x zw zone turned by *angle* about its centre: a card's centre
        must lie near the side's middle, a card's length out. Depends on the zone's size
        and the turn only: kept."""
        key = (zh, zw, angle)
        if key not in self._geometry:
            s = self.px_per_mm
            tw, th = self.size
            ry, rx = np.mgrid[0:zh - th + 1, 0:zw - tw + 1].astype(np.float32)
            cx, cy = rx + tw / 2, ry + th / 2
            M = cv2.getRotationMatrix2D((zw / 2.0, zh / 2.0), angle, 1.0)
            Minv = cv2.invertAffineTransform(M)
            ux = Minv[0, 0] * cx + Minv[0, 1] * cy + Minv[0, 2]
            uy = Minv[1, 0] * cx + Minv[1, 1] * cy + Minv[1, 2]
            ok = ((np.abs(ux / s - zw / 2 / s) <= CENTRE_U_MM)
                  & ((zh - uy) / s >= CENTRE_V_MM[0]) & ((zh - uy) / s <= CENTRE_V_MM[1]))
            if len(self._geometry) > 1000:  # (zones of many sizes: start again)
                self._geometry.clear()
            self._geometry[key] = (M, Minv, ~ok, ok.astype(np.uint8))
        return self._geometry[key]

    def _outline_response(self, img: np.ndarray) -> np.ndarray:
        """For each top-left position (as cv2.matchTemplate places the outline templates
        on *img*), how much the edges across a card's outline there stand out from the
        same lines OUTLINE_RIDGE_PX inside and outside: sums along lines by box filters."""
        tw, th = self.size
        d = OUTLINE_RIDGE_PX
        gx = np.abs(cv2.Sobel(img, cv2.CV_32F, 1, 0, ksize=3))
        gy = np.abs(cv2.Sobel(img, cv2.CV_32F, 0, 1, ksize=3))
        # column sums over th-1 rows starting at row y (and row sums over tw-1 columns)
        cols = cv2.boxFilter(gx, -1, (1, th - 1), anchor=(0, 0), normalize=False,
                             borderType=cv2.BORDER_CONSTANT)
        rows = cv2.boxFilter(gy, -1, (tw - 1, 1), anchor=(0, 0), normalize=False,
                             borderType=cv2.BORDER_CONSTANT)
        H, W = img.shape[0] - th - 2 * d, img.shape[1] - tw - 2 * d
        # ridge minus half of each flank, summed in this order (halving is exact, and
        # adding -x/2 is subtracting x/2): each line is one in-place step
        half_cols, half_rows = cols * np.float32(0.5), rows * np.float32(0.5)
        out = None
        for x0 in (d, d + tw):  # the long sides: ridge at x0, flanks at x0 -+ d
            ridge = cols[d + 1:d + 1 + H, x0:x0 + W]
            if out is None:
                out = ridge + np.float32(0.0)
            else:
                out += ridge
            for dx in (-d, d):
                out -= half_cols[d + 1:d + 1 + H, x0 + dx:x0 + dx + W]
        for y0 in (d, d + th):
            out += rows[y0:y0 + H, d + 1:d + 1 + W]
            for dy in (-d, d):
                out -= half_rows[y0 + dy:y0 + dy + H, d + 1:d + 1 + W]
        return out

    def refine_with_face(self, frame: np.ndarray, quad: np.ndarray, card_id: str
                         ) -> tuple[np.ndarray, float]:
        """Like :meth:`refine` (same search), with the face of *card_id* (upright in
        *quad*) as the template: for a pose the generic face may not place well."""
        template = self._face_blurred.get(card_id)
        if template is None:
            return quad, 0.0
        return refine_quad(frame, quad, template, REFINE_PX_PER_MM, REFINE_SHIFT_MM,
                           REFINE_TURNS_DEG, REFINE_SCALES, blurred=True)

    def refine(self, frame: np.ndarray, quad: np.ndarray, template: int
               ) -> tuple[np.ndarray, float]:
        """The outline of a found card made precise: template *template* correlated at
        REFINE_PX_PER_MM within REFINE_SHIFT_MM, REFINE_TURNS_DEG and REFINE_SCALES of
        *quad* (TL, TR, BR, BL in frame px). Returns (quad, score)."""
        return refine_quad(frame, quad, self._fine_blurred[template], REFINE_PX_PER_MM,
                           REFINE_SHIFT_MM, REFINE_TURNS_DEG, REFINE_SCALES, blurred=True)
