"""What every blueprint shares: the companion's parts, reading input, refusing it.

Input comes as JSON (the page's script) or as a form (the page without script);
both are read into one dict by :func:`payload`. Anything malformed raises
:class:`ApiError` (a 4xx with a message); the rules' refusals come from the
game log as :class:`~companion.core.rules.RuleError` and are turned into 409s by the
app's error handlers.
"""

from __future__ import annotations

import functools
import secrets
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

from flask import Response, current_app, jsonify, redirect, request, session

from companion.core.cards import Card, Seat, UnknownName
from companion.core.gamelog import GameLog
from web import pin as pins

F = TypeVar("F", bound=Callable[..., Any])


class ApiError(Exception):
    """A refused request: HTTP ``status`` and a message for the player."""

    def __init__(self, status: int, message: str, *, rule: str | None = None,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.rule = rule
        self.headers = headers or {}


@dataclass
class WebParts:
    """The parts the web app talks to, kept in ``app.extensions["twilight"]``."""

    log: GameLog
    pin: str
    fingerprint: str
    throttle: pins.Throttle
    frames: Any = None
    leds: Any = None
    #: Draws the recognition on a camera frame (the setup page's view).
    annotate: Callable[[Any], Any] | None = None
    #: The one card lying alone in a frame, cut out upright (C5), or None.
    crop_card: Callable[[Any], Any] | None = None
    #: Teaches a deck: (folder of C5 images, profile folder to write).
    enrol_deck: Callable[[Any, Any], Any] | None = None
    data_dir: str = ""
    boot: str = field(default_factory=lambda: secrets.token_hex(4))
    #: Event streams open now: each holds a waitress thread, so they are capped.
    streams: int = 0
    streams_lock: threading.Lock = field(default_factory=threading.Lock)

    def open_stream(self, limit: int) -> bool:
        with self.streams_lock:
            if self.streams >= limit:
                return False
            self.streams += 1
            return True

    def close_stream(self) -> None:
        with self.streams_lock:
            self.streams = max(0, self.streams - 1)


def parts() -> WebParts:
    return current_app.extensions["twilight"]  # type: ignore[no-any-return]


def game_log() -> GameLog:
    return parts().log


# -- session, PIN and CSRF ------------------------------------------------------------------
def csrf_token() -> str:
    """The session's CSRF token, made on first use."""
    token = session.get("csrf")
    if not isinstance(token, str) or not token:
        token = pins.new_csrf_token()
        session["csrf"] = token
    return token


def at_table() -> bool:
    """True when this phone entered the table PIN (and the PIN has not changed since)."""
    return session.get("table") == parts().fingerprint


def check_csrf(data: dict[str, Any] | None = None) -> None:
    given = request.headers.get("X-CSRF-Token")
    if not given and data is not None:
        value = data.get("csrf_token")
        given = value if isinstance(value, str) else None
    if not pins.csrf_matches(given, session.get("csrf")):
        raise ApiError(403, "the page's security token is missing or old: reload the page "
                            "and try again")


def table_control(view: F) -> F:
    """A control that changes the game: needs the table PIN session and the CSRF token.
    The view receives the request's payload as its first argument."""

    @functools.wraps(view)
    def wrapped(*args: Any, **kwargs: Any) -> Any:
        if not at_table():
            raise ApiError(401, "enter the table PIN to change the game")
        data = payload()
        check_csrf(data)
        return view(data, *args, **kwargs)

    return wrapped  # type: ignore[return-value]


# -- reading input --------------------------------------------------------------------------
def is_form() -> bool:
    return request.mimetype in ("application/x-www-form-urlencoded", "multipart/form-data")


def payload() -> dict[str, Any]:
    """The request body as a dict: a JSON object, a form, or empty."""
    if is_form():
        return {k: v for k, v in request.form.items()}
    raw = request.get_data(cache=True)
    if not raw.strip():
        return {}
    if request.mimetype != "application/json":
        raise ApiError(415, "send JSON (Content-Type: application/json) or a form")
    data = request.get_json(silent=True)
    if data is None:
        raise ApiError(400, "malformed JSON")
    if not isinstance(data, dict):
        raise ApiError(400, "the JSON body must be an object")
    return data


def text(data: dict[str, Any], key: str, *, choices: tuple[str, ...] | None = None,
         required: bool = False, max_len: int = 40) -> str | None:
    """A string field; empty counts as missing."""
    value = data.get(key)
    if value is None or value == "":
        if required:
            raise ApiError(400, f"{key} is missing")
        return None
    if not isinstance(value, str):
        raise ApiError(400, f"{key} must be text")
    value = value.strip()
    if len(value) > max_len:
        raise ApiError(400, f"{key} is too long (at most {max_len} characters)")
    if choices is not None and value not in choices:
        raise ApiError(400, f"{key} must be one of {', '.join(choices)}, not {value!r}")
    return value or None


def seat(data: dict[str, Any], key: str, *, required: bool = False) -> str | None:
    value = text(data, key, required=required)
    if value is None:
        return None
    try:
        return Seat.parse(value).value
    except UnknownName:
        raise ApiError(400, f"{key} must be north, east, south or west, not {value!r}") from None


def card(data: dict[str, Any], key: str = "card") -> str:
    value = text(data, key, required=True)
    assert value is not None
    try:
        return Card.parse(value).id
    except UnknownName:
        raise ApiError(400, f"unknown card {value!r} (C1)") from None


def integer(data: dict[str, Any], key: str, *, low: int = 0, high: int = 10**6) -> int:
    value = data.get(key)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise ApiError(400, f"{key} must be a whole number")
    if not low <= value <= high:
        raise ApiError(400, f"{key} must be between {low} and {high}")
    return value


def flag(data: dict[str, Any], key: str, default: bool = False) -> bool:
    value = data.get(key)
    if value is None or value == "":
        return default
    if isinstance(value, bool):
        return value
    if isinstance(value, str) and value.lower() in ("1", "true", "on", "yes"):
        return True
    if isinstance(value, str) and value.lower() in ("0", "false", "off", "no"):
        return False
    raise ApiError(400, f"{key} must be true or false")


def names(data: dict[str, Any]) -> dict[str, str | None] | None:
    """Player names: JSON ``{"names": {seat: name|null}}`` or form fields ``name_<seat>``.
    An empty name clears the seat's name."""
    raw = data.get("names")
    if raw is None:
        raw = {s.value: data[f"name_{s.value}"] for s in Seat if f"name_{s.value}" in data}
        if not raw:
            return None
    if not isinstance(raw, dict):
        raise ApiError(400, "names must map seats to names")
    out: dict[str, str | None] = {}
    for key, value in raw.items():
        try:
            where = Seat.parse(key).value
        except UnknownName:
            raise ApiError(400, f"names: unknown seat {key!r}") from None
        if value is not None and not isinstance(value, str):
            raise ApiError(400, f"names.{where} must be text or null")
        value = (value or "").strip()
        if len(value) > 24:
            raise ApiError(400, f"names.{where} is too long (at most 24 characters)")
        out[where] = value or None
    return out


# -- answering ------------------------------------------------------------------------------
def safe_next(default: str = "/") -> str:
    """Where a form goes back to: a local path only."""
    target = request.form.get("next") or request.args.get("next") or default
    if not target.startswith("/") or target.startswith("//") or "\\" in target:
        return default
    return target


def done(snap: dict[str, Any] | None = None, **extra: Any) -> Response:
    """Answer a successful control: JSON for the script, back to the page for a form."""
    if is_form():
        return redirect(safe_next(), code=303)  # type: ignore[return-value]
    body: dict[str, Any] = {"ok": True}
    if snap is not None:
        body["version"] = snap.get("version")
    body.update(extra)
    return jsonify(body)
