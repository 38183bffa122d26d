"""A card the camera can never read (issue 21): gaps instead of refusals.

For each of ``BENCH_GAP_HANDS`` hands (default 20; seeds from 210000, art styles 0
and 1 in turn, 960x540 at 10 fps, the table still for 12 s after it) one random card of the hand is drawn blank inside
its border (its cult's colour kept: :func:`vision.sim.movie.blank_art`), so no look
can ever name it. The real watch pipeline (tracker, recogniser, rules, game log)
watches the hand; then the gap is named through the page's API (``POST
/api/correct`` behind the table PIN, as a phone does) with the card that really
lay there. Figures:

- ``other_plays_in_order``: hands whose other 27 plays were logged exactly, in order;
- ``wrong_plays``: plays logged that are not the table's (0 is the only good value);
- ``gap_right``: hands with exactly one gap, at the blank card's seat and trick;
- ``choices``: how many cards the page offered for the gap (median, max);
- ``score_exact_after_naming``: hands whose score equals the truth once named;
- ``gap_latency_s``: seconds from the hand leaving the blank card to the gap event.
"""

from __future__ import annotations

import json
import os
import random
import statistics
import tempfile
import time
from pathlib import Path

from companion.app import Companion, Options
from companion.config import Config
from companion.core.gamelog import GameLog
from vision.sim.decks import taught_deck
from vision.sim.movie import HandMovie, SimulatedTable
from vision.tracker import TableTracker

SEED0 = 210_000
SIZE = (960, 540)
FPS = 10.0
PIN = "2468"
#: Seconds the table lies still after the hand before the recording ends.
END_STILL_S = 12.0


def gap_hand(seed: int, style: int, folder: Path) -> dict:
    """Watch one hand with one random card blank; name its gap through the page."""
    import web

    truth_movie = HandMovie(seed, style, SIZE, FPS, hands=1, render=False)
    for _ in truth_movie.frames():
        pass
    truth = [e for e in truth_movie.events if e["type"] == "play"]
    true_score = next(e["score"] for e in truth_movie.events if e["type"] == "hand")
    k = random.Random(f"gap-{seed}").randrange(len(truth))
    blank = truth[k]
    log = GameLog.open(folder / "data")
    events_path = folder / "events.jsonl"
    comp = Companion(Options(source="bench", events=str(events_path)), Config(), log)
    # the table lies still a while after the hand, as a real one does (the camera goes
    # on): a blank last card is a gap only once its seat has been still for a while
    comp.source = SimulatedTable(seed=seed, style=style, size=SIZE, fps=FPS, hands=1,
                                 realtime=False, end_still_s=END_STILL_S,
                                 blank={blank["card"]})
    comp.tracker = TableTracker(taught_deck(style))
    start = time.perf_counter()
    comp.watch()
    seconds = time.perf_counter() - start
    snap = log.snapshot()
    gaps = snap["hand"]["gaps"]
    # name the gap as a phone does: the table PIN, then the card that lay there
    app = web.create_app(log, config={"DATA_DIR": str(folder / "data"), "TABLE_PIN": PIN})
    client = app.test_client()
    token = client.get("/api/session").get_json()["csrf"]
    client.post("/api/login", json={"pin": PIN}, headers={"X-CSRF-Token": token})
    named = None
    if gaps:
        named = client.post("/api/correct", json={"index": gaps[0]["index"],
                                                  "card": blank["card"]},
                            headers={"X-CSRF-Token": token}).status_code
    after = log.snapshot()
    comp.close()
    log.close()
    events = [json.loads(x) for x in events_path.read_text().splitlines()]
    want = [(e["seat"], e["card"]) for i, e in enumerate(truth) if i != k]
    camera = [(e["seat"], e["card"]) for e in events
              if e["type"] == "play" and "gap" not in e]
    gap_events = [e for e in events if e["type"] == "gap"]
    right = (len(gaps) == 1 and gaps[0]["seat"] == blank["seat"]
             and gaps[0]["trick"] == k // 4 + 1 and gaps[0]["index"] == k + 1)
    return {
        "seed": seed, "style": style, "blank": f"{blank['seat']} {blank['card']} (play {k + 1})",
        "in_order": camera == want,
        "wrong": len([p for p in camera if p not in set(want)]),
        "missing": len([p for p in want if p not in set(camera)]),
        "gaps": len(gaps),
        "gap_right": right,
        "choices": len(gaps[0]["choices"]) if gaps else None,
        "true_card_offered": bool(gaps) and blank["card"] in gaps[0]["choices"],
        "named_status": named,
        "score_exact": after["hand"]["score"] == true_score and not after["hand"]["provisional"],
        "gap_latency_s": (gap_events[0]["frame"] - blank["clear_frame"]) / FPS
        if gap_events else None,
        "warnings": sum(1 for e in events if e["type"] == "warning"),
        "fps": round(comp.frames_seen / seconds, 1),
    }


def main() -> dict:
    hands = int(os.environ.get("BENCH_GAP_HANDS", 20))
    results = []
    for i in range(hands):
        with tempfile.TemporaryDirectory() as tmp:
            r = gap_hand(SEED0 + i, i % 2, Path(tmp))
        print(json.dumps(r), flush=True)
        results.append(r)
    latency = [r["gap_latency_s"] for r in results if r["gap_latency_s"] is not None]
    choices = [r["choices"] for r in results if r["choices"] is not None]
    figures = {
        "hands": len(results),
        "size": f"{SIZE[0]}x{SIZE[1]}",
        "other_plays_in_order": sum(r["in_order"] for r in results),
        "wrong_plays": sum(r["wrong"] for r in results),
        "missing_plays": sum(r["missing"] for r in results),
        "gap_right": sum(r["gap_right"] for r in results),
        "extra_gaps": sum(max(0, r["gaps"] - 1) for r in results),
        "true_card_offered": sum(r["true_card_offered"] for r in results),
        "choices_median": statistics.median(choices) if choices else None,
        "choices_max": max(choices) if choices else None,
        "score_exact_after_naming": sum(r["score_exact"] for r in results),
        "gap_latency_s_median": round(statistics.median(latency), 1) if latency else None,
        "gap_latency_s_max": max(latency) if latency else None,
        "warnings": sum(r["warnings"] for r in results),
        "per_hand": results,
    }
    print(json.dumps({k: v for k, v in figures.items() if k != "per_hand"}, indent=2))
    return figures


if __name__ == "__main__":
    main()
