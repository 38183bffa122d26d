"""Runs for deciding a recognition or tracker change (issue 20), on the tuning split.

    python -m bench.tuning hands FROM TO [--jobs 2] [--out FILE.json] [--heldout]
    python -m bench.tuning scenes N BASE [--jobs 2] [--out FILE.json] [--heldout]
    python -m bench.tuning covered N BASE [--jobs 2] [--out FILE.json] [--heldout]

``hands``: the watch pipeline (:func:`bench.bench_watch.watch_hand`) on hands FROM to
TO - 1 of the split, laid out as ``bench watch`` lays them (hand i: seed split start +
``HAND_OFFSET`` + i, deck i of the split's decks, cycling); one line per hand (plays
right, extra, warnings, reads, frames per CPU second, plays over 5 looks late) and the
totals. ``scenes``: N scenes of every deck of the split (seeds BASE + 1000 x deck index
+ k, sizes cycling 640x480, 1280x720, 1920x1080) read in process, one
:class:`vision.recognise.Recogniser` per deck as ``recognise`` reads a batch; per deck
and in all: sides right, wrong, unknown, missed, empty sides read as a card, and sides
lost with the Twilight card. ``--out`` keeps every hand's or side's outcome (JSON), to
compare two versions hand by hand or side by side. ``covered``: as ``scenes``, each
scene with an arm over the table, those whose Twilight card it covers only (more than
the simulator's ``OCCLUDED_FRACTION``): the Twilight card found, and on the card (its
outline within a tenth of the diagonal, the right moon sides), besides the sides.

Each hand or deck runs in a process of its own (``--jobs`` at a time, one core each).
``--heldout`` runs the held-out split: a veto only, no decision may look at it.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from collections import Counter
from multiprocessing import get_context
from pathlib import Path

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

SIZES = ((640, 480), (1280, 720), (1920, 1080))
LATE_LOOKS = 5  # the latency goal (frames after the hand leaves)


def _split(heldout: bool):  # type: ignore[no-untyped-def]
    from vision.sim.split import HELDOUT_DECKS, HELDOUT_SEEDS, TUNING_DECKS, TUNING_SEEDS

    return (HELDOUT_DECKS, HELDOUT_SEEDS) if heldout else (TUNING_DECKS, TUNING_SEEDS)


def one_hand(job: tuple[int, bool]) -> dict:
    """Hand *i* of the split (``bench watch``'s layout): its outcome."""
    import cv2

    from bench.bench_watch import HAND_OFFSET, watch_hand

    i, heldout = job
    cv2.setNumThreads(1)
    decks, seeds = _split(heldout)
    deck = decks[i % len(decks)]
    with tempfile.TemporaryDirectory() as tmp:
        r = watch_hand(seeds.start + HAND_OFFSET + i, deck, Path(tmp))
    return {**r, "deck": str(deck), "seed": seeds.start + HAND_OFFSET + i}


def one_deck(job: tuple[int, int, int, bool, bool]) -> list[dict]:
    """*n* scenes of deck *d* of the split from seed *base* + 1000 *d*: every side
    (*covered*: with an arm, of those whose Twilight card it covers)."""
    import cv2

    from vision.profile import load_deck
    from vision.recognise import Recogniser
    from vision.sim.decks import taught_deck
    from vision.sim.simulator import quad_error, render_scene

    d, n, base, heldout, covered = job
    cv2.setNumThreads(1)
    deck = _split(heldout)[0][d]
    rec = Recogniser(load_deck(taught_deck(deck)))
    sides = []
    for k in range(n):
        seed = base + 1000 * d + k
        scene = render_scene(seed, size=SIZES[k % len(SIZES)], deck=deck,
                             **({"hand": True} if covered else {}))
        if covered and not scene.twilight_occluded:
            continue
        found = rec.recognise(scene.image)
        seen = bool(found["twilight"]["found"])
        error = (round(quad_error(rec.last_pose.quad, scene.twilight_quad), 3)
                 if seen and rec.last_pose is not None else None)
        for seat, want in scene.truth["sides"].items():
            sides.append({"deck": str(deck), "seed": seed, "seat": seat, "want": want,
                          "got": found["sides"].get(seat) if seen else "twilight missed",
                          "covered": bool(scene.occluded[seat]), "twilight_error": error,
                          "moon_right": seen and found["twilight"]["moon_seats"]
                          == scene.truth["twilight"]["moon_seats"]})
    return sides


def outcome(side: dict) -> str:
    """What became of one side (an arm over it aside)."""
    if side["got"] == "twilight missed":
        return "lost with the Twilight card"
    if side["want"] is None:
        return {None: "empty", "unknown": "empty read as unknown"}.get(side["got"],
                                                                       "empty read as a card")
    if side["got"] == side["want"]:
        return "right"
    return {"unknown": "unknown", None: "missed"}.get(side["got"], "wrong")


def hands(first: int, stop: int, jobs: int, heldout: bool) -> list[dict]:
    done = []
    with get_context("spawn").Pool(jobs, maxtasksperchild=1) as pool:
        for r in pool.imap(one_hand, [(i, heldout) for i in range(first, stop)]):
            late = sum(1 for x in r["latency"] if x > LATE_LOOKS)
            print(f"{r['seed']} deck {r['deck']:>7}: plays {r['right_plays']}/{r['plays']} "
                  f"in place {r['in_place']} extra {r['extra']} exact {r['exact']} "
                  f"score {r['score_exact']} gaps named {r['gaps_named']} warnings {r['warnings']} "
                  f"reads {r['reads']} {r['frames'] / max(r['cpu_seconds'], 1e-9):.0f} "
                  f"frames per CPU s, late {late}", flush=True)
            done.append(r)
    frames, cpu = sum(r["frames"] for r in done), sum(r["cpu_seconds"] for r in done)
    print(f"in all: plays {sum(r['right_plays'] for r in done)}/{sum(r['plays'] for r in done)}"
          f", in place {sum(r['in_place'] for r in done)}"
          f", scores exact {sum(r['score_exact'] for r in done)}"
          f", hands exact {sum(r['exact'] for r in done)}/{len(done)}, extra "
          f"{sum(r['extra'] for r in done)}, warnings {sum(r['warnings'] for r in done)}, "
          f"reads {sum(r['reads'] for r in done)}, late "
          f"{sum(1 for r in done for x in r['latency'] if x > LATE_LOOKS)}, "
          f"{frames / max(cpu, 1e-9):.0f} frames per CPU s")
    return done


def scenes(n: int, base: int, jobs: int, heldout: bool, covered: bool = False) -> list[dict]:
    done: list[dict] = []
    decks = _split(heldout)[0]
    work = [(d, n, base, heldout, covered) for d in range(len(decks))]
    with get_context("spawn").Pool(jobs, maxtasksperchild=1) as pool:
        for deck, sides in zip(decks, pool.imap(one_deck, work), strict=True):
            counts = Counter(outcome(s) for s in sides if not s["covered"])
            print(f"deck {deck}: {dict(counts)}", flush=True)
            done += sides
    counts = Counter(outcome(s) for s in done if not s["covered"])
    cards = sum(counts[k] for k in ("right", "wrong", "unknown", "missed"))
    print(f"in all: right {counts['right']}/{cards}, wrong {counts['wrong']}, "
          f"unknown {counts['unknown']}, missed {counts['missed']}; {dict(counts)}")
    if covered:
        seen = {(s["deck"], s["seed"]): s for s in done}.values()
        found = [s for s in seen if s["got"] != "twilight missed"]
        on_card = [s for s in found if s["twilight_error"] < 0.1 and s["moon_right"]]
        print(f"Twilight cards covered {len(seen)}: found {len(found)}, on the card "
              f"{len(on_card)}, moon sides wrong {sum(not s['moon_right'] for s in found)}")
    return done


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.tuning", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("what", choices=("hands", "scenes", "covered"))
    parser.add_argument("a", type=int, help="hands: the first; scenes: scenes per deck")
    parser.add_argument("b", type=int, help="hands: the one after the last; scenes: BASE seed")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--heldout", action="store_true")
    args = parser.parse_args(argv)
    if args.what == "hands":
        done = hands(args.a, args.b, args.jobs, args.heldout)
    else:
        done = scenes(args.a, args.b, args.jobs, args.heldout, args.what == "covered")
    if args.out:
        args.out.write_text(json.dumps(done))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
