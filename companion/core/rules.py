"""One hand of Twilight: plays, tricks, purgatory, souls and score (R2–R6, R9).

Standard library only. A :class:`Hand` takes checked plays and can take them
back; everything else (tricks, who is on turn, what lies, the score) follows
from the plays:

>>> from companion.core.cards import Card, Seat
>>> hand = Hand(leader=Seat.EAST)
>>> hand.play(Seat.EAST, Card.parse("sun-souls-7"))
>>> hand.next
(Seat.SOUTH, Cult.MOON)
>>> hand.undo()
Play(seat=Seat.EAST, card=Card.parse('sun-souls-7'))
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from companion.core.cards import SEATS, Card, Cult, Kind, Seat

CARDS_PER_HAND = 28
TRICKS_PER_HAND = 7


class RuleError(ValueError):
    """Something the rules refuse. ``rule`` is the section of docs/rules.md (e.g. "R3")."""

    def __init__(self, message: str, rule: str) -> None:
        super().__init__(message)
        self.rule = rule


class IllegalPlay(RuleError):
    """A play the rules refuse (R9). Names the play by its index from 1, its
    seat and card, and the rule it breaks. The hand is unchanged."""

    def __init__(self, index: int, seat: Seat | str, card: Card | str, reason: str, rule: str):
        self.index = index
        self.seat = str(seat)
        self.card = str(card)
        self.reason = reason
        super().__init__(f"play {index} ({self.seat}, {self.card}): {reason} ({rule})", rule)


class Play:
    """A card laid at a seat's side of the Twilight card (for that seat, R3).
    ``card`` is ``None`` for a gap: a card laid there in turn that nobody has named
    yet (the camera could not read it); it is named later with :meth:`Hand.replace`."""

    __slots__ = ("seat", "card")

    def __init__(self, seat: Seat, card: Card | None) -> None:
        self.seat = seat
        self.card = card

    @property
    def gap(self) -> bool:
        return self.card is None

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, Play) and self.seat is other.seat
                and self.card is other.card)

    def __hash__(self) -> int:
        return hash((self.seat.value, self.card.id if self.card else None))

    def __repr__(self) -> str:
        return f"Play(seat={self.seat!r}, card={self.card!r})"

    def to_dict(self) -> dict[str, Any]:
        if self.card is None:
            return {"seat": self.seat.value, "card": None, "gap": True}
        return {"seat": self.seat.value, "card": self.card.id}


class Trick:
    """Up to four plays in clockwise order from ``leader``."""

    __slots__ = ("leader", "plays", "taker", "lies", "open")

    def __init__(self, leader: Seat) -> None:
        self.leader = leader
        self.plays: list[Play] = []
        #: Seat with the highest card (first played among equals); set when complete.
        self.taker: Seat | None = None
        #: A complete trick with a purgatory in it is won by nobody and lies (R4).
        self.lies = False
        #: A complete trick with a gap whose outcome is not known yet: nobody knows
        #: who took it until the gap is named or the next trick's first card shows
        #: who leads (its leader's card was the highest, R4).
        self.open = False

    @property
    def complete(self) -> bool:
        return len(self.plays) == 4

    @property
    def winner(self) -> Seat | None:
        """The seat that took the trick, ``None`` while incomplete or lying."""
        if self.taker is None or self.lies:
            return None
        return self.taker

    @property
    def cards(self) -> list[Card]:
        """The trick's named cards (a gap has none yet)."""
        return [p.card for p in self.plays if p.card is not None]

    def to_dict(self) -> dict[str, Any]:
        out = {
            "leader": self.leader.value,
            "plays": [p.to_dict() for p in self.plays],
            "winner": self.winner.value if self.winner else None,
            "lies": self.lies,
        }
        if self.open:
            out["open"] = True
        return out


def highest(plays: Sequence[Play]) -> Play:
    """The winning play of a trick: highest rank, first played among equals (R4).
    The plays must all be named (no gap)."""
    best = plays[0]
    for p in plays[1:]:
        if p.card.rank > best.card.rank:  # type: ignore[union-attr]
            best = p
    return best


def multiplier_of(shrines: Iterable[Card]) -> int:
    """Sum of the built shrines' multipliers: altar 1, temple 2, obelisk 3 (R6)."""
    return sum(card.shrine for card in shrines)


class Hand:
    """A hand in progress or complete.

    ``moon_seats`` are the two opposite seats at the Twilight card's moon sides.
    ``leader`` leads the first trick; with ``leader=None`` the first play's seat
    leads. ``expected_leader`` is only shown as on turn before the first play
    (the table may still lead from another seat, C7).
    """

    def __init__(
        self,
        moon_seats: Sequence[Seat] = (Seat.NORTH, Seat.SOUTH),
        leader: Seat | None = None,
        *,
        expected_leader: Seat | None = None,
    ) -> None:
        a, b = moon_seats
        if a.opposite is not b:
            raise RuleError(
                f"moon seats must be opposite each other, not {a.value} and {b.value} (R1)", "R1"
            )
        self.moon_seats: tuple[Seat, Seat] = (a, b) if a.index < b.index else (b, a)
        self.leader = leader
        self.expected_leader = expected_leader if leader is None else leader
        self._cult = {s: (Cult.MOON if s in self.moon_seats else Cult.SUN) for s in SEATS}
        self._reset()

    # -- state ------------------------------------------------------------------------------
    def _reset(self) -> None:
        self.plays: list[Play] = []
        self.tricks: list[Trick] = []
        self._played = 0  # bit mask of played cards
        self._lying: list[Trick] = []
        self._won: dict[Cult, list[Card]] = {Cult.SUN: [], Cult.MOON: []}
        self._on_turn: Seat | None = self.leader
        #: the last trick was complete with a gap in it and is still open: the next
        #: card may be laid at any seat, and tells who leads (R4)
        self._open_last = False

    def cult_of(self, seat: Seat) -> Cult:
        """The cult a seat must have played (R3): the side of the Twilight card it faces."""
        return self._cult[seat]

    @property
    def complete(self) -> bool:
        return len(self.plays) == CARDS_PER_HAND

    @property
    def next(self) -> tuple[Seat, Cult] | None:
        """Who is on turn and the cult he must have played; ``None`` once complete."""
        if len(self.plays) == CARDS_PER_HAND:
            return None
        if self.plays and self._on_turn is None:
            return None  # after an open trick (a gap in it) whoever leads is not known
        seat = self._on_turn or self.expected_leader
        if seat is None:
            return None
        return seat, self._cult[seat]

    @property
    def first_leader(self) -> Seat | None:
        return self.tricks[0].leader if self.tricks else self.leader

    @property
    def lying(self) -> list[Card]:
        """Cards of finished tricks that lie, won by nobody yet (R4); empty once complete."""
        if self.complete:
            return []
        return [c for t in self._lying for c in t.cards]

    @property
    def lying_tricks(self) -> list[Trick]:
        return [] if self.complete else list(self._lying)

    @property
    def neutral(self) -> list[Card]:
        """Tricks still lying after the seventh trick count for nobody (R4)."""
        if not self.complete:
            return []
        return [c for t in self._lying for c in t.cards]

    def won(self, party: Cult) -> list[Card]:
        return list(self._won[party])

    def souls(self, party: Cult) -> int:
        return sum(c.souls for c in self._won[party])

    def built_shrines(self, party: Cult) -> list[Card]:
        """Shrines of the party's own cult that it took (R6)."""
        return [c for c in self._won[party] if c.shrine and c.cult is party]

    def multiplier(self, party: Cult) -> int:
        return multiplier_of(self.built_shrines(party))

    def score(self, party: Cult) -> int:
        return self.souls(party) * self.multiplier(party)

    @property
    def scores(self) -> dict[str, int]:
        return {"sun": self.score(Cult.SUN), "moon": self.score(Cult.MOON)}

    def played(self, card: Card) -> bool:
        return bool(self._played & card.bit)

    @property
    def gaps(self) -> list[int]:
        """Indices (from 1) of the plays that are gaps, not named yet."""
        return [i for i, p in enumerate(self.plays, 1) if p.card is None]

    @property
    def provisional(self) -> bool:
        """While a gap is open the tricks and score are provisional."""
        return any(p.card is None for p in self.plays)

    def allows(self, seat: Seat, card: Card) -> bool:
        """Whether the rules accept ``card`` at ``seat`` now (R3, R9): :meth:`check`
        without the message."""
        try:
            self.check(seat, card)
        except IllegalPlay:
            return False
        return True

    def gap_choices(self, k: int) -> list[Card]:
        """The cards that can be named for play ``k`` (from 1, a gap or a named card):
        those with which every play of the hand is still legal (R3, R4, R9)."""
        from companion.core.cards import cards_of

        play = self.plays[k - 1]
        out = []
        for card in cards_of(self._cult[play.seat]):
            try:
                self._trial(k, card)
            except IllegalPlay:
                continue
            out.append(card)
        return out

    def possible_cards(self, seat: Seat) -> list[Card]:
        """Cards that could legally be laid at ``seat`` now if it were on turn."""
        from companion.core.cards import cards_of

        cult = self._cult[seat]
        return [c for c in cards_of(cult) if not self._played & c.bit]

    # -- changes ----------------------------------------------------------------------------
    def check(self, seat: Seat, card: Card) -> None:
        """Raise :class:`IllegalPlay` if ``card`` may not be laid at ``seat`` now (R3, R9)."""
        self._check_turn(seat, card)
        cult = self._cult[seat]
        if card.cult is not cult:
            raise IllegalPlay(
                len(self.plays) + 1, seat, card,
                f"{seat.value} sits at a {cult.value} side and must have a {cult.value} card played",
                "R3",
            )
        if self._played & card.bit:
            raise IllegalPlay(len(self.plays) + 1, seat, card,
                              f"{card.id} was already played this hand", "R9")

    def _check_turn(self, seat: Seat, card: Card | str) -> None:
        index = len(self.plays) + 1
        if index > CARDS_PER_HAND:
            raise IllegalPlay(index, seat, card, "the hand is over after seven tricks", "R9")
        on_turn = self._on_turn
        if on_turn is not None and seat is not on_turn:
            trick = self.tricks[-1] if self.tricks and not self.tricks[-1].complete else None
            if trick is not None and any(p.seat is seat for p in trick.plays):
                reason = f"{seat.value} already has a card in this trick; {on_turn.value} is on turn"
            else:
                reason = f"{seat.value} is not on turn, {on_turn.value} is"
            raise IllegalPlay(index, seat, card, reason, "R3")

    def play(self, seat: Seat, card: Card) -> None:
        """Lay ``card`` at ``seat``'s side. Raises :class:`IllegalPlay` and changes
        nothing when the rules refuse it (R9)."""
        on_turn = self._on_turn
        if (
            len(self.plays) >= CARDS_PER_HAND
            or (on_turn is not None and seat is not on_turn)
            or card.cult is not self._cult[seat]
            or self._played & card.bit
        ):
            self.check(seat, card)  # raises, naming the play and the rule
        self._apply(Play(seat, card))

    def play_gap(self, seat: Seat) -> None:
        """A card was laid at ``seat`` in turn but nobody could name it: a gap (R3's
        turn order holds; its cult, rank and souls wait for :meth:`replace`). Raises
        :class:`IllegalPlay` when ``seat`` is not on turn or the hand is over."""
        self._check_turn(seat, "unknown card")
        self._apply(Play(seat, None))

    def _apply(self, play: Play) -> None:
        tricks = self.tricks
        if not tricks or len(tricks[-1].plays) == 4:
            if self._open_last:
                self._settle_open(tricks[-1], play.seat)
            tricks.append(Trick(play.seat))
        trick = tricks[-1]
        trick.plays.append(play)
        self.plays.append(play)
        if play.card is not None:
            self._played |= play.card.bit
        if len(trick.plays) < 4:
            self._on_turn = play.seat.left
            return
        if any(p.card is None for p in trick.plays):
            # who took it is not known: the next card, at any seat, shows who leads
            trick.open = True
            self._open_last = True
            self._on_turn = None
            return
        self._finish(trick, highest(trick.plays))

    def _finish(self, trick: Trick, best: Play) -> None:
        taker = best.seat
        trick.taker = taker
        # purgatory outranks everything, so the best card is one if there is one
        trick.lies = best.card is not None and best.card.kind is Kind.PURGATORY
        if trick.lies:
            self._lying.append(trick)
        else:
            pile = self._won[self._cult[taker]]
            for t in self._lying:
                pile.extend(t.cards)
            pile.extend(trick.cards)
            self._lying = []
        self._on_turn = taker

    def _settle_open(self, trick: Trick, leader: Seat) -> None:
        """The first card after an open trick is laid at ``leader``: that seat's card
        was the trick's highest (R4). If it is named, the trick is settled by it
        (provisionally: the gap is still to be named); if it is the gap, the trick's
        cards stay out of every pile until the gap is named."""
        self._open_last = False
        best = next(p for p in trick.plays if p.seat is leader)
        if best.card is not None:
            trick.open = False
            self._finish(trick, best)

    def undo(self) -> Play:
        """Take back the last play; the hand is exactly as before it. Raises
        :class:`RuleError` when nothing was played."""
        if not self.plays:
            raise RuleError("nothing to undo: no card has been played in this hand", "R9")
        plays = self.plays[:-1]
        last = self.plays[-1]
        self._reset()
        for p in plays:
            self._apply(p)
        return last

    def replace(self, k: int, card: Card) -> Play:
        """Correct the ``k``-th play (from 1) to ``card``, re-checking every play
        after it. On a refusal the hand is unchanged. Returns the old play."""
        if not 1 <= k <= len(self.plays):
            raise RuleError(
                f"no play {k} to correct: the hand has {len(self.plays)} plays", "R9"
            )
        old = self.plays[k - 1]
        self._take(self._trial(k, card))
        return old

    def _trial(self, k: int, card: Card) -> Hand:
        """The hand with play ``k`` (from 1) named ``card``, every play checked again;
        raises :class:`IllegalPlay` (this hand unchanged)."""
        new = list(self.plays)
        for j, other in enumerate(new, 1):
            if j != k and other.card is card:
                raise IllegalPlay(k, new[k - 1].seat, card,
                                  f"{card.id} was already played this hand (play {j})", "R9")
        new[k - 1] = Play(new[k - 1].seat, card)
        trial = Hand(self.moon_seats, self.leader, expected_leader=self.expected_leader)
        for p in new:
            if p.card is None:
                trial.play_gap(p.seat)
            else:
                trial.play(p.seat, p.card)
        return trial

    def _take(self, other: Hand) -> None:
        self.plays = other.plays
        self.tricks = other.tricks
        self._played = other._played
        self._lying = other._lying
        self._won = other._won
        self._on_turn = other._on_turn
        self._open_last = other._open_last

    def copy(self) -> Hand:
        twin = Hand(self.moon_seats, self.leader, expected_leader=self.expected_leader)
        for p in self.plays:
            twin._apply(p)
        return twin

    # -- output -----------------------------------------------------------------------------
    def state_key(self) -> tuple[Any, ...]:
        """Everything observable about the hand, for equality checks."""
        return (self.moon_seats, self.leader, self.expected_leader, tuple(self.plays),
                self.to_dict())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Hand) and self.state_key() == other.state_key()

    __hash__ = None  # type: ignore[assignment]

    def to_dict(self) -> dict[str, Any]:
        """The C3 form."""
        nxt = self.next
        return {
            "complete": self.complete,
            "tricks": [t.to_dict() for t in self.tricks],
            "next": {"seat": nxt[0].value, "cult": nxt[1].value} if nxt else None,
            "lying": [c.id for c in self.lying],
            "won": {p.value: [c.id for c in self._won[p]] for p in (Cult.SUN, Cult.MOON)},
            "neutral": [c.id for c in self.neutral],
            "souls": {p.value: self.souls(p) for p in (Cult.SUN, Cult.MOON)},
            "multiplier": {p.value: self.multiplier(p) for p in (Cult.SUN, Cult.MOON)},
            "score": self.scores,
            "provisional": self.provisional,
        }

    def __repr__(self) -> str:
        return f"<Hand {len(self.plays)} plays, next={self.next}, score={self.scores}>"
