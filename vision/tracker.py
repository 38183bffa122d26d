"""Table tracking over time: from frames to plays (issue 5, CONTRACT C7).

Per frame the tracker does only cheap work: a small grey thumbnail (nearest-
neighbour shrink, ~0.15 ms at 1280x720), its difference to the previous thumbnail,
and per side zone the share of changed pixels. A side is read by the
recogniser only when something changed there and the zone has been quiet for
:data:`SETTLE_FRAMES` frames — so the hand that laid the card has left, and an
arm over the table suspends judgement wherever it moves. Motion only in the zone's
outer part, beyond where a card laid at the side reaches (:data:`CARD_BAND_MM`), is
the arm coming or going: the side is not read while it moves, but it does not
restart the wait.

A read that shows the card already on top (nudged, straightened, briefly
covered) is no event; an empty side (a trick swept away) is no event; a card
already played this hand (a trick squared up or pushed around) is no event. A
new card is confirmed by :data:`CONFIRM_READS` reads naming it since the side last
moved (reads naming nothing surely in between do not break the agreement; the frame
of the look before the side settled is read too when the first read does not decide,
:data:`EARLY_QUIET`) and joins its side's queue of held cards; plays are given out
in turn order, in the order they were laid. A card at a seat that is not on turn
waits while the seat on turn may still be laying its card. Then:

* if nothing was seen laid at the seat on turn since its last play (no hand reached
  there, or its side looks as it did), that side is looked at again while the card
  waits, as below (a dark hand laying a dark card in dim light may change it too
  little to be seen); a new card confirmed there is the play in turn, else the
  waiting card goes to the rules, which refuse it (R9) — a warning, never a play;
* if a hand reached there but the tracker confirmed no card (read while partly
  covered or shadowed, a card the recogniser cannot name, a blank face it takes
  for no card), the tracker looks again at that side every :data:`FORCE_EVERY`
  frames even without motion (at most :data:`FORCE_READS` times); a card laid by
  hand through ``gamelog.play`` meanwhile is taken as the missed one. Then the
  seat on turn gets a **gap** (issue 21): a card laid in turn that nobody named
  yet. The game keeps its place (the rules core's ``Hand.play_gap``) and the held
  cards are given out in order after it. A card read at last at a gap's seat with
  no new motion there since fills the gap (``fill``); else the table names it on
  the score page. The hand's last card, with no card waiting after it, becomes a
  gap once its side has been still :data:`IDLE_LOOKS` and looked at again.

The first card of a hand tells who leads (C7): while a card laid before the first
confirmed one cannot be read (``unknown``, or read as no card where the side plainly
changed), the confirmed cards wait for it; once its side gave up reading it and they
waited :data:`OUT_OF_TURN_WAIT`, it is a gap that leads. After a trick with a gap in
it nobody knows who leads: the earliest card laid next leads (the rules core settles
the trick by it). Between hands the last trick's cards
count as lying, not laid; one seen taken away from a side and laid there again is
the next hand's lead (the deck is dealt anew, so the same card may well lead).

The tracker looks at the table :data:`LOOK_FPS` times a second: its waits below are
counted in looks and its motion levels are set for what moves between two looks. A
faster camera is thinned to that pace by :class:`Pace` (a 30 fps camera: every third
frame); looking at every frame of one would take a hand still over a card, moving a
little per frame, for a settled side.

The rules act as a prior (R3): when the recogniser's best guess is not legal
at that seat but a legal card scores within :data:`PRIOR_MARGIN` of it, the
legal card is taken. The recogniser is told which cards may lie at a side (those not
played yet this hand, and those lying at the sides): faces its duels leave undecided
are named among those, as a face a numeral apart that was played is no rival. A card
named with little confidence counts only where the rules expect such a card at the
seat on turn, something was just laid there, and
:data:`PRIOR_CONFIRM_READS` reads in a row agree. A card is never invented: an
unreadable side stays ``unknown`` and after :data:`UNKNOWN_WARN_READS` reads the
table is asked to check it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from companion.core.cards import CARD_IDS, SEATS, Card, Seat, UnknownName
from companion.core.rules import Hand
from vision.locate import TWILIGHT_LONG_RANGE, ZONE_DEPTH_MM, ZONE_HALF_WIDTH_MM, zone_outline
from vision.profile import CARD_MM
from vision.read import CARD_SIZE_RANGE

#: Looks at the table per second (see the module doc); the "frames" of the constants
#: below are looks (at 10 looks a second, SETTLE_FRAMES is 0.3 s).
LOOK_FPS = 10.0
#: A live camera's frame is looked at when at least this share of a look's time has
#: passed since the last one (a frame's timestamp jitters).
LOOK_DUE_SHARE = 0.8
#: Width of the grey thumbnail that change detection runs on.
THUMB_TARGET_WIDTH = 320
#: Grey-level change (after a light blur) that counts as motion at a thumbnail pixel.
MOTION_LEVEL = 22
#: Share of a zone's thumbnail pixels (and of its card band's, CARD_BAND_MM) that must
#: change for the zone to count as busy.
BUSY_FRACTION = 0.006
#: How far out from the Twilight card's edge (mm) motion in a zone counts as busy: a card
#: laid at the side lies within LAY_GAP_MM of that edge (the simulator's gaps: 2-14 mm)
#: and, turned any way, reaches at most its diagonal (108 mm) beyond that. The zone
#: reaches further, and the arm that laid a card leaves through that outer part a look
#: or two after its hand has left the card (bench hand 200001's north: 0.64% of the
#: zone moving, all of it 140 mm out, three looks after the card was clear). Motion
#: there only keeps the side dirty, but counts as a quiet look: it does not start the
#: wait to settle anew. A hand resting on the card it laid still makes the side wait:
#: lifting it off moves the card's band. A side is read only at a look with no motion
#: anywhere in its zone.
LAY_GAP_MM = 15.0
CARD_BAND_MM = float(np.hypot(*CARD_MM)) + LAY_GAP_MM
#: Mean grey-level difference to the zone's look at its last read that makes it worth
#: a new read even without frame-to-frame motion (slow changes, light drift).
REFERENCE_LEVEL = 10.0
#: A settled zone whose look (its outline in the full-resolution frame, grey) differs
#: from its look at the last settled read in fewer than this share of its pixels (by more than MOTION_LEVEL) is as it was: an arm passed over,
#: nothing was laid or taken, and it is not read again. At full resolution a card laid
#: square on a like card (a priest on a hierarch) changes its numerals and head; the
#: thumbnail, blurred, can miss that.
UNCHANGED_SHARE = 0.005
#: A side found empty that now differs from an empty look of it in less than this share
#: of its pixels still holds no card the recogniser could name: a quarter of the
#: smallest card it looks for (``read.CARD_SIZE_RANGE`` of a nominal card) against the
#: zone's area. A card laid changes most of its outline's pixels (tuning hand 1800000:
#: 17-25% of a zone; a card is 19% of it); a neighbour's card or hand reaching into the
#: zone's corner changes a little (there: 0.7-1.4%), and the cloth beyond reads as
#: "unknown" again and again (a gingham's squares are card-like outlines). It is not
#: read: it is empty. The change is counted at LAID_LEVEL, not MOTION_LEVEL: a card laid
#: in dim light, or of the cloth's own brightness, changes its pixels by less than a
#: hand does (tuning hands 1800020-1800021, dim felt and wood: a zone's mean change
#: 3.4-6.5 grey levels where a card had just been laid, 0.8-1.8% of it by more than
#: MOTION_LEVEL, and 11 such cards taken for an empty side). At LAID_LEVEL those cards
#: changed 4.7-21% of their zones; what reached in from a neighbour changed 0.8-7%
#: (87 cases over the 22 tuning hands 1800000-1800021), and a side changed that much
#: is read, which costs a read and finds no card.
EMPTY_CHANGE_SHARE = (0.25 * CARD_SIZE_RANGE[0] ** 2 * CARD_MM[0] * CARD_MM[1]
                      / (2 * ZONE_HALF_WIDTH_MM * ZONE_DEPTH_MM))
#: Grey-level change that counts when asking whether a card was laid (see above).
LAID_LEVEL = MOTION_LEVEL / 2
#: A card read at a neighbour's side is left out of this side's look grown by this
#: much about its centre: its edge blurred and its shadow change the side too.
NEIGHBOUR_GROW = 1.15
#: Looks of a side found empty that are kept (the least recently seen is dropped): a
#: neighbour's card may reach into a zone, so an empty side has more than one look.
EMPTY_LOOKS = 3
#: Quiet frames a zone needs after motion before it is read (at 10 fps: 0.3 s). A hand
#: resting on the card it laid is still for up to two looks (a 30 fps camera's frames).
SETTLE_FRAMES = 3
#: The frame of the look before a zone settles (this many quiet frames) is kept: when
#: the first read after SETTLE_FRAMES does not decide, the kept frame is read too, as
#: the read one look earlier (nothing moved in between), instead of waiting a look for
#: a second read. Its reading is never decided on alone, not even when sure (a hand at
#: rest over the card for two looks is not yet gone); it only adds its vote, and only
#: for a card: an empty side is no event to hurry, and two frames a look apart may
#: show a card's faint outline alike (seed 50's purgatory read "no card" on both, and
#: was missed until the side next moved).
EARLY_QUIET = SETTLE_FRAMES - 1
#: Reads since the side last moved that name the same thing (a card, or no card) and
#: confirm it; one read at SURE_CONFIDENCE or more is enough. A card named voids the
#: votes for any other reading; a read of no card that is not sure (a faint outline: the
#: table's grain, a card's edge in sensor noise) leaves a card's votes standing, and
#: so does an unknown read: the same still side is read differently from frame to frame,
#: and a read in between that names nothing does not contradict the card.
CONFIRM_READS = 2
#: ... and this many more, in a row, once the side's reads since it moved disagreed
#: on the card (one named another, even too weakly to vote, or doubted between it
#: and another): a card that reads as a priest on one frame and a novice on the next
#: is named by neither until one wins clearly (bench hand 201010: a glared sun-priest
#: read novice, unknown and priest by turns, and two novice reads in a row made a
#: wrong play). Then no single read is sure (SURE_CONFIDENCE, RULES_SURE_CONFIDENCE):
#: tuning deck 107, hand 1800007, a novice read novice and adept by turns was named
#: adept on one read at 0.87, and the true adept later, refused as played, was taken
#: for a priest.
DOUBT_EXTRA_READS = 1
SURE_CONFIDENCE = 0.85
#: One read is enough, too, at RULES_SURE_CONFIDENCE, naming the card the rules expect
#: there (R3: the seat on turn, its cult, not yet played) with every quarter of the card
#: like its face (at least RULES_SURE_QUARTERS: a hand over part of a card fails). A card
#: read on top of an older one may be read as the one beneath on the next frames (bench
#: hand 200000: 0.74, then the card beneath on two frames out of three). On simulator
#: scenes the one card misread above 0.5 was half covered (0.74, quarters 0.58), while
#: 52 of 57 right reads from 0.7 to 0.85 had quarters of 0.8 or more. Neither is sure
#: once the side's reads since it moved disagreed (DOUBT_EXTRA_READS).
RULES_SURE_CONFIDENCE = 0.7
RULES_SURE_QUARTERS = 0.8
#: Frames a confirmed card at a seat not on turn waits for the seat on turn (10 fps: 2 s).
OUT_OF_TURN_WAIT = 20
#: While later cards wait for a seat on turn whose card was not confirmed: frames
#: between fresh reads of its side without motion, and how many such reads at most
#: (3.6 s in all; such a side is mostly one that stays unreadable, see _read_side).
FORCE_EVERY = 6
FORCE_READS = 6
#: A held card at the seat on turn laid this many frames after a card held at another
#: seat belongs to a later trick: the earlier card's turn comes first.
LAID_SLACK = 5
#: Held cards per side at most (a hand's worth).
HELD_MAX = 7
#: Score margin within which the rules may pick a legal card over an illegal best guess.
PRIOR_MARGIN = 0.08
#: Reads of "unknown" in a row after which the table is warned once (about 4 s).
UNKNOWN_WARN_READS = 6
#: Frames to wait before reading a side again that read "unknown" (10 fps: 0.4 s), more
#: by as much after each further such read (0.4, 0.8, 1.2 s...): a side that stays
#: unreadable on frame after frame is not read at every chance (on the tuning hands, 100
#: of 131 such reads read "unknown" again, a third of all reads) ...
UNKNOWN_RETRY_FRAMES = 4
#: ...after this many such reads in a row, which are each retried on the next frame: a
#: card read poorly once (sensor noise on a dark card, an older card beneath ranked
#: first) is usually read well on the next frame, and each frame waited is latency.
UNKNOWN_QUICK_READS = 2
#: A named card read with less confidence than this counts as unknown: the tracker
#: waits for a better look rather than guess (a wood grain rectangle is not a card).
MIN_CONFIDENCE = 0.5
#: ...unless the rules agree (R3: the seat on turn, its cult, not yet played), something
#: was just laid there, and this many reads in a row name the same card.
PRIOR_CONFIRM_READS = 3
#: Mean grey-level change inside a weakly read card's outline, against the side's look
#: at its last settled read, below which the "card" was there before (wood grain, a
#: shadow): not something just laid.
NEW_CARD_LEVEL = 14.0
#: Share of a side's fine look that must differ (by MOTION_LEVEL) from its look at its
#: last play for a read of no card, not sure, to count as a card laid that cannot be
#: read (a blank face: its border and what it covers change the side).
LAID_SHARE = 0.03
#: Looks a side where a hand reached since its last play must stay still, with no card
#: confirmed there and none waiting elsewhere, before it is looked at again as a card
#: laid that cannot be read (the hand's last card, blank): 3 s.
IDLE_LOOKS = 30
#: Looks between attempts to find a Twilight card not found yet (locate is the costliest
#: step of a look: 0.05-0.2 s on the whole frame, more when no outline leads to the card).
LOCATE_EVERY = 5
#: ... and it is looked for again only once the table looks otherwise than at the last
#: attempt (the same picture gives the same answer): in at least this share of the
#: smallest Twilight card locate looks for (``TWILIGHT_LONG_RANGE``, at the most oblong
#: shape, 1:1.8), and once the table has been quiet for SETTLE_FRAMES looks (no arm over
#: a card laid or uncovered) or LOCATE_WAIT_MAX looks passed since the last attempt (a
#: table never still).
LOST_CHANGED_SHARE = 0.25
LOCATE_WAIT_MAX = 50
#: Share of the Twilight card's thumbnail pixels that must change to re-locate it.
CENTRE_BUSY_FRACTION = 0.02
#: Corner movement (px, frame) above which the Twilight card counts as moved...
MOVED_PX = 6.0
#: The Twilight card is located again (after motion over it) only when this share of
#: its outline's pixels (at the pose it was last given) differ by MOTION_LEVEL from
#: their look then. Two locates of a card lying still give corners up to 9 px apart
#: (the recogniser's outline at 960x540: seed 5009) while its look differs in 0-0.6%
#: of them (a neighbour's card over its edge); a knock of 2-3 mm and 2 degrees changes
#: its print's edges over 44-57% of them (seed 45, bump 0.4). Taking the jitter for a
#: move would start every side's looks afresh (its empty looks too, which tell a trick
#: swept away from a card laid), and a locate is the costliest step of a look (~0.1 s).
TWILIGHT_MOVED_SHARE = 0.1
#: A new pose whose Twilight face matches (the pose's score) this much worse than the
#: current one's is a partly covered card's, not taken. Locates of a card lying still
#: score within 0.04 of each other (0.85-0.89, seed 32 style 1), a hand over its lower
#: half 0.50, over its edge 0.70.
POSE_SCORE_MARGIN = 0.1


@dataclass(frozen=True)
class Expectation:
    """What the rules expect next (R3): the seat on turn (None: any seat may lead),
    the cards already played this hand, and the rules core's hand (``hand``), which
    alone decides what may be laid where (:meth:`legal`). Built from a game-log
    snapshot by :meth:`from_snapshot`; made directly (tests), ``hand`` is a fresh
    hand led by ``next_seat``."""

    next_seat: str | None
    played: frozenset[str] = frozenset()
    moon_seats: tuple[str, str] = ("north", "south")
    fixed_leader: bool = False
    #: the hand is over: ``played`` are the cards still lying near the Twilight card
    #: (being cleared away); the next hand may lead any card, one of those too
    clearing: bool = False
    #: open gaps of the hand: (seat, index from 1) of plays laid but not named yet
    gaps: tuple[tuple[str, int], ...] = ()
    #: cards that could fill each open gap (index -> card ids), from the rules core
    gap_choices: Mapping[int, frozenset[str]] = field(default_factory=dict, compare=False)
    hand: Hand | None = field(default=None, compare=False)
    #: plays laid this hand, gaps included
    laid: int = 0

    def __post_init__(self) -> None:
        if self.hand is None:
            moon = tuple(Seat.parse(s) for s in self.moon_seats)
            leader = Seat.parse(self.next_seat) if self.next_seat else None
            object.__setattr__(self, "hand", Hand(moon, leader))

    @classmethod
    def from_snapshot(cls, snap: Mapping[str, Any]) -> Expectation:
        hand = snap["hand"]
        cached = _EXPECT_CACHE.get("last")
        if cached is not None and cached[0] is hand:
            return cached[1]
        expect = cls._from_hand_view(hand)
        _EXPECT_CACHE["last"] = (hand, expect)
        return expect

    @classmethod
    def _from_hand_view(cls, hand: Mapping[str, Any]) -> Expectation:
        if hand["complete"]:
            # Until the next hand's first card, the cards still near the Twilight card
            # (the last trick, tricks left lying) are being cleared away, not laid.
            nxt = hand.get("next_hand") or {}
            near = {p["card"] for p in hand["tricks"][-1]["plays"] if p["card"]}
            near |= set(hand["neutral"])
            moon = tuple(nxt.get("moon_seats") or hand["moon_seats"])
            return cls(None, frozenset(near), moon, clearing=True,  # type: ignore[arg-type]
                       hand=Hand(tuple(Seat.parse(s) for s in moon)))
        played = frozenset(p["card"] for p in hand["plays"] if p["card"])
        moon = tuple(hand["moon_seats"])
        seats = tuple(Seat.parse(s) for s in moon)
        fixed = bool(hand.get("leader_fixed"))
        if not hand["plays"] and not fixed:
            # the first card tells who leads (C7)
            return cls(None, played, moon, hand=Hand(seats))  # type: ignore[arg-type]
        leader = (hand["tricks"][0]["leader"] if hand["tricks"]
                  else hand["next"]["seat"] if hand["next"] else None)
        rules = Hand(seats, Seat.parse(leader) if leader else None)
        for p in hand["plays"]:
            if p["card"] is None:
                rules.play_gap(Seat.parse(p["seat"]))
            else:
                rules.play(Seat.parse(p["seat"]), Card.parse(p["card"]))
        gaps = tuple((g["seat"], g["index"]) for g in hand.get("gaps") or ())
        choices = {g["index"]: frozenset(g["choices"]) for g in hand.get("gaps") or ()}
        seat = hand["next"]["seat"] if hand["next"] else None
        return cls(seat, played, moon, fixed, gaps=gaps,  # type: ignore[arg-type]
                   gap_choices=choices, hand=rules, laid=len(hand["plays"]))

    def cult(self, seat: str) -> str:
        assert self.hand is not None
        return self.hand.cult_of(Seat.parse(seat)).value

    def legal(self, seat: str, card: str) -> bool:
        """Whether the rules core accepts *card* at *seat* now (R3, R9)."""
        assert self.hand is not None
        try:
            where, what = Seat.parse(seat), Card.parse(card)
        except UnknownName:
            return False
        return self.hand.allows(where, what)

    def only_card(self, seat: str) -> str | None:
        """The one card the rules leave *seat* now, if they leave it one (R3, R9: the
        last card of its cult not played, at the end of a hand with no gap of that
        cult open); else None."""
        assert self.hand is not None
        try:
            cards = self.hand.possible_cards(Seat.parse(seat))
        except UnknownName:
            return None
        return cards[0].id if len(cards) == 1 else None

    def fills(self, seat: str, card: str) -> int | None:
        """The open gap at *seat* that *card* can fill (its index), if any."""
        for gap_seat, index in self.gaps:
            if gap_seat == seat and card in self.gap_choices.get(index, ()):
                return index
        return None


#: The last snapshot's expectation (the tracker asks many times per snapshot).
_EXPECT_CACHE: dict[str, tuple[Any, Expectation]] = {}


def _doubts(reading: Any, votes: Mapping[str | None, int]) -> bool:
    """Whether an 'unknown' *reading* doubts a card the side has *votes* for: every
    test of a face but the margin passed, between that card and another. A read that
    names the card itself, too weakly to vote, does not doubt it (tuning hand 1800037:
    east's lead read as its own card at 0.44-0.48 between reads at 0.62-0.82 lost its
    votes on every weak read, and was confirmed only 104 looks after it was laid)."""
    ident = getattr(reading, "identity", None)
    if ident is None or not getattr(ident, "plausible", False) or reading.card_id in votes:
        return False
    pair = {ident.best, ident.rival}
    return any(card in pair for card in votes if card is not None)


def _glimpse(reading: Any) -> str | None:
    """The card a read that casts no vote still names: named with too little
    confidence, or unnamed where every test of its best face but the margin passed."""
    if reading.card_id not in (None, "unknown"):
        return reading.card_id
    ident = getattr(reading, "identity", None)
    return ident.best if ident is not None and getattr(ident, "plausible", False) else None


class Pace:
    """Which frames of a source the tracker looks at (LOOK_FPS a second): of a
    recording at a known rate *fps*, every ``round(fps / LOOK_FPS)``-th; of a live
    camera (*live*), the first frame at least LOOK_DUE_SHARE of a look's time after
    the last one looked at; of a recording at an unknown rate, every frame."""

    def __init__(self, fps: float | None = None, *, live: bool = False) -> None:
        self.live = live
        self.step = max(1, round(fps / LOOK_FPS)) if fps and not live else 1
        self.count = 0
        self.last: float | None = None

    def due(self, timestamp: float) -> bool:
        """Whether to look at the next frame (taken at *timestamp*, seconds)."""
        if self.live:
            if self.last is not None and timestamp - self.last < LOOK_DUE_SHARE / LOOK_FPS:
                return False
            self.last = timestamp
            return True
        self.count += 1
        return (self.count - 1) % self.step == 0


@dataclass(frozen=True)
class Observation:
    """What the tracker tells the game: ``play`` (seat, card), ``gap`` (seat: a card
    laid there in turn that cannot be read), ``fill`` (seat, card, index: the card of
    an open gap, read at last), ``setup`` (the Twilight card's moon seats, once found
    or turned) or ``warning`` (message)."""

    kind: str
    frame: int
    seat: str | None = None
    card: str | None = None
    message: str | None = None
    moon_seats: tuple[str, str] | None = None
    #: ``fill``: the index (from 1) of the gap the card fills
    index: int | None = None


class _Region:
    """A polygon of the thumbnail: its bounding box and a 0/255 mask inside it, so
    per-frame measures are a crop and one masked OpenCV call."""

    def __init__(self, polygon: np.ndarray, shape: tuple[int, int]) -> None:
        pts = np.round(polygon).astype(np.int32)
        h, w = shape
        x0, y0 = (max(0, int(v)) for v in pts.min(axis=0))
        x1, y1 = min(w, int(pts[:, 0].max()) + 1), min(h, int(pts[:, 1].max()) + 1)
        x1, y1 = max(x1, x0 + 1), max(y1, y0 + 1)
        self.box = (slice(y0, y1), slice(x0, x1))
        self.mask = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(self.mask, pts - np.int32([x0, y0]), 255)
        self.empty = not self.mask.any()

    def crop(self, img: np.ndarray) -> np.ndarray:
        return img[self.box]

    def share(self, moving: np.ndarray) -> float:
        """Share (0..1) of the region's pixels set in a 0/255 motion image."""
        if self.empty:
            return 0.0
        return float(cv2.mean(moving[self.box], mask=self.mask)[0]) / 255.0

    def look(self, frame: np.ndarray) -> np.ndarray:
        """The region's box of a full-resolution *frame* (a region in frame px), grey
        and lightly blurred against sensor noise."""
        return cv2.blur(cv2.cvtColor(frame[self.box], cv2.COLOR_BGR2GRAY), (3, 3))

    def changed(self, look: np.ndarray, reference: np.ndarray,
                level: float = MOTION_LEVEL, leave_out: np.ndarray | None = None) -> float:
        """Share (0..1) of the region's pixels where *look* differs from one taken
        earlier by more than *level* grey levels, leaving out the pixels set in
        *leave_out* (0/255, over the region's box)."""
        if self.empty or look.shape != reference.shape:
            return 1.0
        moved, mask = self.moved(look, reference, level, leave_out)
        if not mask.any():
            return 0.0
        return float(cv2.mean(moved, mask=mask)[0]) / 255.0

    def moved(self, look: np.ndarray, reference: np.ndarray, level: float = MOTION_LEVEL,
              leave_out: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
        """The pixels (0/255 over the region's box) where *look* differs from a look of
        the same box taken earlier by more than *level* grey levels, within the region
        less *leave_out* (0/255); and that mask."""
        mask = self.mask if leave_out is None else cv2.subtract(self.mask, leave_out)
        _, moved = cv2.threshold(cv2.absdiff(look, reference), level, 255,
                                 cv2.THRESH_BINARY)
        return cv2.bitwise_and(moved, mask), mask

    def difference(self, img: np.ndarray, reference: np.ndarray) -> float:
        """Mean grey-level difference to a crop taken earlier."""
        if self.empty:
            return 0.0
        return float(cv2.mean(cv2.absdiff(img[self.box], reference), mask=self.mask)[0])


@dataclass
class _Zone:
    seat: str
    region: _Region | None = None  # in thumbnail px
    band: _Region | None = None  # its part within CARD_BAND_MM of the Twilight card
    still: bool = False  # nothing moved anywhere in the zone at this look
    fine: _Region | None = None  # the same in frame px
    top: str | None = None  # the card believed uppermost here
    dirty: bool = True
    quiet: int = 0
    reference: np.ndarray | None = None  # thumbnail pixels at the last read
    settled_look: np.ndarray | None = None  # the fine region's look at the last settled read
    look: tuple[int, np.ndarray] | None = None  # (look number, its look then): taken once
    empty_looks: list[np.ndarray] = field(default_factory=list)  # ...at reads that found
    # no card (most recently seen first)
    votes: dict[str | None, int] = field(default_factory=dict)  # reads since the side
    # last moved, per reading (None: no card), while it is not decided (CONFIRM_READS)
    doubted: bool = False  # reads since the side last moved disagreed on the card
    glimpsed: set[str] = field(default_factory=set)  # cards reads since the side last
    # moved named without a vote (too weakly, or not seen whole): a rival to a card voted
    early: np.ndarray | None = None  # the frame when it had been quiet EARLY_QUIET looks
    held: list[tuple[str, int]] = field(default_factory=list)  # confirmed, not given out:
    # (card, frame its lay ended), in the order laid
    last_busy: int = -1  # last frame with motion here
    stirred: bool = False  # motion here since the last play given out at this seat
    reached: bool = False  # ...motion where a card laid here lies (a hand came that close)
    before: np.ndarray | None = None  # the side's look before the motion that began last
    base: np.ndarray | None = None  # the side's look at its last play (or first read)
    base_look: np.ndarray | None = None  # ...its fine look then
    forced: int = 0  # fresh reads without motion while later cards wait for this seat
    next_force: int = 0
    refused: str | None = None  # a card the rules refused, until the side changes
    unknown_reads: int = 0
    unreadable: int | None = None  # frame a card that reads "unknown" was laid here
    weak: tuple[str, int] | None = None  # a low-confidence card and how often it was read
    gone: set[str] = field(default_factory=set)  # cards seen leaving this side since the
    # last play given out (one of them laid here again is a new card)
    moved: bool = False  # something moved here since the last settled read
    next_read: int = 0
    warned: bool = False
    scores: dict[str, float] = field(default_factory=dict)
    gap_busy: int | None = None  # last_busy when a gap was given out here (None: no gap)
    gap_held: set[str] = field(default_factory=set)  # cards held here then: plays, not fills
    idle_read: tuple[Any, np.ndarray] | None = None  # the last read, if it found no card
    # (or the card on top), and the side's fine look then


class TableTracker:
    """Feed it frames in order; it calls ``emit`` with each :class:`Observation`.

    ``recogniser`` reads the table (default: :class:`vision.recognise.Recogniser`
    for ``profile``). ``expect()`` must return the rules' current
    :class:`Expectation`; it is asked again after every emitted play.
    """

    def __init__(self, profile: Any = None, *, mirror: bool = False,
                 recogniser: Any = None) -> None:
        if recogniser is None:
            from vision.profile import load_deck
            from vision.recognise import Recogniser

            if profile is None or isinstance(profile, str):
                profile = load_deck(profile)
            recogniser = Recogniser(profile, mirror=mirror)
        self.rec = recogniser
        self.readings: dict[str, Any] = {}
        self.pose: Any = None
        self.stride = 0
        self.prev: np.ndarray | None = None
        self.zones: dict[str, _Zone] = {s.value: _Zone(s.value) for s in SEATS}
        self.centre: _Region | None = None
        self.twilight: _Region | None = None  # the Twilight card's outline in frame px
        self.twilight_look: np.ndarray | None = None  # ...its look when the pose was set
        self.twilight_seen: list[np.ndarray] = []  # ...and when it was located again since
        self.centre_dirty = False
        self.centre_quiet = 0
        self.frame_no = 0  # the frame looked at (what events are labelled with)
        self.looks = 0  # frames looked at so far: the tracker's clock
        self.last_locate = -LOCATE_EVERY
        self.searched: np.ndarray | None = None  # the thumbnail at the last search for it
        self.table_quiet = 0  # looks without motion on the table (while it is not found)
        self.reported_moon: tuple[str, str] | None = None
        self.reads = 0
        self.frame: np.ndarray | None = None  # the frame being looked at

    # -- thumbnails and zones -----------------------------------------------------------------
    def _thumb(self, frame: np.ndarray) -> np.ndarray:
        if not self.stride:
            self.stride = max(1, frame.shape[1] // THUMB_TARGET_WIDTH)
        s = self.stride
        h, w = frame.shape[:2]
        small = cv2.resize(frame, (w // s, h // s), interpolation=cv2.INTER_NEAREST)
        grey = cv2.cvtColor(small, cv2.COLOR_BGR2GRAY)
        return cv2.blur(grey, (3, 3))

    def _set_pose(self, pose: Any, shape: tuple[int, int], frame_shape: tuple[int, int]
                  ) -> None:
        self.pose = pose
        s = float(self.stride)
        for seat, zone in self.zones.items():
            side = pose.seat_side(Seat.parse(seat))
            outline = zone_outline(pose, side)
            zone.region = _Region(outline / s, shape)
            zone.band = _Region(zone_outline(pose, side, CARD_BAND_MM) / s, shape)
            zone.fine = _Region(outline, frame_shape)
            zone.dirty = True
            # crops of the old zones
            zone.reference = zone.before = zone.base = zone.settled_look = zone.look = None
            zone.base_look = zone.idle_read = None
            zone.empty_looks = []
        self.centre = _Region(np.asarray(pose.quad) / s, shape)
        self.twilight = _Region(np.asarray(pose.quad, np.float64), frame_shape)
        self.twilight_look = (None if self.frame is None
                              else self.twilight.look(self.frame))
        self.twilight_seen = []

    # -- the per-frame step -------------------------------------------------------------------
    def feed(self, frame_no: int, frame: np.ndarray, expect: Callable[[], Expectation],
             emit: Callable[[Observation], None]) -> None:
        """Look at one frame; emit what it shows."""
        self.frame_no = frame_no
        self.frame = frame
        self.looks += 1
        thumb = self._thumb(frame)
        prev, self.prev = self.prev, thumb
        if self.pose is None:
            if self._search_due(thumb, prev):
                self.last_locate = self.looks
                self.searched = thumb
                pose = self.rec.locate(frame)
                if pose is not None:
                    self._set_pose(pose, thumb.shape, frame.shape[:2])
                    self._report_moon(pose, emit)
            return
        moving = None
        if prev is not None:
            _, moving = cv2.threshold(cv2.absdiff(thumb, prev), MOTION_LEVEL, 255,
                                      cv2.THRESH_BINARY)
        if moving is not None and self._centre_moved(moving):
            self._relocate(frame, thumb, emit)
        for zone in self.zones.values():
            self._watch_zone(zone, thumb, moving)
        kept = None
        for zone in self.zones.values():
            if zone.dirty and zone.quiet == EARLY_QUIET:
                if kept is None:
                    kept = frame.copy()  # a camera may reuse its frame buffer
                zone.early = kept
            if (zone.dirty and zone.quiet >= SETTLE_FRAMES and zone.still
                    and self.looks >= zone.next_read):
                early, zone.early = zone.early, None
                look = self._known_look(zone, frame)
                if look is not None:
                    self._settle_known(zone, look, frame, thumb, expect())
                    continue
                self._read(zone, frame, thumb, expect(), emit)
                if early is not None and zone.dirty and self._worth_early(zone, frame):
                    self._read(zone, frame, thumb, expect(), emit, early=early)
        if any(zone.held for zone in self.zones.values()) or self._turn_unseen(expect()):
            self._look_again(frame, thumb, expect, emit)
            self._give_out(expect, emit)

    def _worth_early(self, zone: _Zone, frame: np.ndarray) -> bool:
        """Whether to read the side's kept frame of a look before (EARLY_QUIET) after a
        first read that did not decide: it only adds a vote for a card, so after a read
        of no card only where the side looks laid (:meth:`_looks_laid`)."""
        first = self.readings.get(zone.seat)
        return (first is None or first.card_id is not None
                or self._looks_laid(zone, frame))

    def _search_due(self, thumb: np.ndarray, prev: np.ndarray | None) -> bool:
        """Whether to look for the Twilight card, not found yet, in this look: at the
        first look, then when the table looks otherwise than at the last attempt (see
        LOST_CHANGED_SHARE) and has settled (or waited LOCATE_WAIT_MAX)."""
        if prev is None or self.searched is None:
            return True
        moving = cv2.absdiff(thumb, prev) > MOTION_LEVEL
        self.table_quiet = 0 if moving.mean() > BUSY_FRACTION else self.table_quiet + 1
        waited = self.looks - self.last_locate
        if waited < LOCATE_EVERY or (self.table_quiet < SETTLE_FRAMES
                                     and waited < LOCATE_WAIT_MAX):
            return False
        smallest = (TWILIGHT_LONG_RANGE[0] * thumb.shape[0]) ** 2 / 1.8  # px
        changed = cv2.countNonZero(
            (cv2.absdiff(thumb, self.searched) > MOTION_LEVEL).view(np.uint8))
        return changed >= LOST_CHANGED_SHARE * smallest

    def _turn_unseen(self, rules: Expectation) -> bool:
        """Whether something was laid at the seat on turn that is not confirmed yet (it
        is looked at again, and becomes a gap if it cannot be read, though no later
        card waits: the hand's last card, say)."""
        turn = self.zones.get(rules.next_seat or "")
        return turn is not None and not turn.dirty and self._turn_unseen_at(turn)

    def _turn_unseen_at(self, turn: _Zone) -> bool:
        """A card that cannot be read lies at *turn*'s side (read unknown, or as no card
        where the side plainly changed), or a hand reached there since its last play
        and the side has been still for IDLE_LOOKS (a player thinking reaches again)."""
        return turn.unreadable is not None or (
            turn.reached and self.looks - turn.last_busy >= IDLE_LOOKS
            and self._laid_unseen(turn))

    def _centre_moved(self, moving: np.ndarray) -> bool:
        assert self.centre is not None
        share = self.centre.share(moving)
        if share > CENTRE_BUSY_FRACTION:
            self.centre_dirty = True
            self.centre_quiet = 0
            return False
        self.centre_quiet += 1
        return self.centre_dirty and self.centre_quiet >= SETTLE_FRAMES

    def _relocate(self, frame: np.ndarray, thumb: np.ndarray,
                  emit: Callable[[Observation], None]) -> None:
        self.centre_dirty = False
        if not self._twilight_changed(frame):
            # a hand passed over the card and left it as it was: locating it again
            # (the costliest step of a look) could only give the same pose a few px apart
            return
        pose = self.rec.locate(frame)
        if self.twilight is not None:
            # whatever it gives, this picture of the card is settled: it is located again
            # only once it looks otherwise than now too (a card laid over its edge, a hand
            # resting on it, would make every look over it locate it again)
            self.twilight_seen = [self.twilight.look(frame), *self.twilight_seen[:EMPTY_LOOKS - 1]]
        if pose is None:
            return  # covered or gone for now: keep the old zones
        moved = float(np.abs(np.asarray(pose.quad) - np.asarray(self.pose.quad)).max())
        better = float(getattr(pose, "score", 1.0)) - float(getattr(self.pose, "score", 1.0))
        if better <= -POSE_SCORE_MARGIN:
            return  # a hand over part of the card: keep the pose it had
        if pose.moon_seats != self.pose.moon_seats or moved > MOVED_PX:
            tops = {s: z.top for s, z in self.zones.items()}
            self._set_pose(pose, thumb.shape, frame.shape[:2])
            for seat, zone in self.zones.items():
                zone.top = tops[seat]  # the cards did not change, only where we look
            self._report_moon(pose, emit)

    def _twilight_changed(self, frame: np.ndarray) -> bool:
        """Whether the Twilight card's outline looks otherwise than when its pose was set
        (see TWILIGHT_MOVED_SHARE): it was moved, not just located a few px apart; nor
        as when it was last located again (EMPTY_LOOKS of those are kept)."""
        if self.twilight is None or self.twilight_look is None:
            return True
        look = self.twilight.look(frame)
        return all(self.twilight.changed(look, seen) >= TWILIGHT_MOVED_SHARE
                   for seen in (self.twilight_look, *self.twilight_seen))

    def _report_moon(self, pose: Any, emit: Callable[[Observation], None]) -> None:
        moon = tuple(pose.moon_seats)
        if moon != self.reported_moon:
            self.reported_moon = moon  # type: ignore[assignment]
            emit(Observation("setup", self.frame_no, moon_seats=moon))  # type: ignore[arg-type]

    def _watch_zone(self, zone: _Zone, thumb: np.ndarray, moving: np.ndarray | None) -> None:
        region, band = zone.region, zone.band
        assert region is not None and band is not None
        busy = moving is not None and region.share(moving) > BUSY_FRACTION
        zone.still = not busy
        if busy:
            assert moving is not None
            if not zone.moved:
                zone.before = zone.reference  # the side's look before this motion
            zone.dirty = zone.moved = zone.stirred = True
            if band.share(moving) <= BUSY_FRACTION:
                # only beyond where a card laid here reaches: the arm coming or going
                # (see CARD_BAND_MM); what lies here may change, but this look is quiet
                zone.quiet += 1
                return
            zone.quiet = 0
            zone.next_read = 0
            zone.votes, zone.weak = {}, None  # what lies there may change: read anew
            zone.doubted = False
            zone.glimpsed = set()
            zone.early = None
            zone.last_busy = self.looks
            zone.reached = True
            zone.forced = 0
            return
        zone.quiet += 1
        if not zone.dirty and zone.reference is not None:
            if region.difference(thumb, zone.reference) > REFERENCE_LEVEL:
                zone.dirty = True

    def _known_look(self, zone: _Zone, frame: np.ndarray) -> str | None:
        """Whether the side looks as at its last settled read (``"unchanged"``) or as
        when it was last found empty (``"empty"``), to UNCHANGED_SHARE; else None."""
        if zone.fine is None or (zone.settled_look is None and not zone.empty_looks):
            return None
        look = self._look(zone, frame)
        if zone.settled_look is not None and zone.fine.changed(look, zone.settled_look) < UNCHANGED_SHARE:
            return "unchanged"
        changed = [zone.fine.changed(look, empty) for empty in zone.empty_looks]
        for n, share in enumerate(changed):
            if share < UNCHANGED_SHARE:
                zone.empty_looks.insert(0, zone.empty_looks.pop(n))
                return "empty"
        if zone.top is None and changed and min(
                zone.fine.changed(look, empty, LAID_LEVEL)
                for empty in zone.empty_looks) < EMPTY_CHANGE_SHARE:
            return "empty"  # a neighbour's card or hand reaching in: still no card here
        return None

    def _remember(self, zone: _Zone, frame: np.ndarray, thumb: np.ndarray,
                  card: str | None) -> None:
        """The side's look at a settled read of *card*: the thumbnail crop, the fine
        look, and that as the empty look when no card lies there."""
        assert zone.region is not None and zone.fine is not None
        zone.reference = zone.region.crop(thumb).copy()
        zone.settled_look = self._look(zone, frame)
        if card is None:
            self._add_empty_look(zone, zone.settled_look)

    def _look(self, zone: _Zone, frame: np.ndarray) -> np.ndarray:
        """The side's fine look in this frame (taken once per look at the table)."""
        assert zone.fine is not None
        if zone.look is None or zone.look[0] != self.looks:
            zone.look = (self.looks, zone.fine.look(frame))
        return zone.look[1]

    @staticmethod
    def _add_empty_look(zone: _Zone, look: np.ndarray) -> None:
        """*look* is one of the side's empty looks (most recently seen first, at most
        EMPTY_LOOKS, none twice)."""
        assert zone.fine is not None
        if not any(zone.fine.changed(look, empty) < UNCHANGED_SHARE
                   for empty in zone.empty_looks):
            zone.empty_looks = [look, *zone.empty_looks[:EMPTY_LOOKS - 1]]

    def _settle_known(self, zone: _Zone, look: str, frame: np.ndarray, thumb: np.ndarray,
                      expect: Expectation) -> None:
        """A side that looks as it did (:meth:`_known_look`) is not read: unchanged, what
        lies there is still ``zone.top``; empty, as after a read of no card. A pending
        reading (taken while something moved) is dropped."""
        zone.unknown_reads = 0
        zone.unreadable = zone.weak = None
        zone.next_read = 0
        if look == "unchanged":
            zone.dirty = zone.moved = False
            zone.votes, zone.glimpsed = {}, set()
        else:
            zone.warned = False
            self._settled(zone, None, frame, thumb, expect)

    def _read(self, zone: _Zone, frame: np.ndarray, thumb: np.ndarray, expect: Expectation,
              emit: Callable[[Observation], None], forced: bool = False,
              early: np.ndarray | None = None) -> None:
        """Read one side. ``forced``: a fresh look at a side that has not moved, while
        later cards wait for it (its settled state is left alone). ``early``: read the
        side's kept frame of one look before (EARLY_QUIET) instead of *frame*."""
        reading = self._read_side(zone, frame if early is None else early, early is not None,
                                  forced, self._may_lie(expect))
        if early is None:
            self.readings[zone.seat] = reading  # what is drawn: the latest
        card = reading.card_id
        if card not in (None, "unknown") and reading.confidence < MIN_CONFIDENCE:
            card = self._weak(zone, card, expect, reading, thumb, forced)
        card = self._only_possible(zone, card, frame, expect)
        if card == "unknown" or (card is None and early is not None):  # no vote
            glimpse = _glimpse(reading)
            if glimpse is not None:
                zone.glimpsed.add(glimpse)
            if card == "unknown" and _doubts(reading, zone.votes):
                # a whole, well placed face that is this card or another (a priest or a
                # novice): the reads of this card so far do not confirm it
                zone.votes, zone.doubted = {}, True
            if forced or early is not None:
                return  # the side's own reads decide when to read again, or warn
            if zone.unreadable is None and (self._laid(zone, thumb)
                                            or (zone.moved and self._looks_laid(zone, frame))):
                zone.unreadable = zone.last_busy
            if (not zone.moved and not zone.stirred and zone.top is None
                    and zone.settled_look is None and not zone.empty_looks and zone.fine is not None):
                # the side as first seen, before anything moved there, is the table
                # itself (wood grain, a pattern the recogniser cannot name): an empty
                # look, which spares reading it again (and warning about it) when a
                # trick is swept away and it shows again
                self._add_empty_look(zone, self._look(zone, frame))
            zone.unknown_reads += 1
            if zone.weak is None:
                zone.next_read = self.looks + (
                    1 if zone.unknown_reads <= UNKNOWN_QUICK_READS
                    else UNKNOWN_RETRY_FRAMES * (zone.unknown_reads - UNKNOWN_QUICK_READS))
            if zone.unknown_reads >= UNKNOWN_WARN_READS:
                # Give up until the side changes again; tell the table if someone
                # laid something here that cannot be read.
                if zone.moved and not zone.warned:
                    zone.warned = True
                    emit(Observation("warning", self.frame_no, seat=zone.seat,
                                     message=f"cannot read the card at {zone.seat}: "
                                             "please check it lies flat and uncovered"))
                zone.dirty = zone.moved = False
                zone.unknown_reads = 0
                zone.votes = {}
                self._remember(zone, frame, thumb, "unknown")
            return  # stay dirty: try again shortly
        zone.unknown_reads = 0
        zone.warned = False
        if card is not None:
            zone.unreadable = None
        elif (not forced and early is None and zone.unreadable is None and zone.moved
              and expect.laid == 0 and (zone.empty_looks or not expect.clearing)
              and self._looks_laid(zone, frame)):
            # no card named before the hand's first card, where the side now looks
            # unlike both its look before and the empty table: a card that cannot be
            # read (a blank or foreign face, one the recogniser takes for no card or a
            # back) may be the lead. (Later in the hand, a side swept looks changed too: there the
            # turn order tells, see _out_of_turn. Between hands the last trick is swept
            # away: a side not seen empty since its zone was set cannot tell.)
            zone.unreadable = zone.last_busy
        elif reading.confidence >= SURE_CONFIDENCE:
            zone.unreadable = None
        card = self._with_prior(zone.seat, card, reading, expect)
        votes = self._vote(zone, card, reading.confidence, expect)
        # one read is enough only where the side's reads since it moved agreed
        sure = not zone.doubted and (reading.confidence >= SURE_CONFIDENCE
                                     or self._expected(zone, card, reading, expect))
        needed = CONFIRM_READS + (DOUBT_EXTRA_READS if zone.doubted else 0)
        if votes < needed and (early is not None or not sure):
            if not forced:
                zone.next_read = self.looks + 1  # read again at the next look
            return
        self._settled(zone, card, frame, thumb, expect, forced)

    def _may_lie(self, expect: Expectation) -> frozenset[str] | None:
        """The cards that may lie at a side now: every card not played yet this hand
        (those held, confirmed but not given out, among them), and those believed on top
        at any side (read again, or a neighbour's reaching into the zone); None (any)
        while the hand's cards are cleared away."""
        if expect.clearing:
            return None
        on_top = {z.top for z in self.zones.values() if z.top}
        return frozenset(CARD_IDS).difference(expect.played) | on_top

    def _read_side(self, zone: _Zone, frame: np.ndarray, early: bool,
                   forced: bool = False, among: frozenset[str] | None = None) -> Any:
        """The recogniser's reading of the side in *frame* (*early*: a kept frame, not the
        one being looked at; *among*: the cards that may lie there, :meth:`_may_lie`). A
        side that looks as at its last read that found no card, to UNCHANGED_SHARE, is that
        reading again without the recogniser: the same picture shows no card again (a side
        swept and read till confirmed, a seat on turn looked at again while its player
        thinks). So is one naming the card already on top there (read again while later
        cards wait: no event). A read naming another card is always made (its votes confirm
        it, CONFIRM_READS), and so is one that cannot name a card: the same picture read
        again may name it (tuning deck 101, hand 1: north's purgatory read unknown at 0.49
        on a still side, named on a later read; taken as the same answer, it came 58 looks
        late). Nor is a read of no card where the side looks laid (:meth:`_looks_laid`), nor
        a read of the kept frame of the look before (*early*): the reading of a still side
        changes with the sensor's noise from frame to frame, and one reading taken again is
        no second vote (tuning deck 102, hand 1800002: south's card on a pile read as no
        card, unknown and itself at 0.95 on frames four apart; the first reading, taken
        again, confirmed no card and made it a gap. Deck 103, hand 1800003: north's card
        laid on another read as the one beneath, confirmed so by its own cached reading, and
        named 33 looks late). Nor a *forced* read (a look again at the seat on turn, where
        something was laid that was not confirmed: a card laid on a like card changes the
        side too little to look laid; deck 108, hand 1800008: two such cards read once as no
        card became gaps). A forced read of a side that looks as one of its empty looks
        (UNCHANGED_SHARE) reads within the outlines found only (the recogniser's
        *outlines_only*): every search beyond them was made on that picture, up to the
        sensor's noise, by the read that found it empty, while a fresh read of the
        outlines is what may name a card missed there (tuning hand 1800019, deck 108:
        north's moon-souls-4, read as no card and so an empty look, named by a forced
        read). On the 45 tuning hands such reads were 523 of 4235 and 18% of the
        watching's CPU time, 498 of them finding no card again.
        """
        assert zone.fine is not None
        look = zone.fine.look(frame) if early else self._look(zone, frame)
        if (not early and not forced and zone.idle_read is not None
                and zone.fine.changed(look, zone.idle_read[1]) < UNCHANGED_SHARE
                and (zone.idle_read[0].card_id is not None or not self._laid_look(zone, look))):
            return zone.idle_read[0]
        self.reads += 1
        # as found empty: searched beyond its outlines already
        searched = forced and any(zone.fine.changed(look, empty) < UNCHANGED_SHARE
                                  for empty in zone.empty_looks)
        reading = self.rec.read_side(frame, self.pose, zone.seat,
                                     laid=None if searched else self._where_laid(zone, look),
                                     among=among, outlines_only=searched)
        idle = reading.card_id is None or reading.card_id == zone.top
        zone.idle_read = (reading, look) if idle else None
        return reading

    def _where_laid(self, zone: _Zone, look: np.ndarray) -> np.ndarray | None:
        """Where something was laid at the side: the least rectangle (4 x 2 frame px)
        about what changed by LAID_LEVEL (specks of sensor noise left out) since the side
        was last settled, or, where nothing did since (a card read as no card and settled
        so, looked at again while later cards wait), since its last play; None where less
        than LAID_SHARE of the side changed. The recogniser tries it where no outline
        shows a card: a card laid on a pile of its own print, whose sides make little
        edge, changes the side where it covers the table and where its print differs
        from the card beneath (tuning hand 1800016: sun-souls-3 laid on sun-souls-5,
        read as no card). What the cards named at the other sides changed is left out
        (zones overlap at their inner corners)."""
        fine = zone.fine
        if fine is None:
            return None
        others = self._others_cards(zone)
        for before in (zone.settled_look, zone.base_look):
            if before is None or before.shape != look.shape:
                continue
            moved, _ = fine.moved(look, before, LAID_LEVEL, others)
            moved = cv2.morphologyEx(moved, cv2.MORPH_OPEN, np.ones((3, 3), np.uint8))
            if cv2.countNonZero(moved) < LAID_SHARE * cv2.countNonZero(fine.mask):
                continue
            ys, xs = np.nonzero(moved)
            rect = cv2.minAreaRect(np.stack([xs, ys], axis=1).astype(np.float32))
            ys0, xs0 = fine.box
            return cv2.boxPoints(rect).astype(np.float32) + np.float32([xs0.start, ys0.start])
        return None

    @staticmethod
    def _expected(zone: _Zone, card: str | None, reading: Any, expect: Expectation) -> bool:
        """Whether *reading* names, well and whole, the card the rules expect at the side
        now (see RULES_SURE_CONFIDENCE): one read of it is enough."""
        quarters = getattr(reading.identity, "quarters", 0.0)
        return (card is not None and card == reading.card_id and expect.next_seat == zone.seat
                and expect.legal(zone.seat, card) and reading.confidence >= RULES_SURE_CONFIDENCE
                and quarters >= RULES_SURE_QUARTERS)

    @staticmethod
    def _rival(zone: _Zone, card: str | None, expect: Expectation) -> bool:
        """Whether *card*, read at *zone*, could be a card laid there new (R3: of its
        seat's cult, not played yet this hand). Another card read there (the one
        beneath, a neighbour's reaching into the zone) is no rival to the one read
        otherwise: tuning deck 108, hand 1800008, north's new card read at 0.95 between
        reads of an east card played earlier was doubted, and became a gap."""
        if card is None or (not expect.clearing and card in expect.played):
            return False
        try:
            return Card.parse(card).cult.value == expect.cult(zone.seat)
        except (UnknownName, ValueError):
            return False

    def _vote(self, zone: _Zone, card: str | None, confidence: float,
              expect: Expectation) -> int:
        """Count a read of *card* (None: no card) among the side's votes (see
        CONFIRM_READS); how many it has now."""
        if card is not None or confidence >= SURE_CONFIDENCE:
            if (self._rival(zone, card, expect)
                    and any(c != card and self._rival(zone, c, expect)
                            for c in (*zone.votes, *zone.glimpsed))):
                zone.doubted = True  # read as another card since the side moved
            zone.votes = {card: zone.votes.get(card, 0) + 1}  # the other readings disagree
        else:
            zone.votes[None] = zone.votes.get(None, 0) + 1
        return zone.votes[card]

    def _settled(self, zone: _Zone, card: str | None, frame: np.ndarray, thumb: np.ndarray,
                 expect: Expectation, forced: bool = False) -> None:
        """*card* (None: no card) is confirmed at the side: a new card joins the held
        ones; an empty side, the card already on top or one already played is no
        event."""
        zone.votes, zone.doubted = {}, False  # decided: nothing pending
        zone.glimpsed = set()
        if not forced:
            zone.dirty = zone.moved = False
            self._remember(zone, frame, thumb, card)
            if zone.base is None:
                zone.base = zone.reference
                zone.base_look = zone.settled_look
        if zone.top is not None and card != zone.top and (not forced or card is not None):
            zone.gone.add(zone.top)
        # between hands, a card of the last trick that was seen taken away from this
        # side and is laid here again is the next hand's lead (the deck is dealt anew)
        lying = card in expect.played and not (expect.clearing and card in zone.gone)
        if card is None or card == zone.top or lying or any(card == h for h, _ in zone.held):
            # empty (swept away), unchanged (nudged) or a card already played this
            # hand being moved about: no event
            if card != zone.refused:
                zone.refused = None
            if not forced or card is not None:
                zone.top = card
            return
        if card == zone.refused:
            return
        zone.top = card
        if len(zone.held) < HELD_MAX:
            zone.held.append((card, zone.last_busy))

    def _weak(self, zone: _Zone, card: str, expect: Expectation, reading: Any,
              thumb: np.ndarray, forced: bool = False) -> str:
        """A card read with little confidence counts only when the rules expect just
        such a card at this seat now, it is new there, and repeated reads agree;
        else it is unknown."""
        laid = zone.moved or (forced and zone.stirred)
        if not (laid and expect.next_seat == zone.seat and expect.legal(zone.seat, card)
                and self._is_new(zone, reading, thumb)):
            zone.weak = None
            return "unknown"
        if zone.votes.get(card):
            # it agrees with a read that named this card well since the side moved
            zone.weak = None
            return card
        count = zone.weak[1] + 1 if zone.weak and zone.weak[0] == card else 1
        zone.weak = (card, count)
        if count < PRIOR_CONFIRM_READS:
            zone.next_read = self.looks + 1  # look again at once, not after a pause
            return "unknown"
        zone.weak = None
        # the agreeing reads were the confirmation: this read's vote completes it
        zone.votes = {card: CONFIRM_READS - 1}
        return card

    def _is_new(self, zone: _Zone, reading: Any, thumb: np.ndarray) -> bool:
        """Whether the read card's outline looks different from the side's look before
        the motion that laid it (a card laid there changes it; a pattern of the table
        does not)."""
        quad = getattr(reading, "quad", None)
        region = zone.region
        reference = zone.before if zone.before is not None else zone.reference
        if quad is None or region is None or reference is None:
            return True
        ys, xs = region.box
        pts = np.round(np.asarray(quad, np.float32) / self.stride
                       - np.float32([xs.start, ys.start])).astype(np.int32)
        mask = np.zeros(region.mask.shape, np.uint8)
        cv2.fillConvexPoly(mask, pts, 255)
        mask = cv2.bitwise_and(mask, region.mask)
        if not mask.any():
            return True
        diff = cv2.absdiff(region.crop(thumb), reference)
        return float(cv2.mean(diff, mask=mask)[0]) >= NEW_CARD_LEVEL

    def _with_prior(self, seat: str, card: str | None, reading: Any,
                    expect: Expectation) -> str | None:
        """The rules decide between near candidates (R3), never invent a card."""
        if card is None or expect.legal(seat, card):
            return card
        scores: Mapping[str, float] = getattr(reading, "scores", None) or {}
        best = scores.get(card)
        if best is None:
            return card
        legal = [(s, c) for c, s in scores.items() if expect.legal(seat, c)]
        if legal:
            score, choice = max(legal)
            if best - score <= PRIOR_MARGIN:
                return choice
        return card

    def _only_possible(self, zone: _Zone, card: str | None, frame: np.ndarray,
                       expect: Expectation) -> str | None:
        """*card*, read at *zone*, or the one card the rules leave the seat on turn
        (:meth:`Expectation.only_card`) where *card* cannot be what it laid: the side
        moved and looks laid since its last play (:meth:`_looks_laid`), and the card read
        ("unknown" too) is neither the one on top there nor at another side (a
        neighbour's reaching in), and the rules refuse it there (played already, or of
        the other cult). The hand's last card, read as a face a numeral apart that was
        played already, was otherwise no event at all, and the hand never ended (tuning
        hands 1800006 and 1800031, decks 106 and 109); one that cannot be read was no
        gap either (no later card waits for it, and its trick is swept away)."""
        if (card is None or card == zone.top or expect.clearing or not zone.moved
                or expect.next_seat != zone.seat or expect.legal(zone.seat, card)
                or any(card == z.top for z in self.zones.values() if z is not zone)):
            return card
        only = expect.only_card(zone.seat)
        if only is None or not self._looks_laid(zone, frame):
            return card
        return only

    def _laid(self, zone: _Zone, thumb: np.ndarray) -> bool:
        """Whether something moved here and left the side looking different from before
        the motion: a card laid (a table pattern read as a card was there before)."""
        return (zone.moved and zone.before is not None and zone.region is not None
                and zone.region.difference(thumb, zone.before) > REFERENCE_LEVEL)

    def _laid_unseen(self, zone: _Zone) -> bool:
        """Whether something moved at a side since its last play and the side now looks
        different from then: a card laid there (an arm passing over leaves no change),
        or a card that reads as no card but changed the side (:meth:`_looks_laid`)."""
        if not zone.stirred or zone.region is None or self.prev is None:
            return False
        if zone.base is None or zone.unreadable is not None:
            return True
        if zone.reached:
            # a hand came where a card laid here lies; it laid one unless the side looks
            # as at its last play (UNCHANGED_SHARE): zones overlap at their inner
            # corners, and a neighbour laying its card reaches into this one
            return not self._as_at_base(zone)
        return zone.region.difference(self.prev, zone.base) > REFERENCE_LEVEL

    def _as_at_base(self, zone: _Zone) -> bool:
        """Whether the side's fine look now is its look at its last play (or first read),
        to UNCHANGED_SHARE: nothing was laid or taken there since."""
        if zone.fine is None or zone.base_look is None or self.frame is None:
            return False
        look = self._look(zone, self.frame)
        return zone.fine.changed(look, zone.base_look) < UNCHANGED_SHARE

    def _looks_laid(self, zone: _Zone, frame: np.ndarray) -> bool:
        """Whether the side's fine look differs from its look at its last play (or first
        read) in at least LAID_SHARE of its pixels and matches none of its empty looks:
        something was laid there, not taken away."""
        if zone.fine is None or zone.base_look is None:
            return False
        return self._laid_look(zone, self._look(zone, frame))

    @staticmethod
    def _laid_look(zone: _Zone, look: np.ndarray) -> bool:
        """:meth:`_looks_laid` for the side's fine *look*."""
        if zone.fine is None or zone.base_look is None:
            return False
        if zone.fine.changed(look, zone.base_look) < LAID_SHARE:
            return False
        return all(zone.fine.changed(look, empty) >= LAID_SHARE for empty in zone.empty_looks)

    def _neighbours_only(self, zone: _Zone) -> bool:
        """Whether what changed the side since its last play (LAID_SHARE) is only the
        cards named at other sides: zones overlap at their inner corners, and a
        neighbour's card laid there changes this side too (tuning hand 1800018: south's
        lead reached 3.7% into east's zone, which read no card but looked laid, and
        became a gap before it). Their outlines, grown by NEIGHBOUR_GROW (their blurred
        edge and shadow), are left out of the side's look."""
        fine = zone.fine
        if fine is None or zone.base_look is None or self.frame is None:
            return False
        look = self._look(zone, self.frame)
        if fine.changed(look, zone.base_look) < LAID_SHARE:
            return False  # not changed since its last play: nothing to explain
        return fine.changed(look, zone.base_look, leave_out=self._others_cards(zone)) < LAID_SHARE

    def _others_cards(self, zone: _Zone) -> np.ndarray:
        """The cards named at the other sides, within the side's fine box (0/255): their
        outlines grown by NEIGHBOUR_GROW (their blurred edge and shadow)."""
        assert zone.fine is not None
        ys, xs = zone.fine.box
        others = np.zeros_like(zone.fine.mask)
        for seat, reading in self.readings.items():
            quad = getattr(reading, "quad", None)
            if seat == zone.seat or quad is None or reading.card_id in (None, "unknown"):
                continue
            q = np.asarray(quad, np.float32)
            centre = q.mean(axis=0)
            grown = (q - centre) * np.float32(NEIGHBOUR_GROW) + centre
            cv2.fillConvexPoly(others, np.round(grown - np.float32([xs.start, ys.start]))
                               .astype(np.int32), 255)
        return others

    def _look_again(self, frame: np.ndarray, thumb: np.ndarray,
                    expect: Callable[[], Expectation],
                    emit: Callable[[Observation], None]) -> None:
        """Cards wait for the seat on turn, where something was laid that was not
        confirmed: look at that side again now and then, though nothing moves (its
        first reads may have been taken while something partly covered it); while a
        later card waits, so too where nothing was seen laid there: a
        dark hand laying a dark card in dim light moves the side too little to be seen
        (tuning hand 1800086, deck 109: east's sun-priest, its side never read, and
        every later card refused as out of turn)."""
        rules = expect()
        turn = self.zones.get(rules.next_seat or "")
        waiting = turn is not None and any(z.held for z in self.zones.values() if z is not turn)
        if (turn is None or turn.held or turn.dirty or turn.forced >= FORCE_READS
                or self.looks < turn.next_force or not (waiting or self._laid_unseen(turn))):
            return
        turn.forced += 1
        turn.next_force = self.looks + FORCE_EVERY
        self._read(turn, frame, thumb, rules, emit, forced=True)

    def _give_out(self, expect: Callable[[], Expectation],
                  emit: Callable[[Observation], None]) -> None:
        """Emit held cards in turn order (R3), each side's in the order laid; a card
        the tracker could not name where one was laid in turn becomes a gap (see
        :meth:`_gap`), and a card read at last where a gap is open fills it."""
        while True:
            rules = expect()
            ready = []
            for zone in self.zones.values():
                # a card already in the log (laid by hand by the table) is done
                if not rules.clearing:
                    zone.held = [h for h in zone.held if h[0] not in rules.played]
                if zone.held:
                    ready.append(zone)
            filling = next(((z, i) for z in ready
                            if (i := self._fills(z, rules)) is not None), None)
            if filling is not None:
                zone, index = filling
                card, _ = zone.held.pop(0)
                emit(Observation("fill", self.frame_no, seat=zone.seat, card=card,
                                 index=index))
                if not any(seat == zone.seat for seat, _ in expect().gaps):
                    zone.gap_busy = None  # no gap left here to fill
                continue
            turn = self.zones.get(rules.next_seat or "")
            if not ready:
                if turn is not None and self._missed(turn) and self._gap(turn, expect, emit):
                    continue
                return
            first = min(z.held[0][1] for z in ready)
            if rules.next_seat is None:
                for z in self.zones.values():
                    if z.unreadable is not None and self._neighbours_only(z):
                        z.unreadable = None
                blocked = [z for z in self.zones.values()
                           if z.unreadable is not None and z.unreadable < first]
                if blocked:
                    # a card laid before these cannot be read: it leads. Once its side
                    # gave up reading it and these waited long enough, it is a gap.
                    lead = min(blocked, key=lambda z: z.unreadable or 0)
                    if (lead.dirty or self.looks - first < OUT_OF_TURN_WAIT
                            or not self._gap(lead, expect, emit)):
                        return
                    continue
                zone = min(ready, key=lambda z: z.held[0][1])
            elif turn is not None and turn.held and turn.held[0][1] <= first + LAID_SLACK:
                zone = turn
            else:
                chosen = self._out_of_turn(ready, turn, emit)
                if chosen is None:
                    return
                if chosen == "gap":
                    assert turn is not None
                    if not self._gap(turn, expect, emit):
                        return
                    continue
                zone = chosen
            card, _ = zone.held.pop(0)
            emit(Observation("play", self.frame_no, seat=zone.seat, card=card))
            self._given(zone, card, rules, expect)

    def _given(self, zone: _Zone, card: str | None, rules: Expectation,
               expect: Callable[[], Expectation]) -> bool:
        """After a play (*card*) or a gap (None) was given out at *zone*: whether the
        rules took it; if so the side starts afresh (its next card is a new play)."""
        for other in self.zones.values():
            other.gone.clear()
            other.unreadable = None
        after = expect()
        if (card in after.played or after.next_seat != rules.next_seat
                or len(after.gaps) != len(rules.gaps)):
            zone.stirred = zone.reached = False
            zone.forced = 0
            if zone.region is not None and self.prev is not None:
                zone.base = zone.region.crop(self.prev).copy()
            if zone.fine is not None and self.frame is not None:
                zone.base_look = self._look(zone, self.frame)
            return True
        if card is not None:
            zone.refused = card  # the rules refused it; wait for the side to change
        return False

    def _missed(self, turn: _Zone) -> bool:
        """With no later card waiting: whether something was laid at the seat on turn
        that the tracker could not name (:meth:`_turn_unseen_at`), and it has looked
        again as often as it will (FORCE_READS)."""
        return (not turn.held and not turn.dirty and turn.forced >= FORCE_READS
                and self._turn_unseen_at(turn))

    def _gap(self, zone: _Zone, expect: Callable[[], Expectation],
             emit: Callable[[Observation], None]) -> bool:
        """A card was laid at *zone*'s seat in turn and cannot be named: emit a gap
        there (the game keeps its place; the plays after it go on). Whether the rules
        took it."""
        rules = expect()
        emit(Observation("gap", self.frame_no, seat=zone.seat,
                         message=f"the card at {zone.seat} could not be read: "
                                 "please name it on the score page"))
        if not self._given(zone, None, rules, expect):
            return False
        zone.gap_busy = zone.last_busy
        zone.gap_held = {card for card, _ in zone.held}
        zone.warned = True
        return True

    def _fills(self, zone: _Zone, rules: Expectation) -> int | None:
        """The open gap at *zone*'s seat its first held card fills: it is one of the
        cards that can lie there, and it is the card the gap stands for, not a card
        laid since: nothing moved where a card lies there since the gap was made (a
        better look), or the gap's trick is not complete on the table yet (a hand
        lifted off the card: R3, the seat cannot have laid again before the trick's
        other cards). A hand lifting off the card once the trick is complete looks
        like the seat laying its next card (an arm's first motion may already reach
        where a card lies): that card is taken as a play, the gap stays for the table
        to name. Cards waiting there when the gap was made are plays."""
        if not rules.gaps or zone.gap_busy is None:
            return None
        card, laid = zone.held[0]
        if card in zone.gap_held:
            return None
        index = rules.fills(zone.seat, card)
        if index is None or laid <= zone.gap_busy:
            return index
        # laid (or uncovered) since: the plays after the gap in the log and the cards
        # laid before it and waiting, against the gap's trick's cards still to come
        after = rules.laid - index + sum(1 for other in self.zones.values() if other is not zone
                                         for _, when in other.held if when < laid)
        return index if after < 3 - (index - 1) % 4 else None

    def _out_of_turn(self, ready: list[_Zone], turn: _Zone | None,
                     emit: Callable[[Observation], None]) -> _Zone | str | None:
        """Cards wait at seats not on turn. While the seat on turn may still be laying
        its card, wait. If nothing was laid there, the oldest waiting card goes to the
        rules, which refuse it (a warning). If something was laid there that was not
        confirmed (or its card came only after the waiting ones), the seat on turn gets
        a gap ("gap") once it was looked at again as often as it will be."""
        stale = [z for z in ready if z is not turn
                 and self.looks - z.held[0][1] >= OUT_OF_TURN_WAIT]
        if not stale or (turn is not None and turn.dirty and turn.quiet < SETTLE_FRAMES):
            return None
        if turn is None or not (turn.held or self._laid_unseen(turn)):
            return min(stale, key=lambda z: z.held[0][1])
        if turn.held or (turn.forced >= FORCE_READS and not turn.dirty):
            return "gap"
        return None

    # -- drawing ------------------------------------------------------------------------------
    def annotate(self, frame: np.ndarray) -> np.ndarray:
        """The frame with the Twilight card, zones and cards on top drawn on."""
        from vision.annotate import annotate

        return annotate(frame, self.pose, dict(self.readings))
