"""The score page in a real browser (issue 7): Debian's headless Chromium driven by
Playwright at a phone viewport, the app served by waitress on 127.0.0.1.

Skipped when /usr/bin/chromium is missing (`scripts/ensure-chromium` installs it).
Screenshots go to bench/results/ for people to look at.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import expect
from test_web_helpers import (
    FIRST_TRICK,
    PIN,
    app_config,
    four_player_game,
    three_player_game,
)

from companion.core.gamelog import GameLog
from web import create_app

pytestmark = pytest.mark.browser

CHROMIUM = "/usr/bin/chromium"
ARGS = ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
        "--disable-component-update", "--disable-sync", "--no-first-run"]
PHONE = {"width": 390, "height": 844}
RESULTS = Path(__file__).resolve().parents[1] / "bench" / "results"


class Server:
    """The app served by waitress in a background thread, stoppable and restartable."""

    def __init__(self, log: GameLog, data: Path, port: int = 0, **parts: Any) -> None:
        from waitress.server import create_server

        app = create_app(log, config=app_config(data, SSE_LIFETIME=20.0, SSE_HEARTBEAT=0.5,
                                                TESTING=False), **parts)
        self.server: Any = create_server(app, host="127.0.0.1", port=port, threads=8,
                                         clear_untrusted_proxy_headers=True)
        self.port = int(self.server.effective_port)
        self.url = f"http://127.0.0.1:{self.port}"
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        try:
            self.server.run()
        except (OSError, ValueError):  # the map was closed under the loop: stopping
            pass

    def stop(self) -> None:
        from web import stop_server

        stop_server(self.server, timeout=2)
        self.thread.join(timeout=2)


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    if not os.path.exists(CHROMIUM):
        pytest.skip(f"{CHROMIUM} is missing: run scripts/ensure-chromium (apt-get install "
                    "chromium) for the browser tests")
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=CHROMIUM, args=ARGS)
        yield b
        b.close()


@pytest.fixture
def log(tmp_path: Path) -> Iterator[GameLog]:
    log = GameLog.open(tmp_path / "data")
    yield log
    log.close()


@pytest.fixture
def server(log: GameLog, tmp_path: Path) -> Iterator[Server]:
    srv = Server(log, tmp_path / "data")
    yield srv
    srv.stop()


@pytest.fixture
def page(browser: Any, server: Server) -> Iterator[Any]:
    context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True,
                                  has_touch=True)
    pg = context.new_page()
    pg.set_default_timeout(5000)
    errors: list[str] = []
    pg.on("pageerror", lambda exc: errors.append(str(exc)))
    pg.on("console", lambda msg: errors.append(msg.text) if msg.type == "error"
          and not msg.text.startswith("Failed to load resource") else None)
    pg.errors = errors
    yield pg
    context.close()


def open_live(page: Any, server: Server) -> None:
    page.goto(server.url + "/")
    page.wait_for_selector('#live[data-state="live"]')


def shot(page: Any, name: str) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    path = RESULTS / name
    page.screenshot(path=str(path), full_page=True)
    return path


def test_page_shows_a_game_in_progress_offline_and_light(page, server, log):
    four_player_game(log)
    snap = log.snapshot()
    requests: list[str] = []
    sizes: list[int] = []
    page.on("request", lambda r: requests.append(r.url))
    page.on("response", lambda r: sizes.append(len(r.body())) if r.url.startswith(
        server.url) and "/api/events" not in r.url and r.status == 200 else None)
    open_live(page, server)
    for key, total in snap["match"]["totals"].items():
        assert page.inner_text(f'[data-total="{key}"]') == str(total)
    nxt = snap["hand"]["next"]["seat"]
    assert "on turn" in page.inner_text(f'.seat[data-seat="{nxt}"]')
    assert page.is_visible("svg.chart") and page.is_visible("#board .twilight")
    assert all(u.startswith(server.url) for u in requests), requests
    assert sum(sizes) < 100_000
    assert page.errors == []


def test_a_play_appears_within_one_second(page, server, log):
    log.play("east", "sun-souls-3")
    open_live(page, server)
    page.wait_for_timeout(300)
    t0 = time.monotonic()
    log.play("south", "moon-hierarch", source="camera")
    page.wait_for_selector('.seat[data-seat="south"] .card[title="moon Hierarch"]', timeout=1000)
    assert time.monotonic() - t0 < 1.0
    assert "on turn" in page.inner_text('.seat[data-seat="west"]')
    assert page.errors == []


def test_a_correction_through_the_page_changes_the_score(page, server, log):
    for seat, card in FIRST_TRICK:
        log.play(seat, card)
    open_live(page, server)
    assert page.inner_text('[data-score="moon"] b') == "15"
    page.click("#controls summary")  # the table controls are folded away for watchers
    page.fill('#login input[name="pin"]', PIN)
    page.click('#login button')
    page.wait_for_selector('button[data-fix="1"]')
    page.click('button[data-fix="1"]')
    page.wait_for_selector('#fix-choices [data-card="sun-souls-7"]')
    page.click('#fix-choices [data-card="sun-souls-7"]')
    expect(page.locator('[data-score="moon"] b')).to_have_text("27", timeout=2000)
    assert log.snapshot()["hand"]["score"]["moon"] == 27
    last = log.events()[-1]
    assert last["type"] == "correct" and last["data"]["source"] == "web"
    # A refused correction shows the rule's message; the score stays.
    status = page.evaluate("""() => fetch('/api/correct', {method: 'POST', headers: {
        'Content-Type': 'application/json', 'X-CSRF-Token': document.body.dataset.csrf},
        body: JSON.stringify({index: 2, card: 'sun-souls-7'})}).then(r => r.status)""")
    assert status == 409
    assert page.inner_text('[data-score="moon"] b') == "27"
    assert page.errors == []


def test_the_page_recovers_after_a_server_restart(page, server, log, tmp_path):
    open_live(page, server)
    port = server.port
    server.stop()
    page.wait_for_selector('#live:not([data-state="live"])', timeout=5000)
    again = Server(log, tmp_path / "data", port=port)
    try:
        log.play("east", "sun-souls-5")
        page.wait_for_selector('.seat[data-seat="east"] .card[title="sun 5 souls"]',
                               timeout=6000)
        page.wait_for_selector('#live[data-state="live"]', timeout=5000)
    finally:
        again.stop()


def test_screenshots(page, server, log):
    four_player_game(log, hands=3, extra=14)
    open_live(page, server)
    assert shot(page, "score-four-players.png").stat().st_size > 10_000

    log.new_match(mode="four", goal="standard")
    four_player_game(log, hands=2, extra=0, seed=11)
    assert log.snapshot()["hand"]["complete"]
    page.wait_for_selector("#hand-over", timeout=2000)
    assert shot(page, "score-hand-over.png").stat().st_size > 10_000

    three_player_game(log, hands=2, extra=9)
    page.wait_for_selector("text=three players", timeout=2000)
    page.wait_for_timeout(300)
    assert shot(page, "score-three-players.png").stat().st_size > 10_000


class Frames:
    """A still camera: a green table with the Twilight card and one card."""

    def __init__(self) -> None:
        import cv2
        import numpy as np

        img = np.full((360, 480, 3), (60, 110, 40), np.uint8)
        cv2.rectangle(img, (200, 140), (280, 220), (120, 60, 60), -1)
        cv2.rectangle(img, (215, 40), (265, 110), (200, 200, 230), -1)
        self.image = img

    def latest(self) -> tuple[int, Any]:
        return 1, self.image


def draw_recognition(frame: Any) -> Any:
    import cv2

    out = frame.copy()
    cv2.rectangle(out, (200, 140), (280, 220), (255, 200, 120), 2)
    cv2.putText(out, "moon-hierarch", (200, 34), cv2.FONT_HERSHEY_SIMPLEX, 0.5, (255, 255, 255))
    return out


def test_setup_page_camera_view(browser, log, tmp_path):
    pytest.importorskip("cv2")
    srv = Server(log, tmp_path / "data", frames=Frames(), annotate=draw_recognition)
    context = browser.new_context(viewport=PHONE, device_scale_factor=2)
    try:
        page = context.new_page()
        page.goto(srv.url + "/setup")
        page.fill('input[name="pin"]', PIN)
        page.click("form.pin-form button")
        page.wait_for_selector("img#cam")
        page.wait_for_function("() => document.querySelector('img#cam').naturalWidth > 0")
        assert page.is_visible("text=Take picture")
        shot(page, "setup.png")
    finally:
        context.close()
        srv.stop()


def _colour(page: Any, selector: str) -> str:
    return page.evaluate(f"getComputedStyle(document.querySelector({selector!r})).color")


def test_a_lost_connection_is_a_banner_at_every_width_and_greys_the_camera(browser, log,
                                                                           tmp_path):
    """Players must not read stale scores: once the page loses the server a banner
    says so at the top (also scrolled down, phone or laptop), the camera status turns
    grey as not live; both go when the server is back."""
    four_player_game(log, hands=2, extra=5)
    log.set_status("camera", "ok")
    data = tmp_path / "data"
    for viewport in (PHONE, {"width": 1280, "height": 800}):
        srv = Server(log, data)
        context = browser.new_context(viewport=viewport, device_scale_factor=1)
        page = context.new_page()
        try:
            open_live(page, srv)
            assert page.is_hidden("#offline")
            live_colour = _colour(page, ".cam")
            muted = page.evaluate("getComputedStyle(document.body).getPropertyValue('--muted')")
            srv.stop()
            page.wait_for_selector("#offline", state="visible", timeout=10000)
            assert "Connection lost" in page.inner_text("#offline")
            assert "not live" in page.evaluate(
                "getComputedStyle(document.querySelector('.cam'), '::after').content")
            grey = _colour(page, ".cam")
            assert grey != live_colour and muted.strip()
            page.evaluate("window.scrollTo(0, document.body.scrollHeight)")
            box = page.locator("#offline").bounding_box()
            assert box is not None and 0 <= box["y"] < 200, box  # stays in view, at the top
            assert box["width"] <= viewport["width"]
            again = Server(log, data, port=srv.port)
            try:
                page.wait_for_selector("#offline", state="hidden", timeout=10000)
                assert _colour(page, ".cam") == live_colour
            finally:
                again.stop()
        finally:
            context.close()


def test_the_page_follows_the_phones_light_or_dark_setting(browser, server, log):
    four_player_game(log, hands=1, extra=6)
    seen = {}
    for scheme in ("light", "dark"):
        context = browser.new_context(viewport=PHONE, device_scale_factor=2, is_mobile=True,
                                      has_touch=True, color_scheme=scheme)
        page = context.new_page()
        try:
            open_live(page, server)
            seen[scheme] = (page.evaluate("getComputedStyle(document.body).backgroundColor"),
                            page.evaluate("getComputedStyle(document.body).color"))
            if scheme == "light":
                assert shot(page, "score-light.png").stat().st_size > 10_000
        finally:
            context.close()
    assert seen["light"] == ("rgb(244, 241, 251)", "rgb(26, 23, 51)")  # dark text on light
    assert seen["dark"] == ("rgb(20, 19, 43)", "rgb(241, 238, 251)")


def test_a_refused_correction_is_readable_above_the_dialog(page, server, log):
    """Issue 21: the dialog offers only the cards the rules accept there; when the rules
    refuse one all the same (another phone changed the hand meanwhile), the message is
    shown in plain words at the top of the open dialog, above its backdrop, readable at
    phone size."""
    for seat, card in FIRST_TRICK:
        log.play(seat, card)
    open_live(page, server)
    page.click("#controls summary")
    page.fill('#login input[name="pin"]', PIN)
    page.click('#login button')
    page.wait_for_selector('button[data-fix="1"]')
    page.click('button[data-fix="1"]')
    page.wait_for_selector('#fix-choices [data-card="sun-souls-7"]')
    offered = page.eval_on_selector_all("#fix-choices [data-card]",
                                        "els => els.map(e => e.dataset.card)")
    assert offered == log.correction_choices(1) and "sun-novice" not in offered
    log.correct(3, "sun-souls-7", source="web")  # another phone: west's card was the 7
    page.click('#fix-choices [data-card="sun-souls-7"]')
    error = page.locator("#fix-error")
    expect(error).to_be_visible(timeout=2000)
    text = error.inner_text()
    assert text == ("Play 1 (East, the sun 7 souls): The sun 7 souls was already played this "
                    "hand (play 3).")
    box = error.bounding_box()
    assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
    assert 0 <= box["y"] and box["y"] + box["height"] <= PHONE["height"]
    # on top of everything: the topmost element at the message's centre is the message
    on_top = page.evaluate("""() => { const e = document.getElementById('fix-error');
        const r = e.getBoundingClientRect();
        const hit = document.elementFromPoint(r.x + r.width / 2, r.y + r.height / 2);
        return e.contains(hit); }""")
    assert on_top
    size = page.evaluate("""() => parseFloat(getComputedStyle(
        document.getElementById('fix-error')).fontSize)""")
    assert size >= 14
    assert page.is_visible("#fix") and log.snapshot()["hand"]["plays"][0]["card"] == "sun-souls-3"
    shot(page, "score-correction-refused.png")
    assert page.errors == []


def test_a_gap_is_named_with_one_tap_at_phone_size(page, server, log):
    """Issue 21: an open gap is shown at the top of the score page with the cards that
    can lie there; at the table (PIN) one tap names it and the score is exact."""
    east, south, west, north = FIRST_TRICK
    log.play(*east)
    log.gap(south[0], source="camera")
    log.play(*west)
    log.play(*north)
    open_live(page, server)
    banner = page.locator('.banner.gap')
    expect(banner).to_contain_text("South's card in trick 1: not read")
    assert page.is_visible("#provisional")
    page.click("#controls summary")
    page.fill('#login input[name="pin"]', PIN)
    page.click('#login button')
    choice = page.locator(f'[data-gap-card="{south[1]}"]')
    expect(choice).to_be_visible(timeout=2000)
    box = choice.bounding_box()
    assert box is not None and box["x"] + box["width"] <= PHONE["width"]
    choice.click()
    expect(page.locator('.banner.gap')).to_have_count(0, timeout=2000)
    assert log.snapshot()["hand"]["gaps"] == []
    expect(page.locator('[data-score="moon"] b')).to_have_text("15", timeout=2000)
    assert page.errors == []
