"""Setup: the live camera view, the deck-teaching wizard (C5) and the LED test.

The camera, the drawing of the recognition, the card cropper and the deck
teacher come from the wiring as :func:`web.create_app`'s arguments; whatever is
missing is shown as "not available". OpenCV is imported only where a picture is
encoded.
"""

from __future__ import annotations

import re
import shutil
from pathlib import Path
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, render_template

from companion.core.cards import BACK_IDS, CARD_IDS, TWILIGHT_ID
from web.common import (
    ApiError,
    at_table,
    csrf_token,
    done,
    game_log,
    parts,
    table_control,
    text,
)
from web.present import card_view

bp = Blueprint("setup", __name__)

#: The wizard's order: the Twilight card first (it fixes the moon sides), then the cards.
WIZARD_CARDS: tuple[str, ...] = (TWILIGHT_ID, *CARD_IDS)
OPTIONAL_CARDS: tuple[str, ...] = BACK_IDS
WIZARD_DIR = "deck-wizard"
DECKS_DIR = "decks"


def _label(card_id: str) -> str:
    if card_id == TWILIGHT_ID:
        return "the Twilight card (moon sides towards the top and bottom of the picture)"
    if card_id in BACK_IDS:
        return f"a {card_id.split('-')[0]} card face down (its back)"
    view = card_view(card_id)
    return f"{view['cult']} {view['name'].lower()}"


def latest_image() -> Any | None:
    """The newest camera frame as a BGR array, or None (no camera, no frame yet)."""
    frames = parts().frames
    if frames is None:
        return None
    got = frames.latest()
    if got is None:
        return None
    image = getattr(got, "image", None)
    if image is None and isinstance(got, tuple) and len(got) == 2:
        image = got[1]
    return image


def _wizard_dir() -> Path:
    return Path(parts().data_dir) / WIZARD_DIR


def _captured() -> list[str]:
    folder = _wizard_dir()
    return [c for c in (*WIZARD_CARDS, *OPTIONAL_CARDS) if (folder / f"{c}.png").exists()]


def _progress() -> dict[str, Any]:
    captured = _captured()
    missing = [c for c in WIZARD_CARDS if c not in captured]
    return {
        "cards": list(WIZARD_CARDS),
        "optional": list(OPTIONAL_CARDS),
        "captured": captured,
        "next": missing[0] if missing else None,
        "next_label": _label(missing[0]) if missing else None,
        "complete": not missing,
        "camera": parts().frames is not None,
        "crop": parts().crop_card is not None,
        "enrol": parts().enrol_deck is not None,
    }


def _jpeg(image: Any) -> bytes:
    import cv2  # lazily: the score page never needs OpenCV

    ok, buf = cv2.imencode(".jpg", image, [int(cv2.IMWRITE_JPEG_QUALITY), 80])
    if not ok:
        raise ApiError(500, "could not encode the camera picture")
    return bytes(buf)


def _need_table() -> None:
    if not at_table():
        raise ApiError(401, "enter the table PIN to see the camera")


def page_qr() -> dict[str, Any]:
    """This page's address as phones open it (the wiring's, else the one this browser
    used) and its QR code as an SVG data URI, or why there is none."""
    from flask import request

    from web.app import only_this_computer

    url = str(current_app.config.get("PAGE_URL") or request.url_root)
    if only_this_computer(url):
        return {"url": url, "qr": None}
    import segno

    qr = segno.make(url, error="m").svg_data_uri(scale=5, border=2, dark="#14132b",
                                                 light="#ffffff")
    return {"url": url, "qr": qr}


@bp.get("/setup")
def page() -> str:
    comp = parts()
    return render_template(
        "setup.html", table=at_table(), csrf=csrf_token(), wizard=_progress(),
        labels={c: _label(c) for c in (*WIZARD_CARDS, *OPTIONAL_CARDS)},
        has_frames=comp.frames is not None, has_annotate=comp.annotate is not None,
        has_leds=comp.leds is not None and callable(getattr(comp.leds, "test", None)),
        mirror=bool(game_log().snapshot()["settings"].get("mirror")),
        status=game_log().snapshot().get("status") or {}, address=page_qr(),
    )


@bp.get("/setup/camera.jpg")
def camera() -> Response:
    """The newest frame as JPEG, with the recogniser's drawing when there is one
    (``?raw=1`` for the plain picture). Needs the table PIN: the camera may see hands."""
    from flask import request

    _need_table()
    image = latest_image()
    if image is None:
        raise ApiError(503, "camera view not available" if parts().frames is None
                       else "no camera picture yet")
    annotate = parts().annotate
    if annotate is not None and request.args.get("raw") != "1":
        try:
            image = annotate(image)
        except Exception as exc:  # a recogniser hiccup must not hide the picture
            current_app.logger.warning("setup view: recognition failed: %s", exc)
    resp = Response(_jpeg(image), mimetype="image/jpeg")
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.get("/api/deck")
def deck_progress() -> Response:
    return jsonify(_progress())


@bp.post("/api/deck/capture")
@table_control
def deck_capture(data: dict[str, Any]) -> Response:
    """Keep the newest frame (cropped to the card when a cropper is there) as ``card``'s
    picture for the deck being taught."""
    card = text(data, "card", choices=(*WIZARD_CARDS, *OPTIONAL_CARDS), required=True)
    image = latest_image()
    if image is None:
        raise ApiError(503, "camera view not available: cannot take the card's picture")
    crop = parts().crop_card
    if crop is not None:
        cropped = crop(image)
        if cropped is None:
            raise ApiError(422, f"no single card found in the picture: lay {_label(card or '')} "
                                "alone in the middle and try again")
        image = cropped
    import cv2  # lazily

    folder = _wizard_dir()
    folder.mkdir(parents=True, exist_ok=True)
    if not cv2.imwrite(str(folder / f"{card}.png"), image):
        raise ApiError(500, "could not save the picture")
    return done(**_progress())


@bp.get("/setup/deck/<card>.png")
def deck_picture(card: str) -> Response:
    _need_table()
    if card not in (*WIZARD_CARDS, *OPTIONAL_CARDS):
        raise ApiError(404, f"no card {card!r}")
    path = _wizard_dir() / f"{card}.png"
    if not path.exists():
        raise ApiError(404, f"no picture of {card} yet")
    resp = Response(path.read_bytes(), mimetype="image/png")
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.post("/api/deck/reset")
@table_control
def deck_reset(data: dict[str, Any]) -> Response:
    shutil.rmtree(_wizard_dir(), ignore_errors=True)
    return done(**_progress())


@bp.post("/api/deck/finish")
@table_control
def deck_finish(data: dict[str, Any]) -> Response:
    """Teach the deck from the pictures (C5) into ``decks/<name>`` in the data folder."""
    name = text(data, "name", required=True, max_len=40)
    assert name is not None
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9 _.-]*", name):
        raise ApiError(400, "the deck's name may use letters, digits, space, _ . -")
    progress = _progress()
    if not progress["complete"]:
        raise ApiError(409, f"{len(WIZARD_CARDS) - len(progress['captured'])} pictures are "
                            f"still missing; next: {progress['next_label']}")
    enrol = parts().enrol_deck
    folder = _wizard_dir()
    out = Path(parts().data_dir) / DECKS_DIR / name
    if enrol is None:
        raise ApiError(503, "teaching decks is not available in this installation; the "
                            f"pictures are in {folder}: run `twilight-companion deck enrol "
                            f"{folder} --out DECK`")
    try:
        enrol(folder, out)
    except (ValueError, OSError) as exc:
        raise ApiError(422, f"the deck could not be taught: {exc}") from None
    return done(deck=str(out), **progress)
