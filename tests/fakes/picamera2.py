"""A stand-in for the ``picamera2`` package with its real API surface (no camera here).

Only what the companion uses, with picamera2's own signatures: ``Picamera2(camera_num=0)``,
``create_video_configuration(main=..., ...)``, ``configure``, ``start``, ``capture_array(name)``,
``capture_metadata()``, ``set_controls(dict)``, ``stop``, ``close``. An RGB888 main stream
gives (height, width, 3) arrays in B,G,R order, as on the Pi. Every call is recorded in
``calls``; ``frame_fn(n)`` makes frame *n*; ``fail_after`` makes capture raise, as a camera
whose ribbon came loose does.
"""

from __future__ import annotations

import numpy as np

#: Metadata the fake's automatic exposure "settles" on.
SETTLED = {"ExposureTime": 16667, "AnalogueGain": 2.5, "ColourGains": (1.8, 1.5),
           "Lux": 310.0}

instances: list[Picamera2] = []
#: Camera numbers that exist (picamera2 raises IndexError for others).
cameras = [0]


class Picamera2:
    def __init__(self, camera_num: int = 0, tuning=None):
        if camera_num not in cameras:
            raise IndexError("list index out of range")
        self.camera_num = camera_num
        self.calls: list[tuple] = []
        self.config: dict | None = None
        self.started = False
        self.closed = False
        self.controls_set: dict = {}
        self.frames_captured = 0
        self.frame_fn = None
        self.fail_after: int | None = None
        instances.append(self)

    def create_video_configuration(self, main=None, lores=None, raw=None, transform=None,
                                   colour_space=None, buffer_count=6, controls=None,
                                   display="main", encode="main", queue=True):
        main = {"format": "XBGR8888", "size": (1280, 720), **(main or {})}
        self.calls.append(("create_video_configuration", dict(main)))
        return {"use_case": "video", "main": main, "lores": lores, "raw": raw,
                "buffer_count": buffer_count, "controls": dict(controls or {})}

    def configure(self, camera_config=None):
        self.calls.append(("configure", camera_config))
        self.config = camera_config

    def start(self, config=None, show_preview=False):
        if config is not None:
            self.configure(config)
        if self.config is None:
            raise RuntimeError("Camera has not been configured")
        self.calls.append(("start",))
        self.started = True

    def capture_array(self, name="main", wait=None, signal_function=None):
        if not self.started:
            raise RuntimeError("Camera is not running")
        if self.fail_after is not None and self.frames_captured >= self.fail_after:
            raise RuntimeError("Camera frontend has timed out!")
        stream = self.config[name]
        width, height = stream["size"]
        self.frames_captured += 1
        if self.frame_fn is not None:
            return self.frame_fn(self.frames_captured)
        channels = 3 if stream["format"] in ("RGB888", "BGR888") else 4
        frame = np.zeros((height, width, channels), np.uint8)
        frame[..., 0] = self.frames_captured % 256  # blue first: RGB888 is B,G,R in memory
        return frame

    def capture_metadata(self, wait=None, signal_function=None):
        self.calls.append(("capture_metadata",))
        meta = dict(SETTLED)
        meta.update({k: v for k, v in self.controls_set.items() if k in SETTLED})
        meta["AeLocked"] = True
        return meta

    def set_controls(self, controls):
        self.calls.append(("set_controls", dict(controls)))
        self.controls_set.update(controls)

    def stop(self):
        self.calls.append(("stop",))
        self.started = False

    def close(self):
        self.calls.append(("close",))
        self.closed = True

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
