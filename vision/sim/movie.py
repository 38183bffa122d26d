"""Hand movies: a simulated table where whole hands are played at a human pace.

:class:`HandMovie` plays legal random hands (the rules core decides every card)
and yields frames one at a time, never holding more than the current picture:

* each play: an arm reaches in from the edge of the seat on turn (in three-player
  mode the soloist also lays the new moon's cards), lays the card at that seat's
  side of the Twilight card and withdraws; the card then lies visible and
  unoccluded for at least :data:`MIN_VISIBLE_S` seconds before anything else moves;
* after the fourth card a won trick is swept off towards the winner's edge,
  sometimes squared up into a pile first, sometimes left lying (the next trick
  is laid on top); a purgatory trick stays and the next cards land on it; the
  next swept trick takes everything lying;
* between hands the table is cleared; in three-player mode the Twilight card is
  turned by 90 degrees (R8 rotation). With ``bump`` the Twilight card is now and
  then knocked a few millimetres mid-hand; with ``new_moon_cards`` (three players)
  the new moon's cards lie face up at its edge and are picked up from there.

Its ``events`` are the ground truth in the C7 form (``play``, ``trick``, ``hand``),
frames numbered from 0. Play events also carry ``clear_frame``: the first frame
at which the reaching arm no longer covers the card. Each :class:`MovieFrame`
also carries what lies where (``truth`` in the C6 form, card outlines, occlusion). :class:`SimulatedTable`
is the same as a camera (``read()``) for the ``demo`` source, and :func:`run`
implements ``twilight-companion simulate``.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import sys
import time
from collections.abc import Collection, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import cv2
import numpy as np

from companion.core.cards import CARDS, SEATS, Card, Seat
from companion.core.deal import random_plays, random_plays_with_givers
from companion.core.rules import Hand, Play
from vision.deck_art import CARD_MM, STYLES
from vision.sim.simulator import (
    ROTATION_KINDS,
    SEAT_CARD_ANGLE,
    SEAT_DIRECTION,
    Arm,
    Placed,
    Table,
    card_angle,
    card_bgra,
    place_at_side,
    random_arm,
    random_look,
    random_table,
    random_table_randomised,
    side_pose,
)

#: A laid card stays uppermost and unoccluded at least this long (seconds, at any speed).
MIN_VISIBLE_S = 1.0
#: Seconds a player thinks before reaching (range).
THINK_S = (0.3, 1.4)
#: Seconds the arm takes to reach in, and to withdraw (ranges).
REACH_S = (0.6, 1.0)
WITHDRAW_S = (0.5, 0.8)
#: How a won trick is handled: sweep straight off, square up then sweep, leave lying.
SWEEP_CHOICES = (("sweep", 0.5), ("square", 0.25), ("leave", 0.25))
#: Where the palm holds a card: this far behind its centre, towards the player (mm).
PALM_BEHIND_CARD_MM = 38.0
#: Seconds the hand rests on a card it has just laid.
REST_ON_CARD_S = 0.25
#: A trick is squared up into a pile this far from the Twilight card's centre (mm).
PILE_DISTANCE_MM = 120.0
#: The Twilight card and its side cards fit within this radius (mm): keeps them in view.
TWILIGHT_LAYOUT_RADIUS_MM = 160.0
#: Height (mm) at which a card is carried in.
CARRY_LIFT_MM = 35.0
#: Twilight card's largest turn off square in a movie, degrees (room for bumps).
MOVIE_TWILIGHT_JITTER_DEG = 15.0
#: Camera tilt range in movies, degrees.
MOVIE_TILT_DEG = (0.0, 10.0)
#: The new moon's face-up cards: distance of their row from the Twilight card, and
#: spacing along it (mm).
NEW_MOON_ROW_MM = 225.0
NEW_MOON_SPACING_MM = 28.0
#: How far knocks may carry the Twilight card from where it was put (mm, degrees).
BUMP_MAX_MM = 15.0
BUMP_MAX_DEG = 10.0
#: Seconds between hands.
BETWEEN_HANDS_S = (1.5, 3.0)
#: The demo camera: hands whose truth it keeps, and seconds the table lies still after
#: its last hand before it ends (:class:`SimulatedTable` ``keep_hands``, ``end_still_s``).
DEMO_KEEP_HANDS = 3
DEMO_END_STILL_S = 6.0
#: Frame file names written by ``simulate``.
FRAME_PATTERN = "frame-{:06d}.jpg"
#: Match record files written by ``simulate`` (a new match after one is won, R7).
MATCH_PATTERN = "match-{}.json"
#: The goal the truth's match records use (R7).
MATCH_GOAL = "standard"
#: Names of the persons in a three-player match record.
THREE_NAMES = ("Ada", "Ben", "Cleo")

MODES = ("four", "three")
#: What :func:`blank_art` paints over, per art style, each box in its own commonest
#: colour (mm from the card's top-left corner: x0, y0, x1, y1): inside the style-0
#: frame's teeth; style 1's face between its bands, and its bands' names and emblems.
#: (Scaled to a deck's own card size; ``None``: any other deck, the face inside a
#: border of about 10%.)
BLANK_INSIDE_MM: dict[int | str | None, list[tuple[float, float, float, float]]] = {
    0: [(6.0, 6.0, 57.0, 82.0)],
    1: [(3.0, 8.0, 60.0, 80.0), (2.8, 2.8, 60.2, 6.8), (2.8, 81.2, 60.2, 85.2)],
    None: [(6.0, 8.0, 57.0, 80.0)]}


@dataclass
class MovieFrame:
    """One frame: its number, its picture (``None`` when not rendering) and what lies
    where: the uppermost card id at each side, its outline in image px (corner order
    as :class:`vision.sim.simulator.Scene`), whether an arm or a moving card covers it,
    and the Twilight card's outline (``None`` while it is being turned)."""

    index: int
    image: np.ndarray | None
    top: dict[str, str | None]
    occluded: dict[str, bool]
    arm: bool
    quads: dict[str, np.ndarray | None] = field(default_factory=dict)
    twilight_quad: np.ndarray | None = None
    moon_seats: tuple[str, str] = ("north", "south")

    @property
    def truth(self) -> dict[str, Any]:
        """What ``recognise`` should say about this frame, in the C6 form."""
        found = self.twilight_quad is not None
        return {"twilight": {"found": found, "moon_seats": list(self.moon_seats) if found else []},
                "sides": dict(self.top) if found else {s.value: None for s in SEATS}}


@dataclass
class _Lying:
    seat: Seat | None
    card: Placed


@dataclass
class _State:
    moving: list[Placed] = field(default_factory=list)
    arm: Arm | None = None


def _overlap(a: Placed, b: Placed) -> bool:
    area, _ = cv2.intersectConvexConvex(a.corners_mm().astype(np.float32),
                                        b.corners_mm().astype(np.float32))
    return area > 1.0


def _ease(t: float) -> float:
    return 0.5 - 0.5 * math.cos(math.pi * min(max(t, 0.0), 1.0))


def _lerp(a: tuple[float, float], b: tuple[float, float], t: float) -> tuple[float, float]:
    return (a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t)


def _angle_lerp(a: float, b: float, t: float) -> float:
    d = (b - a + 180.0) % 360.0 - 180.0
    return a + d * t


def blank_art(card_id: str, deck: int | str, px_per_mm: float) -> np.ndarray:
    """The card's art (as :func:`vision.sim.simulator.card_bgra` gives it for *deck*)
    with everything inside its border painted over in the face's plainest colour: the
    border, and so the cult's colour, is kept; the face shows nothing to read (a worn
    or foreign card, a card the camera can never name)."""
    art = card_bgra(card_id, deck, px_per_mm).copy()
    h, w = art.shape[0] - 2, art.shape[1] - 2  # the art without its 1 px pad
    for x0, y0, x1, y1 in BLANK_INSIDE_MM.get(deck, BLANK_INSIDE_MM[None]):  # type: ignore[call-overload]
        box = art[1 + round(y0 / CARD_MM[1] * h):1 + round(y1 / CARD_MM[1] * h),
                  1 + round(x0 / CARD_MM[0] * w):1 + round(x1 / CARD_MM[0] * w)]
        colours, counts = np.unique(box[..., :3].reshape(-1, 3), axis=0, return_counts=True)
        box[..., :3] = colours[int(np.argmax(counts))]
    art.setflags(write=False)
    return art


def _drawing_otherwise(table: Table, blank: frozenset[str], misprint: Mapping[str, str]) -> Any:
    """``table.draw_card`` drawing the cards in *blank* with :func:`blank_art`, and each
    card in *misprint* with the face of the card it maps to (read as that card)."""
    draw = table.draw_card
    arts: dict[str, np.ndarray] = {}

    def draw_card(img: np.ndarray, shadow: np.ndarray, card: Placed) -> None:
        cid = card.card_id
        if cid not in blank and cid not in misprint:
            return draw(img, shadow, card)
        if cid not in arts:
            arts[cid] = (blank_art(cid, table.deck, table.art_px_per_mm) if cid in blank
                         else card_bgra(misprint[cid], table.deck, table.art_px_per_mm))
        return draw(img, shadow, card, arts[cid])

    return draw_card


def _plays_with_givers(rng: random.Random, moon_seats: tuple[Seat, ...], leader: Seat,
                       purgatory_bias: float) -> tuple[list[Play], list[Seat]]:
    """A legal random hand and from whose cards each play came (R3)."""
    return random_plays_with_givers(rng, moon_seats, leader, purgatory_bias=purgatory_bias)


class HandMovie:
    """Frames and truth of ``hands`` whole hands (0: go on for ever).

    ``mode`` is ``"four"`` or ``"three"``; in three-player mode ``soloist`` (a seat
    name, random if None) is the first hand's soloist and rotates by R8.
    ``moon_seats`` (four-player mode) fixes the moon seats, else random.
    ``bump`` is the chance per trick that the Twilight card gets knocked.
    ``render=False`` skips drawing pictures (truth and geometry only).
    ``new_moon_cards`` (three-player mode) lays the new moon's seven cards face up
    at its edge of the table (R8), where the arms then pick them from.
    ``deck`` (a :mod:`vision.sim.decks` name: ``"builtin"`` or a procedural deck's
    seed) draws the movie with that deck and the domain randomisation of
    :func:`vision.sim.simulator.render_randomised`, drawn from the seed: how the
    players lay their cards (radial, aligned or askew; ``rotation`` pins it), card
    size, camera tilt and field of view, cloth, light, noise, blur, JPEG. Without
    it the movie is drawn as before in art ``style``.
    """

    def __init__(self, seed: int = 0, style: int = 0, size: tuple[int, int] = (1280, 720),
                 fps: float = 10.0, mode: str = "four", soloist: str | None = None,
                 hands: int = 1, speed: float = 1.0, bump: float = 0.0, render: bool = True,
                 moon_seats: tuple[str, str] | None = None,
                 purgatory_bias: float = 0.3, new_moon_cards: bool = False,
                 deck: int | str | None = None, rotation: str | float | None = None,
                 blank: Collection[str] = (), resume: dict[str, Any] | None = None,
                 misprint: Mapping[str, str] | None = None) -> None:
        if deck is None and style not in STYLES:
            raise ValueError(f"unknown art style {style!r} (styles: {STYLES})")
        if mode not in MODES:
            raise ValueError(f"mode must be four or three, not {mode!r}")
        if fps <= 0 or speed <= 0:
            raise ValueError("fps and speed must be positive")
        self.seed = seed
        self.style = style
        self.size = size
        self.fps = float(fps)
        self.mode = mode
        self.hands = hands
        self.speed = float(speed)
        self.bump = bump
        self.render_images = render
        self.purgatory_bias = purgatory_bias
        self.new_moon_cards = new_moon_cards and mode == "three"
        #: The new moon's cards face up on the table (three players, ``new_moon_cards``).
        self.dummy: list[Placed] = []
        self.rng = random.Random(f"movie-{seed}")
        # Sensor noise draws from its own generator: rendering or not, the game is the same.
        self.noise_rng = random.Random(f"noise-{seed}")
        self.deck = deck
        #: The randomised factors drawn for this movie (empty without ``deck``).
        self.factors: dict[str, Any] = {}
        self.rotation: str | float | None = None
        if deck is None:
            self.table: Table = random_table(self.rng, style, size,
                                             tilt_deg=self.rng.uniform(*MOVIE_TILT_DEG))
        else:
            self.table, self.factors = random_table_randomised(self.rng, deck, size)
            self.rotation = (rotation if rotation is not None
                             else self.rng.choice(ROTATION_KINDS))
            self.factors["rotation"] = (self.rotation if isinstance(self.rotation, str)
                                        else "fixed")
            self.factors["twilight_aspect"] = round(self.table.sim_deck.twilight_aspect, 3)
        #: Cards drawn blank inside their border (:func:`blank_art`): never readable.
        self.blank = frozenset(blank)
        #: Cards drawn with another card's face (card -> the card it shows): misprints,
        #: read as the card they show.
        self.misprint = dict(misprint or {})
        if self.blank or self.misprint:
            self.table.draw_card = _drawing_otherwise(  # type: ignore[method-assign]
                self.table, self.blank, self.misprint)
        #: Ground truth events (C7 form), appended as the movie goes.
        self.events: list[dict[str, Any]] = []
        #: C2 hand records of the hands played so far (complete ones and the current one).
        self.hand_records: list[dict[str, Any]] = []
        self.frame = 0
        if mode == "three":
            self.soloist = Seat.parse(soloist) if soloist else self.rng.choice(SEATS)
            self.moon_seats = tuple(sorted((self.soloist, self.soloist.opposite),
                                           key=lambda s: s.index))
            empty = self.soloist.opposite
            people = list(THREE_NAMES)
            self.rng.shuffle(people)
            others = [s for s in SEATS if s not in (self.soloist, empty)]
            self.names: dict[Seat, str | None] = {self.soloist: people[0], empty: None,
                                                  others[0]: people[1], others[1]: people[2]}
        else:
            if resume is not None:
                moon_seats = tuple(resume["moon_seats"])  # type: ignore[assignment]
            if moon_seats is not None:
                a, b = (Seat.parse(s) for s in moon_seats)
            else:
                a = self.rng.choice((Seat.NORTH, Seat.EAST))
                b = a.opposite
            self.moon_seats = (a, b) if a.index < b.index else (b, a)
            self.dealer = self.rng.choice(SEATS)
            if resume is not None:
                self.dealer = Seat.parse(resume["leader"]).right
        #: A hand half played before (four players; ``moon_seats``, ``leader``, ``plays``
        #: as (seat, card)): the first hand goes on from there (see :meth:`_resumed`).
        self.resume = resume if mode == "four" else None
        k = 0 if self.moon_seats[0] is Seat.NORTH else 1
        k += 2 * self.rng.randrange(2)
        angle = k * 90.0 + self.rng.uniform(-MOVIE_TWILIGHT_JITTER_DEG, MOVIE_TWILIGHT_JITTER_DEG)
        s = self.table.camera.px_per_mm
        reach = TWILIGHT_LAYOUT_RADIUS_MM
        room = (max(0.0, size[0] / 2 / s - reach), max(0.0, size[1] / 2 / s - reach))
        self.twilight = self.table.placed("twilight", self.rng.uniform(-room[0], room[0]) * 0.5,
                                          self.rng.uniform(-room[1], room[1]) * 0.5, angle)
        self._home = self.twilight
        #: Each seat's player keeps one skin and sleeve for the whole movie.
        self.looks = {seat: random_look(self.rng) for seat in SEATS}
        self.lying: list[_Lying] = []
        self._twilight_on_board = True
        self._board_version = 0
        self._board: tuple[int, np.ndarray, np.ndarray] | None = None
        self._gains: tuple[int, np.ndarray] | None = None

    # -- timing -----------------------------------------------------------------------------
    def _n(self, seconds: float) -> int:
        """Frames for ``seconds`` of table time at this speed."""
        return max(1, round(seconds * self.fps / self.speed))

    def _n_range(self, span: tuple[float, float]) -> int:
        return self._n(self.rng.uniform(*span))

    # -- frames -----------------------------------------------------------------------------
    def frames(self) -> Iterator[MovieFrame]:
        """Yield the movie's frames in order; the truth grows in ``events``."""
        for state in self._script():
            yield self._frame(state)
            self.frame += 1

    def _board_layers(self) -> tuple[np.ndarray, np.ndarray]:
        if self._board is None or self._board[0] != self._board_version:
            img, shadow, _ = self.table.new_layers()
            if self.render_images:
                if self._twilight_on_board:
                    self.table.draw_card(img, shadow, self.twilight)
                for card in self.dummy:
                    self.table.draw_card(img, shadow, card)
                for item in self.lying:
                    self.table.draw_card(img, shadow, item.card)
            self._board = (self._board_version, img, shadow)
        return self._board[1], self._board[2]

    def _changed(self) -> None:
        self._board_version += 1

    def _tops(self) -> dict[Seat, Placed]:
        tops: dict[Seat, Placed] = {}
        for item in self.lying:
            if item.seat is not None:
                tops[item.seat] = item.card
        return tops

    def _frame(self, state: _State) -> MovieFrame:
        table = self.table
        board, board_shadow = self._board_layers()
        lw, lh = table.lowres_size
        # What covers the table this frame: the arm and any card in motion (low-res map).
        occ_map = np.zeros((lh, lw), np.float32)
        image = None
        if self.render_images:
            img = board.copy()
            if state.arm is None and not state.moving:
                # A still table: its light and shadows are those of the board, worked out once.
                if self._gains is None or self._gains[0] != self._board_version:
                    self._gains = (self._board_version,
                                   table.light_gains(board_shadow, occ_map))
                image = table.finish(img, board_shadow, occ_map, self.noise_rng, self._gains[1])
            else:
                shadow = board_shadow.copy()
                for card in state.moving:
                    table.draw_card(img, shadow, card)
                if state.arm is not None:
                    table.draw_arm(img, shadow, occ_map, state.arm)
                image = table.finish(img, shadow, occ_map, self.noise_rng)
        elif state.arm is not None:
            table.draw_arm(None, None, occ_map, state.arm)
        for card in state.moving:
            q = cv2.perspectiveTransform(table.quad(card).reshape(-1, 1, 2).astype(np.float64),
                                         table.to_lowres)
            cv2.fillConvexPoly(occ_map, (q.reshape(-1, 2) * 16).round().astype(np.int32), 1.0,
                               shift=4)
        tops = self._tops()
        quads = {s.value: (table.quad(tops[s]) if s in tops else None) for s in SEATS}
        occluded = {seat: bool(q is not None and table.occlusion(occ_map, q) > 0.0)
                    for seat, q in quads.items()}
        return MovieFrame(self.frame, image,
                          {s.value: (tops[s].card_id if s in tops else None) for s in SEATS},
                          occluded, state.arm is not None, quads,
                          table.quad(self.twilight) if self._twilight_on_board else None,
                          (self.moon_seats[0].value, self.moon_seats[1].value))

    def _covered(self, arm: Arm, card: Placed) -> float:
        """Fraction of ``card`` under ``arm`` (geometry only)."""
        lw, lh = self.table.lowres_size
        arm_map = np.zeros((lh, lw), np.float32)
        self.table.draw_arm(None, None, arm_map, arm)
        return self.table.occlusion(arm_map, self.table.quad(card))

    # -- the script -------------------------------------------------------------------------
    def _script(self) -> Iterator[_State]:
        played = 0
        while self.hands == 0 or played < self.hands:
            yield from self._hand(played)
            played += 1
            yield from self._pause(self._n_range(BETWEEN_HANDS_S))
            if self.mode == "three" and (self.hands == 0 or played < self.hands):
                yield from self._rotate_three()

    def _pause(self, n: int) -> Iterator[_State]:
        for _ in range(n):
            yield _State()

    def _hand(self, number: int) -> Iterator[_State]:
        rng = self.rng
        if self.mode == "three":
            leader = self.soloist
        else:
            leader = self.dealer.left
        givers: list[Seat | None]
        done = 0
        if number == 0 and self.resume is not None:
            plays, done = self._resumed(rng, leader)
            givers = [None] * len(plays)
        elif self.new_moon_cards:
            plays, given = _plays_with_givers(rng, self.moon_seats, leader, self.purgatory_bias)
            givers = list(given)
        else:
            plays = random_plays(rng, self.moon_seats, leader,
                                 purgatory_bias=self.purgatory_bias)
            givers = [None] * len(plays)
        record: dict[str, Any] = {"format": "twilight-hand/1", "mode": self.mode,
                                  "moon_seats": [s.value for s in self.moon_seats],
                                  "leader": leader.value, "plays": []}
        if self.mode == "three":
            record["soloist"] = self.soloist.value
            record["names"] = {s.value: self.names[s] for s in SEATS}
        else:
            record["dealer"] = self.dealer.value
        self.hand_records.append(record)
        hand = Hand(self.moon_seats, leader)
        if self.new_moon_cards:
            empty = self.soloist.opposite
            self._lay_out_dummy([p.card for p, g in zip(plays, givers, strict=True)
                                 if g is empty])
        for i, play in enumerate(plays):
            if i == done:
                yield from self._pause(self._n(1.0))
            if i < done:
                hand.play(play.seat, play.card)
                self._already_laid(play, number, hand)
                record["plays"].append(play.to_dict())
                continue
            if i % 4 == 0 and i and self.bump > 0 and rng.random() < self.bump:
                yield from self._bump()
            hand.play(play.seat, play.card)
            yield from self._lay(play.seat, play.card, number, extra_trick=hand,
                                 from_table=givers[i] is not None
                                 and givers[i] is self.soloist.opposite)
            record["plays"].append(play.to_dict())  # together with its truth event
            trick = hand.tricks[-1]
            if trick.complete and not trick.lies:
                if hand.complete:
                    choice = "sweep"
                else:
                    choice = rng.choices([c for c, _ in SWEEP_CHOICES],
                                         [w for _, w in SWEEP_CHOICES])[0]
                if choice != "leave":
                    assert trick.winner is not None
                    yield from self._sweep(trick.winner, square=choice == "square")
        if self.lying:  # neutral tricks, or tricks left lying: the dealer gathers them
            yield from self._sweep(rng.choice(self._arm_seats()), square=False)
        if self.mode == "four":
            self.dealer = self.dealer.left

    def _resumed(self, rng: random.Random, leader: Seat) -> tuple[list[Play], int]:
        """The resumed hand's plays: those laid before (``resume["plays"]``), then a legal
        random rest (the player on turn has a card of his cult played, R3: any card of
        that cult not yet played fits); and how many were laid before."""
        assert self.resume is not None
        hand = Hand(self.moon_seats, leader)
        for seat, card in self.resume["plays"]:
            hand.play(Seat.parse(seat), Card.parse(card))
        plays = list(hand.plays)
        done = len(plays)
        while not hand.complete:
            nxt = hand.next
            assert nxt is not None
            left = [c for c in CARDS if c.cult is nxt[1] and not hand.played(c)]
            card = rng.choice(left)
            hand.play(nxt[0], card)
            plays.append(hand.plays[-1])
        return plays, done

    def _already_laid(self, play: Play, hand_no: int, hand: Hand) -> None:
        """A play of the resumed hand laid before the movie began: its truth events at
        frame 0; the cards still on the table then (the trick being laid, tricks lying)
        lie at their sides."""
        self.events.append({"type": "play", "frame": 0, "seat": play.seat.value,
                            "card": play.card.id, "clear_frame": 0, "hand_index": hand_no})
        trick = hand.tricks[-1]
        if trick.complete:
            self.events.append({"type": "trick", "frame": 0,
                                "winner": trick.winner.value if trick.winner else None,
                                "hand_index": hand_no})
        keep = {p.card.id for t in hand.lying_tricks for p in t.plays}
        if not trick.complete:
            keep |= {p.card.id for p in trick.plays}
        self.lying = [item for item in self.lying if item.card.card_id in keep]
        if play.card.id in keep:
            x, y, angle = side_pose(self.rng, play.seat, self.twilight)
            self.lying.append(_Lying(play.seat, Placed(play.card.id, x, y, angle)))
        self._changed()

    def _lay_out_dummy(self, cards: list[Card]) -> None:
        """The new moon's cards face up in an overlapping row at its edge (R8)."""
        rng = self.rng
        empty = self.soloist.opposite
        dx, dy = SEAT_DIRECTION[empty]
        tw = self._home
        base = (tw.x + dx * NEW_MOON_ROW_MM, tw.y + dy * NEW_MOON_ROW_MM)
        order = list(cards)
        rng.shuffle(order)
        n = len(order)
        self.dummy = []
        for i, card in enumerate(order):
            along = (i - (n - 1) / 2) * NEW_MOON_SPACING_MM
            self.dummy.append(self.table.placed(
                card.id, base[0] - dy * along + rng.uniform(-2, 2),
                base[1] + dx * along + rng.uniform(-2, 2),
                SEAT_CARD_ANGLE[empty] + rng.uniform(-6, 6)))
        self._changed()

    def _randomised_pose(self, seat: Seat, card_id: str) -> Placed:
        """Where a randomised movie's player lays ``card_id`` at ``seat``'s side: the
        movie's way of laying cards, never over another side's uppermost card."""
        rng = self.rng
        tw = self.twilight
        assert self.rotation is not None
        angle = card_angle(rng, self.rotation, seat, tw.angle)
        others = [c for s, c in self._tops().items() if s is not seat]
        card = None
        for attempt in range(12):
            x, y = place_at_side(rng, seat, tw, self.table.sim_deck.card_mm, angle,
                                 extra_gap=4.0 * attempt)
            card = self.table.placed(card_id, x, y, angle)
            if not any(_overlap(card, o) for o in others):
                break
        assert card is not None
        return card

    def _arm_seats(self) -> list[Seat]:
        if self.mode == "three":
            return [s for s in SEATS if s is not self.soloist.opposite]
        return list(SEATS)

    def _reacher(self, seat: Seat) -> Seat:
        """Whose arm lays the card at ``seat``: the soloist lays the new moon's (R8)."""
        if self.mode == "three" and seat is self.soloist.opposite:
            return self.soloist
        return seat

    def _lay(self, seat: Seat, card: Card, hand_no: int, extra_trick: Hand,
             from_table: bool = False) -> Iterator[_State]:
        """An arm lays ``card`` at ``seat``'s side (picking it up first from the new
        moon's cards when ``from_table``) and withdraws; then the truth events."""
        rng = self.rng
        yield from self._pause(self._n_range(THINK_S))
        if self.deck is None:
            x, y, angle = side_pose(rng, seat, self.twilight)
            final = Placed(card.id, x, y, angle)
        else:
            final = self._randomised_pose(seat, card.id)
            x, y, angle = final.x, final.y, final.angle
        reacher = self._reacher(seat)
        dx, dy = SEAT_DIRECTION[reacher]
        # Palm over the near end of the card, fingers over the rest of it.
        palm = (x + dx * PALM_BEHIND_CARD_MM, y + dy * PALM_BEHIND_CARD_MM)
        arm = random_arm(rng, reacher, palm, self.table, self.looks[reacher])
        start = arm.entry
        start_angle = angle + rng.uniform(-30, 30)
        picked = next((c for c in self.dummy if c.card_id == card.id), None)
        if from_table and picked is not None:
            # Reach the new moon's card first, then carry it to the side.
            pick = (picked.x + dx * PALM_BEHIND_CARD_MM, picked.y + dy * PALM_BEHIND_CARD_MM)
            n_pick = self._n_range(REACH_S)
            for k in range(n_pick):
                t = _ease((k + 1) / n_pick)
                yield _State([], Arm(arm.entry, _lerp(arm.entry, pick, t), arm.skin,
                                     arm.sleeve, arm.width_mm))
            self.dummy = [c for c in self.dummy if c is not picked]
            self._changed()
            start, start_angle = pick, picked.angle
        n_reach = self._n_range(REACH_S)
        grip = (x - palm[0], y - palm[1])
        for k in range(n_reach):
            t = _ease((k + 1) / n_reach)
            hand_pos = _lerp(start, palm, t)
            lift = CARRY_LIFT_MM * (1 - t)
            held = self.table.placed(card.id, hand_pos[0] + grip[0], hand_pos[1] + grip[1],
                                     _angle_lerp(start_angle, angle, t), lift)
            if k == n_reach - 1:
                break
            yield _State([held], Arm(arm.entry, hand_pos, arm.skin, arm.sleeve, arm.width_mm))
        # The card lies: this frame is the play's frame.
        self.lying.append(_Lying(seat, final))
        self._changed()
        play_frame = self.frame
        trick_done = extra_trick.tricks[-1].complete
        n_rest = self._n(REST_ON_CARD_S)
        for _ in range(n_rest):
            yield _State([], arm)
        n_back = self._n_range(WITHDRAW_S)
        clear: int | None = None
        for k in range(n_back):
            t = _ease((k + 1) / n_back)
            hand_pos = _lerp(palm, arm.entry, t)
            moving_arm = Arm(arm.entry, hand_pos, arm.skin, arm.sleeve, arm.width_mm)
            if clear is None and self._covered(moving_arm, final) == 0.0:
                clear = self.frame
            yield _State([], moving_arm)
        if clear is None:
            clear = self.frame
        event = {"type": "play", "frame": play_frame, "seat": seat.value, "card": card.id,
                 "clear_frame": clear, "hand_index": hand_no}
        self.events.append(event)
        if trick_done:
            trick = extra_trick.tricks[-1]
            self.events.append({"type": "trick", "frame": play_frame,
                                "winner": trick.winner.value if trick.winner else None,
                                "hand_index": hand_no})
            if extra_trick.complete:
                self.events.append({"type": "hand", "frame": play_frame,
                                    "score": extra_trick.scores, "hand_index": hand_no})
        # The card must stay visible: nothing else moves until MIN_VISIBLE_S after clear.
        need = clear + math.ceil(MIN_VISIBLE_S * self.fps) - self.frame
        yield from self._pause(max(need, 1))

    def _sweep(self, winner: Seat, square: bool) -> Iterator[_State]:
        """The winner's arm sweeps every lying card off towards its edge."""
        rng = self.rng
        cards = [item.card for item in self.lying]
        if not cards:
            return
        reacher = winner if winner in self._arm_seats() else self._reacher(winner)
        cx = sum(c.x for c in cards) / len(cards)
        cy = sum(c.y for c in cards) / len(cards)
        dx, dy = SEAT_DIRECTION[reacher]
        tw = self.twilight
        # Gather point in front of the winner, beside the Twilight card.
        pile = (tw.x + dx * PILE_DISTANCE_MM, tw.y + dy * PILE_DISTANCE_MM)
        target = pile if square else (cx * 0.5 + pile[0] * 0.5, cy * 0.5 + pile[1] * 0.5)
        arm = random_arm(rng, reacher, target, self.table, self.looks[reacher])
        n = self._n_range(REACH_S)
        for k in range(n):
            t = _ease((k + 1) / n)
            yield _State([], Arm(arm.entry, _lerp(arm.entry, target, t), arm.skin, arm.sleeve,
                                 arm.width_mm))
        self.lying = []
        self._changed()
        moving = list(cards)
        if square:
            base_angle = rng.choice([0.0, 90.0]) + tw.angle
            n = self._n(0.6)
            for k in range(n):
                t = _ease((k + 1) / n)
                moving = [c.moved(*_lerp((c.x, c.y), pile, t),
                                  _angle_lerp(c.angle, base_angle + (c.angle // 180) * 180, t))
                          for c in cards]
                yield _State(moving, Arm(arm.entry, target, arm.skin, arm.sleeve, arm.width_mm))
            yield from (_State(moving, Arm(arm.entry, target, arm.skin, arm.sleeve,
                                           arm.width_mm)) for _ in range(self._n(0.4)))
        # Off towards the winner's edge, cards drawn together behind the hand.
        w, h = self.table.size
        s = self.table.camera.px_per_mm
        far = (target[0] + dx * (w / s), target[1] + dy * (h / s))
        n = self._n_range((0.6, 0.9))
        start = moving
        for k in range(n):
            t = _ease((k + 1) / n)
            hand_pos = _lerp(target, far, t)
            gather = min(1.0, t * 2)
            moving = []
            for c in start:
                pos = _lerp((c.x, c.y), target, gather * 0.7)
                moving.append(c.moved(pos[0] + hand_pos[0] - target[0],
                                      pos[1] + hand_pos[1] - target[1], c.angle))
            yield _State(moving, Arm(arm.entry, hand_pos, arm.skin, arm.sleeve, arm.width_mm))
        yield from self._pause(self._n(0.3))

    def _bump(self) -> Iterator[_State]:
        """Someone knocks the table: the Twilight card shifts a few mm and turns a little."""
        rng = self.rng
        old = self.twilight
        home = self._home
        # Knocks never carry it far from where it was put (so its sides keep their seats).
        x = float(np.clip(old.x + rng.uniform(-6, 6), home.x - BUMP_MAX_MM, home.x + BUMP_MAX_MM))
        y = float(np.clip(old.y + rng.uniform(-6, 6), home.y - BUMP_MAX_MM, home.y + BUMP_MAX_MM))
        turn = (old.angle - home.angle + 180.0) % 360.0 - 180.0 + rng.uniform(-4, 4)
        new = old.moved(x, y, home.angle + float(np.clip(turn, -BUMP_MAX_DEG, BUMP_MAX_DEG)))
        for k in range(2):
            t = (k + 1) / 2
            self.twilight = old.moved(*_lerp((old.x, old.y), (new.x, new.y), t),
                                      _angle_lerp(old.angle, new.angle, t))
            self._changed()
            yield _State()
        yield from self._pause(self._n(0.5))

    def _rotate_three(self) -> Iterator[_State]:
        """R8: the player right of the soloist becomes soloist; the Twilight card turns."""
        old = self.soloist
        new_soloist = old.right
        names = dict(self.names)
        names[old.opposite] = self.names[old.left]
        names[old.left] = None
        self.names = names
        self.soloist = new_soloist
        tw = self.twilight
        turn = self.rng.choice([-90.0, 90.0])
        arm = random_arm(self.rng, new_soloist, (tw.x, tw.y), self.table,
                         self.looks[new_soloist])
        n = self._n(0.7)
        for k in range(n):
            t = _ease((k + 1) / n)
            yield _State([], Arm(arm.entry, _lerp(arm.entry, (tw.x, tw.y), t), arm.skin,
                                 arm.sleeve, arm.width_mm))
        # The Twilight card leaves the board while it turns under the hand.
        hidden = self.twilight
        self._twilight_on_board = False
        self._changed()
        n = self._n(0.8)
        for k in range(n):
            t = _ease((k + 1) / n)
            turning = hidden.moved(hidden.x, hidden.y, hidden.angle + turn * t)
            yield _State([turning], Arm(arm.entry, (tw.x, tw.y), arm.skin, arm.sleeve,
                                        arm.width_mm))
        self.twilight = hidden.moved(hidden.x, hidden.y, (hidden.angle + turn) % 360.0)
        self._home = self.twilight.moved(self._home.x, self._home.y,
                                         (self._home.angle + turn) % 360.0)
        self._twilight_on_board = True
        self.moon_seats = tuple(sorted((new_soloist, new_soloist.opposite),
                                       key=lambda s: s.index))
        self._changed()
        n = self._n_range(WITHDRAW_S)
        for k in range(n):
            t = _ease((k + 1) / n)
            yield _State([], Arm(arm.entry, _lerp((tw.x, tw.y), arm.entry, t), arm.skin,
                                 arm.sleeve, arm.width_mm))
        yield from self._pause(self._n(1.0))

    # -- records ----------------------------------------------------------------------------
    def match_records(self) -> list[dict[str, Any]]:
        """The complete hands so far as C4 match records (standard goal, R7): a new
        match starts after the hand that ended the previous one."""
        from companion.core.match import Match
        from companion.core.records import read_hand

        matches: list[dict[str, Any]] = []
        match: Match | None = None
        for record in self.hand_records:
            if len(record["plays"]) < 28:
                break
            if match is None or match.over:
                match = Match(self.mode, MATCH_GOAL)
                matches.append({"format": "twilight-match/1", "mode": self.mode,
                                "goal": MATCH_GOAL, "hands": []})
            setup, hand = read_hand(record, self.mode)
            match.add(setup, hand)
            matches[-1]["hands"].append(record)
        return matches


class SimulatedTable:
    """The hand movie as a camera: ``read()`` gives the next frame, ``None`` at the end.

    ``hands=0`` plays for ever. ``speed`` scales the pace of the table (2: twice as
    fast). With ``realtime`` (default) ``read()`` waits so frames come at ``fps``
    like a live camera; pass ``realtime=False`` to get frames as fast as they render:
    the table's time then moves on ``1/fps`` seconds per frame read, however long
    the reader takes (nothing is dropped: see :attr:`live`).

    ``truth_events`` grows as frames are read (C7 form); with ``keep_hands`` only the
    events of the newest hands are kept (an endless demo must not grow), and
    :attr:`truth_dropped` counts the events let go so far. ``end_still_s``: after the
    last of ``hands`` hands the table lies still this long before the camera ends, so
    the last card laid is seen (and can be fixed). Extra keyword options go to
    :class:`HandMovie` (``mode``, ``soloist``, ``bump``, ...).
    """

    def __init__(self, seed: int | None = None, style: int = 0,
                 size: tuple[int, int] = (1280, 720), fps: float = 10.0, hands: int = 0,
                 speed: float = 1.0, realtime: bool = True, keep_hands: int | None = None,
                 end_still_s: float = 0.0, **options: Any) -> None:
        if seed is None:
            seed = int.from_bytes(os.urandom(4), "little")
        if keep_hands is not None and keep_hands < 1:
            raise ValueError(f"keep_hands must be at least 1, not {keep_hands}")
        self.seed = seed
        self.fps = float(fps)
        self.realtime = realtime
        self.keep_hands = keep_hands
        self.end_still_s = float(end_still_s)
        self.movie = HandMovie(seed, style, tuple(size), fps, hands=hands, speed=speed,
                               **options)
        self._frames: Iterator[MovieFrame] | None = self._movie_then_still()
        self._t0: float | None = None
        self.frame_index = -1
        #: The C7 truth of what has been played so far (the newest hands: ``keep_hands``).
        self.truth_events = self.movie.events
        #: How many of the first truth events were let go (``keep_hands``).
        self.truth_dropped = 0
        #: The table's hand index of ``hand_records[0]``.
        self.first_kept_hand = 0

    @property
    def live(self) -> bool:
        """Frames come at the table's pace whether read or not (a live camera), or at
        the reader's pace, every one in order (a recording)."""
        return self.realtime

    def _movie_then_still(self) -> Iterator[MovieFrame]:
        movie = self.movie
        yield from movie.frames()
        for _ in range(math.ceil(self.end_still_s * self.fps)):
            yield movie._frame(_State())
            movie.frame += 1

    def read(self) -> np.ndarray | None:
        """The next frame (BGR uint8), or ``None`` once the movie (or ``close``) ended."""
        if self._frames is None:
            return None
        frame = next(self._frames, None)
        if frame is None:
            self._frames = None
            return None
        self.frame_index = frame.index
        if self.keep_hands is not None:
            self._let_old_hands_go()
        if self.realtime:
            now = time.monotonic()
            if self._t0 is None:
                self._t0 = now
            due = self._t0 + frame.index / self.fps
            if due > now:
                time.sleep(due - now)
        return frame.image

    def _let_old_hands_go(self) -> None:
        assert self.keep_hands is not None
        records = self.movie.hand_records
        extra = len(records) - self.keep_hands
        if extra <= 0:
            return
        self.first_kept_hand += extra
        del records[:extra]
        events = self.movie.events
        n = 0
        while n < len(events) and events[n]["hand_index"] < self.first_kept_hand:
            n += 1
        del events[:n]
        self.truth_dropped += n

    @property
    def hand_records(self) -> list[dict[str, Any]]:
        """C2 records of the hands played so far (from hand ``first_kept_hand``)."""
        return self.movie.hand_records

    def close(self) -> None:
        self._frames = None


# -- the simulate command ---------------------------------------------------------------------
def _parse_size(text: str) -> tuple[int, int]:
    try:
        w, h = (int(v) for v in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"--size must be WIDTHxHEIGHT, e.g. 1280x720, not {text!r}") from None
    if not (64 <= w <= 8192 and 64 <= h <= 8192):
        raise ValueError(f"--size {text!r} out of range (64..8192 px a side)")
    return w, h


def _parse_deck(text: str | None) -> str | int | None:
    """``--deck``: ``builtin`` or a procedural deck's seed (None: no randomisation)."""
    if text is None:
        return None
    text = str(text).strip()
    if text == "builtin":
        return "builtin"
    try:
        seed = int(text)
    except ValueError:
        raise ValueError(f"--deck must be builtin or a deck seed (an integer), "
                         f"not {text!r}") from None
    if seed in (0, 1):  # the ints 0 and 1 name the art styles: use --style for those
        raise ValueError("--deck 0 and 1 are the art styles: use builtin or --style")
    return seed


def run(args: argparse.Namespace) -> int:
    """``twilight-companion simulate``: frames (or a video) plus the truth: truth.jsonl
    (C7 events), hands.json (the list of C2 hand records), match-1.json ... (C4 match
    records, each one ``score`` accepts) and frames.jsonl (per frame, what ``recognise``
    should see in the C6 form, and which sides are occluded). With ``--deck`` the
    movie is randomised (``HandMovie(deck=...)``) and factors.json says what was drawn."""
    try:
        size = _parse_size(str(args.size))
        if args.hands < 1:
            raise ValueError(f"--hands must be at least 1, not {args.hands}")
        if args.style not in STYLES:
            raise ValueError(f"--style must be one of {', '.join(map(str, STYLES))}, "
                             f"not {args.style}")
        if not args.fps > 0:
            raise ValueError(f"--fps must be positive, not {args.fps}")
        mode = getattr(args, "mode", None) or "four"
        deck = _parse_deck(getattr(args, "deck", None))
        movie = HandMovie(args.seed, args.style, size, args.fps, mode=mode,
                          soloist=getattr(args, "soloist", None), hands=args.hands,
                          new_moon_cards=bool(getattr(args, "new_moon_cards", False)),
                          deck=deck)
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
    except (ValueError, OSError) as exc:
        print(f"twilight-companion simulate: {exc}", file=sys.stderr)
        return 2
    writer = None
    if args.video:
        path = out / "movie.mp4"
        writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"mp4v"), args.fps, size)
        if not writer.isOpened():
            path = out / "movie.avi"
            writer = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), args.fps, size)
        if not writer.isOpened():
            print(f"twilight-companion simulate: cannot write a video in {out}", file=sys.stderr)
            return 2
    written = 0
    try:
        with open(out / "truth.jsonl", "w") as truth, open(out / "frames.jsonl", "w") as seen:
            for frame in movie.frames():
                seen.write(json.dumps({"frame": frame.index, **frame.truth,
                                       "occluded": frame.occluded, "arm": frame.arm}) + "\n")
                assert frame.image is not None
                if writer is not None:
                    writer.write(frame.image)
                else:
                    cv2.imwrite(str(out / FRAME_PATTERN.format(frame.index)), frame.image,
                                [cv2.IMWRITE_JPEG_QUALITY, 95])
                while written < len(movie.events):
                    truth.write(json.dumps(movie.events[written]) + "\n")
                    written += 1
        (out / "hands.json").write_text(json.dumps(movie.hand_records, indent=1) + "\n")
        if movie.factors:  # a randomised movie: what was drawn
            (out / "factors.json").write_text(json.dumps(
                {"deck": movie.deck, **movie.factors}, indent=1) + "\n")
        for n, match in enumerate(movie.match_records(), start=1):
            (out / MATCH_PATTERN.format(n)).write_text(json.dumps(match, indent=1) + "\n")
    finally:
        if writer is not None:
            writer.release()
    return 0


