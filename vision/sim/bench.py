"""Measurements and pictures of the simulator for ``bench/bench_sim.py``.

Kept in :mod:`vision` so the benchmark itself needs neither OpenCV nor numpy.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from pathlib import Path

import cv2
import numpy as np

from vision.sim.movie import HandMovie
from vision.sim.simulator import render_scene

#: Scenes rendered before timing starts (caches are also filled by ``prepare``).
WARMUP_SCENES = 10
#: Contact sheet and movie strip layout.
SHEET_COLUMNS = 3
TILE = (640, 360)
CAPTION_PX = 26


@contextlib.contextmanager
def one_core() -> Iterator[None]:
    """Run OpenCV on one thread inside the block (the goal is for one core)."""
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)
    try:
        yield
    finally:
        cv2.setNumThreads(threads)


def time_scenes(size: tuple[int, int], count: int) -> dict[str, list[float]]:
    """Milliseconds per :func:`render_scene` (a new seed each time): wall clock per
    style (``"style0"``, ``"style1"``) and process CPU time (``"cpu"``)."""
    for seed in range(WARMUP_SCENES):
        render_scene(10_000 + seed, style=seed % 2, size=size)
    times: dict[str, list[float]] = {"style0": [], "style1": [], "cpu": []}
    for seed in range(count):
        style = seed % 2
        c0, t0 = time.process_time(), time.perf_counter()
        render_scene(20_000 + seed, style=style, size=size)
        times[f"style{style}"].append((time.perf_counter() - t0) * 1000)
        times["cpu"].append((time.process_time() - c0) * 1000)
    return times


def time_randomised(size: tuple[int, int], count: int, decks: tuple = ("builtin", 101, 102)
                    ) -> list[float]:
    """Milliseconds per randomised :func:`render_scene` (``deck=``; new seed each time,
    decks taken in turn), after a warm-up that draws the decks and cloths once."""
    from vision.sim.simulator import CLOTH_COUNT

    for i in range(max(WARMUP_SCENES, CLOTH_COUNT)):
        render_scene(30_000 + i, size=size, deck=decks[i % len(decks)], texture=i % CLOTH_COUNT)
    times = []
    for i in range(count):
        t0 = time.perf_counter()
        render_scene(40_000 + i, size=size, deck=decks[i % len(decks)])
        times.append((time.perf_counter() - t0) * 1000)
    return times


def time_movie(size: tuple[int, int], count: int, skip: int = 30) -> list[float]:
    """Milliseconds per hand-movie frame, after the first ``skip`` frames."""
    frames = HandMovie(seed=1, size=size, hands=1).frames()
    for _ in range(skip):
        next(frames)
    times = []
    for _ in range(count):
        t0 = time.perf_counter()
        next(frames)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def _caption(tile: np.ndarray, text: str) -> np.ndarray:
    band = np.full((CAPTION_PX, tile.shape[1], 3), 30, np.uint8)
    cv2.putText(band, text, (6, CAPTION_PX - 8), cv2.FONT_HERSHEY_SIMPLEX, 0.42,
                (230, 230, 230), 1, cv2.LINE_AA)
    return np.vstack([tile, band])


def _grid(tiles: list[np.ndarray], columns: int) -> np.ndarray:
    blank = np.zeros_like(tiles[0])
    rows = []
    for i in range(0, len(tiles), columns):
        row = tiles[i:i + columns]
        row += [blank] * (columns - len(row))
        rows.append(np.hstack(row))
    return np.vstack(rows)


def contact_sheet(path: Path, size: tuple[int, int], scenes: int = 12) -> None:
    """Sample scenes of both art styles, each captioned with its truth."""
    tiles = []
    for i in range(scenes):
        seed, style = 100 + i, i % 2
        scene = render_scene(seed, style=style, size=size)
        sides = " ".join(f"{k[0].upper()}:{v or '-'}" for k, v in scene.truth["sides"].items())
        occluded = "".join(k[0].upper() for k, v in scene.occluded.items() if v)
        text = f"seed {seed} style {style} | {sides}"
        if occluded:
            text += f" | arm over {occluded}"
        tile = cv2.resize(scene.image, TILE, interpolation=cv2.INTER_AREA)
        tiles.append(_caption(tile, text))
    cv2.imwrite(str(path), _grid(tiles, SHEET_COLUMNS))


def randomised_sheet(path: Path, size: tuple[int, int], scenes: int = 12,
                     decks: tuple = ("builtin", 101, 102, 103, 104, 105)) -> None:
    """Randomised scenes of tuning decks, each captioned with its deck and factors."""
    tiles = []
    for i in range(scenes):
        deck = decks[i % len(decks)]
        scene = render_scene(1_000_000 + i, size=size, deck=deck)
        f = scene.factors
        text = (f"deck {deck} | {f['rotation']} | tw {f['twilight_aspect']} | "
                f"{f['card_px']:.0f}px | {f['light']} {f['cloth']}")
        tile = cv2.resize(scene.image, TILE, interpolation=cv2.INTER_AREA)
        tiles.append(_caption(tile, text))
    cv2.imwrite(str(path), _grid(tiles, SHEET_COLUMNS))


def movie_strip(path: Path, size: tuple[int, int], frames: int = 12,
                every_s: float = 4.0) -> None:
    """Frames of a hand movie every ``every_s`` seconds, captioned with the last event."""
    movie = HandMovie(seed=7, size=size, hands=1)
    every = round(every_s * movie.fps)
    tiles = []
    for frame in movie.frames():
        if frame.index % every or not frame.index:
            continue
        assert frame.image is not None
        text = f"frame {frame.index}"
        if movie.events:
            last = movie.events[-1]
            text += f" | last event: {last['type']} " + (
                f"{last.get('seat')} {last.get('card')}" if last["type"] == "play"
                else str(last.get("winner", "")))
        tiles.append(_caption(cv2.resize(frame.image, TILE, interpolation=cv2.INTER_AREA), text))
        if len(tiles) == frames:
            break
    cv2.imwrite(str(path), _grid(tiles, SHEET_COLUMNS))
