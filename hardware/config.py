"""Pin configuration for the seat LEDs, buttons and buzzer.

Read from the ``[leds]`` and ``[buttons]`` tables of the companion's TOML
config (other tables are ignored here). Every key is optional::

    [leds]
    enabled = true        # false: no GPIO at all (the web page still shows the LEDs)
    factory = "auto"      # auto | lgpio | rpigpio | pigpio | native | mock
    north = 17            # BCM numbers, or names such as "GPIO17" or "BOARD11"
    east = 27
    south = 22
    west = 23
    active_high = true    # false if the LEDs are wired from 3.3 V to the pin

    [buttons]
    enabled = false       # buttons and buzzer are off unless switched on
    undo = 5              # hold to take back the last card; false: no undo button
    next = 6              # press to accept a finished hand; false: no next button
    hold_time = 1.0       # seconds the undo button must be held
    bounce_time = 0.05    # seconds of contact bounce to ignore; 0: none
    buzzer = false        # a BCM pin (e.g. 13) to beep on refused cards

Giving ``undo`` and ``next`` the same pin makes one button do both: hold to
undo, short press for the next hand.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from hardware.pins import (
    EAST_LED_PIN,
    FACTORIES,
    NEXT_BUTTON_PIN,
    NORTH_LED_PIN,
    SOUTH_LED_PIN,
    UNDO_BUTTON_PIN,
    WEST_LED_PIN,
    PinSpec,
)

SEAT_NAMES = ("north", "east", "south", "west")
_BCM_NAME = re.compile(r"^(?:GPIO|BCM)?(\d+)$", re.IGNORECASE)
#: BCM numbers on the 40-pin header.
MAX_BCM = 27


@dataclass(frozen=True)
class LedConfig:
    """``[leds]``: the four seat LEDs."""

    enabled: bool = True
    factory: str = "auto"
    north: PinSpec = NORTH_LED_PIN
    east: PinSpec = EAST_LED_PIN
    south: PinSpec = SOUTH_LED_PIN
    west: PinSpec = WEST_LED_PIN
    active_high: bool = True

    @property
    def pins(self) -> dict[str, PinSpec]:
        """Seat → pin, in seat order."""
        return {seat: getattr(self, seat) for seat in SEAT_NAMES}


@dataclass(frozen=True)
class ButtonConfig:
    """``[buttons]``: optional undo and next buttons and a buzzer."""

    enabled: bool = False
    undo: PinSpec | None = UNDO_BUTTON_PIN
    next: PinSpec | None = NEXT_BUTTON_PIN
    hold_time: float = 1.0
    bounce_time: float | None = 0.05
    buzzer: PinSpec | None = None


@dataclass(frozen=True)
class HardwareConfig:
    """Everything GPIO: ``HardwareConfig.from_dict(toml_config)``."""

    leds: LedConfig = field(default_factory=LedConfig)
    buttons: ButtonConfig = field(default_factory=ButtonConfig)

    @classmethod
    def from_dict(cls, mapping: Mapping[str, Any]) -> HardwareConfig:
        """Read the ``leds`` and ``buttons`` tables of a parsed config; raises
        ``ValueError`` naming the bad key (``leds.north: ...``).

        >>> HardwareConfig.from_dict({"leds": {"north": 5}}).leds.north
        5
        """
        if not isinstance(mapping, Mapping):
            raise ValueError("the config must be a table")
        leds = _read_leds(_table(mapping, "leds"))
        buttons = _read_buttons(_table(mapping, "buttons"))
        config = cls(leds, buttons)
        _check_distinct(config)
        return config

    @classmethod
    def from_file(cls, path: str | Path) -> HardwareConfig:
        """Read a TOML config file; ``ValueError`` for bad TOML or a bad key."""
        try:
            with open(path, "rb") as fh:
                data = tomllib.load(fh)
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"{path}: {exc}") from None
        return cls.from_dict(data)


def _table(mapping: Mapping[str, Any], name: str) -> Mapping[str, Any]:
    table = mapping.get(name, {})
    if not isinstance(table, Mapping):
        raise ValueError(f"{name}: must be a table ([{name}])")
    return table


def _known(table: Mapping[str, Any], name: str, cls: type) -> None:
    known = [f.name for f in fields(cls)]
    for key in table:
        if key not in known:
            raise ValueError(f"{name}.{key}: unknown key (known: {', '.join(known)})")


def _bool(value: Any, key: str) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{key}: must be true or false, not {value!r}")
    return value


def _seconds(value: Any, key: str, *, allow_zero: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ValueError(f"{key}: must be a number of seconds, not {value!r}")
    if value < 0 or (value == 0 and not allow_zero) or value > 60:
        raise ValueError(f"{key}: {value} seconds is out of range")
    return float(value)


def _pin(value: Any, key: str, *, optional: bool = False) -> PinSpec | None:
    if value is False and optional:
        return None
    if isinstance(value, bool):
        raise ValueError(f"{key}: must be a BCM pin number{' or false' if optional else ''}")
    if isinstance(value, int):
        if not 0 <= value <= MAX_BCM:
            raise ValueError(f"{key}: GPIO {value} is not on the header (BCM 0-{MAX_BCM})")
        return value
    if isinstance(value, str) and value.strip():
        m = _BCM_NAME.match(value.strip())
        if m:
            return _pin(int(m.group(1)), key)
        return value.strip()
    raise ValueError(f"{key}: must be a BCM pin number such as 17 or a name such as "
                     f"\"BOARD11\", not {value!r}")


def _read_leds(table: Mapping[str, Any]) -> LedConfig:
    _known(table, "leds", LedConfig)
    out: dict[str, Any] = {}
    if "enabled" in table:
        out["enabled"] = _bool(table["enabled"], "leds.enabled")
    if "active_high" in table:
        out["active_high"] = _bool(table["active_high"], "leds.active_high")
    if "factory" in table:
        if table["factory"] not in FACTORIES:
            raise ValueError(f"leds.factory: {table['factory']!r} is not one of "
                             f"{', '.join(FACTORIES)}")
        out["factory"] = table["factory"]
    for seat in SEAT_NAMES:
        if seat in table:
            out[seat] = _pin(table[seat], f"leds.{seat}")
    return LedConfig(**out)


def _read_buttons(table: Mapping[str, Any]) -> ButtonConfig:
    _known(table, "buttons", ButtonConfig)
    out: dict[str, Any] = {}
    if "enabled" in table:
        out["enabled"] = _bool(table["enabled"], "buttons.enabled")
    for key in ("undo", "next", "buzzer"):
        if key in table:
            out[key] = _pin(table[key], f"buttons.{key}", optional=True)
    if "hold_time" in table:
        out["hold_time"] = _seconds(table["hold_time"], "buttons.hold_time", allow_zero=False)
    if "bounce_time" in table:
        bounce = _seconds(table["bounce_time"], "buttons.bounce_time", allow_zero=True)
        out["bounce_time"] = bounce or None
    return ButtonConfig(**out)


def _check_distinct(config: HardwareConfig) -> None:
    """No pin used twice (except undo = next, the one-button mode)."""
    used: dict[str, str] = {}
    wanted: list[tuple[str, PinSpec | None]] = [
        (f"leds.{seat}", pin) for seat, pin in config.leds.pins.items()
    ]
    if config.buttons.enabled:
        b = config.buttons
        wanted += [("buttons.undo", b.undo), ("buttons.buzzer", b.buzzer)]
        if b.next != b.undo:
            wanted.append(("buttons.next", b.next))
    for key, pin in wanted:
        if pin is None:
            continue
        norm = str(pin).upper()
        if norm in used:
            raise ValueError(f"{key}: pin {pin} is already used by {used[norm]}")
        used[norm] = key
