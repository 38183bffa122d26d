"""The demo's simulated players: what people at a real table do on the page.

In ``demo`` nobody sits at the table to fix what the camera got wrong, so the
simulated players do it, as a table would on their phones, through the same
checked game-log calls as the web page: a card the camera missed is laid by
hand, a misread card is corrected, a refused card is dismissed, and a new match
is started when one is over. They act only when the camera is overdue
(:data:`OVERDUE_FRAMES` after the hand that laid a card has left it), and every
such act is stored with ``source: "table"`` and counted in the ``table_fixes``
status, so the demo shows honestly how often the camera needed help.
"""

from __future__ import annotations

from typing import Any

from companion.gamelog import GameLog
from companion.rules import RuleError

#: Frames after a card's "clear" frame before the players step in (10 fps: 3 s).
OVERDUE_FRAMES = 30


class DemoTable:
    """Keeps the game log in step with the simulator's truth, like players would."""

    def __init__(self, log: GameLog, table: Any) -> None:
        self.log = log
        self.table = table
        self.done: set[int] = set()  # the table's hands the log has complete
        self.fixes = 0
        snap = log.snapshot()
        if snap["hand"]["plays"] and not snap["hand"]["complete"]:
            log.new_hand(abandon=True)  # a half hand from an earlier run

    def step(self) -> None:
        """Look once; make at most one fix."""
        frame = getattr(self.table, "frame_index", -1)
        truth: dict[int, list[tuple[str, str]]] = {}
        due: dict[int, list[tuple[str, str]]] = {}
        for e in self.table.truth_events:
            if e["type"] != "play":
                continue
            play = (e["seat"], e["card"])
            truth.setdefault(e["hand_index"], []).append(play)
            if e.get("clear_frame", e["frame"]) + OVERDUE_FRAMES <= frame:
                due.setdefault(e["hand_index"], []).append(play)
        if not due:
            return
        snap = self.log.snapshot()
        hand = snap["hand"]
        if hand["complete"] and snap["match"]["over"]:
            self._fix(lambda: self.log.new_match(mode=snap["match"]["mode"],
                                                 goal=snap["match"]["goal"]))
            return
        have = [(p["seat"], p["card"]) for p in hand["plays"]]
        latest = max(due)
        # which of the table's hands the log's current hand is: by its first card
        which = next((h for h in sorted(truth, reverse=True) if truth[h][:1] == have[:1]),
                     None) if have else None
        if hand["complete"]:
            if which is not None:
                self.done.add(which)
            if latest in self.done:
                return  # over in the log and at the table
            target, have = latest, []
        else:
            target = which if which is not None else latest
        want = due.get(target, [])
        for i, (got, real) in enumerate(zip(have, want, strict=False)):
            if got != real:
                if got[0] == real[0]:
                    self._fix(lambda i=i, c=real[1]: self.log.correct(i + 1, c,
                                                                     source="table"))
                return
        if len(have) < len(want):
            seat, card = want[len(have)]
            if snap["refused"] is not None:
                self._fix(self.log.dismiss)
            self._fix(lambda: self.log.play(seat, card, source="table"))

    def _fix(self, act: Any) -> None:
        try:
            act()
        except RuleError:
            return
        self.fixes += 1
        self.log.set_status("table_fixes", self.fixes)
