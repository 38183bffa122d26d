"""Seat LEDs on gpiozero's mock pins, driven through a real game log (issue 6).

Blinking is checked on the mock pins' recorded states and times
(``assert_states_and_times``); where gpiozero's background threads need time
the tests wait on a condition with a bounded timeout.
"""

from __future__ import annotations

import argparse
import io
import logging
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from gpiozero import LED
from gpiozero.pins.mock import MockFactory, MockPWMPin

from companion.core.cards import CARDS
from companion.core.gamelog import GameLog
from hardware import pins as gpio_pins
from hardware.config import HardwareConfig
from hardware.leds import (
    CHECK,
    HAND_OVER,
    HANDOFF,
    MATCH_OVER,
    NEW_MOON,
    OFF,
    TEST,
    TROUBLE,
    TURN,
    WON,
    SeatLights,
    Timings,
    hand_winners,
    run_test,
    seat_lights,
    start,
)

SEATS = ("north", "east", "south", "west")
PINS = {"north": 17, "east": 27, "south": 22, "west": 23}
#: Short but distinguishable periods: the mock pins' tolerance is 0.05 s.
FAST = Timings(slow_blink=0.2, fast_blink=0.07, flash=0.07, pulse=0.1, hand_over=0.6,
               breathe=0.2)

# Trick 1 lies (south's purgatory: south leads next, R4); trick 2 south takes
# with the hierarch, and with it the lying trick.
OPENING = [
    ("east", "sun-souls-7"), ("south", "moon-purgatory"), ("west", "sun-souls-3"),
    ("north", "moon-souls-4"),
    ("south", "moon-hierarch"), ("west", "sun-novice"), ("north", "moon-souls-5"),
    ("east", "sun-souls-4"),
]




@pytest.fixture
def lights(log: GameLog, factory: MockFactory) -> Iterator[SeatLights]:
    seat_lights_ = SeatLights(log, pins=PINS, pin_factory=factory, timings=FAST)
    yield seat_lights_
    seat_lights_.close()


def wait_for(condition: Callable[[], bool], timeout: float = 3.0) -> bool:
    """Poll ``condition`` until true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def pin(factory: MockFactory, seat: str) -> MockPWMPin:
    return factory.pin(PINS[seat])


def values(factory: MockFactory) -> dict[str, float]:
    return {seat: pin(factory, seat).state for seat in SEATS}


def patterns(log: GameLog) -> dict[str, str]:
    """What the web page is told: seat → pattern name."""
    leds = log.snapshot()["status"]["leds"]
    assert set(leds) == set(SEATS)
    return dict(leds)


def only(seat: str | None, pattern: str = TURN) -> dict[str, str]:
    return {s: (pattern if s == seat else OFF) for s in SEATS}


def clear(factory: MockFactory) -> None:
    for seat in SEATS:
        pin(factory, seat).clear_states()


def blink_states(p: MockPWMPin, period: float, changes: int) -> list[tuple[float, float]]:
    """Expected (delta, state) records of a blink that starts "on" after
    ``clear_states()``. The first change comes after gpiozero's thread has
    started, which on a busy machine takes a while: that delay is taken as
    recorded, every later change must come ``period`` after the one before."""
    start = p.states[0].state
    first = p.states[1].timestamp
    out = [(0.0, start)]
    state = 1.0
    if start != 1.0:
        out.append((first, 1.0))
    else:  # already on: the first recorded change is the first "off"
        state = 0.0
        out.append((first, 0.0))
    while len(out) < changes:
        state = 1.0 - state
        out.append((period, state))
    return out


def assert_blinking(p: MockPWMPin, period: float, changes: int = 5) -> None:
    assert wait_for(lambda: len(p.states) >= changes)
    p.assert_states_and_times(blink_states(p, period, changes))
    if p.states[0].state == 1.0:
        assert p.states[1].timestamp >= period - 0.05  # it stayed on for a period first


def play(log: GameLog, seat: str, card: str) -> dict[str, Any]:
    return log.play(seat, card, source="test")


def finish_hand(log: GameLog) -> None:
    """Lay the cards not yet played, each seat the first one left of its cult (R3)."""
    played = {p["card"] for p in log.snapshot()["hand"]["plays"]}
    left = {cult: [c.id for c in CARDS if c.id.startswith(cult) and c.id not in played]
            for cult in ("sun", "moon")}
    while not (hand := log.snapshot()["hand"])["complete"]:
        nxt = hand["next"]
        play(log, nxt["seat"], left[nxt["cult"]].pop(0))


# -- the pure function --------------------------------------------------------------------------
def hand_snapshot(**hand: Any) -> dict[str, Any]:
    base: dict[str, Any] = {"complete": False, "tricks": [], "next": None,
                            "moon_seats": ["north", "south"], "new_moon": None,
                            "score": {"sun": 0, "moon": 0}, "next_hand": None, "names": {}}
    base.update(hand)
    return {"hand": base, "match": {"over": False, "winner": None}, "refused": None,
            "status": {}}


def names(lights_: Any) -> dict[str, str]:
    return {seat: p.name for seat, p in lights_.seats.items()}


def test_pure_turn_and_nothing_known() -> None:
    assert names(seat_lights(hand_snapshot())) == only(None)
    assert names(seat_lights(hand_snapshot(next={"seat": "west"}))) == only("west")


def test_pure_flash_only_just_after_a_card() -> None:
    trick = {"leader": "east", "plays": [{}] * 4, "winner": "north", "lies": False}
    snap = hand_snapshot(tricks=[trick], next={"seat": "north"})
    lit = seat_lights(snap, since_card=0.1, timings=FAST)
    assert names(lit) == only("north", WON)
    assert lit.until == pytest.approx(FAST.flash_total - 0.1)
    assert names(seat_lights(snap, since_card=1.0, timings=FAST)) == only("north")
    assert names(seat_lights(snap, since_card=None, timings=FAST)) == only("north")


@pytest.mark.parametrize(("score", "moon_seats", "new_moon", "winners"), [
    ({"sun": 51, "moon": 0}, ["north", "south"], None, ["east", "west"]),
    ({"sun": 0, "moon": 18}, ["north", "south"], None, ["north", "south"]),
    ({"sun": 0, "moon": 18}, ["east", "west"], "west", ["east"]),  # the soloist alone (R8)
    ({"sun": 30, "moon": 18}, ["east", "west"], "west", ["north", "south"]),
    ({"sun": 0, "moon": 0}, ["north", "south"], "north", ["east", "west", "south"]),
])
def test_pure_hand_winners(score: dict[str, int], moon_seats: list[str], new_moon: str | None,
                           winners: list[str]) -> None:
    hand = hand_snapshot(score=score, moon_seats=moon_seats, new_moon=new_moon)["hand"]
    assert sorted(hand_winners(hand)) == sorted(winners)


def test_pure_match_over_lights_the_winner() -> None:
    snap = hand_snapshot(complete=True, score={"sun": 0, "moon": 60},
                         moon_seats=["east", "west"], new_moon="west",
                         names={"east": "Ann", "south": "Bob", "north": "Cy", "west": None})
    snap["match"] = {"over": True, "winner": "Bob"}
    assert names(seat_lights(snap, since_card=0.0, timings=FAST)) == {
        "north": OFF, "east": HAND_OVER, "south": OFF, "west": OFF}
    assert names(seat_lights(snap, since_card=None)) == only("south", MATCH_OVER)


def test_pure_an_ended_recording_keeps_the_hand_over_pattern() -> None:
    """Nothing more will come (the recording or the demo's hands ended): the hand's
    winners keep pulsing instead of lighting a leader for a hand nobody will play."""
    snap = hand_snapshot(complete=True, score={"sun": 51, "moon": 0},
                         next_hand={"leader": "south"})
    assert names(seat_lights(snap, since_card=None)) == only("south")
    snap["status"] = {"camera": "ended"}
    assert names(seat_lights(snap, since_card=None)) == {
        "north": OFF, "east": HAND_OVER, "south": OFF, "west": HAND_OVER}
    snap["match"] = {"over": True, "winner": "sun"}  # a won match shows its winner
    snap["hand"]["next_hand"] = None
    assert names(seat_lights(snap, since_card=None)) == {
        "north": OFF, "east": MATCH_OVER, "south": OFF, "west": MATCH_OVER}


def test_pure_trouble_beats_everything() -> None:
    snap = hand_snapshot(next={"seat": "east"})
    snap["status"] = {"camera": "lost"}
    assert names(seat_lights(snap)) == {s: TROUBLE for s in SEATS}
    snap["status"] = {"camera": "ok"}
    snap["refused"] = {"seat": "east", "card": "moon-adept", "message": "R3"}
    assert names(seat_lights(snap)) == {s: TROUBLE for s in SEATS}


# -- a scripted hand through the game log -----------------------------------------------------
def test_scripted_hand(log: GameLog, lights: SeatLights, factory: MockFactory) -> None:
    # Nobody known to lead yet: all dark; the first card tells who leads (C7).
    assert values(factory) == dict.fromkeys(SEATS, 0.0)
    assert patterns(log) == only(None)
    assert lights.simulated

    for seat, card in OPENING[:3]:
        play(log, seat, card)
    assert values(factory) == {"north": 1.0, "east": 0.0, "south": 0.0, "west": 0.0}

    # Purgatory hand-off (R4): the trick lies, south (whose purgatory it was)
    # leads and blinks slowly until the first card of the next trick.
    clear(factory)
    play(log, *OPENING[3])
    assert patterns(log) == only("south", HANDOFF)
    assert_blinking(pin(factory, "south"), FAST.slow_blink, changes=5)
    assert pin(factory, "north").state == 0.0
    play(log, *OPENING[4])
    assert values(factory) == {"north": 0.0, "east": 0.0, "south": 0.0, "west": 1.0}
    assert patterns(log) == only("west")

    # A trick won: the winner flashes twice, then stays lit to lead.
    play(log, *OPENING[5])
    play(log, *OPENING[6])
    clear(factory)
    play(log, *OPENING[7])
    assert patterns(log) == only("south", WON)
    south = pin(factory, "south")
    assert wait_for(lambda: patterns(log) == only("south"))
    assert wait_for(lambda: len(south.states) >= 6)
    f = FAST.flash
    south.assert_states_and_times(blink_states(south, f, 5))  # on, off, on, off
    assert len(south.states) == 6 and south.state == 1.0  # then on to lead
    assert sum(s.timestamp for s in south.states) == pytest.approx(FAST.flash_total, abs=0.1)
    assert [p.state for p in pin(factory, "east").states] == [1.0, 0.0]

    # A refused card (R9): all four blink fast, in step, until it is corrected.
    clear(factory)
    log.refuse("south", "sun-altar", "sun-altar cannot lie at a moon seat (R3)")
    assert patterns(log) == dict.fromkeys(SEATS, TROUBLE)
    for seat in SEATS:
        assert_blinking(pin(factory, seat), FAST.fast_blink, changes=5)
    play(log, "south", "moon-high-priest")  # the table lays the right card
    assert log.snapshot()["refused"] is None
    assert values(factory) == {"north": 0.0, "east": 0.0, "south": 0.0, "west": 1.0}
    assert patterns(log) == only("west")

    # A misread card: refused, then corrected on the web page.
    log.refuse("west", "sun-souls-6", "sun-souls-6 ... R9")
    assert patterns(log) == dict.fromkeys(SEATS, TROUBLE)
    log.correct(9, "moon-priest", source="web")
    assert values(factory) == {"north": 0.0, "east": 0.0, "south": 0.0, "west": 1.0}
    log.correct(9, "moon-high-priest", source="web")

    # Camera lost: all four blink fast until frames come again.
    clear(factory)
    log.set_status("camera", "lost")
    assert patterns(log) == dict.fromkeys(SEATS, TROUBLE)
    assert_blinking(pin(factory, "north"), FAST.fast_blink, changes=4)
    log.set_status("camera", "ok")
    assert values(factory) == {"north": 0.0, "east": 0.0, "south": 0.0, "west": 1.0}

    # Undo: straight back, no flash.
    log.undo(source="test")
    assert patterns(log) == only("south")
    play(log, "south", "moon-high-priest")

    # Hand over: the side that scored more pulses for hand_over seconds, then
    # the next hand's leader lights.
    finish_hand(log)
    t0 = time.monotonic()
    snap = log.snapshot()
    winners = hand_winners(snap["hand"])
    leader = snap["hand"]["next_hand"]["leader"]
    assert patterns(log) == {s: (HAND_OVER if s in winners else OFF) for s in SEATS}
    assert wait_for(lambda: patterns(log) == only(leader), timeout=FAST.hand_over + 2)
    assert time.monotonic() - t0 == pytest.approx(FAST.hand_over, abs=0.3)
    for seat in winners:
        levels = [p.state for p in pin(factory, seat).states]
        assert any(0.0 < v < 1.0 for v in levels) and 1.0 in levels  # it pulsed
    assert values(factory) == {s: (1.0 if s == leader else 0.0) for s in SEATS}


def test_three_players_new_moon(log: GameLog, lights: SeatLights, factory: MockFactory) -> None:
    log.new_match(mode="three", soloist="south",
                  names={"south": "Ann", "west": "Bob", "east": "Cy", "north": None})
    # The soloist leads (R8).
    assert patterns(log) == only("south")
    assert values(factory)["south"] == 1.0
    play(log, "south", "moon-souls-3")
    play(log, "west", "sun-souls-3")
    # The new moon (north, the empty seat) is on turn: the soloist lays for it,
    # and north's LED breathes instead of shining steadily.
    clear(factory)
    assert patterns(log) == only("north", NEW_MOON)
    north = pin(factory, "north")
    assert wait_for(lambda: any(0.0 < s.state < 1.0 for s in north.states))
    assert wait_for(lambda: north.state == 1.0)
    play(log, "north", "moon-souls-4")
    assert patterns(log) == only("east")
    assert values(factory) == {"north": 0.0, "east": 1.0, "south": 0.0, "west": 0.0}
    # The hand over: the person who scored more pulses (not the empty seat).
    finish_hand(log)
    snap = log.snapshot()
    assert "north" not in hand_winners(snap["hand"])
    assert patterns(log) == {s: (HAND_OVER if s in hand_winners(snap["hand"]) else OFF)
                             for s in SEATS}
    # After the hand the seats rotate (R8): east becomes soloist and leads.
    assert wait_for(lambda: patterns(log) == only(snap["hand"]["next_hand"]["leader"]))
    assert snap["hand"]["next_hand"]["leader"] == "east"


# -- GPIO trouble, the service entry point, `leds test` -----------------------------------------
def test_busy_pin_is_a_warning_and_scoring_goes_on(
        log: GameLog, factory: MockFactory, caplog: pytest.LogCaptureFixture) -> None:
    other = LED(17, pin_factory=factory)
    with caplog.at_level(logging.WARNING, logger="hardware.leds"):
        seat_lights_ = SeatLights(log, pins=PINS, pin_factory=factory, timings=FAST)
    try:
        assert "cannot drive pins" in caplog.text
        assert seat_lights_.board is None and seat_lights_.simulated
        play(log, "east", "sun-souls-7")
        assert patterns(log) == only("south")  # still shown on the web page
    finally:
        seat_lights_.close()
        other.close()


def test_start_with_config(log: GameLog, factory: MockFactory) -> None:
    config = HardwareConfig.from_dict({"leds": {"north": 5, "east": 6, "south": 12,
                                                "west": 16}})
    hw = start(log, config, pin_factory=factory, timings=FAST)
    try:
        assert hw.buttons is None and hw.lights is not None
        play(log, "east", "sun-souls-7")
        assert factory.pin(12).state == 1.0 and factory.pin(22).state == 0.0
    finally:
        hw.close()
    assert factory.pin(12).state == 0.0


def test_leds_disabled_still_publishes(log: GameLog) -> None:
    hw = start(log, HardwareConfig.from_dict({"leds": {"enabled": False}}))
    try:
        assert hw.factory is None and hw.lights is not None and hw.lights.board is None
        play(log, "east", "sun-souls-7")
        assert patterns(log) == only("south")
    finally:
        hw.close()


def test_leds_test_command(factory: MockFactory, tmp_path: Path) -> None:
    out = io.StringIO()
    slept: list[float] = []
    args = argparse.Namespace(config=None, delay=0.5)
    assert run_test(args, pin_factory=factory, out=out, sleep=slept.append) == 0
    text = out.getvalue()
    assert "mock pins" in text
    for seat, number in PINS.items():
        assert f"{seat:<5}  GPIO{number}" in text
    assert slept == [0.5] * 4
    for seat in SEATS:
        assert [s.state for s in pin(factory, seat).states] == [0.0, 1.0, 0.0]
    factory.reset()

    config = tmp_path / "companion.toml"
    config.write_text("[leds]\nnorth = 4\n[web]\nport = 8000\n")
    out = io.StringIO()
    args = argparse.Namespace(config=str(config), delay=0)
    assert run_test(args, pin_factory=factory, out=out) == 0
    assert "north  GPIO4 (header pin 7)" in out.getvalue()


def test_leds_test_bad_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "companion.toml"
    config.write_text("[leds]\nnroth = 4\n")
    assert run_test(argparse.Namespace(config=str(config), delay=0)) == 2
    assert "leds.nroth" in capsys.readouterr().err


# -- pin factories and config -------------------------------------------------------------------
def test_factory_off_a_pi_is_mock(caplog: pytest.LogCaptureFixture,
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(gpio_pins, "on_raspberry_pi", lambda: False)
    with caplog.at_level(logging.INFO, logger="hardware.pins"):
        factory, name = gpio_pins.make_factory("auto")
    assert name == "mock" and isinstance(factory, MockFactory)
    assert factory.pin_class is MockPWMPin
    assert "not a Raspberry Pi" in caplog.text


def test_factory_failure_falls_back(caplog: pytest.LogCaptureFixture,
                                    monkeypatch: pytest.MonkeyPatch) -> None:
    class Broken:
        def load(self) -> Any:
            raise OSError("no /dev/gpiochip0")

    monkeypatch.setattr(gpio_pins, "entry_points", lambda group: {"lgpio": Broken()})
    monkeypatch.setattr(gpio_pins, "on_raspberry_pi", lambda: True)
    with caplog.at_level(logging.WARNING, logger="hardware.pins"):
        factory, name = gpio_pins.make_factory("auto")
    assert name == "mock" and isinstance(factory, MockFactory)
    assert "lgpio pin factory cannot start" in caplog.text


def test_on_raspberry_pi(tmp_path: Path) -> None:
    model = tmp_path / "model"
    model.write_bytes(b"Raspberry Pi 5 Model B Rev 1.0\x00")
    assert gpio_pins.on_raspberry_pi(model)
    assert not gpio_pins.on_raspberry_pi(tmp_path / "missing")


def test_config_defaults_and_keys() -> None:
    config = HardwareConfig.from_dict({})
    assert config.leds.pins == PINS and config.leds.enabled and not config.buttons.enabled
    assert (config.buttons.undo, config.buttons.next, config.buttons.buzzer) == (5, 6, None)
    config = HardwareConfig.from_dict({
        "camera": {"anything": 1},
        "leds": {"north": "GPIO4", "factory": "mock"},
        "buttons": {"enabled": True, "next": False, "buzzer": 13, "hold_time": 2,
                    "bounce_time": 0},
    })
    assert config.leds.north == 4 and config.leds.factory == "mock"
    assert config.buttons.next is None and config.buttons.buzzer == 13
    assert config.buttons.hold_time == 2.0 and config.buttons.bounce_time is None
    one = HardwareConfig.from_dict({"buttons": {"enabled": True, "undo": 5, "next": 5}})
    assert one.buttons.undo == one.buttons.next == 5


@pytest.mark.parametrize(("mapping", "key"), [
    ({"leds": {"nroth": 17}}, "leds.nroth"),
    ({"leds": {"north": 40}}, "leds.north"),
    ({"leds": {"north": True}}, "leds.north"),
    ({"leds": {"east": 17}}, "leds.east"),
    ({"leds": {"factory": "pigpiod"}}, "leds.factory"),
    ({"leds": {"enabled": "yes"}}, "leds.enabled"),
    ({"leds": []}, "leds"),
    ({"buttons": {"hold_time": -1}}, "buttons.hold_time"),
    ({"buttons": {"enabled": True, "buzzer": 17}}, "buttons.buzzer"),
    ({"buttons": {"undo_pin": 5}}, "buttons.undo_pin"),
])
def test_config_errors_name_the_key(mapping: dict[str, Any], key: str) -> None:
    with pytest.raises(ValueError, match=key.replace(".", r"\.")):
        HardwareConfig.from_dict(mapping)


def test_web_led_test_lights_each_seat_then_the_game(
        log: GameLog, lights: SeatLights, factory: MockFactory) -> None:
    play(log, "east", "sun-souls-7")
    clear(factory)
    seen: list[dict[str, str]] = []

    def sleep(_delay: float) -> None:
        seen.append(patterns(log))
        if len(seen) < 4:  # the game goes on meanwhile; the test is not disturbed
            play(log, *OPENING[len(seen)])

    lights.test(delay=0.5, sleep=sleep)
    assert seen == [only(seat, TEST) for seat in SEATS]
    for seat in SEATS:
        assert 1.0 in [s.state for s in pin(factory, seat).states]
    # Afterwards the lights follow the game again: four cards later the trick lies.
    assert patterns(log) == only("south", HANDOFF)
    assert lights.current is not None
    assert lights.current.to_dict()["south"] == {
        "pattern": HANDOFF, "on_time": FAST.slow_blink, "off_time": FAST.slow_blink,
        "fade_in_time": 0.0, "fade_out_time": 0.0, "n": None}


def test_leds_test_with_busy_pins(factory: MockFactory,
                                  capsys: pytest.CaptureFixture[str]) -> None:
    other = LED(22, pin_factory=factory)
    try:
        assert run_test(argparse.Namespace(config=None, delay=0), pin_factory=factory) == 1
        assert "cannot drive the LEDs" in capsys.readouterr().err
    finally:
        other.close()


# -- check the table: a seat whose card could not be read (issue 21) ---------------------------
def test_pure_a_gap_seat_winks_check_the_table() -> None:
    gap = {"index": 2, "seat": "south", "trick": 1, "place": 2, "choices": []}
    snap = hand_snapshot(next={"seat": "west"}, gaps=[gap])
    assert names(seat_lights(snap)) == {"north": OFF, "east": OFF, "south": CHECK,
                                        "west": TURN}
    check = seat_lights(snap).seats["south"]
    assert check.animated and check.on_time < check.off_time  # a short wink
    # the seat on turn shows its turn even with a gap of its own; trouble beats it all
    assert names(seat_lights(hand_snapshot(next={"seat": "south"}, gaps=[gap]))) == only("south")
    snap["refused"] = {"seat": "east", "card": "moon-adept", "message": "R3"}
    assert names(seat_lights(snap)) == {s: TROUBLE for s in SEATS}


def test_a_gap_winks_on_the_pins_until_it_is_named(log: GameLog, lights: SeatLights,
                                                   factory: MockFactory) -> None:
    play(log, "east", "sun-souls-3")
    clear(factory)
    log.gap("south", source="test")
    assert patterns(log) == {"north": OFF, "east": OFF, "south": CHECK, "west": TURN}
    south = pin(factory, "south")
    assert wait_for(lambda: len(south.states) >= 4)
    states = [st.state for st in south.states[:4]]
    assert states in ([0.0, 1.0, 0.0, 1.0], [1.0, 0.0, 1.0, 0.0])  # on and off by turns
    assert pin(factory, "west").state == 1.0
    log.correct(2, "moon-hierarch", source="test")
    assert patterns(log) == only("west")
    assert wait_for(lambda: south.state == 0.0)
