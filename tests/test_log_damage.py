"""A damaged, emptied or read-only game log (issue 22): never replaced or overwritten,
one message naming the file and what to do; `log repair` copies every readable event
into a new log and keeps the damaged one; read-only commands create nothing; a WAL
deleted while running loses nothing; write trouble shows in the log's status."""

from __future__ import annotations

import hashlib
import os
import random
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest
from serve_helpers import without_root_powers

from companion.core.cards import Seat
from companion.core.deal import random_plays
from companion.core.gamelog import DB_NAME, GameLog, LogError

PAGE = 4096


def digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run(cli: list[str], *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*cli, *args], capture_output=True, text=True, timeout=120,
                          env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"})


def played_log(folder: Path, hands: int = 3) -> dict:
    """A log with a few complete hands and one in progress (many pages of events);
    returns its final snapshot."""
    log = GameLog.open(folder)
    rng = random.Random(7)
    for n in range(hands):
        hand = log.snapshot()["hand"]
        nxt = hand["next"] or (hand.get("next_hand") or {}).get("leader") or "east"
        leader = Seat.parse(nxt["seat"] if isinstance(nxt, dict) else nxt)
        moon = tuple(Seat.parse(s) for s in hand["moon_seats"])
        for p in random_plays(rng, moon, leader)[: 28 if n < hands - 1 else 9]:
            log.play(p.seat, p.card)
        for i in range(40):  # long refusals fill pages, as a real evening's do
            log.refuse(None, None, f"refusal {n}.{i}: " + "a card the rules refuse " * 6)
            log.dismiss()
    snap = log.snapshot()
    log.close()
    return snap


def files(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir())


def test_an_empty_log_file_is_refused_and_left_as_it_is(tmp_path, cli) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / DB_NAME).touch()
    with pytest.raises(LogError, match=r"game.sqlite3 is empty \(0 bytes\).*left as it is"):
        GameLog.open(data)
    r = run(cli, "history", "--data", str(data))
    assert r.returncode == 1 and "empty (0 bytes)" in r.stderr and "Traceback" not in r.stderr
    assert files(data) == [DB_NAME] and (data / DB_NAME).stat().st_size == 0
    # repair: nothing to recover, a new log in its place, the empty file kept beside it
    r = run(cli, "log", "repair", "--data", str(data))
    assert r.returncode == 0, r.stderr
    assert "0 events recovered" in r.stdout
    kept = [name for name in files(data) if name.startswith(f"{DB_NAME}.damaged-")]
    assert len(kept) == 1 and (data / kept[0]).stat().st_size == 0
    log = GameLog.open(data)
    assert log.snapshot()["seq"] == 1 and log.integrity_check() == "ok"
    log.close()


def test_a_damaged_log_stops_with_the_repair_command_and_repair_keeps_what_reads(
        tmp_path, cli) -> None:
    data = tmp_path / "data"
    snap = played_log(data)
    db = data / DB_NAME
    pages = db.stat().st_size // PAGE
    assert pages > 10
    with open(db, "r+b") as fh:  # a leaf in the middle gets garbage over most of it
        fh.seek(PAGE * (pages // 2) + 64)
        fh.write(random.Random(1).randbytes(PAGE - 200))
    before = digest(db)
    with pytest.raises(LogError, match="damaged.*`twilight-companion log repair --data"):
        GameLog.open(data)
    for command in ("serve", "history"):
        r = run(cli, command, "--data", str(data), "--port", "0") if command == "serve" else \
            run(cli, command, "--data", str(data))
        assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
        assert str(db) in r.stderr and "log repair" in r.stderr
    assert digest(db) == before and files(data) == [DB_NAME]

    r = run(cli, "log", "repair", "--data", str(data))
    assert r.returncode == 0, r.stderr
    kept = data / next(n for n in files(data) if n.startswith(f"{DB_NAME}.damaged-"))
    assert digest(kept) == before  # the damaged file, unchanged, beside the new log
    log = GameLog.open(data)
    try:
        recovered = log.events()
        assert log.integrity_check() == "ok"
        assert snap["seq"] * 3 // 4 < len(recovered) < snap["seq"]  # one page's rows lost
        assert [e["seq"] for e in recovered] == sorted(e["seq"] for e in recovered)
    finally:
        log.close()


def test_repair_finds_the_rows_on_pages_the_damaged_tree_no_longer_reaches(
        tmp_path, cli) -> None:
    """The events table's root page destroyed: SQLite reads no row at all; every event
    is found on the leaf pages and the game goes on exactly where it was."""
    data = tmp_path / "data"
    snap = played_log(data)
    db = data / DB_NAME
    root = sqlite3.connect(db).execute(
        "SELECT rootpage FROM sqlite_master WHERE name = 'events'").fetchone()[0]
    with open(db, "r+b") as fh:
        fh.seek(PAGE * (root - 1))
        fh.write(b"\xee" * PAGE)
    r = run(cli, "log", "repair", "--data", str(data))
    assert r.returncode == 0, r.stderr
    assert f"{snap['seq']} events recovered (0 read by SQLite" in r.stdout
    log = GameLog.open(data)
    try:
        again = log.snapshot()
        assert again["seq"] == snap["seq"] and again["hand"] == snap["hand"]
        assert again["match"] == snap["match"] and log.skipped == 0
    finally:
        log.close()


def test_repair_of_a_sound_log_changes_nothing(tmp_path, cli) -> None:
    data = tmp_path / "data"
    played_log(data, hands=1)
    before = digest(data / DB_NAME)
    r = run(cli, "log", "repair", "--data", str(data))
    assert r.returncode == 0 and "not damaged" in r.stdout
    assert digest(data / DB_NAME) == before and files(data) == [DB_NAME]


def test_read_only_commands_create_nothing(tmp_path, cli) -> None:
    missing = tmp_path / "mistyped"
    for args in (["history"], ["export", "1", "--out", str(tmp_path / "m.json")]):
        r = run(cli, *args, "--data", str(missing))
        assert r.returncode == 1 and "no game log in" in r.stderr, r.stderr
        assert not missing.exists() and not (tmp_path / "m.json").exists()
    data = tmp_path / "data"
    played_log(data, hands=2)
    before = digest(data / DB_NAME)
    r = run(cli, "history", "--data", str(data))
    assert r.returncode == 0 and "standard" in r.stdout
    r = run(cli, "export", "1", "--out", str(tmp_path / "m.json"), "--data", str(data))
    assert r.returncode == 0 and (tmp_path / "m.json").exists()
    assert files(data) == [DB_NAME] and digest(data / DB_NAME) == before


def test_read_only_opening_sees_a_running_writers_newest_events(tmp_path) -> None:
    writer = GameLog.open(tmp_path)
    writer.play("east", "sun-souls-3")
    reader = GameLog.open(tmp_path, readonly=True)
    try:
        assert [p["card"] for p in reader.snapshot()["hand"]["plays"]] == ["sun-souls-3"]
        with pytest.raises(LogError, match="read-only"):
            reader.undo()
    finally:
        reader.close()
        writer.close()


DELETER = r"""
import os, sys
from companion.core.gamelog import GameLog
folder = sys.argv[1]
log = GameLog.open(folder)
log.play("east", "sun-souls-3")
log.play("south", "moon-hierarch")
os.unlink(os.path.join(folder, "game.sqlite3-wal"))   # someone tidies up the folder
log.play("west", "sun-souls-4")
log.play("north", "moon-souls-5")
os._exit(0)                                             # then the power goes
"""


def test_a_wal_deleted_while_running_loses_no_play(tmp_path) -> None:
    subprocess.run([sys.executable, "-c", DELETER, str(tmp_path)], check=True, timeout=60)
    log = GameLog.open(tmp_path)
    try:
        assert [p["card"] for p in log.snapshot()["hand"]["plays"]] == [
            "sun-souls-3", "moon-hierarch", "sun-souls-4", "moon-souls-5"]
        assert log.integrity_check() == "ok"
    finally:
        log.close()


def test_write_trouble_shows_in_the_log_status_until_a_write_succeeds(log) -> None:
    log.play("east", "sun-souls-3")
    log._db.execute("PRAGMA query_only = 1")  # (SQLite's own read-only switch)
    log.undo(source="web")  # kept in memory, in order, until the log takes it (issue 21)
    assert log.unwritten == 1
    assert log.snapshot()["status"]["log"].startswith("error: cannot write to the game log")
    assert log.snapshot()["hand"]["plays"] == []
    log._db.execute("PRAGMA query_only = 0")
    assert log.flush() and log.unwritten == 0
    assert log.snapshot()["status"]["log"] == "ok"
    assert log.events()[-1]["type"] == "undo"


def test_a_read_only_log_file_is_reported_at_start(tmp_path, cli) -> None:
    data = tmp_path / "data"
    played_log(data, hands=1)
    before = digest(data / DB_NAME)
    os.chmod(tmp_path, 0o755)
    os.chmod(data / DB_NAME, 0o444)
    r = subprocess.run([*without_root_powers(), *cli, "serve", "--data", str(data), "--port",
                        "0"], capture_output=True, text=True, timeout=60,
                       env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"})
    assert r.returncode == 1 and "Traceback" not in r.stderr, r.stderr
    assert f"the game log {data / DB_NAME} is read-only" in r.stderr
    r = subprocess.run([*without_root_powers(), *cli, "history", "--data", str(data)],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr  # reading it is fine
    assert digest(data / DB_NAME) == before


def test_a_new_log_appears_whole_or_not_at_all(tmp_path, monkeypatch) -> None:
    """A log is made beside and linked into place when complete: a failure (a kill, a
    full disk) while it is made leaves no file that a later start would have to call
    damaged, and nothing half made."""
    import companion.core.gamelog as gamelog

    def no_room(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(gamelog.os, "link", no_room)
    with pytest.raises(LogError, match="cannot create the game log .*No space left"):
        GameLog.open(tmp_path / "data")
    assert files(tmp_path / "data") == []
    monkeypatch.undo()
    log = GameLog.open(tmp_path / "data")
    assert log.snapshot()["seq"] == 1 and files(tmp_path / "data") == [
        DB_NAME, f"{DB_NAME}-shm", f"{DB_NAME}-wal"]
    log.close()


def test_an_sqlite_file_that_is_not_a_game_log_is_never_adopted(tmp_path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    sqlite3.connect(data / DB_NAME).execute("PRAGMA user_version = 0").close()
    sqlite3.connect(data / DB_NAME).execute("VACUUM").close()  # a valid, empty database
    before = digest(data / DB_NAME)
    with pytest.raises(LogError, match="is not a Twilight game log"):
        GameLog.open(data)
    assert digest(data / DB_NAME) == before and files(data) == [DB_NAME]
