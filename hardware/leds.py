"""The four seat LEDs: who is on turn, at a glance (R2–R4, R8, R9).

:func:`seat_lights` is a pure function from a game-log snapshot (plus how long
ago the last card was laid) to a :class:`Pattern` per seat:

==============  ===========================================================
pattern         when
==============  ===========================================================
``turn``        steady on: the seat on turn (R3)
``handoff``     slow blink: a purgatory trick lies and this seat leads next,
                until the next trick's first card (R4)
``won``         two quick flashes: this seat just took a trick, then ``turn``
``hand-over``   pulse for 3 s: the party (three players: the person) that
                scored more this hand (all players on a draw); then the next
                hand's leader lights (``turn``)
``match-over``  steady on: the match winner(s), once the match is over (R7)
``new-moon``    slow "breathing": three players, the soloist must lay for
                the empty new-moon seat (R8)
``trouble``     all four blink fast: a refused card waits for correction
                (R9), or the camera sends no frames
``check``       a short wink once a second: "check the table" — the camera
                could not read this seat's card in a trick (an open gap);
                it winks until the card is named on the page
``off``         everything else
==============  ===========================================================

When several apply, the first of trouble, hand-over/match-over, handoff, won,
new-moon, turn, check wins (a new-moon seat that leads after a lying trick blinks
slowly like any other; the seat on turn shows its turn even with a gap of its own).

:class:`SeatLights` applies the patterns to a gpiozero ``LEDBoard`` (blinking
and pulsing run in gpiozero's own background threads, so the thread that
changed the game — camera or web — never waits) and publishes the pattern
names with ``log.set_status("leds", {"north": "turn", "east": "off", ...})``
for the web page's virtual LEDs (:attr:`SeatLights.current` has the timings).
"""

from __future__ import annotations

import argparse
import contextlib
import logging
import sys
import threading
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TextIO

from gpiozero import LEDBoard
from gpiozero.pins import Factory

from hardware import pins as gpio_pins
from hardware.config import SEAT_NAMES, HardwareConfig
from hardware.pins import DEFAULT_LED_PINS, PinSpec

if TYPE_CHECKING:
    from companion.core.gamelog import GameLog
    from hardware.buttons import Buttons

logger = logging.getLogger(__name__)

Snapshot = Mapping[str, Any]

OFF = "off"
TURN = "turn"
HANDOFF = "handoff"
WON = "won"
HAND_OVER = "hand-over"
MATCH_OVER = "match-over"
NEW_MOON = "new-moon"
TROUBLE = "trouble"
CHECK = "check"
TEST = "test"

#: Event types after which the hand was changed by something other than a newly
#: laid card: no flash or pulse for them, straight to the steady state.
_NOT_A_CARD = frozenset({"undo", "correct", "new_hand", "new_match", "setup", "mode"})


@dataclass(frozen=True)
class Timings:
    """Seconds for each pattern; tests make them short."""

    slow_blink: float = 0.6   # on and off, purgatory hand-off
    fast_blink: float = 0.12  # on and off, trouble
    flash: float = 0.15       # on and off, trick won
    flashes: int = 2
    pulse: float = 0.5        # fade in and fade out, hand over
    hand_over: float = 3.0    # how long the hand-over pulse lasts
    breathe: float = 1.0      # fade in and fade out, new moon
    wink: float = 0.15        # on, then off for the rest of a second: check the table

    @property
    def flash_total(self) -> float:
        return self.flashes * 2 * self.flash


@dataclass(frozen=True)
class Pattern:
    """What one LED does: steady at ``value``, or blinking (``animated``) with
    gpiozero's blink parameters (a pulse is a blink with fades and no hold)."""

    name: str
    value: float = 0.0
    animated: bool = False
    on_time: float = 0.0
    off_time: float = 0.0
    fade_in_time: float = 0.0
    fade_out_time: float = 0.0
    n: int | None = None

    @classmethod
    def steady(cls, name: str, value: float) -> Pattern:
        return cls(name, value)

    @classmethod
    def blink(cls, name: str, on: float, off: float, n: int | None = None) -> Pattern:
        return cls(name, animated=True, on_time=on, off_time=off, n=n)

    @classmethod
    def pulse(cls, name: str, fade: float, n: int | None = None) -> Pattern:
        return cls(name, animated=True, fade_in_time=fade, fade_out_time=fade, n=n)

    def to_dict(self) -> dict[str, Any]:
        """For the web page: ``{"pattern": "turn", "value": 1.0}`` or the blink timings."""
        if not self.animated:
            return {"pattern": self.name, "value": self.value}
        return {"pattern": self.name, "on_time": self.on_time, "off_time": self.off_time,
                "fade_in_time": self.fade_in_time, "fade_out_time": self.fade_out_time,
                "n": self.n}


@dataclass(frozen=True)
class Lights:
    """A pattern for each seat; ``until``: seconds after which a passing phase (a
    flash, the hand-over pulse) ends and the lights must be worked out again."""

    seats: Mapping[str, Pattern]
    until: float | None = None

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {seat: p.to_dict() for seat, p in self.seats.items()}

    def names(self) -> dict[str, str]:
        """Seat → pattern name, as published for the web page."""
        return {seat: p.name for seat, p in self.seats.items()}


def _all(pattern: Pattern, until: float | None = None) -> Lights:
    return Lights({seat: pattern for seat in SEAT_NAMES}, until)


def _only(lit: Mapping[str, Pattern], until: float | None = None) -> Lights:
    off = Pattern.steady(OFF, 0.0)
    return Lights({seat: lit.get(seat, off) for seat in SEAT_NAMES}, until)


def trouble(snapshot: Snapshot) -> bool:
    """A refused card waits (R9) or the camera is lost."""
    status = snapshot.get("status") or {}
    return bool(snapshot.get("refused")) or status.get("camera") == "lost"


def party_seats(hand: Mapping[str, Any], party: str) -> list[str]:
    """The seats that play for ``party`` in this hand, without the empty new-moon
    seat (three players: the soloist alone for the moon, R8)."""
    moon = list(hand.get("moon_seats") or ("north", "south"))
    seats = moon if party == "moon" else [s for s in SEAT_NAMES if s not in moon]
    return [s for s in seats if s != hand.get("new_moon")]


def hand_winners(hand: Mapping[str, Any]) -> list[str]:
    """Seats of the party (three players: the person) that scored more in a
    complete hand; every player's seat on a draw."""
    score = hand.get("score") or {}
    sun, moon = score.get("sun", 0), score.get("moon", 0)
    if sun == moon:
        return party_seats(hand, "sun") + party_seats(hand, "moon")
    return party_seats(hand, "sun" if sun > moon else "moon")


def match_winners(snapshot: Snapshot) -> list[str]:
    """Seats of the match winner (a party, or a person's name with three players)."""
    hand = snapshot.get("hand") or {}
    winner = (snapshot.get("match") or {}).get("winner")
    if winner in ("sun", "moon"):
        return party_seats(hand, winner)
    players = party_seats(hand, "sun") + party_seats(hand, "moon")
    if winner == "draw":
        return players
    names = hand.get("names") or {}
    return [s for s in players if names.get(s) == winner and winner is not None]


def seat_lights(snapshot: Snapshot, since_card: float | None = None,
                timings: Timings = Timings()) -> Lights:
    """The LED pattern for each seat.

    ``since_card``: seconds since the card that led to this snapshot was laid,
    or ``None`` when the hand last changed otherwise (undo, correction, new
    hand, a restart) — then no flash or pulse is shown.

    >>> snap = {"hand": {"complete": False, "tricks": [], "next": {"seat": "east"}}}
    >>> {s: p.name for s, p in seat_lights(snap).seats.items()}
    {'north': 'off', 'east': 'turn', 'south': 'off', 'west': 'off'}
    """
    t = timings
    if trouble(snapshot):
        return _all(Pattern.blink(TROUBLE, t.fast_blink, t.fast_blink))
    lights = _hand_lights(snapshot, since_card, t)
    gaps = {g["seat"] for g in (snapshot.get("hand") or {}).get("gaps") or ()}
    if not gaps:
        return lights
    check = Pattern.blink(CHECK, t.wink, 1.0 - t.wink)
    return Lights({seat: check if seat in gaps and p.name == OFF else p
                   for seat, p in lights.seats.items()}, lights.until)


def _hand_lights(snapshot: Snapshot, since_card: float | None, t: Timings) -> Lights:
    """:func:`seat_lights` without trouble and gaps."""
    hand = snapshot.get("hand") or {}
    if hand.get("complete"):
        if since_card is not None and since_card < t.hand_over:
            pulse = Pattern.pulse(HAND_OVER, t.pulse)
            return _only({s: pulse for s in hand_winners(hand)}, t.hand_over - since_card)
        over = (snapshot.get("match") or {}).get("over")
        if not over and (snapshot.get("status") or {}).get("camera") == "ended":
            # the recording (or the demo's hands) ended: no next hand will come
            pulse = Pattern.pulse(HAND_OVER, t.pulse)
            return _only({s: pulse for s in hand_winners(hand)})
        nxt_hand = hand.get("next_hand")
        if nxt_hand and nxt_hand.get("leader"):
            return _only({nxt_hand["leader"]: Pattern.steady(TURN, 1.0)})
        if (snapshot.get("match") or {}).get("over"):
            return _only({s: Pattern.steady(MATCH_OVER, 1.0) for s in match_winners(snapshot)})
        return _only({})
    nxt = hand.get("next")
    if not nxt:
        return _only({})
    seat = nxt["seat"]
    pattern = Pattern.steady(TURN, 1.0)
    if seat == hand.get("new_moon"):
        pattern = Pattern.pulse(NEW_MOON, t.breathe)
    tricks = hand.get("tricks") or []
    last = tricks[-1] if tricks else None
    until = None
    if last and len(last.get("plays", ())) == 4:
        if last.get("lies"):
            pattern = Pattern.blink(HANDOFF, t.slow_blink, t.slow_blink)
        elif since_card is not None and since_card < t.flash_total:
            pattern = Pattern.blink(WON, t.flash, t.flash, n=t.flashes)
            until = t.flash_total - since_card
    return _only({seat: pattern}, until)


class SeatLights:
    """Four seat LEDs on a gpiozero ``LEDBoard``, following a game log.

    ``SeatLights(log, pins={"north": 17, ...}, pin_factory=factory)`` subscribes
    to the log and shows :func:`seat_lights` of every new snapshot. Without
    ``pin_factory`` one is chosen by :func:`hardware.pins.make_factory`. If the
    LEDs cannot be driven (GPIO busy, no permission) that is a warning: the
    patterns are still published for the web page. ``close()`` turns them off.
    """

    def __init__(
        self,
        log: GameLog | None = None,
        *,
        pins: Mapping[str, PinSpec] = DEFAULT_LED_PINS,
        pin_factory: Factory | None = None,
        active_high: bool = True,
        timings: Timings = Timings(),
        clock: Callable[[], float] = time.monotonic,
        gpio: bool = True,
    ) -> None:
        self.log = log
        self.timings = timings
        self._clock = clock
        self._lock = threading.RLock()
        self._card_at: float | None = None
        self._shown: dict[str, Pattern] = {}
        #: The lights shown now (patterns with their timings).
        self.current: Lights | None = None
        self._together = False  # one LEDBoard-wide animation drives all four
        self._timer: threading.Timer | None = None
        self._closed = False
        self._testing = False
        self._unsubscribe: Callable[[], None] | None = None
        self.factory_name: str | None = None
        self.board: LEDBoard | None = None
        self.pins = dict(pins)
        if gpio:
            if pin_factory is None:
                pin_factory, self.factory_name = gpio_pins.make_factory()
            else:
                self.factory_name = "mock" if gpio_pins.is_mock(pin_factory) else "gpio"
            try:
                self.board = LEDBoard(**{s: self.pins[s] for s in SEAT_NAMES}, pwm=True,
                                      active_high=active_high, pin_factory=pin_factory)
            except Exception as exc:  # GPIO trouble must not stop the scoring
                logger.warning(
                    "seat LEDs: cannot drive pins %s (%s); showing them on the web page only",
                    ", ".join(str(self.pins[s]) for s in SEAT_NAMES), exc)
                self.factory_name = None
        if log is not None:
            self._unsubscribe = log.subscribe(self._on_event)
            self.refresh()

    @property
    def simulated(self) -> bool:
        """True when no real LED is lit (mock pins or no GPIO)."""
        return self.board is None or self.factory_name == "mock"

    # -- following the log ------------------------------------------------------------------
    def _on_event(self, event: Mapping[str, Any], snapshot: Snapshot) -> None:
        data = event.get("data") or {}
        if event.get("type") == "status" and "leds" in data:
            return  # our own publication
        if event.get("type") == "play":
            self._card_at = self._clock()
        elif event.get("type") in _NOT_A_CARD:
            self._card_at = None
        self.show(snapshot)

    @contextlib.contextmanager
    def _locked(self) -> Iterator[None]:
        """The log's lock, then ours: the order the log's listeners run in."""
        with contextlib.ExitStack() as stack:
            if self.log is not None:
                stack.enter_context(self.log.lock)
            stack.enter_context(self._lock)
            yield

    def refresh(self) -> None:
        """Work the lights out again from the log's current snapshot."""
        if self.log is None or self._closed:
            return
        with self._locked():
            self.show(self.log.snapshot())

    def show(self, snapshot: Snapshot) -> Lights:
        """Show the lights for ``snapshot`` and publish them; returns them."""
        with self._locked():
            since = None if self._card_at is None else self._clock() - self._card_at
            lights = seat_lights(snapshot, since, self.timings)
            if self._closed or self._testing:
                return lights
            self.apply(lights)
            self._arm(lights.until)
        return lights

    def test(self, delay: float = 1.0, sleep: Callable[[float], None] = time.sleep) -> None:
        """Light each seat in turn for ``delay`` seconds, then show the game again.
        Blocks: run it in a thread of its own (the web page's "test LEDs")."""
        with self._locked():
            if self._testing or self._closed:
                return
            self._testing = True
            self._arm(None)
        try:
            for seat in SEAT_NAMES:
                with self._locked():
                    if self._closed:
                        return
                    self.apply(_only({seat: Pattern.steady(TEST, 1.0)}))
                sleep(delay)
        finally:
            with self._locked():
                self._testing = False
            if self.log is not None:
                self.refresh()
            else:
                self.apply(_only({}))

    def _arm(self, until: float | None) -> None:
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        if until is not None:
            self._timer = threading.Timer(max(until, 0.0), self.refresh)
            self._timer.daemon = True
            self._timer.start()

    # -- driving the LEDs -------------------------------------------------------------------
    def apply(self, lights: Lights) -> None:
        """Set each LED whose pattern changed; animations run in gpiozero's threads."""
        with self._locked():
            wanted = dict(lights.seats)
            if wanted != self._shown:
                try:
                    self._drive(wanted)
                except Exception as exc:  # a failing pin must not stop the scoring
                    logger.warning("seat LEDs: %s", exc)
                self._shown = wanted
            self.current = lights
            self._publish(lights)

    def _drive(self, wanted: dict[str, Pattern]) -> None:
        board = self.board
        if board is None:
            return
        first = wanted[SEAT_NAMES[0]]
        together = first.animated and all(p == first for p in wanted.values())
        if together:
            # All four alike (trouble): one board-wide animation keeps them in step.
            board.blink(first.on_time, first.off_time, first.fade_in_time,
                        first.fade_out_time, first.n, background=True)
            self._together = True
            return
        changed = [s for s in SEAT_NAMES if wanted[s] != self._shown.get(s)]
        if self._together:
            board.off()  # stops the board-wide animation before single LEDs take over
            self._together = False
            changed = list(SEAT_NAMES)
        for seat in changed:
            _drive_led(getattr(board, seat), wanted[seat])

    def _publish(self, lights: Lights) -> None:
        if self.log is None:
            return
        self.log.set_status("leds", lights.names())

    def value(self, seat: str) -> float | None:
        """The LED's current brightness (0…1), ``None`` without GPIO."""
        if self.board is None:
            return None
        return float(getattr(self.board, seat).value)

    def close(self) -> None:
        """Stop following the log, turn the LEDs off and release the pins."""
        with self._locked():
            self._closed = True
            if self._unsubscribe is not None:
                self._unsubscribe()
            if self._timer is not None:
                self._timer.cancel()
            if self.board is not None:
                try:
                    self.board.close()
                except Exception as exc:
                    logger.warning("seat LEDs: closing: %s", exc)
                self.board = None

    def __enter__(self) -> SeatLights:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _drive_led(led: Any, pattern: Pattern) -> None:
    if pattern.animated:
        led.blink(pattern.on_time, pattern.off_time, pattern.fade_in_time,
                  pattern.fade_out_time, pattern.n, background=True)
    else:
        led.value = pattern.value


# -- the service's entry point ----------------------------------------------------------------
@dataclass
class Hardware:
    """The LEDs and (optional) buttons the service runs; ``close()`` at exit."""

    lights: SeatLights | None = None
    buttons: Buttons | None = None
    factory: Factory | None = None
    factory_name: str | None = None
    owns_factory: bool = False

    def close(self) -> None:
        """Turn the LEDs off and release every pin (and a factory ``start`` made)."""
        if self.buttons is not None:
            self.buttons.close()
        if self.lights is not None:
            self.lights.close()
        if self.owns_factory and self.factory is not None:
            try:
                self.factory.close()
            except Exception as exc:
                logger.warning("GPIO: closing the pin factory: %s", exc)
            self.factory = None


def start(log: GameLog, config: HardwareConfig | None = None, *,
          pin_factory: Factory | None = None, timings: Timings = Timings()) -> Hardware:
    """Start the seat LEDs (and buttons if enabled) for ``log``. Never raises for
    GPIO trouble: it logs a warning and the companion keeps scoring."""
    config = config or HardwareConfig()
    hw = Hardware()
    gpio = config.leds.enabled or config.buttons.enabled
    if gpio and pin_factory is None:
        pin_factory, hw.factory_name = gpio_pins.make_factory(config.leds.factory)
        hw.owns_factory = True
    elif pin_factory is not None:
        hw.factory_name = "mock" if gpio_pins.is_mock(pin_factory) else "gpio"
    hw.factory = pin_factory
    hw.lights = SeatLights(log, pins=config.leds.pins, pin_factory=pin_factory,
                           active_high=config.leds.active_high, timings=timings,
                           gpio=config.leds.enabled)
    if config.buttons.enabled:
        from hardware.buttons import Buttons

        b = config.buttons
        hw.buttons = Buttons(log, undo_pin=b.undo, next_pin=b.next, buzzer_pin=b.buzzer,
                             hold_time=b.hold_time, bounce_time=b.bounce_time,
                             pin_factory=pin_factory)
    return hw


# -- `twilight-companion leds test` -------------------------------------------------------------
def run_test(args: argparse.Namespace, *, pin_factory: Factory | None = None,
             out: TextIO | None = None, sleep: Callable[[float], None] = time.sleep) -> int:
    """Light each seat in turn and name it, for checking the wiring."""
    out = out or sys.stdout
    try:
        config = (HardwareConfig.from_file(args.config) if getattr(args, "config", None)
                  else HardwareConfig())
    except (OSError, ValueError) as exc:
        print(f"twilight-companion leds test: {exc}", file=sys.stderr)
        return 2
    delay = max(float(getattr(args, "delay", 1.0) or 0.0), 0.0)
    owns = pin_factory is None
    if pin_factory is None:
        pin_factory, name = gpio_pins.make_factory(config.leds.factory)
    else:
        name = "mock" if gpio_pins.is_mock(pin_factory) else "gpio"
    if name == "mock":
        print("No GPIO here: using gpiozero's mock pins, nothing will light.", file=out)
    seat_pins = config.leds.pins
    try:
        board = LEDBoard(**seat_pins, pwm=True, active_high=config.leds.active_high,
                         pin_factory=pin_factory)
    except Exception as exc:
        print(f"twilight-companion leds test: cannot drive the LEDs: {exc} (is the companion "
              "service running and holding the pins? stop it first)", file=sys.stderr)
        if owns:
            pin_factory.close()
        return 1
    try:
        for seat in SEAT_NAMES:
            board.off()
            getattr(board, seat).on()
            label = gpio_pins.pin_label(seat_pins[seat], pin_factory)
            print(f"{seat:<5}  {label}: lit now", file=out, flush=True)
            sleep(delay)
        board.off()
        print("done: each seat's LED should have lit once, north first, clockwise", file=out)
    finally:
        board.close()
        if owns:
            pin_factory.close()
    return 0
