"""Table controls behind the PIN: every one goes through the game log's checked calls.

Each control takes JSON (``X-CSRF-Token`` header) or a form (``csrf_token``
field, then back to the page). A refusal by the rules is a 409 with the rule's
message and the game unchanged; bad input a 400; no PIN session 401; no or a
wrong CSRF token 403; too many wrong PINs 429.
"""

from __future__ import annotations

import math
import threading
import time
from typing import Any

from flask import Blueprint, Response, current_app, jsonify, request, session

from web import pin as pins
from web.common import (
    ApiError,
    at_table,
    card,
    check_csrf,
    csrf_token,
    done,
    flag,
    game_log,
    integer,
    names,
    parts,
    payload,
    seat,
    table_control,
    text,
)

bp = Blueprint("table", __name__)

MODES = ("four", "three")
GOALS = ("standard", "magic")
PAIRINGS = ("rotating", "fixed")


def _client() -> str:
    return request.remote_addr or "unknown"


@bp.get("/api/session")
def session_info() -> Response:
    """Whether this phone may change the game, and the CSRF token its posts need."""
    resp = jsonify({"table": at_table(), "csrf": csrf_token()})
    resp.headers["Cache-Control"] = "no-store"
    return resp


@bp.post("/api/login")
def login() -> Response:
    """Enter the table PIN. Wrong PINs are slowed down per client (429 while waiting)."""
    data = payload()
    check_csrf(data)
    comp = parts()
    client = _client()
    wait = comp.throttle.wait_for(client)
    if wait > 0:
        seconds = math.ceil(wait)
        raise ApiError(429, f"too many wrong PINs: wait {seconds} s and try again",
                       headers={"Retry-After": str(seconds)})
    given = text(data, "pin", required=True, max_len=32)
    assert given is not None
    if not pins.pin_matches(given, comp.pin):
        delay = comp.throttle.failed(client)
        time.sleep(float(current_app.config["PIN_FAIL_SLEEP"]))
        extra = f"; wait {math.ceil(delay)} s before the next try" if delay else ""
        raise ApiError(403, f"wrong table PIN{extra}",
                       headers={"Retry-After": str(math.ceil(delay))} if delay else None)
    comp.throttle.succeeded(client)
    session.permanent = True
    session["table"] = comp.fingerprint
    return done(table=True, csrf=csrf_token())


@bp.post("/api/logout")
def logout() -> Response:
    check_csrf(payload())
    session.pop("table", None)
    return done(table=False)


@bp.post("/api/undo")
@table_control
def undo(data: dict[str, Any]) -> Response:
    """Take back the last play (reopens the last hand if it was just finished)."""
    return done(game_log().undo(source="web"))


@bp.post("/api/correct")
@table_control
def correct(data: dict[str, Any]) -> Response:
    """Replace play ``index`` (from 1) of the current hand with ``card``."""
    index = integer(data, "index", low=1, high=28)
    return done(game_log().correct(index, card(data), source="web"))


@bp.post("/api/play")
@table_control
def play(data: dict[str, Any]) -> Response:
    """Lay a card by hand for ``seat``: one the camera missed, or the right card in
    place of a refused one. Checked by the rules exactly like the camera's plays."""
    where = seat(data, "seat", required=True)
    assert where is not None
    return done(game_log().play(where, card(data), source="web"))


@bp.post("/api/dismiss")
@table_control
def dismiss(data: dict[str, Any]) -> Response:
    """The table has dealt with a refused card: clear the message."""
    return done(game_log().dismiss())


MOON_SIDES = {"north-south": ["north", "south"], "east-west": ["east", "west"]}


def _moon_seats(data: dict[str, Any]) -> list[str] | None:
    """The Twilight card's moon sides: ``"north-south"`` or ``"east-west"`` (or a list)."""
    value = data.get("moon_seats")
    if isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value):
        value = "-".join(sorted(value, key=("north", "east", "south", "west").index)
                         ) if set(value) <= {"north", "east", "south", "west"} else "?"
    chosen = text({"moon_seats": value}, "moon_seats", choices=tuple(MOON_SIDES))
    return MOON_SIDES[chosen] if chosen else None


@bp.post("/api/setup")
@table_control
def setup(data: dict[str, Any]) -> Response:
    """Confirm who deals and/or leads this hand, or how the Twilight card lies
    (before its first card)."""
    fields: dict[str, Any] = {k: v for k, v in (("dealer", seat(data, "dealer")),
                                                ("leader", seat(data, "leader")),
                                                ("soloist", seat(data, "soloist"))) if v}
    moon = _moon_seats(data)
    if moon:
        fields["moon_seats"] = moon
    if not fields:
        raise ApiError(400, "say who deals, leads or is soloist, or where the moon sides are")
    return done(game_log().setup(**fields))


@bp.post("/api/names")
@table_control
def set_names(data: dict[str, Any]) -> Response:
    """Player names by seat (any time; a blank name clears it)."""
    given = names(data)
    if not given:
        raise ApiError(400, "no names given")
    log = game_log()
    current = dict(log.snapshot()["hand"].get("names") or {})
    current.update(given)
    return done(log.setup(names=current))


@bp.post("/api/new-hand")
@table_control
def new_hand(data: dict[str, Any]) -> Response:
    """Start the next hand; ``abandon`` drops an unfinished one."""
    fields: dict[str, Any] = {"abandon": flag(data, "abandon")}
    for key in ("dealer", "leader", "soloist"):
        value = seat(data, key)
        if value:
            fields[key] = value
    return done(game_log().new_hand(**fields))


@bp.post("/api/new-match")
@table_control
def new_match(data: dict[str, Any]) -> Response:
    """Start a new match (the old one goes to the history)."""
    fields: dict[str, Any] = {
        "mode": text(data, "mode", choices=MODES) or "four",
        "goal": text(data, "goal", choices=GOALS) or "standard",
    }
    pairing = text(data, "pairing", choices=PAIRINGS)
    if pairing:
        fields["pairing"] = pairing
    for key in ("dealer", "soloist"):
        value = seat(data, key)
        if value:
            fields[key] = value
    given = names(data)
    if given:
        fields["names"] = given
    return done(game_log().new_match(**fields))


@bp.post("/api/mode")
@table_control
def mode(data: dict[str, Any]) -> Response:
    """Four or three players (soloist, pairing): only before the match's first card."""
    chosen = text(data, "mode", choices=MODES, required=True)
    assert chosen is not None
    return done(game_log().set_mode(chosen, soloist=seat(data, "soloist"),
                                    pairing=text(data, "pairing", choices=PAIRINGS)))


@bp.post("/api/goal")
@table_control
def goal(data: dict[str, Any]) -> Response:
    """Standard goal (1000) or the magic numbers (R7)."""
    chosen = text(data, "goal", choices=GOALS, required=True)
    assert chosen is not None
    return done(game_log().set_goal(chosen))


@bp.post("/api/mirror")
@table_control
def mirror(data: dict[str, Any]) -> Response:
    """Mirror the camera (swap east and west)."""
    if "mirror" not in data:
        raise ApiError(400, "mirror is missing (true or false)")
    return done(game_log().set_setting("mirror", flag(data, "mirror")))


@bp.post("/api/leds/test")
@table_control
def leds_test(data: dict[str, Any]) -> Response:
    """Light each seat's LED in turn (runs in the background)."""
    leds = parts().leds
    if leds is None or not callable(getattr(leds, "test", None)):
        raise ApiError(503, "LED test not available: no LEDs in this installation")
    threading.Thread(target=leds.test, name="led-test", daemon=True).start()
    return done(started=True)
