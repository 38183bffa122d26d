"""The game log: checked events, replay, subscriptions, crash safety."""

from __future__ import annotations

import json
import random
import signal
import sqlite3
import subprocess
import sys
import threading
import time

import pytest

from companion.core.cards import Seat
from companion.core.deal import random_plays
from companion.core.gamelog import GameLog, LogError, data_dir
from companion.core.rules import IllegalPlay, RuleError


def play_hand(log: GameLog, seed: int, n: int = 28, leader: Seat | None = None) -> list:
    snap = log.snapshot()
    moon = tuple(Seat.parse(s) for s in snap["hand"]["moon_seats"])
    if leader is None:
        nxt = snap["hand"]["next"] or (snap["hand"]["next_hand"] or {}).get("leader")
        leader = Seat.parse(nxt["seat"] if isinstance(nxt, dict) else nxt or "east")
    plays = random_plays(random.Random(seed), moon, leader)[:n]
    for p in plays:
        log.play(p.seat, p.card)
    return plays


def test_plays_replay_after_reopen(tmp_path) -> None:
    log = GameLog.open(tmp_path)
    play_hand(log, 1, 28, Seat.EAST)
    play_hand(log, 2, 10)
    before = log.snapshot()
    log.close()
    again = GameLog.open(tmp_path)
    after = again.snapshot()
    assert after["hand"] == before["hand"] and after["match"] == before["match"]
    assert after["hand"]["number"] == 2 and len(after["hand"]["plays"]) == 10
    assert again.integrity_check() == "ok"
    again.close()


def test_refused_play_changes_nothing_and_is_not_stored(log) -> None:
    log.play("east", "sun-souls-7")
    before = log.snapshot()
    seq = before["seq"]
    with pytest.raises(IllegalPlay, match=r"play 2 \(east, sun-souls-6\).*\(R3\)"):
        log.play("east", "sun-souls-6")
    with pytest.raises(RuleError, match="unknown card"):
        log.play("south", "moon-joker")
    assert log.snapshot() == before
    assert log.events(seq) == []


def test_refusal_waits_for_correction(log) -> None:
    log.play("east", "sun-souls-7")
    snap = log.refuse("south", "sun-adept", "play 2 (south, sun-adept): wrong cult (R3)")
    assert snap["refused"]["card"] == "sun-adept"
    snap = log.play("south", "moon-adept")
    assert snap["refused"] is None


def test_undo_correct_and_reopen_finished_hand(log) -> None:
    plays = play_hand(log, 7, 28, Seat.EAST)
    snap = log.snapshot()
    assert snap["hand"]["complete"] and len(snap["match"]["hands"]) == 1
    nxt = snap["hand"]["next_hand"]
    assert nxt["dealer"] == "east" and nxt["leader"] == "south"
    log.undo()
    snap = log.snapshot()
    assert not snap["hand"]["complete"] and snap["match"]["hands"] == []
    last = plays[-1]
    log.play(last.seat, last.card)
    # correct play 1 to itself: nothing changes; to a clash: refused, nothing changes
    before = log.snapshot()["hand"]
    log.correct(1, plays[0].card)
    assert log.snapshot()["hand"]["score"] == before["score"]
    with pytest.raises(RuleError):
        log.correct(1, plays[4].card if plays[4].card.cult is plays[0].card.cult
                    else plays[5].card)
    assert log.snapshot()["hand"]["plays"] == before["plays"]
    choices = log.correction_choices(1)
    assert plays[0].card.id in choices
    assert all(c.startswith(plays[0].card.cult.value) for c in choices)


def test_next_hand_starts_with_the_first_card(log) -> None:
    play_hand(log, 3, 28, Seat.EAST)
    snap = log.play("west", "sun-souls-3")  # the table may lead from any seat (C7)
    assert snap["hand"]["number"] == 2 and snap["hand"]["leader"] == "west"
    with pytest.raises(RuleError, match="not finished"):
        log.new_hand()
    snap = log.new_hand(abandon=True)
    assert snap["hand"]["plays"] == [] and snap["hand"]["number"] == 2


def test_new_match_and_history(log) -> None:
    play_hand(log, 5, 28, Seat.EAST)
    log.new_match(mode="three", goal="magic", soloist="south",
                  names={"north": None, "east": "Eva", "south": "Sam", "west": "Wim"})
    snap = log.snapshot()
    assert snap["hand"]["soloist"] == "south" and snap["hand"]["new_moon"] == "north"
    assert snap["hand"]["next"]["seat"] == "south"  # the soloist leads (R8)
    play_hand(log, 6, 28, Seat.SOUTH)
    snap = log.snapshot()
    assert set(snap["match"]["totals"]) == {"Eva", "Sam", "Wim"}
    nxt = snap["hand"]["next_hand"]
    assert nxt["soloist"] == "east" and nxt["new_moon"] == "west"
    assert nxt["names"] == {"north": "Wim", "east": "Eva", "south": "Sam", "west": None}
    matches = log.matches()
    assert [m["number"] for m in matches] == [1, 2]
    assert matches[1]["mode"] == "three"
    rec = log.match_record(2)
    assert rec["mode"] == "three" and len(rec["hands"]) == 1


def test_mode_goal_setting_and_bad_events(log) -> None:
    log.set_goal("magic")
    log.set_mode("three", soloist="east")
    snap = log.snapshot()
    assert snap["match"]["goal"] == "magic" and snap["hand"]["moon_seats"] == ["east", "west"]
    log.set_setting("mirror", True)
    assert log.snapshot()["settings"]["mirror"] is True
    before = log.snapshot()
    for call in (lambda: log.set_goal("huge"), lambda: log.set_setting("mirror", "yes"),
                 lambda: log.append("explode"), lambda: log.setup(dealer="up"),
                 lambda: log.set_mode("five")):
        with pytest.raises(RuleError):
            call()
    assert log.snapshot() == before
    log.play("east", "moon-souls-3")
    with pytest.raises(RuleError, match="mode can only change"):
        log.set_mode("four")


def test_subscribe_and_wait(log) -> None:
    seen = []
    unsubscribe = log.subscribe(lambda event, snap: seen.append((event["type"], snap["seq"])))
    version = log.version
    got = []
    waiter = threading.Thread(target=lambda: got.append(log.wait(version, 5)))
    waiter.start()
    log.play("east", "sun-souls-7")
    waiter.join(5)
    assert got and got[0]["hand"]["plays"][0]["card"] == "sun-souls-7"
    log.set_status("camera", "lost")
    log.set_status("camera", "lost")  # no change, no notice
    unsubscribe()
    log.undo()
    assert [t for t, _ in seen] == ["play", "status"]
    assert log.wait(log.version, 0.05) is None
    assert log.snapshot()["status"] == {"camera": "lost"}


def test_concurrent_appends_from_threads(log) -> None:
    errors: list[Exception] = []

    def worker() -> None:
        for _ in range(30):
            snap = log.snapshot()
            nxt = snap["hand"]["next"]
            if nxt is None:
                return
            cult = nxt["cult"]
            played = {p["card"] for p in snap["hand"]["plays"]}
            free = [c for c in log.correction_choices(1)] if snap["hand"]["plays"] else []
            del free
            from companion.core.cards import CARDS

            card = next((c.id for c in CARDS if c.cult.value == cult and c.id not in played),
                        None)
            try:
                log.play(nxt["seat"], card)
            except RuleError:
                pass  # another thread got there first: refused, nothing changed
            except Exception as exc:  # pragma: no cover
                errors.append(exc)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    plays = log.snapshot()["hand"]["plays"]
    assert len({p["card"] for p in plays}) == len(plays)
    assert sum(1 for e in log.events() if e["type"] == "play") == len(plays)


def test_wal_and_full_sync(log) -> None:
    db = sqlite3.connect(log.path)
    assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    db.close()
    assert log._db.execute("PRAGMA synchronous").fetchone()[0] == 2  # FULL


def test_newer_or_foreign_log_is_refused(tmp_path) -> None:
    log = GameLog.open(tmp_path / "a")
    log.close()
    db = sqlite3.connect(tmp_path / "a" / "game.sqlite3")
    db.execute("PRAGMA user_version = 99")
    db.commit()
    db.close()
    with pytest.raises(LogError, match="newer version"):
        GameLog.open(tmp_path / "a")
    (tmp_path / "b").mkdir()
    db = sqlite3.connect(tmp_path / "b" / "game.sqlite3")
    db.execute("CREATE TABLE photos (x)")
    db.commit()
    db.close()
    with pytest.raises(LogError, match="not a Twilight game log"):
        GameLog.open(tmp_path / "b")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "game.sqlite3").write_bytes(b"garbage" * 100)
    with pytest.raises(LogError):
        GameLog.open(tmp_path / "c")


def test_data_dir_choice(monkeypatch, tmp_path) -> None:
    monkeypatch.setenv("STATE_DIRECTORY", f"{tmp_path}/state:/other")
    assert data_dir() == tmp_path / "state"
    assert data_dir(tmp_path / "x") == tmp_path / "x"
    monkeypatch.delenv("STATE_DIRECTORY")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "xdg"))
    assert data_dir() == tmp_path / "xdg" / "twilight-companion"


WRITER = r"""
import random, sys
from companion.core.cards import CARDS
from companion.core.gamelog import GameLog
log = GameLog.open(sys.argv[1])
rng = random.Random(int(sys.argv[2]))
while True:
    hand = log.snapshot()["hand"]
    played = set()
    if hand["complete"] and hand["next_hand"] is None:
        log.new_match()  # the match is over
        continue
    if hand["complete"]:
        seat, moon = hand["next_hand"]["leader"] or "east", hand["next_hand"]["moon_seats"]
    elif hand["next"]:
        seat, moon = hand["next"]["seat"], hand["moon_seats"]
        played = {p["card"] for p in hand["plays"]}
    else:
        seat, moon = "east", hand["moon_seats"]
    cult = "moon" if seat in moon else "sun"
    card = rng.choice([c.id for c in CARDS if c.cult.value == cult and c.id not in played])
    snap = log.play(seat, card)
    print(snap["seq"], flush=True)
"""


def test_acknowledged_plays_survive_sigkill(tmp_path) -> None:
    """A writer is killed with SIGKILL at random moments, 50 times; every play it
    acknowledged is in the log afterwards, none doubled, and the file is sound."""
    rng = random.Random(2026)
    data = tmp_path / "data"
    acknowledged: list[int] = []
    for round_ in range(50):
        proc = subprocess.Popen([sys.executable, "-c", WRITER, str(data), str(round_)],
                                stdout=subprocess.PIPE, text=True)
        time.sleep(rng.uniform(0.1, 0.3))
        proc.send_signal(signal.SIGKILL)
        out, _ = proc.communicate(timeout=10)
        acknowledged.extend(int(x) for x in out.split())
    log = GameLog.open(data)
    try:
        assert log.integrity_check() == "ok"
        stored = {e["seq"]: e for e in log.events()}
        assert acknowledged, "the writer never got to play"
        missing = [s for s in acknowledged if s not in stored]
        assert not missing
        assert len(acknowledged) == len(set(acknowledged))
        # replay agrees with what is stored: no play doubled within a hand
        snap = log.snapshot()
        cards = [p["card"] for p in snap["hand"]["plays"]]
        assert len(cards) == len(set(cards))
        assert log.skipped == 0
        print(f"{len(acknowledged)} acknowledged plays over 50 kills; "
              f"{sum(1 for e in stored.values() if e['type'] == 'play')} stored")
    finally:
        log.close()
    assert json.dumps(snap)
