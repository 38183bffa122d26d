"""Bad input (issue 9): hypothesis fuzzing of every HTTP endpoint (taken from the
url_map) and of hand/match records into ``score``; broken, huge and wrong-type
images into ``deck enrol``.

HTTP: never a 5xx; a refused request (4xx) leaves the game as it was.
``score``: exit 0 with one JSON object, or exit 2 with nothing on standard output
and one line on standard error — never a traceback.

``FUZZ_EXAMPLES`` (environment) sets the examples per fuzz test; ``make soak``
runs these with thousands.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from serve_helpers import command

from companion import cli
from companion.core.cards import CARD_IDS, Seat
from companion.core.deal import random_plays
from companion.core.gamelog import GameLog
from web import create_app

EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "0")) or None
PIN = "246810"
SEATS = ["north", "east", "south", "west"]

# -- HTTP -----------------------------------------------------------------------------------
texts = st.text(max_size=12) | st.sampled_from(
    ["north", "east", "sun-souls-7", "moon-hierarch", "twilight", "four", "three", "magic",
     "standard", "fixed", "true", "0", "1", "-1", "../../etc/passwd", "%00", "\u202e", "NaN",
     "9" * 30, "north-south", "east-west", PIN])
json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 40) | st.floats(allow_nan=True) | texts,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(texts, inner, max_size=4),
    max_leaves=8)
FIELDS = ["index", "card", "dealer", "leader", "soloist", "names", "mode", "goal", "pairing",
          "abandon", "mirror", "pin", "name", "name_north", "moon_seats", "csrf_token", "next"]
bodies = st.dictionaries(st.sampled_from(FIELDS) | texts, json_values, max_size=6)
path_args = st.one_of(st.integers(-2, 5).map(str), texts,
                      st.sampled_from(["score", "table", "twilight", "sun-souls-7", "app.css",
                                       "app.js", "..", "%2e%2e", "a/b"]))


class Lights:
    def test(self) -> None:
        pass


class Frames:
    image = np.full((120, 160, 3), 90, np.uint8)

    def latest(self) -> Any:
        return (1, self.image)


def make_world(folder: Path) -> tuple[Any, GameLog]:
    log = GameLog.open(folder)
    app = create_app(log, frames=Frames(), leds=Lights(), annotate=lambda image: image,
                     crop_card=lambda image: image, enrol_deck=lambda folder, out: None,
                     config={"DATA_DIR": str(folder), "TABLE_PIN": PIN, "PIN_FAIL_SLEEP": 0,
                             "SSE_LIFETIME": 0.05, "SSE_HEARTBEAT": 0.02})
    for seat, card in (("east", "sun-souls-3"), ("south", "moon-hierarch")):
        log.play(seat, card)
    return app, log


def routes(app) -> list[tuple[str, list[str], list[str]]]:
    """Every rule of the app with its argument names and methods (a new route is
    fuzzed too)."""
    return [(rule.rule, sorted(rule.arguments), sorted(rule.methods - {"OPTIONS", "HEAD"}))
            for rule in app.url_map.iter_rules()]


def build_url(rule: str, args: dict[str, str]) -> str:
    from urllib.parse import quote

    url = rule
    for name, value in args.items():
        for pattern in (f"<{name}>", f"<int:{name}>", f"<path:{name}>"):
            url = url.replace(pattern, quote(value, safe=""))
    return url


def fuzz_http(folder: Path, max_examples: int) -> dict[str, int]:
    """Fuzz every route with hypothesis; returns counts of the answers by status."""
    app, log = make_world(folder)
    rules = routes(app)
    counts: dict[str, int] = {}
    phones = {"stranger": app.test_client(), "table": app.test_client()}
    tokens = {name: c.get("/api/session").get_json()["csrf"] for name, c in phones.items()}
    phones["table"].post("/api/login", json={"pin": PIN},
                         headers={"X-CSRF-Token": tokens["table"]})

    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(route=st.sampled_from(rules), data=st.data(),
           odd_method=st.sampled_from(["GET", "POST", "PUT", "DELETE", "HEAD", "PATCH",
                                       "OPTIONS", *[None] * 14]),
           who=st.sampled_from(["stranger", "table", "table", "table"]),
           token=st.sampled_from(["right", "right", "right", "none", "forged"]),
           kind=st.sampled_from(["json", "json", "form", "raw", "query"]),
           body=bodies)
    def one(route, data, odd_method, who, token, kind, body) -> None:
        rule, arg_names, methods = route
        method = odd_method or methods[0]
        args = {name: data.draw(path_args, label=name) for name in arg_names}
        url = build_url(rule, args)
        client = phones[who]
        headers = {}
        if token == "right":
            headers["X-CSRF-Token"] = tokens[who]
        elif token == "forged":
            headers["X-CSRF-Token"] = "forged"
        kw: dict[str, Any] = {"headers": headers}
        if kind == "json":
            kw["data"] = json.dumps(body, allow_nan=True)
            kw["content_type"] = "application/json"
        elif kind == "form":
            kw["data"] = {str(k): v if isinstance(v, str) else json.dumps(v)
                          for k, v in body.items()}
            if token == "right":
                kw["data"]["csrf_token"] = tokens[who]
        elif kind == "raw":
            kw["data"] = data.draw(st.binary(max_size=300), label="raw")
            kw["content_type"] = data.draw(st.sampled_from(
                ["application/json", "text/plain", "multipart/form-data",
                 "application/x-www-form-urlencoded", "image/png"]), label="type")
        else:
            kw["query_string"] = {str(k): str(v) for k, v in body.items()}
        before = log.snapshot()
        resp = client.open(url, method=method, **kw)
        status = resp.status_code
        resp.close()
        counts[str(status)] = counts.get(str(status), 0) + 1
        assert status < 500, (method, url, kind, body, resp.get_data(as_text=True)[:300])
        if status >= 400:
            after = log.snapshot()
            assert (after["seq"], after["hand"], after["match"]) == (
                before["seq"], before["hand"], before["match"]), (method, url, status)
        if log.snapshot()["match"]["over"] or len(log.snapshot()["hand"]["plays"]) > 20:
            log.new_match(mode="four", goal="standard")

    try:
        one()
        assert log.integrity_check() == "ok"
    finally:
        log.close()
    return counts


@pytest.mark.slow
def test_every_endpoint_fuzzed_never_a_5xx_and_refusals_change_nothing(tmp_path):
    counts = fuzz_http(tmp_path / "data", EXAMPLES or 400)
    print("answers by status:", dict(sorted(counts.items())))
    assert sum(counts.values()) >= 300
    assert len(counts) >= 4  # the fuzzing reached past the doors: 2xx, 4xx of all kinds


# -- score ----------------------------------------------------------------------------------
def valid_hand(rng: random.Random, plays: int) -> dict[str, Any]:
    leader = rng.choice(list(Seat))
    made = random_plays(rng, leader=leader)[:plays]
    return {"format": "twilight-hand/1", "mode": "four", "moon_seats": ["north", "south"],
            "leader": leader.value,
            "plays": [{"seat": p.seat.value, "card": p.card.id} for p in made]}


anything = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
    | st.sampled_from(SEATS + list(CARD_IDS[:6]) + ["", "twilight-hand/1", "twilight-match/1",
                                                      "three", "four", "magic"]),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                 max_size=4),
    max_leaves=10)


@st.composite
def broken_records(draw) -> str:
    """A hand or match record that looks right with something broken (or nothing)."""
    rng = random.Random(draw(st.integers(0, 2**32)))
    hand = valid_hand(rng, draw(st.integers(0, 28)))
    if draw(st.booleans()):
        record: dict[str, Any] = {"format": "twilight-match/1",
                                  "mode": draw(st.sampled_from(["four", "three", "x"])),
                                  "goal": draw(st.sampled_from(["standard", "magic", 7])),
                                  "hands": [hand, valid_hand(rng, 28)][: draw(st.integers(0, 2))]}
        target: Any = record["hands"][0] if record["hands"] else record
    else:
        record = target = hand
    for _ in range(draw(st.integers(0, 3))):
        how = draw(st.sampled_from(["set", "drop", "play", "swap", "dup", "type"]))
        if how == "set":
            target[draw(st.sampled_from(["format", "mode", "moon_seats", "leader", "dealer",
                                         "soloist", "names", "plays", "pairing", "goal",
                                         "hands", "extra"]))] = draw(anything)
        elif how == "drop" and target:
            target.pop(draw(st.sampled_from(sorted(target))), None)
        elif how == "play" and isinstance(target.get("plays"), list) and target["plays"]:
            i = draw(st.integers(0, len(target["plays"]) - 1))
            target["plays"][i] = draw(anything | st.fixed_dictionaries(
                {"seat": st.sampled_from(SEATS) | anything,
                 "card": st.sampled_from(list(CARD_IDS)) | anything}))
        elif how == "swap" and isinstance(target.get("plays"), list) and len(target["plays"]) > 1:
            plays = target["plays"]
            i, j = draw(st.integers(0, len(plays) - 1)), draw(st.integers(0, len(plays) - 1))
            plays[i], plays[j] = plays[j], plays[i]
        elif how == "dup" and isinstance(target.get("plays"), list) and target["plays"]:
            target["plays"].append(target["plays"][0])
        elif how == "type":
            record = draw(st.sampled_from([[record], "text", 3, None, {"hands": record}]))
    text = json.dumps(record, allow_nan=True)
    cut = draw(st.sampled_from(["none", "none", "none", "truncate", "garbage", "deep"]))
    if cut == "truncate":
        text = text[: draw(st.integers(0, len(text)))]
    elif cut == "garbage":
        at = draw(st.integers(0, len(text)))
        text = text[:at] + draw(st.sampled_from(["\x00", "}", "]]", "\ud800", "NaN", "1e999",
                                                 "\"\\u0000\"", "\\"])) + text[at:]
    elif cut == "deep":
        text = "[" * 50_000 + "]" * 50_000
    return text


def score_in_process(path: Path) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = cli.main(["score", str(path)])
        except SystemExit as exc:  # argparse would exit: count it as the exit status
            code = int(exc.code or 0)
    return code, out.getvalue(), err.getvalue()


def check_score_answer(code: int, out: str, err: str) -> None:
    assert "Traceback" not in err, err
    assert code in (0, 2), (code, err)
    if code == 0:
        assert not err and isinstance(json.loads(out), dict)
    else:
        assert out == "", out
        assert err.endswith("\n") and err.count("\n") == 1 and len(err) > 20, repr(err)


def fuzz_score(folder: Path, max_examples: int) -> dict[str, int]:
    folder.mkdir(parents=True, exist_ok=True)
    counts = {"0": 0, "2": 0}

    @settings(max_examples=max_examples, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(text=broken_records())
    def one(text: str) -> None:
        path = folder / "record.json"
        path.write_text(text, encoding="utf-8", errors="surrogatepass")
        code, out, err = score_in_process(path)
        check_score_answer(code, out, err)
        counts[str(code)] += 1

    one()
    return counts


@pytest.mark.slow
def test_score_fuzzed_records_exit_2_with_one_line(tmp_path):
    counts = fuzz_score(tmp_path, EXAMPLES or 400)
    print("score exits:", counts)
    assert counts["2"] >= 100 and counts["0"] >= 10


def test_score_subprocess_refusals_are_one_line(tmp_path):
    """A handful through the real command (stdin and files)."""
    rng = random.Random(5)
    cases = {
        "unknown-card": {**valid_hand(rng, 3), "plays": [{"seat": "east", "card": "sun-x"}]},
        "wrong-seat": {**valid_hand(rng, 3), "leader": "middle"},
        "out-of-turn": {**valid_hand(rng, 0), "leader": "east",
                        "plays": [{"seat": "west", "card": "sun-souls-3"}]},
        "match-extra-hand": {"format": "twilight-match/1", "mode": "four", "goal": "magic",
                             "hands": [valid_hand(rng, 28)] * 40},
        "not-an-object": [1, 2, 3],
    }
    for name, record in cases.items():
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(record))
        r = subprocess.run([*command(), "score", str(path)], capture_output=True, text=True,
                           timeout=30)
        check_score_answer(r.returncode, r.stdout, r.stderr)
        assert r.returncode == 2, name
    for raw in (b"\xff\xfe\x00{", b"{" * 100_000, b""):
        r = subprocess.run([*command(), "score", "-"], input=raw, capture_output=True,
                           timeout=30)
        check_score_answer(r.returncode, r.stdout.decode(), r.stderr.decode(errors="replace"))
        assert r.returncode == 2
    r = subprocess.run([*command(), "score", str(tmp_path / "missing.json")],
                       capture_output=True, text=True, timeout=30)
    check_score_answer(r.returncode, r.stdout, r.stderr)


# -- deck enrolment -------------------------------------------------------------------------
def test_deck_enrol_refuses_broken_huge_and_wrong_type_images(tmp_path):
    """C5: any unreadable image is exit 2 and a message naming it; nothing is written."""
    import cv2

    from companion.core.cards import TWILIGHT_ID

    good = np.full((140, 100, 3), 200, np.uint8)
    cv2.rectangle(good, (10, 10), (90, 130), (30, 60, 120), 3)
    cases = {
        "truncated": lambda p: p.write_bytes(cv2.imencode(".png", good)[1].tobytes()[:60]),
        "text": lambda p: p.write_text("not a picture"),
        "empty": lambda p: p.write_bytes(b""),
        "gif-named-png": lambda p: p.write_bytes(b"GIF89a\x01\x00\x01\x00\x00\x00\x00;"),
        "huge": lambda p: p.write_bytes(
            b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x01\x00\x00\x00\x01\x00\x00\x08\x02"
            b"\x00\x00\x00" + b"\x00" * 64),
        "folder": lambda p: p.mkdir(),
    }
    for name, make in cases.items():
        folder = tmp_path / f"deck-{name}"
        folder.mkdir()
        for card in (*CARD_IDS, TWILIGHT_ID):
            cv2.imwrite(str(folder / f"{card}.png"), good)
        broken = folder / f"{CARD_IDS[5]}.png"
        broken.unlink()
        make(broken)
        out = tmp_path / f"out-{name}"
        r = subprocess.run([*command(), "deck", "enrol", str(folder), "--out", str(out)],
                           capture_output=True, text=True, timeout=120)
        assert r.returncode == 2, (name, r.returncode, r.stderr[-500:])
        assert "Traceback" not in r.stderr, (name, r.stderr[-800:])
        assert CARD_IDS[5] in r.stderr, (name, r.stderr)
        assert not out.exists() or not any(out.iterdir()), name


def test_uploads_are_size_limited(tmp_path):
    app, log = make_world(tmp_path / "data")
    try:
        client = app.test_client()
        tok = client.get("/api/session").get_json()["csrf"]
        client.post("/api/login", json={"pin": PIN}, headers={"X-CSRF-Token": tok})
        big = b"x" * (app.config["MAX_CONTENT_LENGTH"] + 1)
        for url in ("/api/login", "/api/deck/capture", "/api/undo"):
            r = client.post(url, data=big, content_type="application/json",
                            headers={"X-CSRF-Token": tok})
            assert r.status_code == 413, url
            r = client.post(url, data={"file": (io.BytesIO(big), "card.png"),
                                       "csrf_token": tok}, content_type="multipart/form-data")
            assert r.status_code == 413, url
    finally:
        log.close()


if __name__ == "__main__":  # pragma: no cover - handy for a long run by hand
    print(fuzz_http(Path(sys.argv[1]), int(sys.argv[2])))
