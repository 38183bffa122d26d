"""The demo's simulated players keep the log in step with the simulator's truth."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

from companion.core.gamelog import GameLog
from companion.core.rules import RuleError
from companion.demo_table import OVERDUE_FRAMES, DemoTable
from vision.sim.movie import HandMovie, SimulatedTable

ROOT = Path(__file__).resolve().parent.parent
TINY = (320, 180)


class MovieTruth:
    """What the demo camera (vision.sim.movie.SimulatedTable) exposes: truth and frame."""

    def __init__(self, movie: HandMovie) -> None:
        self.truth_events = movie.events
        self.hand_records = movie.hand_records
        self.frame_index = -1


class Camera:
    """A camera that sees every card ``delay`` frames after the hand left it, except
    those in ``late`` (seen that many frames later), like the tracker into the log."""

    def __init__(self, log: GameLog, events: list[dict], late: dict[tuple, int] | None = None,
                 delay: int = 3) -> None:
        self.log, self.events, self.late, self.delay = log, events, late or {}, delay
        self.reported: set[tuple] = set()

    def look(self, frame: int) -> None:
        for e in self.events:
            key = (e.get("hand_index"), e.get("seat"), e.get("card"))
            if e["type"] != "play" or key in self.reported:
                continue
            if e["clear_frame"] + self.delay + self.late.get(key, 0) <= frame:
                self.reported.add(key)
                try:
                    self.log.play(e["seat"], e["card"], source="camera", frame=frame)
                except RuleError as exc:
                    self.log.refuse(e["seat"], e["card"], str(exc), frame=frame)


def truth_scores(movie: HandMovie) -> list[dict[str, int]]:
    return [e["score"] for e in movie.events if e["type"] == "hand"]


def logged_scores(log: GameLog) -> list[dict[str, int]]:
    return [h["score"] for m in log.matches() for h in m["hands"]]


def play_on(movie: HandMovie, log: GameLog, fixer: DemoTable, table: Any,
            camera: Camera | None = None) -> None:
    for frame in movie.frames():
        table.frame_index = frame.index
        fixer.step()
        if camera is not None:
            camera.look(frame.index)
    for _ in range(5):  # the table lies still a while after the last hand
        table.frame_index += OVERDUE_FRAMES
        fixer.step()


def test_players_lay_what_the_camera_missed_and_fix_misreads(tmp_path) -> None:
    movie = HandMovie(7, 0, (640, 360), 10.0, hands=2, render=False)
    table = MovieTruth(movie)
    log = GameLog.open(tmp_path)
    # the camera reports the Twilight card's moon sides before the first card
    log.setup(moon_seats=[s.value for s in movie.moon_seats])
    fixer = DemoTable(log, table)
    corrected = False
    for frame in movie.frames():
        table.frame_index = frame.index
        fixer.step()
        snap = log.snapshot()
        plays = snap["hand"]["plays"]
        if not corrected and len(plays) == 5 and not snap["hand"]["complete"]:
            # a misread: the camera took play 5 for another card of the same cult
            cult = plays[4]["card"].split("-")[0]
            others = [c for c in log.correction_choices(5) if c != plays[4]["card"]]
            log.correct(5, others[0], source="camera")
            corrected = cult in others[0]
    for _ in range(5):
        table.frame_index += 100
        fixer.step()
    truth = [(e["seat"], e["card"]) for e in movie.events if e["type"] == "play"]
    snap = log.snapshot()
    assert [h["score"] for h in snap["match"]["hands"]] == truth_scores(movie)
    assert snap["hand"]["complete"] and len(truth) == 56
    assert corrected and fixer.fixes == 56 + 1
    sources = {e["data"].get("source") for e in log.events() if e["type"] in ("play", "correct")}
    assert sources == {"table", "camera"}
    log.close()


def test_a_lead_seen_late_is_taken_back_and_laid_in_its_place(tmp_path) -> None:
    """The camera logs the second card of a hand as its lead (the leader's card came
    late): the players take it back and lay both in the right order, in every hand."""
    movie = HandMovie(7, 0, TINY, 10.0, hands=3, speed=2.0, render=False)
    for _ in movie.frames():
        pass
    firsts = {}
    for e in movie.events:
        if e["type"] == "play":
            firsts.setdefault(e["hand_index"], (e["hand_index"], e["seat"], e["card"]))
    late = {key: 40 for key in firsts.values()}
    replay = HandMovie(7, 0, TINY, 10.0, hands=3, speed=2.0, render=False)
    table = MovieTruth(replay)
    log = GameLog.open(tmp_path)
    log.setup(moon_seats=[s.value for s in replay.moon_seats])
    fixer = DemoTable(log, table)
    camera = Camera(log, replay.events, late)
    play_on(replay, log, fixer, table, camera)
    assert logged_scores(log) == truth_scores(movie)
    kinds = [(e["type"], e["data"].get("source")) for e in log.events()]
    assert kinds.count(("undo", "table")) >= 3  # one wrong lead taken back per hand
    assert fixer.fixes == (kinds.count(("undo", "table")) + kinds.count(("play", "table"))
                           + kinds.count(("dismiss", None)))
    log.close()


def test_wrong_moon_sides_are_set_right_before_the_cards_count(tmp_path) -> None:
    movie = HandMovie(3, 0, TINY, 10.0, hands=1, speed=2.0, moon_seats=("east", "west"),
                      render=False)
    table = MovieTruth(movie)
    log = GameLog.open(tmp_path)
    log.setup(moon_seats=["north", "south"])  # the camera misread the Twilight card
    fixer = DemoTable(log, table)
    play_on(movie, log, fixer, table, Camera(log, movie.events))
    assert logged_scores(log) == truth_scores(movie)
    assert log.matches()[-1]["hands"][0]["setup"]["moon_seats"] == ["east", "west"]
    log.close()


def test_players_follow_a_camera_that_lets_old_truth_go(tmp_path) -> None:
    """The demo camera keeps only its newest hands' truth: the players still lay every
    hand in order (here the camera sees nothing at all), and a new match when one is
    over."""
    whole = HandMovie(9, 0, TINY, 10.0, hands=4, speed=4.0, render=False)
    for _ in whole.frames():
        pass
    table = SimulatedTable(seed=9, size=TINY, hands=4, speed=4.0, realtime=False,
                           render=False, keep_hands=1, end_still_s=4.0)
    log = GameLog.open(tmp_path)
    log.setup(moon_seats=[s.value for s in table.movie.moon_seats])
    fixer = DemoTable(log, table)
    while True:
        before = table.frame_index
        table.read()
        if table.frame_index == before:
            break
        fixer.step()
    assert table.truth_dropped > 0
    assert logged_scores(log) == truth_scores(whole)
    log.close()


def test_demo_paced_by_frames_plays_its_hands_and_ends(tmp_path) -> None:
    """``demo --pace frames --hands 1``: every frame recognised, the hand scored as the
    table played it, and the command ends by itself."""
    config = tmp_path / "demo.toml"
    config.write_text("[camera]\nwidth = 320\nheight = 180\n")
    out = subprocess.run(
        [sys.executable, "-m", "companion", "demo", "--data", str(tmp_path / "data"),
         "--port", "0", "--host", "127.0.0.1", "--config", str(config), "--hands", "1",
         "--seed", "7", "--speed", "4", "--pace", "frames"],
        capture_output=True, text=True, timeout=240, cwd=ROOT,
        env={"PATH": "/usr/bin:/bin", "GPIOZERO_PIN_FACTORY": "mock",
             "HOME": str(tmp_path), "XDG_CACHE_HOME": str(tmp_path / "cache")})
    assert out.returncode == 0, out.stderr[-2000:]
    assert "table fixes" in out.stdout
    # --port 0: a free port the system chose, and the page's address names it
    port = int(re.search(r"listening on 127\.0\.0\.1:(\d+)", out.stdout).group(1))
    assert port not in (0, 8000)
    assert f"http://127.0.0.1:{port}/" in out.stdout
    movie = HandMovie(7, 0, TINY, 10.0, hands=1, speed=4.0, render=False)
    for _ in movie.frames():
        pass
    log = GameLog.open(tmp_path / "data")
    assert logged_scores(log) == truth_scores(movie)
    log.close()


def test_demo_killed_mid_hand_resumes_that_hand(tmp_path) -> None:
    """Issue 21: ``demo`` killed in the middle of a hand and started again with the same
    data: the simulated table goes on with that hand where the log stands, so the first
    page shows every play logged before the kill, and the hand is played to its end."""
    import time

    from serve_helpers import Serve

    config = tmp_path / "demo.toml"
    config.write_text("[camera]\nwidth = 320\nheight = 180\n")
    args = ("demo", "--hands", "1", "--seed", "7", "--speed", "4", "--pace", "frames",
            "--host", "127.0.0.1")
    first = Serve(tmp_path / "data", config, args=args)
    try:
        first.wait_ready(60)
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            hand = first.state()["hand"]
            if 6 <= len(hand["plays"]) <= 20:
                break
            time.sleep(0.05)
        first.kill()
    finally:
        first.__exit__()
    log = GameLog.open(tmp_path / "data")
    before = log.snapshot()["hand"]
    log.close()
    kept = [(p["seat"], p["card"]) for p in before["plays"]]
    assert 6 <= len(kept) < 28, kept
    again = Serve(tmp_path / "data", config, args=args)
    try:
        again.wait_ready(60)
        page = again.get("/").body.decode()
        hand = again.state()["hand"]
        assert hand["number"] == before["number"]
        assert [(p["seat"], p["card"]) for p in hand["plays"]][:len(kept)] == kept
        assert "of 28 cards" in page and f"Hand {before['number']}" in page
        from web.present import card_view

        for p in before["plays"]:  # every play logged before the kill, in the tricks list
            view = card_view(p["card"])
            assert f'title="{view["cult"]} {view["name"]}"' in page
        assert again.proc.wait(240) == 0  # the resumed hand is played to its end
    finally:
        again.__exit__()
    log = GameLog.open(tmp_path / "data")
    hands = log.matches()[-1]["hands"]
    events = log.events()
    log.close()
    assert not any(e["type"] == "new_hand" and e["data"].get("abandon") for e in events)
    assert hands and len(hands) == 1  # that hand, complete: nothing set aside
    plays = [(e["data"]["seat"], e["data"]["card"]) for e in events if e["type"] == "play"]
    assert plays[:len(kept)] == kept and len(plays) >= 28
