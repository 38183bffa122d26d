"""Frame sources: every way a picture of the table comes in, behind one ``read()``.

All sources give B,G,R ``uint8`` frames (what OpenCV expects) and share one shape:

>>> src = open_source("frames/")        # doctest: +SKIP
>>> img = src.read()                    # ndarray, or None when the source has ended
>>> src.close()

``open_source(spec)`` picks the source from the C7 ``--source`` text:

* ``picamera``   the Raspberry Pi camera through picamera2 (imported lazily),
* ``0``, ``1``…  an OpenCV camera index,
* a folder       its image files in name order,
* a file         a video file.

``demo``, the built-in table simulator, is not recognition's business: the
wiring builds it from :mod:`vision.sim.camera`.

A live camera must be read by exactly one thread; :class:`LatestFrame` runs that
one capture thread and shares the newest frame (with its number and time) with
any number of readers — recogniser, watch loop and the web preview — holding
only that one frame in memory. When frames stop coming, or reading raises, it
reports the camera as lost instead of hanging its readers.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

#: Image files a frame folder may hold (case-insensitive).
FRAME_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp", ".tif", ".tiff", ".webp")
#: Default capture size of live cameras (width, height).
DEFAULT_SIZE = (1280, 720)
#: Seconds the Pi camera's automatic exposure and white balance may settle
#: before they are frozen, so card colours stay put for the rest of the session.
SETTLE_SECONDS = 2.0
#: Seconds without a new frame after which :class:`LatestFrame` calls the camera lost.
LOST_AFTER_SECONDS = 3.0
#: Consecutive failed reads of an OpenCV camera before it counts as lost.
MAX_FAILED_READS = 30


#: What to use instead when there is no Pi camera (said when it cannot be opened).
WITHOUT_PI_CAMERA = ("No Pi camera? --source 0 (or [camera] source = \"0\") uses the first USB "
                     "camera; --source also takes a video file or a folder of frames; "
                     "`twilight-companion demo` plays on a simulated table")


class SourceError(RuntimeError):
    """A source that cannot be opened, or a camera that stopped giving frames."""


class CameraLost(SourceError):
    """The capture thread got no frame for too long, or reading raised."""


class FrameSource(Protocol):
    """What every source offers. ``live`` sources drop frames when read slowly."""

    name: str
    live: bool

    def read(self) -> np.ndarray | None:
        """The next B,G,R frame, or None once the source has ended."""
        ...

    def close(self) -> None: ...


@dataclass(frozen=True, slots=True)
class Frame:
    """One captured frame: its image, its running number from 1, and when it came
    (``time.monotonic()`` seconds)."""

    image: np.ndarray
    number: int
    timestamp: float


# ---------------------------------------------------------------- Pi camera


class PiCamera:
    """The Pi camera through picamera2 (``apt install python3-picamera2``).

    Video configuration with an ``RGB888`` main stream — in picamera2's naming
    that is B,G,R byte order, exactly what OpenCV wants, so no colour swap.
    After ``settle_s`` of automatic exposure and white balance, the settled
    ExposureTime, AnalogueGain and ColourGains are read from the frame metadata
    and frozen (AeEnable/AwbEnable False): a hand reaching over the table must
    not shift the cult colours.
    """

    live = True

    def __init__(self, size: tuple[int, int] = DEFAULT_SIZE, *, camera_num: int = 0,
                 settle_s: float = SETTLE_SECONDS, sleep=time.sleep) -> None:
        try:
            import picamera2  # only on a Raspberry Pi
        except ImportError as exc:
            raise SourceError(
                "picamera: the picamera2 library is not installed "
                f"(on Raspberry Pi OS: sudo apt install python3-picamera2). {WITHOUT_PI_CAMERA}"
            ) from exc
        self.name = f"picamera:{camera_num}"
        self.size = (int(size[0]), int(size[1]))
        try:
            self._cam = picamera2.Picamera2(camera_num)
        except Exception as exc:  # picamera2 raises plain RuntimeError/IndexError
            raise SourceError(f"picamera: no camera {camera_num} ({exc}). {WITHOUT_PI_CAMERA}"
                              ) from exc
        try:
            config = self._cam.create_video_configuration(
                main={"size": self.size, "format": "RGB888"})
            self._cam.configure(config)
            self._cam.start()
            self.fixed_controls = self._freeze_exposure(settle_s, sleep)
        except Exception:
            self._cam.close()
            raise

    def _freeze_exposure(self, settle_s: float, sleep) -> dict[str, Any]:
        sleep(settle_s)
        meta = self._cam.capture_metadata()
        controls: dict[str, Any] = {"AeEnable": False, "AwbEnable": False}
        for key in ("ExposureTime", "AnalogueGain", "ColourGains"):
            if meta.get(key) is not None:
                controls[key] = meta[key]
        self._cam.set_controls(controls)
        return controls

    def read(self) -> np.ndarray | None:
        frame = self._cam.capture_array("main")
        if frame.ndim == 3 and frame.shape[2] == 4:  # XRGB8888 if a driver insists
            frame = frame[:, :, :3]
        return np.ascontiguousarray(frame)

    def close(self) -> None:
        try:
            self._cam.stop()
        finally:
            self._cam.close()


# ---------------------------------------------------------------- OpenCV sources


class OpenCVCamera:
    """A USB/webcam through ``cv2.VideoCapture(index)``."""

    live = True

    def __init__(self, index: int, size: tuple[int, int] = DEFAULT_SIZE) -> None:
        import cv2

        self.name = f"camera:{index}"
        self._cap = cv2.VideoCapture(index)
        if not self._cap.isOpened():
            raise SourceError(f"camera {index}: cannot be opened")
        self._cap.set(cv2.CAP_PROP_FRAME_WIDTH, size[0])
        self._cap.set(cv2.CAP_PROP_FRAME_HEIGHT, size[1])

    def read(self) -> np.ndarray | None:
        for _ in range(MAX_FAILED_READS):
            ok, frame = self._cap.read()
            if ok:
                return frame
        raise CameraLost(f"{self.name}: {MAX_FAILED_READS} reads in a row failed")

    def close(self) -> None:
        self._cap.release()


class VideoFile:
    """A recorded video; ends at its last frame. ``fps`` is the file's frame rate."""

    live = False

    def __init__(self, path: str | os.PathLike) -> None:
        import cv2

        self.name = str(path)
        self._cap = cv2.VideoCapture(str(path))
        if not self._cap.isOpened():
            raise SourceError(f"{path}: not a readable video")
        self.fps = float(self._cap.get(cv2.CAP_PROP_FPS) or 0.0)

    def read(self) -> np.ndarray | None:
        ok, frame = self._cap.read()
        return frame if ok else None

    def close(self) -> None:
        self._cap.release()


class FrameFolder:
    """A folder of image frames, read in name order; unreadable files raise."""

    live = False

    def __init__(self, path: str | os.PathLike) -> None:
        folder = Path(path)
        self.name = str(folder)
        # names, not Path objects: a long recording's list stays small (10,000 frames:
        # 0.7 MB of strings instead of 3.5 MB of Paths and their cached parts)
        self.files = sorted(str(p) for p in folder.iterdir()
                            if p.is_file() and p.suffix.lower() in FRAME_SUFFIXES)
        if not self.files:
            raise SourceError(f"{folder}: no image frames ({', '.join(FRAME_SUFFIXES)})")
        self._next = 0

    def read(self) -> np.ndarray | None:
        from vision.imagefile import ImageError, load_image

        if self._next >= len(self.files):
            return None
        path = self.files[self._next]
        self._next += 1
        try:
            return load_image(path)
        except ImageError as exc:
            raise SourceError(f"{path}: {exc}") from None

    def close(self) -> None:
        self._next = len(self.files)


def open_source(spec: str, size: tuple[int, int] = DEFAULT_SIZE, **options: Any) -> FrameSource:
    """The source the C7 ``--source`` text names; raises :class:`SourceError` naming it.

    ``options`` go to the Pi camera (e.g. ``settle_s``).
    """
    text = str(spec).strip()
    if text == "picamera":
        return PiCamera(size, **options)
    if text.isdigit():
        return OpenCVCamera(int(text), size)
    path = Path(text)
    if path.is_dir():
        return FrameFolder(path)
    if path.is_file():
        return VideoFile(path)
    raise SourceError(f"source {text!r}: not picamera, demo, a camera number, "
                      "a folder of frames or a video file")


def frames(source: FrameSource) -> Iterator[Frame]:
    """Every frame of a (recorded) source in order, numbered from 1, until it ends."""
    number = 0
    while True:
        image = source.read()
        if image is None:
            return
        number += 1
        yield Frame(image, number, time.monotonic())


# ---------------------------------------------------------------- shared capture


class LatestFrame:
    """One capture thread reading *source*; any number of readers share its newest frame.

    >>> shared = LatestFrame(open_source("0")).start()         # doctest: +SKIP
    >>> frame = shared.wait_newer(0, timeout=1.0)               # Frame, number >= 1
    >>> preview = shared.latest()                               # the web page, any time
    >>> shared.close()

    Only the newest frame is kept (bounded memory whatever the readers do). A
    recorded source that ends sets :attr:`ended`; a source that raises, or gives
    no frame for ``lost_after`` seconds, sets :attr:`lost` and readers waiting
    get :class:`CameraLost`.
    """

    def __init__(self, source: FrameSource, *, lost_after: float = LOST_AFTER_SECONDS,
                 clock=time.monotonic) -> None:
        self.source = source
        self.lost_after = float(lost_after)
        self._clock = clock
        self._cond = threading.Condition()
        self._frame: Frame | None = None
        self._count = 0
        self._error: BaseException | None = None
        self._ended = False
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        self._started_at = 0.0

    # -- lifecycle
    def start(self) -> LatestFrame:
        if self._thread is None:
            self._started_at = self._clock()
            self._thread = threading.Thread(target=self._run, name=f"capture {self.source.name}",
                                            daemon=True)
            self._thread.start()
        return self

    def close(self, timeout: float = 2.0) -> None:
        """Stop the capture thread and close the source."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
        try:
            self.source.close()
        finally:
            with self._cond:
                self._ended = True
                self._cond.notify_all()

    def __enter__(self) -> LatestFrame:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                image = self.source.read()
            except Exception as exc:  # any failure of the camera ends capture
                with self._cond:
                    self._error = exc
                    self._cond.notify_all()
                return
            if image is None:
                if self.source.live:
                    continue
                with self._cond:
                    self._ended = True
                    self._cond.notify_all()
                return
            with self._cond:
                self._count += 1
                self._frame = Frame(image, self._count, self._clock())
                self._cond.notify_all()

    # -- readers
    @property
    def count(self) -> int:
        """How many frames were captured so far."""
        return self._count

    @property
    def ended(self) -> bool:
        return self._ended

    @property
    def lost(self) -> str | None:
        """Why the camera counts as lost, or None while frames keep coming."""
        with self._cond:
            return self._lost_reason()

    def _lost_reason(self) -> str | None:
        if self._error is not None:
            return f"{self.source.name}: {self._error}"
        if self._ended or self._thread is None:
            return None
        last = self._frame.timestamp if self._frame is not None else self._started_at
        silent = self._clock() - last
        if silent > self.lost_after:
            return f"{self.source.name}: no frame for {silent:.1f} s"
        return None

    def latest(self) -> Frame | None:
        """The newest frame (None before the first); never blocks."""
        with self._cond:
            return self._frame

    def wait_newer(self, number: int, timeout: float | None = None) -> Frame | None:
        """The newest frame whose number is above *number*, waiting for one.

        Returns None when the source ended (or *timeout* passed) without one;
        raises :class:`CameraLost` when the camera is lost.
        """
        deadline = None if timeout is None else time.monotonic() + timeout
        with self._cond:
            while True:
                if self._frame is not None and self._frame.number > number:
                    return self._frame
                reason = self._lost_reason()
                if reason is not None:
                    raise CameraLost(reason)
                if self._ended:
                    return None
                wait = 0.1
                if deadline is not None:
                    left = deadline - time.monotonic()
                    if left <= 0:
                        return None
                    wait = min(wait, left)
                self._cond.wait(wait)
