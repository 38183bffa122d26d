"""A plain-text view of the game for the terminal (and the journal).

:class:`ConsoleReporter` subscribes to the game log and prints each trick, its
winner, lying purgatory tricks and the running score as they happen. It is used
by ``demo``/``serve`` and by ``demo --text``, which plays random legal hands
straight through the game log with no camera at all.
"""

from __future__ import annotations

import random
import sys
import time
from typing import Any, TextIO

from companion.core.cards import Seat
from companion.core.deal import random_plays
from companion.core.gamelog import GameLog


class ConsoleReporter:
    """Prints tricks, hands and refusals from game-log events, one line each."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out: TextIO | None = out or sys.stdout

    def __call__(self, event: dict[str, Any], snap: dict[str, Any]) -> None:
        kind = event["type"]
        hand = snap["hand"]
        if kind == "play":
            data = event["data"]
            if data.get("source") in ("table", "web"):
                self._say(f"laid by hand at the table: {data.get('seat')} {data.get('card')}")
            tricks = hand["tricks"]
            if tricks and len(tricks[-1]["plays"]) == 4:
                self._trick(len(tricks), tricks[-1], hand)
            if hand["complete"]:
                self._hand(hand, snap["match"])
        elif kind == "refused":
            self._say(f"refused: {event['data'].get('message')}")
        elif kind in ("undo", "correct"):
            self._say(f"{kind}: score now sun {hand['score']['sun']}, "
                      f"moon {hand['score']['moon']}")
        elif kind == "new_hand" and event["data"].get("abandon"):
            why = event["data"].get("reason")
            self._say(f"the half-played hand was set aside{f' ({why})' if why else ''}; "
                      f"hand {hand['number']} begins")
        elif kind == "new_match":
            self._say(f"new match: {snap['match']['mode']} players, goal {snap['match']['goal']}")
        elif kind == "status":
            for key, value in event["data"].items():
                if key in ("camera", "recognition", "log"):
                    self._say(f"{key}: {value}")

    def _say(self, text: str) -> None:
        if self.out is None:
            return
        try:
            print(text, file=self.out, flush=True)
        except (BrokenPipeError, ValueError):
            self.out = None  # the reader went away; keep scoring quietly

    def _trick(self, number: int, trick: dict[str, Any], hand: dict[str, Any]) -> None:
        cards = "  ".join(f"{p['seat'][0].upper()}:{p['card']}" for p in trick["plays"])
        if trick["winner"] is None and hand["complete"]:
            outcome = f"purgatory in the last trick: {len(hand['neutral'])} cards neutral"
        elif trick["winner"] is None:
            outcome = f"purgatory: lies ({len(hand['lying'])} cards lying), " \
                      f"{hand['next']['seat'] if hand['next'] else '-'} leads"
        else:
            outcome = f"won by {trick['winner']}"
        self._say(f"hand {hand['number']} trick {number}: {cards} -> {outcome}  "
                  f"| souls sun {hand['souls']['sun']} x{hand['multiplier']['sun']}, "
                  f"moon {hand['souls']['moon']} x{hand['multiplier']['moon']}")

    def _hand(self, hand: dict[str, Any], match: dict[str, Any]) -> None:
        totals = ", ".join(f"{k} {v}" for k, v in match["totals"].items())
        neutral = f", {len(hand['neutral'])} cards neutral" if hand["neutral"] else ""
        self._say(f"hand {hand['number']} over: sun {hand['score']['sun']}, "
                  f"moon {hand['score']['moon']}{neutral}. Match: {totals}")
        if match["over"]:
            self._say(f"match over: winner {match['winner']}")


def play_random_hands(log: GameLog, hands: int, seed: int | None, pause: float) -> None:
    """Play ``hands`` random legal hands (0: forever) through the game log."""
    rng = random.Random(seed)
    played = 0
    while hands == 0 or played < hands:
        snap = log.snapshot()
        hand = snap["hand"]
        if hand["complete"] and hand["next_hand"] is None:
            log.new_match()
            continue
        if hand["plays"] and not hand["complete"]:
            log.new_hand(abandon=True)  # a half hand left from an earlier run
            continue
        setup = hand["next_hand"] if hand["complete"] else hand
        moon = tuple(Seat.parse(s) for s in setup["moon_seats"])
        leader = Seat.parse(setup["leader"] or "east")
        for p in random_plays(rng, moon, leader):
            log.play(p.seat, p.card, source="simulator")
            time.sleep(pause)
        played += 1
