"""Security on a shared network (issue 9): every control refuses without the PIN
session and the CSRF token — the controls are taken from Flask's url_map, so a new
one cannot be forgotten — PIN guessing is slowed, no route reads or writes a path
a request names, the session secret is per install and owner-only."""

from __future__ import annotations

import os
import stat
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from flask.sessions import SecureCookieSessionInterface
from serve_helpers import Serve, free_port, recording, write_config
from werkzeug.routing.converters import PathConverter

from companion.core.gamelog import GameLog
from web import create_app
from web import pin as pins

PIN = "246810"
#: Posts anyone may make (with the CSRF token): entering and leaving the PIN session.
PUBLIC_POSTS = {"/api/login", "/api/logout"}
#: Pages that show the camera (it may see hands): they need the PIN session too.
PRIVATE_GETS = {"/setup/camera.jpg", "/setup/deck/<card>.png"}
SAMPLE_ARGS = {"name": "score", "index": 1, "number": 1, "card": "sun-souls-7",
               "filename": "app.css"}
#: One body that every control would accept (each takes the fields it knows).
BODY = {"index": 1, "card": "sun-souls-7", "dealer": "north", "names": {"north": "Ann"},
        "mode": "four", "goal": "magic", "mirror": True, "abandon": True, "name": "table deck"}


class Frames:
    def __init__(self) -> None:
        self.image = np.full((360, 640, 3), 90, np.uint8)

    def latest(self) -> Any:
        return (1, self.image)


class Leds:
    def __init__(self) -> None:
        self.tested = 0

    def test(self) -> None:
        self.tested += 1


class World:
    """An app with every part present, so a control that is let through does its work."""

    def __init__(self, tmp_path: Path) -> None:
        self.data = tmp_path / "data"
        self.log = GameLog.open(self.data)
        self.leds = Leds()
        self.enrolled: list[Any] = []
        self.app = create_app(
            self.log, frames=Frames(), leds=self.leds, annotate=lambda image: image,
            crop_card=lambda image: image,
            enrol_deck=lambda folder, out: self.enrolled.append(out),
            config={"DATA_DIR": str(self.data), "TABLE_PIN": PIN, "PIN_FAIL_SLEEP": 0})
        for seat, card in (("east", "sun-souls-3"), ("south", "moon-hierarch")):
            self.log.play(seat, card)

    def files(self) -> dict[str, int]:
        return {str(p.relative_to(self.data)): p.stat().st_mtime_ns
                for p in self.data.rglob("*") if p.is_file() and "game.sqlite3" not in p.name}

    def mark(self) -> tuple[Any, ...]:
        snap = self.log.snapshot()
        return snap["version"], snap["seq"], self.files(), self.leds.tested, len(self.enrolled)


@pytest.fixture
def world(tmp_path):
    w = World(tmp_path)
    yield w
    w.log.close()


def url_for_rule(rule) -> str:
    url = rule.rule
    for arg in rule.arguments:
        url = url.replace(f"<{arg}>", str(SAMPLE_ARGS[arg]))
        for conv in ("int", "path"):
            url = url.replace(f"<{conv}:{arg}>", str(SAMPLE_ARGS[arg]))
    return url


def controls(app) -> list[str]:
    """Every route that changes something: any method but GET/HEAD/OPTIONS."""
    found = []
    for rule in app.url_map.iter_rules():
        if rule.methods - {"GET", "HEAD", "OPTIONS"} and rule.rule not in PUBLIC_POSTS:
            found.append(url_for_rule(rule))
    return sorted(found)


def session_token(client) -> str:
    return client.get("/api/session").get_json()["csrf"]


def login(client) -> str:
    tok = session_token(client)
    r = client.post("/api/login", json={"pin": PIN}, headers={"X-CSRF-Token": tok})
    assert r.status_code == 200
    return tok


def test_the_controls_are_all_found(world):
    found = controls(world.app)
    assert len(found) >= 14 and "/api/undo" in found and "/api/deck/finish" in found
    # only POST changes anything: no PUT/DELETE/PATCH route hides elsewhere
    for rule in world.app.url_map.iter_rules():
        assert rule.methods <= {"GET", "HEAD", "OPTIONS", "POST"}, rule


def test_every_control_refuses_without_the_pin_session(world):
    client = world.app.test_client()
    tok = session_token(client)
    for url in controls(world.app):
        before = world.mark()
        for kw in ({"json": BODY, "headers": {"X-CSRF-Token": tok}},
                   {"data": {**{k: str(v) for k, v in BODY.items() if k != "names"},
                             "csrf_token": tok}},
                   {"json": BODY}):
            r = client.post(url, **kw)
            assert r.status_code == 401, (url, r.status_code)
        assert world.mark() == before, f"{url} changed something without the PIN"


def test_every_control_refuses_without_the_csrf_token(world, tmp_path):
    client = world.app.test_client()
    login(client)
    other = world.app.test_client()
    other_token = login(other)  # a valid token, but of another phone's session
    for url in controls(world.app):
        before = world.mark()
        for headers in ({}, {"X-CSRF-Token": "forged"}, {"X-CSRF-Token": other_token},
                        {"X-CSRF-Token": ""}):
            r = client.post(url, json=BODY, headers=headers)
            assert r.status_code == 403, (url, headers, r.status_code)
        form = {k: str(v) for k, v in BODY.items() if k != "names"}
        assert client.post(url, data=form).status_code == 403
        assert client.post(url, data={**form, "csrf_token": "x"}).status_code == 403
        assert world.mark() == before, f"{url} changed something without the CSRF token"


def test_the_same_requests_with_pin_and_token_are_let_through(world):
    """The refusals above are the PIN's and the token's doing, not the bodies'."""
    client = world.app.test_client()
    tok = login(client)
    for url in controls(world.app):
        r = client.post(url, json=BODY, headers={"X-CSRF-Token": tok})
        assert r.status_code not in (401, 403), (url, r.get_json())


def test_login_and_logout_need_the_csrf_token(world):
    client = world.app.test_client()
    session_token(client)
    assert client.post("/api/login", json={"pin": PIN}).status_code == 403
    assert client.get("/api/session").get_json()["table"] is False
    tok = login(client)
    assert client.post("/api/logout").status_code == 403  # no cross-site logout
    assert client.post("/api/logout", headers={"X-CSRF-Token": tok}).status_code == 200


def test_reading_pages_changes_nothing_and_the_camera_needs_the_pin(world):
    client = world.app.test_client()
    before = world.mark()
    for rule in world.app.url_map.iter_rules():
        if "GET" not in rule.methods or rule.endpoint == "score.events":
            continue
        r = client.get(url_for_rule(rule))
        r.close()
        assert r.status_code < 500, rule.rule
        if rule.rule in PRIVATE_GETS:
            assert r.status_code == 401, rule.rule
    assert world.mark() == before


def test_pin_guessing_is_slowed(world):
    client = world.app.test_client()
    tok = session_token(client)
    answers = []
    for i in range(12):
        # a spoofed forwarding header does not make a new client
        r = client.post("/api/login", json={"pin": f"{i:06d}"},
                        headers={"X-CSRF-Token": tok, "X-Forwarded-For": f"10.0.0.{i}"})
        answers.append(r.status_code)
    assert answers[:3] == [403, 403, 403]
    assert answers.count(429) >= 8, answers  # the rest refused without looking
    r = client.post("/api/login", json={"pin": PIN}, headers={"X-CSRF-Token": tok})
    assert r.status_code == 429 and int(r.headers["Retry-After"]) >= 1
    assert client.get("/api/session").get_json()["table"] is False


def test_guessing_rate_over_an_hour_is_tiny():
    """With the doubling wait capped at a minute, one client gets about 60 guesses an
    hour at a six-digit PIN: a million PINs take years."""
    now = [0.0]
    throttle = pins.Throttle(clock=lambda: now[0])
    guesses = 0
    while now[0] < 3600:
        wait = throttle.wait_for("phone")
        if wait > 0:
            now[0] += wait
            continue
        throttle.failed("phone")
        guesses += 1
    assert guesses <= 3 + 3600 / pins.MAX_DELAY + 8
    assert 10 ** pins.PIN_DIGITS / guesses / 24 / 365 > 1  # years to try them all


def test_a_session_signed_with_another_secret_is_not_at_the_table(world):
    client = world.app.test_client()
    fake_app = create_app(world.log, config={"DATA_DIR": str(world.data), "TABLE_PIN": PIN,
                                             "SECRET_KEY": "guessed"})
    serializer = SecureCookieSessionInterface().get_signing_serializer(fake_app)
    fingerprint = world.app.extensions["twilight"].fingerprint
    forged = serializer.dumps({"table": fingerprint, "csrf": "x"})
    client.set_cookie("twilight_session", forged)
    assert client.get("/api/session").get_json()["table"] is False
    assert client.post("/api/undo", headers={"X-CSRF-Token": "x"}).status_code == 401


def test_session_cookie_flags(world):
    client = world.app.test_client()
    r = client.get("/api/session")
    cookie = r.headers["Set-Cookie"]
    assert "HttpOnly" in cookie and "SameSite=Lax" in cookie


def test_no_route_takes_a_path_from_the_request(world):
    for rule in world.app.url_map.iter_rules():
        if rule.endpoint == "static":
            continue  # Flask's own safe_join
        for conv in rule._converters.values():
            assert not isinstance(conv, PathConverter), rule.rule
    client = world.app.test_client()
    tok = login(client)
    secret = Path("/etc/passwd").read_text() if Path("/etc/passwd").exists() else "root:"
    for url in ("/static/../app.py", "/static/%2e%2e/app.py", "/static/..%2fapp.py",
                "/static//etc/passwd", "/part/..%2f..%2fapp", "/setup/deck/..%2fsecret.png",
                "/setup/deck/%2e%2e.png", "/history/1/../../../etc/passwd",
                "/static/%2e%2e%2f%2e%2e%2fcompanion%2fgamelog.py"):
        r = client.get(url)
        assert r.status_code in (401, 404, 308), (url, r.status_code)
        body = r.get_data(as_text=True)
        assert "def create_app" not in body and secret[:20] not in body
    before = {p for p in world.data.parent.rglob("*")}
    for name in ("../evil", "..", "/tmp/evil", "a/../../b", "..\\evil", "x\x00y", "~root",
                 "a" * 200, ".hidden"):
        r = client.post("/api/deck/finish", json={"name": name}, headers={"X-CSRF-Token": tok})
        assert r.status_code in (400, 409), (name, r.status_code)
    for card in ("../../game.sqlite3", "/etc/passwd", "..", "twilight/../x"):
        r = client.post("/api/deck/capture", json={"card": card}, headers={"X-CSRF-Token": tok})
        assert r.status_code == 400, (card, r.status_code)
    after = {p for p in world.data.parent.rglob("*")}
    assert after == before


def test_secret_and_pin_are_per_install_and_owner_only(tmp_path, tmp_path_factory):
    """Two real installs (serve on two data folders): each makes its own secret and PIN,
    owner-only (0600), and neither is printed beside the page's address."""
    hand = recording(tmp_path_factory)
    secrets_seen = []
    for n in (1, 2):
        data = tmp_path / f"install-{n}"
        config = write_config(tmp_path / f"serve-{n}.toml", hand)
        text = config.read_text().replace(f'pin = "{PIN}"\n', "")
        config.write_text(text)
        with Serve(data, config, port=free_port()) as serve:
            serve.wait_ready()
            assert serve.stop() == 0
            out = serve.output()
        secret_file, pin_file = data / pins.SECRET_FILE, data / pins.PIN_FILE
        for f in (secret_file, pin_file):
            assert stat.S_IMODE(f.stat().st_mode) == 0o600, f
            assert f.stat().st_uid == os.geteuid()
        secret = secret_file.read_text().strip()
        assert len(secret) >= 32 and secret not in out
        assert pin_file.read_text().strip() in out  # the PIN is shown to the table
        secrets_seen.append(secret)
    assert secrets_seen[0] != secrets_seen[1]


def test_a_guesser_changing_address_joins_one_slowed_crowd():
    """Past MAX_CLIENTS failing addresses, new ones share one place: changing address
    gains nothing, and the table of failures cannot grow without bound."""
    now = [0.0]
    throttle = pins.Throttle(clock=lambda: now[0], max_clients=4)
    for i in range(4):
        throttle.failed(f"10.0.0.{i}")
    waits = [throttle.wait_for(f"10.0.1.{i}") or throttle.failed(f"10.0.1.{i}")
             for i in range(10)]
    assert waits[:3] == [0, 0, 0] and all(w > 0 for w in waits[3:])
    assert throttle.wait_for("10.0.9.9") > 0  # a new address waits with the crowd
    assert len(throttle._failures) == 5
    assert throttle.wait_for("10.0.0.1") == 0  # the ones known before keep their own count
