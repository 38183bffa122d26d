"""The live game: the current match and hand, changed only by events.

An event is a type and a JSON-able dict of data. :meth:`Game.apply` checks it
against the rules and either changes the game or raises (a
:class:`~companion.core.rules.RuleError`) and changes nothing. The game log
(:mod:`companion.core.gamelog`) stores the events that applied and rebuilds a Game
by replaying them, so every change — from the camera, the web page or a button
— goes through here.

Event types and their data:

``new_match``  {mode, goal, pairing, soloist, names, moon_seats, dealer, leader}
``new_hand``   {abandon, dealer, leader, soloist, names, moon_seats}: next hand
``setup``      {dealer, leader, soloist, names, moon_seats}: adjust the current
               hand before its first card (names at any time)
``play``       {seat, card, source, frame}
``gap``        {seat, source, frame}: a card laid in turn at ``seat`` that nobody
               could name yet (the camera could not read it); named later by
               ``correct`` with its index
``undo``       {}: take back the last play (reopens the last hand if needed)
``correct``    {index, card}: replace play ``index`` (from 1) of the current hand
``refused``    {seat, card, message}: a card the rules refused waits for correction
``dismiss``    {}: the table dealt with the refusal
``goal``       {goal}
``mode``       {mode, soloist, pairing}: only before the match's first card
``setting``    {key, value}: e.g. mirror
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from companion.core.cards import Card, Cult, Seat, UnknownName
from companion.core.match import GOALS, MODES, PAIRINGS, HandSetup, Match, person_scores
from companion.core.records import RecordError, match_record, read_setup
from companion.core.rules import Hand, RuleError

EVENT_TYPES = (
    "new_match", "new_hand", "setup", "play", "gap", "undo", "correct",
    "refused", "dismiss", "goal", "mode", "setting",
)
SETTINGS = {"mirror": bool}


class GameError(RuleError):
    """An event the game refuses that is not a play (bad data, wrong moment)."""

    def __init__(self, message: str, rule: str = "R9") -> None:
        super().__init__(message, rule)


def _seat(data: dict[str, Any], key: str) -> Seat | None:
    value = data.get(key)
    if value is None:
        return None
    if not isinstance(value, str):
        raise GameError(f"{key} must be a seat name (C1)")
    try:
        return Seat.parse(value)
    except UnknownName as exc:
        raise GameError(f"{key}: {exc}") from None


def _card(data: dict[str, Any]) -> Card:
    value = data.get("card")
    if not isinstance(value, str):
        raise GameError("card must be a card id (C1)")
    try:
        return Card.parse(value)
    except UnknownName as exc:
        raise GameError(str(exc)) from None


@dataclass
class FinishedMatch:
    number: int
    started: float
    match: Match


class Game:
    """Current match, current hand and its setup, plus what the table must see."""

    def __init__(self) -> None:
        self.match_number = 0
        self.started = 0.0
        self.finished: list[FinishedMatch] = []
        self.settings: dict[str, Any] = {"mirror": False}
        self._start_match(Match(), HandSetup(), 0.0)

    # -- helpers ----------------------------------------------------------------------------
    def _start_match(self, match: Match, setup: HandSetup, ts: float) -> None:
        self.match = match
        self.match_number = max(self.match_number, 1)
        self.started = ts
        self._begin(setup)

    def _begin(self, setup: HandSetup, *, fixed: bool = False) -> None:
        """Make ``setup`` the current hand. Unless the table fixed who leads, the
        expected leader is only shown; the first card tells who leads (C7)."""
        self.setup = setup
        leader = setup.first_leader
        self.fixed_leader = fixed
        if fixed:
            self.hand = Hand(setup.moon_seats, leader)
        else:
            self.hand = Hand(setup.moon_seats, None, expected_leader=leader)
        self.refused: dict[str, Any] | None = None
        #: the unfinished hand set aside for this one (number, cards, reason), if any
        self.set_aside: dict[str, Any] | None = None

    def _setup_from(self, data: dict[str, Any], base: HandSetup) -> HandSetup:
        obj: dict[str, Any] = {
            "moon_seats": [s.value for s in base.moon_seats],
            "dealer": base.dealer.value if base.dealer else None,
            "leader": base.leader.value if base.leader else None,
            "soloist": base.soloist.value if base.soloist else None,
            "names": {s.value: n for s, n in base.names.items()},
        }
        for key in ("moon_seats", "dealer", "leader", "soloist", "names"):
            if key in data:
                obj[key] = data[key]
        if "dealer" in data and "leader" not in data:
            obj["leader"] = None
        soloist = obj.get("soloist")
        if "soloist" in data and isinstance(soloist, str) and "moon_seats" not in data:
            try:
                solo = Seat.parse(soloist)
            except UnknownName as exc:
                raise GameError(f"soloist: {exc}") from None
            obj["moon_seats"] = [solo.value, solo.opposite.value]
        mode = "three" if self.match.mode == "three" else "four"
        try:
            return read_setup(obj, mode)
        except RecordError as exc:
            raise GameError(str(exc)) from None

    @property
    def hand_added(self) -> bool:
        """True when the current hand is complete and already counted in the match."""
        return bool(self.match.hands) and self.match.hands[-1].hand is self.hand

    # -- events -----------------------------------------------------------------------------
    def apply(self, kind: str, data: dict[str, Any], ts: float = 0.0) -> None:
        """Apply one event or raise without changing anything."""
        if not isinstance(data, dict):
            raise GameError("event data must be an object")
        handler = getattr(self, f"_on_{kind}", None)
        if kind not in EVENT_TYPES or handler is None:
            raise GameError(f"unknown event type {kind!r}")
        handler(data, ts)

    def _on_new_match(self, data: dict[str, Any], ts: float) -> None:
        mode = data.get("mode", self.match.mode)
        goal = data.get("goal", self.match.goal)
        pairing = data.get("pairing", "rotating")
        if mode not in MODES or goal not in GOALS or pairing not in PAIRINGS:
            raise GameError(f"mode/goal/pairing {mode!r}/{goal!r}/{pairing!r} not known", "R7")
        match = Match(mode, goal, pairing)
        old_mode = self.match.mode
        self.match.mode = mode  # so _setup_from reads the new mode's setup rules
        try:
            base = HandSetup()
            if mode == "three" and "soloist" not in data:
                data = {**data, "soloist": "south"}
            setup = self._setup_from(data, base)
        finally:
            self.match.mode = old_mode
        if self.match.hands or self.hand.plays:
            self.finished.append(FinishedMatch(self.match_number, self.started, self.match))
            self.match_number += 1
        self._start_match(match, setup, ts)

    def _on_new_hand(self, data: dict[str, Any], ts: float) -> None:
        if self.hand.plays and not self.hand.complete and not data.get("abandon"):
            raise GameError(
                f"hand {len(self.match.hands) + 1} is not finished ({len(self.hand.plays)} of 28 "
                "cards): undo its plays or abandon it", "R2"
            )
        if self.match.over and self.hand_added:
            raise GameError("the match is over (R7): start a new match", "R7")
        base = self.match.next_setup(self.setup) if self.hand_added else self.setup
        setup = self._setup_from(data, base)
        aside = None
        if self.hand.plays and not self.hand.complete:
            reason = data.get("reason")
            aside = {"number": len(self.match.hands) + 1, "cards": len(self.hand.plays),
                     "reason": str(reason) if reason else None}
        self._begin(setup, fixed="leader" in data or "dealer" in data)
        self.set_aside = aside

    def _on_setup(self, data: dict[str, Any], ts: float) -> None:
        if self.hand.plays and set(data) - {"names"}:
            raise GameError("the hand has begun: only names can change now (start a new hand)")
        setup = self._setup_from(data, self.setup)
        if self.hand.plays:
            self.setup.names = setup.names
            return
        self._begin(setup, fixed=self.fixed_leader or "leader" in data or "dealer" in data)

    def _on_play(self, data: dict[str, Any], ts: float) -> None:
        seat = _seat(data, "seat")
        if seat is None:
            raise GameError("a play needs a seat (C1)")
        self._lay(seat, _card(data))

    def _on_gap(self, data: dict[str, Any], ts: float) -> None:
        seat = _seat(data, "seat")
        if seat is None:
            raise GameError("a gap needs a seat (C1)")
        self._lay(seat, None)

    def _lay(self, seat: Seat, card: Card | None) -> None:
        """A card (``None``: a gap) laid at ``seat``, checked by the rules."""
        def lay(hand: Hand) -> None:
            if card is None:
                hand.play_gap(seat)
            else:
                hand.play(seat, card)

        if self.hand_added:
            if self.match.over:
                raise GameError("the match is over (R7): start a new match", "R7")
            # The first card after a finished hand starts the next one (C7).
            nxt = self.match.next_setup(self.setup)
            lay(Hand(nxt.moon_seats, None, expected_leader=nxt.first_leader))
            self._begin(nxt)
        lay(self.hand)
        self.refused = None
        if self.hand.complete:
            first = self.hand.tricks[0].leader
            if self.setup.dealer is None or self.setup.first_leader is not first:
                # Who really led tells who dealt (R2): the rotation goes on from there.
                self.setup = self.setup.replace(leader=first,
                                     dealer=self.setup.dealer if self.setup.soloist else first.right)
            self.match.add(self.setup, self.hand)

    def _on_undo(self, data: dict[str, Any], ts: float) -> None:
        if not self.hand.plays:
            if not self.match.hands:
                raise GameError("nothing to undo: no card has been played in this match")
            last = self.match.hands[-1]
            self.setup, self.hand = last.setup, last.hand
        if self.hand_added:
            self.match.hands.pop()
        self.hand.undo()
        self.refused = None

    def _on_correct(self, data: dict[str, Any], ts: float) -> None:
        index = data.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise GameError("correct needs the play's index (from 1)")
        card = _card(data)
        self.hand.replace(index, card)
        self.refused = None

    def _on_refused(self, data: dict[str, Any], ts: float) -> None:
        message = data.get("message")
        self.refused = {
            "seat": data.get("seat") if isinstance(data.get("seat"), str) else None,
            "card": data.get("card") if isinstance(data.get("card"), str) else None,
            "message": str(message) if message is not None else "refused card",
        }

    def _on_dismiss(self, data: dict[str, Any], ts: float) -> None:
        self.refused = None

    def _on_goal(self, data: dict[str, Any], ts: float) -> None:
        goal = data.get("goal")
        if goal not in GOALS:
            raise GameError(f"goal must be standard or magic, not {goal!r}", "R7")
        self.match.goal = goal

    def _on_mode(self, data: dict[str, Any], ts: float) -> None:
        if self.match.hands or self.hand.plays:
            raise GameError("the mode can only change before the match's first card "
                            "(start a new match)", "R8")
        mode = data.get("mode")
        pairing = data.get("pairing", self.match.pairing)
        if mode not in MODES or pairing not in PAIRINGS:
            raise GameError(f"mode must be four or three, not {mode!r}", "R8")
        old = (self.match.mode, self.match.pairing)
        self.match.mode, self.match.pairing = mode, pairing
        try:
            extra = {} if mode == "three" else {"soloist": None}
            if mode == "three" and "soloist" not in data and self.setup.soloist is None:
                extra = {"soloist": self.setup.moon_seats[1].value}
            self._begin(self._setup_from({**data, **extra}, self.setup))
        except GameError:
            self.match.mode, self.match.pairing = old
            raise

    def _on_setting(self, data: dict[str, Any], ts: float) -> None:
        key, value = data.get("key"), data.get("value")
        kind = SETTINGS.get(key) if isinstance(key, str) else None
        if kind is None:
            raise GameError(f"unknown setting {key!r} (known: {', '.join(SETTINGS)})")
        if not isinstance(value, kind):
            raise GameError(f"setting {key} must be {kind.__name__}")
        self.settings[key] = value

    # -- views ------------------------------------------------------------------------------
    def correction_choices(self, index: int) -> list[str]:
        """Cards that could replace play ``index`` (from 1): the seat's cult, not
        played elsewhere in this hand. Every later play is re-checked on correction."""
        if not 1 <= index <= len(self.hand.plays):
            raise GameError(f"no play {index} in this hand")
        return [c.id for c in self.hand.gap_choices(index)]

    def gaps_view(self) -> list[dict[str, Any]]:
        """The open gaps of the current hand: index (from 1), seat, trick (from 1),
        place in the trick (from 1) and the cards that can lie there."""
        out: list[dict[str, Any]] = []
        if not self.hand.provisional:
            return out
        number = {id(p): i for i, p in enumerate(self.hand.plays, 1)}
        for trick_no, trick in enumerate(self.hand.tricks, 1):
            for place, play in enumerate(trick.plays, 1):
                if play.card is None:
                    index = number[id(play)]
                    out.append({"index": index, "seat": play.seat.value, "trick": trick_no,
                                "place": place,
                                "choices": [c.id for c in self.hand.gap_choices(index)]})
        return out

    def hand_view(self) -> dict[str, Any]:
        out = self.hand.to_dict()
        out.update(self.setup.to_dict())
        if self.hand.tricks:
            out["leader"] = self.hand.tricks[0].leader.value
        out["number"] = len(self.match.hands) + (0 if self.hand_added else 1)
        out["plays"] = [p.to_dict() for p in self.hand.plays]
        out["lying_tricks"] = len(self.hand.lying_tricks)
        out["shrines"] = {
            party.value: [c.name for c in self.hand.built_shrines(party)] for party in Cult
        }
        out["leader_fixed"] = self.fixed_leader
        out["gaps"] = self.gaps_view()
        out["set_aside"] = self.set_aside if not self.hand.plays else None
        if self.hand_added and not self.match.over:
            out["next_hand"] = self.match.next_setup(self.setup).to_dict()
        else:
            out["next_hand"] = None
        return out

    def match_view(self, match: Match | None = None, number: int | None = None,
                   started: float | None = None) -> dict[str, Any]:
        match = match or self.match
        out = match.summary()
        for entry, ph in zip(out["hands"], match.hands, strict=True):
            if match.by_person:
                entry["people"] = person_scores(ph)
            entry["setup"] = ph.setup.to_dict()
        out.update({
            "number": self.match_number if number is None else number,
            "started": self.started if started is None else started,
            "mode": match.mode,
            "goal": match.goal,
            "pairing": match.pairing,
        })
        return out

    def record(self) -> dict[str, Any]:
        return match_record(self.match)
