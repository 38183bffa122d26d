"""A match: hands adding up to the goal, dealer rotation, three players (R2, R7, R8).

Standard library only.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from companion.core.cards import Cult, Seat
from companion.core.rules import Hand, RuleError

MODES = ("four", "three")
GOALS = ("standard", "magic")
PAIRINGS = ("rotating", "fixed")
STANDARD_GOAL = 1000
#: Magic-number goals in the order they beat each other (R7).
MAGIC_NUMBERS = (333, 666, 999)


class HandSetup:
    """How a hand is laid out before its first card: the Twilight card's moon
    sides, who dealt and leads, and (three players) soloist and names (R2, R8)."""

    __slots__ = ("moon_seats", "dealer", "leader", "soloist", "names")

    def __init__(
        self,
        moon_seats: tuple[Seat, Seat] = (Seat.NORTH, Seat.SOUTH),
        dealer: Seat | None = None,
        leader: Seat | None = None,
        soloist: Seat | None = None,
        names: dict[Seat, str | None] | None = None,
    ) -> None:
        self.moon_seats = moon_seats
        self.dealer = dealer
        self.leader = leader
        self.soloist = soloist
        self.names: dict[Seat, str | None] = dict(names) if names else {}

    def replace(self, **changes: Any) -> HandSetup:
        """A copy with some fields changed."""
        fields = {k: getattr(self, k) for k in self.__slots__}
        fields.update(changes)
        return HandSetup(**fields)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, HandSetup) and all(
            getattr(self, k) == getattr(other, k) for k in self.__slots__)

    def __repr__(self) -> str:
        return "HandSetup(" + ", ".join(f"{k}={getattr(self, k)!r}" for k in self.__slots__) + ")"

    @property
    def new_moon(self) -> Seat | None:
        return self.soloist.opposite if self.soloist else None

    @property
    def first_leader(self) -> Seat | None:
        """Who leads: as set, else the soloist (R8), else left of the dealer (R2)."""
        if self.leader is not None:
            return self.leader
        if self.soloist is not None:
            return self.soloist
        if self.dealer is not None:
            return self.dealer.left
        return None

    def to_dict(self) -> dict[str, Any]:
        return {
            "moon_seats": [s.value for s in self.moon_seats],
            "dealer": self.dealer.value if self.dealer else None,
            "leader": self.first_leader.value if self.first_leader else None,
            "soloist": self.soloist.value if self.soloist else None,
            "new_moon": self.new_moon.value if self.new_moon else None,
            "names": {s.value: n for s, n in self.names.items()},
        }


def goal_reached(total: int, goal: str) -> int | None:
    """Index of the goal a total reaches, lower beats higher; ``None`` if none (R7).

    Standard: 0 for 1000 or more. Magic: 0 for exactly 333, 1 for 666, 2 for 999,
    3 for 1000 or more.
    """
    if goal == "magic":
        if total in MAGIC_NUMBERS:
            return MAGIC_NUMBERS.index(total)
        return 3 if total >= STANDARD_GOAL else None
    return 0 if total >= STANDARD_GOAL else None


def decide(totals: Mapping[str, int], goal: str) -> str | None:
    """The winner once some total reached the goal: a key of ``totals``,
    ``"draw"``, or ``None`` while the match goes on (R7).

    Standard: the higher total wins. Magic: the goal earlier in 333, 666, 999,
    1000+ wins; among those who reached the same goal the higher total wins.
    """
    reached = {k: g for k, v in totals.items() if (g := goal_reached(v, goal)) is not None}
    if not reached:
        return None
    if goal == "magic":
        best = min(reached.values())
        contenders = [k for k, g in reached.items() if g == best]
    else:
        contenders = list(totals)
    top = max(totals[k] for k in contenders)
    leaders = [k for k in contenders if totals[k] == top]
    return leaders[0] if len(leaders) == 1 else "draw"


class PlayedHand:
    """A complete hand of a match with its layout."""

    __slots__ = ("setup", "hand")

    def __init__(self, setup: HandSetup, hand: Hand) -> None:
        self.setup = setup
        self.hand = hand


class Match:
    """Hands of one match and their totals.

    ``mode`` "four" totals by party; "three" by person's name (R8), unless
    ``pairing="fixed"`` which totals by party again.
    """

    def __init__(self, mode: str = "four", goal: str = "standard", pairing: str = "rotating"):
        if mode not in MODES:
            raise RuleError(f"unknown mode {mode!r} (four or three)", "R8")
        if goal not in GOALS:
            raise RuleError(f"unknown goal {goal!r} (standard or magic)", "R7")
        if pairing not in PAIRINGS:
            raise RuleError(f"unknown pairing {pairing!r} (rotating or fixed)", "R8")
        self.mode = mode
        self.goal = goal
        self.pairing = pairing
        self.hands: list[PlayedHand] = []

    @property
    def by_person(self) -> bool:
        return self.mode == "three" and self.pairing != "fixed"

    def totals(self) -> dict[str, int]:
        if not self.by_person:
            totals = {"sun": 0, "moon": 0}
            for ph in self.hands:
                for party, points in ph.hand.scores.items():
                    totals[party] += points
            return totals
        people: dict[str, int] = {}
        for ph in self.hands:
            for person, points in person_scores(ph).items():
                people[person] = people.get(person, 0) + points
        return people

    def winner(self) -> str | None:
        return decide(self.totals(), self.goal)

    @property
    def over(self) -> bool:
        return self.winner() is not None

    def add(self, setup: HandSetup, hand: Hand) -> None:
        """Add a complete hand. Refused once the match is over (R7)."""
        if not hand.complete:
            raise RuleError(
                f"hand {len(self.hands) + 1} is not complete: {len(hand.plays)} of 28 cards", "R7"
            )
        if self.over:
            raise RuleError(
                f"hand {len(self.hands) + 1} comes after the hand that ended the match", "R7"
            )
        self.hands.append(PlayedHand(setup, hand))

    def next_setup(self, last: HandSetup | None = None) -> HandSetup:
        """The layout of the next hand after ``last`` (default: the last hand played):
        the deal passes left (R2); with three rotating players the soloist, new moon
        and names rotate (R8)."""
        if last is None:
            if not self.hands:
                return HandSetup()
            last = self.hands[-1].setup
        if self.mode == "three" and last.soloist is not None:
            if self.pairing == "fixed":
                return HandSetup(last.moon_seats, dealer=last.dealer.left if last.dealer else None,
                                 soloist=last.soloist, names=dict(last.names))
            return rotate_three(last)
        dealer = last.dealer.left if last.dealer else None
        if dealer is None and last.leader is not None:
            dealer = last.leader  # the old leader sat left of the old dealer
        return HandSetup(last.moon_seats, dealer=dealer, names=dict(last.names))

    def summary(self) -> dict[str, Any]:
        """The C4 output form."""
        winner = self.winner()
        return {
            "hands": [{"score": ph.hand.scores} for ph in self.hands],
            "totals": self.totals(),
            "over": winner is not None,
            "winner": winner,
        }


def person_scores(ph: PlayedHand) -> dict[str, int]:
    """Three players: the soloist scores the moon party's points, each sun player
    the sun party's; the new-moon seat scores nothing (R8)."""
    setup = ph.setup
    out: dict[str, int] = {}
    for seat, name in setup.names.items():
        if name is None or seat == setup.new_moon:
            continue
        party = Cult.MOON if seat in setup.moon_seats else Cult.SUN
        out[name] = out.get(name, 0) + ph.hand.score(party)
    return out


def rotate_three(last: HandSetup) -> HandSetup:
    """R8: the player left of the soloist moves to the new-moon seat and deals; the
    player right of the old soloist becomes soloist; the Twilight card turns so its
    moon sides point at the new soloist and the new empty seat.

    >>> s = rotate_three(HandSetup((Seat.NORTH, Seat.SOUTH), soloist=Seat.SOUTH))
    >>> s.soloist, s.new_moon, s.dealer
    (Seat.EAST, Seat.WEST, Seat.NORTH)
    """
    assert last.soloist is not None
    old_solo = last.soloist
    mover = old_solo.left
    old_empty = old_solo.opposite
    soloist = old_solo.right
    names = dict(last.names)
    if names:
        names[old_empty] = names.get(mover)
        names[mover] = None
    moon = (soloist, soloist.opposite)
    moon_seats = moon if moon[0].index < moon[1].index else (moon[1], moon[0])
    return HandSetup(moon_seats, dealer=old_empty, soloist=soloist, names=names)
