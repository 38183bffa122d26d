"""Undo/next buttons and the refusal buzzer on gpiozero's mock pins (issue 6).

Presses are ``drive_low()``/``drive_high()`` on the mock pins (the buttons
pull up); the hold time is made short, and the tests wait on conditions with a
bounded timeout.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator

import pytest
from gpiozero.pins.mock import MockFactory

from companion.core.cards import CARDS
from companion.core.gamelog import GameLog
from hardware.buttons import NOTHING_BEEP, REFUSED_BEEP, Buttons
from hardware.config import HardwareConfig
from hardware.leds import Timings, start

UNDO, NEXT, BUZZER = 5, 6, 13
HOLD = 0.1




@pytest.fixture
def buttons(log: GameLog, factory: MockFactory) -> Iterator[Buttons]:
    b = Buttons(log, undo_pin=UNDO, next_pin=NEXT, buzzer_pin=BUZZER, hold_time=HOLD,
                bounce_time=None, pin_factory=factory)
    yield b
    b.close()


def wait_for(condition: Callable[[], bool], timeout: float = 3.0) -> bool:
    """Poll ``condition`` until true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.005)
    return True


def plays(log: GameLog) -> int:
    return len(log.snapshot()["hand"]["plays"])


def finish_hand(log: GameLog) -> None:
    played = {p["card"] for p in log.snapshot()["hand"]["plays"]}
    left = {cult: [c.id for c in CARDS if c.id.startswith(cult) and c.id not in played]
            for cult in ("sun", "moon")}
    while not (hand := log.snapshot()["hand"])["complete"]:
        nxt = hand["next"]
        log.play(nxt["seat"], left[nxt["cult"]].pop(0), source="test")


def test_buttons_pull_up(buttons: Buttons, factory: MockFactory) -> None:
    assert factory.pin(UNDO).state is True and factory.pin(NEXT).state is True
    assert buttons.undo_button is not None and not buttons.undo_button.is_pressed


def test_hold_undo(log: GameLog, buttons: Buttons, factory: MockFactory) -> None:
    log.play("east", "sun-souls-7", source="test")
    log.play("south", "moon-priest", source="test")
    undo = factory.pin(UNDO)
    # A short press does nothing.
    undo.drive_low()
    undo.drive_high()
    assert not wait_for(lambda: plays(log) != 2, timeout=3 * HOLD)
    # Held for the hold time: the last card is taken back, once.
    undo.drive_low()
    assert wait_for(lambda: plays(log) == 1)
    undo.drive_high()
    assert log.events()[-1]["type"] == "undo"
    assert log.events()[-1]["data"]["source"] == "button"
    assert not wait_for(lambda: plays(log) != 1, timeout=3 * HOLD)


def test_undo_with_nothing_to_undo_beeps(log: GameLog, buttons: Buttons,
                                         factory: MockFactory) -> None:
    buzzer = factory.pin(BUZZER)
    buzzer.clear_states()
    factory.pin(UNDO).drive_low()
    assert wait_for(lambda: len(buzzer.states) >= 3)
    factory.pin(UNDO).drive_high()
    on, _off, _n = NOTHING_BEEP
    held = buzzer.states[1].timestamp  # the hold time, plus however late the thread ran
    assert held >= HOLD - 0.01
    buzzer.assert_states_and_times([(0, False), (held, True), (on, False)])


def test_next_accepts_a_finished_hand(log: GameLog, buttons: Buttons,
                                      factory: MockFactory) -> None:
    nxt = factory.pin(NEXT)
    log.play("east", "sun-souls-7", source="test")
    nxt.drive_low()
    nxt.drive_high()
    assert log.snapshot()["hand"]["number"] == 1 and plays(log) == 1  # not finished: no-op
    finish_hand(log)
    snap = log.snapshot()
    assert snap["hand"]["complete"] and snap["hand"]["number"] == 1
    leader = snap["hand"]["next_hand"]["leader"]
    nxt.drive_low()
    nxt.drive_high()
    snap = log.snapshot()
    assert snap["hand"]["number"] == 2 and plays(log) == 0
    assert snap["hand"]["next"]["seat"] == leader
    assert log.events()[-1]["type"] == "new_hand"
    # Pressing again does not start yet another hand.
    nxt.drive_low()
    nxt.drive_high()
    assert log.events()[-1]["type"] == "new_hand" and log.snapshot()["hand"]["number"] == 2


def test_next_dismisses_a_refusal_and_the_buzzer_beeps(log: GameLog, buttons: Buttons,
                                                       factory: MockFactory) -> None:
    buzzer = factory.pin(BUZZER)
    buzzer.clear_states()
    log.refuse("east", "moon-adept", "moon-adept cannot lie at a sun seat (R3)")
    assert wait_for(lambda: len(buzzer.states) >= 5)
    on, off, _n = REFUSED_BEEP
    started = buzzer.states[1].timestamp  # gpiozero's beep thread starting
    buzzer.assert_states_and_times([(0, False), (started, True), (on, False), (off, True),
                                    (on, False)])
    factory.pin(NEXT).drive_low()
    factory.pin(NEXT).drive_high()
    assert log.snapshot()["refused"] is None
    assert log.events()[-1]["type"] == "dismiss"


def test_one_button_hold_and_press(log: GameLog, factory: MockFactory) -> None:
    with Buttons(log, undo_pin=UNDO, next_pin=UNDO, hold_time=HOLD, bounce_time=None,
                 pin_factory=factory) as b:
        assert b.next_button is None
        pin = factory.pin(UNDO)
        log.play("east", "sun-souls-7", source="test")
        log.play("south", "moon-priest", source="test")
        pin.drive_low()
        assert wait_for(lambda: plays(log) == 1)
        pin.drive_high()  # released after the hold: no "next" as well
        finish_hand(log)
        pin.drive_low()
        pin.drive_high()  # short press: accept the hand
        assert log.snapshot()["hand"]["number"] == 2 and plays(log) == 0


def test_busy_button_pin_is_a_warning(log: GameLog, factory: MockFactory,
                                      caplog: pytest.LogCaptureFixture) -> None:
    lights = start(log, HardwareConfig(), pin_factory=factory, timings=Timings())
    try:
        with Buttons(log, undo_pin=17, next_pin=NEXT, pin_factory=factory) as b:
            assert b.undo_button is None and b.next_button is not None
        assert "undo button: cannot read pin 17" in caplog.text
    finally:
        lights.close()


def test_start_with_buttons(log: GameLog, factory: MockFactory) -> None:
    config = HardwareConfig.from_dict({"buttons": {"enabled": True, "hold_time": HOLD,
                                                   "buzzer": BUZZER}})
    hw = start(log, config, pin_factory=factory, timings=Timings())
    try:
        assert hw.buttons is not None and hw.buttons.buzzer is not None
        log.play("east", "sun-souls-7", source="test")
        factory.pin(UNDO).drive_low()
        assert wait_for(lambda: plays(log) == 0)
        factory.pin(UNDO).drive_high()
    finally:
        hw.close()
