"""Recognition accuracy and speed (issue 4) on simulator scenes with seeds the tests
never use (>= 400000: the tests' scenes are below 10000, and a few named hard cases
the tests keep were found among 100000-100299).

``.venv/bin/python -m bench recognition``; ``BENCH_SCENES`` (default 500) sets the
scenes per art style and size, ``BENCH_SPEED_IMAGES`` (default 100) the speed batch.
Accuracy counts the sides whose uppermost card the arm does not cover, in the scenes
where the Twilight card was found (``side_accuracy``) and in all scenes (a missed
Twilight card loses its sides); covered sides are reported apart. ``unknown`` on an
empty side is counted apart from a named card there (``false_cards_on_empty``). Speed runs on one core (``cv2.setNumThreads(1)``).
"""

from __future__ import annotations

import os

# One core: numpy's BLAS must not spread the small matrix products over threads (it
# only takes effect when numpy is not imported yet, as under `python -m bench recognition`).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from companion.core.cards import SEATS  # noqa: E402
from vision.imagefile import png_decoder  # noqa: E402
from vision.profile import builtin_profile  # noqa: E402
from vision.recognise import Recogniser  # noqa: E402
from vision.sim.simulator import render_scene  # noqa: E402

SEED0 = 400_000
SIZES = ((1280, 720), (640, 480))


def accuracy(style: int, size: tuple[int, int], scenes: int) -> dict:
    rec = Recogniser(builtin_profile(style))
    c: Counter = Counter()
    for i in range(scenes):
        scene = render_scene(SEED0 + i, style=style, size=size)
        result = rec.recognise(scene.image)
        c["scenes"] += 1
        if not result["twilight"]["found"]:
            c["twilight_missed"] += 1
            c["twilight_missed_covered"] += scene.twilight_occluded
            c["sides_lost_with_twilight"] += sum(
                1 for seat in SEATS if scene.truth["sides"][seat.value] is not None
                and not scene.occluded[seat.value])
            continue
        c["twilight_found"] += 1
        c["moon_ok"] += result["twilight"]["moon_seats"] == scene.truth["twilight"]["moon_seats"]
        for seat in SEATS:
            want = scene.truth["sides"][seat.value]
            got = result["sides"][seat.value]
            pre = "covered_" if scene.occluded[seat.value] else ""
            if want is None:
                c["empty"] += 1
                c["empty_false"] += got not in (None, "unknown")
                c["empty_unknown"] += got == "unknown"
            else:
                c[pre + "sides"] += 1
                c[pre + ("right" if got == want else "unknown" if got == "unknown"
                         else "missed" if got is None else "wrong")] += 1
    sides = max(c["sides"], 1)
    return {
        "scenes": c["scenes"],
        "twilight_found": round(c["twilight_found"] / c["scenes"], 4),
        "twilight_missed_while_covered": c["twilight_missed_covered"],
        "moon_sides_right": round(c["moon_ok"] / max(c["twilight_found"], 1), 4),
        "sides": c["sides"],
        "side_accuracy": round(c["right"] / sides, 4),
        "side_accuracy_counting_twilight_misses": round(
            c["right"] / max(c["sides"] + c["sides_lost_with_twilight"], 1), 4),
        "abstain_unknown": round(c["unknown"] / sides, 4),
        "wrong_card": round(c["wrong"] / sides, 4),
        "card_missed": round(c["missed"] / sides, 4),
        "empty_sides": c["empty"],
        "false_cards_on_empty": c["empty_false"],
        "unknown_on_empty": c["empty_unknown"],
        "covered_sides": c["covered_sides"],
        "covered_side_accuracy": round(c["covered_right"] / max(c["covered_sides"], 1), 4),
    }


def speed(images: int, passes: int = 3) -> dict:
    """Recognition alone, in this process on one core: the batch of *images* frames
    *passes* times (the first pass includes nothing the others do not: the recogniser
    is built before it); every pass's rate, the median, and the stage times of the
    best pass (see :func:`cli` on a shared machine's speed)."""
    cv2.setNumThreads(1)
    frames = [render_scene(SEED0 + 50_000 + i).image for i in range(images)]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    rec = Recogniser(builtin_profile(0))  # cold: profile from the disk cache, features built
    t_init = time.perf_counter() - t0
    runs, refs = [], []
    png = cv2.imencode(".png", frames[0])[1].tobytes()
    for _ in range(passes):
        refs.append(reference_ms(png))
        stages: Counter = Counter()
        t1, c1 = time.perf_counter(), time.process_time()
        for frame in frames:
            rec.recognise(frame)
            stages.update(rec.timings)
        runs.append((time.perf_counter() - t1, time.process_time() - c1, stages))
    rss1 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    rates = [round(images / t, 2) for t, _, _ in runs]
    _, c_best, stages = min(runs, key=lambda run: run[0])
    return {
        "images": images,
        "startup_s": round(t_init, 3),
        "images_per_s_1280x720_one_core": sorted(rates)[len(rates) // 2],  # the median
        "images_per_s_best": max(rates),
        "images_per_s_each_pass": rates,
        "reference_ms_before_each_pass": refs,
        "images_per_cpu_s_1280x720_best": round(images / c_best, 2),
        "load_average_1min": round(os.getloadavg()[0], 2),
        "stage_ms_mean_best_pass": {k: round(v / images, 2) for k, v in stages.items()},
        "rss_growth_during_batch_mb": round((rss1 - rss0) / 1024, 1),
    }


def reference_ms(frame_png: bytes, repeats: int = 5) -> float:
    """How fast this core is just now: the best of *repeats* times (ms) of a fixed task of
    library calls only (decode a PNG frame, shrink it by area, blur it, a float32
    matrix product, a DFT), none of this project's code, so that runs of another day or
    minute (a shared machine's speed varies by a third) can be set side by side."""
    a = np.ones((400, 400), np.float32)
    best = float("inf")
    for _ in range(repeats):
        t0 = time.perf_counter()
        img = cv2.imdecode(np.frombuffer(frame_png, np.uint8), cv2.IMREAD_COLOR)
        small = cv2.resize(img, (853, 480), interpolation=cv2.INTER_AREA)
        cv2.GaussianBlur(small, (0, 0), 2.0)
        a @ a
        cv2.dft(a)
        best = min(best, time.perf_counter() - t0)
    return round(best * 1000, 2)


def cli(images: int, runs: int = 5) -> dict:
    """`twilight-companion recognise` on *images* saved frames, pinned to one core:
    cold (a new process: imports, built-in profile from its cache), whole batch; *runs*
    times (a shared machine's speed varies by up to a third from minute to minute: every run's
    rate is reported, the median and the best: others' load only ever slows a run, so
    the best is the nearest to the machine's own speed), on the frames as PNG (lossless,
    as the simulator draws them) and as JPEG at quality 95 (what a camera's stills are)."""
    cv2.setNumThreads(1)  # (for the reference task; the child pins itself to one core)
    out: dict = {"images": images, "runs": runs}
    with tempfile.TemporaryDirectory() as tmp:
        frames = [render_scene(SEED0 + 60_000 + i).image for i in range(images)]
        png = cv2.imencode(".png", frames[0])[1].tobytes()  # the reference task's frame
        for fmt, params in (("png", []), ("jpeg", [cv2.IMWRITE_JPEG_QUALITY, 95])):
            paths = []
            for i, frame in enumerate(frames):
                path = Path(tmp) / f"frame-{i:04d}.{'png' if fmt == 'png' else 'jpg'}"
                cv2.imwrite(str(path), frame, params)
                paths.append(str(path))
            each, refs = [], []
            for _ in range(runs):
                refs.append(reference_ms(png))
                each.append(_cli_run(paths))
            rates = [r["images_per_s"] for r in each]
            out[fmt] = {
                "images_per_s_cold_one_core": sorted(rates)[len(rates) // 2],  # the median
                "images_per_s_best": max(rates),
                "images_per_s_each_run": rates,
                "reference_ms_before_each_run": refs,
                "exit_status": max(r["exit_status"] for r in each),
                "lines": min(r["lines"] for r in each),
                "cpu_s": [r["cpu_s"] for r in each],
                "peak_rss_mb": max((r["peak_rss_mb"] or 0.0) for r in each),
            }
    out["load_average_1min"] = round(os.getloadavg()[0], 2)
    out["png_decoder"] = png_decoder()
    return out


def _cli_run(paths: list[str]) -> dict:
    """One cold `recognise` batch over *paths*, pinned to one core."""
    # The child pins itself and reports its own peak (VmHWM: this exec's memory
    # only; getrusage would count the fork of this big process as the child's).
    launcher = ("import os, sys\n"
                "if hasattr(os, 'sched_setaffinity'):\n"
                "    os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})\n"
                "from companion.cli import main\n"
                "status = main(sys.argv[1:])\n"
                "for line in open('/proc/self/status'):\n"
                "    if line.startswith('VmHWM'):\n"
                "        print('peak_kb', line.split()[1], file=sys.stderr)\n"
                "sys.exit(status)\n")
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    run = subprocess.run([sys.executable, "-c", launcher, "recognise", *paths],
                         capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    peak = [int(x.split()[1]) for x in run.stderr.splitlines() if x.startswith("peak_kb")]
    return {
        "exit_status": run.returncode,
        "lines": len(run.stdout.splitlines()),
        "images_per_s": round(len(paths) / wall, 2),
        "cpu_s": round((after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime), 2),
        "peak_rss_mb": round(peak[0] / 1024, 1) if peak else None,
    }


def main() -> dict:
    scenes = int(os.environ.get("BENCH_SCENES", "500"))
    figures: dict = {"accuracy": {}}
    for style in (0, 1):
        for size in SIZES:
            key = f"style{style}_{size[0]}x{size[1]}"
            figures["accuracy"][key] = accuracy(style, size, scenes)
            print(key, figures["accuracy"][key], flush=True)
    n = int(os.environ.get("BENCH_SPEED_IMAGES", "100"))
    figures["speed"] = speed(n)
    print("speed", figures["speed"], flush=True)
    figures["cli"] = cli(n)
    print("cli", figures["cli"], flush=True)
    return figures
