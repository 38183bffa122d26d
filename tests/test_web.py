"""The web app through Flask's test client (issue 7): every route, the PIN, CSRF,
refusals (4xx, game unchanged), malformed input (never 500) and the C4 export."""

from __future__ import annotations

import io
import json
import os
import re
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_web_helpers import FIRST_TRICK, PIN, app_config, four_player_game, three_player_game

from companion.core.gamelog import GameLog
from web import create_app, make_server, page_url, print_banner, stop_server
from web import pin as pins

ROOT = Path(__file__).resolve().parents[1]

CONTROLS = [
    "/api/undo", "/api/correct", "/api/dismiss", "/api/setup", "/api/names", "/api/new-hand",
    "/api/new-match", "/api/mode", "/api/goal", "/api/mirror", "/api/leds/test",
    "/api/deck/capture", "/api/deck/reset", "/api/deck/finish",
]


@pytest.fixture
def log(tmp_path):
    log = GameLog.open(tmp_path / "data")
    yield log
    log.close()


@pytest.fixture
def app(log, tmp_path):
    return create_app(log, config=app_config(tmp_path / "data"))


@pytest.fixture
def client(app):
    return app.test_client()


def token(client) -> str:
    return client.get("/api/session").get_json()["csrf"]


def login(client) -> str:
    tok = token(client)
    r = client.post("/api/login", json={"pin": PIN}, headers={"X-CSRF-Token": tok})
    assert r.status_code == 200, r.get_json()
    return tok


@pytest.fixture
def table(client):
    """A client that entered the PIN; ``table.post(url, json)`` sends the CSRF token."""
    tok = login(client)

    class Table:
        csrf = tok
        raw = client

        def post(self, url: str, body: Any = None, **kw: Any):
            headers = {"X-CSRF-Token": tok, **kw.pop("headers", {})}
            if body is None and "data" not in kw:
                return client.post(url, headers=headers, **kw)
            if "data" in kw:
                return client.post(url, headers=headers, **kw)
            return client.post(url, json=body, headers=headers)

        def get(self, url: str, **kw: Any):
            return client.get(url, **kw)

    return Table()


def play_first_trick(log) -> None:
    for seat, card in FIRST_TRICK:
        log.play(seat, card)


def unchanged(log, before: dict[str, Any]) -> None:
    after = log.snapshot()
    assert after["version"] == before["version"]
    assert after["hand"] == before["hand"] and after["match"] == before["match"]


# -- pages and state ------------------------------------------------------------------------
def test_score_page_of_a_new_game(client):
    r = client.get("/")
    assert r.status_code == 200
    html = r.get_data(as_text=True)
    assert "Hand 1" in html and "Sun" in html and "Moon" in html
    assert "Table PIN" in html  # not logged in: the PIN form, no controls
    assert 'action="/api/undo"' not in html


def test_score_page_of_a_game_in_progress(client, log):
    four_player_game(log)
    snap = log.snapshot()
    html = client.get("/").get_data(as_text=True)
    for key, total in snap["match"]["totals"].items():
        assert f'data-total="{key}">{total}<' in html
    assert f"Hand {snap['hand']['number']}" in html
    assert "<svg class=\"chart\"" in html  # the totals chart, drawn by the server
    nxt = snap["hand"]["next"]["seat"]
    assert f'data-seat="{nxt}"' in html and "on turn" in html
    for party in ("sun", "moon"):
        assert f'data-score="{party}">= <b>{snap["hand"]["score"][party]}</b>' in html


def test_score_page_three_players_per_person(client, log):
    three_player_game(log)
    snap = log.snapshot()
    html = client.get("/").get_data(as_text=True)
    assert "three players" in html
    for name, total in snap["match"]["totals"].items():
        assert f'data-total="{name}">{total}<' in html
    assert "soloist" in html and "new moon" in html


def test_score_page_hand_over_and_match_winner(client, log):
    four_player_game(log, hands=1, extra=0)
    html = client.get("/").get_data(as_text=True)
    assert "Hand 1 is over" in html and "Next hand:" in html


def test_api_state_is_c3_and_c4(client, log):
    play_first_trick(log)
    r = client.get("/api/state")
    assert r.status_code == 200
    body = r.get_json()
    hand, match = body["hand"], body["match"]
    for key in ("complete", "tricks", "next", "lying", "won", "neutral", "souls",
                "multiplier", "score"):
        assert key in hand
    for key in ("hands", "totals", "over", "winner"):
        assert key in match
    assert hand["score"] == {"sun": 0, "moon": 15}
    assert hand["next"] == {"seat": "south", "cult": "moon"}
    assert hand["tricks"][0]["winner"] == "south"


def test_api_state_etag_and_change(client, log):
    r = client.get("/api/state")
    tag = r.headers["ETag"]
    again = client.get("/api/state", headers={"If-None-Match": tag})
    assert again.status_code == 304
    log.play("east", "sun-souls-3")
    changed = client.get("/api/state", headers={"If-None-Match": tag})
    assert changed.status_code == 200 and changed.headers["ETag"] != tag


def test_parts_and_version(client, log):
    for name in ("score", "table"):
        r = client.get(f"/part/{name}")
        assert r.status_code == 200 and r.mimetype == "text/html"
        assert client.get(f"/part/{name}", headers={"If-None-Match": r.headers["ETag"]}
                          ).status_code == 304
    assert client.get("/part/nothing").status_code == 404
    v = client.get("/api/version").get_json()
    log.play("east", "sun-souls-3")
    assert client.get("/api/version").get_json()["version"] > v["version"]


def test_event_stream_sends_changes_heartbeat_and_bye(client, log):
    def later() -> None:
        time.sleep(0.15)
        log.play("east", "sun-souls-3")

    threading.Thread(target=later).start()
    t0 = time.monotonic()
    r = client.get("/api/events")
    text = r.get_data(as_text=True)
    assert time.monotonic() - t0 < 3
    assert r.mimetype == "text/event-stream"
    assert text.startswith("retry: 1000")
    data = [json.loads(line[6:]) for line in text.splitlines() if line.startswith("data: {\"")]
    assert len(data) >= 2 and data[-1]["version"] > data[0]["version"]
    assert ": heartbeat" in text
    assert text.rstrip().endswith("event: bye\ndata: {}")


def test_choices(client, log):
    play_first_trick(log)
    r = client.get("/api/choices/1")
    body = r.get_json()
    assert r.status_code == 200 and body["seat"] == "east" and body["card"] == "sun-souls-3"
    ids = [c["id"] for c in body["choices"]]
    assert "sun-souls-7" in ids and "sun-novice" not in ids  # novice lies elsewhere
    assert all(i.startswith("sun-") for i in ids)
    assert client.get("/api/choices/5").status_code == 404
    assert client.get("/api/choices/0").status_code == 400
    assert client.get("/api/choices/x").status_code == 404


# -- PIN, session and CSRF ------------------------------------------------------------------
def test_login_needs_csrf(client, log):
    r = client.post("/api/login", json={"pin": PIN})
    assert r.status_code == 403 and "token" in r.get_json()["error"]
    assert client.get("/api/session").get_json()["table"] is False


def test_wrong_pin_refused_and_slowed(client):
    tok = token(client)
    for _ in range(pins.FREE_ATTEMPTS + 1):
        r = client.post("/api/login", json={"pin": "000000"}, headers={"X-CSRF-Token": tok})
        assert r.status_code == 403 and "wrong table PIN" in r.get_json()["error"]
    # Now it must wait: even the right PIN is not looked at.
    r = client.post("/api/login", json={"pin": PIN}, headers={"X-CSRF-Token": tok})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    assert "wait" in r.get_json()["error"]
    # Another phone is not held up.
    other = client.application.test_client()
    tok2 = token(other)
    r = other.post("/api/login", json={"pin": PIN}, headers={"X-CSRF-Token": tok2},
                   environ_base={"REMOTE_ADDR": "10.0.0.9"})
    assert r.status_code == 200


def test_throttle_backoff_grows_and_resets():
    now = [0.0]
    t = pins.Throttle(free=2, first=1.0, cap=8.0, clock=lambda: now[0])
    delays = [t.failed("a") for _ in range(7)]
    assert delays == [0, 0, 1, 2, 4, 8, 8]
    assert t.wait_for("a") == 8
    now[0] = 9.0
    assert t.wait_for("a") == 0
    t.succeeded("a")
    assert t.failed("a") == 0


@pytest.mark.parametrize("url", CONTROLS)
def test_controls_need_the_pin(client, log, url):
    play_first_trick(log)
    before = log.snapshot()
    tok = token(client)
    r = client.post(url, json={"index": 1, "card": "sun-souls-7"}, headers={"X-CSRF-Token": tok})
    assert r.status_code == 401 and "PIN" in r.get_json()["error"]
    unchanged(log, before)


@pytest.mark.parametrize("url", CONTROLS)
def test_controls_need_the_csrf_token(table, log, url):
    play_first_trick(log)
    before = log.snapshot()
    r = table.raw.post(url, json={"index": 1, "card": "sun-souls-7"})
    assert r.status_code == 403 and "token" in r.get_json()["error"]
    r = table.raw.post(url, json={"index": 1}, headers={"X-CSRF-Token": "forged"})
    assert r.status_code == 403
    unchanged(log, before)


def test_logout_forgets_the_pin(table, log):
    assert table.post("/api/logout").status_code == 200
    assert table.get("/api/session").get_json()["table"] is False
    assert table.post("/api/undo").status_code == 401


def test_changed_pin_logs_phones_out(log, tmp_path):
    app = create_app(log, config=app_config(tmp_path / "data"))
    client = app.test_client()
    login(client)
    cookie = client.get_cookie("twilight_session")
    app2 = create_app(log, config=app_config(tmp_path / "data", TABLE_PIN="999999"))
    c2 = app2.test_client()
    c2.set_cookie("twilight_session", cookie.value)
    assert c2.get("/api/session").get_json()["table"] is False


def test_pin_and_secret_files_made_once_owner_only(log, tmp_path):
    data = tmp_path / "fresh"
    config = {"DATA_DIR": str(data)}
    app = create_app(log, config=config)
    pin_file, secret_file = data / pins.PIN_FILE, data / pins.SECRET_FILE
    for f in (pin_file, secret_file):
        assert stat.S_IMODE(f.stat().st_mode) == 0o600
    pin = pin_file.read_text().strip()
    assert len(pin) == pins.PIN_DIGITS and pin.isdigit()
    assert app.config["TABLE_PIN"] == pin
    again = create_app(log, config=config)
    assert again.config["TABLE_PIN"] == pin and again.secret_key == app.secret_key
    configured = create_app(log, config={"data_dir": str(data), "table_pin": 4321})
    assert configured.config["TABLE_PIN"] == "4321"


# -- controls -------------------------------------------------------------------------------
def test_undo(table, log):
    play_first_trick(log)
    r = table.post("/api/undo")
    assert r.status_code == 200 and r.get_json()["ok"]
    assert len(log.snapshot()["hand"]["plays"]) == 3
    last = log.events()[-1]
    assert last["type"] == "undo" and last["data"]["source"] == "web"


def test_undo_with_nothing_played_is_refused(table, log):
    before = log.snapshot()
    r = table.post("/api/undo")
    assert r.status_code == 409
    body = r.get_json()
    assert "nothing to undo" in body["error"] and body["rule"]
    unchanged(log, before)


def test_lay_a_missed_card_by_hand(table, client, log):
    play_first_trick(log)
    before = log.snapshot()
    nxt = before["hand"]["next"]
    wrong = "sun-hierarch" if nxt["cult"] == "moon" else "moon-hierarch"
    r = table.post("/api/play", {"seat": nxt["seat"], "card": wrong})
    assert r.status_code == 409 and "(R3)" in r.get_json()["error"]
    unchanged(log, before)
    assert client.post("/api/play", json={"seat": nxt["seat"], "card": wrong}).status_code in (
        401, 403)
    played = {p["card"] for p in before["hand"]["plays"]}
    card = next(f"{nxt['cult']}-{n}" for n in ("novice", "adept", "priest", "souls-3", "altar")
                if f"{nxt['cult']}-{n}" not in played)
    r = table.post("/api/play", {"seat": nxt["seat"], "card": card})
    assert r.status_code == 200
    last = log.events()[-1]
    assert last["type"] == "play" and last["data"] == {"seat": nxt["seat"], "card": card,
                                                       "source": "web"}


def test_correct_changes_the_score(table, log):
    play_first_trick(log)
    assert log.snapshot()["hand"]["score"]["moon"] == 15
    r = table.post("/api/correct", {"index": 1, "card": "sun-souls-7"})
    assert r.status_code == 200
    assert log.snapshot()["hand"]["score"]["moon"] == 27
    assert log.events()[-1]["type"] == "correct"
    html = table.get("/").get_data(as_text=True)
    assert 'data-score="moon">= <b>27</b>' in html


@pytest.mark.parametrize("body, status, words", [
    ({"index": 1, "card": "moon-souls-7"}, 409, "R3"),          # wrong cult at a sun seat
    ({"index": 1, "card": "sun-novice"}, 409, "already played"),
    ({"index": 9, "card": "sun-souls-7"}, 409, "no play 9"),
    ({"index": 0, "card": "sun-souls-7"}, 400, "index"),
    ({"index": "one", "card": "sun-souls-7"}, 400, "index"),
    ({"index": 1, "card": "sun-joker"}, 400, "unknown card"),
    ({"index": 1}, 400, "card is missing"),
    ({"index": True, "card": "sun-souls-7"}, 400, "index"),
])
def test_correct_refusals_leave_the_game(table, log, body, status, words):
    play_first_trick(log)
    before = log.snapshot()
    r = table.post("/api/correct", body)
    assert r.status_code == status
    assert words in r.get_json()["error"]
    unchanged(log, before)


def test_setup_dealer_and_leader_before_the_first_card(table, log):
    r = table.post("/api/setup", {"dealer": "west"})
    assert r.status_code == 200
    hand = log.snapshot()["hand"]
    assert hand["dealer"] == "west" and hand["next"]["seat"] == "north"
    assert table.post("/api/setup", {"leader": "south"}).status_code == 200
    assert log.snapshot()["hand"]["next"]["seat"] == "south"
    assert table.post("/api/setup", {"moon_seats": "east-west"}).status_code == 200
    assert log.snapshot()["hand"]["moon_seats"] == ["east", "west"]
    assert table.post("/api/setup", {"moon_seats": ["south", "north"]}).status_code == 200
    assert log.snapshot()["hand"]["moon_seats"] == ["north", "south"]
    assert table.post("/api/setup", {"moon_seats": ["north", "east"]}).status_code == 400
    assert table.post("/api/setup", {"moon_seats": "up-down"}).status_code == 400
    assert table.post("/api/setup", {}).status_code == 400
    assert table.post("/api/setup", {"dealer": "up"}).status_code == 400
    log.play("south", "moon-souls-3")
    before = log.snapshot()
    r = table.post("/api/setup", {"dealer": "east"})
    assert r.status_code == 409 and "only names" in r.get_json()["error"]
    unchanged(log, before)


def test_names(table, log):
    r = table.post("/api/names", {"names": {"north": "Anna", "east": "Ben"}})
    assert r.status_code == 200
    assert table.post("/api/names", {"names": {"south": "Carla"}}).status_code == 200
    assert log.snapshot()["hand"]["names"] == {"north": "Anna", "east": "Ben", "south": "Carla"}
    assert table.post("/api/names", {"names": {"up": "X"}}).status_code == 400
    assert table.post("/api/names", {"names": {"north": "x" * 30}}).status_code == 400
    assert table.post("/api/names", {"names": ["Anna"]}).status_code == 400
    assert table.post("/api/names", {"names": {"north": 5}}).status_code == 400
    assert table.post("/api/names", {}).status_code == 400
    assert "Anna" in table.get("/").get_data(as_text=True)


def test_new_hand(table, log):
    play_first_trick(log)
    before = log.snapshot()
    r = table.post("/api/new-hand", {})
    assert r.status_code == 409 and "not finished" in r.get_json()["error"]
    unchanged(log, before)
    r = table.post("/api/new-hand", {"abandon": True, "dealer": "south"})
    assert r.status_code == 200
    hand = log.snapshot()["hand"]
    assert hand["plays"] == [] and hand["dealer"] == "south"
    assert table.post("/api/new-hand", {"abandon": "perhaps"}).status_code == 400


def test_new_match_mode_goal(table, log):
    play_first_trick(log)
    r = table.post("/api/mode", {"mode": "three", "soloist": "east"})
    assert r.status_code == 409 and "R8" in r.get_json()["rule"]
    r = table.post("/api/new-match", {"mode": "three", "goal": "magic", "soloist": "east",
                                      "names": {"north": "Anna", "east": "Ben",
                                                "south": "Carla", "west": None}})
    assert r.status_code == 200
    snap = log.snapshot()
    assert snap["match"]["mode"] == "three" and snap["match"]["goal"] == "magic"
    assert snap["hand"]["soloist"] == "east" and snap["match"]["number"] == 2
    assert table.post("/api/goal", {"goal": "standard"}).status_code == 200
    assert log.snapshot()["match"]["goal"] == "standard"
    assert table.post("/api/goal", {"goal": "forever"}).status_code == 400
    assert table.post("/api/mode", {"mode": "four"}).status_code == 200
    assert log.snapshot()["match"]["mode"] == "four"
    assert table.post("/api/mode", {"mode": "five"}).status_code == 400
    assert table.post("/api/new-match", {"mode": "two"}).status_code == 400


def test_mirror_and_dismiss(table, log):
    assert table.post("/api/mirror", {"mirror": True}).status_code == 200
    assert log.snapshot()["settings"]["mirror"] is True
    assert table.post("/api/mirror", {}).status_code == 400
    assert table.post("/api/mirror", {"mirror": "maybe"}).status_code == 400
    log.refuse("north", "sun-souls-3", "play 1 (north, sun-souls-3): north is not on turn (R3)")
    assert "north is not on turn" in table.get("/").get_data(as_text=True)
    assert table.post("/api/dismiss").status_code == 200
    assert log.snapshot()["refused"] is None


def test_leds_test(client, log, tmp_path):
    called = threading.Event()

    class Leds:
        def test(self) -> None:
            called.set()

    app = create_app(log, config=app_config(tmp_path / "data"), leds=Leds())
    c = app.test_client()
    tok = login(c)
    assert c.post("/api/leds/test", headers={"X-CSRF-Token": tok}).status_code == 200
    assert called.wait(2)
    tok = login(client)
    r = client.post("/api/leds/test", headers={"X-CSRF-Token": tok})
    assert r.status_code == 503 and "not available" in r.get_json()["error"]


# -- malformed input ------------------------------------------------------------------------
@pytest.mark.parametrize("url", CONTROLS + ["/api/login"])
def test_malformed_json_is_a_400(table, log, url):
    before = log.snapshot()
    for data in (b"{not json", b"[1, 2]", b'"text"', b"\xff\xfe"):
        r = table.post(url, data=data, content_type="application/json")
        assert r.status_code in (400, 503), (url, data, r.status_code)
        assert r.get_json()["error"]
    r = table.post(url, data=b"pin=1", content_type="text/plain")
    assert r.status_code == 415
    r = table.post(url, data=b"x" * 100_000, content_type="application/json")
    assert r.status_code == 413
    unchanged(log, before)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers(-5, 40) | st.text(max_size=12)
    | st.sampled_from(["north", "sun-souls-7", "moon-hierarch", "three", "magic", "true"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner,
                                                                 max_size=3),
    max_leaves=6,
)
bodies = st.dictionaries(
    st.sampled_from(["index", "card", "dealer", "leader", "soloist", "names", "mode", "goal",
                     "pairing", "abandon", "mirror", "pin", "name", "name_north", "moon_seats"]),
    json_values, max_size=5)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(url=st.sampled_from(CONTROLS), body=bodies, as_form=st.booleans())
def test_any_input_is_never_a_500(tmp_path_factory, url, body, as_form):
    data = tmp_path_factory.mktemp("fuzz")
    log = GameLog.open(data)
    try:
        app = create_app(log, config=app_config(data))
        client = app.test_client()
        tok = login(client)
        log.play("east", "sun-souls-3")
        if as_form:
            form = {k: (v if isinstance(v, str) else json.dumps(v)) for k, v in body.items()}
            form["csrf_token"] = tok
            r = client.post(url, data=form)
            assert r.status_code in (303, 400, 404, 409, 422, 503)
            assert r.status_code != 503 or url.startswith(("/api/leds", "/api/deck"))
        else:
            r = client.post(url, json=body, headers={"X-CSRF-Token": tok})
            unavailable = url.startswith(("/api/leds", "/api/deck")) and r.status_code == 503
            assert r.status_code < 500 or unavailable, r.get_json()
            if r.status_code >= 400:
                assert r.get_json()["error"]
    finally:
        log.close()


def test_form_posts_redirect_back_or_show_the_refusal(table, log):
    play_first_trick(log)
    r = table.raw.post("/api/correct", data={"index": "1", "card": "sun-souls-7",
                                             "csrf_token": table.csrf, "next": "/history"})
    assert r.status_code == 303 and r.headers["Location"].endswith("/history")
    assert log.snapshot()["hand"]["score"]["moon"] == 27
    r = table.raw.post("/api/undo", data={"csrf_token": table.csrf, "next": "//evil.example"})
    assert r.status_code == 303 and r.headers["Location"].endswith("/")
    before = log.snapshot()
    r = table.raw.post("/api/correct", data={"index": "2", "card": "sun-hierarch",
                                             "csrf_token": table.csrf})
    assert r.status_code == 409 and r.mimetype == "text/html"
    assert "Refused by the rules" in r.get_data(as_text=True)
    unchanged(log, before)
    r = table.raw.post("/api/names", data={"name_north": "Anna", "name_east": "",
                                           "csrf_token": table.csrf})
    assert r.status_code == 303 and log.snapshot()["hand"]["names"]["north"] == "Anna"


def test_unknown_routes_and_methods(client):
    r = client.get("/api/nothing")
    assert r.status_code == 404 and r.get_json()["error"]
    assert client.get("/api/undo").status_code == 405
    assert client.get("/nothing").mimetype == "text/html"


# -- history and export ---------------------------------------------------------------------
def test_history_pages(client, log):
    four_player_game(log, hands=2, extra=5)
    log.new_match(mode="four", goal="magic")
    html = client.get("/history").get_data(as_text=True)
    assert "Match 1" in html and "Match 2" in html and "export (C4)" in html
    page = client.get("/history/1").get_data(as_text=True)
    assert "Hand 1" in page and "Hand 2" in page and "Export match record" in page
    assert "<svg class=\"chart\"" in page
    assert client.get("/history/7").status_code == 404
    matches = client.get("/api/matches").get_json()["matches"]
    assert [m["number"] for m in matches] == [1, 2]
    rec = client.get("/api/matches/1").get_json()
    assert rec["format"] == "twilight-match/1" and len(rec["hands"]) == 2
    assert client.get("/api/matches/9").status_code == 404


def _score(path: Path) -> subprocess.CompletedProcess[str]:
    exe = ROOT / ".venv" / "bin" / "twilight-companion"
    cmd = [str(exe)] if exe.exists() else [sys.executable, "-m", "companion"]
    return subprocess.run([*cmd, "score", str(path)], capture_output=True, text=True,
                          timeout=30, cwd=ROOT)


@pytest.mark.parametrize("game", [four_player_game, three_player_game])
def test_export_round_trips_through_score(client, log, tmp_path, game):
    game(log)
    snap = log.snapshot()
    number = snap["match"]["number"]
    r = client.get(f"/history/{number}/export")
    assert r.status_code == 200
    assert "attachment" in r.headers["Content-Disposition"]
    path = tmp_path / "match.json"
    path.write_bytes(r.data)
    done = _score(path)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out["totals"] == snap["match"]["totals"]
    assert [h["score"] for h in out["hands"]] == [h["score"] for h in snap["match"]["hands"]]
    assert out["over"] == snap["match"]["over"]


# -- setup ----------------------------------------------------------------------------------
class Frames:
    def __init__(self, image: Any) -> None:
        self.image = image

    def latest(self) -> tuple[int, Any] | None:
        return None if self.image is None else (1, self.image)


def test_setup_page_without_camera_or_pin(client, table):
    html = client.application.test_client().get("/setup").get_data(as_text=True)
    assert "Setup needs the table PIN" in html
    assert client.application.test_client().get("/setup/camera.jpg").status_code == 401
    html = table.get("/setup").get_data(as_text=True)
    assert "Camera view not available" in html and "LED test not available" in html
    r = table.get("/setup/camera.jpg")
    assert r.status_code == 503 and b"camera view not available" in r.data


def test_setup_camera_view_and_deck_wizard(log, tmp_path):
    np = pytest.importorskip("numpy")
    image = np.zeros((120, 160, 3), np.uint8)
    seen: list[Any] = []

    def recognise(frame):
        seen.append(frame.shape)
        out = frame.copy()
        out[10:20, 10:20] = 255
        return out

    taught: list[tuple[Path, Path]] = []

    def enrol(folder, out):
        taught.append((Path(folder), Path(out)))

    data = tmp_path / "data"
    app = create_app(log, config=app_config(data), frames=Frames(image), annotate=recognise,
                     crop_card=lambda f: f[10:100, 20:90], enrol_deck=enrol)
    c = app.test_client()
    tok = login(c)
    html = c.get("/setup").get_data(as_text=True)
    assert 'src="/setup/camera.jpg"' in html and "Twilight card" in html
    r = c.get("/setup/camera.jpg")
    assert r.status_code == 200 and r.mimetype == "image/jpeg" and r.data[:2] == b"\xff\xd8"
    assert seen == [(120, 160, 3)]
    assert c.get("/setup/camera.jpg?raw=1").status_code == 200 and len(seen) == 1

    progress = c.get("/api/deck").get_json()
    assert progress["next"] == "twilight" and progress["crop"] and progress["enrol"]
    r = c.post("/api/deck/finish", json={"name": "mine"}, headers={"X-CSRF-Token": tok})
    assert r.status_code == 409 and "missing" in r.get_json()["error"]
    for card in progress["cards"]:
        r = c.post("/api/deck/capture", json={"card": card}, headers={"X-CSRF-Token": tok})
        assert r.status_code == 200, r.get_json()
    assert c.get("/api/deck").get_json()["complete"]
    assert c.get("/setup/deck/sun-souls-7.png").mimetype == "image/png"
    assert c.get("/setup/deck/joker.png").status_code == 404
    bad = c.post("/api/deck/finish", json={"name": "../x"}, headers={"X-CSRF-Token": tok})
    assert bad.status_code == 400
    r = c.post("/api/deck/finish", json={"name": "mine"}, headers={"X-CSRF-Token": tok})
    assert r.status_code == 200 and taught == [(data / "deck-wizard", data / "decks" / "mine")]
    assert c.post("/api/deck/capture", json={"card": "joker"},
                  headers={"X-CSRF-Token": tok}).status_code == 400
    assert c.post("/api/deck/reset", headers={"X-CSRF-Token": tok}).get_json()["captured"] == []


def test_deck_capture_without_camera_or_enrol(table, log):
    r = table.post("/api/deck/capture", {"card": "twilight"})
    assert r.status_code == 503 and "not available" in r.get_json()["error"]


# -- offline, weight, headers, start-up -----------------------------------------------------
def _static(client, name: str) -> bytes:
    with client.get(f"/static/{name}") as r:
        assert r.status_code == 200
        return r.get_data()


def test_pages_are_offline_and_light(client, log):
    four_player_game(log)
    login(client)
    html = client.get("/").get_data()
    css, js, icon = (_static(client, name) for name in ("app.css", "app.js", "icon.svg"))
    assert len(html) + len(css) + len(js) + len(icon) < 100_000
    links = re.findall(r'(?:src|href|action)="([^"]*)"', html.decode())
    assert links and all(link.startswith(("/", "#")) for link in links), links
    assert b"@import" not in css and b"url(" not in css
    assert not re.search(rb"[\"'](https?:)?//", js)
    r = client.get("/")
    assert "default-src 'self'" in r.headers["Content-Security-Policy"]
    assert r.headers["X-Content-Type-Options"] == "nosniff"
    cookie = r.headers.get("Set-Cookie", "") or client.get("/api/session").headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_print_banner_shows_address_pin_and_qr():
    out = io.StringIO()
    print_banner("http://192.168.1.20:8000/", "246810", file=out)
    text = out.getvalue()
    assert "http://192.168.1.20:8000/" in text and "246810" in text
    assert len(text.splitlines()) > 10  # the QR code


def test_print_banner_for_this_computer_only_says_how_phones_get_in():
    out = io.StringIO()
    print_banner("http://127.0.0.1:8000/", "246810", file=out)
    text = out.getvalue()
    assert "open http://127.0.0.1:8000/ in a browser on this computer" in text
    assert "Only this computer can open it" in text and "--host 0.0.0.0" in text
    assert "on your phones" not in text and len(text.splitlines()) == 2  # no QR code


def test_page_url():
    assert page_url("127.0.0.1", 8000) == "http://127.0.0.1:8000/"
    assert page_url("0.0.0.0", 8000).startswith("http://")
    assert page_url("::1", 9) == "http://[::1]:9/"


def test_serve_uses_waitress(app):
    import urllib.request

    server = make_server(app, "127.0.0.1", 0, threads=6)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        url = f"http://127.0.0.1:{server.effective_port}/api/version"
        with urllib.request.urlopen(url, timeout=5) as r:
            assert r.headers["Server"] == "twilight-companion"
            assert "version" in json.loads(r.read())
        assert app.config["SSE_MAX_STREAMS"] == 2
    finally:
        stop_server(server)
        thread.join(timeout=2)
        assert not thread.is_alive()


def test_web_does_not_import_opencv_at_top():
    for path in (ROOT / "web").glob("*.py"):
        top = [line for line in path.read_text().splitlines() if line.startswith(("import ",
                                                                                  "from "))]
        assert not [t for t in top if "cv2" in t or "numpy" in t], path


def test_create_app_defaults_data_dir_to_the_logs_folder(tmp_path):
    log = GameLog.open(tmp_path / "d")
    try:
        app = create_app(log)
        assert app.config["DATA_DIR"] == str(tmp_path / "d")
        assert (tmp_path / "d" / pins.PIN_FILE).exists()
        assert os.access(tmp_path / "d" / pins.SECRET_FILE, os.R_OK)
    finally:
        log.close()


def test_event_streams_are_capped(log, tmp_path):
    app = create_app(log, config=app_config(tmp_path / "data", SSE_MAX_STREAMS=1))
    client = app.test_client()
    first = client.get("/api/events", buffered=False)
    assert first.status_code == 200
    second = client.get("/api/events")
    assert second.status_code == 503 and second.headers["Retry-After"]
    first.close()
    third = client.get("/api/events")
    assert third.status_code == 200
    third.close()


def test_deck_capture_refuses_a_frame_without_a_card(log, tmp_path):
    np = pytest.importorskip("numpy")
    from vision.cardcrop import crop_card

    app = create_app(log, config=app_config(tmp_path / "data"),
                     frames=Frames(np.full((120, 160, 3), 90, np.uint8)), crop_card=crop_card)
    c = app.test_client()
    tok = login(c)
    r = c.post("/api/deck/capture", json={"card": "twilight"}, headers={"X-CSRF-Token": tok})
    assert r.status_code == 422 and "no single card" in r.get_json()["error"]
