"""``twilight-companion history`` and ``export MATCH --out FILE`` (CONTRACT C9)."""

from __future__ import annotations

import argparse
import json
import sys
import time

from companion.core.game import GameError
from companion.core.gamelog import GameLog, LogError


def _open(args: argparse.Namespace) -> GameLog | None:
    """The game log, read only: these commands never write to it or create one."""
    try:
        return GameLog.open(args.data, readonly=True)
    except LogError as exc:
        print(f"twilight-companion: {exc}", file=sys.stderr)
        return None


def _totals(totals: dict[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in totals.items()) or "-"


def run_history(args: argparse.Namespace) -> int:
    log = _open(args)
    if log is None:
        return 1
    try:
        matches = log.matches()
    finally:
        log.close()
    print(f"{'match':>5}  {'started':16}  {'mode':5}  {'goal':8}  {'hands':>5}  "
          f"{'winner':10}  totals")
    for m in matches:
        started = time.strftime("%Y-%m-%d %H:%M", time.localtime(m["started"]))
        winner = m["winner"] or ("-" if m["hands"] else "")
        print(f"{m['number']:>5}  {started:16}  {m['mode']:5}  {m['goal']:8}  "
              f"{m['hand_count']:>5}  {winner:10}  {_totals(m['totals'])}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    try:
        number = int(args.match)
    except ValueError:
        print(f"twilight-companion export: MATCH must be a match number, not {args.match!r}",
              file=sys.stderr)
        return 2
    log = _open(args)
    if log is None:
        return 1
    try:
        record = log.match_record(number)
    except GameError as exc:
        print(f"twilight-companion export: {exc}", file=sys.stderr)
        return 2
    finally:
        log.close()
    try:
        with open(args.out, "w", encoding="utf-8") as fp:
            json.dump(record, fp, indent=2)
            fp.write("\n")
    except OSError as exc:
        print(f"twilight-companion export: cannot write {args.out}: {exc.strerror}",
              file=sys.stderr)
        return 1
    return 0
