"""Rules core and `score` start-up (issue 2).

- ``score`` cold start on a full hand: median of 20 runs, against ``python3 -c pass``
  in the same run (a figure to watch, no goal: nobody feels tens of milliseconds).
- Complete random hands played and scored per second on one core. Goal ≥ 20,000/s.
  The random legal hands are generated beforehand (dealing and choosing are the
  simulator's work, not the rules core's); the timed loop plays every card through
  the checked ``Hand.play`` and scores both parties.
"""

from __future__ import annotations

import json
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from companion.core.cards import Cult, Seat
from companion.core.deal import random_plays
from companion.core.rules import Hand

RUNS = 20
HANDS = 2000
REPEAT = 5


def _median_runtime(cmd: list[str], stdin: str | None = None) -> float:
    times = []
    for _ in range(RUNS):
        start = time.perf_counter()
        subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=True)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def score_cold_start() -> dict[str, float]:
    plays = random_plays(random.Random(100_001), leader=Seat.EAST)
    record = {"format": "twilight-hand/1", "moon_seats": ["north", "south"], "leader": "east",
              "plays": [p.to_dict() for p in plays]}
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "hand.json"
        path.write_text(json.dumps(record))
        exe = Path(sys.executable).with_name("twilight-companion")
        cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "companion"]
        base = _median_runtime([sys.executable, "-c", "pass"])
        score = _median_runtime([*cmd, "score", str(path)])
    return {"python_pass_ms": round(base * 1000, 1), "score_ms": round(score * 1000, 1),
            "ratio": round(score / base, 2)}


def hands_per_second() -> dict[str, float]:
    rng = random.Random(100_002)
    hands = [random_plays(rng, leader=Seat.EAST) for _ in range(HANDS)]
    moon = (Seat.NORTH, Seat.SOUTH)
    best = 0.0
    total = 0
    for _ in range(REPEAT):
        start = time.perf_counter()
        for plays in hands:
            hand = Hand(moon, Seat.EAST)
            for p in plays:
                hand.play(p.seat, p.card)
            total += hand.score(Cult.SUN) + hand.score(Cult.MOON)
        elapsed = time.perf_counter() - start
        best = max(best, HANDS / elapsed)
    return {"hands_per_second": round(best), "goal": 20_000, "checksum": total}


def main() -> dict:
    figures = {"score_cold_start": score_cold_start(), "rules_core": hands_per_second()}
    s, r = figures["score_cold_start"], figures["rules_core"]
    print(f"score cold start: {s['score_ms']} ms vs python -c pass {s['python_pass_ms']} ms "
          f"= {s['ratio']}x")
    print(f"rules core: {r['hands_per_second']} complete hands played and scored per second "
          f"(goal >= 20000)")
    return figures
