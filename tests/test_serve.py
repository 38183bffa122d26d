"""``twilight-companion serve`` as the Pi runs it (issue 8, C9): a real subprocess with a
recorded hand as camera, a real game log in a temporary data folder, real waitress on
a free loopback port. Plays appear in /api/state, /healthz reports every part,
SIGTERM stops cleanly and a restart continues the hand; the bind address is the
configured one and is shown."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest
from serve_helpers import LOOPBACK, Serve, free_port, logged_plays, recording, write_config


@pytest.fixture(scope="session")
def hand(tmp_path_factory):
    return recording(tmp_path_factory)


def plays_of(state) -> list[tuple[str, str]]:
    return [(p["seat"], p["card"]) for p in state["hand"]["plays"]]


def wait_for_plays(serve: Serve, count: int, timeout: float = 60.0) -> list[tuple[str, str]]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        plays = plays_of(serve.state())
        if len(plays) >= count:
            return plays
        assert serve.proc.poll() is None, serve.output()
        time.sleep(0.1)
    raise AssertionError(f"fewer than {count} plays in {timeout} s:\n{serve.output()}")


def listening_addresses(port: int) -> set[str]:
    """Local addresses with a listening TCP socket on ``port`` (from /proc/net/tcp*)."""
    found = set()
    for name, width in (("/proc/net/tcp", 8), ("/proc/net/tcp6", 32)):
        try:
            lines = Path(name).read_text().splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            address, port_hex = fields[1].split(":")
            if int(port_hex, 16) == port and fields[3] == "0A":  # LISTEN
                if width == 8:
                    found.add(socket.inet_ntop(socket.AF_INET,
                                               bytes.fromhex(address)[::-1]))
                else:
                    found.add(address)
    return found


@pytest.mark.slow
def test_serve_scores_a_recording_stops_on_sigterm_and_resumes(tmp_path, hand):
    data = tmp_path / "data"
    config = write_config(tmp_path / "serve.toml", hand)
    with Serve(data, config) as serve:
        serve.wait_ready()
        health = serve.get("/healthz")
        assert health.status == 200, health.body
        body = health.json()
        assert {"camera", "recognition", "leds", "log", "frames", "ok"} <= set(body)
        assert body["recognition"] == "ok" and body["log"] == "ok" and body["ok"] is True
        assert body["leds"] in ("simulated", "ok")
        before = wait_for_plays(serve, 6)
        assert serve.stop() == 0  # SIGTERM: clean stop, status 0
        out = serve.output()
    assert "Traceback" not in out
    on_disk, integrity, _ = logged_plays(data)
    assert integrity == "ok" and on_disk[: len(before)] == before
    # the journal is not flooded: a few lines for a whole hand's frames
    assert len(out.splitlines()) < 120, out
    assert f"web: listening on {LOOPBACK}:" in out

    with Serve(data, config) as serve:
        serve.wait_ready()
        resumed = plays_of(serve.state())
        assert resumed[: len(on_disk)] == on_disk  # the hand continues where it was
        more = wait_for_plays(serve, len(on_disk) + 2)
        assert more[: len(on_disk)] == on_disk and len(set(more)) == len(more)
        assert serve.stop() == 0


def test_bind_address_is_the_configured_one_and_shown(tmp_path, hand):
    data = tmp_path / "data"
    config = write_config(tmp_path / "serve.toml", hand)
    port = free_port()
    with Serve(data, config, port=port) as serve:
        serve.wait_ready()
        assert listening_addresses(port) == {LOOPBACK}  # not every interface
        out = serve.output()
        assert f"web: listening on {LOOPBACK}:{port}" in out
        assert f"http://{LOOPBACK}:{port}/" in out  # the address phones should open
        assert serve.stop() == 0


def test_healthz_reports_a_camera_that_cannot_be_opened(tmp_path):
    config = write_config(tmp_path / "serve.toml", tmp_path / "no-such-recording")
    with Serve(tmp_path / "data", config) as serve:
        rc = serve.proc.wait(30)
        out = serve.output()
    assert rc == 2
    assert "camera" in out and "no-such-recording" in out and "Traceback" not in out


def test_a_taken_port_is_a_clear_error(tmp_path, hand):
    config = write_config(tmp_path / "serve.toml", hand)
    with socket.socket() as taken:
        taken.bind((LOOPBACK, 0))
        taken.listen()
        port = taken.getsockname()[1]
        with Serve(tmp_path / "data", config, port=port) as serve:
            rc = serve.proc.wait(30)
            out = serve.output()
    assert rc == 1 and "Traceback" not in out
    assert f"cannot serve the page on {LOOPBACK}:{port}: Address already in use" in out


def test_the_builtin_profile_lets_its_drawn_faces_go(tmp_path, monkeypatch):
    """The first start draws the built-in deck for its profile: those drawings (tens of
    MB) must not stay resident for the whole run (issue 8: ≤ 150 MB)."""
    from vision import deck_art, profile

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(profile, "_BUILTIN", {})
    built = profile.builtin_profile(0)
    assert deck_art._render_cached.cache_info().currsize == 0
    assert any(tmp_path.iterdir())  # cached: later starts read it
    monkeypatch.setattr(profile, "_BUILTIN", {})
    assert profile.builtin_profile(0).name == built.name


def test_freed_memory_goes_back_to_the_system_every_so_often():
    from companion import app

    app.release_free_memory()
    app.release_free_memory()  # harmless, whatever the C library
    assert app.TRIM_EVERY_FRAMES >= 100  # not per frame: it walks the whole heap
