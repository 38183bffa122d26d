"""The page for a first evening at a real table (issue 22): the goal bars in plain
words, the log's write trouble shown, the web app manifest with PNG icons, the page's
own address as a QR code on the setup page."""

from __future__ import annotations

import io
import json

import pytest
from PIL import Image
from test_web_helpers import app_config

from companion.core.gamelog import GameLog
from web import create_app
from web.present import to_go


@pytest.fixture
def log(tmp_path):
    log = GameLog.open(tmp_path / "data")
    yield log
    log.close()


def test_the_goal_bars_say_what_is_needed_in_plain_words() -> None:
    assert to_go(0, "standard") == "needs 1000"  # not "1000 to 1000"
    assert to_go(905, "standard") == "95 more for 1000"
    assert to_go(1040, "standard") == "goal reached"
    assert to_go(0, "magic") == "needs exactly 333, 666 or 999, or 1000"
    assert to_go(300, "magic") == "33 more for exactly 333"


def test_write_trouble_is_shown_on_the_page_until_a_write_succeeds(log, tmp_path) -> None:
    client = create_app(log, config=app_config(tmp_path / "data")).test_client()
    log.play("east", "sun-souls-3")
    assert b"Scores cannot be saved" not in client.get("/").data
    log._db.execute("PRAGMA query_only = 1")  # SQLite refuses every write now
    log.play("south", "moon-hierarch")  # kept in memory until the log takes it (issue 21)
    page = client.get("/").get_data(as_text=True)
    assert 'id="log-error"' in page and "Scores cannot be saved" in page
    assert "cannot write to the game log" in page and "kept in memory" in page
    log._db.execute("PRAGMA query_only = 0")
    log.play("west", "sun-novice")  # the kept play is written first, then this one
    assert b'id="log-error"' not in client.get("/").data
    assert [e["data"]["card"] for e in log.events() if e["type"] == "play"] == [
        "sun-souls-3", "moon-hierarch", "sun-novice"]


def test_the_web_app_manifest_and_its_png_icons(log, tmp_path) -> None:
    client = create_app(log, config=app_config(tmp_path / "data")).test_client()
    page = client.get("/").get_data(as_text=True)
    assert '<link rel="manifest" href="/manifest.webmanifest">' in page
    assert 'rel="apple-touch-icon" href="/static/icon-192.png"' in page
    r = client.get("/manifest.webmanifest")
    assert r.status_code == 200 and r.mimetype == "application/manifest+json"
    manifest = json.loads(r.data)
    assert manifest["start_url"] == "/" and manifest["display"] == "standalone"
    pngs = [i for i in manifest["icons"] if i["type"] == "image/png"]
    assert {i["sizes"] for i in pngs} == {"192x192", "512x512"}
    for icon in pngs:
        with client.get(icon["src"]) as got:
            assert got.status_code == 200 and got.mimetype == "image/png"
            picture = Image.open(io.BytesIO(got.data))
        assert f"{picture.width}x{picture.height}" == icon["sizes"]


def test_the_setup_page_shows_the_page_address_as_a_qr_code(log, tmp_path) -> None:
    app = create_app(log, config=app_config(tmp_path / "data",
                                            PAGE_URL="http://192.168.1.20:8000/"))
    page = app.test_client().get("/setup").get_data(as_text=True)
    assert 'class="qr" src="data:image/svg+xml' in page and "http://192.168.1.20:8000/" in page
    # a page only this computer can open gets no QR code, but how to change that
    local = create_app(log, config=app_config(tmp_path / "data",
                                              PAGE_URL="http://127.0.0.1:8000/"))
    page = local.test_client().get("/setup").get_data(as_text=True)
    assert 'class="qr"' not in page and "--host 0.0.0.0" in page
