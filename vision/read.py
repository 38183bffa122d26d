"""Reading one side of the Twilight card: the uppermost card in the side's zone, named.

1. The zone (the table beyond one side, :func:`vision.locate.zone_outline`) is cut
   from the frame and shrunk to at most :data:`ZONE_PX_PER_MM`; card-like quads of the
   deck's outline ratio (from its taught faces) are found there at any turn
   (:func:`vision.quads.card_quads`), those whose centre lies beyond this side kept.
2. Each is warped upright (its long sides upright: the card's outline leaves two
   ways up) and correlated with every taught face, both ways up, at the coarsest
   resolution; each also grown by :data:`GROW` about its centre (a strong inner frame
   of the print can pass for the outline). The card on top shows its whole face and
   a card beneath it only part, so the best correlating quads are the card on top.
3. The best few are aligned with their best face by ECC (affine, on grey) and
   correlated again at the finest resolution the frame allows; the best is named by
   the deck's own margins (:meth:`vision.faces.FaceBank.decide`). Its cult is read
   from its colours apart (:func:`colour_cult`); a named card whose colours say the
   other cult is ``"unknown"``.

When no outline names a card: the card on top looked for by its face over the zone
(:mod:`vision.facesearch`), and then the best outlined quads moved to where a face
fits them (a card on cards of its own print, whose outlines lie a little off it:
:meth:`SideReader._off_outline`); a card found either way must be named.

A quad outlined all round (every side's edges at least :data:`OUTLINE_SURE`) that no
face fits is a card that cannot be named (``"unknown"``); anything less is no card.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Collection
from dataclasses import dataclass, replace

import cv2
import numpy as np

from companion.core.cards import CARD_IDS, Card
from vision import proposals as P
from vision import quads as Q
from vision.faces import (
    MARGIN_SHARE,
    MIN_SCORE,
    RESOLUTIONS,
    FaceBank,
    bank_sizes,
    ecc_align,
    rectify,
    rectify_all,
)
from vision.facesearch import PLACE_MOVES, PLACE_STEPS, CellMeans, DeckGrid
from vision.facesearch import search as face_search
from vision.glare import without_glare
from vision.locate import (
    REFINE_SHARE,
    ZONE_DEPTH_MM,
    ZONE_HALF_WIDTH_MM,
    TwilightPose,
    art_aspect,
    beyond,
    clockwise_all,
    zone_outline,
)
from vision.profile import CARD_MM, CHROMA_MIN, HIST_BINS, hue_hist

#: Resolution (px/mm) the zone is searched at, at most (never finer than the frame
#: shows the table): a card is then about 38 x 53 px, its sides straight runs.
ZONE_PX_PER_MM = 0.6
#: A side card's long side relative to the nominal card's (88 mm in the Twilight
#: card's frame, which has a card's area): the Twilight card's true size is unknown.
CARD_SIZE_RANGE = (0.6, 1.6)
#: Named cards whose size (relative to the Twilight card) is remembered: the cards'
#: expected size, for outlines seen only in part.
SIZE_MEMORY = 16
#: Candidate outlines per zone weighed by their faces, and how many of the best are
#: aligned and matched finely.
CANDIDATES = 20
FINE_CANDIDATES = 5
#: Rough outline hypotheses weighed, as laid, where no outline showed a card: those
#: whose inside looks most like a face on the deck's coarse grid (a card on a pile
#: shares sides with the cards beneath, and its outline ranks low by its edges).
FACE_OUTLINES = 4
#: Faces besides the best a chosen card is aligned with before it is named.
RIVALS = 3
#: Faces correlating less than this (each channel apart, so whatever their colours)
#: have prints that differ: each is aligned with on its own.
DISTINCT_FACES = 0.95
#: Growths of a found quad tried (its outline may be an inner frame of the print).
GROW = (1.0, 1.1, 1.2)
#: A card on cards of its own print: the outlines with three sides on edges (the third
#: best side's support at least PLACE_SIDES) that are moved to where a face fits them,
#: the best PLACE_OUTLINES of them (:meth:`SideReader._off_outline`; the steps are the
#: face search's, :data:`vision.facesearch.PLACE_STEPS`).
PLACE_OUTLINES = 6
PLACE_SIDES = 0.6
#: Alignment of a card with its best face: resolution (px/mm, at most: as the frame
#: shows it), margin (share of the card's width) the
#: window reaches beyond the quad, and ECC's most iterations.
ALIGN_PX_PER_MM = 0.7
ALIGN_MARGIN = 0.15
ALIGN_ITERATIONS = 10
#: ... and ECC's most iterations aligning a photo of one card again in perspective
#: (:meth:`SideReader.identify`; eight parameters from the affine fit's six; tuning
#: photos, 990: 885 right at 20, 888 at 50 and at 100).
PERSPECTIVE_ITERATIONS = 50
#: An alignment may move no corner further than this share of the card's width (it
#: slid onto something else).
ALIGN_MAX_MOVE = 0.3
#: Share of a quad's every side on edges above which a card surely lies there; and the
#: least share of a named card's outline (its four sides together) on edges: a card on
#: top shows most of its outline, even against a like card beneath.
OUTLINE_SURE = 0.8
OUTLINE_NAMED = 0.5
#: An outline whose side lines run on past its corners (the median of the eight
#: continuations on edges at least this share, :func:`vision.quads.run_on`) is a
#: cloth's pattern, unless a face shows in it.
RUN_ON = 0.5
#: A card is named only when its face shows whole and clear: the best face correlates
#: at least NAME_SCORE over the card and WHOLE_QUARTERS over each of its quarters (a
#: card half under another, a hand or an outline straddling two cards fails one; a
#: whole card seen through blur, noise and JPEG keeps 0.9 and 0.8). Below that, but
#: with the best face at PRESENT_SCORE (no table, arm or cloth reaches it) or an
#: outline seen all round (OUTLINE_SURE), a card lies there that cannot be named.
NAME_SCORE = 0.75
#: A card named with less confidence than this is no answer yet (the table's tracker
#: takes it for unknown, `vision.tracker.MIN_CONFIDENCE`): where the side changed is
#: read too, and kept where it names a card more surely (tuning hand 1800015: west's
#: card under a lamp's reflection, a box beside it named moon-altar at 0.41 on every
#: read).
WEAK_NAME = 0.5
#: An unnamed card's confidence stays under a half (no answer to the tracker either).
UNNAMED_CONFIDENCE = 0.49
#: (A face correlating PRESENT_SCORE overall with a quarter under half WHOLE_QUARTERS
#: is a table's pattern or an arm meeting part of a face, not a card.)
WHOLE_QUARTERS = 0.7
PRESENT_SCORE = 0.7
#: Outlines (three sides on edges, PLACE_SIDES) read without the smooth light field
#: over them when the plain correlation names no card
#: (:meth:`SideReader._in_uneven_light`), at most.
UNEVEN_OUTLINES = 6
#: Steps (shares of the card; half as many radians; growth) such an outline is moved
#: by to where a face fits it best: an outline found in the shrunk zone lies a px or
#: two off the card, and the light field misleads the ECC alignment; one with a side
#: off edges (a card on a pile) a step of UNEVEN_PILE_STEP first (a larger first step
#: took outlines on edges all round a little off their card).
UNEVEN_STEPS = (0.03, 0.015)
UNEVEN_PILE_STEP = 0.06
#: Cult by colour counts when one cult's chroma histogram overlap beats the other's by
#: this much (overlaps are 0..1: a quarter of the card's colours more in one cult's),
#: and a tenth of its pixels have a colour at all.
MIN_CULT_MARGIN = 0.25
MIN_CHROMATIC = 0.1
#: Where the light on a card is not known (a photo of one card whose face has no white
#: or grey parts to show it), a warm or cool light shifts every hue, and little of the
#: card's hue histogram meets either cult's: a cult whose hues it meets HUE_RATIO
#: times as much as the other's, and at least HUE_FLOOR of its hues, is its cult.
HUE_RATIO = 3.0
HUE_FLOOR = 0.05
#: Where the colours still say neither cult, and the card's best face is printed alike
#: in the other cult's colours (a twin), the light each twin would need (its tint,
#: :meth:`vision.faces.FaceBank.tint`) tells them: the twin whose light is at least
#: TINT_RATIO times as far from warm-to-cool as the other's, and at least TINT_LEAST,
#: is not the card. A light's own tint, read on tuning card photos at their true
#: outline against the card's own face, lay within -0.07..0.11; twins printed on
#: paper of a warm and a cool colour (red and blue) need lights a hundredth apart,
#: which only the least tint keeps from deciding.
TINT_RATIO = 2.0
TINT_LEAST = 0.15


@dataclass(frozen=True)
class Identity:
    """What a rectified card is: ``card_id`` (C1 id or ``"unknown"``), ``cult`` by
    colour (None if undecided), ``confidence`` 0..1, ``score`` (correlation with the
    best face), ``margin`` (-1..1: how far the second best face stays under the bound
    the deck sets; > 0 named), ``upside_down``, ``quarters`` (the least correlation of
    a quarter of the card with the named face: a card partly seen fails one), ``best``
    and ``rival`` (the best face, and the best of another name), ``plausible``
    (every test but the margin passed) and ``duelled`` (named by winning a duel against
    a face alike: :meth:`vision.faces.FaceBank.duels`)."""

    card_id: str
    cult: str | None
    confidence: float
    score: float
    margin: float
    upside_down: bool
    quarters: float = 1.0
    best: str | None = None
    rival: str | None = None
    plausible: bool = False
    duelled: bool = False

    def unnamed(self) -> Identity:
        """This identity with its name withdrawn: "unknown", less than half sure."""
        return replace(self, card_id="unknown", duelled=False,
                       confidence=min(self.confidence, UNNAMED_CONFIDENCE))


@dataclass(frozen=True)
class _Zone:
    """One side's zone being read: the *frame*, the Twilight card's *pose*, the frame's
    px per mm there (*native*), the zone's shrink *f* and its offset *off* in the frame,
    and its edge *maps* (zone px)."""

    frame: np.ndarray
    pose: TwilightPose
    native: float
    f: float
    off: np.ndarray
    maps: Q.EdgeMaps
    among: np.ndarray | None = None  # the faces that may lie there (K booleans), or any


class SideReader:
    """The deck's card faces (outline ratio *aspect*, height / width) at every
    resolution, and the reading of one side."""

    def __init__(self, faces: dict[str, np.ndarray], cult_hist: dict[str, np.ndarray],
                 aspect: float, *, mirror: bool = False) -> None:
        self.aspect = aspect
        self.cult_hist = cult_hist
        self.cult_hue = {cult: hue_hist(np.concatenate(
            [faces[c] for c in CARD_IDS if Card.parse(c).cult.value == cult]))
            for cult in ("sun", "moon")}
        cards = {c: faces[c] for c in CARD_IDS}
        self.seen_long_mm: deque[float] = deque(maxlen=SIZE_MEMORY)
        self.cults = {cult: np.array([Card.parse(c).cult.value == cult for c in cards])
                      for cult in ("sun", "moon")}
        self.banks = [FaceBank(cards, size, mirror) for size in bank_sizes(aspect)]
        self.grid = DeckGrid(cards, aspect, mirror=mirror)

    def bank_for(self, px_per_mm: float) -> FaceBank:
        """The finest bank not finer than *px_per_mm* (the coarsest at least)."""
        fit = [b for b, r in zip(self.banks, RESOLUTIONS, strict=True) if r <= px_per_mm * 1.05]
        return fit[-1] if fit else self.banks[0]

    # -- one side
    def read(self, frame: np.ndarray, pose: TwilightPose, side: int,
             laid: np.ndarray | None = None, among: Collection[str] | None = None,
             outlines_only: bool = False) -> tuple[np.ndarray, Identity, float] | None:
        """The uppermost card beyond *side*: (quad in frame px, TL, TR, BR, BL of its
        upright art; its :class:`Identity`; its outline's least side support), or None
        where no card lies. *laid* (4 x 2 frame px, optional): the rectangle where
        something was just laid (:meth:`_where_laid`). *among* (card ids, optional): the
        cards that may lie there (a watcher of a hand knows the cards played); a card
        the faces alone leave undecided is named as one of them where they tell.
        *outlines_only*: the card among the outlines found, as named there, without the
        searches beyond them (where the side changed, uneven light, rough outlines by
        their look, the face search, off the outlines): a picture those searched before
        and found no card in, read again (see :class:`vision.tracker.TableTracker`)."""
        outline = zone_outline(pose, side)
        fh, fw = frame.shape[:2]
        area_px = abs(cv2.contourArea(outline.astype(np.float32)))
        native = float(np.sqrt(area_px / (2 * ZONE_HALF_WIDTH_MM * ZONE_DEPTH_MM)))
        f = min(1.0, ZONE_PX_PER_MM / max(native, 1e-6))
        x0, y0 = np.clip(np.floor(outline.min(axis=0)).astype(int), 0, (fw - 1, fh - 1))
        x1, y1 = np.clip(np.ceil(outline.max(axis=0)).astype(int) + 1, 1, (fw, fh))
        if x1 - x0 < 8 or y1 - y0 < 8:
            return None
        crop = frame[y0:y1, x0:x1]
        if f < 1.0:
            crop = cv2.resize(crop, None, fx=f, fy=f, interpolation=cv2.INTER_AREA)
        expected = self.card_long_mm() * native * f
        maps = Q.edge_maps(crop)
        Hinv = np.linalg.inv(pose.homography)
        off = np.float32([x0, y0])

        def here(centres: np.ndarray) -> np.ndarray:
            """Which centres (crop px) lie beyond this side rather than another."""
            mm = cv2.perspectiveTransform((centres / np.float32(f) + off).reshape(-1, 1, 2)
                                          .astype(np.float64), Hinv).reshape(-1, 2)
            out = beyond(mm, pose.size_mm)
            return (np.argmax(out, axis=1) == side) & (out[:, side] > 0)

        long_range = card_long_range(native * f)
        hyp = Q.card_hypotheses(maps, self.aspect, long_range, expected)
        qs, sides = Q.card_quads(crop, self.aspect, long_range, keep=CANDIDATES,
                                 maps=maps, hyp=hyp)
        if len(qs):
            ok = here(qs.mean(axis=1))
            qs, sides = qs[ok], sides[ok]
        zone = _Zone(frame, pose, native, f, off, maps,
                     None if among is None else np.array([c in among for c in CARD_IDS]))
        found, likeness = self._settle(zone, [portrait(q) for q in qs], sides,
                                       GROW, False)
        if found is not None and found[1].card_id == "unknown" and found[1].plausible:
            named = self._named_as_photo(zone, found)
            if named is not None:
                return named
        if found is not None and found[1].duelled and zone.among is None:
            found = self._duel_seen_again(zone, found)
        if outlines_only:
            return found
        # named too weakly to count (a box by a lamp's reflection fitting some face a
        # little): where the side changed may name the card itself, more surely
        weak = (found is not None and found[1].card_id != "unknown"
                and found[1].confidence < WEAK_NAME)
        if found is not None and (found[1].card_id != "unknown" or found[1].plausible) \
                and not weak:
            return found
        by_change = self._where_laid(zone, laid) if laid is not None else None
        if weak:
            assert found is not None
            return by_change if by_change is not None \
                and by_change[1].confidence > found[1].confidence else found
        if by_change is not None:
            return by_change
        lit = self._in_uneven_light(zone, qs, sides)
        if lit is not None:
            return lit
        if found is None:
            # no outline showed a card: its outline may be one its edges ranked low (a
            # card on a pile shares sides with the cards beneath)
            by_look = self._by_look(zone, crop, hyp, long_range, here)
            if by_look is not None:
                return by_look
        if likeness >= MIN_SCORE:
            # a card is there (some outline's inside looks like a face) but no outline
            # shows it whole (a card seen whole whose face only a duel could tell stays
            # unnamed): the card on top found by its face, as its outline may make no
            # edge where it lies on cards of the same print, whose outlines then lead
            # elsewhere
            fq, _ = face_search(self.grid, crop, expected, here)
            if len(fq):
                # as placed and refined onto its sides with edges (on a pile, the
                # edges nearest may be the card's beneath)
                fq = fq.reshape(-1, 4, 2)
                fq = np.concatenate([fq, Q.refine(fq, maps)])
                by_face, _ = self._settle(zone, [portrait(q) for q in fq],
                                          Q.side_support(fq, maps), (1.0,), True)
                if by_face is not None and by_face[1].card_id != "unknown":
                    return by_face
        if likeness >= MIN_SCORE * REFINE_SHARE and len(qs):
            placed = self._off_outline(zone, qs, sides)
            if placed is not None:
                return placed
        return found

    def _by_look(self, zone: _Zone, crop: np.ndarray, hyp: np.ndarray,
                 long_range: tuple[float, float],
                 here: Callable[[np.ndarray], np.ndarray]
                 ) -> tuple[np.ndarray, Identity, float] | None:
        """The card named within one of the FACE_OUTLINES distinct outlines of *hyp*
        (rough outline hypotheses in *crop*, the zone's picture) whose insides look most
        like some face on the deck's coarse grid (:class:`vision.facesearch.DeckGrid`),
        as laid, those of a card's shape (long side within *long_range*) beyond this
        side (*here*); or None. A card on a pile of cards shares sides with them, its
        outline ranks low by its sides' edges, and refining it moves its side over the
        card beneath onto that card's edge (:meth:`_settle`'s *from_runs*)."""
        if not len(hyp):
            return None
        quads = portrait_all(hyp)
        like = self.grid.scores(CellMeans(crop), quads).max(axis=1)
        liked = quads[Q.rough_distinct(quads, np.argsort(-like, kind="stable"), FACE_OUTLINES)]
        liked = liked[Q.card_shaped(liked, self.aspect, long_range)]
        liked = liked[here(liked.mean(axis=1))] if len(liked) else liked
        if not len(liked):
            return None
        found, _ = self._settle(zone, list(liked), Q.side_support(liked, zone.maps), GROW,
                                True, from_runs=True)
        return found if found is not None and found[1].card_id != "unknown" else None

    def _named_as_photo(self, zone: _Zone, found: tuple[np.ndarray, Identity, float]
                        ) -> tuple[np.ndarray, Identity, float] | None:
        """A card seen whole (*found*: every test passed but its duel) named again as a
        photo of one card is named (:meth:`identify`: from its quad, aligned with its
        best face affinely and then in perspective at the finest bank, its rivals at
        their own alignment, the light read on the card): the name, where that names
        the card, its colours say the same cult, and its outline lies on the zone's
        edges with a card's shape (:meth:`_lies_as_a_card`, as :meth:`_settle` asks);
        or None.
        (Tuning blocks A-C: of 28 sides read "unknown", 6 named right, 1 wrong: a card
        beneath a pile's top card, 0.38 of it off, named a numeral apart; held-out scenes
        201 -> 203 of 221 and 248 -> 248 of 267 right, wrong 1 and 6 both. At the bank
        of the zone's resolution instead: 8 right, 2 wrong.)"""
        quad, ident, support = found
        q, named = self.identify(zone.frame, quad)
        if named.card_id == "unknown" or named.cult != ident.cult \
                or not self._lies_as_a_card(zone, q):
            return None
        return q, named, support

    def _duel_seen_again(self, zone: _Zone, found: tuple[np.ndarray, Identity, float]
                         ) -> tuple[np.ndarray, Identity, float]:
        """A card a duel named at the zone's resolution (*found*) seen again as a photo
        of one card is (:meth:`identify`: its best face aligned in perspective at the
        finest bank, its rivals at their own alignment, the light read on the card): its
        name kept where that names the card the same, or leaves it unnamed but likest
        the same face; otherwise withdrawn (unknown, plausible). Faces a numeral apart
        on a card a few dozen px long: the two looks disagree where its print cannot
        tell them.
        (Tuning blocks A-C: right 777 -> 772, wrong 5 -> 2; held-out scenes right
        451 -> 448 of 488, wrong 7 -> 4. Withdrawn wherever the two looks differ at
        all: right -14, wrong -4. Only a read that knows nothing of the cards played:
        in a watcher's (*among*) it cost 14 plays of 1232 in the tuning hands for one
        wrong play fewer, which its reads while a trick is cleared keep out too.)"""
        quad, ident, support = found
        _, seen = self.identify(zone.frame, quad)
        if ident.card_id in (seen.card_id, seen.best):
            return found
        return quad, ident.unnamed(), support

    def _lies_as_a_card(self, zone: _Zone, quad: np.ndarray, outline: float | None = None
                        ) -> bool:
        """Whether a card named at *quad* (frame px) lies where its outline is: a quad
        aligned inside a card (on a figure of its print, at the wrong scale) has no edges
        along its sides (*outline*, :func:`_on_edges` on the zone's edges, measured here
        unless given, at least OUTLINE_NAMED); nor is a quad aligned onto a part of a
        card (a patch of a plain face on a pile, at the wrong scale) a card: the card
        named has a card's shape."""
        if outline is None:
            outline = _on_edges((quad - zone.off) * np.float32(zone.f), zone.maps)
        return outline >= OUTLINE_NAMED and bool(
            Q.card_shaped(quad, self.aspect, card_long_range(zone.native))[0])

    def _where_laid(self, zone: _Zone, laid: np.ndarray
                    ) -> tuple[np.ndarray, Identity, float] | None:
        """The card within the rectangle *laid* (frame px) where the side changed since it
        was last seen, when no outline shows it (a card on a pile of its own print: its
        sides make little edge against the cards beneath, whose outlines lead
        elsewhere): the rectangle as it is and as a card of the deck's outline ratio on
        its long side (what differs from the card beneath may leave out a strip where
        the two prints agree), each also refined onto the zone's edges; named, or
        None. A rectangle of something other than a card names nothing."""
        q = (np.asarray(laid, np.float32) - zone.off) * np.float32(zone.f)
        q = portrait(q)
        d = np.hypot(*(Q.roll_corners(q, 1) - q).T)
        long, short = (d[1] + d[3]) / 2, (d[0] + d[2]) / 2
        if short < 3:
            return None
        c = q.mean(axis=0)
        across = (q[1] - q[0]) / max(float(d[0]), 1e-6)  # along the short side
        shaped = np.float32([c + (q[k] - c) - across * (short / 2 - long / self.aspect / 2)
                             * (1 if k in (1, 2) else -1) for k in range(4)])
        quads = np.stack([q, shaped])
        quads = np.concatenate([quads, Q.refine(quads, zone.maps)])
        sides = Q.side_support(quads, zone.maps)
        placed, _ = self._settle(zone, list(quads), sides, (1.0,), True)
        if placed is None or placed[1].card_id == "unknown":
            # a reflection or a sheen over the card swamps the plain correlation
            return self._in_uneven_light(zone, quads, sides, laid=True)
        return placed

    def _in_uneven_light(self, zone: _Zone, qs: np.ndarray, sides: np.ndarray,
                         laid: bool = False) -> tuple[np.ndarray, Identity, float] | None:
        """The card within an outline (*qs*, zone px; *sides* their sides' support: the
        UNEVEN_OUTLINES best by their third side, at least PLACE_SIDES) that the plain
        correlation could not name, named by its face without the smooth light field
        over it (:meth:`vision.faces.FaceBank.flattened`: a sheen, a lamp's falloff, a
        shadow's soft edge), at the alignment's resolution (the field's part left out,
        what is left of a sparse print is weaker against noise); or None. Those where
        some face shows so (MIN_SCORE) are first moved to where a face fits best, by
        UNEVEN_STEPS (shares of the card: shifted along both sides, turned, grown):
        the field misleads the ECC alignment as it does the plain correlation, and an
        outline from the shrunk zone lies a px or two off the card; one not on edges
        all round (OUTLINE_SURE: a card on a pile, whose outline shares sides with the
        cards beneath) first by UNEVEN_PILE_STEP too. *laid*: *qs* are where the side
        changed (:meth:`_where_laid`), each tried whatever its edges (a reflection
        or the pile beneath leaves sides without)."""
        if not len(qs):
            return None
        top = list(range(min(len(qs), UNEVEN_OUTLINES))) if laid else \
            _on_three_sides(sides, UNEVEN_OUTLINES)
        if not top:
            return None
        bank = self.bank_for(min(zone.native, ALIGN_PX_PER_MM))
        flat = bank.flattened()
        quads = np.stack([portrait(qs[i]) / np.float32(zone.f) + zone.off
                          for i in top]).astype(np.float32)

        def weigh(moved: np.ndarray) -> np.ndarray:
            return flat.scores(rectify_all(zone.frame, list(moved), flat.size)).max(axis=1)

        shows = weigh(quads) >= MIN_SCORE
        if not shows.any():
            return None
        top = [i for i, ok in zip(top, shows, strict=True) if ok]
        quads = quads[shows]
        sure = sides[top].min(axis=1) >= OUTLINE_SURE
        for part, moves in ((sure, _UNEVEN_MOVES), (~sure, _PILE_MOVES)):
            if part.any():
                quads[part] = P.climb(quads[part], weigh, lambda s: s, moves)[0]
        pics = np.stack([without_glare(p) for p in rectify_all(zone.frame, list(quads),
                                                                flat.size)])
        rows = flat.scores(pics)
        for j in np.argsort(-rows.max(axis=1), kind="stable"):
            if rows[j].max() < NAME_SCORE:
                break
            ident = self._identity(flat, rows[j], pics[j], zone.pose.light, zone.among)
            if ident.card_id == "unknown":
                continue
            quad = np.roll(quads[j], 2, axis=0) if ident.upside_down else quads[j]
            self._learn_size(quad, zone.native)
            return quad, ident, float(sides[top[j]].min())
        return None

    def _off_outline(self, zone: _Zone, qs: np.ndarray, sides: np.ndarray
                     ) -> tuple[np.ndarray, Identity, float] | None:
        """The card on a pile, found a little off the outlines *qs* (zone px, *sides*
        their sides' support): its outline shares sides with the cards beneath it, so
        the outlines found there lie a little off it. The PLACE_OUTLINES best outlined
        (their third side's support), each moved to where a face fits it best
        (:meth:`_placed`), as moved and refined onto edges; named, and in its cult's
        colours (a pattern of the cloth that a face happens to fit shows neither
        cult's), or None."""
        f, off = np.float32(zone.f), zone.off
        top = _on_three_sides(sides, PLACE_OUTLINES)
        if not top:
            return None
        moved, score = self._placed(zone.frame, np.stack([portrait(qs[i]) / f + off
                                                          for i in top]))
        if score.max() < MIN_SCORE:
            return None  # no face fits any of them anywhere near: no card on a pile
        mz = (moved[score >= MIN_SCORE] - off) * f
        mz = np.concatenate([mz, Q.refine(mz, zone.maps)])
        placed, _ = self._settle(zone, list(mz), Q.side_support(mz, zone.maps), (1.0,), True)
        if placed is None or placed[1].card_id == "unknown" or placed[1].cult is None:
            return None
        return placed

    def _settle(self, zone: _Zone, quads: list[np.ndarray], sides: np.ndarray,
                grow: tuple[float, ...], by_face: bool, from_runs: bool = False
                ) -> tuple[tuple[np.ndarray, Identity, float] | None, float]:
        """The card among *quads* (zone px, portrait; *sides*: their sides' support on
        edges), each also grown by *grow*, whose face shows best, named, or None when
        none is a card (*by_face*: the quads were laid by the face search, so one that
        cannot be named is no card); and the best correlation of any with a face at the
        coarsest resolution. *from_runs*: each quad was laid from a run of edges as one
        of its sides, so a card named there keeps a side on edges (OUTLINE_NAMED; a
        cloth's pattern that a face fits draws the alignment off the run)."""
        if not quads:
            return None, -1.0
        frame, f, off = zone.frame, zone.f, zone.off
        qs = np.stack(quads)
        centre = qs.mean(axis=1, keepdims=True)
        grown = list((((qs - centre)[:, None] * np.float32(grow)[:, None, None] + centre[:, None])
                      / np.float32(f) + off).reshape(-1, 4, 2))  # in frame px, each grown
        owner = [i for i in range(len(quads)) for _ in grow]
        s = self.coarse_scores(frame, grown)
        order = _to_align(s, owner, sides)
        likeness = float(s.max())
        if from_runs:  # chosen by their look: aligned only where a face shows coarsely
            order = [j for j in order if s[j].max() >= MIN_SCORE]
            if not order:
                return None, likeness
        if likeness < MIN_SCORE * REFINE_SHARE and not by_face \
                and float(sides.min(axis=1).max()) < OUTLINE_SURE:
            # no outline's inside looks even that much like a face (as the finder's:
            # a quad a few px off a card correlates far more) nor is one outlined all
            # round: no card lies there, and nothing is aligned to say so
            return None, likeness
        fine = self.bank_for(zone.native)
        middle = self.bank_for(min(zone.native, ALIGN_PX_PER_MM))
        best = None
        for nj, j in enumerate(order):
            # the best few, each aligned with its best face and matched finely
            # (as found too: under soft focus an alignment can slide a few px off)
            aligned = align(frame, grown[j], middle, int(np.argmax(s[j])))
            for q in (aligned, grown[j]) if aligned is not grown[j] else (aligned,):
                pic = without_glare(rectify(frame, q, fine.size))
                row = fine.scores(pic[None])[0]
                if nj >= FINE_CANDIDATES and row.max() < MIN_SCORE:
                    continue  # the outline all round shows no face even aligned: no card
                if best is None or row.max() > best[2].max():
                    best = (q, owner[j], row, pic)
            # (the outline first: it is known, the face's test costs a fit)
            if sides[best[1]].min() >= OUTLINE_SURE and self._settled(fine, best[2], best[3]):
                break  # a card seen whole within an outline all round: the card on top
        quad, i, row, pic = best
        # the card chosen aligned again at the finest resolution with its best face and
        # with its rivals: the fine print where alike faces differ must lie where each
        # face has it, and an outline a tenth off can fit the wrong face best until each
        # face has had its own alignment (even within an outline all round: a few px
        # of a small card decide a numeral). A rival takes over only when, aligned with
        # it, the card leaves at most half (MARGIN_SHARE) of what its face left
        # unexplained: an alignment pulls a card towards the face it is aligned with,
        # so a face alike (a numeral apart) always gains a little
        n = len(fine.ids)
        ranked = [int(k) for k in np.argsort(-row)]
        tries = [ranked[0]]
        for k in ranked[1:]:
            # a face printed alike (another cult's colours) aligns alike: one of them
            if len(tries) > RIVALS:
                break
            if all(fine.alike[k % n, t % n] < DISTINCT_FACES for t in tries):
                tries.append(k)
        start = quad
        # each face's best correlation in any alignment tried: the card is named by
        # the deck's margins against every face as well as that face can fit it (a
        # rival that fits as well at its own alignment leaves the card undecided)
        rows = [row]
        held = []  # rivals that fit better at their own alignment, short of taking over
        for k in tries:
            if k == ranked[0] and fine is middle:
                continue  # aligned with it already
            if k != ranked[0] and not _can_overtake(fine.alike[ranked[0] % n, k % n],
                                                    float(row.max())):
                continue  # no alignment could let it take over
            q = align(frame, start, fine, k)
            if q is start:
                continue
            p2 = without_glare(rectify(frame, q, fine.size))
            r2 = fine.scores(p2[None])[0]
            rows.append(r2)
            if r2[k] < row.max():
                continue
            if k % n != int(np.argmax(row)) % n and 1 - r2[k] > MARGIN_SHARE * (1 - row.max()):
                held.append((q, r2, p2))
                continue
            quad, row, pic = q, r2, p2

        def on_edges(q: np.ndarray) -> float:
            return _on_edges((q - off) * np.float32(f), zone.maps)

        # each alike face pulls the card to where its own fine print lies (a numeral's
        # bars onto its own), and the duel then names the face the picture was aligned
        # with; the card's outline does not move with the face: the duel is fought on
        # the picture whose quad lies on the card's edges best (tuning scene 1505005
        # north: a sun-adept of 152 px aligned 3.5% off as sun-priest won its duel on
        # that picture, and lost on its own)
        (quad, row, pic), outline = _best_on_edges([(quad, row, pic)] + held, on_edges)
        row = np.max(rows, axis=0)
        support = float(sides[i].min())
        ident = self._identity(fine, row, pic, zone.pose.light, zone.among)
        if ident.card_id != "unknown" and not self._lies_as_a_card(zone, quad, outline):
            ident = ident.unnamed()
        if ident.upside_down:
            quad = np.roll(quad, 2, axis=0)
        if ident.card_id == "unknown" and (
                support < OUTLINE_SURE and (by_face or ident.score < PRESENT_SCORE
                                            or ident.quarters < WHOLE_QUARTERS / 2)
                or ident.score < PRESENT_SCORE
                and _runs_on(quads[i], zone.maps) >= RUN_ON):
            # a card that cannot be named is there by its outline: all round, or in
            # part where its face fits (an outline the face search laid over a cloth
            # is not one), and ending at its corners (a gingham's or planks' lines run
            # on past them)
            return None, likeness
        if ident.card_id != "unknown" and from_runs and float(Q.side_support(
                ((quad - off) * np.float32(f))[None], zone.maps).max()) < OUTLINE_NAMED:
            return None, likeness  # (not learnt from: no card)
        if ident.card_id != "unknown":  # a card named: its size teaches the cards' size
            self._learn_size(quad, zone.native)
        return (quad, ident, support), likeness

    @staticmethod
    def _settled(bank: FaceBank, row: np.ndarray, pic: np.ndarray) -> bool:
        """Whether the card *pic* shows its best face (by *row*) whole (NAME_SCORE over
        the card, WHOLE_QUARTERS over each quarter) and so well that no face of another
        print could take over however the card were aligned (:func:`_can_overtake`; a
        face of the same print, DISTINCT_FACES, aligns alike and is told apart later)."""
        k = int(np.argmax(row))
        s = float(row[k])
        n = len(bank.ids)
        alike = bank.alike[k % n].copy()
        alike[k % n] = -1.0
        alike[alike >= DISTINCT_FACES] = -1.0
        if s < NAME_SCORE or _can_overtake(alike, s).any():
            return False
        upright = pic[::-1, ::-1] if k >= n else pic
        return bank.quarters(upright, k % n) >= WHOLE_QUARTERS

    def _learn_size(self, quad: np.ndarray, native: float) -> None:
        """Remember the long side of a named card's *quad* (frame px, TL, TR, BR, BL of
        its upright art) in mm at *native* px per mm (:meth:`card_long_mm`)."""
        d = np.hypot(*(np.roll(quad, -1, axis=0) - quad).T)
        self.seen_long_mm.append(float(d[1] + d[3]) / 2 / native)

    def card_long_mm(self) -> float:
        """The cards' long side in the Twilight card's mm: the median of the last
        SIZE_MEMORY named cards', or the nominal card's until one is named."""
        if not self.seen_long_mm:
            return float(CARD_MM[1])
        return float(np.median(self.seen_long_mm))

    def _identity(self, bank: FaceBank, row: np.ndarray, card: np.ndarray,
                  light: tuple[float, float, float] = (1.0, 1.0, 1.0),
                  among: np.ndarray | None = None) -> Identity:
        n = len(bank.ids)
        card, row = self._unlit(bank, row, card)
        best = bank.ids[int(np.argmax(row)) % n]
        # the cult by colour; the face decides among that cult's cards (two faces alike
        # but for their colours, as one picture printed in each cult's, are told apart
        # by colour, not by a correlation that standardises each channel)
        cult = colour_cult(card, self.cult_hist, light, self.cult_hue)
        if cult is None:
            cult = self._cult_by_light(bank, int(np.argmax(row)), card)
        allowed = None if cult is None else self.cults[cult]
        decision = bank.decide(row, allowed, card, light)
        if decision.card_id == "unknown" and among is not None:
            # faces the card alone cannot tell apart, where some cannot lie there
            # (played already): a face a numeral apart that was played is no rival. A
            # card named on its own keeps its name, played or not: the watcher then
            # refuses it, and the table hears of an earlier misread
            only = among if allowed is None else allowed & among
            if not only.all() and only.any():
                decided = bank.decide(row, only, card, light)
                if decided.card_id != "unknown":
                    decision = decided
        card_id, score, turned, margin, rival, duelled = decision
        if card_id != "unknown":
            best = card_id
        if cult is not None and Card.parse(best).cult.value != cult:
            card_id = "unknown"  # the colours say one cult, the whole face another
        upright = card[::-1, ::-1] if turned else card
        quarters = bank.quarters(upright, bank.ids.index(best))
        whole = score >= NAME_SCORE and quarters >= WHOLE_QUARTERS
        if not whole:
            card_id = "unknown"
        plausible = whole and (cult is None or Card.parse(best).cult.value == cult)
        conf = float(np.clip(score, 0, 1)) * (0.5 + 0.5 * max(0.0, margin))
        if card_id == "unknown":
            conf = min(conf, UNNAMED_CONFIDENCE)
        return Identity(card_id, cult, conf, score, margin, turned, quarters, best, rival,
                        plausible, duelled and card_id != "unknown")

    @staticmethod
    def _cult_by_light(bank: FaceBank, best: int, card: np.ndarray) -> str | None:
        """The cult of *card* whose colours say neither, where its best face (row
        *best* of *bank*) has a twin printed alike in the other cult's colours: the
        twin's whose light is plausible (:data:`TINT_RATIO`), or None. The light a card
        is read under is left out: in a photo of one card it was read from the best
        face's own neutral parts, which would decide for that face."""
        n = len(bank.ids)
        card_id = Card.parse(bank.ids[best % n])
        twin = f"{card_id.cult.other.value}-{card_id.name}"
        if twin not in bank.ids:
            return None
        j = bank.ids.index(twin)
        if bank.alike[best % n, j] < DISTINCT_FACES:
            return None  # told apart by their prints
        mine = abs(bank.tint(card, best))
        theirs = abs(bank.tint(card, j))
        if theirs >= max(TINT_RATIO * mine, TINT_LEAST):
            return card_id.cult.value
        if mine >= max(TINT_RATIO * theirs, TINT_LEAST):
            return card_id.cult.other.value
        return None

    @staticmethod
    def _unlit(bank: FaceBank, row: np.ndarray, card: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray]:
        """A card its best face (by *row*) does not show whole: a reflection that did
        not wash it out (:func:`vision.glare.specular_spot`) set to the mean colour of
        the rest, as washed-out glare is, and *row* again; else as they were."""
        n = len(bank.ids)
        k = int(np.argmax(row))
        upright = card[::-1, ::-1] if k >= n else card
        if bank.flat:
            return card, row  # a reflection is part of the smooth field it leaves out
        if row[k] >= NAME_SCORE and bank.quarters(upright, k % n) >= WHOLE_QUARTERS:
            return card, row
        out = bank.without_reflection(card, k)
        if out is None:
            return card, row
        again = bank.scores(out[None])[0]
        return (out, again) if again.max() > row[k] else (card, row)

    def _placed(self, frame: np.ndarray, quads: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Each of *quads* (N x 4 x 2, frame px, portrait) moved to where a face fits it
        best at the coarsest resolution: at each of PLACE_STEPS (a share of the card)
        shifted either way along both its sides, then turned by half as many radians,
        again while that fits better (at most PLACE_MOVES times): (the quads moved,
        their best correlation with any face)."""
        return P.climb(quads.astype(np.float32),
                       lambda q: self.coarse_scores(frame, list(q)).max(axis=1),
                       lambda s: s, _PLACE_MOVES, PLACE_MOVES)

    def coarse_scores(self, frame: np.ndarray, quads: list[np.ndarray]) -> np.ndarray:
        """Correlations (N x 2K) of the insides of *quads* (frame px; TL, TR, BR, BL of a
        card upright) with every face both ways up, at the coarsest resolution."""
        coarse = self.banks[0]
        return coarse.scores(rectify_all(frame, quads, coarse.size))

    def likeness(self, frame: np.ndarray, quads: list[np.ndarray]) -> np.ndarray:
        """How much each of *quads* (frame px, any corner first) looks like a face: its
        best correlation at the coarsest resolution, upright either way."""
        return self.coarse_scores(frame, [portrait(q) for q in quads]).max(axis=1)

    def identify(self, frame: np.ndarray, quad: np.ndarray, flat: bool = False
                 ) -> tuple[np.ndarray, Identity]:
        """The card inside *quad* (any corner first) of a photo of one card named: (its
        quad TL, TR, BR, BL of the upright art, identity); aligned with its best face
        first, affinely and then in perspective. *flat*: named by the faces without
        their smooth light field (:meth:`vision.faces.FaceBank.flattened`: a sheen
        over a glossy card, a lamp's falloff)."""
        q = portrait(quad)
        plain = self.banks[-1]
        fine = plain.flattened() if flat else plain
        grown = [(q - q.mean(axis=0)) * g + q.mean(axis=0) for g in GROW]
        s = self.coarse_scores(frame, grown)
        j = int(np.argmax(s.max(axis=1)))
        first = int(np.argmax(s[j]))

        def aligned(start: np.ndarray, face: int, perspective: bool = False
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
            """*start* aligned with face row *face*: (quad, picture, its row)."""
            moved = align(frame, start, fine, face, perspective)
            pic = without_glare(rectify(frame, moved, fine.size))
            return moved, pic, fine.scores(pic[None])[0]

        q, card, row = aligned(grown[j], first)
        # a card filling much of a photo taken with the phone a little tilted shows
        # its perspective (its far side shorter), which no affine fit follows: aligned
        # again from there by a homography, kept where its face fits that better.
        # (Tuning photos, 990: 873 -> 882 right, wrong 13 -> 13; the rivals below
        # aligned so too: the same, at twice the alignments. A side card, a tenth of
        # the frame, shows no perspective an affine fit misses.)
        again = aligned(q, first, perspective=True)
        if again[2][first] > row[first]:
            q, card, row = again
        # as a side card (:meth:`_settle`): the card aligned with its rivals of other
        # prints too, each face weighed at its best alignment, and the duel fought on
        # the picture whose outline lies on the photo's edges best among the first
        # face's and those of rivals that fit better at their own
        n = len(fine.ids)
        ranked = [int(k) for k in np.argsort(-row)]
        rows, held = [row], []
        for k in ranked[1:RIVALS + 1]:
            if k % n == ranked[0] % n or fine.alike[ranked[0] % n, k % n] >= DISTINCT_FACES:
                continue  # the face turned, or printed alike: aligned alike
            qk, ck, rk = aligned(q, k)
            rows.append(rk)
            if rk[k] > row.max():
                held.append((qk, ck))
        if held:
            maps = Q.edge_maps(frame)
            (q, card), _ = _best_on_edges([(q, card)] + held, lambda x: _on_edges(x, maps))
        row = np.max(rows, axis=0)
        # no Twilight card shows the light here: its print's neutral parts do, where
        # the card shows its best face clearly enough to say where those lie
        light = plain.light_on(card, int(np.argmax(row))) if row.max() >= NAME_SCORE \
            else None
        ident = self._identity(fine, row, card, light or (1.0, 1.0, 1.0))
        return (np.roll(q, 2, axis=0) if ident.upside_down else q), ident


def _on_edges(quad: np.ndarray, maps: Q.EdgeMaps) -> float:
    """How well *quad*'s outline (px of *maps*), looked for a little about it
    (:func:`vision.quads.refine`'s reach: an alignment fits the print, not the
    outline), lies on edges all round: its sides' mean support."""
    return float(Q.side_support(Q.refine(quad[None], maps), maps)[0].mean())


def _best_on_edges(candidates: list[tuple], on_edges) -> tuple[tuple, float]:
    """Among *candidates* (tuples whose first item is a quad), the one whose quad lies
    on edges best by *on_edges* (the first of equals), and how well it lies."""
    there = [on_edges(c[0]) for c in candidates]
    k = int(np.argmax(there))
    return candidates[k], there[k]


def _can_overtake(alike: np.ndarray | float, score: float) -> np.ndarray:
    """Whether a face correlating *alike* with the face a card fits at *score* could,
    aligned, fit it so well as to take over (leave at most MARGIN_SHARE of what is
    unexplained): correlations are cosines of angles between pictures, and the
    angle between two faces is at most the sum of their angles to the card."""
    need = 1 - MARGIN_SHARE * (1 - score)
    reach = np.arccos(np.clip(score, -1, 1)) + np.arccos(np.clip(need, -1, 1))
    return np.asarray(alike) >= (-1.0 if reach >= np.pi else np.cos(reach))


def _runs_on(quad: np.ndarray, maps: Q.EdgeMaps) -> float:
    """How far *quad*'s side lines run on past its corners (the median of
    :func:`vision.quads.run_on`'s eight), each continuation at its best within a
    couple of px and degrees of the side's own line: an outline a few degrees off a
    cloth's lines still lies on them (the edges along a side are a px or two wide),
    but their continuations drift off."""
    c = quad.mean(axis=0)
    tries = []
    for deg in (-4.0, -2.0, 0.0, 2.0, 4.0):
        t = np.radians(deg)
        rot = np.float32([[np.cos(t), -np.sin(t)], [np.sin(t), np.cos(t)]])
        turned = (quad - c) @ rot.T + c
        for dx in (-2, -1, 0, 1, 2):
            for dy in (-2, -1, 0, 1, 2):
                tries.append(turned + np.float32([dx, dy]))
    return float(np.median(Q.run_on(np.stack(tries), maps).max(axis=0)))


def card_long_range(px_per_mm: float) -> tuple[float, float]:
    """The long side (px) a side card may have at *px_per_mm*: CARD_SIZE_RANGE of a
    nominal card's (the outline proposals and a named card's shape both take it)."""
    long = CARD_MM[1] * px_per_mm
    return (CARD_SIZE_RANGE[0] * long, CARD_SIZE_RANGE[1] * long)


def portrait(quad: np.ndarray) -> np.ndarray:
    """*quad* (any corner first) clockwise, from the corner that makes side 0-1 a short
    side."""
    return portrait_all(quad[None])[0]


def portrait_all(quads: np.ndarray) -> np.ndarray:
    """Each of *quads* (N x 4 x 2, any corner first) clockwise, from the corner that
    makes side 0-1 a short side (:func:`portrait`)."""
    q = clockwise_all(quads)
    turned = Q.roll_corners(q, 1, axis=1)
    d = np.hypot(*(turned - q).transpose(2, 0, 1))
    return np.where((d[:, 0] + d[:, 2] <= d[:, 1] + d[:, 3])[:, None, None], q, turned)


def _to_align(scores: np.ndarray, owner: list[int], sides: np.ndarray) -> list[int]:
    """Which rows of *scores* (N x 2K: each grown quad's coarse correlations; *owner*:
    the quad each row grew from; *sides*: each quad's sides' support on edges) are
    aligned and matched finely: the FINE_CANDIDATES best, and the best row of the
    outline with the most support on edges all round (each side OUTLINE_SURE) among
    the rest, however little its inside correlates. A few px off, a card whose plain
    face contrasts with the cloth fits no face until aligned onto it (tuning scene
    1605004 east, a dark card on light wood: 0.40 at an outline 5% off, 0.95 at its
    own). :meth:`SideReader._settle` counts it only where a face shows once it is
    aligned (MIN_SCORE): a gingham's square is outlined all round too."""
    best = scores.max(axis=1)
    order = [int(j) for j in np.argsort(-best)[:FINE_CANDIDATES]]
    taken = {owner[j] for j in order}
    whole = [i for i in range(len(sides)) if i not in taken and sides[i].min() >= OUTLINE_SURE]
    if whole:
        i = max(whole, key=lambda i: float(sides[i].min()))
        order.append(max((j for j in range(len(owner)) if owner[j] == i),
                         key=lambda j: float(best[j])))
    return order


def align(frame: np.ndarray, quad: np.ndarray, bank: FaceBank, face: int,
          perspective: bool = False) -> np.ndarray:
    """*quad* (TL, TR, BR, BL of the card upright, or half round when *face* is a
    turned face's row) moved by an affine ECC alignment of the frame around it with
    face *face* of *bank* (grey), or with *perspective* a homography; *quad* itself
    when ECC fails or slides off."""
    n = len(bank.ids)
    tmpl = bank.grey[face % n]
    if face >= n:
        tmpl = np.ascontiguousarray(tmpl[::-1, ::-1])
    moved = ecc_align(frame, quad, tmpl, ALIGN_MARGIN,
                      PERSPECTIVE_ITERATIONS if perspective else ALIGN_ITERATIONS,
                      ALIGN_MAX_MOVE, homography=perspective)
    # an alignment squeezing the card out of its shape fitted a part of it
    if abs(np.log(art_aspect(moved) / art_aspect(quad))) > np.log(Q.ASPECT_TOLERANCE):
        return quad
    return moved


def colour_cult(card: np.ndarray, cult_hist: dict[str, np.ndarray],
                light: tuple[float, float, float] = (1.0, 1.0, 1.0),
                cult_hue: dict[str, np.ndarray] | None = None) -> str | None:
    """The cult whose chroma histogram the card's colours (divided by the *light*
    the Twilight card shows, so as taught) overlap clearly more (MIN_CULT_MARGIN), or
    None (also when fewer than MIN_CHROMATIC of its pixels have a colour at all).
    Where neither does (a light dimmer or brighter than the *light* known, as in a
    photo of one card, scales every chroma), the cult whose *cult_hue* (hue
    histograms, :func:`vision.profile.hue_hist`) its hues overlap clearly more, or
    many times more (HUE_RATIO): with no light known (a photo of one card without
    neutral parts), or the light known leaving the colours undecided (a deck without
    neutral parts under a warm lamp: tuning deck 109's moon-altar, 0.96, read
    "unknown" against its sun twin)."""
    gains = 1.0 / np.maximum(np.float32(light), 0.05)
    card = np.clip(card.astype(np.float32) * gains, 0, 255).astype(np.uint8)
    lab = cv2.cvtColor(card, cv2.COLOR_BGR2Lab)
    a = lab[..., 1].astype(np.float32) - 128
    b = lab[..., 2].astype(np.float32) - 128
    chromatic = (a * a + b * b) > CHROMA_MIN ** 2
    if chromatic.mean() < MIN_CHROMATIC:
        return None
    hist = cv2.calcHist([lab], [1, 2], chromatic.astype(np.uint8), [HIST_BINS, HIST_BINS],
                        [0, 256, 0, 256])
    hist /= max(float(hist.sum()), 1.0)
    overlap = {c: float(np.minimum(hist, h).sum()) for c, h in cult_hist.items()}
    (c1, o1), (_, o2) = sorted(overlap.items(), key=lambda kv: -kv[1])[:2]
    if o1 - o2 >= MIN_CULT_MARGIN or cult_hue is None:
        return c1 if o1 - o2 >= MIN_CULT_MARGIN else None
    hues = hue_hist(card)
    overlap = {c: float(np.minimum(hues, h).sum()) for c, h in cult_hue.items()}
    (c1, o1), (_, o2) = sorted(overlap.items(), key=lambda kv: -kv[1])[:2]
    if o1 - o2 >= MIN_CULT_MARGIN:
        return c1
    return c1 if o1 >= max(HUE_FLOOR, HUE_RATIO * o2) else None


def _on_three_sides(sides: np.ndarray, count: int) -> list[int]:
    """The *count* best of outlines whose *sides* (N x 4) are on edges, by their third
    best side's support, that are on edges on three sides (PLACE_SIDES)."""
    third = np.sort(sides, axis=1)[:, 1]
    return [int(i) for i in np.argsort(-third, kind="stable")[:count]
            if third[i] >= PLACE_SIDES]


def _moves(steps: tuple[float, ...], grow: bool = True) -> list[np.ndarray]:
    """:func:`vision.proposals.climb`'s moves for *steps*: at each, a shift of that
    share either way along both sides (and both at once), a turn of half as many
    radians either way, and (*grow*) a growth by as much either way."""
    out = []
    for d in steps:
        v = np.float32([-d, 0.0, d])
        out.append(np.stack(np.meshgrid(v, v, [0.0], [1.0], indexing="ij"), -1)
                   .reshape(-1, 4).astype(np.float32))
        turns = [[0, 0, -d / 2, 1], [0, 0, d / 2, 1]]
        out.append(np.float32(turns + ([[0, 0, 0, 1 - d], [0, 0, 0, 1 + d]] if grow else [])))
    return out


_PLACE_MOVES = _moves(PLACE_STEPS, grow=False)
_UNEVEN_MOVES = _moves(UNEVEN_STEPS)
_PILE_MOVES = _moves((UNEVEN_PILE_STEP, *UNEVEN_STEPS))
