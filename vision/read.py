"""Reading one side of the Twilight card: find the uppermost card in the side's zone,
rectify it, and name it.

* :func:`find_card` — in a zone image rectified to the table plane (known px/mm, so a
  card has a known size), search card poses (turn within :data:`MAX_TURN_DEG` of the
  seat's direction, position near the side) for the rectangle whose four edges are
  all strong. The uppermost card is the one whose outline is complete; older cards
  beneath it lose parts of theirs. Edge strength is measured relative to the zone's
  own gradients, so no light level is assumed.
* :class:`CardMatcher` — identity by normalised correlation of the light-normalised,
  rectified face against every face of the profile (both ways up), cult by the
  chroma histogram against the profile's cult colours; they must agree, and a weak
  or ambiguous match is ``"unknown"``.
"""

from __future__ import annotations

from dataclasses import dataclass

import cv2
import numpy as np

from companion.cards import BACK_IDS, CARD_IDS, Card
from vision.profile import CARD_MM, DeckProfile, chroma_hist

#: Resolution (px/mm) of the rectified zone the card search runs on.
ZONE_PX_PER_MM = 0.8
#: Turns of a side card away from its seat's direction that are searched (degrees),
#: how many edge-orientation peaks are tried, and the fine steps around the best.
MAX_TURN_DEG = 26.0
TURN_CANDIDATES = 3
COARSE_TURNS_DEG = (-20.0, -10.0, 0.0, 10.0, 20.0)
FINE_TURN_STEPS_DEG = (-2.0, -1.0, 1.0, 2.0)
#: Second, precise pass over a found card: resolution, shifts and turns searched.
REFINE_PX_PER_MM = 1.6
REFINE_SHIFT_MM = 6.0
REFINE_TURNS_DEG = (-2.0, -1.0, 0.0, 1.0, 2.0)
#: Correlation with a generic face a card on top reaches (an empty table does not).
MIN_CARD_SCORE = 0.25
#: Above this a card surely lies there: an unreadable one is then "unknown", below it
#: only a card whose face matched counts.
SURE_CARD_SCORE = 0.5
#: Where a side card's centre may lie in its zone: u along the side, v outward (mm).
CENTRE_U_MM = 30.0
CENTRE_V_MM = (36.0, 100.0)
#: Minimum outline strength (weakest of the four edges, relative to the zone's
#: typical gradient) for a card to count as lying there.
MIN_OUTLINE = 1.6
#: Resolution (px/mm) of the rectified card matched against the profile's faces,
#: and the margin (mm) left out at its edge (where the table or a neighbour shows).
MATCH_PX_PER_MM = 1.25
MATCH_MARGIN_MM = 2.5
MATCH_BLUR_SIGMA = 1.0
#: Misalignment (mm) searched each way for the SHIFT_CANDIDATES best-matching faces.
SHIFT_MM = 1.6
SHIFT_CANDIDATES = 8
#: Identity evidence: the best correlation must reach MIN_MATCH, and its distance
#: (1 - correlation) must be at most 1 - MIN_MARGIN of the nearest card of another
#: name's; otherwise "unknown".
MIN_MATCH = 0.5
MIN_MARGIN = 0.25
#: How much better a face of the other cult than the colour's may match before the
#: disagreement makes the card "unknown".
MAX_CULT_DISAGREEMENT = 0.05
#: Cult by colour counts when one cult's histogram overlap beats the other's by this.
MIN_CULT_MARGIN = 0.08


@dataclass(frozen=True)
class CardFit:
    """A card outline found in a zone: its corners in frame px (TL, TR, BR, BL of the
    rectangle as found — up or down is settled by matching) and outline strength."""

    quad: np.ndarray
    strength: float


@dataclass(frozen=True)
class Identity:
    """What a rectified card is: ``card_id`` (C1 id or ``"unknown"``), ``cult`` by colour
    (``None`` if undecided), ``confidence`` (0..1), ``score``/``margin`` of the match and
    ``upside_down`` (the face matched turned 180°)."""

    card_id: str
    cult: str | None
    confidence: float
    score: float
    margin: float
    upside_down: bool


def _unit_rows(stack: np.ndarray) -> np.ndarray:
    m = stack.reshape(stack.shape[0], -1).astype(np.float32)
    m -= m.mean(axis=1, keepdims=True)
    m /= np.maximum(np.linalg.norm(m, axis=1, keepdims=True), 1e-6)
    return m


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
        self.cult_of = [Card.parse(cid).cult.value if cid in CARD_IDS else None
                        for cid in self.ids]
        self.names = [cid.split("-", 1)[1] for cid in self.ids]
        self.cult_hist = profile.cult_hist

    def prepare(self, face_bgr: np.ndarray) -> np.ndarray:
        """A face (any size, upright, full card) as the gray, blurred core matched."""
        img = cv2.resize(face_bgr, self.size, interpolation=cv2.INTER_AREA)
        return self._core(img)

    def _core(self, img: np.ndarray, pad: int = 0) -> np.ndarray:
        gray = img if img.ndim == 2 else cv2.cvtColor(img, cv2.COLOR_BGR2GRAY)
        gray = cv2.GaussianBlur(gray.astype(np.float32), (0, 0), MATCH_BLUR_SIGMA)
        m = self.margin_px - pad
        return gray[m:gray.shape[0] - m, m:gray.shape[1] - m]

    def identify(self, card_bgr: np.ndarray) -> Identity:
        """Name a rectified card image: portrait, :attr:`size` plus :attr:`pad` px on
        every side (so small misalignments can be searched), either way up."""
        p = self.pad
        gray = self._core(card_bgr, pad=p)
        h, w = self.core_shape
        n = len(self.ids)
        centre = _unit_rows(_unit_rows(gray[p:p + h, p:p + w][None]) * self.weight)[0]
        scores = self.templates @ centre
        # search small shifts for the few best faces: the outline is found to a mm or so
        top = np.argsort(-scores)[:SHIFT_CANDIDATES]
        windows = np.stack([gray[dy:dy + h, dx:dx + w] for dy in range(2 * p + 1)
                            for dx in range(2 * p + 1)])
        shifted = _unit_rows(_unit_rows(windows) * self.weight) @ self.templates[top].T
        scores[top] = np.maximum(scores[top], shifted.max(axis=0))
        both = np.maximum(scores[:n], scores[n:])
        turned = scores[n:] > scores[:n]
        card_bgr = card_bgr[p:card_bgr.shape[0] - p, p:card_bgr.shape[1] - p]
        hist = chroma_hist(card_bgr, px_per_mm=MATCH_PX_PER_MM)
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
        others = [both[i] for i in range(n) if self.names[i] != self.names[best]
                  and (colour_cult is None or self.cult_of[i] in (colour_cult, None))]
        # Ratio test on distances (1 - correlation): the best must be much nearer than
        # the nearest card of another name, however good or bad the picture is.
        margin = 1.0 - (1.0 - float(both[best])) / max(1.0 - float(max(others)), 1e-6) \
            if others else 1.0
        score = float(both[best])
        cid = self.ids[best]
        shape_cult = self.cult_of[best_any]
        agree = (colour_cult is None or shape_cult is None or shape_cult == colour_cult
                 or both[best_any] - both[best] < MAX_CULT_DISAGREEMENT)
        ok = (score >= MIN_MATCH and margin >= MIN_MARGIN and agree
              and cid in CARD_IDS)
        confidence = float(np.clip(min((score - MIN_MATCH) / (1 - MIN_MATCH),
                                       margin / (2 * MIN_MARGIN)), 0, 1)) if ok else 0.0
        return Identity(cid if ok else "unknown", colour_cult or self.cult_of[best],
                        confidence, score, margin, bool(turned[best]))


# -- finding the uppermost card in a zone ------------------------------------------------------


def _edge_maps(img: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """|d/dx| and |d/dy| of an image, the larger over its colour channels: an orange
    card on oak differs in hue more than in brightness."""
    g = cv2.GaussianBlur(img, (3, 3), 0.8)
    gx = np.abs(cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3))
    gy = np.abs(cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3))
    if gx.ndim == 3:
        gx, gy = gx.max(axis=2), gy.max(axis=2)
    return gx, gy


def _dominant_turns(img: np.ndarray, limit: float) -> list[float]:
    """Candidate turns (degrees, within +-limit) of the straight edges in *img*: peaks
    of the gradient orientation histogram, folded to 90 degrees."""
    g = cv2.GaussianBlur(img, (3, 3), 0.8)
    gx = cv2.Sobel(g, cv2.CV_32F, 1, 0, ksize=3)
    gy = cv2.Sobel(g, cv2.CV_32F, 0, 1, ksize=3)
    if gx.ndim == 3:
        pick = np.argmax(gx * gx + gy * gy, axis=2)[..., None]
        gx = np.take_along_axis(gx, pick, 2)[..., 0]
        gy = np.take_along_axis(gy, pick, 2)[..., 0]
    mag = np.sqrt(gx * gx + gy * gy)
    ang = np.degrees(np.arctan2(gy, gx)) % 90.0  # edges of a rectangle fold together
    ang = np.where(ang >= 45.0, ang - 90.0, ang)  # -45..45
    hist, _ = np.histogram(ang, bins=90, range=(-45, 45), weights=mag)
    hist = np.convolve(np.concatenate([hist[-2:], hist, hist[:2]]), np.ones(5) / 5,
                       mode="valid")
    peaks = [i for i in range(90) if hist[i] >= hist[i - 1] and hist[i] >= hist[(i + 1) % 90]]
    peaks.sort(key=lambda i: -hist[i])
    # cv2 rotation angle that makes the edges axis-aligned: the negated edge turn
    turns = [-(i - 44.5) for i in peaks[:TURN_CANDIDATES]]
    return [t for t in turns if abs(t) <= limit] or [0.0]


class CardFinder:
    """Finds the uppermost card in a rectified zone by correlating the profile's
    *generic* faces — the mean face of each cult, both ways up, which keeps the frame
    and corner layout every card of the deck shares — over candidate turns and
    positions. A card lying on top shows all of that layout; older cards beneath it
    show only part, and an empty table none."""

    def __init__(self, profile: DeckProfile, px_per_mm: float = ZONE_PX_PER_MM) -> None:
        self.px_per_mm = px_per_mm
        size = (round(CARD_MM[0] * px_per_mm), round(CARD_MM[1] * px_per_mm))
        self.size = size
        by_cult: dict[str, list[np.ndarray]] = {}
        for cid in CARD_IDS:
            face = cv2.cvtColor(cv2.resize(profile.faces[cid], size, interpolation=cv2.INTER_AREA),
                                cv2.COLOR_BGR2GRAY).astype(np.float32)
            by_cult.setdefault(cid.split("-", 1)[0], []).append(face)
        self.templates = []
        self.fine_templates = []
        fine = (round(CARD_MM[0] * REFINE_PX_PER_MM), round(CARD_MM[1] * REFINE_PX_PER_MM))
        for faces in by_cult.values():
            mean = np.mean(faces, axis=0)
            self.templates += [mean, mean[::-1, ::-1].copy()]
            big = cv2.resize(mean, fine, interpolation=cv2.INTER_LINEAR)
            self.fine_templates += [big, big[::-1, ::-1].copy()]

    def refine(self, frame: np.ndarray, quad: np.ndarray) -> tuple[np.ndarray, float]:
        """A found card's outline made precise: the generic faces correlated at
        REFINE_PX_PER_MM within REFINE_SHIFT_MM and REFINE_TURNS_DEG of *quad*."""
        r = REFINE_PX_PER_MM
        m = REFINE_SHIFT_MM
        w_mm, h_mm = CARD_MM
        card_mm = np.float32([(0, 0), (w_mm, 0), (w_mm, h_mm), (0, h_mm)])
        H = cv2.getPerspectiveTransform(card_mm, np.asarray(quad, np.float32))
        size = (round((w_mm + 2 * m) * r), round((h_mm + 2 * m) * r))
        gray = frame if frame.ndim == 2 else None
        best = (-2.0, 0, 0, 0.0)
        for turn in REFINE_TURNS_DEG:
            # patch px -> card mm (turned about the card's centre) -> frame
            R = cv2.getRotationMatrix2D((w_mm / 2, h_mm / 2), turn, 1.0)
            P = np.array([[1 / r, 0, -m], [0, 1 / r, -m], [0, 0, 1]])
            A = np.vstack([R, [0, 0, 1]]) @ P
            patch = cv2.warpPerspective(frame if gray is None else gray, H @ A, size,
                                        flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                        borderMode=cv2.BORDER_REPLICATE)
            if patch.ndim == 3:
                patch = cv2.cvtColor(patch, cv2.COLOR_BGR2GRAY)
            patch = patch.astype(np.float32)
            for t in self.fine_templates:
                res = cv2.matchTemplate(patch, t, cv2.TM_CCOEFF_NORMED)
                _, mx, _, loc = cv2.minMaxLoc(res)
                if mx > best[0]:
                    best = (mx, loc[0], loc[1], turn)
        score, x, y, turn = best
        R = cv2.getRotationMatrix2D((w_mm / 2, h_mm / 2), turn, 1.0)
        shifted = card_mm + np.float32([x / r - m, y / r - m])
        local = cv2.transform(shifted.reshape(-1, 1, 2), R).reshape(-1, 1, 2)
        out = cv2.perspectiveTransform(local.astype(np.float64), H).reshape(4, 2)
        return out.astype(np.float32), float(score)

    def find(self, zone: np.ndarray, *, min_score: float = MIN_CARD_SCORE
             ) -> tuple[np.ndarray, float] | None:
        """(4x2 corners in zone px, score) of the uppermost card, or None."""
        gray = zone if zone.ndim == 2 else cv2.cvtColor(zone, cv2.COLOR_BGR2GRAY)
        gray = gray.astype(np.float32)
        zh, zw = gray.shape
        s = self.px_per_mm
        tw, th = self.size
        centre = (zw / 2.0, zh / 2.0)
        turns = sorted(set(_dominant_turns(zone, MAX_TURN_DEG)) | set(COARSE_TURNS_DEG))

        def best_at(angle: float):
            M = cv2.getRotationMatrix2D(centre, angle, 1.0)
            rot = cv2.warpAffine(gray, M, (zw, zh), flags=cv2.INTER_LINEAR,
                                 borderMode=cv2.BORDER_REPLICATE)
            Minv = cv2.invertAffineTransform(M)
            best = (-2.0, (0, 0))
            for t in self.templates:
                res = cv2.matchTemplate(rot, t, cv2.TM_CCOEFF_NORMED)
                # keep only centres near the side's middle, a card's length out
                rh, rw = res.shape
                yy, xx = np.mgrid[0:rh, 0:rw].astype(np.float32)
                cx, cy = xx + tw / 2, yy + th / 2
                ux = Minv[0, 0] * cx + Minv[0, 1] * cy + Minv[0, 2]
                uy = Minv[1, 0] * cx + Minv[1, 1] * cy + Minv[1, 2]
                u_mm = ux / s - zw / 2 / s
                v_mm = (zh - uy) / s
                ok = ((np.abs(u_mm) <= CENTRE_U_MM) & (v_mm >= CENTRE_V_MM[0])
                      & (v_mm <= CENTRE_V_MM[1]))
                res = np.where(ok, res, -1.0)
                _, mx, _, loc = cv2.minMaxLoc(res)
                if mx > best[0]:
                    best = (mx, loc)
            return best[0], best[1], M

        results = [(best_at(a), a) for a in turns]
        (score, loc, M), angle = max(results, key=lambda r: r[0][0])
        for d in FINE_TURN_STEPS_DEG:
            r = best_at(angle + d)
            if r[0] > score:
                score, loc, M = r
        if score < min_score:
            return None
        x, y = loc
        corners = np.float32([(x, y), (x + tw, y), (x + tw, y + th), (x, y + th)])
        Minv = cv2.invertAffineTransform(M)
        pts = cv2.transform(corners.reshape(-1, 1, 2), Minv).reshape(4, 2)
        return pts.astype(np.float32), float(score)


def find_card(zone: np.ndarray, px_per_mm: float = ZONE_PX_PER_MM, *,
              min_outline: float = MIN_OUTLINE) -> tuple[np.ndarray, float] | None:
    """The strongest complete card outline in a rectified zone image (BGR or gray;
    outward up, the side's middle at the bottom centre): (4x2 corners in zone px,
    strength), or None when no outline is strong enough."""
    zh, zw = zone.shape[:2]
    s = px_per_mm
    cw, ch = CARD_MM[0] * s, CARD_MM[1] * s
    # the zone's typical gradient, for a light-independent strength
    gx0, gy0 = _edge_maps(zone)
    typical = float(np.percentile(np.maximum(gx0, gy0), 75)) + 1.0
    centre = (zw / 2.0, zh / 2.0)
    yy, xx = np.mgrid[0:zh, 0:zw].astype(np.float32)

    def score_at(angle: float):
        M = cv2.getRotationMatrix2D(centre, angle, 1.0)
        rot = cv2.warpAffine(zone, M, (zw, zh), flags=cv2.INTER_LINEAR,
                             borderMode=cv2.BORDER_REPLICATE)
        gx, gy = _edge_maps(rot)
        kw, kh = max(3, int(round(cw * 0.8))), max(3, int(round(ch * 0.8)))
        top = cv2.blur(gy, (kw, 1))   # mean horizontal-edge strength along a card width
        side = cv2.blur(gx, (1, kh))  # mean vertical-edge strength along a card height
        hx, hy = int(round(cw / 2)), int(round(ch / 2))
        H, W = zh, zw
        sc = np.zeros((H, W), np.float32)
        ys, xs = slice(hy, H - hy), slice(hx, W - hx)
        t = top[0:H - 2 * hy, hx:W - hx]
        b = top[2 * hy:H, hx:W - hx]
        left = side[hy:H - hy, 0:W - 2 * hx]
        right = side[hy:H - hy, 2 * hx:W]
        sc[ys, xs] = np.minimum(np.minimum(t, b), np.minimum(left, right))
        # centres allowed: near the side's middle, a card's length out
        Minv = cv2.invertAffineTransform(M)
        ux = Minv[0, 0] * xx + Minv[0, 1] * yy + Minv[0, 2]
        uy = Minv[1, 0] * xx + Minv[1, 1] * yy + Minv[1, 2]
        u_mm = ux / s - zw / 2 / s
        v_mm = (zh - uy) / s
        ok = (np.abs(u_mm) <= CENTRE_U_MM) & (v_mm >= CENTRE_V_MM[0]) & (v_mm <= CENTRE_V_MM[1])
        sc[~ok] = 0
        idx = int(np.argmax(sc))
        y, x = divmod(idx, W)
        return float(sc[y, x]), (x, y), M

    best = None
    for turn in _dominant_turns(zone, MAX_TURN_DEG):
        r = score_at(turn)
        if best is None or r[0] > best[0][0]:
            best = (r, turn)
    for d in FINE_TURN_STEPS_DEG:
        r = score_at(best[1] + d)
        if r[0] > best[0][0]:
            best = (r, best[1] + d)
    (strength, (x, y), M), _ = best
    strength /= typical
    if strength < min_outline:
        return None
    hx, hy = cw / 2, ch / 2
    corners = np.float32([(x - hx, y - hy), (x + hx, y - hy), (x + hx, y + hy), (x - hx, y + hy)])
    Minv = cv2.invertAffineTransform(M)
    pts = cv2.transform(corners.reshape(-1, 1, 2), Minv).reshape(4, 2)
    return pts.astype(np.float32), strength
