"""Finding the Twilight card alone (``Recogniser.locate``): how often and how fast.

Randomised simulator scenes at 1280x720 (``render_scene(seed, deck=...)``, every factor
drawn from the seed), the tuning and the held-out material side by side
(vision/sim/split.py): the share of scenes whose Twilight card is found with the right
moon sides, and locate's CPU time per frame on one thread (OpenCV's threads set to one;
set OPENBLAS_NUM_THREADS=1 too, or numpy's BLAS threads add CPU time), mean, median and
the slowest. Scenes are rendered before the clock runs; each deck's recogniser is built
before its first scene is timed. A reference task (bench_recognition.reference_ms) timed
before and after says how fast the core was.

``BENCH_LOCATE_SCENES`` scenes per split (default 60); scene seeds from
``SCENE_OFFSET`` into each split's seed range, decks in turn.
"""

from __future__ import annotations

import os
import time

import numpy as np

from vision.profile import load_deck
from vision.recognise import Recogniser
from vision.sim.decks import taught_deck
from vision.sim.simulator import render_scene
from vision.sim.split import HELDOUT_DECKS, HELDOUT_SEEDS, TUNING_DECKS, TUNING_SEEDS

SPLITS = {"tuning": (TUNING_DECKS, TUNING_SEEDS), "heldout": (HELDOUT_DECKS, HELDOUT_SEEDS)}
SIZE = (1280, 720)
#: Scene seeds start this far into each split's seed range.
SCENE_OFFSET = 777_000


def run_split(decks, seeds, scenes: int) -> dict:  # type: ignore[no-untyped-def]
    recognisers: dict = {}
    ms: list[float] = []
    found = moon = covered = covered_found = 0
    for k in range(scenes):
        deck = decks[k % len(decks)]
        scene = render_scene(seeds.start + SCENE_OFFSET + k, size=SIZE, deck=deck)
        if deck not in recognisers:
            recognisers[deck] = Recogniser(load_deck(taught_deck(deck)))
        t0 = time.thread_time()
        pose = recognisers[deck].locate(scene.image)
        ms.append((time.thread_time() - t0) * 1000)
        right = pose is not None and sorted(pose.moon_seats) == sorted(
            scene.truth["twilight"]["moon_seats"])
        found += pose is not None
        moon += right
        covered += scene.twilight_occluded
        covered_found += right and scene.twilight_occluded
    return {
        "scenes": scenes,
        "found_right_moon_sides": round(moon / max(scenes, 1), 4),
        "found": found,
        "found_with_wrong_moon_sides": found - moon,
        "covered_by_an_arm": covered,
        "covered_found": covered_found,
        "locate_cpu_ms_mean": round(float(np.mean(ms)), 1),
        "locate_cpu_ms_median": round(float(np.median(ms)), 1),
        "locate_cpu_ms_max": round(float(np.max(ms)), 1),
    }


def main() -> dict:
    import cv2

    from bench.bench_recognition import reference_ms

    cv2.setNumThreads(1)
    scenes = int(os.environ.get("BENCH_LOCATE_SCENES", "60"))
    png = cv2.imencode(".png", render_scene(TUNING_SEEDS.start, size=SIZE).image)[1].tobytes()
    reference = [reference_ms(png)]
    figures: dict = {"size": f"{SIZE[0]}x{SIZE[1]}"}
    for split, (decks, seeds) in SPLITS.items():
        figures[split] = run_split(decks, seeds, scenes)
        f = figures[split]
        print(f"{split}: {f['found_right_moon_sides']:.1%} found with the right moon sides "
              f"({f['found_with_wrong_moon_sides']} wrong), locate {f['locate_cpu_ms_mean']} ms "
              f"CPU mean, {f['locate_cpu_ms_median']} median, {f['locate_cpu_ms_max']} max",
              flush=True)
    reference.append(reference_ms(png))
    figures["reference_ms_before_after"] = reference
    keys = ("found_right_moon_sides", "found_with_wrong_moon_sides", "locate_cpu_ms_mean",
            "locate_cpu_ms_median")
    figures["side_by_side"] = {"columns": ["tuning", "heldout"],
                               "rows": {k: [figures["tuning"][k], figures["heldout"][k]]
                                        for k in keys}}
    return figures
