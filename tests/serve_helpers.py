"""Shared helpers for the service tests (no tests here): recorded hands, a real
``twilight-companion serve`` subprocess on a free loopback port, stdlib HTTP.

Recordings are rendered once per test session (``simulate``) into the session's
base temporary folder and shared by every test module that asks for them.
"""

from __future__ import annotations

import http.client
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent
LOOPBACK = "127.0.0.1"
PIN = "246810"


def command() -> list[str]:
    exe = Path(sys.executable).with_name("twilight-companion")
    return [str(exe)] if exe.exists() else [sys.executable, "-m", "companion"]


#: ``serve`` with the ``paced:FOLDER:FPS`` camera (a recording at a human pace).
PACED = [sys.executable, str(ROOT / "tests" / "fakes" / "paced_serve.py")]


def recording(tmp_path_factory: Any, *, seed: int = 31, size: str = "640x360",
              hands: int = 1) -> Path:
    """A recorded hand movie (frame-NNNNNN.jpg + truth.jsonl), rendered once a session."""
    base = tmp_path_factory.getbasetemp()
    folder = base / f"recording-{seed}-{size}-{hands}"
    if not (folder / "truth.jsonl").exists():
        tmp = base / f".rendering-{seed}-{size}-{hands}-{os.getpid()}"
        subprocess.run([*command(), "simulate", "--out", str(tmp), "--hands", str(hands),
                        "--seed", str(seed), "--size", size], check=True,
                       capture_output=True, cwd=ROOT, timeout=600)
        tmp.rename(folder)
    return folder


def truth(folder: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in (folder / "truth.jsonl").read_text().splitlines()]


def truth_plays(folder: Path, before: int | None = None) -> list[tuple[str, str]]:
    """The recording's plays, only those cleared before frame ``before`` if given."""
    return [(e["seat"], e["card"]) for e in truth(folder) if e["type"] == "play"
            and (before is None or e["clear_frame"] < before)]


def free_port() -> int:
    with socket.socket() as s:
        s.bind((LOOPBACK, 0))
        return int(s.getsockname()[1])


def write_config(path: Path, source: Path | str, *, size: str = "640x360",
                 threads: int = 24, extra: str = "") -> Path:
    w, h = size.split("x")
    path.write_text(
        f'[camera]\nsource = "{source}"\nwidth = {w}\nheight = {h}\n\n'
        f'[web]\nhost = "{LOOPBACK}"\npin = "{PIN}"\nthreads = {threads}\n{extra}',
        encoding="utf-8")
    return path


# -- HTTP (stdlib only) -----------------------------------------------------------------------
class Response:
    def __init__(self, status: int, headers: dict[str, str], body: bytes) -> None:
        self.status = status
        self.headers = headers
        self.body = body

    def json(self) -> Any:
        return json.loads(self.body)


def request(port: int, method: str, path: str, body: Any = None, *,
            headers: dict[str, str] | None = None, timeout: float = 10.0,
            raw: bytes | None = None) -> Response:
    conn = http.client.HTTPConnection(LOOPBACK, port, timeout=timeout)
    try:
        hdrs = dict(headers or {})
        data = raw
        if body is not None:
            data = json.dumps(body).encode()
            hdrs.setdefault("Content-Type", "application/json")
        conn.request(method, path, body=data, headers=hdrs)
        resp = conn.getresponse()
        return Response(resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read())
    finally:
        conn.close()


class Phone:
    """A phone's cookie jar and CSRF token against one server."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.cookie = ""
        self.csrf = ""

    def call(self, method: str, path: str, body: Any = None, **kw: Any) -> Response:
        headers = dict(kw.pop("headers", {}))
        if self.cookie:
            headers["Cookie"] = self.cookie
        if self.csrf and method == "POST":
            headers.setdefault("X-CSRF-Token", self.csrf)
        r = request(self.port, method, path, body, headers=headers, **kw)
        set_cookie = r.headers.get("set-cookie")
        if set_cookie:
            self.cookie = set_cookie.split(";", 1)[0]
        return r

    def login(self, pin: str = PIN) -> Response:
        self.csrf = self.call("GET", "/api/session").json()["csrf"]
        return self.call("POST", "/api/login", {"pin": pin})


# -- the service as a subprocess --------------------------------------------------------------
class Serve:
    """``twilight-companion serve --data DIR --config PATH --port N`` as a subprocess."""

    def __init__(self, data: Path, config: Path, *, port: int | None = None,
                 args: tuple[str, ...] = ("serve",), env: dict[str, str] | None = None,
                 log: Path | None = None, program: list[str] | None = None) -> None:
        self.data = data
        self.port = port or free_port()
        self.out = log or data.parent / f"serve-{self.port}.out"
        self.args = [*(program or command()), *args, "--data", str(data),
                     "--port", str(self.port)]
        if "--config" not in args:
            self.args += ["--config", str(config)]
        full_env = {**os.environ, "GPIOZERO_PIN_FACTORY": "mock", "PYTHONUNBUFFERED": "1",
                    **(env or {})}
        full_env.pop("NOTIFY_SOCKET", None)
        self._fh = open(self.out, "ab")
        self.proc = subprocess.Popen(self.args, stdout=self._fh, stderr=subprocess.STDOUT,
                                     cwd=ROOT, env=full_env)

    def wait_ready(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError(f"serve ended with {self.proc.returncode}:\n{self.output()}")
            try:
                request(self.port, "GET", "/api/version", timeout=2)
                return
            except OSError:
                time.sleep(0.05)
        raise AssertionError(f"serve did not answer in {timeout} s:\n{self.output()}")

    def get(self, path: str) -> Response:
        return request(self.port, "GET", path)

    def state(self) -> dict[str, Any]:
        return self.get("/api/state").json()

    def output(self) -> str:
        if not self._fh.closed:
            self._fh.flush()
        return self.out.read_text(errors="replace")

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self._fh.close()

    def stop(self, timeout: float = 15.0) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        try:
            rc = self.proc.wait(timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(5)
            raise AssertionError(f"serve ignored SIGTERM for {timeout} s") from None
        finally:
            self._fh.close()
        return rc

    def __enter__(self) -> Serve:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(5)
        if not self._fh.closed:
            self._fh.close()


def rss_kb(pid: int) -> int:
    """Resident memory of a process (kB), from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


# -- the game log on disk, read after a kill --------------------------------------------------
def logged_plays(data: Path) -> tuple[list[tuple[str, str]], str, int]:
    """(plays of the current hand, integrity_check, number of hands finished) from the
    game log on disk — what survived, replayed exactly as the companion does."""
    from companion.core.game import Game

    # read-only: the log is left exactly as the killed writer left it (WAL and all); a
    # read-write connection would checkpoint the WAL into the file when it closes
    db = sqlite3.connect(f"{(data / 'game.sqlite3').absolute().as_uri()}?mode=ro", uri=True,
                         timeout=10)
    try:
        integrity = db.execute("PRAGMA integrity_check").fetchone()[0]
        rows = db.execute("SELECT ts, type, data FROM events ORDER BY seq").fetchall()
    finally:
        db.close()
    game = Game()
    for ts, kind, data_text in rows:
        game.apply(kind, json.loads(data_text), ts)
    hand = game.hand_view()
    hands = len(game.match_view()["hands"])
    return [(p["seat"], p["card"]) for p in hand["plays"]], integrity, hands


def without_root_powers() -> list[str]:
    """A prefix that makes root respect file modes (drops CAP_DAC_OVERRIDE)."""
    if os.geteuid() != 0:
        return []
    if not shutil.which("setpriv"):
        pytest.skip("running as root without setpriv: file modes cannot be tested")
    return ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner"]
