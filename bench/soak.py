"""``make soak`` (``python -m bench.soak``): the long versions of the issue-9 tests.

Each part is bounded in time and writes its figures (or what failed) to
``bench/results/soak.json``; the tests' own helpers do the work, so the soak
checks exactly what ``make test`` checks, only longer:

- ``kills``  ``serve`` SIGKILLed 100 times during a recorded hand (tests/test_reliability);
- ``http``   2500 hypothesis-fuzzed requests over every route (tests/test_fuzz);
- ``score``  2500 fuzzed hand/match records into ``score`` (tests/test_fuzz);
- ``load``   20 phones on the live page for 10 minutes (tests/test_load), loopback only;
- ``demo``   ``demo --pace frames --speed 3`` for 200 hands (or ``SOAK_DEMO_MINUTES``, default 75;
  ~15 s a hand on two cores): every logged hand's score against the simulator's
  truth (the k-th hand of the log against the table's k-th), the simulated players'
  fixes, resident memory after the first hand, at the end, peak, and growth.

``python -m bench.soak [PART ...]`` runs only the parts named. Environment:
``SOAK_KILLS`` (100), ``SOAK_REQUESTS`` (2500), ``SOAK_RECORDS`` (2500),
``SOAK_LOAD_MINUTES`` (10), ``SOAK_DEMO_HANDS`` (200), ``SOAK_DEMO_MINUTES`` (75),
``SOAK_DEMO_SPEED`` (3), ``SOAK_DEMO_SEED`` (7), ``SOAK_DEMO_SIZE`` (the demo's default
camera size).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))

from bench.__main__ import write_results  # noqa: E402

CACHE = ROOT / "bench" / "results" / "tmp" / "soak"


def _env(name: str, default: float) -> float:
    return float(os.environ.get(name, default))


class _Base:
    """What tests' ``recording()`` needs of pytest's tmp_path_factory: a cache folder."""

    def getbasetemp(self) -> Path:
        CACHE.mkdir(parents=True, exist_ok=True)
        return CACHE


def _work(name: str) -> Path:
    return Path(tempfile.mkdtemp(prefix=f"soak-{name}-"))


def part_kills() -> dict:
    from serve_helpers import recording
    from test_reliability import power_cuts

    hand = recording(_Base())
    return power_cuts(_work("kills"), hand, int(_env("SOAK_KILLS", 100)), seed=2026)


def part_http() -> dict:
    from test_fuzz import fuzz_http

    n = int(_env("SOAK_REQUESTS", 2500))
    counts = fuzz_http(_work("http") / "data", n)
    return {"requests": sum(counts.values()), "by_status": dict(sorted(counts.items())),
            "5xx": sum(v for k, v in counts.items() if k.startswith("5"))}


def part_score() -> dict:
    from test_fuzz import fuzz_score

    n = int(_env("SOAK_RECORDS", 2500))
    counts = fuzz_score(_work("score"), n)
    return {"records": sum(counts.values()), "exit_0": counts["0"], "exit_2": counts["2"],
            "tracebacks": 0}


def part_load() -> dict:
    from serve_helpers import PACED, Serve, recording, write_config
    from test_load import check_load, phones_on_the_page

    minutes = _env("SOAK_LOAD_MINUTES", 10)
    movie = recording(_Base(), seed=41, hands=10)  # ~10 minutes of play at 15 fps
    work = _work("load")
    config = write_config(work / "serve.toml", f"paced:{movie}:15")
    with Serve(work / "data", config, program=PACED) as serve:
        serve.wait_ready()
        rss_start = _rss_mb(serve.proc.pid)
        figures = phones_on_the_page(serve, 20, minutes * 60)
        figures["rss_start_mb"] = round(rss_start, 1)
        figures["rss_end_mb"] = round(_rss_mb(serve.proc.pid), 1)
        figures["exit_status"] = serve.stop()
    try:
        check_load(figures)
        figures["ok"] = True
    except AssertionError as exc:
        figures["ok"] = False
        figures["failed"] = str(exc)[:400]
    return figures


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def _get(port: int, path: str) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as resp:
        return json.loads(resp.read())


def _logged_hands(data: Path) -> tuple[list[dict], dict[str, int]]:
    """Every complete hand in the log, oldest first (C2 plays and score), and how often
    the simulated players had to help (table plays, corrections, undos, new matches)."""
    from companion.core.gamelog import GameLog
    from companion.core.records import read_hand

    log = GameLog.open(data)
    try:
        hands = []
        for m in log.matches():
            record = log.match_record(m["number"])
            for h, summary in zip(record["hands"], m["hands"], strict=True):
                read_hand(h, record["mode"])  # a logged hand is a legal hand
                hands.append({"plays": [(p["seat"], p["card"]) for p in h["plays"]],
                              "score": summary["score"]})
        fixes: dict[str, int] = {}
        for e in log.events():
            kind = e["type"]
            if kind == "new_match" and not fixes:
                continue  # the log's own start
            if e["data"].get("source") == "table" or kind in ("new_match", "dismiss"):
                key = f"{kind}_by_table" if kind not in ("new_match", "dismiss") else kind
                fixes[key] = fixes.get(key, 0) + 1
            elif kind == "play":
                src = e["data"].get("source", "camera")
                fixes[f"play_by_{src}"] = fixes.get(f"play_by_{src}", 0) + 1
        return hands, fixes
    finally:
        log.close()


def demo_truth(hands: int, seed: int, speed: float, size: tuple[int, int]) -> list[dict]:
    """The demo table's hands (plays and score) as ``demo --seed`` plays them: the same
    movie without pictures (the game does not depend on rendering)."""
    from vision.sim.movie import HandMovie
    from vision.sources import DEFAULT_SIZE

    movie = HandMovie(seed, 0, size or DEFAULT_SIZE, 10.0, hands=hands, speed=speed,
                      render=False)
    for _ in movie.frames():
        pass
    out = [{"plays": [], "score": None} for _ in range(hands)]
    for e in movie.events:
        if e["type"] == "play":
            out[e["hand_index"]]["plays"].append((e["seat"], e["card"]))
        elif e["type"] == "hand":
            out[e["hand_index"]]["score"] = e["score"]
    return out


def compare_hands(logged: list[dict], truth: list[dict]) -> dict:
    """The log's k-th hand against the table's k-th (the demo's players keep them in
    step): wrong scores, hands whose plays differ, and the first few differences."""
    wrong, other_plays, where = 0, 0, []
    for k, (got, real) in enumerate(zip(logged, truth, strict=False)):
        if got["plays"] != real["plays"]:
            other_plays += 1
        if got["score"] != real["score"]:
            wrong += 1
            if len(where) < 5:
                first = next((i for i, (a, b) in enumerate(zip(got["plays"], real["plays"],
                                                                strict=False)) if a != b),
                             None)
                where.append({"hand_index": k, "logged": got["score"], "truth": real["score"],
                              "first_other_play": first})
    return {"hand_scores_compared": min(len(logged), len(truth)), "wrong_hand_scores": wrong,
            "hands_with_other_plays": other_plays, "wrong_hands": where}


def _table_fixes(output: list[str]) -> int | None:
    """The count ``demo`` prints when it ends ("demo: N table fixes ...")."""
    for line in reversed(output):
        if line.startswith("demo: ") and "table fixes" in line:
            return int(line.split()[1])
    return None


def part_demo() -> dict:
    from serve_helpers import command, free_port

    hands = int(_env("SOAK_DEMO_HANDS", 200))
    minutes = _env("SOAK_DEMO_MINUTES", 75)
    speed = _env("SOAK_DEMO_SPEED", 3)
    seed = int(_env("SOAK_DEMO_SEED", 7))
    work = _work("demo")
    config = work / "demo.toml"
    size_text = os.environ.get("SOAK_DEMO_SIZE", "")
    size = tuple(int(v) for v in size_text.split("x")) if size_text else ()
    config.write_text("[camera]\nwidth = {}\nheight = {}\n".format(*size) if size else "")
    port = free_port()
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock"}
    env.pop("NOTIFY_SOCKET", None)
    args = [*command(), "demo", "--data", str(work / "data"), "--port", str(port),
            "--config", str(config), "--hands", str(hands), "--seed", str(seed),
            "--speed", str(speed), "--pace", "frames"]
    samples: list[tuple[float, float, int]] = []  # (minutes, rss MB, hands done)
    t0 = time.monotonic()
    with open(work / "demo.out", "wb") as out:
        proc = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        try:
            while proc.poll() is None and time.monotonic() - t0 < minutes * 60:
                time.sleep(5)
                rss = _rss_mb(proc.pid) if proc.poll() is None else 0.0
                try:
                    done = sum(m["hand_count"] for m in _get(port, "/api/matches")["matches"])
                except (OSError, KeyError, TypeError, ValueError):
                    continue
                if rss:
                    samples.append((round((time.monotonic() - t0) / 60, 2), round(rss, 1),
                                    done))
            finished = proc.poll() is not None
            if not finished:
                proc.send_signal(signal.SIGTERM)
            rc = proc.wait(60)
        finally:
            if proc.poll() is None:
                proc.kill()
    played = time.monotonic() - t0
    logged, fixes = _logged_hands(work / "data")
    truth = demo_truth(hands, seed, speed, size)
    tail = (work / "demo.out").read_text(errors="replace").splitlines()
    warm = next((s for s in samples if s[2] >= 1), samples[0] if samples else None)
    end = samples[-1] if samples else None
    half = next((s for s in samples if s[2] >= len(logged) / 2), None)
    return {
        "command": " ".join(["twilight-companion", *args[len(command()):]]),
        "exit_status": rc, "ended_by_itself": finished, "minutes": round(played / 60, 1),
        "hands_goal": hands, "hands_logged": len(logged),
        **compare_hands(logged, truth),
        "table_fixes": _table_fixes(tail),
        "log_events_by_kind": fixes,
        "rss_after_first_hand_mb": warm[1] if warm else None,
        "rss_end_mb": end[1] if end else None,
        "rss_peak_mb": max((s[1] for s in samples), default=None),
        "rss_growth_mb": round(end[1] - warm[1], 1) if warm and end else None,
        "rss_growth_second_half_mb": round(end[1] - half[1], 1) if half and end else None,
        "goal_growth_mb": 5,
        "seconds_per_hand": round(played / max(1, len(logged)), 1),
        "samples_every_5s": samples[:: max(1, len(samples) // 40)],
    }


PARTS = {"kills": part_kills, "http": part_http, "score": part_score, "load": part_load,
         "demo": part_demo}


def main(argv: list[str]) -> int:
    names = argv or list(PARTS)
    results_file = ROOT / "bench" / "results" / "soak.json"
    figures: dict = {}
    if results_file.exists():  # keep the figures of parts not run this time
        figures = json.loads(results_file.read_text()).get("figures", {})
    failed = 0
    for name in names:
        print(f"== soak {name}", flush=True)
        t0 = time.monotonic()
        try:
            result = PARTS[name]()
        except Exception as exc:  # noqa: BLE001 - a failed part is a figure too
            failed += 1
            result = {"failed": f"{type(exc).__name__}: {exc}"[:800],
                      "where": traceback.format_exc(limit=3)[-800:]}
        result["part_seconds"] = round(time.monotonic() - t0, 1)
        result["command"] = result.get("command", f"python -m bench.soak {name}")
        figures[name] = result
        print(json.dumps(result, indent=1)[:3000], flush=True)
        write_results("soak", figures)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
