"""systemd's notify protocol (READY=1, WATCHDOG=1, STOPPING=1, STATUS=...).

A datagram to ``$NOTIFY_SOCKET``; without that variable (not under systemd)
every call does nothing. A dozen lines of standard library instead of a
dependency.
"""

from __future__ import annotations

import os
import socket


def notify(*fields: str) -> bool:
    """Send ``fields`` (e.g. ``"READY=1"``) to systemd; True if it was sent."""
    address = os.environ.get("NOTIFY_SOCKET")
    if not address:
        return False
    if address.startswith("@"):  # abstract namespace
        address = "\0" + address[1:]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC) as sock:
            sock.connect(address)
            sock.sendall("\n".join(fields).encode())
        return True
    except OSError:
        return False


def watchdog_interval() -> float | None:
    """Seconds between watchdog pings systemd expects (half its WatchdogSec), or None."""
    usec = os.environ.get("WATCHDOG_USEC")
    pid = os.environ.get("WATCHDOG_PID")
    if not usec or (pid and pid != str(os.getpid())):
        return None
    try:
        return int(usec) / 2_000_000
    except ValueError:
        return None
