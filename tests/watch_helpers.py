"""Running `watch` on a simulated table in tests: the real Companion, tracker and
game log, events read back from the C7 file; a hand movie as a recording, with
something painted over a card where a test needs it (a forearm, a lamp's glare)."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from companion.app import Companion, Options
from companion.config import Config
from companion.core.gamelog import GameLog
from vision.sim.decks import taught_deck
from vision.sim.movie import HandMovie, MovieFrame
from vision.sim.simulator import add_glare
from vision.tracker import TableTracker


def watch_source(tmp_path, source: Any, log: GameLog, style: int, *, mirror: bool = False
                 ) -> tuple[list[dict], dict, Companion]:
    """Watch *source* (a simulated table) into *log* until it ends; returns the events,
    the log's last snapshot and the companion (the log is closed). ``mirror``: the
    camera sees the table mirrored (``watch --mirror``)."""
    events_path = tmp_path / "events.jsonl"
    comp = Companion(Options(source="recording", events=str(events_path), mirror=mirror),
                     Config(), log)
    comp.source = source
    comp.tracker = TableTracker(taught_deck(style), mirror=comp.opts.mirror)
    try:
        comp.watch()
    finally:
        comp.close()
    events = [json.loads(line) for line in events_path.read_text().splitlines()]
    snap = log.snapshot()
    log.close()
    return events, snap, comp


class MovieRecording:
    """A hand movie as a recording (a frame source): ``on_frame(index)`` runs before
    each frame is given (the table's hands); it ends at frame ``stop_at``; ``paint``
    may return a changed picture of a frame (None: as rendered), and ``painted``
    counts the frames it changed."""

    live = False

    def __init__(self, movie: HandMovie, *, on_frame: Callable[[int], None] | None = None,
                 stop_at: int | None = None,
                 paint: Callable[[MovieFrame], np.ndarray | None] | None = None) -> None:
        self.frames = movie.frames()
        self.on_frame, self.stop_at, self.paint = on_frame, stop_at, paint
        self.painted = 0

    def read(self) -> np.ndarray | None:
        frame = next(self.frames, None)
        if frame is None or (self.stop_at is not None and frame.index >= self.stop_at):
            return None
        if self.on_frame is not None:
            self.on_frame(frame.index)
        image = self.paint(frame) if self.paint is not None else None
        if image is None:
            return frame.image
        self.painted += 1
        return image

    def close(self) -> None:
        self.frames = iter(())


def glare_on_card(image: np.ndarray, quad: Any) -> np.ndarray:
    """*image* with the simulator's strongest glare spot on the lower half of the card
    inside *quad* (TL, TR, BR, BL): a lamp's reflection, washed out at its core."""
    q = np.asarray(quad, np.float64)
    centre = q.mean(axis=0) * 0.6 + (q[2] + q[3]) / 2 * 0.4
    out = image.copy()
    add_glare(out, (centre[0], centre[1]), int(0.06 * image.shape[0]), 0.8)
    return out
