"""Simulator speed on one core, plus pictures of what the recogniser faces.

Figures: median and 90th percentile milliseconds to render a 1280x720 scene
(new seed each time, after warming the card and texture caches) and a hand
movie frame. Writes ``bench/results/sim_contact_sheet.png`` (sample scenes of
both art styles) and ``bench/results/sim_movie_strip.png`` (frames of a hand).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

import cv2
import numpy as np

from vision.movie import HandMovie
from vision.simulator import prepare, render_scene

RESULTS = Path(__file__).resolve().parent / "results"
SIZE = (1280, 720)
WARMUP_SCENES = 10
TIMED_SCENES = 120
TIMED_MOVIE_FRAMES = 300
GOAL_MS = 30.0
SHEET_SCENES = 12
SHEET_COLUMNS = 3
STRIP_FRAMES = 12
STRIP_EVERY_S = 4.0
TILE = (640, 360)
CAPTION_PX = 26


def _percentile(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values), q))


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


def time_scenes() -> tuple[list[float], list[float], list[float]]:
    """Wall-clock ms per scene for style 0 and style 1, and CPU ms for both."""
    for seed in range(WARMUP_SCENES):
        render_scene(10_000 + seed, style=seed % 2, size=SIZE)
    times: dict[int, list[float]] = {0: [], 1: []}
    cpu = []
    for seed in range(TIMED_SCENES):
        style = seed % 2
        c0, t0 = time.process_time(), time.perf_counter()
        render_scene(20_000 + seed, style=style, size=SIZE)
        times[style].append((time.perf_counter() - t0) * 1000)
        cpu.append((time.process_time() - c0) * 1000)
    return times[0], times[1], cpu


def time_movie() -> list[float]:
    frames = HandMovie(seed=1, size=SIZE, hands=1).frames()
    for _ in range(30):
        next(frames)
    times = []
    for _ in range(TIMED_MOVIE_FRAMES):
        t0 = time.perf_counter()
        next(frames)
        times.append((time.perf_counter() - t0) * 1000)
    return times


def contact_sheet(path: Path) -> None:
    tiles = []
    for i in range(SHEET_SCENES):
        seed, style = 100 + i, i % 2
        scene = render_scene(seed, style=style, size=SIZE)
        sides = " ".join(f"{k[0].upper()}:{v or '-'}" for k, v in scene.truth["sides"].items())
        occluded = "".join(k[0].upper() for k, v in scene.occluded.items() if v)
        text = f"seed {seed} style {style} | {sides}" + (f" | arm over {occluded}"
                                                          if occluded else "")
        tile = cv2.resize(scene.image, TILE, interpolation=cv2.INTER_AREA)
        tiles.append(_caption(tile, text))
    cv2.imwrite(str(path), _grid(tiles, SHEET_COLUMNS))


def movie_strip(path: Path) -> None:
    movie = HandMovie(seed=7, size=SIZE, hands=1)
    every = round(STRIP_EVERY_S * movie.fps)
    tiles = []
    for frame in movie.frames():
        if frame.index % every == 0 and frame.index:
            assert frame.image is not None
            last = movie.events[-1] if movie.events else None
            text = f"frame {frame.index}"
            if last is not None:
                text += f" | last event: {last['type']} " + (
                    f"{last.get('seat')} {last.get('card')}" if last["type"] == "play"
                    else str(last.get("winner", "")))
            tile = cv2.resize(frame.image, TILE, interpolation=cv2.INTER_AREA)
            tiles.append(_caption(tile, text))
            if len(tiles) == STRIP_FRAMES:
                break
    cv2.imwrite(str(path), _grid(tiles, SHEET_COLUMNS))


def main() -> dict:
    threads = cv2.getNumThreads()
    cv2.setNumThreads(1)  # the goal is for one core
    try:
        t0 = time.perf_counter()
        prepare(size=SIZE)
        prepare_s = time.perf_counter() - t0
        style0, style1, cpu = time_scenes()
        frames = time_movie()
    finally:
        cv2.setNumThreads(threads)
    both = style0 + style1
    figures = {
        "scene_1280x720_ms_median": round(statistics.median(both), 2),
        "scene_1280x720_ms_p90": round(_percentile(both, 90), 2),
        "scene_1280x720_cpu_ms_median": round(statistics.median(cpu), 2),
        "scene_style0_ms_median": round(statistics.median(style0), 2),
        "scene_style1_ms_median": round(statistics.median(style1), 2),
        "movie_frame_1280x720_ms_median": round(statistics.median(frames), 2),
        "movie_frame_1280x720_ms_p90": round(_percentile(frames, 90), 2),
        "goal_ms": GOAL_MS,
        "meets_goal": statistics.median(both) <= GOAL_MS,
        "threads": 1,
        "prepare_s": round(prepare_s, 2),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    contact_sheet(RESULTS / "sim_contact_sheet.png")
    movie_strip(RESULTS / "sim_movie_strip.png")
    figures["images"] = ["bench/results/sim_contact_sheet.png",
                         "bench/results/sim_movie_strip.png"]
    for key, value in figures.items():
        print(f"{key}: {value}")
    return figures
