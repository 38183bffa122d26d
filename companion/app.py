"""The one module that wires camera, tracker, game log, LEDs and web together.

``watch`` (C7), ``serve`` and ``demo`` (C9) start here. Everything the camera
sees goes through the tracker (:mod:`vision.tracker`) into the game log's
checked calls, exactly like a correction from the web page or a button press.
The LEDs and the web page only follow the game log.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from companion.config import Config, ConfigError, load_config
from companion.console import ConsoleReporter
from companion.core.gamelog import GameLog, LogError, data_dir
from companion.core.rules import RuleError
from companion.sdnotify import notify, watchdog_interval

logger = logging.getLogger("twilight")

# numpy's threaded BLAS is several times slower than one thread for recognition's
# small matrix products on a busy Pi; set before numpy is first imported (lazily).
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")

#: Seconds between the watch loop's looks at a live camera when no frame came.
FRAME_WAIT_S = 0.5
#: Seconds of byte-identical frames after which a live camera counts as frozen
#: (a working sensor never gives two equal pictures: it has noise).
FROZEN_AFTER_S = 3.0
#: A picture whose brightest sampled pixel is below this is black (lens covered, fault).
BLACK_LEVEL = 24
#: Frames of one new size in a row after which a camera's new size is taken as real.
NEW_SIZE_FRAMES = 30
#: Unreadable frames of a recording in a row after which it counts as ended.
MAX_BAD_FRAMES = 100
#: Frames between hand-backs of freed memory to the system (10 fps: a minute).
TRIM_EVERY_FRAMES = 600


def release_free_memory() -> None:
    """Give memory freed by frames and recognition back to the system (glibc's
    ``malloc_trim``; nothing elsewhere). Frame-sized buffers freed out of order leave
    holes that glibc keeps: without this the resident size creeps up over hours."""
    global _malloc_trim
    if _malloc_trim is None:
        try:
            import ctypes

            _malloc_trim = ctypes.CDLL("libc.so.6").malloc_trim
        except (OSError, AttributeError):
            _malloc_trim = False
    if _malloc_trim:
        _malloc_trim(0)


_malloc_trim: Any = None


class FrameCheck:
    """Frames not worth reading: corrupt (not a B,G,R picture of the camera's size),
    black, or frozen. Nothing is played from such frames; the camera counts as lost.

    >>> import numpy as np
    >>> check = FrameCheck()
    >>> check.problem(np.zeros((90, 160, 3), np.uint8), 0.0)
    'black picture (lens covered or camera fault)'
    """

    def __init__(self, frozen_after: float = FROZEN_AFTER_S) -> None:
        self.frozen_after = frozen_after
        self.shape: tuple[int, ...] | None = None
        self._other_shape: tuple[int, ...] | None = None
        self._other_count = 0
        self._sample: Any = None
        self._same_since: float | None = None

    def problem(self, image: Any, now: float) -> str | None:
        import numpy as np

        if (not isinstance(image, np.ndarray) or image.dtype != np.uint8 or image.ndim != 3
                or image.shape[2] != 3 or min(image.shape[:2]) < 16):
            kind = getattr(image, "dtype", type(image).__name__)
            return f"corrupt frame ({kind}, shape {getattr(image, 'shape', None)})"
        if self.shape is None:
            self.shape = image.shape
        elif image.shape != self.shape:
            if image.shape == self._other_shape:
                self._other_count += 1
            else:
                self._other_shape, self._other_count = image.shape, 1
            if self._other_count < NEW_SIZE_FRAMES:
                h, w = image.shape[:2]
                return f"corrupt frame ({w}x{h}, expected {self.shape[1]}x{self.shape[0]})"
            self.shape = image.shape  # the camera really changed its size
        self._other_shape, self._other_count = None, 0
        sample = image[::8, ::8]
        if int(sample.max()) < BLACK_LEVEL:
            self._sample, self._same_since = None, None
            return "black picture (lens covered or camera fault)"
        if self._sample is not None and np.array_equal(sample, self._sample):
            since = self._same_since if self._same_since is not None else now
            if now - since >= self.frozen_after:
                return f"frozen picture (unchanged for {now - since:.0f} s)"
            return None
        self._sample, self._same_since = sample.copy(), now
        return None


def open_camera(spec: str, size: tuple[int, int], **demo_options: Any) -> Any:
    """The frame source ``--source`` names (C7): ``demo`` is the table simulator
    (``demo_options`` go to it), anything else a real camera or a recording."""
    if str(spec).strip() == "demo":
        from vision.sim.camera import DemoCamera

        return DemoCamera(size, **demo_options)
    from vision.sources import open_source

    return open_source(spec, size)


@dataclass
class Options:
    source: str
    deck: str | None = None
    mirror: bool = False
    mode: str | None = None
    soloist: str | None = None
    events: str | None = None
    web: bool = False
    host: str = "0.0.0.0"
    port: int = 8000
    data: str | None = None
    demo: bool = False
    hands: int = 0
    seed: int | None = None
    speed: float = 1.0
    #: The simulated table's pace: "human" (a live camera at 10 fps) or "frames"
    #: (table time moves on per frame recognised: every frame, as fast as they go).
    pace: str = "human"
    size: tuple[int, int] = (1280, 720)


class EventFile:
    """The C7 events file: one JSON line per event, flushed as it happens (from the
    watch loop, and from the web page's thread when a gap is named there)."""

    def __init__(self, path: str | None) -> None:
        self._fp: IO[str] | None = open(path, "a", encoding="utf-8") if path else None
        self._lock = threading.Lock()

    def write(self, event: dict[str, Any]) -> None:
        with self._lock:
            if self._fp is not None:
                self._fp.write(json.dumps(event) + "\n")
                self._fp.flush()

    def close(self) -> None:
        with self._lock:
            if self._fp is not None:
                self._fp.close()
                self._fp = None


class GapEvents:
    """Writes the C7 events of gaps, whoever changes the log: a ``gap`` event when a
    card that cannot be read is laid in turn (seat, trick, index of the play), and when
    it is named — read at last by the camera, or named on the page — the ``play``
    (with ``gap``: its index); a trick a gap completes is a ``trick`` event with
    ``winner`` null and ``open`` true; a hand over with a gap open is a ``hand`` event
    with ``provisional`` true, and again with the exact score once the last gap of the
    hand is named. ``frame()`` gives the frame to label events with."""

    def __init__(self, events: EventFile, frame: Any) -> None:
        self.events = events
        self.frame = frame

    def __call__(self, event: dict[str, Any], snap: dict[str, Any]) -> None:
        kind = event["type"]
        hand = snap["hand"]
        if kind == "gap":
            index = len(hand["plays"])
            gap = next((g for g in hand["gaps"] if g["index"] == index), None)
            self.events.write({"type": "gap", "frame": self.frame(),
                               "seat": event["data"].get("seat"),
                               "trick": gap["trick"] if gap else (index - 1) // 4 + 1,
                               "index": index})
            if index % 4 == 0:
                self.events.write({"type": "trick", "frame": self.frame(), "winner": None,
                                   "open": True})
            if hand["complete"]:
                self.events.write({"type": "hand", "frame": self.frame(),
                                   "score": hand["score"], "provisional": True})
        elif kind == "correct":
            index = event["data"].get("index")
            was = self.open_before
            if index in was:
                play = hand["plays"][index - 1]
                self.events.write({"type": "play", "frame": self.frame(), "seat": play["seat"],
                                   "card": play["card"], "gap": index,
                                   "source": event["data"].get("source")})
                if hand["complete"] and not hand["provisional"]:
                    self.events.write({"type": "hand", "frame": self.frame(),
                                       "score": hand["score"]})
        self.open_before = {g["index"] for g in hand.get("gaps") or ()}

    open_before: set[int] = set()


class Companion:
    """Frames → tracker → game log; LEDs and web follow the log."""

    def __init__(self, opts: Options, config: Config, log: GameLog) -> None:
        self.opts = opts
        self.config = config
        self.log = log
        self.stop = threading.Event()
        self.events = EventFile(opts.events)
        self.frame_no = 0  # the frame the tracker looked at last (C7 numbering)
        gaps = GapEvents(self.events, lambda: self.frame_no)
        gaps.open_before = {g["index"] for g in log.snapshot()["hand"].get("gaps") or ()}
        self._unsubscribe = log.subscribe(gaps)
        self.hardware: Any = None
        self.server: Any = None
        self.capture: Any = None
        self.source: Any = None
        self.tracker: Any = None
        self.frames_seen = 0
        self.check = FrameCheck()
        self._feed_errors = 0
        self._feed_failing = False
        self.demo_table: Any = None

    # -- parts ------------------------------------------------------------------------------
    def start_camera(self) -> None:
        from vision.sources import LatestFrame

        options: dict[str, Any] = {}
        resume = None
        if self.opts.demo:
            from companion.demo_table import resumable

            resume = resumable(self.log.snapshot())
            options = {"hands": self.opts.hands, "seed": self.opts.seed,
                       "speed": self.opts.speed, "realtime": self.opts.pace != "frames"}
            if resume is not None:
                options["resume"] = resume  # the simulated table goes on with that hand
        self.source = open_camera(self.opts.source, self.opts.size, **options)
        if self.opts.demo:
            from companion.demo_table import DemoTable

            self.demo_table = DemoTable(self.log, self.source.table, resumed=resume is not None)
        if self.source.live:
            self.capture = LatestFrame(self.source).start()

    def start_tracker(self) -> None:
        from vision.tracker import TableTracker

        self.tracker = TableTracker(profile=self.opts.deck, mirror=self.opts.mirror)
        # building a deck profile (the first start: the built-in deck is rendered)
        # frees tens of MB that would otherwise stay resident for the whole run
        release_free_memory()
        self.log.set_status("recognition", "ok")

    def start_leds(self) -> None:
        try:
            from hardware.config import HardwareConfig
            from hardware.leds import start

            tables = dict(self.config.hardware)
            if self.opts.demo:  # simulated LEDs, shown on the page
                tables["leds"] = {**tables.get("leds", {}), "factory": "mock"}
            self.hardware = start(self.log, HardwareConfig.from_dict(tables))
            name = self.hardware.factory_name or "none"
            self.log.set_status("leds_driver", name)
        except Exception as exc:  # LEDs are a help, never a reason to stop scoring
            logger.warning("seat LEDs unavailable: %s", exc)
            self.log.set_status("leds_driver", f"unavailable: {exc}")

    def start_web(self) -> None:
        import web

        cfg: dict[str, Any] = {"DATA_DIR": str(self.log.path.parent)}
        if self.config.web.pin:
            cfg["TABLE_PIN"] = self.config.web.pin
        from vision.cardcrop import crop_card
        from vision.profile import enrol

        frames = self.capture
        leds = self.hardware.lights if self.hardware is not None else None
        app = web.create_app(self.log, config=cfg, frames=frames, leds=leds,
                             annotate=self._annotate if frames is not None else None,
                             crop_card=crop_card, enrol_deck=enrol)
        app.add_url_rule("/healthz", "healthz", self._healthz)
        self.server = web.make_server(app, self.opts.host, self.opts.port,
                                      threads=self.config.web.threads)
        port = self.server.effective_port
        host = self.opts.host
        app.config["PAGE_URL"] = web.page_url(host, port)  # (the setup page's QR code)
        # the address told before the page answers (the socket listens already): whoever
        # the page answers could read where to open it, and the setup page has its QR code
        print(f"web: listening on {host}:{port}", flush=True)
        web.print_banner(app.config["PAGE_URL"], app.config["TABLE_PIN"])
        thread = threading.Thread(target=self._serve, name="web", daemon=True)
        thread.start()

    def _healthz(self) -> Any:
        from flask import jsonify

        health = self.health()
        ok = health["camera"] in ("ok", "ended") and health["log"] == "ok"
        return jsonify({"ok": ok, **health}), (200 if ok else 503)

    def _serve(self) -> None:
        try:
            self.server.run()
        except Exception as exc:  # closing the server ends run() with an error
            if not self.stop.is_set():
                logger.error("web server stopped: %s", exc)

    def _annotate(self, frame: Any) -> Any:
        if self.tracker is None:
            return frame
        return self.tracker.annotate(frame)

    def health(self) -> dict[str, Any]:
        """What /healthz reports: camera, recognition, LEDs and the game log."""
        self.log.check_files()
        camera = "ok"
        status = self.log.snapshot()["status"]
        if self.capture is not None:
            lost = self.capture.lost
            camera = f"lost: {lost}" if lost else ("ended" if self.capture.ended else "ok")
        elif self.source is None:
            camera = "none"
        if status.get("camera") == "lost" and not camera.startswith("lost"):
            camera = f"lost: {status.get('camera_problem') or 'no good frames'}"
        log_status = str(status.get("log", "ok"))
        leds = "none"
        if self.hardware is not None and self.hardware.lights is not None:
            leds = "simulated" if self.hardware.lights.simulated else "ok"
        return {"camera": camera, "frames": self.frames_seen,
                "recognition": str(status.get("recognition", "ok"))
                if self.tracker is not None else "none",
                "leds": leds, "log": log_status}

    # -- the watch loop -----------------------------------------------------------------------
    def frames(self) -> Any:
        """Every frame of a recording, or the newest frames of a live camera."""
        from vision.sources import CameraLost, Frame

        if self.capture is None:
            yield from self._recorded_frames()
            return
        number = 0
        base = 0  # frames before the camera was reopened: numbers keep counting on
        interval = watchdog_interval()
        last_ping = 0.0
        while not self.stop.is_set():
            try:
                frame = self.capture.wait_newer(number, timeout=FRAME_WAIT_S)
            except CameraLost as exc:
                self._camera_lost(str(exc))
                if self.stop.wait(1.0):
                    return
                self._restart_camera()
                base += number
                number = 0  # a reopened camera counts its frames from 1 again
                continue
            if frame is None:
                if self.capture.ended:
                    return
                lost = self.capture.lost
                if lost:
                    self._camera_lost(lost)
                continue
            number = frame.number
            problem = self.check.problem(frame.image, frame.timestamp)
            now = time.monotonic()
            if interval and now - last_ping > interval / 2 and not (
                    problem and problem.startswith("frozen")):
                # fed only while frames flow (black ones too: a covered lens is no reason
                # to restart the service, a stuck camera is)
                notify("WATCHDOG=1")
                last_ping = now
            if problem:
                self._camera_lost(problem)
                continue
            self._camera_ok()
            yield Frame(frame.image, base + frame.number, frame.timestamp) if base else frame

    def _recorded_frames(self) -> Any:
        """Every frame of a recording; unreadable or broken frames are skipped."""
        from vision.sources import Frame

        number = bad = 0
        check = FrameCheck(frozen_after=float("inf"))  # a recording may repeat a frame
        while not self.stop.is_set():
            try:
                image = self.source.read()
            except Exception as exc:  # one unreadable file must not end the watch
                image, problem = None, f"unreadable frame: {exc}"
            else:
                if image is None:
                    return
                number += 1
                problem = check.problem(image, time.monotonic())
            if problem:
                bad += 1
                self._camera_lost(problem)
                if bad >= MAX_BAD_FRAMES:
                    logger.error("camera: %d bad frames in a row; the recording ends here", bad)
                    return
                continue
            bad = 0
            self._camera_ok()
            yield Frame(image, number, time.monotonic())

    def _camera_lost(self, reason: str) -> None:
        """Page and LEDs show the camera lost (status ``lost``, the reason beside it);
        the journal gets one line per loss, not one per frame."""
        if self.log.snapshot()["status"].get("camera") != "lost":
            logger.warning("camera lost: %s", reason)
        self.log.set_status("camera_problem", reason)
        self.log.set_status("camera", "lost")

    def _camera_ok(self) -> None:
        if self.log.snapshot()["status"].get("camera") == "lost":
            logger.info("camera: frames again")
            self.log.set_status("camera_problem", None)
        self.log.set_status("camera", "ok")

    def _restart_camera(self) -> None:
        from vision.sources import LatestFrame, SourceError

        try:
            self.capture.close()
        except Exception:
            pass
        self.check = FrameCheck(self.check.frozen_after)
        try:
            self.source = open_camera(self.opts.source, self.opts.size)
            self.capture = LatestFrame(self.source).start()
        except (SourceError, OSError) as exc:
            logger.warning("camera: cannot reopen %s: %s", self.opts.source, exc)

    def expect(self) -> Any:
        from vision.tracker import Expectation

        return Expectation.from_snapshot(self.log.snapshot())

    def watch(self) -> None:
        from vision.tracker import Pace

        # the tracker looks at the table at its own pace (a 30 fps camera: every third
        # frame); frame numbers still count every frame
        pace = Pace(getattr(self.source, "fps", None),
                    live=bool(getattr(self.source, "live", False)))
        for frame in self.frames():
            if self.stop.is_set():
                break
            self.frames_seen += 1
            if self.frames_seen % TRIM_EVERY_FRAMES == 0:
                release_free_memory()
            # C7 frame numbers count from 0, as the frame files of a recording do
            if self.demo_table is not None:
                self.demo_table.step()
            if self.log.unwritten:
                self.log.flush()  # the disk may take the kept events again
            if not pace.due(frame.timestamp):
                continue
            self.frame_no = frame.number - 1
            try:
                self.tracker.feed(frame.number - 1, frame.image, self.expect, self.observe)
                if self._feed_failing:
                    self._feed_failing = False
                    self.log.set_status("recognition", "ok")
            except Exception as exc:  # one frame the tracker chokes on must not end scoring
                self._feed_errors += 1
                self._feed_failing = True
                if self._feed_errors in (1, 10, 100) or self._feed_errors % 1000 == 0:
                    logger.exception("recognition failed on frame %d (%d so far)",
                                     frame.number - 1, self._feed_errors)
                self.log.set_status("recognition", f"error: {exc}")
            self._name_by_elimination(frame.number - 1)

    def observe(self, obs: Any) -> None:
        """Put one tracker observation into the game log and the events file. (A write
        the disk refuses is kept by the log and written later: nothing seen is lost.)"""
        try:
            self._observe(obs)
        except LogError as exc:  # the log itself is gone: shown, nothing half-written
            logger.error("game log: %s", exc)
            self.log.set_status("log", f"error: {exc}")
            self.events.write({"type": "warning", "frame": obs.frame, "message": str(exc)})

    def _observe(self, obs: Any) -> None:
        if obs.kind == "setup":
            snap = self.log.snapshot()
            if not snap["hand"]["plays"] or snap["hand"]["complete"]:
                try:
                    if snap["hand"]["complete"]:
                        return  # the next hand's layout follows the rules (R8)
                    self.log.setup(moon_seats=list(obs.moon_seats))
                except RuleError as exc:
                    self.events.write({"type": "warning", "frame": obs.frame,
                                       "message": str(exc)})
            return
        if obs.kind == "warning":
            self.events.write({"type": "warning", "frame": obs.frame, "message": obs.message})
            return
        if obs.kind == "gap":
            try:
                self.log.gap(obs.seat, source="camera", frame=obs.frame)
            except RuleError as exc:
                self.events.write({"type": "warning", "frame": obs.frame,
                                   "message": f"{obs.message} ({exc})"})
            return
        if obs.kind == "fill":
            try:
                self.log.correct(obs.index, obs.card, source="camera")
            except RuleError as exc:
                self.events.write({"type": "warning", "frame": obs.frame, "message": str(exc)})
            return
        self._play(obs)

    def _name_by_elimination(self, frame: int) -> None:
        """Name every open gap that only one card can fill, as the players would: the
        rules leave no other card for it (R3, R9: at the end of a hand, the one card of
        the gap's cult not played). Named with ``source`` "rules"; the table can still
        correct it on the page. (The camera may yet read the card: it is then played
        already, no event.) Looked at after every frame, so a gap left alone by one
        the table named on the page is named too."""
        while True:
            gaps = self.log.snapshot()["hand"].get("gaps") or ()
            sure = next((g for g in gaps if len(g["choices"]) == 1), None)
            if sure is None:
                return
            try:
                self.log.correct(sure["index"], sure["choices"][0], source="rules")
            except RuleError as exc:  # (cannot happen for a choice the rules gave)
                self.events.write({"type": "warning", "frame": frame, "message": str(exc)})
                return
            except LogError as exc:  # the log itself is gone: shown (see observe)
                self.log.set_status("log", f"error: {exc}")
                return

    def _play(self, obs: Any) -> None:
        """A card the camera read at a seat, given to the rules: a ``play`` (and a
        ``trick`` and ``hand`` event where it ends one), or a refusal (a warning)."""
        before = self.log.snapshot()
        try:
            snap = self.log.play(obs.seat, obs.card, source="camera", frame=obs.frame)
        except RuleError as exc:
            message = str(exc)
            self.log.refuse(obs.seat, obs.card, message, frame=obs.frame)
            self.events.write({"type": "warning", "frame": obs.frame, "message": message})
            return
        self.events.write({"type": "play", "frame": obs.frame, "seat": obs.seat,
                           "card": obs.card})
        hand = snap["hand"]
        tricks = hand["tricks"]
        if tricks and len(tricks[-1]["plays"]) == 4 and (
            before["hand"]["complete"] or len(before["hand"]["plays"]) < len(hand["plays"])
        ):
            trick = {"type": "trick", "frame": obs.frame, "winner": tricks[-1]["winner"]}
            if tricks[-1].get("open"):
                trick["open"] = True  # a gap in it: who took it is not known yet
            self.events.write(trick)
        if hand["complete"]:
            event = {"type": "hand", "frame": obs.frame, "score": hand["score"]}
            if hand["provisional"]:
                event["provisional"] = True
            self.events.write(event)

    # -- lifecycle ----------------------------------------------------------------------------
    def close(self) -> None:
        self.stop.set()
        if self.demo_table is not None:
            print(f"demo: {self.demo_table.fixes} table fixes (cards the simulated players "
                  "laid, corrected or took back for the camera)", flush=True)
        if self.capture is not None:
            self.capture.close()
        elif self.source is not None:
            self.source.close()
        if self.server is not None:
            from web import stop_server

            try:
                stop_server(self.server, timeout=3.0)
            except Exception as exc:
                logger.warning("web server: %s while stopping", exc)
        if self.hardware is not None:
            self.hardware.close()
        self._unsubscribe()
        self.events.close()


def _prepare_match(log: GameLog, opts: Options, config: Config) -> None:
    """Start a new match when the mode asked for is not the one being played."""
    mode = opts.mode or None
    if mode is None:
        return
    snap = log.snapshot()
    match = snap["match"]
    soloist = opts.soloist or config.game.soloist
    if match["mode"] == mode and (mode == "four" or snap["hand"]["soloist"] == soloist
                                  or snap["hand"]["plays"] or match["hands"]):
        return
    if match["hands"] or snap["hand"]["plays"]:
        log.new_match(mode=mode, goal=match["goal"],
                      soloist=soloist if mode == "three" else None)
    else:
        log.set_mode(mode, soloist=soloist if mode == "three" else None)


def _run(opts: Options, config: Config, *, serve_web: bool, console: bool) -> int:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s: %(message)s",
                        stream=sys.stdout)
    folder = opts.data or config.data_dir or None
    folder = folder or (str(data_dir() / "demo") if opts.demo else None)
    try:
        log = GameLog.open(folder)
    except LogError as exc:
        print(f"twilight-companion: {exc}", file=sys.stderr)
        return 1
    if log.skipped:
        print(f"warning: {log.skipped} events in the game log no longer apply", flush=True)
    try:
        _prepare_match(log, opts, config)
    except RuleError as exc:
        print(f"twilight-companion: {exc}", file=sys.stderr)
        log.close()
        return 2
    app = Companion(opts, config, log)
    if console:
        log.subscribe(ConsoleReporter())

    def _stop(signum: int, frame: Any) -> None:
        app.stop.set()

    old = {s: signal.signal(s, _stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        try:
            app.start_camera()
        except Exception as exc:
            print(f"twilight-companion: camera {opts.source!r}: {exc}", file=sys.stderr)
            return 2
        app.start_tracker()
        if serve_web:
            app.start_leds()
            try:
                app.start_web()
            except (OSError, ValueError) as exc:  # port taken, no such address, data folder
                reason = getattr(exc, "strerror", None) or str(exc)
                where = getattr(exc, "filename", None)
                print(f"twilight-companion: cannot serve the page on {opts.host}:{opts.port}: "
                      f"{reason}{f' ({where})' if where else ''}", file=sys.stderr)
                return 1
        print(f"game log: {log.path}", flush=True)
        notify("READY=1", "STATUS=watching the table")
        app.watch()
        if serve_web and not app.stop.is_set() and not (opts.demo and opts.pace == "frames"):
            # a recording ended, or the demo's hands are played: the page stays up and
            # shows the result until asked to stop (a demo paced by frames just ends)
            log.set_status("camera", "ended")  # the page and LEDs: nothing more will come
            if opts.demo:
                played = f"{opts.hands} hand{'s' if opts.hands != 1 else ''}"
                print(f"demo: {played} played; the page shows the result until Ctrl-C",
                      flush=True)
            app.stop.wait()
        return 0
    finally:
        notify("STOPPING=1")
        app.close()
        log.close()
        for s, handler in old.items():
            signal.signal(s, handler)


def _config(args: argparse.Namespace) -> Config | None:
    try:
        return load_config(getattr(args, "config", None))
    except ConfigError as exc:
        print(f"twilight-companion: {exc}", file=sys.stderr)
        return None


def _port(args: argparse.Namespace, config: Config) -> int:
    """``--port`` over the config's; 0 is a port too (any free one, printed at start)."""
    return config.web.port if args.port is None else args.port


def run_watch(args: argparse.Namespace) -> int:
    config = _config(args)
    if config is None:
        return 2
    if args.mode == "three" and not args.soloist:
        print("twilight-companion watch: --mode three needs --soloist SEAT", file=sys.stderr)
        return 2
    if args.soloist and args.soloist not in ("north", "east", "south", "west"):
        print(f"twilight-companion watch: --soloist {args.soloist!r} is not a seat",
              file=sys.stderr)
        return 2
    opts = Options(source=args.source, deck=args.deck or config.deck_profile or None,
                   mirror=args.mirror or config.camera.mirror, mode=args.mode,
                   soloist=args.soloist, events=args.events, web=args.web,
                   host=args.host or config.web.host, port=_port(args, config),
                   data=args.data, size=(config.camera.width, config.camera.height))
    try:
        Path(args.events).parent.mkdir(parents=True, exist_ok=True)
        open(args.events, "a").close()
    except OSError as exc:
        print(f"twilight-companion watch: cannot write {args.events}: {exc.strerror}",
              file=sys.stderr)
        return 2
    return _run(opts, config, serve_web=args.web, console=False)


def run_serve(args: argparse.Namespace) -> int:
    config = _config(args)
    if config is None:
        return 2
    opts = Options(source=getattr(args, "source", None) or config.camera.source,
                   deck=config.deck_profile or None,
                   mirror=config.camera.mirror, mode=config.game.mode,
                   soloist=config.game.soloist,
                   host=args.host or config.web.host, port=_port(args, config),
                   data=args.data, size=(config.camera.width, config.camera.height))
    return _run(opts, config, serve_web=True, console=True)


def run_demo(args: argparse.Namespace) -> int:
    config = _config(args)
    if config is None:
        return 2
    opts = Options(source="demo", deck=None, mirror=False, mode=None,
                   host=args.host or "127.0.0.1", port=_port(args, config),
                   data=args.data, demo=True, hands=args.hands, seed=args.seed,
                   speed=args.speed, pace=getattr(args, "pace", "human"),
                   size=(config.camera.width, config.camera.height))
    os.environ.setdefault("GPIOZERO_PIN_FACTORY", "mock")
    return _run(opts, config, serve_web=True, console=True)
