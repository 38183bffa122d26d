"""Cards, cults, seats and parties of Twilight (RULES R1, R2; CONTRACT C1).

Standard library only. Every value parses from its C1 name and prints back:

>>> Card.parse("moon-high-priest").id
'moon-high-priest'
>>> Seat.parse("north").left is Seat.EAST
True
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field


class UnknownName(ValueError):
    """A card, seat or cult name that is not in CONTRACT C1 (R9)."""


class Cult(enum.Enum):
    """The two cults. A party is named after its cult (C1 "parties")."""

    SUN = "sun"
    MOON = "moon"

    @classmethod
    def parse(cls, text: str) -> Cult:
        try:
            return cls(text)
        except ValueError:
            raise UnknownName(f"unknown cult or party {text!r} (C1: sun, moon)") from None

    @property
    def other(self) -> Cult:
        return Cult.MOON if self is Cult.SUN else Cult.SUN

    def __repr__(self) -> str:
        return f"Cult.{self.name}"

    def __str__(self) -> str:
        return self.value


#: A party is named by its cult (R2).
Party = Cult


class Seat(enum.Enum):
    """The four sides of the Twilight card, in playing order (R2)."""

    NORTH = "north"
    EAST = "east"
    SOUTH = "south"
    WEST = "west"

    @classmethod
    def parse(cls, text: str) -> Seat:
        try:
            return cls(text)
        except ValueError:
            raise UnknownName(
                f"unknown seat {text!r} (C1: north, east, south, west)"
            ) from None

    @property
    def index(self) -> int:
        return _SEAT_INDEX[self]

    @property
    def left(self) -> Seat:
        """The next seat in playing order ("to the left", clockwise from above)."""
        return SEATS[(_SEAT_INDEX[self] + 1) % 4]

    @property
    def right(self) -> Seat:
        """The previous seat in playing order."""
        return SEATS[(_SEAT_INDEX[self] + 3) % 4]

    @property
    def opposite(self) -> Seat:
        """The partner's seat."""
        return SEATS[(_SEAT_INDEX[self] + 2) % 4]

    def __repr__(self) -> str:
        return f"Seat.{self.name}"

    def __str__(self) -> str:
        return self.value


SEATS: tuple[Seat, ...] = (Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST)
_SEAT_INDEX = {seat: i for i, seat in enumerate(SEATS)}


class Kind(enum.Enum):
    PURGATORY = "purgatory"
    CLERIC = "cleric"
    SOULS = "souls"
    SHRINE = "shrine"


# name -> (kind, trick rank, souls, shrine multiplier)   (R1, R5, R6)
_NAMES: dict[str, tuple[Kind, int, int, int]] = {
    "purgatory": (Kind.PURGATORY, 8, 0, 0),
    "hierarch": (Kind.CLERIC, 7, 1, 0),
    "high-priest": (Kind.CLERIC, 6, 1, 0),
    "priest": (Kind.CLERIC, 5, 1, 0),
    "adept": (Kind.CLERIC, 4, 1, 0),
    "novice": (Kind.CLERIC, 3, 1, 0),
    "souls-3": (Kind.SOULS, 2, 3, 0),
    "souls-4": (Kind.SOULS, 2, 4, 0),
    "souls-5": (Kind.SOULS, 2, 5, 0),
    "souls-6": (Kind.SOULS, 2, 6, 0),
    "souls-7": (Kind.SOULS, 2, 7, 0),
    "altar": (Kind.SHRINE, 1, 0, 1),
    "temple": (Kind.SHRINE, 1, 0, 2),
    "obelisk": (Kind.SHRINE, 1, 0, 3),
}

#: Card names within a cult, in C1 order.
CARD_NAMES: tuple[str, ...] = tuple(_NAMES)

#: Roman numerals printed on the clerics (R1).
CLERIC_NUMERALS = {"hierarch": "I", "high-priest": "II", "priest": "III", "adept": "IV", "novice": "V"}


@dataclass(frozen=True, slots=True)
class Card:
    """One of the 28 playing cards. Use :meth:`parse` or :data:`CARDS`; each
    card exists once, so cards compare by identity as well as by value."""

    cult: Cult
    name: str
    kind: Kind = field(compare=False)
    rank: int = field(compare=False)
    souls: int = field(compare=False)
    shrine: int = field(compare=False)
    bit: int = field(compare=False, repr=False)

    @property
    def id(self) -> str:
        return f"{self.cult.value}-{self.name}"

    @classmethod
    def parse(cls, text: str) -> Card:
        try:
            return _BY_ID[text]
        except (KeyError, TypeError):
            raise UnknownName(f"unknown card {text!r} (C1, R9)") from None

    def __repr__(self) -> str:
        return f"Card.parse({self.id!r})"

    def __str__(self) -> str:
        return self.id


def _build() -> tuple[Card, ...]:
    cards = []
    for cult in (Cult.SUN, Cult.MOON):
        for name, (kind, rank, souls, shrine) in _NAMES.items():
            cards.append(Card(cult, name, kind, rank, souls, shrine, 1 << len(cards)))
    return tuple(cards)


#: All 28 cards: the sun cult's 14 then the moon cult's, in C1 order.
CARDS: tuple[Card, ...] = _build()
_BY_ID = {card.id: card for card in CARDS}

#: Every id the camera may name: the 28 cards, the Twilight card and both backs (C1).
TWILIGHT_ID = "twilight"
BACK_IDS = ("sun-back", "moon-back")
CARD_IDS: tuple[str, ...] = tuple(card.id for card in CARDS)


def cards_of(cult: Cult) -> tuple[Card, ...]:
    return tuple(card for card in CARDS if card.cult is cult)


def moon_pair(seat: Seat) -> tuple[Seat, Seat]:
    """The two opposite seats starting with *seat*, in playing order."""
    a, b = seat, seat.opposite
    return (a, b) if a.index < b.index else (b, a)
