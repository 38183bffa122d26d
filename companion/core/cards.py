"""Cards, cults, seats and parties of Twilight (RULES R1, R2; CONTRACT C1).

Standard library only. Every value parses from its C1 name and prints back:

>>> Card.parse("moon-high-priest").id
'moon-high-priest'
>>> Seat.parse("north").left is Seat.EAST
True
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any


class UnknownName(ValueError):
    """A card, seat or cult name that is not in CONTRACT C1 (R9)."""


class _Members(type):
    """A tiny stand-in for ``enum.Enum``: fixed members with ``name`` and ``value``,
    looked up by value with ``Cls("north")`` and iterated with ``for s in Cls``.

    Plain slotted objects with identity hashing keep the rules core fast (an Enum
    member hashes in Python) and the ``score`` command quick to start."""

    _members: tuple[object, ...]
    _by_value: dict[str, object]

    def __call__(cls, value: str):  # type: ignore[no-untyped-def]
        try:
            return cls._by_value[value]
        except (KeyError, TypeError):
            raise ValueError(f"{value!r} is not a valid {cls.__name__}") from None

    def __iter__(cls) -> Iterator:  # type: ignore[type-arg]
        return iter(cls._members)

    def __len__(cls) -> int:
        return len(cls._members)

    def _make(cls, names: dict[str, str]) -> None:
        members: list[Any] = []
        for name, value in names.items():
            member: Any = object.__new__(cls)  # type: ignore[arg-type]
            object.__setattr__(member, "name", name)
            object.__setattr__(member, "value", value)
            object.__setattr__(member, "index", len(members))
            setattr(cls, name, member)
            members.append(member)
        cls._members = tuple(members)
        cls._by_value = {m.value: m for m in members}


class _Member(metaclass=_Members):
    __slots__ = ("name", "value", "index", "__dict__")
    name: str
    value: str
    index: int

    def __repr__(self) -> str:
        return f"{type(self).__name__}.{self.name}"

    def __str__(self) -> str:
        return str(self.value)

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (type(self), (self.value,))

    def __copy__(self) -> _Member:
        return self

    def __deepcopy__(self, memo: object) -> _Member:
        return self


class Cult(_Member):
    """The two cults, ``Cult.SUN`` and ``Cult.MOON``. A party is named after its cult."""

    SUN: Cult
    MOON: Cult
    other: Cult

    @classmethod
    def parse(cls, text: str) -> Cult:
        try:
            return cls._by_value[text]  # type: ignore[return-value]
        except (KeyError, TypeError):
            raise UnknownName(f"unknown cult or party {text!r} (C1: sun, moon)") from None


Cult._make({"SUN": "sun", "MOON": "moon"})
Cult.SUN.other, Cult.MOON.other = Cult.MOON, Cult.SUN
CULTS: tuple[Cult, Cult] = (Cult.SUN, Cult.MOON)

#: A party is named by its cult (R2).
Party = Cult


class Seat(_Member):
    """The four sides of the Twilight card, in playing order (R2). ``left`` is the
    next seat in playing order ("to the left", clockwise seen from above),
    ``right`` the previous one, ``opposite`` the partner's seat."""

    NORTH: Seat
    EAST: Seat
    SOUTH: Seat
    WEST: Seat
    left: Seat
    right: Seat
    opposite: Seat

    @classmethod
    def parse(cls, text: str) -> Seat:
        try:
            return cls._by_value[text]  # type: ignore[return-value]
        except (KeyError, TypeError):
            raise UnknownName(
                f"unknown seat {text!r} (C1: north, east, south, west)"
            ) from None


Seat._make({"NORTH": "north", "EAST": "east", "SOUTH": "south", "WEST": "west"})
SEATS: tuple[Seat, ...] = (Seat.NORTH, Seat.EAST, Seat.SOUTH, Seat.WEST)
for _i, _seat in enumerate(SEATS):
    _seat.left = SEATS[(_i + 1) % 4]
    _seat.right = SEATS[(_i + 3) % 4]
    _seat.opposite = SEATS[(_i + 2) % 4]


class Kind(_Member):
    """purgatory, cleric, souls, shrine (R1)."""

    PURGATORY: Kind
    CLERIC: Kind
    SOULS: Kind
    SHRINE: Kind


Kind._make({"PURGATORY": "purgatory", "CLERIC": "cleric", "SOULS": "souls", "SHRINE": "shrine"})


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
