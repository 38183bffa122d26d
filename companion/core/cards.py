"""Cards, cults, seats and parties of Twilight (R1, R2 of docs/rules.md; C1 of docs/interfaces.md).

Standard library only. Every value parses from its C1 name and prints back:

>>> Card.parse("moon-high-priest").id
'moon-high-priest'
>>> Seat.parse("north").left is Seat.EAST
True
"""

from __future__ import annotations

import enum


class UnknownName(ValueError):
    """A card, seat or cult name that is not in CONTRACT C1 (R9)."""


class _Named(enum.Enum):
    """A member looked up by its C1 name (``Seat("north")``), printed as that name,
    with ``index``, its place in C1 order."""

    index: int

    #: Each member exists once: hashing by identity is exact, and quicker than Enum's
    #: hash of the member's name (the rules core looks seats up in dicts all the time).
    __hash__ = object.__hash__

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __str__(self) -> str:
        return str(self.value)


class Cult(_Named):
    """The two cults, ``Cult.SUN`` and ``Cult.MOON``. A party is named after its cult."""

    SUN = "sun"
    MOON = "moon"

    other: Cult

    @classmethod
    def parse(cls, text: str) -> Cult:
        try:
            return cls(text)
        except ValueError:
            raise UnknownName(f"unknown cult or party {text!r} (C1: sun, moon)") from None


Cult.SUN.other, Cult.MOON.other = Cult.MOON, Cult.SUN
CULTS: tuple[Cult, Cult] = (Cult.SUN, Cult.MOON)

#: A party is named by its cult (R2).
Party = Cult


class Seat(_Named):
    """The four sides of the Twilight card, in playing order (R2). ``left`` is the
    next seat in playing order ("to the left", clockwise seen from above),
    ``right`` the previous one, ``opposite`` the partner's seat."""

    NORTH = "north"
    EAST = "east"
    SOUTH = "south"
    WEST = "west"

    left: Seat
    right: Seat
    opposite: Seat

    @classmethod
    def parse(cls, text: str) -> Seat:
        try:
            return cls(text)
        except ValueError:
            raise UnknownName(
                f"unknown seat {text!r} (C1: north, east, south, west)"
            ) from None


SEATS: tuple[Seat, ...] = tuple(Seat)
for _i, _seat in enumerate(SEATS):
    _seat.left = SEATS[(_i + 1) % 4]
    _seat.right = SEATS[(_i + 3) % 4]
    _seat.opposite = SEATS[(_i + 2) % 4]


class Kind(_Named):
    """purgatory, cleric, souls, shrine (R1)."""

    PURGATORY = "purgatory"
    CLERIC = "cleric"
    SOULS = "souls"
    SHRINE = "shrine"


for _members in (Cult, Seat, Kind):
    for _i, _member in enumerate(_members):
        _member.index = _i


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


class Card:
    """One of the 28 playing cards. Use :meth:`parse` or :data:`CARDS`; each
    card exists once, so cards compare and hash by identity."""

    __slots__ = ("cult", "name", "kind", "rank", "souls", "shrine", "bit", "id")

    def __init__(self, cult: Cult, name: str, kind: Kind, rank: int, souls: int, shrine: int,
                 bit: int) -> None:
        self.cult = cult
        self.name = name
        self.kind = kind
        #: trick rank: purgatory 8, hierarch 7 … novice 3, souls 2, shrines 1 (R1)
        self.rank = rank
        #: souls it counts for (R5)
        self.souls = souls
        #: shrine multiplier when built (R6)
        self.shrine = shrine
        self.bit = bit
        self.id = f"{cult.value}-{name}"

    @classmethod
    def parse(cls, text: str) -> Card:
        try:
            return _BY_ID[text]
        except (KeyError, TypeError):
            raise UnknownName(f"unknown card {text!r} (C1, R9)") from None

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (Card.parse, (self.id,))

    def __copy__(self) -> Card:
        return self

    def __deepcopy__(self, memo: object) -> Card:
        return self

    def __repr__(self) -> str:
        return f"Card.parse({self.id!r})"

    def __str__(self) -> str:
        return self.id


def _build() -> tuple[Card, ...]:
    cards: list[Card] = []
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
