"""The companion's one TOML config file (``--config PATH``), read with tomllib.

Every key is optional; with no file at all the defaults run a table::

    [camera]
    source = "picamera"     # picamera | demo | a camera index | a video file | a frame folder
    width = 1280
    height = 720
    fps = 30
    mirror = false          # the camera sees the table mirrored: swap east and west

    [deck]
    profile = ""            # a folder written by `deck enrol`; empty: the built-in deck

    [web]
    host = "0.0.0.0"        # bind address; "127.0.0.1" keeps the page on this machine
    port = 8000
    pin = ""                # table PIN for the controls; empty: generated at first start
    threads = 24            # waitress worker threads (a table of phones, each with a live page)

    [game]
    mode = "four"           # four | three (a new match starts in this mode)
    soloist = "south"       # three players: the soloist's seat
    goal = "standard"       # standard | magic

    [data]
    dir = ""                # game log folder; empty: $STATE_DIRECTORY or ~/.local/share/...

    [leds] / [buttons]      # seat LEDs and buttons: see docs/wiring.md

A broken file is a :class:`ConfigError` naming the key, never a traceback.
"""

from __future__ import annotations

import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SEAT_NAMES = ("north", "east", "south", "west")


class ConfigError(ValueError):
    """A config file that cannot be read or has a bad key; the message names it."""


@dataclass(frozen=True)
class CameraConfig:
    source: str = "picamera"
    width: int = 1280
    height: int = 720
    fps: int = 30
    mirror: bool = False


@dataclass(frozen=True)
class WebConfig:
    host: str = "0.0.0.0"
    port: int = 8000
    pin: str = ""
    threads: int = 24


@dataclass(frozen=True)
class GameConfig:
    mode: str = "four"
    soloist: str = "south"
    goal: str = "standard"


@dataclass(frozen=True)
class Config:
    camera: CameraConfig = field(default_factory=CameraConfig)
    web: WebConfig = field(default_factory=WebConfig)
    game: GameConfig = field(default_factory=GameConfig)
    deck_profile: str = ""
    data_dir: str = ""
    #: the [leds] and [buttons] tables, checked by hardware.config.HardwareConfig
    hardware: dict[str, Any] = field(default_factory=dict)
    path: str | None = None


def _int(value: Any, key: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise ConfigError(f"{key}: must be a whole number, not {value!r}")
    if not low <= value <= high:
        raise ConfigError(f"{key}: {value} is out of range ({low}..{high})")
    return value


def _str(value: Any, key: str) -> str:
    if not isinstance(value, str):
        raise ConfigError(f"{key}: must be a string, not {value!r}")
    return value


def _bool(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise ConfigError(f"{key}: must be true or false, not {value!r}")
    return value


def _choice(value: Any, key: str, allowed: tuple[str, ...]) -> str:
    if value not in allowed:
        raise ConfigError(f"{key}: must be one of {', '.join(allowed)}, not {value!r}")
    return str(value)


_SCHEMA: dict[str, dict[str, Any]] = {
    "camera": {
        "source": lambda v, k: _str(v, k).strip() or "picamera",
        "width": lambda v, k: _int(v, k, 160, 4608),
        "height": lambda v, k: _int(v, k, 120, 3456),
        "fps": lambda v, k: _int(v, k, 1, 120),
        "mirror": _bool,
    },
    "web": {
        "host": lambda v, k: _str(v, k).strip() or "0.0.0.0",
        "port": lambda v, k: _int(v, k, 1, 65535),
        "pin": lambda v, k: _pin(v, k),
        "threads": lambda v, k: _int(v, k, 2, 200),
    },
    "game": {
        "mode": lambda v, k: _choice(v, k, ("four", "three")),
        "soloist": lambda v, k: _choice(v, k, SEAT_NAMES),
        "goal": lambda v, k: _choice(v, k, ("standard", "magic")),
    },
    "deck": {"profile": _str},
    "data": {"dir": _str},
}
_HARDWARE_TABLES = ("leds", "buttons")


def _pin(value: Any, key: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    text = _str(value, key).strip()
    if text and not (text.isdigit() and 4 <= len(text) <= 8):
        raise ConfigError(f"{key}: the table PIN must be 4 to 8 digits")
    return text


def parse_config(data: dict[str, Any], path: str | None = None) -> Config:
    """Check a parsed TOML document and build the :class:`Config`."""
    values: dict[str, dict[str, Any]] = {name: {} for name in _SCHEMA}
    hardware: dict[str, Any] = {}
    for table, content in data.items():
        if table in _HARDWARE_TABLES:
            if not isinstance(content, dict):
                raise ConfigError(f"{table}: must be a table ([{table}])")
            hardware[table] = content
            continue
        schema = _SCHEMA.get(table)
        if schema is None:
            known = ", ".join([*_SCHEMA, *_HARDWARE_TABLES])
            raise ConfigError(f"{table}: unknown table or key (known tables: {known})")
        if not isinstance(content, dict):
            raise ConfigError(f"{table}: must be a table ([{table}])")
        for key, value in content.items():
            check = schema.get(key)
            if check is None:
                raise ConfigError(f"{table}.{key}: unknown key (known: {', '.join(schema)})")
            values[table][key] = check(value, f"{table}.{key}")
    if hardware:
        from hardware.config import HardwareConfig

        try:
            HardwareConfig.from_dict(hardware)
        except ValueError as exc:
            raise ConfigError(str(exc)) from None
    return Config(
        camera=CameraConfig(**values["camera"]),
        web=WebConfig(**values["web"]),
        game=GameConfig(**values["game"]),
        deck_profile=values["deck"].get("profile", ""),
        data_dir=values["data"].get("dir", ""),
        hardware=hardware,
        path=path,
    )


def load_config(path: str | Path | None) -> Config:
    """The config from ``path``, or the defaults when ``path`` is None."""
    if path is None:
        return Config()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except OSError as exc:
        raise ConfigError(f"cannot read the config {path}: {exc.strerror}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{path}: not valid TOML: {exc}") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path}: not UTF-8 text") from None
    try:
        return parse_config(data, str(path))
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
