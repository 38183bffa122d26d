"""Recognition of the cards at the Twilight card's sides (CONTRACT C6) — the public API.

>>> from vision.profile import load_deck
>>> rec = Recogniser(load_deck(None))              # built-in deck; or load_deck("DECK")
>>> result = rec.recognise(frame)                  # doctest: +SKIP
>>> result["sides"]["north"]                       # doctest: +SKIP
'moon-hierarch'

``Recogniser(profile, mirror=False)`` — build once (tens of ms), use for every frame:

``.locate(frame) -> TwilightPose | None``
    the Twilight card: ``quad`` (TL, TR, BR, BL of its upright art; edges 0-1 and 2-3
    are its moon sides), ``homography`` (card mm -> frame px), ``moon_seats``,
    ``side_seat`` (the seat each side 0 top, 1 right, 2 bottom, 3 left faces),
    ``angle`` and ``score``. None when it is not seen (or too much of it is covered).
``.read_side(frame, pose, seat) -> SideReading``
    the uppermost card at one side: ``card_id`` (C1 id, ``"unknown"`` when a card lies
    there that cannot be named surely, None when none lies there), ``confidence``
    0..1, ``cult`` by colour, ``quad`` (frame px, the card's own TL, TR, BR, BL),
    ``identity`` (the match's evidence) and ``outline`` scores. Costs a few ms, so a
    tracker can re-read only the side where something changed; ``.side_ms`` holds
    the stages of the last call (``zone_ms``, ``find_ms``, ``match_ms``). Both take
    an optional ``warpable``: the frame's :func:`vision.locate.warp_source`, which
    the many warps out of one frame read fastest (``recognise`` converts it once).
``.recognise(frame, image_name=None) -> dict``
    the C6 line as a dict (plus per-side ``confidence``); ``.last_pose`` and
    ``.last_readings`` keep what was found, ``.timings`` the stages in ms
    (``locate_ms``, summed ``zone_ms``/``find_ms``/``match_ms``, ``total_ms``).
``.identify_card(image) -> Identity``
    one card alone (``recognise --card``): any turn, light background margin allowed.

:func:`vision.annotate.annotate(frame, pose, readings)` draws what was found.
Frames are B,G,R ``uint8`` arrays (what :mod:`vision.sources` gives). The rules
(R3: which cult belongs at a side) are deliberately not used here: a card of the
wrong cult is reported as what it is, so the rules can refuse it (R9).
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path

import cv2
import numpy as np

from companion.core.cards import CARD_IDS, SEATS, Card, Seat
from vision import locate as _locate
from vision.imagefile import read_image
from vision.profile import CARD_MM, DeckProfile, ProfileError, load_deck
from vision.read import (
    MATCH_PX_PER_MM,
    PAIR_PX_PER_MM,
    SURE_CARD_SCORE,
    ZONE_PX_PER_MM,
    CardFinder,
    CardMatcher,
    FoundPoses,
    Identity,
    PairJudge,
    percentile_f32,
    percentile_u8,
)

TwilightPose = _locate.TwilightPose

#: A reading this good (correlation, pair margin, quarters) gets no second look.
SURE_SCORE = 0.95
SURE_MARGIN = 0.8
SURE_QUARTERS = 0.8
#: A named card must share at least this much of its face's colours (grey share and
#: hues; real cards under a warm lamp or glare keep > 0.07), and a faint match (below
#: WEAK_CONFIDENCE) needs an outline (precise fit) of at least WEAK_OUTLINE (a purgatory
#: on a pile reaches 0.5, a hand 0.33-0.41).
MIN_COLOUR_AGREEMENT = 0.05
WEAK_CONFIDENCE = 0.3
WEAK_OUTLINE = 0.45
#: A named card whose face shows only in part (its second-worst quarter correlates
#: below PARTIAL_QUARTERS) must be named with at least PARTIAL_CONFIDENCE: a card placed
#: a few mm off, or the table beside a hand, matches part of some face (a hierarch's
#: big light shape, mostly). On fresh simulator scenes (seeds 800000+, both sizes) all
#: 7 wrong names and false cards were such, and 13 of 1762 right names.
PARTIAL_QUARTERS = 0.7
PARTIAL_CONFIDENCE = 0.6
#: Below this best correlation with any face, a pose is no card of the deck and gets
#: no finer placement (the finer steps gain a few hundredths, not this much).
HOPELESS_SCORE = 0.55
#: A fallback pose (the coarse placement, a few mm off) is looked at closer only when
#: some face correlates at least this well with it.
GLANCE_SCORE = 0.3
#: A pose whose best face correlates between this and HOPELESS_SCORE is roughly a card
#: of the deck placed a few degrees off (the finder's turn grid is coarse and the
#: precise fit only shifts): an area alignment with that face gets one chance to place
#: it before it is given up.
RESCUE_SCORE = 0.4
#: Resolution (px/mm) of the final area alignment of a nearly named card, how far (mm)
#: it may move it, and its most ECC iterations; fewer (ROUGH_ALIGN_ITERATIONS) for a
#: roughly found card: a fallback pose's, and a rescue with a cult's mean face. An
#: alignment that lands on a card (final correlation >= 0.8) settles within 12 (median
#: 3, at most 12: 86 of 271 calls on 60 frames, seeds 460000+); most of the others are
#: fallback poses on the table, which ran on to 25. With 12 for those, the sides read on
#: 8 x 500 scenes (seeds 400000+ and 600000+) are the same as with 25; with 12 for the
#: best pose's card too, a glared moon-adept (101776 north, style 1, 640x480), left
#: unnamed at 25, was named a priest.
ALIGN_PX_PER_MM = 1.0
ALIGN_MARGIN_MM = 4.0
ALIGN_ITERATIONS = 25
ROUGH_ALIGN_ITERATIONS = 12
#: An alignment that leaves the best face's correlation below this is tried again from
#: the card turned half round (not for a card that shows none of its face's colours:
#: on 2400 tuning scenes, seeds 100000+ and 800000+, none of the 474 such second tries
#: named a card).
FLIP_BELOW = 0.8
#: Least quarter correlation and identity margin of a fallback pose's reading (the best
#: pose named no card) for it to count as the card on top (wood grain between plank
#: joints can pass for a plain face, narrowly).
WHOLE_QUARTERS = 0.7
WHOLE_MARGIN = 0.6
#: The frame is shrunk by area to this many times the zone's resolution before the
#: zone is warped out of it (anti-aliasing).
ZONE_OVERSAMPLE = 1.5
#: Supersampling of the card warp before it is shrunk to the match size (anti-aliasing).
CARD_WARP_OVERSAMPLE = 2
#: Glare: a card pixel whose darkest channel is at least GLARE_LEVEL is washed out by
#: a lamp's reflection (no ink shows there); the spot and a ring around it as wide as
#: the spot's radius, up to GLARE_RING_MM (its fading edge, where ink shows paled), are
#: left out of matching, unless more than GLARE_MAX_SHARE of the card is that bright (a
#: white card in bright light, not a spot).
GLARE_LEVEL = 235
GLARE_RING_MM = 4.0
GLARE_MAX_SHARE = 0.5
#: Soft glare: on a dark card a lamp's reflection adds a soft white spot that saturates
#: nowhere, yet outshines the card's own print (the card is then placed off, or named
#: wrong). When a side reads no card, the soft spot in its zone is found, taken off all
#: channels, and the side read again (a named card then counts). The spot is found at
#: SOFT_GLARE_PX_PER_MM (:func:`soft_glare_spots`):
#:
#: * where it may be: at each smoothing of SOFT_GLARE_FIND_MM, the SOFT_GLARE_STARTS
#:   brightest peaks of the zone's darkest channel, SOFT_GLARE_STARTS_APART_MM apart (the
#:   finer finds a spot on a dark card, the coarser the middle of one that saturates a
#:   white card, where the finer peaks anywhere on the plateau);
#: * a first guess at the brightest: a round Gaussian of one of SOFT_GLARE_SIGMAS_MM
#:   whose amplitude is where the dark parts under it (the SOFT_GLARE_ENVELOPE_PERCENT
#:   darkest within its core, where it reaches SOFT_GLARE_CORE of its peak) rise above
#:   the zone's floor (its SOFT_GLARE_FLOOR_PERCENT darkest level); the width explaining
#:   the most light wins. Coloured ink is dark in some channel under any spot, so on a
#:   dark card this is about half the height, while on a white card, far above the
#:   floor, it is too high. A place where it is below MIN_SOFT_GLARE has no spot;
#: * the fit: the spot whose removal leaves the picture around it made of the fewest
#:   colours, the sum of its three channels' histogram entropies (bins of SOFT_GLARE_BIN
#:   grey levels, a pixel every SOFT_GLARE_SAMPLE_MM within SOFT_GLARE_REACH widest
#:   sigmas of the place, saturated pixels left out). A card is printed in a few flat
#:   colours and a table in a narrow range; a spot smears each colour along its slope,
#:   and a wrong spot (too strong, too weak, off centre, too wide) leaves a ring or a
#:   dent that smears them again. At each place the width is searched on the sigmas with
#:   the amplitude on SOFT_GLARE_AMPLITUDE_STEPS' coarse step; the SOFT_GLARE_REFINED
#:   places whose spot gains most are refined: in up to SOFT_GLARE_ROUNDS rounds the
#:   centre moves to the best of its eight neighbours SOFT_GLARE_CENTRE_STEPS_MM away,
#:   then the width (to the next sigmas) and the amplitude (coarse, then halving) are
#:   fitted again. The refined spot that gains most is the fit. On simulator scenes
#:   (seeds 100000+, 800000+, 900000+) the fit's centre was 1.2 mm off and its height 5%
#:   low in the median, where the first guess alone was 2.4 mm off and 31% low.
#:
#: A spot of at least MIN_SOFT_GLARE grey levels is taken off. Sigmas span the
#: reflections of a lamp seen on a card (a few mm to a card's half-width); the
#: percentiles were set on the tuning scenes: the 15th keeps sensor noise from the
#: envelope, the 20th is the table or the card's dark ground.
SOFT_GLARE_PX_PER_MM = 1.0
SOFT_GLARE_FIND_MM = (3.0, 8.0)
SOFT_GLARE_SIGMAS_MM = (3.0, 4.0, 5.0, 6.5, 8.0, 10.0, 12.5, 15.0)
SOFT_GLARE_CORE = 0.5
SOFT_GLARE_ENVELOPE_PERCENT = 15
SOFT_GLARE_FLOOR_PERCENT = 20
SOFT_GLARE_STARTS = 3
SOFT_GLARE_STARTS_APART_MM = 10.0
SOFT_GLARE_REFINED = 2
SOFT_GLARE_BIN = 4
SOFT_GLARE_SAMPLE_MM = 2.0
SOFT_GLARE_REACH = 3.0
SOFT_GLARE_SATURATED = 245
SOFT_GLARE_AMPLITUDE_STEPS = (32, 16, 8, 4)
SOFT_GLARE_MAX_AMPLITUDE = 256
SOFT_GLARE_CENTRE_STEPS_MM = (2.0, 1.0)
SOFT_GLARE_ROUNDS = 4
MIN_SOFT_GLARE = 40.0
#: ... and only when taking the fitted spot off leaves the picture simpler by at least
#: this much (summed entropy, nats): else nothing there is a reflection (an arm over
#: the side, a white card) and neither spot is taken off. On the tuning scenes every
#: side a spot taken off let be named had a gain of 0.105 or more, while 44% of the
#: sides read again for nothing had less than this.
MIN_SOFT_GLARE_GAIN = 0.05
#: ... and only where the first read found a pose this like a generic face (a card
#: may lie there): an empty side reaches 0.29 typically and this one time in ten, so
#: it is seldom read twice; of the cards a reflection hid on the tuning scenes, all
#: but one (0.37, left for speed) reached 0.43.
SOFT_GLARE_CARD_SCORE = 0.4
#: A card named with less confidence than this, with a soft glare spot on it, is read
#: again without the spot (the spot can make one card look like another: on the tuning
#: scenes the wrong names under a spot had 0.19-0.33, while 99.3% of the right names
#: reach this; so few are read twice).
SOFT_GLARE_DOUBT = 0.35
#: The pair judge may name a card the whole face left in doubt (unknown) only when
#: that face matched at least this well with every quarter whole (SURE_QUARTERS): a
#: half-seen older card beneath fails a quarter; a glare spot on a whole card lowers
#: the match a few hundredths (a glared sun-priest at 0.92-0.95, which the judge told
#: from a novice and an adept 5:1).
JUDGED_SCORE = 0.9
#: A card the pair judge cannot decide on keeps the name the whole face gave it when
#: that match was clear (SURE_SCORE, SURE_QUARTERS) with at least this margin: at
#: 640x480 the judge's finer picture of a small adept loses the numeral it differs
#: from a priest or novice by, while the whole face still names it (on fresh seeds
#: 100000+ and 700000+, every such adept had a margin of 0.47 or more and was right).
UNJUDGED_MARGIN = 0.4
#: Corners of two card poses found this close (mm) are the same pose: half a step of
#: the search's grid (a zone px is 2.9 mm), so only the very same place and turn.
SAME_POSE_MM = 1.5


@dataclass(frozen=True)
class SideReading:
    """One side: ``card_id`` (C1 id, ``"unknown"``, or None for no card), ``confidence``,
    ``cult`` by colour (or None), ``quad`` (4x2 frame px, None without a card) and the
    full :class:`~vision.read.Identity` when a card was matched."""

    seat: str
    card_id: str | None
    confidence: float
    cult: str | None
    quad: np.ndarray | None
    identity: Identity | None = None
    #: correlation of the deck's generic face with the outline found (coarse, precise)
    outline: tuple[float, float] = (0.0, 0.0)


class Recogniser:
    """Finds the Twilight card and reads its four sides with one deck profile."""

    def __init__(self, profile: DeckProfile, *, mirror: bool = False) -> None:
        self.profile = profile
        self.mirror = mirror
        self.twilight = _locate.TwilightModel(profile.faces["twilight"])
        self.matcher = CardMatcher(profile)
        self.pair_judge = PairJudge(profile)
        align = (round(CARD_MM[0] * ALIGN_PX_PER_MM), round(CARD_MM[1] * ALIGN_PX_PER_MM))
        self.align_faces = {
            cid: cv2.cvtColor(cv2.resize(face, align, interpolation=cv2.INTER_AREA),
                              cv2.COLOR_BGR2GRAY).astype(np.float32)
            for cid, face in profile.faces.items() if cid in CARD_IDS}
        # each cult's mean face: the frame and corner layout its cards share, which
        # aligns a roughly found card of that cult whatever its symbol
        self.cult_faces = {
            cult: np.mean([f for cid, f in self.align_faces.items()
                           if cid.startswith(cult + "-")], axis=0).astype(np.float32)
            for cult in ("sun", "moon")}
        self.finder = CardFinder(profile, ZONE_PX_PER_MM)
        self.timings: dict[str, float] = {}
        self.side_ms: dict[str, float] = {}
        self.last_readings: dict[str, SideReading] = {}
        self.last_pose: TwilightPose | None = None

    # -- stages
    def locate(self, frame: np.ndarray, warpable: np.ndarray | None = None
               ) -> TwilightPose | None:
        """The Twilight card's pose (*warpable*: the frame's
        :func:`~vision.locate.warp_source`, when the caller has it already)."""
        return _locate.locate(frame, self.twilight, mirror=self.mirror, warpable=warpable)

    def read_side(self, frame: np.ndarray, pose: TwilightPose, seat: Seat | str,
                  warpable: np.ndarray | None = None) -> SideReading:
        """The uppermost card at *seat*'s side of the Twilight card (see module doc);
        *warpable* as for :meth:`locate` (a soft glare spot is taken off it while the side
        is read again, and put back: see :func:`spot_taken_off`)."""
        seat = Seat.parse(seat) if isinstance(seat, str) else seat
        side = pose.seat_side(seat)
        self.side_ms = {"zone_ms": 0.0, "find_ms": 0.0, "match_ms": 0.0}
        H = _locate.zone_homography(pose, side, ZONE_PX_PER_MM)
        hypotheses = self._find(frame, H)
        if warpable is None:
            warpable = _locate.warp_source(frame)
        reading = self._read_found(warpable, seat, H, hypotheses)
        if reading.card_id in (None, "unknown") and reading.outline[0] >= SOFT_GLARE_CARD_SCORE:
            reading = self._read_without_glare(frame, warpable, seat, H, hypotheses) or reading
        elif reading.card_id is not None and reading.confidence < SOFT_GLARE_DOUBT:
            reading = self._doubt_glare(frame, warpable, seat, H, reading)
        return reading

    def _find(self, frame: np.ndarray, H: np.ndarray) -> FoundPoses:
        """The card poses :meth:`CardFinder.find_all` finds in the zone of homography *H*
        (zone px -> frame px)."""
        t0 = time.perf_counter()
        zone = self._zone_image(frame, H)
        t1 = time.perf_counter()
        hypotheses = self.finder.find_all(zone)
        self._add_ms("zone_ms", t1 - t0)
        self._add_ms("find_ms", time.perf_counter() - t1)
        return hypotheses

    def _read_found(self, frame: np.ndarray, seat: Seat, H: np.ndarray,
                    hypotheses: FoundPoses) -> SideReading:
        """The uppermost card among the poses *hypotheses* found in the zone of *H*
        (*frame*: the frame's :func:`~vision.locate.warp_source`; the card is only
        warped out of it from here on)."""
        if not hypotheses:
            return SideReading(seat.value, None, 1.0, None, None)
        t0 = time.perf_counter()
        # the best outline is normally the card on top; another pose replaces its
        # reading only when the best cannot be named (or was no card after all), and the
        # other is named surely (an older card beneath, named half-seen, must not win)
        best = self._read_pose(frame, seat, H, *hypotheses[0][:3])
        # ... but not when the best is a whole, well placed face that failed only on
        # telling two cards apart (a priest or a novice): a worse placed pose would
        # just pick one of them (bench hand 201010: a glared sun-priest named novice)
        if best.card_id in (None, "unknown") and not (
                best.identity is not None and best.identity.plausible
                and best.identity.quarters >= SURE_QUARTERS):
            named = [r for r in (self._read_pose(frame, seat, H, *h[:3], glance=True)
                                 for h in hypotheses.fallbacks())
                     if r.card_id not in (None, "unknown") and _whole(r.identity)]
            if named:
                best = max(named, key=lambda r: r.identity.score)
        self._add_ms("match_ms", time.perf_counter() - t0)
        return best

    def _read_without_glare(self, frame: np.ndarray, warpable: np.ndarray, seat: Seat,
                            H: np.ndarray, hypotheses: FoundPoses) -> SideReading | None:
        """The side read again with its soft glare spot taken off (see MIN_SOFT_GLARE),
        as fitted and as first guessed: the reading that names a card, the fitted
        spot's first, else None; and None when the two name different cards. The spot is
        taken off *warpable* (the frame's warp_source) while the side is read again."""
        named = [reading for reading in (
            self._read_without_spot(warpable, seat, H, hypotheses, spot)
            for spot in self._soft_glare(frame, H)) if reading is not None]
        return _agreed(named)

    def _read_without_spot(self, warpable: np.ndarray, seat: Seat, H: np.ndarray,
                           hypotheses: FoundPoses, spot: tuple[float, float, float, float]
                           ) -> SideReading | None:
        """The side read again with *spot* taken off: the reading when that names a
        card, else None. When the spot does not move the best pose found, only that
        pose is read again, and only when the spot lies on it (the other poses were
        read already, and a spot off the card changes neither where nor what it is)."""
        with spot_taken_off(warpable, spot):
            again = self._find(warpable, H)
            if again and again[0][2] == hypotheses[0][2] and float(np.abs(
                    again[0][0] - hypotheses[0][0]).max()) <= SAME_POSE_MM * ZONE_PX_PER_MM:
                quad = cv2.perspectiveTransform(
                    hypotheses[0][0].reshape(-1, 1, 2).astype(np.float64), H)
                if _off_card(spot, quad.reshape(4, 2)):
                    return None
                again = FoundPoses(again[:1], list)
            reading = self._read_found(warpable, seat, H, again)
        return reading if reading.card_id not in (None, "unknown") else None

    def _soft_glare(self, frame: np.ndarray, H: np.ndarray
                    ) -> list[tuple[float, float, float, float]]:
        """:func:`soft_glare_spots`, its time counted with the zone's."""
        t0 = time.perf_counter()
        spots = soft_glare_spots(frame, H)
        self._add_ms("zone_ms", time.perf_counter() - t0)
        return spots

    def _doubt_glare(self, frame: np.ndarray, warpable: np.ndarray, seat: Seat,
                     H: np.ndarray, reading: SideReading) -> SideReading:
        """A faintly named card with a soft glare spot on it, read again without the
        spot (as fitted and as first guessed): the card named then (what the spot hid
        may have made it look like another card), else, or when the two name different
        cards, the reading as it was (a spot that saturates is left out of matching
        already, and taking off its fading edge may spoil the rest)."""
        named = []
        for spot in self._soft_glare(frame, H):
            if _off_card(spot, reading.quad):
                continue
            with spot_taken_off(warpable, spot):
                again = self._read_found(warpable, seat, H, self._find(warpable, H))
            if again.card_id not in (None, "unknown"):
                named.append(again)
        return _agreed(named) or reading

    def _zone_image(self, frame: np.ndarray, H: np.ndarray) -> np.ndarray:
        """The side zone rectified at ZONE_PX_PER_MM (*H*: zone px -> frame px). The
        frame is first shrunk by area over the zone's bounding box to about
        ZONE_OVERSAMPLE times the zone's resolution: a direct warp from several times
        finer would alias a purgatory's stripes and a card's fine print into noise."""
        size = _locate.zone_size(ZONE_PX_PER_MM)
        w, h = size
        corners, (x0, y0, x1, y1) = _zone_in_frame(frame, H, margin=2)
        # frame px per zone px along the zone's edges
        ratio = min(np.linalg.norm(corners[1] - corners[0]) / w,
                    np.linalg.norm(corners[3] - corners[0]) / h)
        k = int(ratio / ZONE_OVERSAMPLE)  # whole factors: OpenCV's fast area shrink
        if k >= 2 and x1 - x0 > 8 * k and y1 - y0 > 8 * k:
            x1, y1 = x0 + (x1 - x0) // k * k, y0 + (y1 - y0) // k * k
            crop = frame[y0:y1, x0:x1]
            small = cv2.resize(crop, ((x1 - x0) // k, (y1 - y0) // k), interpolation=cv2.INTER_AREA)
            sx = sy = 1.0 / k
            # pixel centres: x_small = (x - x0 + 0.5) / k - 0.5
            to_small = np.array([[sx, 0, (0.5 - x0) * sx - 0.5], [0, sy, (0.5 - y0) * sy - 0.5],
                                 [0, 0, 1.0]])
            return cv2.warpPerspective(small, to_small @ H, size,
                                       flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                       borderMode=cv2.BORDER_REPLICATE)
        return cv2.warpPerspective(frame, H, size, flags=cv2.INTER_LINEAR | cv2.WARP_INVERSE_MAP,
                                   borderMode=cv2.BORDER_REPLICATE)

    def _read_pose(self, frame: np.ndarray, seat: Seat, H: np.ndarray, corners: np.ndarray,
                   strength: float, template: int, glance: bool = False) -> SideReading:
        """Place and name one card pose found in a zone (zone px, homography *H*). With
        *glance* (a fallback pose), a pose where no face fits even roughly is given up
        before it is placed precisely."""
        quad = cv2.perspectiveTransform(corners.reshape(-1, 1, 2).astype(np.float64),
                                        H).reshape(4, 2).astype(np.float32)
        if glance:
            rough = self.matcher.identify(self.rectify(frame, quad), glance=True)
            if rough.score < GLANCE_SCORE:
                return SideReading(seat.value, None, 1.0 - strength, None, None, rough,
                                   (strength, 0.0))
            # placed with the generic face of the best pose, or with the face it roughly
            # is (the best pose's may be another kind of card altogether), which fits
            upright = np.roll(quad, 2, axis=0) if rough.upside_down else quad
            quad, fine = max(self.finder.refine(frame, quad, template),
                             self.finder.refine_with_face(frame, upright, rough.best),
                             key=lambda placed: placed[1])
        else:
            quad, fine = self.finder.refine(frame, quad, template)
        ident = self.identify_quad(frame, quad)
        if ident.upside_down:
            quad = np.roll(quad, 2, axis=0)
        # a roughly found card (a fallback pose, or a best pose rescued with a cult's
        # mean face) that shows none of the colours of the face it most resembles
        # (colour below MIN_COLOUR_AGREEMENT) is not aligned, and a fallback pose is
        # given up: placing it better brings no colours, and without them no name stands
        # (on 2400 tuning scenes, seeds 100000+ and 800000+, none of the 1405 such
        # alignments named a card)
        colourless = ident.colour < MIN_COLOUR_AGREEMENT
        if (not glance and RESCUE_SCORE <= ident.score < HOPELESS_SCORE
                and ident.cult in self.cult_faces and not colourless):
            quad, ident = self._align(frame, quad, ident, self.cult_faces[ident.cult],
                                      iterations=ROUGH_ALIGN_ITERATIONS)
        if ident.score < HOPELESS_SCORE or (glance and colourless):
            # nothing like a card of the deck here (an empty side, a fallback pose on
            # the table, or a fallback pose with none of its face's colours): no finer
            # placement would change that
            return SideReading(seat.value, None, 1.0 - strength, None, None, ident,
                               (strength, fine)) if strength < SURE_CARD_SCORE else \
                SideReading(seat.value, "unknown", 0.0, ident.cult, quad, ident, (strength, fine))
        if ident.best in CARD_IDS and (
                not _sure(ident) or len(self.matcher.alike(ident.best)) > 1):
            # place it again with the face it most resembles, and name it again: a mm
            # of misplacement is what makes one cleric look like another
            quad, ident = self._align(
                frame, quad, ident, flip=not (glance or colourless),
                iterations=ROUGH_ALIGN_ITERATIONS if glance else ALIGN_ITERATIONS)
        ident = self._judge_pair(frame, quad, ident)
        if ident.card_id != "unknown" and (
                ident.colour < MIN_COLOUR_AGREEMENT
                or (ident.confidence < WEAK_CONFIDENCE and fine < WEAK_OUTLINE)
                or (ident.quarters < PARTIAL_QUARTERS and ident.confidence < PARTIAL_CONFIDENCE)):
            # none of that face's colours (wood between two plank joints passes for a
            # plain face in grey), a faint match on a faint outline (a hand), or a
            # doubtful match of part of a face
            ident = replace(ident, card_id="unknown", confidence=0.0)
        if ident.card_id == "unknown" and strength < SURE_CARD_SCORE:
            # weak outline and no face: more likely table, hand or shadow than a card
            return SideReading(seat.value, None, 1.0 - strength, None, None, ident,
                               (strength, fine))
        return SideReading(seat.value, ident.card_id, ident.confidence, ident.cult, quad, ident,
                           (strength, fine))

    def _align(self, frame: np.ndarray, quad: np.ndarray, ident: Identity,
               face: np.ndarray | None = None, flip: bool = True,
               iterations: int = ALIGN_ITERATIONS) -> tuple[np.ndarray, Identity]:
        """*quad* aligned by area with *face* (default: the face *ident* most
        resembles; its pose may be a little skewed where the Twilight card's is: the
        last tenths of a mm and degree), and named again; the better of the two
        readings. *iterations*: the alignment's most ECC iterations."""
        if face is None:
            face = self.align_faces[ident.best]
        # a poor fit is tried again from the card turned half round: which way up it
        # lies was guessed from a rough pose, and the face turned half round drags the
        # alignment off the card
        for start in (quad, np.roll(quad, 2, axis=0)):
            aligned = _locate.align_face(frame, start, face, ALIGN_PX_PER_MM,
                                         ALIGN_MARGIN_MM, iterations=iterations)
            if aligned is not None and _locate.plausible(aligned):
                again = self.identify_quad(frame, aligned)
                if again.score > ident.score:
                    quad = np.roll(aligned, 2, axis=0) if again.upside_down else aligned
                    ident = again
            if ident.score >= FLIP_BELOW or not flip:
                break
        return quad, ident

    def _judge_pair(self, frame: np.ndarray, quad: np.ndarray, ident: Identity) -> Identity:
        """Two faces nearly alike at the match resolution (an adept and a priest differ in
        a numeral and a head) are decided again on a finer picture, where they differ."""
        best = ident.best
        if best is None or best not in CARD_IDS or not (ident.card_id != "unknown"
                                                         or ident.plausible):
            return ident
        alike = self.matcher.alike(best)
        if len(alike) < 2:
            return ident
        card = self._rectified(frame, quad, PAIR_PX_PER_MM, self.pair_judge.pad, keep_glare=True)
        blank = glare(card, PAIR_PX_PER_MM)
        verdict = self.pair_judge.judge(without_glare(card, blank), alike, hidden=blank)
        whole = ident.quarters >= SURE_QUARTERS
        if verdict is None:
            if (ident.card_id != "unknown" and whole and ident.score >= SURE_SCORE
                    and ident.margin >= UNJUDGED_MARGIN):
                # the finer picture cannot tell (a small card: the numeral blurs away),
                # and the whole face named it clearly
                return ident
            return replace(ident, card_id="unknown", confidence=0.0)
        if ident.card_id == "unknown" and not (whole and ident.score >= JUDGED_SCORE):
            # not a whole, clear face (perhaps a half-seen older card beneath the top
            # one): the judge may not make it a card
            return ident
        if verdict != best:
            return replace(ident, card_id=verdict, best=verdict, rival=best,
                           cult=Card.parse(verdict).cult.value,
                           confidence=max(ident.confidence, 0.5))
        if ident.card_id == "unknown" and ident.rival in alike:
            # it failed only on the margin against a face it is now told apart from
            return replace(ident, card_id=best, confidence=0.5)
        return ident

    def _rectified(self, frame: np.ndarray, quad: np.ndarray, px_per_mm: float,
                   pad: int, keep_glare: bool = False) -> np.ndarray:
        """The card inside *quad* upright at *px_per_mm*, *pad* px of margin all round
        (frame shrunk by area first where it is finer than that), B,G,R (*frame* may be
        its :func:`~vision.locate.warp_source`)."""
        w, h = (round(CARD_MM[0] * px_per_mm), round(CARD_MM[1] * px_per_mm))
        k = CARD_WARP_OVERSAMPLE
        dst = np.float32([(pad, pad), (w + pad, pad), (w + pad, h + pad), (pad, h + pad)]) * k
        M = cv2.getPerspectiveTransform(np.asarray(quad, np.float32), dst)
        size = ((w + 2 * pad) * k, (h + 2 * pad) * k)
        big = cv2.warpPerspective(frame, M, size, flags=cv2.INTER_LINEAR,
                                  borderMode=cv2.BORDER_REPLICATE)
        card = _locate.as_bgr(cv2.resize(big, (w + 2 * pad, h + 2 * pad),
                                         interpolation=cv2.INTER_AREA))
        return card if keep_glare else without_glare(card, glare(card, px_per_mm))

    def _add_ms(self, key: str, seconds: float) -> None:
        self.side_ms[key] = self.side_ms.get(key, 0.0) + seconds * 1000
        self.timings[key] = self.timings.get(key, 0.0) + seconds * 1000

    def rectify(self, frame: np.ndarray, quad: np.ndarray) -> np.ndarray:
        """The card inside *quad* (TL, TR, BR, BL) warped upright to the match size."""
        return self._rectified(frame, quad, MATCH_PX_PER_MM, self.matcher.pad)

    def identify_quad(self, frame: np.ndarray, quad: np.ndarray) -> Identity:
        return self.matcher.identify(self.rectify(frame, quad))

    def recognise(self, frame: np.ndarray, image_name: str | None = None) -> dict:
        """The C6 result for one frame (a dict; ``image`` only when *image_name* given)."""
        self.timings = {}
        t0 = time.perf_counter()
        # the frame converted once for all the warps out of it (see warp_source)
        warpable = _locate.warp_source(frame)
        pose = self.locate(frame, warpable)
        t1 = time.perf_counter()
        self.timings["locate_ms"] = (t1 - t0) * 1000
        self.last_pose = pose
        result: dict = {} if image_name is None else {"image": image_name}
        if pose is None:
            self.last_readings = {}
            result["twilight"] = {"found": False, "moon_seats": []}
            result["sides"] = {s.value: None for s in SEATS}
            self.timings["total_ms"] = self.timings["locate_ms"]
            return result
        readings = {s.value: self.read_side(frame, pose, s, warpable) for s in SEATS}
        self.last_readings = readings
        result["twilight"] = {"found": True, "moon_seats": list(pose.moon_seats)}
        result["sides"] = {seat: r.card_id for seat, r in readings.items()}
        result["confidence"] = {seat: round(r.confidence, 3) for seat, r in readings.items()}
        self.timings["total_ms"] = (time.perf_counter() - t0) * 1000
        return result

    # -- one card alone (recognise --card)
    def identify_card(self, image: np.ndarray) -> Identity:
        """Name a photo of one card alone: any turn, a light background margin allowed."""
        quad = card_outline(image)
        if quad is None:
            h, w = image.shape[:2]
            quad = np.float32([(0, 0), (w, 0), (w, h), (0, h)])
            if w > h:
                quad = np.roll(quad, 1, axis=0)
        ident = self.identify_quad(image, quad)
        if ident.upside_down:
            quad = np.roll(quad, 2, axis=0)
        self.last_pose = None
        self.last_readings = {"card": SideReading("card", ident.card_id, ident.confidence,
                                                  ident.cult, quad, ident)}
        return ident


def glare(card: np.ndarray, px_per_mm: float) -> np.ndarray | None:
    """Where *card* (BGR, upright) is washed out by a glare spot (see GLARE_LEVEL): a
    boolean mask, or None where there is none."""
    spot = cv2.inRange(card, (GLARE_LEVEL,) * 3, (255,) * 3)  # every channel that bright
    area = cv2.countNonZero(spot)
    if not area:
        return None
    # the fading edge is as wide as the washed-out core (up to GLARE_RING_MM)
    core_radius = float(np.sqrt(area / np.pi))
    r = max(1, round(min(core_radius, GLARE_RING_MM * px_per_mm)))
    blank = cv2.dilate(spot, cv2.getStructuringElement(cv2.MORPH_ELLIPSE, (2 * r + 1,) * 2)) > 0
    return None if blank.mean() > GLARE_MAX_SHARE else blank


def without_glare(card: np.ndarray, blank: np.ndarray | None) -> np.ndarray:
    """*card* with the *blank* part (:func:`glare`) set to the mean colour of the rest:
    a pixel at the mean adds nothing to a correlation, where a washed-out white blob
    would count against the true face and for whichever face has paper there."""
    if blank is None:
        return card
    out = card.copy()
    out[blank] = card[~blank].mean(axis=0).astype(np.uint8)
    return out


def _zone_in_frame(frame: np.ndarray, H: np.ndarray, margin: int = 0
                   ) -> tuple[np.ndarray, tuple[int, int, int, int]]:
    """The side zone of homography *H* (zone px -> frame px) in *frame*: its corners
    (TL, TR, BR, BL, frame px) and its bounding box (x0, y0, x1, y1), *margin* px
    wider all round, clipped to the frame."""
    w, h = _locate.zone_size(ZONE_PX_PER_MM)
    corners = cv2.perspectiveTransform(
        np.float64([[(0, 0)], [(w, 0)], [(w, h)], [(0, h)]]), H).reshape(4, 2)
    fh, fw = frame.shape[:2]
    x0, y0 = np.clip(np.floor(corners.min(axis=0)).astype(int) - margin, 0, (fw - 1, fh - 1))
    x1, y1 = np.clip(np.ceil(corners.max(axis=0)).astype(int) + margin, 1, (fw, fh))
    return corners, (int(x0), int(y0), int(x1), int(y1))


def _agreed(named: list[SideReading]) -> SideReading | None:
    """The first of the readings of one side, each with another soft spot taken off,
    when they all name one card (else None): a spot taken off wrong can make one card
    look like another (on tuning scenes, a moon-adept a moon-priest and a purgatory a
    temple, where the other spot named them right)."""
    if not named or any(r.card_id != named[0].card_id for r in named):
        return None
    return named[0]


def _off_card(spot: tuple[float, float, float, float], quad: np.ndarray) -> bool:
    """Whether a soft glare *spot* (:func:`soft_glare_spots`) lies off the card inside *quad*
    (its centre more than a sigma outside)."""
    x, y, sigma, _ = spot
    return cv2.pointPolygonTest(np.asarray(quad, np.float32), (x, y), True) < -sigma


def soft_glare_spots(frame: np.ndarray, H: np.ndarray) -> list[tuple[float, float, float, float]]:
    """The soft glare spot over the zone of homography *H* (zone px -> frame px) as
    fitted, then as first guessed (see the constants), each as (x, y, sigma, amplitude)
    in frame px and grey levels and only when it reaches MIN_SOFT_GLARE: none when
    nothing stands out, or when taking the fit off simplifies the picture less than
    MIN_SOFT_GLARE_GAIN (no reflection). The fit is nearer the truth on most cards, yet
    the guess, wider and stronger, reads some glared white cards better (the fit left
    bench hand 201010's glared sun-high-priest unknown on most frames, the guess named
    it)."""
    w, _ = _locate.zone_size(ZONE_PX_PER_MM)
    corners, (x0, y0, x1, y1) = _zone_in_frame(frame, H)
    px_per_mm = float(np.linalg.norm(corners[1] - corners[0])) / w * ZONE_PX_PER_MM
    k = max(1, int(px_per_mm / SOFT_GLARE_PX_PER_MM))  # whole factors: the fast area shrink
    if (x1 - x0) // k < 8 or (y1 - y0) // k < 8:
        return []
    small = cv2.resize(frame[y0:y1, x0:x1], ((x1 - x0) // k, (y1 - y0) // k),
                       interpolation=cv2.INTER_AREA)
    r = px_per_mm / k  # small px per mm
    blue, green, red = cv2.split(small)
    dark = cv2.min(cv2.min(blue, green), red)  # white light lifts every channel
    floor = percentile_u8(dark, SOFT_GLARE_FLOOR_PERCENT)
    starts, guess = [], None
    for cx, cy in _bright_places(dark, r):
        first_guess = _guess_spot(dark, floor, r, cx, cy)
        if first_guess is None:
            continue
        if guess is None:  # at the brightest place
            guess = (cx, cy, *first_guess)
        fit = _SpotFit(small, r, (cx, cy))
        gain, sigma = fit.first(cx, cy)
        starts.append((gain, fit, (cx, cy, sigma)))
    starts.sort(key=lambda start: -start[0])
    best = max((fit.refine(*place) for _, fit, place in starts[:SOFT_GLARE_REFINED]),
               default=None)  # the fit with the most gain: (gain, x, y, sigma, amplitude)
    if best is None or best[0] < MIN_SOFT_GLARE_GAIN:
        return []
    spots = [best[1:], guess]

    def in_frame(cx: float, cy: float, sigma: float, amplitude: float
                 ) -> tuple[float, float, float, float]:
        return ((cx + 0.5) * k - 0.5 + x0, (cy + 0.5) * k - 0.5 + y0, sigma * px_per_mm,
                float(amplitude))

    return [in_frame(*spot) for spot in spots if spot[3] >= MIN_SOFT_GLARE]


def _bright_places(dark: np.ndarray, r: float) -> list[tuple[int, int]]:
    """Where a soft spot may be centred in *dark* (the darkest channel at *r* px per mm):
    at each scale of SOFT_GLARE_FIND_MM, the SOFT_GLARE_STARTS brightest peaks of it
    smoothed that much, at least SOFT_GLARE_STARTS_APART_MM apart."""
    places: list[tuple[int, int]] = []
    size = 2 * int(SOFT_GLARE_STARTS_APART_MM * r / 2) + 1
    kernel = cv2.getStructuringElement(cv2.MORPH_RECT, (size, size))
    grey = dark.astype(np.float32)
    for scale in SOFT_GLARE_FIND_MM:
        smooth = cv2.GaussianBlur(grey, (0, 0), scale * r)
        ys, xs = np.nonzero(smooth >= cv2.dilate(smooth, kernel))
        found = 0
        for i in np.argsort(-smooth[ys, xs], kind="stable"):
            x, y = int(xs[i]), int(ys[i])
            if all(np.hypot(x - px, y - py) >= SOFT_GLARE_STARTS_APART_MM * r
                   for px, py in places):
                places.append((x, y))
                found += 1
                if found == SOFT_GLARE_STARTS:
                    break
    return places


def _guess_spot(dark: np.ndarray, floor: float, r: float, cx: int, cy: int
                ) -> tuple[float, float] | None:
    """The first guess at a soft spot centred at (cx, cy) in *dark* (see the constants):
    (sigma mm, amplitude), or None when that is below MIN_SOFT_GLARE."""
    # the core of the widest spot: where it reaches SOFT_GLARE_CORE of its peak
    reach = int(np.ceil(np.sqrt(-2 * np.log(SOFT_GLARE_CORE)) * max(SOFT_GLARE_SIGMAS_MM) * r))
    wy0, wx0 = max(0, cy - reach), max(0, cx - reach)
    lift = dark[wy0:cy + reach + 1, wx0:cx + reach + 1].astype(np.float32) - np.float32(floor)
    ys, xs = np.mgrid[wy0:wy0 + lift.shape[0], wx0:wx0 + lift.shape[1]].astype(np.float32)
    d2 = (xs - cx) ** 2 + (ys - cy) ** 2
    best = (0.0, 0.0, 0.0)  # (light explained, amplitude, sigma mm)
    for sigma in SOFT_GLARE_SIGMAS_MM:
        spot = np.exp(-d2 / np.float32(2 * (sigma * r) ** 2))
        core = spot >= SOFT_GLARE_CORE
        amplitude = percentile_f32(lift[core] / spot[core], SOFT_GLARE_ENVELOPE_PERCENT)
        if amplitude * sigma * sigma > best[0]:
            best = (amplitude * sigma * sigma, amplitude, sigma)
    _, amplitude, sigma = best
    return None if amplitude < MIN_SOFT_GLARE else (sigma, amplitude)


class _SpotFit:
    """The soft spot near a bright place whose removal leaves the fewest colours (see
    the constants): the sampled pixels of *small* (BGR at *r* px per mm) within
    SOFT_GLARE_REACH widest sigmas of *centre*, and the search over the spot's shape."""

    def __init__(self, small: np.ndarray, r: float, centre: tuple[int, int]) -> None:
        self.r = r
        reach = int(SOFT_GLARE_REACH * max(SOFT_GLARE_SIGMAS_MM) * r)
        h, w = small.shape[:2]
        cx, cy = centre
        step = max(1, round(SOFT_GLARE_SAMPLE_MM * r))
        rows = slice(max(0, cy - reach), min(h, cy + reach + 1), step)
        cols = slice(max(0, cx - reach), min(w, cx + reach + 1), step)
        pixels = small[rows, cols].reshape(-1, 3)
        seen = pixels.max(axis=1) < SOFT_GLARE_SATURATED  # a clipped pixel's lift is unknown
        ys, xs = np.mgrid[rows, cols]
        self.xs = xs.reshape(-1)[seen].astype(np.float32)
        self.ys = ys.reshape(-1)[seen].astype(np.float32)
        # offset so that an over-strong spot's negative values keep their own bins
        self.channels = [pixels[seen, c].astype(np.float32) + np.float32(256) for c in range(3)]
        self.bins = 512 // SOFT_GLARE_BIN + 1
        self.plain = float(self.costs(np.zeros((1, self.xs.size), np.float32))[0])  # as it is

    def _squared_distances(self, places: Sequence[tuple[float, float]]) -> np.ndarray:
        """Each sampled pixel's squared distance (px) from each of *places* (a row each)."""
        centres = np.asarray(places, np.float32)
        return (np.square(self.xs[None] - centres[:, :1])
                + np.square(self.ys[None] - centres[:, 1:]))

    def _spot(self, d2: np.ndarray, sigma: float) -> np.ndarray:
        """The unit spot of *sigma* (mm) at squared distances *d2*."""
        return np.exp(-d2 / np.float32(2 * (sigma * self.r) ** 2))

    def spots(self, places: Sequence[tuple[float, float]], sigma: float) -> np.ndarray:
        """The unit spots (one row each) centred at *places* (x, y px) at the sampled
        pixels (sigma in mm)."""
        return self._spot(self._squared_distances(places), sigma)

    def costs(self, lifts: np.ndarray) -> np.ndarray:
        """The summed entropies of the three channels with each row of *lifts* (the
        light a spot adds at the sampled pixels) taken off: one histogram per row and
        channel, all counted by one bincount (each row's bins offset by its own)."""
        m, n = lifts.shape
        offsets = (np.arange(m, dtype=np.float32) * self.bins)[:, None]
        total = np.zeros(m)
        for channel in self.channels:
            # each level's bin (the level cut to a whole number, divided by the bin
            # width: no spot lifts a pixel by more than its offset of 256, so it is
            # the floor of the level over the width), and its row's offset, in float32
            # (whole numbers far below 2**24), then cast once to the index bincount
            # takes: a third of the time of the same in integers
            q = np.subtract(channel[None], lifts)
            q /= np.float32(SOFT_GLARE_BIN)
            np.floor(q, out=q)
            q += offsets
            counts = np.bincount(q.astype(np.intp).ravel(),
                                 minlength=m * self.bins).reshape(m, self.bins)
            p = counts / n
            total -= (p * np.log(np.where(counts > 0, p, 1.0))).sum(axis=1)
        return total

    def width(self, cx: float, cy: float, sigmas: Sequence[float], fine: bool = True
              ) -> tuple[float, float, float]:
        """(cost, amplitude, sigma) of the best of *sigmas* at (cx, cy), each sigma with
        its best amplitude: coarse, then (when *fine*) halving steps; the sigmas searched
        side by side."""
        d2 = self._squared_distances([(cx, cy)])[0]  # (the same for every sigma)
        spots = [self._spot(d2, s) for s in sigmas]
        coarse = np.arange(0, SOFT_GLARE_MAX_AMPLITUDE + 1, SOFT_GLARE_AMPLITUDE_STEPS[0],
                           dtype=np.float32)
        costs = self.costs((coarse[None, :, None] * np.stack(spots)[:, None]).reshape(
            -1, spots[0].size)).reshape(len(sigmas), -1)
        best = [(float(row[i]), float(coarse[i])) for row in costs
                for i in [int(np.argmin(row))]]
        for step in SOFT_GLARE_AMPLITUDE_STEPS[1:] if fine else ():
            tried = [[a for a in (b[1] - step, b[1] + step) if 0 <= a <= SOFT_GLARE_MAX_AMPLITUDE]
                     for b in best]
            costs = self.costs(np.concatenate([np.float32(t)[:, None] * spot[None]
                                               for t, spot in zip(tried, spots, strict=True) if t]))
            at = 0
            for j, t in enumerate(tried):
                best[j] = min([best[j], *zip(costs[at:at + len(t)].tolist(), t, strict=True)])
                at += len(t)
        return min(b + (s,) for b, s in zip(best, sigmas, strict=True))

    def first(self, cx: float, cy: float) -> tuple[float, float]:
        """The best spot centred at (cx, cy), its amplitude on the coarse steps only: (its
        gain, how much less its removal leaves than the picture as it is; its sigma)."""
        cost, _, sigma = self.width(cx, cy, SOFT_GLARE_SIGMAS_MM, fine=False)
        return self.plain - cost, sigma

    def refine(self, cx: float, cy: float, sigma: float
               ) -> tuple[float, float, float, float, float]:
        """The spot (gain, x, y px, sigma mm, amplitude) from the best centred at
        (cx, cy): in up to SOFT_GLARE_ROUNDS rounds, its centre moved to the best of its
        eight neighbours on SOFT_GLARE_CENTRE_STEPS_MM, then its width (to the next
        sigmas) and amplitude fitted again, until neither moves."""
        sigmas = SOFT_GLARE_SIGMAS_MM
        cost, amplitude, _ = self.width(cx, cy, (sigma,))
        for _ in range(SOFT_GLARE_ROUNDS):
            start = (cx, cy, sigma)
            for step_mm in SOFT_GLARE_CENTRE_STEPS_MM:
                step = step_mm * self.r
                around = [(cx + dx * step, cy + dy * step)
                          for dx in (-1, 0, 1) for dy in (-1, 0, 1) if dx or dy]
                costs = self.costs(np.float32(amplitude) * self.spots(around, sigma))
                cost, cx, cy = min([(cost, cx, cy), *(
                    (c, x, y) for c, (x, y) in zip(costs.tolist(), around, strict=True))])
            i = sigmas.index(sigma)
            cost, amplitude, sigma = self.width(cx, cy, sigmas[max(0, i - 1):i + 2])
            if (cx, cy, sigma) == start:
                break
        return self.plain - cost, cx, cy, sigma, float(amplitude)


@contextmanager
def spot_taken_off(frame: np.ndarray, spot: tuple[float, float, float, float]
                   ) -> Iterator[np.ndarray]:
    """*frame* (B,G,R or a :func:`~vision.locate.warp_source`'s B,G,R,A) with the soft
    glare *spot* (:func:`soft_glare_spots`) taken off every colour channel within three
    sigmas of it, in place while the block runs, and as it was again after: no copy of
    the frame is made. A saturated pixel is left as it is (it shows nothing, and
    :func:`glare` leaves it out)."""
    x, y, sigma, amplitude = spot
    fh, fw = frame.shape[:2]
    x0, y0 = max(0, int(x - 3 * sigma)), max(0, int(y - 3 * sigma))
    x1, y1 = min(fw, int(x + 3 * sigma) + 1), min(fh, int(y + 3 * sigma) + 1)
    if x1 <= x0 or y1 <= y0:
        yield frame
        return
    region = frame[y0:y1, x0:x1]
    saved = region.copy()
    part = np.ascontiguousarray(saved[..., :3])
    ys, xs = np.mgrid[y0:y1, x0:x1].astype(np.float32)
    lift = amplitude * np.exp(-((xs - x) ** 2 + (ys - y) ** 2) / np.float32(2 * sigma * sigma))
    clear = np.clip(part.astype(np.float32) - lift[..., None], 0, 255).astype(np.uint8)
    saturated = cv2.inRange(part, (GLARE_LEVEL,) * 3, (255,) * 3)[..., None] > 0
    region[..., :3] = np.where(saturated, part, clear)
    try:
        yield frame
    finally:
        region[...] = saved


def _sure(ident: Identity) -> bool:
    """A reading no second look would change."""
    return (ident.card_id != "unknown" and ident.score >= SURE_SCORE
            and ident.margin >= SURE_MARGIN and ident.quarters >= SURE_QUARTERS)


def _whole(ident: Identity) -> bool:
    """A reading of a card whose face shows whole enough to be the one on top (an older
    card beneath shows a part, and some quarter of it fails)."""
    return ident.quarters >= WHOLE_QUARTERS and ident.margin >= WHOLE_MARGIN


def card_outline(image: np.ndarray) -> np.ndarray | None:
    """The outline (TL, TR, BR, BL, portrait) of the one card in a photo, or None when
    the card fills the photo (no margin to find it against)."""
    h, w = image.shape[:2]
    scale = min(1.0, 400.0 / max(h, w))
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) \
        if scale < 1 else image
    gray = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
    edges = cv2.Canny(cv2.GaussianBlur(gray, (5, 5), 0), 30, 90)
    edges = cv2.dilate(edges, np.ones((3, 3), np.uint8))
    contours, _ = cv2.findContours(edges, cv2.RETR_EXTERNAL, cv2.CHAIN_APPROX_SIMPLE)
    if not contours:
        return None
    contour = max(contours, key=cv2.contourArea)
    rect = cv2.minAreaRect(contour)
    (_, _), (rw, rh), _ = rect
    sh, sw = small.shape[:2]
    if rw * rh < 0.2 * sw * sh or rw * rh > 0.9 * sw * sh:
        return None
    aspect = max(rw, rh) / max(min(rw, rh), 1.0)
    if not 1.2 <= aspect <= 1.6:
        return None
    box = _locate._clockwise(cv2.boxPoints(rect).astype(np.float32)) / scale
    if np.linalg.norm(box[1] - box[0]) > np.linalg.norm(box[2] - box[1]):
        box = np.roll(box, -1, axis=0)
    return box.astype(np.float32)


# -- the command ---------------------------------------------------------------------------------


def run(args) -> int:
    """``twilight-companion recognise [--deck DECK] [--card] [--annotate DIR] IMAGE…`` (C6)."""
    try:
        profile = load_deck(args.deck)
    except ProfileError as exc:
        print(f"recognise: {exc}", file=sys.stderr)
        return 2
    rec = Recogniser(profile, mirror=bool(getattr(args, "mirror", False)))
    out_dir = Path(args.annotate) if getattr(args, "annotate", None) else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in args.images:
        frame = read_image(name) if os.path.isfile(name) else None
        if frame is None:
            failed += 1
            reason = "no such file" if not os.path.exists(name) else "not a readable image"
            print(json.dumps({"image": name, "error": reason}), flush=True)
            continue
        if args.card:
            ident = rec.identify_card(frame)
            line = {"image": name, "card": ident.card_id}
        else:
            line = rec.recognise(frame, image_name=name)
        print(json.dumps(line), flush=True)
        if out_dir is not None:
            from vision.annotate import annotate

            drawn = annotate(frame, rec.last_pose, rec.last_readings, card=args.card)
            cv2.imwrite(str(out_dir / (Path(name).stem + ".png")), drawn)
    return 2 if failed else 0


__all__ = ["Recogniser", "SideReading", "TwilightPose", "card_outline", "run", "CARD_MM",
           "MATCH_PX_PER_MM"]
