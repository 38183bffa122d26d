"""Shared helpers for the web tests (no tests here): games in known states."""

from __future__ import annotations

import random
from typing import Any

from companion.core.cards import Seat
from companion.core.deal import random_plays
from companion.core.gamelog import GameLog

PIN = "246810"

#: A first trick whose score a correction changes: east leads (sun), south's
#: hierarch takes it for the moon party, which builds its obelisk (R6: ×3).
#: Moon: 3 + 1 + 1 + 0 souls = 5 × 3 = 15. Correcting play 1 to sun-souls-7: 9 × 3 = 27.
FIRST_TRICK = [
    ("east", "sun-souls-3"),
    ("south", "moon-hierarch"),
    ("west", "sun-novice"),
    ("north", "moon-obelisk"),
]


def app_config(tmp_path: Any, **extra: Any) -> dict[str, Any]:
    config = {
        "DATA_DIR": str(tmp_path),
        "TABLE_PIN": PIN,
        "PIN_FAIL_SLEEP": 0,
        "SSE_LIFETIME": 0.4,
        "SSE_HEARTBEAT": 0.1,
        "TESTING": True,
    }
    config.update(extra)
    return config


def play_random_hand(log: GameLog, rng: random.Random, count: int = 28,
                     purgatory_bias: float = 0.0) -> dict[str, Any]:
    """Play ``count`` cards of a random legal hand, starting at a hand's beginning."""
    hand = log.snapshot()["hand"]
    setup = hand["next_hand"] if hand["complete"] and hand.get("next_hand") else hand
    moon = tuple(Seat(s) for s in setup["moon_seats"])
    lead = setup.get("leader") or (hand.get("next") or {}).get("seat") or "east"
    snap = log.snapshot()
    for p in random_plays(rng, moon, Seat(lead), purgatory_bias=purgatory_bias)[:count]:
        snap = log.play(p.seat.value, p.card.id, source="camera")
    return snap


def four_player_game(log: GameLog, hands: int = 3, extra: int = 14, seed: int = 3) -> None:
    """A four-player match with ``hands`` finished hands and ``extra`` cards of the next."""
    log.setup(dealer="north", names={"north": "Anna", "east": "Ben", "south": "Carla",
                                     "west": "Dirk"})
    rng = random.Random(seed)
    for _ in range(hands):
        play_random_hand(log, rng, purgatory_bias=0.3)
    if extra:
        play_random_hand(log, rng, extra, purgatory_bias=0.6)


def three_player_game(log: GameLog, hands: int = 2, extra: int = 9, seed: int = 5) -> None:
    """A three-player match (rotating soloist, per-person totals)."""
    log.new_match(mode="three", goal="magic", soloist="south",
                  names={"north": None, "east": "Ben", "south": "Carla", "west": "Dirk"})
    rng = random.Random(seed)
    for _ in range(hands):
        play_random_hand(log, rng)
    if extra:
        play_random_hand(log, rng, extra)
