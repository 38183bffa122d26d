"""Frame sources (issue 4, deliverable 1): Pi camera against a fake picamera2, folders,
video files, camera numbers, and the one-thread LatestFrame sharing."""

from __future__ import annotations

import importlib.util
import sys
import threading
import time
from pathlib import Path

import cv2
import numpy as np
import pytest

from vision import sources

FAKES = Path(__file__).parent / "fakes"


@pytest.fixture
def fake_picamera2(monkeypatch):
    spec = importlib.util.spec_from_file_location("picamera2", FAKES / "picamera2.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    monkeypatch.setitem(sys.modules, "picamera2", module)
    return module


def _numbered(n: int, size=(64, 48)) -> np.ndarray:
    img = np.zeros((size[1], size[0], 3), np.uint8)
    img[:, :, 1] = n * 10 % 256
    return img


def test_picamera_configures_rgb888_video_and_freezes_settled_exposure(fake_picamera2):
    naps = []
    cam = sources.open_source("picamera", size=(640, 480), sleep=naps.append)
    fake = fake_picamera2.instances[-1]
    assert fake.calls[0] == ("create_video_configuration", {"size": (640, 480), "format": "RGB888"})
    assert fake.config["use_case"] == "video"
    names = [c[0] for c in fake.calls]
    assert names.index("start") < names.index("capture_metadata") < names.index("set_controls")
    assert naps == [sources.SETTLE_SECONDS]
    frozen = fake.controls_set
    assert frozen["AeEnable"] is False and frozen["AwbEnable"] is False
    for key in ("ExposureTime", "AnalogueGain", "ColourGains"):
        assert frozen[key] == fake_picamera2.SETTLED[key]
    frame = cam.read()
    # RGB888 is already B,G,R: handed on unchanged, no colour swap
    assert frame.shape == (480, 640, 3) and frame[0, 0, 0] == 1 and frame[0, 0, 2] == 0
    cam.close()
    assert fake.calls[-2:] == [("stop",), ("close",)]


def test_picamera_missing_library_or_camera_is_a_source_error(monkeypatch, fake_picamera2):
    with pytest.raises(sources.SourceError, match="no camera 3"):
        sources.PiCamera(camera_num=3, sleep=lambda s: None)
    monkeypatch.setitem(sys.modules, "picamera2", None)
    with pytest.raises(sources.SourceError, match="picamera2") as missing:
        sources.open_source("picamera")
    # the way on without one: a USB camera, a recording, the demo
    for way in ("--source 0", "USB camera", "video file", "folder of frames",
                "twilight-companion demo"):
        assert way in str(missing.value)


def test_folder_of_frames_in_name_order(tmp_path):
    for n in (3, 1, 2, 10):
        cv2.imwrite(str(tmp_path / f"frame-{n:04d}.png"), _numbered(n))
    (tmp_path / "notes.txt").write_text("not a frame")
    src = sources.open_source(str(tmp_path))
    got = [int(f.image[0, 0, 1]) // 10 for f in sources.frames(src)]
    assert got == [1, 2, 3, 10]
    assert src.read() is None and not src.live


def test_folder_with_unreadable_frame_names_it(tmp_path):
    (tmp_path / "a.png").write_bytes(b"not a png")
    src = sources.open_source(str(tmp_path))
    with pytest.raises(sources.SourceError, match="a.png"):
        src.read()
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(sources.SourceError, match="no image frames"):
        sources.open_source(str(empty))


def test_video_file(tmp_path):
    path = tmp_path / "table.avi"
    out = cv2.VideoWriter(str(path), cv2.VideoWriter_fourcc(*"MJPG"), 10.0, (64, 48))
    for n in range(1, 6):
        out.write(_numbered(n))
    out.release()
    src = sources.open_source(str(path))
    got = [f.number for f in sources.frames(src)]
    assert got == [1, 2, 3, 4, 5]
    src.close()


def test_unknown_source_is_named():
    with pytest.raises(sources.SourceError, match="nowhere.mp4"):
        sources.open_source("nowhere.mp4")
    with pytest.raises(sources.SourceError, match="camera 97"):
        sources.open_source("97")


class _Scripted:
    """A live source giving numbered frames, then raising or going silent."""

    live = True
    name = "scripted"

    def __init__(self, frames: int, then: str):
        self.n, self.frames, self.then = 0, frames, then
        self.reads = 0
        self.closed = False
        self.go = threading.Event()

    def read(self):
        self.reads += 1
        if self.n >= self.frames:
            if self.then == "raise":
                raise RuntimeError("ribbon came loose")
            self.go.wait(0.05)
            return None
        self.n += 1
        time.sleep(0.002)
        return _numbered(self.n)

    def close(self):
        self.closed = True


def test_latest_frame_one_thread_many_readers():
    src = _Scripted(40, then="silent")
    before = threading.active_count()
    with sources.LatestFrame(src, lost_after=5.0) as shared:
        assert threading.active_count() == before + 1
        seen = {i: [] for i in range(3)}

        def reader(i):
            number = 0
            while number < 40:
                frame = shared.wait_newer(number, timeout=2.0)
                assert frame is not None
                assert frame.number > number
                number = frame.number
                seen[i].append(number)

        threads = [threading.Thread(target=reader, args=(i,)) for i in seen]
        for t in threads:
            t.start()
        for t in threads:
            t.join(5)
        assert all(s[-1] == 40 and s == sorted(s) for s in seen.values())
        frame = shared.latest()
        assert frame.number == 40 and int(frame.image[0, 0, 1]) == 400 % 256
        assert shared.lost is None
    assert src.closed


def test_latest_frame_reports_camera_lost_when_reading_raises():
    shared = sources.LatestFrame(_Scripted(3, then="raise")).start()
    with pytest.raises(sources.CameraLost, match="ribbon"):
        for _ in range(100):
            shared.wait_newer(shared.count, timeout=0.5)
    assert "ribbon" in shared.lost
    shared.close()


def test_latest_frame_reports_camera_lost_when_frames_stop():
    now = [0.0]
    src = _Scripted(2, then="silent")
    shared = sources.LatestFrame(src, lost_after=3.0, clock=lambda: now[0]).start()
    assert shared.wait_newer(1, timeout=1.0).number == 2
    assert shared.lost is None
    now[0] = 10.0
    assert "no frame" in shared.lost
    with pytest.raises(sources.CameraLost):
        shared.wait_newer(2, timeout=1.0)
    shared.close()


def test_latest_frame_recorded_source_ends(tmp_path):
    for n in range(1, 4):
        cv2.imwrite(str(tmp_path / f"{n}.png"), _numbered(n))
    shared = sources.LatestFrame(sources.open_source(str(tmp_path))).start()
    last = 0
    while (frame := shared.wait_newer(last, timeout=2.0)) is not None:
        last = frame.number
    assert shared.ended and shared.lost is None and last == 3
    shared.close()


def test_demo_source_is_the_simulated_table_behind_latest_frame():
    from companion.app import open_camera

    src = open_camera("demo", size=(320, 240), seed=1, hands=1)
    assert src.live and src.name == "demo"
    with sources.LatestFrame(src) as shared:
        first = shared.wait_newer(0, timeout=10.0)
        second = shared.wait_newer(first.number, timeout=10.0)
    assert first.image.shape == (240, 320, 3) and first.image.dtype == np.uint8
    assert second.number > first.number and second.timestamp >= first.timestamp
