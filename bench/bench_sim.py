"""Simulator speed on one core, plus pictures of what the recogniser faces.

Figures: median and 90th percentile milliseconds to render a 1280x720 scene
(new seed each time, after ``prepare`` rendered the card art and textures once),
a domain-randomised scene (``deck=``, procedural decks) and a hand-movie frame. Writes ``bench/results/sim_contact_sheet.png`` (sample
scenes of both art styles) and ``bench/results/sim_movie_strip.png`` (frames of
a hand) and ``bench/results/sim_randomised_sheet.png`` (randomised scenes of
tuning decks, captioned with what was drawn).
"""

from __future__ import annotations

import statistics
import time
from pathlib import Path

from vision.sim.bench import (
    contact_sheet,
    movie_strip,
    one_core,
    randomised_sheet,
    time_movie,
    time_randomised,
    time_scenes,
)
from vision.sim.simulator import prepare

RESULTS = Path(__file__).resolve().parent / "results"
SIZE = (1280, 720)
TIMED_SCENES = 120
TIMED_MOVIE_FRAMES = 300
GOAL_MS = 30.0


def _p90(values: list[float]) -> float:
    return statistics.quantiles(values, n=10)[-1]


def main() -> dict:
    with one_core():
        t0 = time.perf_counter()
        prepare(size=SIZE)
        prepare_s = time.perf_counter() - t0
        scenes = time_scenes(SIZE, TIMED_SCENES)
        randomised = time_randomised(SIZE, TIMED_SCENES)
        frames = time_movie(SIZE, TIMED_MOVIE_FRAMES)
    both = scenes["style0"] + scenes["style1"]
    figures = {
        "scene_1280x720_ms_median": round(statistics.median(both), 2),
        "scene_1280x720_ms_p90": round(_p90(both), 2),
        "scene_1280x720_cpu_ms_median": round(statistics.median(scenes["cpu"]), 2),
        "scene_style0_ms_median": round(statistics.median(scenes["style0"]), 2),
        "scene_style1_ms_median": round(statistics.median(scenes["style1"]), 2),
        "randomised_scene_1280x720_ms_median": round(statistics.median(randomised), 2),
        "randomised_scene_1280x720_ms_p90": round(_p90(randomised), 2),
        "movie_frame_1280x720_ms_median": round(statistics.median(frames), 2),
        "movie_frame_1280x720_ms_p90": round(_p90(frames), 2),
        "goal_ms": GOAL_MS,
        "meets_goal": statistics.median(both) <= GOAL_MS,
        "threads": 1,
        "prepare_s": round(prepare_s, 2),
    }
    RESULTS.mkdir(parents=True, exist_ok=True)
    contact_sheet(RESULTS / "sim_contact_sheet.png", SIZE)
    movie_strip(RESULTS / "sim_movie_strip.png", SIZE)
    randomised_sheet(RESULTS / "sim_randomised_sheet.png", SIZE)
    figures["images"] = ["bench/results/sim_contact_sheet.png",
                         "bench/results/sim_movie_strip.png",
                         "bench/results/sim_randomised_sheet.png"]
    for key, value in figures.items():
        print(f"{key}: {value}")
    return figures
