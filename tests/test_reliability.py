"""Reliability (issue 9): camera faults, power cuts and storage trouble.

Real parts only: the real tracker and recogniser on a recorded hand, a real
SQLite game log, a real ``twilight-companion serve`` subprocess for power cuts.
The faulty cameras are in ``tests/fakes/faulty_sources.py``.
"""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import subprocess
import threading
import time

import numpy as np
import pytest
from fakes.faulty_sources import Fault, FaultyCamera, RaisingSource
from serve_helpers import (
    Serve,
    command,
    logged_plays,
    recording,
    truth,
    truth_plays,
    without_root_powers,
    write_config,
)

import vision.sources
from companion.app import Companion, FrameCheck, Options
from companion.config import Config
from companion.core.gamelog import GameLog
from hardware.leds import trouble
from vision.sources import LatestFrame
from vision.tracker import TableTracker


@pytest.fixture(scope="session")
def hand(tmp_path_factory):
    return recording(tmp_path_factory)


# -- camera faults ------------------------------------------------------------------------
def test_frame_check_names_broken_pictures():
    check = FrameCheck(frozen_after=1.0)
    good = np.full((90, 160, 3), 80, np.uint8)
    good[::7] = 200
    assert check.problem(good, 0.0) is None
    assert "black" in check.problem(np.zeros_like(good), 0.1)
    assert "corrupt" in check.problem(good[:, :, 0], 0.2)
    assert "corrupt" in check.problem(good.astype(np.float32), 0.3)
    assert "corrupt" in check.problem(good[:45], 0.4)
    assert "corrupt" in check.problem(None, 0.5)
    assert check.problem(good, 1.0) is None
    assert check.problem(good, 1.5) is None  # the same picture for 0.5 s: fine
    assert "frozen" in check.problem(good, 2.1)
    other = good.copy()
    other[0, 0] = 0
    assert check.problem(other, 2.2) is None  # noise again: a live camera
    for i in range(40):  # a camera that really changed its size is taken at its word
        verdict = check.problem(np.full((120, 200, 3), 90 + i % 2, np.uint8), 3 + i / 10)
    assert verdict is None


class Watched:
    """A Companion watching ``camera`` in a thread; every status change is kept."""

    def __init__(self, tmp_path, camera, monkeypatch) -> None:
        self.log = GameLog.open(tmp_path / "data")
        self.comp = Companion(Options(source="faulty"), Config(), self.log)
        self.comp.source = camera
        self.comp.capture = LatestFrame(camera).start()
        self.comp.tracker = TableTracker(None)
        monkeypatch.setattr(vision.sources, "open_source", lambda *a, **k: camera.reopen())
        self.changes: list[tuple[float, str, bool]] = []  # (when, camera status, LEDs trouble)
        self.played: list[float] = []  # when each play was stored
        self.log.subscribe(self._status)
        self.thread = threading.Thread(target=self.comp.watch, daemon=True)
        self.thread.start()

    def _status(self, event, snap) -> None:
        if event["type"] == "play":
            self.played.append(time.monotonic())
        if event["type"] == "status" and "camera" in event["data"]:
            self.changes.append((time.monotonic(), event["data"]["camera"], trouble(snap)))

    def stop(self) -> None:
        self.comp.stop.set()
        self.thread.join(15)
        assert not self.thread.is_alive()
        self.comp.close()


@pytest.mark.slow
def test_camera_faults_mid_hand_keep_the_game_and_recover(tmp_path, hand, monkeypatch):
    """Raise, stall, black, frozen, corrupt and noise in the middle of a hand: the page
    and LEDs say the camera is lost, scoring resumes within 2 s of good frames, and every
    play is the recording's — none from garbage, none lost."""
    stop_at = 420
    plays_at = [e["frame"] for e in truth(hand) if e["type"] == "play"]
    # each fault while a card is being laid (the arm over the table) or just after
    faults = [Fault(plays_at[1] + 2, "black", 2.0), Fault(plays_at[3] + 1, "raise", 2.0),
              Fault(plays_at[5] + 3, "stall", 4.0), Fault(plays_at[7] + 2, "frozen", 4.5),
              Fault(plays_at[9] + 1, "corrupt", 1.5), Fault(plays_at[11] + 2, "noise", 1.5)]
    camera = FaultyCamera(hand, faults, fps=30, stop_at=stop_at)
    watched = Watched(tmp_path, camera, monkeypatch)
    try:
        assert camera.finished.wait(120), "the recording did not play through"
        time.sleep(1.5)  # the last frames reach the tracker
    finally:
        watched.stop()
    snap = watched.log.snapshot()
    plays = [(p["seat"], p["card"]) for p in snap["hand"]["plays"]]
    expected = truth_plays(hand, before=stop_at - 10)
    assert watched.log.integrity_check() == "ok"
    assert snap["status"]["camera"] == "ok"
    assert len(plays) == len(set(plays))
    same = sum(a == b for a, b in zip(plays, expected, strict=False))
    report = [f"plays {same}/{len(expected)} as recorded ({len(plays)} stored)"]
    for fault, began, back in zip(faults, camera.started, camera.recovered, strict=True):
        assert began is not None and back is not None, fault
        # the recording waits while the fault lasts: a play stored then came from garbage
        garbage = [t for t in watched.played if began + 0.5 < t < back]
        assert not garbage, f"{fault.kind}: {len(garbage)} play(s) from garbage frames"
        lost = [t for t, value, _ in watched.changes if value == "lost" and began <= t <= back]
        if fault.kind == "noise":  # noise looks like a picture; it only must not be played
            report.append("noise: no play")
            continue
        assert lost, f"{fault.kind}: the camera was never called lost"
        assert all(leds for t, value, leds in watched.changes if value == "lost"), \
            "the LEDs did not show the camera lost"
        ok = [t for t, value, _ in watched.changes if value == "ok" and t >= back]
        assert ok, f"{fault.kind}: never back to ok"
        resumed = ok[0] - back
        report.append(f"{fault.kind}: lost after {lost[0] - began:.1f} s, ok {resumed:.2f} s "
                      "after good frames")
        assert resumed <= 2.0, f"{fault.kind}: {resumed:.2f} s to resume"
    print("; ".join(report))
    # every play is the recording's, in its order: none from garbage, none lost
    assert plays[: len(expected)] == expected, report[0]
    assert plays == truth_plays(hand, before=stop_at)[: len(plays)], report[0]
    watched.log.close()


def test_lost_camera_is_shown_on_the_page_and_healthz(tmp_path):
    import web

    log = GameLog.open(tmp_path / "data")
    comp = Companion(Options(source="faulty"), Config(), log)
    comp.source = RaisingSource([], set())  # a camera is there
    app = web.create_app(log, config={"DATA_DIR": str(tmp_path / "data"), "TABLE_PIN": "2468"})
    app.add_url_rule("/healthz", "healthz", comp._healthz)
    client = app.test_client()
    comp._camera_lost("black picture (lens covered or camera fault)")
    page = client.get("/part/score").get_data(as_text=True)
    assert "cam-lost" in page and "camera lost" in page
    health = client.get("/healthz")
    assert health.status_code == 503
    assert health.get_json()["camera"].startswith("lost: black picture")
    assert trouble(log.snapshot())
    comp._camera_ok()
    assert client.get("/healthz").status_code == 200
    assert "cam-ok" in client.get("/part/score").get_data(as_text=True)
    assert not trouble(log.snapshot())
    log.close()


def test_unreadable_frames_of_a_recording_are_skipped(tmp_path, hand):
    """A recording with broken frame files goes on past them (status lost meanwhile)."""
    import cv2

    files = sorted(hand.glob("frame-*.jpg"))[:60]
    images = [cv2.imread(str(f)) for f in files]
    log = GameLog.open(tmp_path / "data")
    comp = Companion(Options(source="recording"), Config(), log)
    comp.source = RaisingSource(images, fail_at={5, 6, 30})
    comp.tracker = TableTracker(None)
    seen = []
    log.subscribe(lambda e, s: e["type"] == "status" and "camera" in e["data"]
                  and seen.append(e["data"]["camera"]))
    comp.watch()
    assert comp.frames_seen == 60
    assert seen.count("lost") == 2 and seen[-1] == "ok"
    log.close()


def test_a_tracker_crash_on_one_frame_does_not_end_scoring(tmp_path, monkeypatch):
    log = GameLog.open(tmp_path / "data")
    comp = Companion(Options(source="recording"), Config(), log)
    images = [np.full((90, 160, 3), 60 + i, np.uint8) for i in range(10)]
    comp.source = RaisingSource(images, fail_at=set())
    fed = []

    class Choking:
        def feed(self, number, image, expect, observe):
            fed.append(number)
            if number == 3:
                raise ValueError("cannot read this one")

    comp.tracker = Choking()
    comp.watch()
    assert fed == list(range(10))
    assert log.snapshot()["status"]["recognition"] == "ok"
    log.close()


# -- power cuts -------------------------------------------------------------------------------
def table_from(hand, files, position: int, folder) -> None:
    """The table as it lies at recording frame ``position``: a frame folder from there on
    (links). After a power cut the players wait for the companion; the table goes on
    from where the companion last looked."""
    folder.mkdir()
    for f in files[position:]:
        (folder / f.name).symlink_to(f)


def power_cuts(tmp_path, hand, kills: int, *, seed: int = 9) -> dict[str, float]:
    """``serve`` on a recorded hand, SIGKILLed ``kills`` times at random moments, then
    left to finish. After each kill: integrity ok and every play that was on disk is
    still there, in order, once. Returns figures."""
    rng = random.Random(seed)
    data = tmp_path / "data"
    files = sorted(hand.glob("frame-*.jpg"))
    acknowledged: list[tuple[str, str]] = []
    restarts_with_progress = 0
    restarts_facing_a_wal = 0  # starts that had to recover a killed writer's WAL
    position = 0
    t0 = time.monotonic()
    for i in range(kills + 1):
        table = tmp_path / f"table-{i}"
        table_from(hand, files, position, table)
        config = write_config(tmp_path / f"serve-{i}.toml", table)
        with Serve(data, config) as serve:
            if i == kills:
                serve.wait_ready()
                wait_for_the_recording(serve)
                final = serve.state()
                assert serve.stop() == 0
                break
            # kill at a random moment: a quarter during start-up (imports, log replay),
            # the rest while it scores
            if rng.random() < 0.25:
                time.sleep(rng.uniform(0.05, 1.2))
            else:
                serve.wait_ready()
                time.sleep(rng.uniform(0.05, 1.5))
            try:
                seen = serve.get("/healthz").json()["frames"]
                # what the players' page showed just before the power went
                shown = [(p["seat"], p["card"]) for p in serve.state()["hand"]["plays"]]
            except (OSError, ValueError, KeyError):
                seen, shown = 0, acknowledged  # not answering yet: killed while starting
            serve.kill()
        position = min(position + seen, len(files) - 1)
        # read-only, as the restart will find it: the killed writer's WAL stays for the
        # next start to recover (a read-write look would checkpoint it away)
        wal = data / "game.sqlite3-wal"
        restarts_facing_a_wal += wal.exists() and wal.stat().st_size > 0
        plays, integrity, _ = logged_plays(data)
        assert integrity == "ok"
        assert plays[: len(shown)] == shown, "a play the page showed was lost"
        assert plays[: len(acknowledged)] == acknowledged, "an acknowledged play was lost"
        assert len(set(plays)) == len(plays), "a play was doubled"
        restarts_with_progress += len(plays) > len(acknowledged)
        acknowledged = plays
    plays = [(p["seat"], p["card"]) for p in final["hand"]["plays"]]
    assert plays[: len(acknowledged)] == acknowledged
    assert len(set(plays)) == len(plays)
    return {"kills": kills, "seconds": round(time.monotonic() - t0, 1),
            "plays_before_last_kill": len(acknowledged), "plays_at_end": len(plays),
            "truth_plays": len(truth_plays(hand)),
            "exact": plays == truth_plays(hand),
            "restarts_that_added_plays": restarts_with_progress,
            "restarts_facing_a_wal": restarts_facing_a_wal}


def wait_for_the_recording(serve: Serve, timeout: float = 90.0) -> None:
    """Until the hand is complete or the recording has been read to its end."""
    deadline = time.monotonic() + timeout
    last, still_since = -1, time.monotonic()
    while time.monotonic() < deadline:
        if serve.state()["hand"]["complete"]:
            return
        frames = serve.get("/healthz").json()["frames"]
        if frames != last:
            last, still_since = frames, time.monotonic()
        elif time.monotonic() - still_since > 1.5:
            return
        time.sleep(0.2)
    raise AssertionError("the recording did not end")


@pytest.mark.slow
def test_twenty_power_cuts_during_a_hand(tmp_path, hand):
    figures = power_cuts(tmp_path, hand, 20)
    print(figures)
    assert figures["plays_at_end"] >= figures["plays_before_last_kill"]
    assert figures["restarts_that_added_plays"] >= 3  # the hand went on between cuts
    assert figures["restarts_facing_a_wal"] >= 3  # restarts really met a crashed WAL


# -- storage trouble --------------------------------------------------------------------------
def run_cli(args, **kw) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*command(), *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"}, **kw)


def digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize("kind", ["newer", "foreign", "garbage"])
def test_a_log_of_a_newer_or_unknown_kind_is_refused_untouched(tmp_path, hand, kind):
    data = tmp_path / "data"
    data.mkdir()
    db_path = data / "game.sqlite3"
    if kind == "garbage":
        db_path.write_bytes(b"not a database at all\n" * 200)
    else:
        db = sqlite3.connect(db_path)
        db.execute("CREATE TABLE events (x)")
        db.execute(f"PRAGMA application_id = {0x54574C54 if kind == 'newer' else 7}")
        db.execute("PRAGMA user_version = 99")
        db.commit()
        db.close()
    before = digest(db_path)
    config = write_config(tmp_path / "serve.toml", hand)
    r = run_cli(["serve", "--data", str(data), "--config", str(config), "--port", "0"])
    assert r.returncode != 0
    assert "Traceback" not in r.stderr
    line = r.stderr.strip().splitlines()
    assert len(line) == 1 and str(db_path) in line[0], r.stderr
    words = {"newer": "newer version", "foreign": "not a Twilight game log",
             "garbage": "game log"}[kind]
    assert words in line[0]
    assert digest(db_path) == before
    assert sorted(p.name for p in data.iterdir()) == ["game.sqlite3"]
    r = run_cli(["history", "--data", str(data)])
    assert r.returncode != 0 and "Traceback" not in r.stderr


@pytest.mark.parametrize("existing", [False, True])
def test_read_only_data_folder_at_start_is_a_clear_error(tmp_path, hand, existing):
    data = tmp_path / "data"
    data.mkdir()
    if existing:
        log = GameLog.open(data)
        log.play("east", "sun-souls-3")
        log.close()
        before = digest(data / "game.sqlite3")
    config = write_config(tmp_path / "serve.toml", hand)
    os.chmod(tmp_path, 0o755)
    os.chmod(data, 0o555)
    for f in data.iterdir():
        os.chmod(f, 0o444)
    try:
        r = subprocess.run([*without_root_powers(), *command(), "serve", "--data", str(data),
                            "--config", str(config), "--port", "0"], capture_output=True,
                           text=True, timeout=60)
    finally:
        os.chmod(data, 0o755)
    print(r.stderr)
    assert r.returncode != 0, r.stdout
    assert "Traceback" not in r.stderr, r.stderr
    assert r.stderr.strip() and str(data) in r.stderr, r.stderr
    if existing:
        assert digest(data / "game.sqlite3") == before


@pytest.mark.parametrize("trouble_kind", ["full", "read-only"])
def test_storage_trouble_during_play_is_shown_and_nothing_seen_is_lost(tmp_path, trouble_kind):
    """A full disk (SQLite's max_page_count) or a log gone read-only while playing: the
    camera's play is kept in memory, in order, /healthz and the page show the trouble;
    once it is gone the kept play is written and the status is ok again (issue 21)."""
    import web

    log = GameLog.open(tmp_path / "data")
    comp = Companion(Options(source="recording"), Config(), log)
    comp.source = RaisingSource([], set())  # a camera is there
    app = web.create_app(log, config={"DATA_DIR": str(tmp_path / "data"), "TABLE_PIN": "2468"})
    app.add_url_rule("/healthz", "healthz", comp._healthz)
    client = app.test_client()
    log.play("east", "sun-souls-3")
    db = log._db
    if trouble_kind == "full":
        pages = db.execute("PRAGMA page_count").fetchone()[0]
        db.execute(f"PRAGMA max_page_count = {pages}")
        for _ in range(1000):  # fill the last page: the disk is full
            log.set_setting("mirror", False)
            if log.unwritten:
                break
        assert log.unwritten
    else:
        db.execute("PRAGMA query_only = 1")
    from vision.tracker import Observation

    comp.observe(Observation("play", 812, seat="south", card="moon-hierarch"))
    snap = log.snapshot()
    assert [p["card"] for p in snap["hand"]["plays"]] == ["sun-souls-3", "moon-hierarch"]
    assert snap["status"]["log"].startswith("error: cannot write")
    health = client.get("/healthz")
    assert health.status_code == 503 and health.get_json()["log"].startswith("error")
    assert log.integrity_check() == "ok"
    # the trouble goes away: the kept play is written and the warning clears
    db.execute("PRAGMA max_page_count = 1073741823" if trouble_kind == "full"
               else "PRAGMA query_only = 0")
    comp.observe(Observation("play", 900, seat="west", card="sun-hierarch"))
    assert log.unwritten == 0 and log.snapshot()["status"]["log"] == "ok"
    assert client.get("/healthz").status_code == 200
    log.close()
    again = GameLog.open(tmp_path / "data")
    assert [p["card"] for p in again.snapshot()["hand"]["plays"]] == [
        "sun-souls-3", "moon-hierarch", "sun-hierarch"]
    assert again.integrity_check() == "ok"
    again.close()


@pytest.fixture
def small_disk(tmp_path):
    """A real 256 kB filesystem (tmpfs) to fill up; skipped where mounting is not allowed."""
    mountpoint = tmp_path / "disk"
    mountpoint.mkdir()
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", str(mountpoint)],
                       capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"cannot mount a small filesystem here: {r.stderr.strip()}")
    try:
        yield mountpoint
    finally:
        subprocess.run(["umount", "-l", str(mountpoint)], check=False)


def fill(folder) -> None:
    """Fill the filesystem of ``folder`` to the last byte."""
    with open(folder / "filler", "wb", buffering=0) as fh:
        try:
            while True:
                fh.write(b"\0" * 4096)
        except OSError:
            pass


def test_a_full_disk_at_start_is_a_clear_error_and_nothing_half_written(small_disk, hand,
                                                                         tmp_path):
    config = write_config(tmp_path / "serve.toml", hand)
    fill(small_disk)
    r = run_cli(["serve", "--data", str(small_disk / "data"), "--config", str(config),
                 "--port", "0"])
    assert r.returncode == 1 and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1 and "full" in r.stderr, r.stderr
    (small_disk / "filler").unlink()  # room again: the log starts as if nothing happened
    log = GameLog.open(small_disk / "data")
    assert log.integrity_check() == "ok" and log.snapshot()["seq"] == 1
    log.close()


def test_a_full_disk_mid_hand_loses_no_play(small_disk):
    """A real 256 kB filesystem (tmpfs) filled up in the middle of a hand: every play
    the camera saw meanwhile is kept, in order, and on disk once space returns; the
    status is ok again then (issue 21)."""
    import random

    from companion.core.cards import Seat
    from companion.core.deal import random_plays
    from vision.tracker import Observation

    plays = random_plays(random.Random(21), (Seat.NORTH, Seat.SOUTH), Seat.EAST)
    log = GameLog.open(small_disk / "data")
    comp = Companion(Options(source="recording"), Config(), log)
    for i, p in enumerate(plays):
        if i == 9:
            fill(small_disk)  # the disk is full from the 10th card on ...
        if i == 20:
            (small_disk / "filler").unlink()  # ... until the 21st
        comp.observe(Observation("play", i, seat=p.seat.value, card=p.card.id))
        if 9 <= i < 20:
            assert log.snapshot()["status"]["log"].startswith("error")
    snap = log.snapshot()
    assert log.unwritten == 0 and snap["status"]["log"] == "ok", snap["status"]
    assert [(q["seat"], q["card"]) for q in snap["hand"]["plays"]] == [
        (p.seat.value, p.card.id) for p in plays]
    assert log.integrity_check() == "ok"
    log.close()
    again = GameLog.open(small_disk / "data")
    assert [(q["seat"], q["card"]) for q in again.snapshot()["hand"]["plays"]] == [
        (p.seat.value, p.card.id) for p in plays]
    assert again.snapshot()["hand"]["complete"] and again.integrity_check() == "ok"
    again.close()


class ReadOnlyWhile(RaisingSource):
    """A recording that turns the game log read-only (SQLite's own switch) while frames
    ``start`` to ``end`` are read, as a file system gone read-only and back would."""

    def __init__(self, images, log: GameLog, start: int, end: int) -> None:
        super().__init__(images, set())
        self.log, self.start, self.end = log, start, end

    def read(self):
        if self.reads + 1 == self.start:
            self.log._db.execute("PRAGMA query_only = 1")
        elif self.reads + 1 == self.end:
            self.log._db.execute("PRAGMA query_only = 0")
        return super().read()


def test_a_play_seen_while_the_log_cannot_be_written_is_stored_once_it_can(tmp_path, hand):
    """The real tracker watches the recording; the log refuses every write from just
    before the third card is laid until well after: that card is not half stored, the
    status says why, and once writes succeed the tracker's next look stores it (the card
    still lies there), so the hand is the recording's, in order."""
    import cv2

    events = [e for e in truth(hand) if e["type"] == "play"]
    third = events[2]
    last = events[4]["clear_frame"] + 40
    files = sorted(hand.glob("frame-*.jpg"))[:last]
    images = [cv2.imread(str(f)) for f in files]
    log = GameLog.open(tmp_path / "data")
    comp = Companion(Options(source="recording"), Config(), log)
    # frame numbers: read k is the recording's frame k - 1
    start, end = third["frame"] - 5 + 1, third["clear_frame"] + 60 + 1
    comp.source = ReadOnlyWhile(images, log, start, end)
    comp.tracker = TableTracker(None)
    statuses: list[str] = []
    log.subscribe(lambda e, s: e["type"] == "status" and "log" in e["data"]
                  and statuses.append(str(e["data"]["log"])))
    comp.watch()
    plays = [(p["seat"], p["card"]) for p in log.snapshot()["hand"]["plays"]]
    recorded = [(e["seat"], e["card"]) for e in events]
    assert len(plays) >= 5 and plays == recorded[: len(plays)], plays
    assert any(s.startswith("error: cannot write") for s in statuses), statuses
    assert statuses[-1] == "ok" and log.snapshot()["status"]["log"] == "ok"
    assert log.integrity_check() == "ok"
    log.close()
