"""Hand (C2) and match (C4) records: read, check and write.

Standard library only. Reading checks every play against the rules; anything
wrong raises :class:`RecordError` (a ``ValueError``) whose message names the
hand, the play (index from 1, seat, card) and the rule.

>>> setup, hand = read_hand({"format": "twilight-hand/1", "leader": "east",
...     "plays": [{"seat": "east", "card": "sun-souls-7"}]})
>>> hand.next
(Seat.SOUTH, Cult.MOON)
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import IO, Any

from companion.core.cards import Card, Seat, UnknownName
from companion.core.match import GOALS, MODES, PAIRINGS, HandSetup, Match
from companion.core.rules import Hand, IllegalPlay, RuleError

HAND_FORMAT = "twilight-hand/1"
MATCH_FORMAT = "twilight-match/1"


class RecordError(ValueError):
    """A record that cannot be read or breaks the rules."""


def _seat(value: Any, what: str) -> Seat:
    if not isinstance(value, str):
        raise RecordError(f"{what} must be a seat name, not {json.dumps(value)} (C1)")
    try:
        return Seat.parse(value)
    except UnknownName as exc:
        raise RecordError(f"{what}: {exc}") from None


def _choice(obj: Mapping[str, Any], key: str, allowed: tuple[str, ...], default: str) -> str:
    value = obj.get(key, default)
    if value not in allowed:
        raise RecordError(f"{key} must be one of {', '.join(allowed)}, not {json.dumps(value)}")
    return str(value)


def read_setup(obj: Mapping[str, Any], mode: str) -> HandSetup:
    """The layout part of a hand record: moon seats, dealer, leader, soloist, names."""
    moon = obj.get("moon_seats", ["north", "south"])
    if not isinstance(moon, list) or len(moon) != 2:
        raise RecordError(f"moon_seats must be two opposite seats, not {json.dumps(moon)} (C2)")
    a, b = (_seat(s, "moon_seats") for s in moon)
    if a.opposite is not b:
        raise RecordError(f"moon_seats {a.value} and {b.value} are not opposite (R1, C2)")
    moon_seats = (a, b) if a.index < b.index else (b, a)
    dealer = _seat(obj["dealer"], "dealer") if obj.get("dealer") is not None else None
    leader = _seat(obj["leader"], "leader") if obj.get("leader") is not None else None
    soloist = None
    if mode == "three":
        if obj.get("soloist") is None:
            raise RecordError("mode three needs a soloist (C2, R8)")
        soloist = _seat(obj["soloist"], "soloist")
        if soloist not in moon_seats:
            raise RecordError(
                f"the soloist {soloist.value} must sit at a moon side "
                f"({moon_seats[0].value}, {moon_seats[1].value}) (R8)"
            )
    names: dict[Seat, str | None] = {}
    raw_names = obj.get("names")
    if raw_names is not None:
        if not isinstance(raw_names, dict):
            raise RecordError("names must map seats to names (C4)")
        for key, name in raw_names.items():
            seat = _seat(key, "names")
            if name is not None and (not isinstance(name, str) or not name.strip()):
                raise RecordError(f"names.{seat.value} must be a name or null (C4)")
            names[seat] = name
    return HandSetup(moon_seats, dealer=dealer, leader=leader, soloist=soloist, names=names)


def read_hand(obj: Any, mode: str | None = None) -> tuple[HandSetup, Hand]:
    """Check a C2 hand record and play it. ``mode`` is the match's, if inside one."""
    if not isinstance(obj, dict):
        raise RecordError("a hand record must be a JSON object (C2)")
    fmt = obj.get("format", HAND_FORMAT)
    if fmt != HAND_FORMAT:
        raise RecordError(f"format must be {HAND_FORMAT!r}, not {json.dumps(fmt)} (C2)")
    mode = _choice(obj, "mode", MODES, mode or "four")
    setup = read_setup(obj, mode)
    plays = obj.get("plays", [])
    if not isinstance(plays, list):
        raise RecordError("plays must be a list of {seat, card} (C2)")
    hand = Hand(setup.moon_seats, setup.first_leader)
    for i, entry in enumerate(plays, start=1):
        if not isinstance(entry, dict):
            raise RecordError(f"play {i}: must be an object with seat and card (C2)")
        seat_name, card_name = entry.get("seat"), entry.get("card")
        where = f"play {i} ({seat_name}, {card_name})"
        if not isinstance(seat_name, str):
            raise RecordError(f"{where}: seat must be a seat name (C1)")
        if not isinstance(card_name, str):
            raise RecordError(f"{where}: card must be a card id (C1)")
        try:
            seat = Seat.parse(seat_name)
            card = Card.parse(card_name)
        except UnknownName as exc:
            raise RecordError(f"{where}: {exc}") from None
        try:
            hand.play(seat, card)
        except IllegalPlay as exc:
            raise RecordError(str(exc)) from None
    if setup.leader is None and setup.first_leader is None and hand.tricks:
        setup.leader = hand.tricks[0].leader
    return setup, hand


def read_match(obj: Any) -> Match:
    """Check a C4 match record and play all its hands."""
    if not isinstance(obj, dict):
        raise RecordError("a match record must be a JSON object (C4)")
    if obj.get("format") != MATCH_FORMAT:
        raise RecordError(f"format must be {MATCH_FORMAT!r}, not {json.dumps(obj.get('format'))}")
    mode = _choice(obj, "mode", MODES, "four")
    goal = _choice(obj, "goal", GOALS, "standard")
    pairing = _choice(obj, "pairing", PAIRINGS, "rotating")
    hands = obj.get("hands", [])
    if not isinstance(hands, list):
        raise RecordError("hands must be a list of hand records (C4)")
    match = Match(mode, goal, pairing)
    for n, raw in enumerate(hands, start=1):
        try:
            setup, hand = read_hand(raw, mode)
            if match.by_person and not any(setup.names.values()):
                raise RecordError("mode three needs names: seat -> person (C4)")
            match.add(setup, hand)
        except (RecordError, RuleError) as exc:
            raise RecordError(f"hand {n}: {exc}") from None
    return match


def read_record(obj: Any) -> Hand | Match:
    """A hand or a match record, told apart by ``format``. A JSON object that is
    neither (no ``format`` and no ``plays``, e.g. ``{"foo": 1}``) is refused: it is
    not an empty hand."""
    if isinstance(obj, dict) and obj.get("format") == MATCH_FORMAT:
        return read_match(obj)
    if isinstance(obj, dict) and "format" not in obj and "plays" not in obj:
        keys = ", ".join(json.dumps(k) for k in list(obj)[:5]) or "nothing"
        raise RecordError(f"not a hand (C2) or match (C4) record: no format and no plays, "
                          f"only {keys}")
    return read_hand(obj)[1]


def load(fp: IO[str]) -> Any:
    """Parse JSON text into a record object; malformed JSON is a RecordError."""
    return parse(fp.read())


def parse(text: str | bytes) -> Any:
    """Parse JSON text (bytes must be UTF-8) into a record object; malformed JSON is
    a RecordError."""
    try:
        if isinstance(text, bytes):
            text = text.decode("utf-8")
        return json.loads(text)
    except UnicodeDecodeError as exc:
        raise RecordError(f"not UTF-8 text: {exc.reason}") from None
    except RecursionError:
        raise RecordError("malformed JSON: nested too deeply") from None
    except ValueError as exc:
        raise RecordError(f"malformed JSON: {exc}") from None


# -- writing -------------------------------------------------------------------------------
def hand_record(setup: HandSetup, hand: Hand, mode: str = "four") -> dict[str, Any]:
    """The C2 record of a hand (complete or in progress)."""
    rec: dict[str, Any] = {
        "format": HAND_FORMAT,
        "mode": mode,
        "moon_seats": [s.value for s in hand.moon_seats],
    }
    leader = hand.first_leader or setup.first_leader
    if leader is not None:
        rec["leader"] = leader.value
    if setup.dealer is not None:
        rec["dealer"] = setup.dealer.value
    if mode == "three" and setup.soloist is not None:
        rec["soloist"] = setup.soloist.value
    if setup.names:
        rec["names"] = {s.value: setup.names.get(s) for s in Seat if s in setup.names}
    rec["plays"] = [p.to_dict() for p in hand.plays]
    return rec


def match_record(match: Match) -> dict[str, Any]:
    """The C4 record of a match."""
    rec: dict[str, Any] = {"format": MATCH_FORMAT, "mode": match.mode, "goal": match.goal}
    if match.pairing != "rotating":
        rec["pairing"] = match.pairing
    rec["hands"] = [hand_record(ph.setup, ph.hand, match.mode) for ph in match.hands]
    return rec
