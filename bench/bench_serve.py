"""``twilight-companion serve`` on a 10-hand recording (issue 8): memory, CPU, exactness.

A 10-hand movie is rendered once by ``simulate`` (cached in bench/results/tmp/) and
given to the real ``serve`` as its camera (a frame folder, read as fast as the
companion takes it) with a real game log and web page on a free loopback port.
Sampled from /proc every half second:

- resident memory at start (first frames) and end, peak, and the growth over the
  second half of the run (goal: ≤ 150 MB, no growth);
- CPU per frame (process CPU seconds / frames read) and what that is as a share of
  one core at the camera's 10 frames a second;
- plays and hand scores against the simulator's truth.

``BENCH_SERVE_HANDS`` (default 10), ``BENCH_SERVE_SIZE`` (default 1280x720),
``BENCH_SERVE_SEED`` (default 300000), ``BENCH_SERVE_CACHE``: ``cold`` (default: an
empty cache, so the built-in deck profile is drawn at start as on a Pi's first start,
the larger figure) or ``warm`` (the user's cache, as at every later start).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CACHE = ROOT / "bench" / "results" / "tmp"
FPS = 10.0


def command() -> list[str]:
    exe = Path(sys.executable).with_name("twilight-companion")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "companion"]


def render(hands: int, size: str, seed: int) -> Path:
    folder = CACHE / f"serve-{hands}h-{size}-{seed}"
    if not (folder / "truth.jsonl").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=CACHE))
        t0 = time.monotonic()
        subprocess.run([*command(), "simulate", "--out", str(tmp), "--hands", str(hands),
                        "--seed", str(seed), "--size", size], check=True, cwd=ROOT)
        print(f"rendered {hands} hands at {size} in {time.monotonic() - t0:.0f} s", flush=True)
        tmp.rename(folder)
    return folder


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def get(port: int, path: str, timeout: float = 5.0) -> dict:
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=timeout) as resp:
        return json.loads(resp.read())


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def cpu_s(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def truth_hands(folder: Path) -> list[dict]:
    hands: dict[int, dict] = {}
    for line in (folder / "truth.jsonl").read_text().splitlines():
        e = json.loads(line)
        h = hands.setdefault(int(e.get("hand_index", 0)), {"plays": [], "score": None})
        if e["type"] == "play":
            h["plays"].append((e["seat"], e["card"]))
        elif e["type"] == "hand":
            h["score"] = e["score"]
    return [hands[k] for k in sorted(hands)]


def logged_hands(data: Path) -> list[dict]:
    from companion.core.gamelog import GameLog

    log = GameLog.open(data)
    try:
        out = []
        for m in log.matches():
            record = log.match_record(m["number"])
            for hand, summary in zip(record["hands"], m["hands"], strict=False):
                out.append({"plays": [(p["seat"], p["card"]) for p in hand["plays"]],
                            "score": summary.get("score")})
        snap = log.snapshot()["hand"]
        if snap["plays"] and not snap["complete"]:
            out.append({"plays": [(p["seat"], p["card"]) for p in snap["plays"]],
                        "score": None})
        return out
    finally:
        log.close()


def run_serve(folder: Path, size: str, work: Path) -> dict:
    width, height = size.split("x")
    config = work / "serve.toml"
    config.write_text(f'[camera]\nsource = "{folder}"\nwidth = {width}\nheight = {height}\n'
                      '[web]\nhost = "127.0.0.1"\npin = "246810"\n')
    data = work / "data"
    port = free_port()
    frames_total = len(list(folder.glob("frame-*.jpg")))
    env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock"}
    env.pop("NOTIFY_SOCKET", None)
    if os.environ.get("BENCH_SERVE_CACHE", "cold") == "cold":
        # the first start on a Pi: the built-in deck profile is drawn, not read from cache
        env["XDG_CACHE_HOME"] = str(work / "cache")
    with open(work / "serve.out", "wb") as out:
        t0 = time.monotonic()
        proc = subprocess.Popen([*command(), "serve", "--data", str(data), "--config",
                                 str(config), "--port", str(port)],
                                stdout=out, stderr=subprocess.STDOUT, env=env, cwd=ROOT)
        samples: list[tuple[float, float, float, int]] = []  # (t, rss MB, cpu s, frames)
        try:
            frames, still = -1, 0
            while proc.poll() is None:
                time.sleep(0.5)
                try:
                    seen = int(get(port, "/healthz")["frames"])
                except OSError:
                    continue
                samples.append((time.monotonic() - t0, rss_mb(proc.pid), cpu_s(proc.pid),
                                seen))
                still = still + 1 if seen == frames else 0
                frames = seen
                if seen >= frames_total or still >= 6:
                    break
            proc.send_signal(signal.SIGTERM)
            rc = proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
    if not samples:
        raise RuntimeError(f"serve gave no figures: {(work / 'serve.out').read_text()[-800:]}")
    started = next(s for s in samples if s[3] > 0)
    end = samples[-1]
    active = [s for s in samples if 0 < s[3] < frames_total] or samples
    half = active[len(active) // 2]
    cpu_per_frame_ms = 1000 * (end[2] - started[2]) / max(1, end[3] - started[3])
    return {
        "frames": end[3], "frames_in_recording": frames_total, "exit_status": rc,
        "seconds": round(end[0] - started[0], 1),
        "frames_per_second": round((end[3] - started[3]) / max(1e-9, end[0] - started[0]), 1),
        "rss_start_mb": round(started[1], 1), "rss_end_mb": round(end[1], 1),
        "rss_peak_mb": round(max(s[1] for s in samples), 1),
        "rss_growth_second_half_mb": round(end[1] - half[1], 1),
        "goal_rss_mb": 150,
        "cpu_ms_per_frame": round(cpu_per_frame_ms, 1),
        "cpu_share_of_one_core_at_10fps": round(cpu_per_frame_ms * FPS / 1000, 3),
        "data": str(data),
    }


def main() -> dict:
    hands = int(os.environ.get("BENCH_SERVE_HANDS", "10"))
    size = os.environ.get("BENCH_SERVE_SIZE", "1280x720")
    seed = int(os.environ.get("BENCH_SERVE_SEED", "300000"))
    folder = render(hands, size, seed)
    work = Path(tempfile.mkdtemp(prefix="bench-serve-"))
    figures = run_serve(folder, size, work)
    truth = truth_hands(folder)
    logged = logged_hands(Path(figures.pop("data")))
    plays_truth = sum(len(h["plays"]) for h in truth)
    exact_plays = sum(a == b for t, g in zip(truth, logged, strict=False)
                      for a, b in zip(t["plays"], g["plays"], strict=False))
    figures.update({
        "command": "python -m bench serve",
        "hands": hands, "size": size, "seed": seed,
        "deck_profile_cache": os.environ.get("BENCH_SERVE_CACHE", "cold"),
        "hands_logged": len(logged),
        "plays_truth": plays_truth,
        "plays_logged": sum(len(h["plays"]) for h in logged),
        "plays_exact_in_place": exact_plays,
        "hands_all_plays_exact": sum(t["plays"] == g["plays"]
                                     for t, g in zip(truth, logged, strict=False)),
        "hand_scores_exact": sum(t["score"] == g["score"] and t["score"] is not None
                                 for t, g in zip(truth, logged, strict=False)),
    })
    for key, value in figures.items():
        print(f"  {key}: {value}", flush=True)
    return figures


if __name__ == "__main__":
    main()
