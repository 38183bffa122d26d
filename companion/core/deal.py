"""Random deals and random legal hands, for simulation, tests and benchmarks.

Standard library only. A random hand follows R3 exactly: the seat on turn has a
card of its own cult played by any player who still holds one (himself, his
partner or an opponent), and the directed player chooses which.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from companion.core.cards import CARDS, SEATS, Card, Seat
from companion.core.rules import Hand, Play


def deal(rng: random.Random) -> dict[Seat, list[Card]]:
    """Shuffle the 28 cards and deal seven to each seat (R2)."""
    cards = list(CARDS)
    rng.shuffle(cards)
    return {seat: cards[i * 7:(i + 1) * 7] for i, seat in enumerate(SEATS)}


def random_plays_with_givers(
    rng: random.Random,
    moon_seats: Sequence[Seat] = (Seat.NORTH, Seat.SOUTH),
    leader: Seat = Seat.EAST,
    *,
    purgatory_bias: float = 0.0,
) -> tuple[list[Play], list[Seat]]:
    """A complete legal hand played from a random deal, and for each play the seat
    whose cards it came from (R3: any holder of the cult on turn may be directed).

    ``purgatory_bias`` (0…1) makes the directed player prefer to give a
    purgatory, for purgatory-heavy test hands.
    """
    hands = deal(rng)
    hand = Hand(moon_seats, leader)
    givers: list[Seat] = []
    while not hand.complete:
        nxt = hand.next
        assert nxt is not None
        seat, cult = nxt
        holders = [s for s in SEATS if any(c.cult is cult for c in hands[s])]
        giver = rng.choice(holders)
        choices = [c for c in hands[giver] if c.cult is cult]
        purg = [c for c in choices if c.name == "purgatory"]
        card = purg[0] if purg and rng.random() < purgatory_bias else rng.choice(choices)
        hands[giver].remove(card)
        hand.play(seat, card)
        givers.append(giver)
    return list(hand.plays), givers


def random_plays(
    rng: random.Random,
    moon_seats: Sequence[Seat] = (Seat.NORTH, Seat.SOUTH),
    leader: Seat = Seat.EAST,
    *,
    purgatory_bias: float = 0.0,
) -> list[Play]:
    """A complete legal hand played from a random deal (see
    :func:`random_plays_with_givers`)."""
    return random_plays_with_givers(rng, moon_seats, leader, purgatory_bias=purgatory_bias)[0]


def random_hand(
    rng: random.Random,
    moon_seats: Sequence[Seat] = (Seat.NORTH, Seat.SOUTH),
    leader: Seat = Seat.EAST,
    plays: int = 28,
) -> Hand:
    """A :class:`Hand` with the first ``plays`` plays of a random legal hand."""
    hand = Hand(moon_seats, leader)
    for p in random_plays(rng, moon_seats, leader)[:plays]:
        hand.play(p.seat, p.card)
    return hand
