"""Shared fixtures."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def cli() -> list[str]:
    """The installed command, or ``python -m companion`` next to it."""
    exe = shutil.which("twilight-companion", path=os.path.dirname(sys.executable))
    return [exe] if exe else [sys.executable, "-m", "companion"]


@pytest.fixture
def log(tmp_path):
    from companion.core.gamelog import GameLog

    game_log = GameLog.open(tmp_path / "data")
    yield game_log
    game_log.close()


@pytest.fixture
def factory():
    """gpiozero's mock pin factory (PWM-capable pins), reset afterwards as gpiozero's
    own tests do, so no pin stays reserved between tests."""
    from gpiozero import Device
    from gpiozero.pins.mock import MockFactory, MockPWMPin

    saved = Device.pin_factory
    Device.pin_factory = MockFactory(pin_class=MockPWMPin)
    try:
        yield Device.pin_factory
    finally:
        Device.pin_factory.reset()
        Device.pin_factory = saved
