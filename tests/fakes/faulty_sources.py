"""Frame sources that fail the way real cameras do, for the reliability tests (issue 9).

:class:`FaultyCamera` plays a recorded hand (a ``simulate`` frame folder) as a live
camera at ``fps`` frames a second and, when it reaches given frames of the
recording, inserts a fault that lasts some seconds:

* ``raise``   ``read()`` raises ``OSError`` (a driver error; capture ends, the
  companion has to reopen the camera),
* ``stall``   ``read()`` delivers nothing (blocks) — a camera that stopped,
* ``black``   black frames (lens covered, sensor fault),
* ``frozen``  the same frame again and again (a stuck buffer),
* ``corrupt`` frames that are no B,G,R picture of the camera's size (torn
  buffers: wrong size, one channel, floats),
* ``noise``   random pixels of the right size (garbage that looks like a picture).

The recording is never skipped: once a fault is over the table goes on where it
was, so every play of the recording must still be seen — and nothing may be
played from the garbage. ``recovered[i]`` is when the first good frame after
fault ``i`` was delivered (``time.monotonic()``), ``started[i]`` when it began.

``reopen()`` hands out the same camera again (what ``open_source`` returns in the
tests), as a real camera reopened after a fault shows the same table.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

KINDS = ("raise", "stall", "black", "frozen", "corrupt", "noise")


@dataclass(frozen=True)
class Fault:
    """At recording frame ``at`` (before it is shown), ``kind`` for ``seconds``."""

    at: int
    kind: str
    seconds: float


class FaultyCamera:
    """A recorded hand as a live camera, with faults inserted (see the module doc)."""

    live = True

    def __init__(self, folder: str | Path, faults: list[Fault] = (), *, fps: float = 25.0,
                 stop_at: int | None = None, seed: int = 0) -> None:
        self.files = sorted(Path(folder).glob("frame-*.jpg"))[:stop_at]
        if not self.files:
            raise FileNotFoundError(f"{folder}: no frame-*.jpg")
        for f in faults:
            if f.kind not in KINDS:
                raise ValueError(f"unknown fault {f.kind!r}")
        self.name = f"faulty:{Path(folder).name}"
        self.faults = sorted(faults, key=lambda f: f.at)
        self.fps = float(fps)
        self.started: list[float | None] = [None] * len(self.faults)
        self.recovered: list[float | None] = [None] * len(self.faults)
        self.finished = threading.Event()  # the last frame of the recording was delivered
        self.index = 0  # next recording frame
        self.delivered = 0
        self.reopened = 0
        self._fault = 0  # next fault to start
        self._until: float | None = None  # end of the running fault
        self._closed = threading.Event()
        self._lock = threading.Lock()
        self._due: float | None = None
        self._last: np.ndarray | None = None
        self._rng = np.random.default_rng(seed)
        self._corrupt_count = 0

    # -- what open_source would give
    def reopen(self) -> FaultyCamera:
        self.reopened += 1
        self._closed.clear()
        return self

    def close(self) -> None:
        self._closed.set()

    # -- reading
    def _pace(self) -> None:
        now = time.monotonic()
        if self._due is None or self._due < now - 1.0:
            self._due = now
        if self._due > now:
            self._closed.wait(self._due - now)
        self._due += 1.0 / self.fps

    def _running(self) -> Fault | None:
        """The fault running now (starting it when its frame comes), or None."""
        now = time.monotonic()
        if self._until is not None:
            if now < self._until:
                return self.faults[self._fault - 1]
            self._until = None
        if self._fault < len(self.faults) and self.faults[self._fault].at <= self.index:
            fault = self.faults[self._fault]
            self.started[self._fault] = now
            self._fault += 1
            self._until = now + fault.seconds
            return fault
        return None

    def read(self) -> np.ndarray | None:
        if self._closed.is_set():
            time.sleep(0.02)
            return None
        with self._lock:
            fault = self._running()
            if fault is not None and fault.kind == "stall":
                until = self._until or 0.0
                self._lock.release()
                try:
                    self._closed.wait(max(0.0, until - time.monotonic()))
                finally:
                    self._lock.acquire()
                return None  # nothing came; a live capture just asks again
            self._pace()
            if fault is not None:
                return self._bad(fault.kind)
            if self.index >= len(self.files):
                self.finished.set()
                time.sleep(0.05)
                return self._last  # the table stays as it was
            if self._fault and self.recovered[self._fault - 1] is None:
                self.recovered[self._fault - 1] = time.monotonic()
            image = cv2.imread(str(self.files[self.index]), cv2.IMREAD_COLOR)
            self.index += 1
            self.delivered += 1
            self._last = image
            return image

    def _bad(self, kind: str) -> np.ndarray:
        shape = self._last.shape if self._last is not None else (360, 640, 3)
        if kind == "raise":
            raise OSError(5, "camera driver: input/output error")
        if kind == "black":
            return np.zeros(shape, np.uint8)
        if kind == "frozen":
            assert self._last is not None
            return self._last.copy()
        if kind == "noise":
            return self._rng.integers(0, 256, shape, dtype=np.uint8)
        # corrupt: a torn buffer, one channel, floats — in turn
        self._corrupt_count += 1
        h, w = shape[:2]
        variant = self._corrupt_count % 3
        if variant == 0:
            return self._rng.integers(0, 256, (h // 2, w, 3), dtype=np.uint8)
        if variant == 1:
            return self._rng.integers(0, 256, (h, w), dtype=np.uint8)
        return self._rng.random(shape, dtype=np.float32)


class RaisingSource:
    """A recording that raises on its ``fail_at``-th read (an unreadable frame file)."""

    live = False

    def __init__(self, images: list[np.ndarray], fail_at: set[int]) -> None:
        self.name = "raising"
        self.images = images
        self.fail_at = fail_at
        self.reads = 0

    def read(self) -> np.ndarray | None:
        self.reads += 1
        if self.reads in self.fail_at:
            raise OSError(f"frame {self.reads}: not a readable image")
        if not self.images:
            return None
        return self.images.pop(0)

    def close(self) -> None:
        self.images = []
