"""The config file, the systemd unit and the installer (issue 8)."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from companion.config import ConfigError, load_config, parse_config
from companion.sdnotify import notify, watchdog_interval

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "bench" / "results"


def test_defaults_need_no_file() -> None:
    config = load_config(None)
    assert config.web.port == 8000 and config.web.host == "0.0.0.0"
    assert config.camera.source == "picamera" and config.game.mode == "four"


def test_example_config_is_valid() -> None:
    config = load_config(ROOT / "systemd" / "config.example.toml")
    assert config.camera.width == 1280 and config.hardware["leds"]["north"] == 17


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[web]\nport = 'eighty'", "web.port"),
        ("[web]\nport = 70000", "web.port"),
        ("[web]\npin = '12'", "web.pin"),
        ("[camera]\nmirorr = true", "camera.mirorr"),
        ("[game]\nmode = 'five'", "game.mode"),
        ("[gaem]\nmode = 'four'", "gaem"),
        ("[leds]\nnorth = 99", "leds.north"),
        ("[buttons]\nhold_time = 'long'", "buttons.hold_time"),
        ("web = 3", "web"),
        ("[web\nport = 1", "not valid TOML"),
    ],
)
def test_broken_config_names_the_key(tmp_path, text, key) -> None:
    path = tmp_path / "c.toml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert key in str(info.value) and str(path) in str(info.value)


def test_missing_config_file(tmp_path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "none.toml")


def test_parse_config_values() -> None:
    config = parse_config({"web": {"pin": 4321, "host": "127.0.0.1"},
                           "camera": {"source": "demo", "mirror": True}})
    assert config.web.pin == "4321" and config.camera.mirror is True


def test_sd_notify_sends_to_the_socket(tmp_path, monkeypatch) -> None:
    path = str(tmp_path / "notify")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    server.bind(path)
    server.settimeout(2)
    monkeypatch.setenv("NOTIFY_SOCKET", path)
    assert notify("READY=1", "STATUS=scoring")
    assert server.recv(100) == b"READY=1\nSTATUS=scoring"
    server.close()
    monkeypatch.delenv("NOTIFY_SOCKET")
    assert notify("READY=1") is False
    monkeypatch.setenv("WATCHDOG_USEC", "30000000")
    monkeypatch.setenv("WATCHDOG_PID", str(os.getpid()))
    assert watchdog_interval() == 15.0


def _unit_for_check(tmp_path: Path) -> Path:
    unit = (ROOT / "systemd" / "twilight-companion.service").read_text()
    exe = os.path.realpath(sys.executable)
    unit = unit.replace("ExecStart=/opt/twilight-companion/venv/bin/twilight-companion",
                        f"ExecStart={exe} -m companion")
    path = tmp_path / "twilight-companion.service"
    path.write_text(unit)
    return path


@pytest.mark.skipif(shutil.which("systemd-analyze") is None,
                    reason="systemd-analyze missing (.ci/run installs systemd)")
def test_unit_verifies_cleanly_and_security_is_recorded(tmp_path) -> None:
    path = _unit_for_check(tmp_path)
    out = subprocess.run(["systemd-analyze", "verify", str(path)], capture_output=True,
                         text=True, timeout=60)
    assert out.returncode == 0 and out.stderr == "", out.stderr
    unit = path.read_text()
    for needed in ("Type=notify", "WatchdogSec=", "SupplementaryGroups=video gpio",
                   "StateDirectory=", "LG_WD=", "GPIOZERO_PIN_FACTORY=lgpio",
                   "Restart=on-failure", "StartLimitBurst="):
        assert needed in unit
    assert not any(line.startswith("PrivateDevices") for line in unit.splitlines())
    sec = subprocess.run(["systemd-analyze", "security", "--offline=yes", str(path)],
                         capture_output=True, text=True, timeout=60)
    RESULTS.mkdir(parents=True, exist_ok=True)
    (RESULTS / "systemd-security.txt").write_text(sec.stdout + sec.stderr)
    assert "Overall exposure level" in sec.stdout


def test_install_dry_run_prints_steps_and_changes_nothing() -> None:
    out = subprocess.run(["bash", str(ROOT / "systemd" / "install.sh"), "--dry-run"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    for step in ("apt-get install -y", "python3-picamera2", "--system-site-packages",
                 "--no-deps", "systemctl enable", "useradd"):
        assert step in out.stdout
    assert not Path("/opt/twilight-companion").exists() or os.environ.get("CI") is None


@pytest.mark.skipif(shutil.which("shellcheck") is None,
                    reason="shellcheck missing (.ci/run installs it)")
def test_shell_scripts_are_shellcheck_clean() -> None:
    scripts = [ROOT / "systemd" / "install.sh", ROOT / "scripts" / "ensure-chromium",
               ROOT / ".ci" / "run"]
    out = subprocess.run(["shellcheck", *map(str, scripts)], capture_output=True, text=True)
    assert out.returncode == 0, out.stdout
