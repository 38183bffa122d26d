"""``twilight-companion log repair [--data DIR]``: a damaged game log made usable again.

Every event still readable in the damaged file is copied, in its order and with its
time, into a new log; the damaged file (and its WAL) is kept beside it as
``game.sqlite3.damaged-<time>``, never changed. Events are found two ways, on a
copy: the rows SQLite itself can still read (one at a time, so one bad page costs
only its own rows), and every row on every table page of the file and of its WAL,
read straight from the pages the way SQLite's ``.recover`` does (which the
``sqlite3`` command of Debian and Raspberry Pi OS cannot run: it lacks the
``sqlite_dbpage`` table), so rows on pages the damaged tree no longer reaches are
found too. At the next start the game is rebuilt from the copied events as always:
an event that no longer applies (a play whose predecessor was lost) is skipped and
counted.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sqlite3
import struct
import sys
import tempfile
import time
from pathlib import Path

from companion.core.game import EVENT_TYPES
from companion.core.gamelog import DB_NAME, GameLog, LogError, create_log, data_dir

Event = tuple[int, float, str, str]


def run(args: argparse.Namespace) -> int:
    folder = data_dir(args.data)
    path = folder / DB_NAME
    if not path.is_file():
        print(f"twilight-companion log repair: no game log in {folder}", file=sys.stderr)
        return 2
    problem = _problem(path)
    if problem is None:
        print(f"log repair: {path} is not damaged (SQLite's integrity check is ok); "
              "nothing changed")
        return 0
    print(f"log repair: {path}: {problem}", flush=True)
    events, how = recover_events(path)
    kept = path.with_name(f"{DB_NAME}.damaged-{time.strftime('%Y%m%d-%H%M%S')}")
    try:
        replace_log(path, events, kept)
    except (OSError, sqlite3.DatabaseError, LogError) as exc:
        print(f"twilight-companion log repair: cannot write the new log in {folder}: {exc}; "
              "the damaged log is unchanged", file=sys.stderr)
        return 1
    print(f"log repair: {len(events)} events recovered ({how}) into a new {path}; "
          f"the damaged log is kept as {kept}")
    try:
        log = GameLog.open(folder)
    except LogError as exc:
        print(f"twilight-companion log repair: the new log does not open: {exc}",
              file=sys.stderr)
        return 1
    try:
        if log.skipped:
            print(f"log repair: {log.skipped} of them no longer apply (an event before them "
                  "was lost) and are skipped when the game is rebuilt")
        hand = log.snapshot()["hand"]
        print(f"log repair: the game goes on at hand {hand['number']} with "
              f"{len(hand['plays'])} cards played")
    finally:
        log.close()
    return 0


def _problem(path: Path) -> str | None:
    """Why the log at *path* needs repair, or None when SQLite finds it whole."""
    try:
        if path.stat().st_size == 0:
            return "empty (0 bytes)"
        wal = path.with_name(path.name + "-wal").exists()  # (immutable: nothing created)
        db = sqlite3.connect(f"{path.absolute().as_uri()}?{'mode=ro' if wal else 'immutable=1'}",
                             uri=True)
    except (OSError, sqlite3.DatabaseError) as exc:
        return str(exc)
    try:
        result = [r[0] for r in db.execute("PRAGMA integrity_check").fetchall()]
        if result != ["ok"]:
            text = " ".join(" ".join(str(r) for r in result).split())
            return text if len(text) <= 160 else text[:157] + "..."
        db.execute("SELECT count(*) FROM events").fetchone()
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        db.close()
    return None


def recover_events(path: Path) -> tuple[list[Event], str]:
    """Every readable event of the log at *path* (and its WAL), in order, and how they
    were found. Works on a copy: the damaged file is only read."""
    found: dict[int, Event] = {}
    with tempfile.TemporaryDirectory(prefix="twilight-repair-") as tmp:
        copy = Path(tmp) / DB_NAME
        shutil.copyfile(path, copy)
        wal = path.with_name(path.name + "-wal")
        if wal.exists():
            shutil.copyfile(wal, copy.with_name(copy.name + "-wal"))
        by_sql = _read_row_by_row(copy)
        for event in by_sql:
            found[event[0]] = event
        for part in (path, wal):  # the WAL's pages are newer: they come last
            if part.exists():
                for event in scan_pages(part.read_bytes(), wal=part is wal):

                    found.setdefault(event[0], event)
    extra = len(found) - len(by_sql)
    how = f"{len(by_sql)} read by SQLite, {extra} more from the pages"
    return [found[seq] for seq in sorted(found)], how


def _read_row_by_row(copy: Path) -> list[Event]:
    """Every row SQLite can still read, one at a time past any that fails."""
    found: list[Event] = []
    try:
        db = sqlite3.connect(copy)
    except sqlite3.DatabaseError:
        return found
    try:
        try:
            return [e for row in db.execute("SELECT seq, ts, type, data FROM events ORDER BY seq")
                    if (e := _event(*row)) is not None]
        except sqlite3.DatabaseError:
            pass
        last = 0
        for query in ("SELECT seq FROM sqlite_sequence WHERE name = 'events'",
                      "SELECT max(seq) FROM events"):
            try:
                last = max(last, int(db.execute(query).fetchone()[0] or 0))
            except (sqlite3.DatabaseError, TypeError):
                pass
        for seq in range(1, last + 1):
            try:
                row = db.execute("SELECT seq, ts, type, data FROM events WHERE seq = ?",
                                 (seq,)).fetchone()
            except sqlite3.DatabaseError:
                continue
            event = _event(*row) if row else None
            if event is not None:
                found.append(event)
    except sqlite3.DatabaseError:
        pass
    finally:
        db.close()
    return found


# -- reading rows straight from the pages (SQLite's file format, sqlite.org/fileformat.html)

#: A WAL file's header and each frame's header, in bytes.
WAL_HEADER, FRAME_HEADER = 32, 24


def scan_pages(data: bytes, *, wal: bool = False) -> list[Event]:
    """The events on every table leaf page of a database file (or of the frames of a
    WAL file), whatever links to them or not."""
    if wal:
        if len(data) < WAL_HEADER:
            return []
        page_size = int.from_bytes(data[8:12], "big")
        if page_size not in _PAGE_SIZES:
            return []
        step = FRAME_HEADER + page_size
        pages = [data[at + FRAME_HEADER:at + step]
                 for at in range(WAL_HEADER, len(data) - step + 1, step)]
    else:
        raw = int.from_bytes(data[16:18], "big") if len(data) >= 100 else 0
        page_size = 65536 if raw == 1 else raw
        if page_size not in _PAGE_SIZES:
            page_size = 4096  # a damaged header: the size this program's logs use
        pages = [data[at:at + page_size] for at in range(0, len(data), page_size)]
    reserved = data[20] if not wal and len(data) > 20 else 0
    usable = page_size - reserved
    events: list[Event] = []
    for number, page in enumerate(pages, start=1):
        start = 100 if (number == 1 and not wal and page[:16] == b"SQLite format 3\0") else 0
        if len(page) < start + 8 or page[start] != 0x0D:  # a table b-tree leaf page
            continue
        cells = int.from_bytes(page[start + 3:start + 5], "big")
        for i in range(min(cells, (len(page) - start - 8) // 2)):
            at = int.from_bytes(page[start + 8 + 2 * i:start + 10 + 2 * i], "big")
            try:
                event = _cell(page, at, usable, pages)
            except (IndexError, ValueError):
                continue
            if event is not None:
                events.append(event)
    return events


_PAGE_SIZES = {512 << k for k in range(8)}


def _varint(buf: bytes, at: int) -> tuple[int, int]:
    value = 0
    for i in range(9):
        byte = buf[at + i]
        if i == 8:
            return (value << 8) | byte, at + 9
        value = (value << 7) | (byte & 0x7F)
        if byte < 0x80:
            return value, at + i + 1
    raise ValueError("bad varint")


def _cell(page: bytes, at: int, usable: int, pages: list[bytes]) -> Event | None:
    """The event in one table leaf cell, or None when it is not one."""
    size, at = _varint(page, at)
    rowid, at = _varint(page, at)
    if size > 1_000_000 or rowid <= 0:
        return None
    most = usable - 35  # the most payload a leaf cell keeps on its own page
    if size <= most:
        payload = page[at:at + size]
    else:
        least = (usable - 12) * 32 // 255 - 23
        local = least + (size - least) % (usable - 4)
        if local > most:
            local = least
        payload = page[at:at + local]
        following = int.from_bytes(page[at + local:at + local + 4], "big")
        for _ in range(len(pages)):  # the overflow chain, never longer than the file
            if len(payload) >= size or not 1 <= following <= len(pages):
                break
            over = pages[following - 1]
            following = int.from_bytes(over[:4], "big")
            payload += over[4:usable]
        payload = payload[:size]
    if len(payload) != size:
        return None
    return _record(rowid, payload)


def _record(rowid: int, payload: bytes) -> Event | None:
    """A record of four fields (NULL for the seq, which is the rowid; the time; the
    type; the data) as an event."""
    header_size, at = _varint(payload, 0)
    types = []
    while at < header_size:
        kind, at = _varint(payload, at)
        types.append(kind)
    if len(types) != 4 or types[0] != 0:
        return None
    values: list[object] = []
    at = header_size
    for kind in types[1:]:
        if kind == 7:
            values.append(struct.unpack_from(">d", payload, at)[0])
            at += 8
        elif 1 <= kind <= 6:
            width = (1, 2, 3, 4, 6, 8)[kind - 1]
            values.append(int.from_bytes(payload[at:at + width], "big", signed=True))
            at += width
        elif kind in (8, 9):
            values.append(kind - 8)
        elif kind >= 13 and kind % 2:
            length = (kind - 13) // 2
            values.append(payload[at:at + length].decode("utf-8"))
            at += length
        else:
            return None
    return _event(rowid, *values)


def _event(seq: object, ts: object, kind: object, data: object) -> Event | None:
    """One recovered row as an event, or None when it is not a whole one."""
    if not isinstance(seq, int) or not isinstance(ts, (int, float)) or kind not in EVENT_TYPES:
        return None
    if not isinstance(data, str):
        return None
    try:
        if not isinstance(json.loads(data), dict):
            return None
    except ValueError:
        return None
    return seq, float(ts), str(kind), data


def replace_log(path: Path, events: list[Event], kept: Path) -> None:
    """Write *events* into a new log and put it at *path*; the old file (and its WAL and
    shared memory) moves to *kept* first."""
    new = path.with_name(f".{path.name}.repaired")
    for leftover in (new, new.with_name(new.name + "-wal"), new.with_name(new.name + "-shm")):
        leftover.unlink(missing_ok=True)
    create_log(new)
    db = sqlite3.connect(new, isolation_level=None)
    try:
        db.execute("PRAGMA synchronous = FULL")
        db.execute("BEGIN IMMEDIATE")
        db.executemany("INSERT INTO events (seq, ts, type, data) VALUES (?, ?, ?, ?)", events)
        db.execute("COMMIT")
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    for suffix in ("", "-wal", "-shm"):
        old = path.with_name(path.name + suffix)
        if old.exists():
            old.rename(kept.with_name(kept.name + suffix))
    new.rename(path)
