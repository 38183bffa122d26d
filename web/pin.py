"""The table PIN, the session secret, CSRF tokens and slowing down wrong PINs.

Who may change the game is decided by one table PIN. It is generated at first
start and kept in the data folder (owner-only file), unless the config sets one.
A phone that entered it keeps a signed session cookie; every change it posts
carries the session's CSRF token. Wrong PINs are slowed down per client by a
growing wait that refuses early attempts at once (429) instead of sleeping in a
waitress thread.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
import threading
import time
from collections.abc import Callable
from pathlib import Path

PIN_FILE = "table-pin"
SECRET_FILE = "session-secret"
PIN_DIGITS = 6

#: Wrong attempts a client may make before it has to wait.
FREE_ATTEMPTS = 3
#: Wait after the first throttled attempt, doubling each time, capped.
FIRST_DELAY = 1.0
MAX_DELAY = 60.0
#: Forget a client's failures after this long without an attempt.
FORGET_AFTER = 15 * 60.0
#: Clients whose failures are kept one by one; past this many, new clients share one
#: slowed-down place (a guesser changing its address often gains nothing, and the
#: table of failures cannot grow without bound).
MAX_CLIENTS = 1024
CROWD = "*crowd*"


def _read_or_create(path: Path, make: Callable[[], str]) -> str:
    """The text in ``path``; created owner-only (0600) with ``make()`` if missing."""
    try:
        text = path.read_text(encoding="utf-8").strip()
        if text:
            if path.stat().st_mode & 0o077:
                os.chmod(path, 0o600)
            return text
    except FileNotFoundError:
        pass
    path.parent.mkdir(parents=True, exist_ok=True)
    value = make()
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, (value + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, path)
    return value


def new_pin(digits: int = PIN_DIGITS) -> str:
    """A random table PIN of ``digits`` decimal digits."""
    return "".join(secrets.choice("0123456789") for _ in range(digits))


def table_pin(data_dir: str | os.PathLike[str], configured: str | int | None = None) -> str:
    """The configured PIN, else the one kept in the data folder (made at first start)."""
    if configured is not None and str(configured).strip():
        return str(configured).strip()
    return _read_or_create(Path(data_dir) / PIN_FILE, new_pin)


def session_secret(data_dir: str | os.PathLike[str]) -> str:
    """The per-install key that signs session cookies (0600 file in the data folder)."""
    return _read_or_create(Path(data_dir) / SECRET_FILE, lambda: secrets.token_hex(32))


def pin_matches(given: str, pin: str) -> bool:
    """Constant-time comparison of an entered PIN with the table's."""
    return hmac.compare_digest(given.strip().encode(), pin.encode())


def pin_fingerprint(pin: str, secret: str) -> str:
    """Stored in the session instead of the PIN: a changed PIN logs every phone out."""
    return hmac.new(secret.encode(), b"table-pin:" + pin.encode(), hashlib.sha256).hexdigest()[:32]


def new_csrf_token() -> str:
    return secrets.token_urlsafe(24)


def csrf_matches(given: str | None, expected: str | None) -> bool:
    if not given or not expected:
        return False
    return hmac.compare_digest(given.encode(), expected.encode())


class Throttle:
    """Per-client slow-down of wrong PINs.

    After :data:`FREE_ATTEMPTS` wrong PINs a client must wait before its next
    attempt: 1 s, 2 s, 4 s … up to :data:`MAX_DELAY`. An attempt during the wait
    is refused without looking at the PIN. A right PIN clears the client.
    Thread-safe; never sleeps.
    """

    def __init__(self, *, free: int = FREE_ATTEMPTS, first: float = FIRST_DELAY,
                 cap: float = MAX_DELAY, clock: Callable[[], float] = time.monotonic,
                 max_clients: int = MAX_CLIENTS) -> None:
        self.free = free
        self.max_clients = max_clients
        self.first = first
        self.cap = cap
        self._clock = clock
        self._lock = threading.Lock()
        self._failures: dict[str, tuple[int, float]] = {}  # client -> (count, not before)

    def wait_for(self, client: str) -> float:
        """Seconds the client must still wait before it may try a PIN (0 if none)."""
        with self._lock:
            count, not_before = self._failures.get(self._key(client), (0, 0.0))
            return max(0.0, not_before - self._clock()) if count else 0.0

    def _key(self, client: str) -> str:
        if client in self._failures or len(self._failures) < self.max_clients:
            return client
        return CROWD

    def failed(self, client: str) -> float:
        """Count a wrong PIN; returns the wait before the next attempt."""
        now = self._clock()
        with self._lock:
            self._forget_old(now)
            client = self._key(client)
            count = self._failures.get(client, (0, 0.0))[0] + 1
            over = count - self.free
            delay = 0.0 if over <= 0 else min(self.cap, self.first * 2 ** (over - 1))
            self._failures[client] = (count, now + delay)
            return delay

    def succeeded(self, client: str) -> None:
        with self._lock:
            self._failures.pop(client, None)

    def _forget_old(self, now: float) -> None:
        if len(self._failures) < 256:
            return
        for key, (_, not_before) in list(self._failures.items()):
            if now - not_before > FORGET_AFTER:
                del self._failures[key]
