"""The one module that wires camera, tracker, game log, LEDs and web together.

``watch``, ``serve`` and ``demo`` start here.
"""

from __future__ import annotations

import argparse
import sys

from companion.console import ConsoleReporter, play_random_hands
from companion.gamelog import GameLog, LogError, data_dir


def run_demo(args: argparse.Namespace) -> int:
    folder = args.data or data_dir() / "demo"
    try:
        log = GameLog.open(folder)
    except LogError as exc:
        print(f"twilight-companion demo: {exc}", file=sys.stderr)
        return 1
    log.subscribe(ConsoleReporter())
    print(f"demo: simulated table, game log in {log.path}", flush=True)
    try:
        play_random_hands(log, args.hands, args.seed, pause=0.2 / max(args.speed, 0.01))
    except KeyboardInterrupt:
        pass
    finally:
        log.close()
    return 0
