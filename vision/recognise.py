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
    ``angle``, ``score`` and ``size_mm``. None when it is not seen.
``.read_side(frame, pose, seat) -> SideReading``
    the uppermost card at one side: ``card_id`` (C1 id, ``"unknown"`` when a card lies
    there that cannot be named surely, None when none lies there), ``confidence``
    0..1, ``cult`` by colour, ``quad`` (frame px, the card's own TL, TR, BR, BL),
    ``identity`` (the match's evidence) and ``outline`` (its outline's edge support).
    Costs a few ms, so a tracker can re-read only the side where something changed;
    ``.side_ms`` holds the time of the last call.
``.recognise(frame, image_name=None) -> dict``
    the C6 line as a dict (plus per-side ``confidence``); ``.last_pose`` and
    ``.last_readings`` keep what was found, ``.timings`` the stages in ms
    (``locate_ms``, ``read_ms``, ``total_ms``).
``.identify_card(image) -> Identity``
    one card alone (``recognise --card``): any turn, mild perspective, with table
    around it or cropped tight.

How: :mod:`vision.quads` finds card-like quadrilaterals at any turn, :mod:`vision.faces`
names them by the taught faces with the deck's own margins; :mod:`vision.locate` and
:mod:`vision.read` apply that to the Twilight card and to each side (see
docs/recognition.md). :func:`vision.annotate.annotate(frame, pose, readings)` draws
what was found. Frames are B,G,R ``uint8`` arrays (what :mod:`vision.sources` gives).
The rules (R3: which cult belongs at a side) are deliberately not used here: a card of
the wrong cult is reported as what it is, so the rules can refuse it (R9).
"""

from __future__ import annotations

import time
from collections.abc import Collection
from dataclasses import dataclass

import cv2
import numpy as np

from companion.core.cards import SEATS, TWILIGHT_ID, Seat
from vision import quads as Q
from vision.locate import TwilightFinder, TwilightPose, clockwise, pose_from_quad
from vision.profile import CARD_MM, DeckProfile
from vision.read import Identity, SideReader

#: ``recognise --card``: the photo is shrunk to at most this many px on its long side
#: to look for the card's outline, which must fill at least this share of the photo's
#: shorter side along its own long side (a photo of one card, not of a table). A card
#: is then 70-200 px long, its sides straight runs of edges, and a dim photo's sensor
#: noise is averaged away (at 480 px it made edges everywhere); the card is named at
#: the photo's own resolution. (Tuning photos, 264: 243 right at 240 px, 241 at 280
#: and 320, 221 at 480 before the reflection and light steps; alike faces a numeral
#: apart flip with the outline's start, as the built-in tests' novice did at 320.)
CARD_PHOTO_PX = 240
CARD_PHOTO_MIN_SHARE = 0.3
#: ... and how many of the best outlines there (and the whole photo, a tight crop)
#: are named: the one whose face shows best is the card. They are the best by their
#: faces (coarsely) of CARD_PHOTO_PROPOSED outlines best on edges: a gingham's or a
#: stripe's squares make outlines as clear as the card's, and as many (a card 300 px
#: long on a gingham of 640x480 ranks 18th among them by its edges; tuning photos,
#: 990, right with the perspective alignment: 882 of 12, 887 of 24, 888 of 48).
CARD_PHOTO_OUTLINES = 3
CARD_PHOTO_PROPOSED = 48
#: A photo cropped tightly round a card turned any way holds the card's bounding box:
#: the card's outline at each turn (CARD_PHOTO_TURNS over half a turn, a degree apart)
#: is then the largest of the cards' outline ratio that fits the photo at that turn,
#: centred, or a little smaller (the crop's margin, CARD_PHOTO_SHRINK). Where neither
#: the outlines on edges (whose corners at the photo's borders make no edge) nor the
#: whole photo name a card, the CARD_PHOTO_TIGHT of these whose faces show best
#: (coarsely) are named, at turns CARD_PHOTO_APART degrees apart (an outline and its
#: mirror image fit the photo alike; the face tells them apart). Tuning photos, 880:
#: right 822 -> 827, wrong 8 both (all five in crops whose outline was not found);
#: held-out, 360: 335 -> 336, wrong 6 both. Tried as outlines named always besides
#: the others: the same on tuning, but held-out 334 right and 8 wrong. Where the two
#: name two cards, neither counts (tuning photos, 1144: one right and one wrong
#: fewer, a priest and a high priest from one photo; held-out identical).
CARD_PHOTO_TURNS = 180
CARD_PHOTO_SHRINK = (1.0, 0.94, 0.88)
CARD_PHOTO_TIGHT = 2
CARD_PHOTO_APART = 10


@dataclass(frozen=True)
class SideReading:
    """One side: ``card_id`` (C1 id, ``"unknown"``, or None for no card), ``confidence``,
    ``cult`` by colour (or None), ``quad`` (4x2 frame px, None without a card), the
    full :class:`~vision.read.Identity` when a card was matched, and ``outline``: the
    least share of its outline's sides on edges (and again, for the old pair form)."""

    seat: str
    card_id: str | None
    confidence: float
    cult: str | None
    quad: np.ndarray | None
    identity: Identity | None = None
    outline: tuple[float, float] = (0.0, 0.0)


class Recogniser:
    """Finds the Twilight card and reads its four sides with one deck profile."""

    def __init__(self, profile: DeckProfile, *, mirror: bool = False) -> None:
        self.profile = profile
        self.mirror = mirror
        self.twilight = TwilightFinder(profile.faces[TWILIGHT_ID], profile.twilight_aspect,
                                       mirror=mirror)
        self.reader = SideReader(profile.faces, profile.cult_hist, profile.card_aspect,
                                 mirror=mirror)
        self.last_pose: TwilightPose | None = None
        self.last_readings: dict[str, SideReading] = {}
        self.timings: dict[str, float] = {}
        self.side_ms: dict[str, float] = {}

    def locate(self, frame: np.ndarray, warpable: np.ndarray | None = None
               ) -> TwilightPose | None:
        """The Twilight card's pose, or None (*warpable* is accepted and ignored: the
        old interface's pre-converted frame)."""
        found = self.twilight.find(frame)
        if found is None:
            return None
        quad, score = found
        return pose_from_quad(quad, score, mirror=self.mirror, size_mm=self.twilight.size_mm,
                              light=self.twilight.light(frame, quad))

    def read_side(self, frame: np.ndarray, pose: TwilightPose, seat: Seat | str,
                  warpable: np.ndarray | None = None, *,
                  laid: np.ndarray | None = None,
                  among: Collection[str] | None = None,
                  outlines_only: bool = False) -> SideReading:
        """The uppermost card at *seat*'s side of the Twilight card at *pose*. *laid*: where
        a card was just laid there (4 x 2 frame px: what changed since the side was last
        seen, as a watcher of a video knows it), tried where no outline shows a card or
        one names a card only weakly. *among*: the cards that may lie there (card ids: a
        watcher of a hand knows which are played and where): a card its faces alone leave
        undecided is named as one of them where they tell it. *outlines_only*: read
        within the outlines found only (:meth:`vision.read.SideReader.read`)."""
        t0 = time.perf_counter()
        seat = Seat.parse(seat) if isinstance(seat, str) else seat
        found = self.reader.read(frame, pose, pose.seat_side(seat), laid=laid, among=among,
                                  outlines_only=outlines_only)
        if found is None:
            reading = SideReading(seat.value, None, 0.0, None, None)
        else:
            quad, ident, support = found
            reading = SideReading(seat.value, ident.card_id, ident.confidence, ident.cult,
                                  quad, ident, (support, support))
        self.side_ms = {"read_ms": (time.perf_counter() - t0) * 1000}
        return reading

    def recognise(self, frame: np.ndarray, image_name: str | None = None) -> dict:
        """The C6 result for one frame (a dict; ``image`` only when *image_name* given)."""
        t0 = time.perf_counter()
        pose = self.locate(frame)
        t1 = time.perf_counter()
        self.timings = {"locate_ms": (t1 - t0) * 1000}
        self.last_pose = pose
        result: dict = {} if image_name is None else {"image": image_name}
        if pose is None:
            self.last_readings = {}
            result["twilight"] = {"found": False, "moon_seats": []}
            result["sides"] = {s.value: None for s in SEATS}
            self.timings["total_ms"] = self.timings["locate_ms"]
            return result
        readings, sized = {}, {}
        for s in SEATS:
            sized[s.value] = bool(self.reader.seen_long_mm)
            readings[s.value] = self.read_side(frame, pose, s)
        if self.reader.seen_long_mm:
            # a side read before any card's size was known, with a nominal card's
            # size assumed (a deck's cards may be a fifth bigger or smaller than that in
            # the Twilight card's frame), read again once a card named here taught it
            for s in SEATS:
                if not sized[s.value] and readings[s.value].card_id in (None, "unknown"):
                    readings[s.value] = self.read_side(frame, pose, s)
        self.last_readings = readings
        result["twilight"] = {"found": True, "moon_seats": list(pose.moon_seats)}
        result["sides"] = {seat: r.card_id for seat, r in readings.items()}
        result["confidence"] = {seat: round(r.confidence, 3) for seat, r in readings.items()}
        t2 = time.perf_counter()
        self.timings["read_ms"] = (t2 - t1) * 1000
        self.timings["total_ms"] = (t2 - t0) * 1000
        return result

    # -- one card alone (recognise --card)
    def _tight(self, image: np.ndarray) -> list[np.ndarray]:
        """The CARD_PHOTO_TIGHT outlines inscribed in *image* (:func:`inscribed_outlines`)
        whose faces show best (coarsely), at turns CARD_PHOTO_APART degrees apart."""
        h, w = image.shape[:2]
        outlines = inscribed_outlines(w, h, self.profile.card_aspect)
        likeness = self.reader.likeness(image, outlines)
        per_turn = len(CARD_PHOTO_SHRINK)
        turns = len(outlines) // per_turn
        apart = CARD_PHOTO_APART * turns / 180  # in turns of the list
        taken: list[int] = []
        for i in (int(i) for i in np.argsort(-likeness)):
            if len(taken) == CARD_PHOTO_TIGHT:
                break
            t = i // per_turn
            if all(min(abs(t - u), turns - abs(t - u)) > apart
                   for u in (j // per_turn for j in taken)):
                taken.append(i)
        return [outlines[i] for i in taken]

    def identify_card(self, image: np.ndarray) -> Identity:
        """Name a photo of one card: any turn, mild perspective, table around it or
        cropped tight to it."""
        h, w = image.shape[:2]
        whole = np.float32([(0, 0), (w, 0), (w, h), (0, h)])  # a tight crop
        outlines = card_outlines(image, self.profile.card_aspect, CARD_PHOTO_PROPOSED)
        if len(outlines) > CARD_PHOTO_OUTLINES:
            likeness = self.reader.likeness(image, outlines)
            outlines = [outlines[i] for i in np.argsort(-likeness)[:CARD_PHOTO_OUTLINES]]
        tries = [self.reader.identify(image, q) for q in (*outlines, whole)]
        if all(ident.card_id == "unknown" for _, ident in tries):
            # a sheen over a glossy card, or a lamp's falloff, can swamp a sparse print
            # in the plain correlation: the same outlines named by the faces without
            # their smooth light field, as a side card's are (tuning photos, 990: 897
            # -> 912 right, wrong 9 -> 10)
            tries += [self.reader.identify(image, q, flat=True) for q in (*outlines, whole)]
        if all(ident.card_id == "unknown" for _, ident in tries):
            # a photo cropped tightly round a turned card, whose corners at the
            # borders make no edge: where a card turned to fit the photo lies. Its
            # outlines are a few % off the card: where two name two cards, neither
            # pose is known well enough to tell faces a numeral apart
            tight = [self.reader.identify(image, q) for q in self._tight(image)]
            if len({ident.card_id for _, ident in tight} - {"unknown"}) == 1:
                tries += tight
        # the outline that shows a face best (a frame inside the print can pass for a
        # card's outline in a tight crop)
        quad, ident = max(tries, key=lambda t: (t[1].card_id != "unknown", t[1].score))
        self.last_pose = None
        self.last_readings = {"card": SideReading("card", ident.card_id, ident.confidence,
                                                  ident.cult, quad, ident)}
        return ident


def card_outlines(image: np.ndarray, aspect: float = CARD_MM[1] / CARD_MM[0],
                  keep: int = CARD_PHOTO_OUTLINES) -> list[np.ndarray]:
    """Outlines (4x2, clockwise) that may be the one card in a photo, best supported
    first: a card-like quad within the photo, along its long side at least
    CARD_PHOTO_MIN_SHARE of the photo's shorter side (its face decides which)."""
    h, w = image.shape[:2]
    scale = min(1.0, CARD_PHOTO_PX / max(h, w))
    small = cv2.resize(image, None, fx=scale, fy=scale, interpolation=cv2.INTER_AREA) \
        if scale < 1 else image
    sh, sw = small.shape[:2]
    qs, sides = Q.card_quads(small, aspect, (CARD_PHOTO_MIN_SHARE * min(sh, sw),
                                             float(np.hypot(sh, sw))),
                             keep=max(4 * keep, 2 * CARD_PHOTO_PROPOSED))
    out = []
    for q, s in zip(qs, sides, strict=True):
        if np.all((q >= -2) & (q <= np.float32([sw + 1, sh + 1]))) and s.mean() >= 0.5:
            out.append((float(s.mean()), clockwise(q / scale)))
    out.sort(key=lambda t: -t[0])
    return [q for _, q in out[:keep]]


def inscribed_outlines(w: int, h: int, aspect: float, turns: int = CARD_PHOTO_TURNS,
                       shrink: tuple[float, ...] = CARD_PHOTO_SHRINK) -> list[np.ndarray]:
    """Outlines (4x2, clockwise) of a card of outline ratio *aspect* (long / short
    side) turned by each of *turns* angles over half a turn, as large as fits a photo
    *w* x *h* px and centred in it, each also shrunk by *shrink*: where a card cropped
    tightly lies, at whatever turn."""
    out = []
    corners = np.float32([(-1, -aspect), (1, -aspect), (1, aspect), (-1, aspect)]) / 2
    centre = np.float32([w, h]) / 2
    for t in np.arange(turns) * (np.pi / turns):
        c, s = np.cos(t), np.sin(t)
        turned = corners @ np.float32([[c, s], [-s, c]])
        span = turned.max(axis=0) - turned.min(axis=0)
        fit = float(min(w / span[0], h / span[1]))
        for k in shrink:
            out.append(clockwise(turned * np.float32(fit * k) + centre))
    return out


def card_outline(image: np.ndarray, aspect: float = CARD_MM[1] / CARD_MM[0]
                 ) -> np.ndarray | None:
    """The best supported outline of :func:`card_outlines`, or None."""
    found = card_outlines(image, aspect, 1)
    return found[0] if found else None


__all__ = ["Recogniser", "SideReading", "TwilightPose", "card_outline", "CARD_MM"]
