"""Which GPIO pins, and which gpiozero pin factory drives them.

On a Raspberry Pi the lgpio factory is used (the Pi 5 needs it; it works on
older Pis too). Anywhere else — a laptop running ``demo``, a CI machine —
gpiozero's own :class:`~gpiozero.pins.mock.MockFactory` with PWM-capable mock
pins is chosen automatically and a log line says so; the LED states are then
only shown on the web page. A factory that cannot start is a warning, never a
crash: the companion keeps scoring without lights.

Pin numbers are BCM (Broadcom) GPIO numbers, not header positions; see
``docs/wiring.md``.
"""

from __future__ import annotations

import logging
from importlib.metadata import entry_points
from pathlib import Path

from gpiozero.pins import Factory
from gpiozero.pins.mock import MockFactory, MockPWMPin

log = logging.getLogger(__name__)

#: A pin as gpiozero takes it: a BCM number (17) or a name ("GPIO17", "BOARD11").
PinSpec = int | str

#: Seat LEDs (BCM numbers; header pins 11, 13, 15, 16).
NORTH_LED_PIN = 17
EAST_LED_PIN = 27
SOUTH_LED_PIN = 22
WEST_LED_PIN = 23
DEFAULT_LED_PINS: dict[str, PinSpec] = {
    "north": NORTH_LED_PIN,
    "east": EAST_LED_PIN,
    "south": SOUTH_LED_PIN,
    "west": WEST_LED_PIN,
}
#: Optional buttons and buzzer (header pins 29, 31, 33).
UNDO_BUTTON_PIN = 5
NEXT_BUTTON_PIN = 6
BUZZER_PIN = 13

#: Names accepted for the ``factory`` config key.
FACTORIES = ("auto", "lgpio", "rpigpio", "pigpio", "native", "mock")

_MODEL_FILE = Path("/proc/device-tree/model")


def on_raspberry_pi(model_file: Path = _MODEL_FILE) -> bool:
    """True when the device tree names a Raspberry Pi."""
    try:
        return "raspberry pi" in model_file.read_bytes().decode("ascii", "replace").lower()
    except OSError:
        return False


def mock_factory() -> MockFactory:
    """gpiozero's mock factory with PWM pins, so pulsing works off a Pi."""
    return MockFactory(pin_class=MockPWMPin)


def is_mock(factory: Factory | None) -> bool:
    """True for gpiozero's mock factory (no real lights)."""
    return isinstance(factory, MockFactory)


def make_factory(kind: str = "auto") -> tuple[Factory, str]:
    """A pin factory and its name.

    ``auto``: lgpio on a Raspberry Pi, else the mock factory (logged). A named
    factory that cannot start (missing library, no ``/dev/gpiochip``, no
    permission) falls back to the mock factory with a warning.

    >>> make_factory("mock")[1]
    'mock'
    """
    if kind not in FACTORIES:
        raise ValueError(f"unknown pin factory {kind!r} (known: {', '.join(FACTORIES)})")
    if kind == "auto":
        if not on_raspberry_pi():
            log.info("GPIO: not a Raspberry Pi, using gpiozero's mock pins; "
                     "the seat LEDs are only shown on the web page")
            return mock_factory(), "mock"
        kind = "lgpio"
    if kind == "mock":
        log.info("GPIO: using gpiozero's mock pins (config factory = \"mock\")")
        return mock_factory(), "mock"
    try:
        factory_class = entry_points(group="gpiozero_pin_factories")[kind].load()
        return factory_class(), kind
    except Exception as exc:  # any library/device trouble: keep scoring without lights
        log.warning("GPIO: the %s pin factory cannot start (%s); using mock pins, "
                    "the seat LEDs are only shown on the web page", kind, exc)
        return mock_factory(), "mock"


def pin_label(pin: PinSpec, factory: Factory | None = None) -> str:
    """``GPIO17 (header pin 11)`` for a pin spec, as far as the factory knows the board."""
    if factory is not None:
        try:
            for _header, info in factory.board_info.find_pin(pin):
                board = sorted(n for n in info.names if isinstance(n, str)
                               and n.startswith("BOARD"))
                where = f" (header pin {board[0][5:]})" if board else ""
                return f"{info.name}{where}"
        except Exception:  # unknown board or name: fall back to the plain spec
            pass
    return f"GPIO{pin}" if isinstance(pin, int) else str(pin)
