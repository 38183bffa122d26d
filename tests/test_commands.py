"""Every command on bad input (issue 22): one clear line, never a traceback, nothing
half done. The real command in a subprocess where the exit matters."""

from __future__ import annotations

import json
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
