"""Every command on bad input (issue 22): one clear line, never a traceback, nothing
half done. The real command in a subprocess where the exit matters."""

from __future__ import annotations

import json
import os
import re
import subprocess

import pytest

from companion import cli as cli_module
from companion.score import MAX_RECORD_BYTES


def _one_line(run: subprocess.CompletedProcess) -> str:
    assert run.stdout == "", run.stdout
    lines = run.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in run.stderr, run.stderr
    return lines[0]


def test_score_refuses_json_that_is_no_record(cli, tmp_path) -> None:
    for text in ('{"foo": 1}', "{}", '{"moon_seats": ["north", "south"]}'):
        run = subprocess.run([*cli, "score", "-"], input=text, capture_output=True, text=True,
                             timeout=30)
        assert run.returncode == 2, text
        assert "not a hand (C2) or match (C4) record" in _one_line(run)
    # a record may leave its format out (C2's default) when it has plays
    plays = json.dumps({"leader": "east", "plays": [{"seat": "east", "card": "sun-souls-7"}]})
    run = subprocess.run([*cli, "score", "-"], input=plays, capture_output=True, text=True,
                         timeout=30)
    assert run.returncode == 0 and json.loads(run.stdout)["next"]["seat"] == "south"


def test_score_refuses_a_file_over_16_mb_without_reading_it_whole(cli, tmp_path) -> None:
    big = tmp_path / "big.json"
    with big.open("wb") as fh:  # a valid hand record padded with spaces past the limit
        fh.write(b'{"format": "twilight-hand/1", "plays": []' + b" " * MAX_RECORD_BYTES + b"}")
    run = subprocess.run([*cli, "score", str(big)], capture_output=True, text=True, timeout=60)
    assert run.returncode == 2
    assert "larger than 16 MB" in _one_line(run) and str(big) in run.stderr
    with big.open("rb") as fh:
        run = subprocess.run([*cli, "score", "-"], stdin=fh, capture_output=True, text=True,
                             timeout=60)
    assert run.returncode == 2 and "standard input is larger than 16 MB" in _one_line(run)


def test_deck_enrol_into_a_folder_that_cannot_be_made_is_one_line(cli, tmp_path) -> None:
    import cv2

    from vision.deck_art import render_card
    from vision.profile import REQUIRED_IDS

    src = tmp_path / "photos"
    src.mkdir()
    for cid in REQUIRED_IDS:
        cv2.imwrite(str(src / f"{cid}.png"), render_card(cid, style=0, px_per_mm=4.0))
    run = subprocess.run([*cli, "deck", "enrol", str(src), "--out", "/proc/x"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 2
    assert "cannot write" in _one_line(run) and "nothing written" in run.stderr


def test_an_unexpected_error_is_one_line_not_a_traceback(monkeypatch, capsys) -> None:
    def broken(args):
        raise RuntimeError("the disk\nwent away")

    monkeypatch.setitem(cli_module.HANDLERS, "history", broken)
    monkeypatch.delenv("TWILIGHT_DEBUG", raising=False)
    assert cli_module.main(["history"]) == 1
    err = capsys.readouterr().err
    assert err == ("twilight-companion history: RuntimeError: the disk went away "
                   "(TWILIGHT_DEBUG=1 shows where)\n")
    monkeypatch.setenv("TWILIGHT_DEBUG", "1")
    with pytest.raises(RuntimeError, match="the disk"):
        cli_module.main(["history"])


def test_demo_hands_must_not_be_negative(capsys) -> None:
    with pytest.raises(SystemExit) as stop:
        cli_module.main(["demo", "--hands", "-1"])
    assert stop.value.code == 2
    assert "--hands: must be 0 or more, not -1" in capsys.readouterr().err


def test_a_demo_of_one_hand_shows_the_result_calmly_until_stopped(tmp_path, cli) -> None:
    """``demo --hands 1`` at the table's own pace: once the hand is played the page
    stays up with the hand's score, no refusal, the camera "ended" (not lost) and no
    LED in trouble; Ctrl-C ends it."""
    import signal
    import time
    import urllib.error
    import urllib.request

    config = tmp_path / "demo.toml"
    config.write_text("[camera]\nwidth = 320\nheight = 180\n")
    proc = subprocess.Popen(
        [*cli, "demo", "--data", str(tmp_path / "data"), "--port", "0", "--config", str(config),
         "--hands", "1", "--seed", "7", "--speed", "20"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"})
    try:
        port, lines = None, []
        for line in proc.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if port is None and (found := re.search(r"listening on .*:(\d+)", line)):
                port = int(found.group(1))
            if "played; the page shows the result" in line:
                break
        assert port and lines[-1].startswith("demo: 1 hand played"), "".join(lines[-20:])
        time.sleep(4)  # the table lies still: nothing more happens

        def get(path: str) -> dict:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=10) as r:
                    return json.loads(r.read())
            except urllib.error.HTTPError as exc:  # a 503 health report is JSON too
                return json.loads(exc.read())

        state, health = get("/api/state"), get("/healthz")
        assert state["hand"]["complete"] and len(state["match"]["hands"]) == 1
        assert state["refused"] is None
        assert health["ok"] and health["camera"] == "ended" and health["log"] == "ok"
        leds = state["status"]["leds"]
        assert "trouble" not in leds.values() and "hand-over" in leds.values(), leds
        assert state["status"]["camera"] == "ended"
        assert proc.poll() is None  # still serving the page
        proc.send_signal(signal.SIGINT)
        assert proc.wait(30) == 0
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        proc.stdout.close()  # type: ignore[union-attr]


def test_serve_takes_the_camera_source_on_the_command_line(tmp_path, cli) -> None:
    missing = tmp_path / "no-such-recording.mp4"
    r = run_cli(cli, "serve", "--source", str(missing), "--data", str(tmp_path / "data"),
                "--port", "0")
    assert r.returncode == 2
    assert f"camera '{missing}'" in _one_line(r)


def run_cli(cli: list[str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([*cli, *args], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "GPIOZERO_PIN_FACTORY": "mock"})
