"""The game log: an append-only SQLite event log, the single source of truth.

Every change to the game — a card the camera saw, an undo from a phone, a
button press — is an event. :class:`GameLog` checks it against the rules
(:class:`~companion.core.game.Game`), stores it durably (WAL, ``synchronous=FULL``;
the call returns only once the event is on disk) and then tells subscribers.
At start the live game is rebuilt by replaying the log.

Thread-safe: any thread may append, read snapshots, subscribe or wait.

>>> import tempfile
>>> log = GameLog.open(tempfile.mkdtemp())
>>> log.play("east", "sun-souls-7")["hand"]["next"]
{'seat': 'south', 'cult': 'moon'}
>>> log.close()
"""

from __future__ import annotations

import json
import logging
import os
import sqlite3
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from companion.core.cards import Card, Seat
from companion.core.game import Game, GameError
from companion.core.records import match_record
from companion.core.rules import RuleError

log = logging.getLogger(__name__)

APP_NAME = "twilight-companion"
DB_NAME = "game.sqlite3"
#: PRAGMA application_id: "TWLT"
APPLICATION_ID = 0x54574C54
SCHEMA_VERSION = 1

Snapshot = dict[str, Any]
Listener = Callable[[dict[str, Any], Snapshot], None]


class LogError(RuntimeError):
    """The game log cannot be opened, read or written (disk, permissions, version)."""


def damaged(path: Path, exc: BaseException) -> LogError:
    """The error for a log SQLite finds damaged: names the file and what to do."""
    return LogError(
        f"the game log {path} is damaged ({exc}); it is left as it is. "
        f"`twilight-companion log repair --data {path.parent}` copies every readable "
        "event into a new log and keeps the damaged file beside it")


def _is_damage(exc: sqlite3.DatabaseError) -> bool:
    text = str(exc).lower()
    return "malformed" in text or "not a database" in text or "corrupt" in text


def data_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The data folder: ``--data DIR``, else ``$STATE_DIRECTORY`` (systemd), else
    ``$XDG_DATA_HOME/twilight-companion`` (``~/.local/share/twilight-companion``)."""
    if explicit:
        return Path(explicit)
    state = os.environ.get("STATE_DIRECTORY")
    if state:
        return Path(state.split(":")[0])
    xdg = os.environ.get("XDG_DATA_HOME") or os.path.join(os.path.expanduser("~"), ".local", "share")
    return Path(xdg) / APP_NAME


def create_log(path: Path) -> None:
    """Make a new, empty game log at *path*, all at once: it is written beside and put in
    place only when complete, and never over an existing file. So a file at *path* that
    is empty or unreadable was damaged, never a log being made."""
    tmp = path.with_name(f".{path.name}.new-{os.getpid()}")
    try:
        db = sqlite3.connect(tmp, isolation_level=None)
        try:
            db.execute("PRAGMA journal_mode = WAL")
            db.execute("BEGIN IMMEDIATE")
            db.execute(
                "CREATE TABLE events (seq INTEGER PRIMARY KEY AUTOINCREMENT, "
                "ts REAL NOT NULL, type TEXT NOT NULL, data TEXT NOT NULL)"
            )
            db.execute(f"PRAGMA application_id = {APPLICATION_ID}")
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
            db.execute("COMMIT")
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        finally:
            db.close()
        with open(tmp, "rb") as fh:
            os.fsync(fh.fileno())
        try:
            os.link(tmp, path)  # fails if a log appeared meanwhile: that one is kept
        except FileExistsError:
            pass
        _sync_folder(path.parent)
    except (sqlite3.DatabaseError, OSError) as exc:
        raise LogError(f"cannot create the game log {path}: "
                       f"{getattr(exc, 'strerror', None) or exc}") from None
    finally:
        for leftover in (tmp, tmp.with_name(tmp.name + "-wal"), tmp.with_name(tmp.name + "-shm")):
            try:
                leftover.unlink()
            except OSError:
                pass


def _sync_folder(folder: Path) -> None:
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


class GameLog:
    """Append events, read snapshots, subscribe to changes.

    Use :meth:`open` with a data folder. All mutating methods return the new
    snapshot, or raise a :class:`~companion.core.rules.RuleError` (the game is
    unchanged, nothing stored). An event the disk refuses (full, I/O error) is
    kept in memory, in order, and written as soon as the disk takes writes again
    (:meth:`flush`, and every later append); the ``log`` status tells meanwhile.
    """

    def __init__(self, path: str | os.PathLike[str], *, clock: Callable[[], float] = time.time,
                 readonly: bool = False):
        self.path = Path(path)
        #: Opened by a command that only reads (``history``, ``export``): nothing is
        #: written, no file is created, appending raises :class:`LogError`.
        self.readonly = readonly
        self._clock = clock
        self._lock = threading.RLock()
        self._changed = threading.Condition(self._lock)
        self._listeners: list[Listener] = []
        self._status: dict[str, Any] = {}
        self._version = 0
        self._snapshot: Snapshot | None = None
        self.skipped = 0
        self._unwritten: list[tuple[float, str, str]] = []
        self._db = self._connect_readonly() if readonly else self._connect()
        try:
            self._game = self._replay()
        except BaseException:
            self._db.close()  # (a damaged log: nothing was written, nothing is left beside it)
            raise
        if self._seq == 0 and not readonly:
            self.append("new_match", mode="four", goal="standard")

    @classmethod
    def open(cls, folder: str | os.PathLike[str] | None = None, *, readonly: bool = False,
             **kwargs: Any) -> GameLog:
        """The game log in *folder* (see :func:`data_dir`). A new log is made only where
        there is none; an existing file that is empty, damaged or not a game log is
        refused and left as it is. ``readonly``: only read an existing log."""
        directory = data_dir(folder)
        path = directory / DB_NAME
        if readonly:
            if not path.is_file():
                raise LogError(f"no game log in {directory} (nothing was created; is --data "
                               "the folder the companion keeps its log in?)")
            return cls(path, readonly=True, **kwargs)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise LogError(f"cannot create the data folder {directory}: {exc.strerror}") from None
        if not os.access(directory, os.W_OK | os.X_OK):
            raise LogError(f"the data folder {directory} is not writable (read-only, or "
                           "owned by another user): the game log cannot be kept there")
        if not path.exists():
            create_log(path)
        return cls(path, **kwargs)

    # -- storage ----------------------------------------------------------------------------
    def _connect(self) -> sqlite3.Connection:
        self._check_file()
        return self._open(self.path, self._prepare_for_writing, "open")

    def _prepare_for_writing(self, db: sqlite3.Connection) -> None:
        db.execute("PRAGMA busy_timeout = 5000")
        self._check_kind(db)
        mode = db.execute("PRAGMA journal_mode = WAL").fetchone()[0]
        if mode.lower() != "wal":
            log.warning("game log: journal mode %s, not WAL", mode)
        db.execute("PRAGMA synchronous = FULL")
        # a file this process may read but not write: said now, not at the first card
        # (a change to the header that is rolled back: nothing reaches the disk)
        db.execute("BEGIN IMMEDIATE")
        try:
            db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        finally:
            db.execute("ROLLBACK")

    def _connect_readonly(self) -> sqlite3.Connection:
        """Open for reading only, creating nothing: with no WAL file beside the log (no
        writer at work, none crashed) the file is read as it is (``immutable``); else
        through the WAL, which may hold the newest events."""
        self._check_file()
        wal = self.path.with_name(self.path.name + "-wal").exists()
        uri = f"{self.path.absolute().as_uri()}?{'mode=ro' if wal else 'immutable=1'}"
        return self._open(uri, self._check_kind, "read")

    def _open(self, target: str | Path, prepare: Callable[[sqlite3.Connection], None],
              verb: str) -> sqlite3.Connection:
        """Connect to *target* (the log's path, or a ``file:`` URI) and *prepare* the
        connection; any SQLite error becomes a :class:`LogError` naming the file, and a
        connection that fails to prepare is closed."""
        try:
            db = sqlite3.connect(target, uri=isinstance(target, str), check_same_thread=False,
                                 isolation_level=None)
            try:
                prepare(db)
            except BaseException:
                db.close()
                raise
            return db
        except sqlite3.DatabaseError as exc:
            if _is_damage(exc):
                raise damaged(self.path, exc) from None
            if "readonly" in str(exc).replace("-", "").replace(" ", ""):
                raise LogError(f"the game log {self.path} is read-only ({exc}): scores could "
                               "not be kept. Make the file and its folder writable for this "
                               "user, or start with another --data folder") from None
            raise LogError(f"cannot {verb} the game log {self.path}: {exc}") from None

    def _check_file(self) -> None:
        try:
            size = self.path.stat().st_size
        except OSError as exc:
            raise LogError(f"cannot open the game log {self.path}: {exc.strerror}") from None
        if size == 0:
            raise LogError(
                f"the game log {self.path} is empty (0 bytes): it was cut short or damaged, "
                "and is left as it is. Put back a copy, or move it away to start a new log")

    def _check_kind(self, db: sqlite3.Connection) -> None:
        app_id = db.execute("PRAGMA application_id").fetchone()[0]
        version = db.execute("PRAGMA user_version").fetchone()[0]
        tables = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type='table'")}
        if app_id != APPLICATION_ID or "events" not in tables:
            raise LogError(f"{self.path} is not a Twilight game log; refusing to touch it")
        if version > SCHEMA_VERSION:
            raise LogError(
                f"{self.path} was written by a newer version (log format {version}, this "
                f"program reads {SCHEMA_VERSION}); refusing to change it"
            )

    def _rows(self) -> list[tuple[int, float, str, str]]:
        try:
            return self._db.execute("SELECT seq, ts, type, data FROM events ORDER BY seq").fetchall()
        except sqlite3.DatabaseError as exc:
            if _is_damage(exc):
                raise damaged(self.path, exc) from None
            raise LogError(f"cannot read the game log {self.path}: {exc}") from None

    def _replay(self) -> Game:
        game = Game()
        self._seq = 0
        for seq, ts, kind, data in self._rows():
            self._seq = seq
            try:
                game.apply(kind, json.loads(data), ts)
            except (RuleError, ValueError) as exc:
                # Everything stored was checked when it came; a refusal now means
                # the rules changed under an old log. Keep going with the rest.
                self.skipped += 1
                log.warning("game log: event %d (%s) no longer applies: %s", seq, kind, exc)
        return game

    def close(self) -> None:
        with self._lock:
            if self._unwritten and not self._write_unwritten():
                log.error("game log: %d events could not be written and are lost",
                          len(self._unwritten))
            if not self.readonly:
                try:
                    self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                except sqlite3.DatabaseError:
                    pass
            self._db.close()

    def integrity_check(self) -> str:
        with self._lock:
            return str(self._db.execute("PRAGMA integrity_check").fetchone()[0])

    # -- appending --------------------------------------------------------------------------
    def append(self, kind: str, **data: Any) -> Snapshot:
        """Check an event against the game, store it, notify subscribers."""
        data = {k: v for k, v in data.items() if v is not None}
        if self.readonly:
            raise LogError(f"the game log {self.path} was opened read-only")
        with self._lock:
            ts = self._clock()
            self._game.apply(kind, data, ts)  # raises and changes nothing if refused
            # A write the disk refuses (full, I/O error) is kept, in order, and written
            # when the log accepts writes again (every append and flush tries): the
            # game goes on in memory, and the ``log`` status says so until then.
            self._unwritten.append((ts, kind, json.dumps(data, separators=(",", ":"))))
            written = self._write_unwritten()
            event = {"seq": self._seq if written else None, "ts": ts, "type": kind,
                     "data": data}
            snap = self._bump(event)
            self._notify(event, snap)
            if written and self._status.get("log", "ok") != "ok":
                self.set_status("log", "ok")
                snap = self.snapshot()
            self.check_files()
            return snap

    def check_files(self) -> None:
        """Notice the log's WAL file deleted under a running program (the events in it
        would go with the process): everything is checkpointed into the log itself at
        once and the log reopened, so a kill after this loses nothing."""
        if self.readonly:
            return
        with self._lock:
            if self.path.with_name(self.path.name + "-wal").exists():
                return
            log.error("game log: %s-wal was deleted while in use; writing everything into "
                      "%s and reopening it", self.path.name, self.path)
            try:
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                self._db.close()
                self._db = self._connect()
            except (sqlite3.DatabaseError, LogError) as exc:
                self.set_status("log", f"error: the WAL file was deleted: {exc}")

    @property
    def unwritten(self) -> int:
        """Events applied but not yet on disk (the disk refused them)."""
        return len(self._unwritten)

    def flush(self) -> bool:
        """Try again to write the events the disk refused; True when none is left."""
        with self._lock:
            return not self._unwritten or self._write_unwritten()

    def _write_unwritten(self) -> bool:
        """Write the kept events in order, each on its own; stop at the first the disk
        refuses. Sets the ``log`` status; True when all are written."""
        while self._unwritten:
            ts, kind, text = self._unwritten[0]
            try:
                cur = self._db.execute(
                    "INSERT INTO events (ts, type, data) VALUES (?, ?, ?)", (ts, kind, text))
            except sqlite3.DatabaseError as exc:
                n = len(self._unwritten)
                problem = (f"error: cannot write to the game log {self.path}: {exc} "
                           f"({n} event{'s' if n != 1 else ''} kept in memory, written "
                           "when the disk takes them)")
                if not str(self._status.get("log", "ok")).startswith("error"):
                    log.error("game log: %s", problem)
                self._set_status_locked("log", problem)
                return False
            self._seq = int(cur.lastrowid or self._seq + 1)
            self._unwritten.pop(0)
        if self._status.get("log", "ok") != "ok":
            log.info("game log: every kept event is written")
            try:  # the disk was short of room: fold the write-ahead log back in
                self._db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
            except sqlite3.DatabaseError:
                pass
            self._set_status_locked("log", "ok")
        return True

    def _bump(self, event: dict[str, Any] | None = None) -> Snapshot:
        self._version += 1
        self._last_event = event
        self._snapshot = None
        self._changed.notify_all()
        return self.snapshot()

    def _notify(self, event: dict[str, Any], snap: Snapshot) -> None:
        for listener in list(self._listeners):
            try:
                listener(event, snap)
            except Exception:  # a broken display must not stop the scoring
                log.exception("game log: a subscriber failed on event %s", event.get("seq"))

    def play(self, seat: Seat | str, card: Card | str, *, source: str = "camera",
             frame: int | None = None) -> Snapshot:
        return self.append("play", seat=str(seat), card=str(card), source=source, frame=frame)

    def gap(self, seat: Seat | str, *, source: str = "camera",
            frame: int | None = None) -> Snapshot:
        """A card laid in turn at ``seat`` that could not be named: an open gap."""
        return self.append("gap", seat=str(seat), source=source, frame=frame)

    def undo(self, *, source: str = "web") -> Snapshot:
        return self.append("undo", source=source)

    def correct(self, index: int, card: Card | str, *, source: str = "web") -> Snapshot:
        return self.append("correct", index=index, card=str(card), source=source)

    def refuse(self, seat: Seat | str | None, card: Card | str | None, message: str,
               *, frame: int | None = None) -> Snapshot:
        return self.append("refused", seat=str(seat) if seat else None,
                           card=str(card) if card else None, message=message, frame=frame)

    def dismiss(self) -> Snapshot:
        return self.append("dismiss")

    def new_hand(self, **setup: Any) -> Snapshot:
        return self.append("new_hand", **setup)

    def new_match(self, **setup: Any) -> Snapshot:
        return self.append("new_match", **setup)

    def setup(self, **setup: Any) -> Snapshot:
        return self.append("setup", **setup)

    def set_goal(self, goal: str) -> Snapshot:
        return self.append("goal", goal=goal)

    def set_mode(self, mode: str, soloist: str | None = None,
                 pairing: str | None = None) -> Snapshot:
        data: dict[str, Any] = {"mode": mode}
        if soloist:
            data["soloist"] = soloist
        if pairing:
            data["pairing"] = pairing
        return self.append("mode", **data)

    def set_setting(self, key: str, value: Any) -> Snapshot:
        return self.append("setting", key=key, value=value)

    # -- status (not stored: camera, LEDs, recognition health) -------------------------------
    def set_status(self, key: str, value: Any) -> None:
        """Publish a live status (e.g. ``camera``: ``"ok"``/``"lost"``) with the snapshot.
        Only a change notifies."""
        with self._lock:
            self._set_status_locked(key, value)

    def _set_status_locked(self, key: str, value: Any) -> None:
        if self._status.get(key) == value:
            return
        self._status[key] = value
        snap = self._bump({"seq": None, "type": "status", "data": {key: value}})
        self._notify({"seq": None, "type": "status", "data": {key: value}}, snap)

    # -- reading ----------------------------------------------------------------------------
    @property
    def version(self) -> int:
        return self._version

    @property
    def game(self) -> Game:
        """The live game. Read it only while holding :attr:`lock`."""
        return self._game

    @property
    def lock(self) -> threading.RLock:
        return self._lock

    def snapshot(self) -> Snapshot:
        """The whole state the table sees, as plain JSON-able data. Do not mutate."""
        with self._lock:
            if self._snapshot is None:
                g = self._game
                last = getattr(self, "_last_event", None)
                self._snapshot = {
                    "version": self._version,
                    "seq": self._seq,
                    "hand": g.hand_view(),
                    "match": g.match_view(),
                    "refused": dict(g.refused) if g.refused else None,
                    "settings": dict(g.settings),
                    "status": dict(self._status),
                    "last_event": {"seq": last["seq"], "type": last["type"]} if last else None,
                }
            return self._snapshot

    def wait(self, version: int, timeout: float) -> Snapshot | None:
        """Block until the version is past ``version`` (or ``timeout`` seconds);
        returns the new snapshot or ``None`` on timeout."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while self._version <= version:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    return None
                self._changed.wait(remaining)
            return self.snapshot()

    def subscribe(self, listener: Listener) -> Callable[[], None]:
        """Call ``listener(event, snapshot)`` after every change, in the thread that
        made it. Keep listeners quick. Returns a function that unsubscribes."""
        with self._lock:
            self._listeners.append(listener)

        def unsubscribe() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return unsubscribe

    def correction_choices(self, index: int) -> list[str]:
        with self._lock:
            return self._game.correction_choices(index)

    def events(self, since: int = 0) -> list[dict[str, Any]]:
        with self._lock:
            rows = self._db.execute(
                "SELECT seq, ts, type, data FROM events WHERE seq > ? ORDER BY seq", (since,)
            ).fetchall()
        return [{"seq": s, "ts": t, "type": k, "data": json.loads(d)} for s, t, k, d in rows]

    def matches(self) -> list[dict[str, Any]]:
        """Every match in the log, oldest first: number, started, mode, goal, hands,
        totals, over, winner."""
        with self._lock:
            g = self._game
            out = [g.match_view(f.match, f.number, f.started) for f in g.finished]
            out.append(g.match_view())
        for m in out:
            m["hand_count"] = len(m["hands"])
        return out

    def match_record(self, number: int) -> dict[str, Any]:
        """The C4 record of match ``number`` (complete hands only)."""
        with self._lock:
            g = self._game
            if number == g.match_number:
                return match_record(g.match)
            for f in g.finished:
                if f.number == number:
                    return match_record(f.match)
        raise GameError(f"no match {number} in the log (see `twilight-companion history`)")
