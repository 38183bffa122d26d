"""Recognition accuracy and speed (issues 4 and 20) on the simulator's randomised
material, tuning and held-out side by side (the split: :mod:`vision.sim.split`).

Accuracy goes through the product's own interface: each configuration's scenes
are written as PNG files and read by one ``twilight-companion recognise --deck
DECK`` run (the deck taught by the real ``deck enrol``; the built-in deck needs
none), so the figures hold whatever the recogniser's insides become. A
configuration is a deck at a picture size (640x480, 1280x720, 1920x1080); each
scene draws its own card rotations (radial, aligned, askew), card size (45-150
px at 720 p), tilt, light, cloth, noise, blur and JPEG (``render_scene(deck=)``).

Per configuration and pooled: sides right, wrong, abstained (``unknown``),
missed (null where a card lies), Twilight card found, moon sides right; broken
down by rotation kind, Twilight aspect, card size, light, cloth. Sides under the
arm are counted apart; a missed Twilight card loses its sides (also reported).
``recognise --card`` on card photos (``render_card_photo``), tight crops apart.
Scenes without the Twilight card (a few cards lying about): Twilight cards found
there, and scenes where a card was named at a side.

``BENCH_SCENES`` (default 2100): held-out scenes in all (spread evenly over the
held-out decks and sizes); ``BENCH_TUNING_SCENES`` (default: the same) the
tuning scenes; ``BENCH_CARD_PHOTOS`` (default 700) card photos per split;
``BENCH_EMPTY_SCENES`` (default 180) scenes without the Twilight card per split;
``BENCH_SPEED_IMAGES`` (default 100) the speed batch, 1280x720 held-out scenes of
the built-in deck. Speed runs on one core (``cv2.setNumThreads(1)``) beside a
reference task timed in the same run.
"""

from __future__ import annotations

import os

# One core: numpy's BLAS must not spread the small matrix products over threads (it
# only takes effect when numpy is not imported yet, as under `python -m bench recognition`).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")
os.environ.setdefault("OMP_NUM_THREADS", "1")

import json  # noqa: E402
import math  # noqa: E402
import resource  # noqa: E402
import subprocess  # noqa: E402
import sys  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections import Counter, defaultdict  # noqa: E402
from pathlib import Path  # noqa: E402

import cv2  # noqa: E402
import numpy as np  # noqa: E402

from companion.core.cards import SEATS  # noqa: E402
from vision.imagefile import png_decoder  # noqa: E402
from vision.sim.decks import design_summary, taught_deck  # noqa: E402
from vision.sim.simulator import render_card_photo, render_scene  # noqa: E402
from vision.sim.split import HELDOUT_DECKS, HELDOUT_SEEDS, TUNING_DECKS, TUNING_SEEDS  # noqa: E402

SIZES = ((640, 480), (1280, 720), (1920, 1080))
SPLITS = {"tuning": (TUNING_DECKS, TUNING_SEEDS), "heldout": (HELDOUT_DECKS, HELDOUT_SEEDS)}
#: Seeds per configuration block within a split's range (scenes, then card photos).
CONFIG_BLOCK = 10_000
PHOTO_OFFSET = 500_000
EMPTY_OFFSET = 700_000
SPEED_OFFSET = 900_000
ASPECT_BINS = ((1.0, 1.2), (1.2, 1.4), (1.4, 1.6), (1.6, 1.81))
CARD_PX_BINS = ((45, 70), (70, 100), (100, 151))
LAUNCHER = "import sys\nfrom companion.cli import main\nsys.exit(main(sys.argv[1:]))\n"


def _bin(value: float, bins: tuple[tuple[float, float], ...]) -> str:
    for lo, hi in bins:
        if lo <= value < hi:
            return f"{lo:g}-{hi:g}"
    return "other"


def recognise_cli(paths: list[str], deck, card: bool = False) -> dict[str, dict]:
    """``twilight-companion recognise`` over *paths* with *deck* taught; its output
    lines by image path. An image that makes the command fail (no line for it, the
    run stopped) gets ``{"error": "crash", "stderr": ...}`` and the run goes on
    after it in a new process."""
    args = ["recognise"]
    profile = taught_deck(deck)
    if profile is not None:
        args += ["--deck", profile]
    if card:
        args.append("--card")
    out: dict[str, dict] = {}
    todo = list(paths)
    while todo:
        run = subprocess.run([sys.executable, "-c", LAUNCHER, *args, *todo],
                             capture_output=True, text=True, check=False)
        for line in run.stdout.splitlines():
            try:
                item = json.loads(line)
            except ValueError:
                continue
            out[item.get("image")] = item
        rest = [p for p in todo if p not in out]
        if not rest:
            break
        out[rest[0]] = {"image": rest[0], "error": "crash", "exit_status": run.returncode,
                        "stderr": run.stderr.strip()[-400:]}
        print(f"recognise failed on {rest[0]}: {run.stderr.strip()[-200:]}", flush=True)
        todo = rest[1:]
    return out


def _score_scene(c: Counter, scene, result: dict | None) -> None:
    """Add one scene's outcome to the counter *c*."""
    c["scenes"] += 1
    truth = scene.truth
    if result is not None and result.get("error") == "crash":
        c["crashes"] += 1
    found = bool(result and "error" not in result and result.get("twilight", {}).get("found"))
    if not scene.twilight_occluded:
        c["twilight_uncovered"] += 1
        c["twilight_uncovered_found"] += found
    if result is None or "error" in result or not result.get("twilight", {}).get("found"):
        c["twilight_missed"] += 1
        c["twilight_missed_covered"] += scene.twilight_occluded
        c["sides_lost_with_twilight"] += sum(
            1 for seat in SEATS if truth["sides"][seat.value] is not None
            and not scene.occluded[seat.value])
        return
    c["twilight_found"] += 1
    c["moon_ok"] += result["twilight"]["moon_seats"] == truth["twilight"]["moon_seats"]
    for seat in SEATS:
        want = truth["sides"][seat.value]
        got = result["sides"].get(seat.value)
        pre = "covered_" if scene.occluded[seat.value] else ""
        if want is None:
            c["empty"] += 1
            c["empty_false"] += got not in (None, "unknown")
            c["empty_unknown"] += got == "unknown"
        else:
            c[pre + "sides"] += 1
            c[pre + ("right" if got == want else "unknown" if got == "unknown"
                     else "missed" if got is None else "wrong")] += 1


def summary(c: Counter) -> dict:
    sides = max(c["sides"], 1)
    return {
        "scenes": c["scenes"],
        "recognise_crashed": c["crashes"],
        "sides": c["sides"],
        "sides_right": round(c["right"] / sides, 4),
        "sides_wrong": round(c["wrong"] / sides, 4),
        "sides_abstain": round(c["unknown"] / sides, 4),
        "sides_missed": round(c["missed"] / sides, 4),
        "twilight_found": round(c["twilight_found"] / max(c["scenes"], 1), 4),
        "twilight_found_where_no_arm_covers_it": round(
            c["twilight_uncovered_found"] / max(c["twilight_uncovered"], 1), 4),
        "moon_sides_right": round(c["moon_ok"] / max(c["twilight_found"], 1), 4),
        "sides_right_counting_twilight_misses": round(
            c["right"] / max(c["sides"] + c["sides_lost_with_twilight"], 1), 4),
        "twilight_missed_while_covered": c["twilight_missed_covered"],
        "empty_sides": c["empty"],
        "false_cards_on_empty": c["empty_false"],
        "unknown_on_empty": c["empty_unknown"],
        "covered_sides": c["covered_sides"],
        "covered_sides_right": round(c["covered_right"] / max(c["covered_sides"], 1), 4),
    }


def _factor_keys(scene, size: tuple[int, int]) -> list[tuple[str, str]]:
    f = scene.factors
    return [("rotation", f["rotation"]),
            ("twilight_aspect", _bin(f["twilight_aspect"], ASPECT_BINS)),
            ("card_px_at_720", _bin(f["card_px_720"], CARD_PX_BINS)),
            ("light", f["light"]), ("cloth", f["cloth"]),
            ("size", f"{size[0]}x{size[1]}"), ("deck", str(f["deck"])),
            ("hand", str(f["hand"]).lower())]


def accuracy(split: str, scenes_total: int) -> dict:
    """Every configuration of *split* (its decks at every size), *scenes_total* scenes
    in all; per configuration and pooled, with the breakdowns."""
    decks, seeds = SPLITS[split]
    per = max(1, math.ceil(scenes_total / (len(decks) * len(SIZES))))
    configs: dict[str, dict] = {}
    pooled: Counter = Counter()
    by: dict[tuple[str, str], Counter] = defaultdict(Counter)
    by_size: dict[str, Counter] = defaultdict(Counter)
    for di, deck in enumerate(decks):
        for si, size in enumerate(SIZES):
            base = seeds.start + (di * len(SIZES) + si) * CONFIG_BLOCK
            c: Counter = Counter()
            t0 = time.perf_counter()
            with tempfile.TemporaryDirectory() as tmp:
                batch = []
                for k in range(per):
                    scene = render_scene(base + k, size=size, deck=deck)
                    path = str(Path(tmp) / f"scene-{base + k}.png")
                    cv2.imwrite(path, scene.image, [cv2.IMWRITE_PNG_COMPRESSION, 1])
                    scene.image = None  # keep only the truth
                    batch.append((path, scene))
                results = recognise_cli([p for p, _ in batch], deck)
            for path, scene in batch:
                one: Counter = Counter()
                _score_scene(one, scene, results.get(path))
                c.update(one)
                pooled.update(one)
                by_size[f"{size[0]}x{size[1]}"].update(one)
                for key in _factor_keys(scene, size):
                    by[key].update(one)
            key = f"{deck}_{size[0]}x{size[1]}"
            configs[key] = summary(c)
            print(f"{split} {key}: {_line(configs[key])} ({time.perf_counter() - t0:.0f} s)",
                  flush=True)
    breakdown: dict[str, dict[str, dict]] = defaultdict(dict)
    for (name, value), c in sorted(by.items()):
        breakdown[name][value] = summary(c)
    return {"decks": [str(d) for d in decks],
            "deck_designs": {str(d): design_summary(d) for d in decks},
            "scenes_per_configuration": per, "seeds_from": seeds.start,
            "configurations": configs, "pooled": summary(pooled),
            "by_size": {k: summary(v) for k, v in by_size.items()},
            "by": dict(breakdown)}


def _line(s: dict) -> str:
    return (f"right {s['sides_right']:.2%} wrong {s['sides_wrong']:.2%} "
            f"abstain {s['sides_abstain']:.2%} missed {s['sides_missed']:.2%} "
            f"twilight {s['twilight_found']:.2%} moon {s['moon_sides_right']:.2%} "
            f"(sides {s['sides']}, scenes {s['scenes']})")


def card_photos(split: str, photos_total: int) -> dict:
    """``recognise --card`` on photos of single cards of *split*'s decks."""
    decks, seeds = SPLITS[split]
    per = max(1, math.ceil(photos_total / len(decks)))
    total: Counter = Counter()
    kinds: dict[str, Counter] = defaultdict(Counter)
    per_deck = {}
    for di, deck in enumerate(decks):
        base = seeds.start + PHOTO_OFFSET + di * CONFIG_BLOCK
        c: Counter = Counter()
        with tempfile.TemporaryDirectory() as tmp:
            batch = []
            for k in range(per):
                image, cid, f = render_card_photo(base + k, deck, with_factors=True)
                path = str(Path(tmp) / f"card-{base + k}.png")
                cv2.imwrite(path, image, [cv2.IMWRITE_PNG_COMPRESSION, 1])
                batch.append((path, cid, f))
            results = recognise_cli([p for p, _, _ in batch], deck, card=True)
        for path, cid, f in batch:
            got = results.get(path, {}).get("card")
            if results.get(path, {}).get("error") == "crash":
                for counter in (c, total):
                    counter["crashes"] += 1
            outcome = "right" if got == cid else "unknown" if got in (None, "unknown") \
                else "wrong"
            for counter in (c, total, kinds["tight" if f["tight"] else "table_around"]):
                counter["photos"] += 1
                counter[outcome] += 1
        per_deck[str(deck)] = _photo_summary(c)
        print(f"{split} card photos {deck}: {per_deck[str(deck)]}", flush=True)
    return {"photos": total["photos"], **_photo_summary(total),
            "by_kind": {k: _photo_summary(v) for k, v in kinds.items()}, "by_deck": per_deck}


def _photo_summary(c: Counter) -> dict:
    n = max(c["photos"], 1)
    return {"photos": c["photos"], "right": round(c["right"] / n, 4),
            "wrong": round(c["wrong"] / n, 4), "abstain": round(c["unknown"] / n, 4),
            "recognise_crashed": c["crashes"]}


def no_twilight(split: str, scenes_total: int) -> dict:
    """Scenes of *split*'s decks without the Twilight card, a few cards lying about
    (sizes in turn): how often ``recognise`` finds a Twilight card there, or names a
    card at a side (it should do neither)."""
    decks, seeds = SPLITS[split]
    per = max(1, math.ceil(scenes_total / len(decks)))
    c: Counter = Counter()
    for di, deck in enumerate(decks):
        base = seeds.start + EMPTY_OFFSET + di * CONFIG_BLOCK
        with tempfile.TemporaryDirectory() as tmp:
            paths = []
            for k in range(per):
                scene = render_scene(base + k, size=SIZES[k % len(SIZES)], deck=deck,
                                     twilight=False)
                path = str(Path(tmp) / f"empty-{base + k}.png")
                cv2.imwrite(path, scene.image, [cv2.IMWRITE_PNG_COMPRESSION, 1])
                paths.append(path)
            results = recognise_cli(paths, deck)
        for path in paths:
            r = results.get(path, {})
            c["scenes"] += 1
            c["crashes"] += r.get("error") == "crash"
            c["found"] += bool(r.get("twilight", {}).get("found"))
            c["named"] += any(v not in (None, "unknown") for v in r.get("sides", {}).values())
    n = max(c["scenes"], 1)
    out = {"scenes": c["scenes"], "twilight_found_falsely": round(c["found"] / n, 4),
           "scenes_with_a_card_named": c["named"], "recognise_crashed": c["crashes"]}
    print(f"{split} without a Twilight card: {out}", flush=True)
    return out


def side_by_side(figures: dict) -> dict:
    """Tuning and held-out figures next to each other: pooled, per size, and the
    built-in deck (in both splits, on different scene seeds) per size."""
    keys = ("sides_right", "sides_wrong", "sides_abstain", "twilight_found",
            "twilight_found_where_no_arm_covers_it", "moon_sides_right")
    tun, held = figures["tuning"], figures["heldout"]
    table = {"pooled": {k: [tun["pooled"][k], held["pooled"][k]] for k in keys}}
    for size in tun["by_size"]:
        table[size] = {k: [tun["by_size"][size][k], held["by_size"][size][k]] for k in keys}
        cfg = f"builtin_{size}"
        table[f"builtin {size}"] = {k: [tun["configurations"][cfg][k],
                                        held["configurations"][cfg][k]] for k in keys}
    table["card_photos_right"] = [figures["card_photos"]["tuning"]["right"],
                                  figures["card_photos"]["heldout"]["right"]]
    table["twilight_found_falsely_without_one"] = [
        figures["no_twilight"]["tuning"]["twilight_found_falsely"],
        figures["no_twilight"]["heldout"]["twilight_found_falsely"]]
    return {"columns": ["tuning", "heldout"], "rows": table}


def speed(images: int, passes: int = 3) -> dict:
    """Recognition alone, in this process on one core: the batch of *images* frames
    *passes* times (the first pass includes nothing the others do not: the recogniser
    is built before it); every pass's rate, the median, and the stage times of the
    best pass (see :func:`cli` on a shared machine's speed)."""
    cv2.setNumThreads(1)
    frames = [render_scene(HELDOUT_SEEDS.start + SPEED_OFFSET + i, deck="builtin").image
              for i in range(images)]
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    from vision.profile import builtin_profile
    from vision.recognise import Recogniser

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
        frames = [render_scene(HELDOUT_SEEDS.start + SPEED_OFFSET + 50_000 + i,
                               deck="builtin").image for i in range(images)]
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
            # A run that stopped early did less work: its rate is not a speed.
            rates = [r["images_per_s"] if r["lines"] == images else None for r in each]
            out[fmt] = {
                "images_per_s_cold_one_core": _median(rates),
                "images_per_s_best": max((r for r in rates if r is not None), default=None),
                "images_per_s_each_run": rates,
                "reference_ms_before_each_run": refs,
                "exit_status": max(r["exit_status"] for r in each),
                "lines": min(r["lines"] for r in each),
                "every_image_read": min(r["lines"] for r in each) == images,
                "cpu_s": [r["cpu_s"] for r in each],
                "peak_rss_mb": max((r["peak_rss_mb"] or 0.0) for r in each),
            }
    out["load_average_1min"] = round(os.getloadavg()[0], 2)
    out["png_decoder"] = png_decoder()
    return out


def _median(values: list) -> float | None:
    """The median of the values that are not None (None if none is)."""
    known = sorted(v for v in values if v is not None)
    return known[len(known) // 2] if known else None


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
    held_total = int(os.environ.get("BENCH_SCENES", "2100"))
    tuning_total = int(os.environ.get("BENCH_TUNING_SCENES", str(held_total)))
    photos = int(os.environ.get("BENCH_CARD_PHOTOS", "700"))
    figures: dict = {"split": {"tuning_decks": [str(d) for d in TUNING_DECKS],
                               "heldout_decks": [str(d) for d in HELDOUT_DECKS],
                               "tuning_seeds": [TUNING_SEEDS.start, TUNING_SEEDS.stop],
                               "heldout_seeds": [HELDOUT_SEEDS.start, HELDOUT_SEEDS.stop]}}
    figures["tuning"] = accuracy("tuning", tuning_total)
    figures["heldout"] = accuracy("heldout", held_total)
    figures["card_photos"] = {split: card_photos(split, photos) for split in SPLITS}
    empty = int(os.environ.get("BENCH_EMPTY_SCENES", "180"))
    figures["no_twilight"] = {split: no_twilight(split, empty) for split in SPLITS}
    figures["side_by_side"] = side_by_side(figures)
    print("side by side (tuning, held-out):", flush=True)
    for row, values in figures["side_by_side"]["rows"].items():
        print(f"  {row}: {values}", flush=True)
    n = int(os.environ.get("BENCH_SPEED_IMAGES", "100"))
    try:
        figures["speed"] = speed(n)
        print("speed", figures["speed"], flush=True)
    except Exception as exc:  # the in-process API is the recogniser's to change
        figures["speed"] = {"error": repr(exc)}
    figures["cli"] = cli(n)
    print("cli", figures["cli"], flush=True)
    return figures
