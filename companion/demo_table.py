"""The demo's simulated players: what people at a real table do on the page.

In ``demo`` nobody sits at the table to fix what the camera got wrong, so the
simulated players do it, as a table would on their phones, through the same
checked game-log calls as the web page: a card the camera missed is laid by
hand, a misread card is corrected, a card logged out of turn or that was never
played is taken back (undo), a refused card is dismissed, the Twilight card's
moon sides are set when the camera read them wrong, and a new match is started
when one is over. They act only when the camera is overdue
(:data:`OVERDUE_FRAMES` after the hand that laid a card has left it), and every
such act is stored with ``source: "table"`` (undo and setup have no source) and
counted in the ``table_fixes`` status, so the demo shows honestly how often the
camera needed help.

Which of the table's hands a hand of the log is goes by order: the first hand the
log begins after the players sat down is the table's first, and so on (hands are
told apart by their place, not their cards: every hand plays the same 28 cards).
"""

from __future__ import annotations

from typing import Any

from companion.core.gamelog import GameLog
from companion.core.rules import RuleError

#: Frames after a card's "clear" frame before the players step in (10 fps: 3 s).
OVERDUE_FRAMES = 30
#: Hands of the table's truth the players remember (older ones are settled).
REMEMBER_HANDS = 4
#: Acts at one look at most (a hand's worth of cards).
MAX_FIXES_PER_LOOK = 28

Play = tuple[str, str]


class DemoTable:
    """Keeps the game log in step with the simulator's truth, like players would.

    ``table`` is the demo camera (:class:`vision.sim.movie.SimulatedTable`): its
    ``truth_events`` (C7, with ``hand_index`` and ``clear_frame``), ``frame_index``
    and, when it lets old truth go, ``truth_dropped`` and ``first_kept_hand`` with
    ``hand_records`` (for each hand's moon sides).
    """

    def __init__(self, log: GameLog, table: Any, *, resumed: bool = False) -> None:
        self.log = log
        self.table = table
        self.fixes = 0
        self._seen = 0  # truth events read so far (counted from the table's first)
        self._truth: dict[int, list[tuple[str, str, int]]] = {}  # hand -> (seat, card, clear)
        self._due_hand = -1  # the newest table hand with a play overdue
        snap = log.snapshot()
        if snap["hand"]["plays"] and not snap["hand"]["complete"] and not resumed:
            # a half hand from an earlier run the simulated table cannot go on with
            # (see resumable): set aside, and said so (the console prints the event)
            snap = log.new_hand(abandon=True, reason="the demo table could not resume it")
        # log hand (match number, hand number) -> the table's hand (-1: before the first)
        self._hands: dict[tuple[int, int], int] = {
            _key(snap): -1 if snap["hand"]["complete"] else 0}

    # -- what the table did ---------------------------------------------------------------
    def _read_truth(self) -> None:
        events = self.table.truth_events
        start = max(0, self._seen - getattr(self.table, "truth_dropped", 0))
        for e in events[start:]:
            if e["type"] == "play":
                self._truth.setdefault(e["hand_index"], []).append(
                    (e["seat"], e["card"], e.get("clear_frame", e["frame"])))
        self._seen += len(events) - start
        for old in [h for h in self._truth if h < max(self._truth) - REMEMBER_HANDS]:
            del self._truth[old]

    def _due(self, hand: int, frame: int) -> list[Play]:
        return [(seat, card) for seat, card, clear in self._truth.get(hand, [])
                if clear + OVERDUE_FRAMES <= frame]

    def _moon_seats(self, hand: int) -> list[str] | None:
        records = getattr(self.table, "hand_records", None)
        i = hand - getattr(self.table, "first_kept_hand", 0)
        if records is None or not 0 <= i < len(records):
            return None
        return list(records[i]["moon_seats"])

    # -- what the players do --------------------------------------------------------------
    def step(self) -> None:
        """Look once; set right what is overdue (at most :data:`MAX_FIXES_PER_LOOK` acts:
        taking back a wrong card and laying the right one happen at one look, so the
        camera cannot put the wrong card back in between)."""
        frame = getattr(self.table, "frame_index", -1)
        self._read_truth()
        for _ in range(MAX_FIXES_PER_LOOK):
            if not self._fix_one(frame):
                return

    def _fix_one(self, frame: int) -> bool:
        """One act that brings the log closer to the table; False when none is due."""
        due_hands = [h for h in self._truth if self._due(h, frame)]
        if not due_hands:
            return False
        snap = self.log.snapshot()
        hand = snap["hand"]
        key = _key(snap)
        if key not in self._hands:  # a hand the log began: the table's next one
            self._hands[key] = max(self._hands.values()) + 1
        which = self._hands[key]
        have = [(p["seat"], p["card"]) for p in hand["plays"]]
        want = self._due(which, frame)
        wrong = next((i for i, (got, real) in enumerate(zip(have, want, strict=False))
                      if got != real), None)
        moon = self._moon_seats(which)
        moon_wrong = moon is not None and sorted(hand["moon_seats"]) != sorted(moon)
        if which < 0 or (hand["complete"] and wrong is None and not moon_wrong):
            # this hand is over in the log: on to the table's next one
            if max(due_hands) <= which:
                return False
            if snap["match"]["over"]:
                return self._fix(lambda: self.log.new_match(mode=snap["match"]["mode"],
                                                            goal=snap["match"]["goal"]))
            which, have, wrong = which + 1, [], None
            want = self._due(which, frame)
            moon = self._moon_seats(which)
            moon_wrong = moon is not None and sorted(hand["moon_seats"]) != sorted(moon)
        if have and moon_wrong:
            return self._fix(lambda: self.log.undo(source="table"))  # back to the first card
        if wrong is not None:
            seat, card = want[wrong]
            if have[wrong][0] == seat and self._fix(
                    lambda: self.log.correct(wrong + 1, card, source="table")):
                return True
            return self._fix(lambda: self.log.undo(source="table"))  # back to the wrong card
        if len(have) >= len(want):
            return False
        if not have and moon_wrong and moon is not None and not hand["complete"]:
            return self._fix(lambda: self.log.setup(moon_seats=moon))
        seat, card = want[len(have)]
        if snap["refused"] is not None:
            self._fix(self.log.dismiss)
        return self._fix(lambda: self.log.play(seat, card, source="table"))

    def _fix(self, act: Any) -> bool:
        try:
            act()
        except RuleError:
            return False
        self.fixes += 1
        self.log.set_status("table_fixes", self.fixes)
        return True


def resumable(snap: dict[str, Any]) -> dict[str, Any] | None:
    """The half-played hand of the log, for the simulated table to go on with
    (:class:`vision.sim.movie.HandMovie` ``resume``): four players, every card named
    (a gap's card is not known). None when there is none, or it cannot be resumed."""
    hand = snap["hand"]
    if not hand["plays"] or hand["complete"] or snap["match"]["mode"] != "four":
        return None
    if any(p["card"] is None for p in hand["plays"]):
        return None
    return {"moon_seats": list(hand["moon_seats"]), "leader": hand["tricks"][0]["leader"],
            "plays": [(p["seat"], p["card"]) for p in hand["plays"]]}


def _key(snap: dict[str, Any]) -> tuple[int, int]:
    return int(snap["match"]["number"]), int(snap["hand"]["number"])
