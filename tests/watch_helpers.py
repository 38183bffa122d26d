"""Running `watch` on a simulated table in tests: the real Companion, tracker and
game log, events read back from the C7 file."""

from __future__ import annotations

import json
from typing import Any

from companion.app import Companion, Options
from companion.config import Config
from companion.gamelog import GameLog
from vision.sim_decks import taught_deck
from vision.tracker import TableTracker


def watch_source(tmp_path, source: Any, log: GameLog, style: int
                 ) -> tuple[list[dict], dict, Companion]:
    """Watch *source* (a simulated table) into *log* until it ends; returns the events,
    the log's last snapshot and the companion (the log is closed)."""
    events_path = tmp_path / "events.jsonl"
    comp = Companion(Options(source="recording", events=str(events_path)), Config(), log)
    comp.source = source
    comp.tracker = TableTracker(taught_deck(style))
    try:
        comp.watch()
    finally:
        comp.close()
    events = [json.loads(line) for line in events_path.read_text().splitlines()]
    snap = log.snapshot()
    log.close()
    return events, snap, comp
