"""Optional buttons and buzzer at the table (off unless ``[buttons] enabled``).

- **undo** button: hold it (1 s by default) to take back the last card,
  ``log.undo(source="button")``. A short press does nothing, so a brush
  against it is harmless.
- **next** button: press it to accept a finished hand and start the next
  (``log.new_hand()``); while a refused card waits (R9) a press dismisses it.
- both on one pin: hold to undo, a short press (released before the hold
  time) for next.
- **buzzer**: two short beeps when the rules refuse a card (R9), one long
  beep when a button press cannot do anything.

Every action goes through the same checked game-log calls as the camera and
the web page; the callbacks run in gpiozero's threads.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from gpiozero import Button, Buzzer
from gpiozero.pins import Factory

from companion.core.rules import RuleError
from hardware import pins as gpio_pins
from hardware.pins import NEXT_BUTTON_PIN, UNDO_BUTTON_PIN, PinSpec

if TYPE_CHECKING:
    from companion.core.gamelog import GameLog

logger = logging.getLogger(__name__)

#: Beeps: (on, off, count).
REFUSED_BEEP = (0.08, 0.08, 2)
NOTHING_BEEP = (0.4, 0.0, 1)


class Buttons:
    """Undo/next buttons and a refusal buzzer for a game log.

    ``Buttons(log, undo_pin=5, next_pin=6, buzzer_pin=None, hold_time=1.0,
    bounce_time=0.05, pin_factory=None)``; a pin of ``None`` leaves that part
    out. GPIO trouble is a warning; the companion keeps scoring.
    """

    def __init__(
        self,
        log: GameLog,
        *,
        undo_pin: PinSpec | None = UNDO_BUTTON_PIN,
        next_pin: PinSpec | None = NEXT_BUTTON_PIN,
        buzzer_pin: PinSpec | None = None,
        hold_time: float = 1.0,
        bounce_time: float | None = 0.05,
        pin_factory: Factory | None = None,
    ) -> None:
        self.log = log
        self.undo_button: Button | None = None
        self.next_button: Button | None = None
        self.buzzer: Buzzer | None = None
        self._held = False
        self._lock = threading.Lock()
        self._unsubscribe: Callable[[], None] | None = None
        if pin_factory is None and any(p is not None for p in (undo_pin, next_pin, buzzer_pin)):
            pin_factory, _ = gpio_pins.make_factory()
        one_button = undo_pin is not None and undo_pin == next_pin
        if undo_pin is not None:
            self.undo_button = self._button(undo_pin, "undo", hold_time, bounce_time, pin_factory)
        if self.undo_button is not None:
            self.undo_button.when_held = self._on_held
            if one_button:
                self.undo_button.when_pressed = self._on_pressed
                self.undo_button.when_released = self._on_released_one
        if next_pin is not None and not one_button:
            self.next_button = self._button(next_pin, "next", hold_time, bounce_time, pin_factory)
            if self.next_button is not None:
                self.next_button.when_pressed = self.accept
        if buzzer_pin is not None:
            try:
                self.buzzer = Buzzer(buzzer_pin, pin_factory=pin_factory)
            except Exception as exc:
                logger.warning("buzzer: cannot drive pin %s (%s); no beeps", buzzer_pin, exc)
            else:
                self._unsubscribe = log.subscribe(self._on_event)

    @staticmethod
    def _button(pin: PinSpec, name: str, hold_time: float, bounce_time: float | None,
                factory: Factory | None) -> Button | None:
        try:
            return Button(pin, pull_up=True, hold_time=hold_time, bounce_time=bounce_time,
                          pin_factory=factory)
        except Exception as exc:  # GPIO trouble must not stop the scoring
            logger.warning("%s button: cannot read pin %s (%s); the button is off", name, pin, exc)
            return None

    # -- actions ----------------------------------------------------------------------------
    def undo(self) -> bool:
        """Take back the last card; ``False`` (and a beep) if there is none."""
        try:
            self.log.undo(source="button")
        except RuleError as exc:
            logger.info("undo button: %s", exc)
            self.beep(*NOTHING_BEEP)
            return False
        except Exception as exc:  # storage trouble: the log has said why
            logger.warning("undo button: %s", exc)
            return False
        logger.info("undo button: took back the last card")
        return True

    def accept(self) -> str | None:
        """Accept a finished hand and start the next (``"new_hand"``), or dismiss a
        waiting refusal (``"dismiss"``); ``None`` (and a beep) when neither applies."""
        try:
            with self.log.lock:  # no card may slip in between looking and acting
                snap = self.log.snapshot()
                hand = snap["hand"]
                if snap.get("refused"):
                    self.log.dismiss()
                    return "dismiss"
                if hand.get("complete") and hand.get("next_hand"):
                    self.log.new_hand()
                    logger.info("next button: hand %s accepted, the next one begins",
                                hand.get("number"))
                    return "new_hand"
        except RuleError as exc:
            logger.info("next button: %s", exc)
        except Exception as exc:
            logger.warning("next button: %s", exc)
            return None
        else:
            logger.info("next button: nothing to accept (the hand is not finished)")
        self.beep(*NOTHING_BEEP)
        return None

    def beep(self, on: float, off: float, n: int) -> None:
        """Beep in gpiozero's background thread (no-op without a buzzer)."""
        if self.buzzer is None:
            return
        try:
            self.buzzer.beep(on_time=on, off_time=off, n=n, background=True)
        except Exception as exc:
            logger.warning("buzzer: %s", exc)

    # -- gpiozero callbacks -----------------------------------------------------------------
    def _on_held(self) -> None:
        with self._lock:
            self._held = True
        self.undo()

    def _on_pressed(self) -> None:
        with self._lock:
            self._held = False

    def _on_released_one(self) -> None:
        with self._lock:
            held, self._held = self._held, False
        if not held:
            self.accept()

    def _on_event(self, event: Mapping[str, Any], snapshot: Mapping[str, Any]) -> None:
        if event.get("type") == "refused":
            self.beep(*REFUSED_BEEP)

    def close(self) -> None:
        """Release the pins."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        for device in (self.undo_button, self.next_button, self.buzzer):
            if device is not None:
                try:
                    device.close()
                except Exception as exc:
                    logger.warning("buttons: closing: %s", exc)
        self.undo_button = self.next_button = self.buzzer = None

    def __enter__(self) -> Buttons:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
