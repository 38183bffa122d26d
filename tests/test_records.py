"""Hand (C2) and match (C4) records, and the `score` command (C3)."""

from __future__ import annotations

import io
import json
import random
import subprocess

import pytest

from companion.core.cards import SEATS, Seat
from companion.core.deal import random_plays
from companion.core.match import HandSetup, Match
from companion.core.records import (
    RecordError,
    hand_record,
    load,
    match_record,
    read_hand,
    read_match,
    read_record,
)
from companion.core.rules import Hand

R6_PLAYS = [
    ("east", "sun-hierarch"), ("south", "moon-novice"), ("west", "sun-souls-7"),
    ("north", "moon-souls-3"), ("east", "sun-obelisk"), ("south", "moon-temple"),
    ("west", "sun-adept"), ("north", "moon-souls-4"),
]


def hand_obj(plays, **extra):
    rec = {"format": "twilight-hand/1", "moon_seats": ["north", "south"], "leader": "east"}
    rec.update(extra)
    rec["plays"] = [{"seat": s, "card": c} for s, c in plays]
    return rec


def full_hand(seed: int, leader: Seat = Seat.EAST, moon=(Seat.NORTH, Seat.SOUTH)) -> list:
    return [(p.seat.value, p.card.id) for p in random_plays(random.Random(seed), moon, leader)]


def run_score(cli, text: str) -> subprocess.CompletedProcess:
    return subprocess.run([*cli, "score", "-"], input=text, capture_output=True, text=True,
                          timeout=30)


def test_hand_record_round_trip() -> None:
    for seed in range(20):
        obj = hand_obj(full_hand(seed)[: seed + 5], dealer="north")
        setup, hand = read_hand(obj)
        again = hand_record(setup, hand)
        setup2, hand2 = read_hand(json.loads(json.dumps(again)))
        assert hand2 == hand
        assert again == hand_record(setup2, hand2)


def test_match_record_round_trip_three_players() -> None:
    names = {"north": None, "east": "Eva", "south": "Sam", "west": "Wim"}
    rec = {"format": "twilight-match/1", "mode": "three", "goal": "magic",
           "hands": [hand_obj(full_hand(1, Seat.SOUTH), mode="three", soloist="south",
                              names=names, leader=None)]}
    match = read_match(rec)
    again = match_record(match)
    assert read_match(again).summary() == match.summary()
    totals = match.summary()["totals"]
    score = match.summary()["hands"][0]["score"]
    assert totals == {"Eva": score["sun"], "Sam": score["moon"], "Wim": score["sun"]}


def test_leader_defaults() -> None:
    _, hand = read_hand(hand_obj([("south", "sun-souls-3")], moon_seats=["east", "west"],
                                 leader=None, dealer="east"))
    assert hand.tricks[0].leader is Seat.SOUTH
    _, hand = read_hand(hand_obj([("west", "sun-souls-3")], leader=None))
    assert hand.tricks[0].leader is Seat.WEST  # first play leads
    _, hand = read_hand({"format": "twilight-hand/1", "mode": "three", "soloist": "north",
                         "plays": [{"seat": "north", "card": "moon-adept"}]})
    assert hand.tricks[0].leader is Seat.NORTH
    with pytest.raises(RecordError, match="not on turn"):
        read_hand(hand_obj([("west", "sun-souls-3")], leader=None, dealer="east",
                           moon_seats=["north", "south"]))


def test_load_malformed_json() -> None:
    with pytest.raises(RecordError, match="malformed JSON"):
        load(io.StringIO("{"))


def test_match_totals_goal_and_hands_after_the_end() -> None:
    match = Match("four", "standard")
    seed = 0
    while not match.over:
        plays = full_hand(seed)
        _, hand = read_hand(hand_obj(plays))
        match.add(HandSetup(), hand)
        seed += 1
    totals = match.totals()
    assert max(totals.values()) >= 1000
    assert match.winner() in ("sun", "moon", "draw")
    rec = match_record(match)
    rec["hands"].append(hand_obj(full_hand(999)))
    with pytest.raises(RecordError, match=f"hand {len(rec['hands'])}: .*ended the match"):
        read_match(rec)


def test_dealer_passes_left() -> None:
    match = Match()
    setup = HandSetup(dealer=Seat.NORTH)
    assert setup.first_leader is Seat.EAST
    hand = Hand(setup.moon_seats, setup.first_leader)
    for p in random_plays(random.Random(3), leader=Seat.EAST):
        hand.play(p.seat, p.card)
    match.add(setup, hand)
    nxt = match.next_setup()
    assert nxt.dealer is Seat.EAST and nxt.first_leader is Seat.SOUTH


def test_score_cli_on_hand(cli) -> None:
    out = run_score(cli, json.dumps(hand_obj(R6_PLAYS)))
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result["score"] == {"sun": 51, "moon": 0}
    assert result["next"] == {"seat": "west", "cult": "sun"}
    assert result["complete"] is False
    assert [t["winner"] for t in result["tricks"]] == ["east", "west"]
    assert result["multiplier"] == {"sun": 3, "moon": 0}
    assert set(result) >= {"complete", "tricks", "next", "lying", "won", "neutral", "souls",
                           "multiplier", "score"}


def test_score_cli_on_file_and_match(cli, tmp_path) -> None:
    rec: dict = {"format": "twilight-match/1", "mode": "four", "goal": "standard"}
    _, hand = read_hand(hand_obj(full_hand(4)))
    rec["hands"] = [hand_obj(full_hand(4))]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(rec))
    out = subprocess.run([*cli, "score", str(path)], capture_output=True, text=True, timeout=30)
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    assert result == {"hands": [{"score": hand.scores}], "totals": hand.scores,
                      "over": False, "winner": None}


BAD = [
    ("{not json", "malformed JSON"),
    ("[]", "JSON object"),
    (json.dumps(hand_obj([("east", "moon-souls-7")])), "play 1 (east, moon-souls-7)"),
    (json.dumps(hand_obj([("east", "sun-joker")])), "play 1 (east, sun-joker)"),
    (json.dumps(hand_obj([("up", "sun-souls-7")])), "play 1 (up, sun-souls-7)"),
    (json.dumps(hand_obj([("east", "sun-souls-7"), ("east", "sun-souls-6")])), "play 2"),
    (json.dumps(hand_obj([("east", "sun-souls-7"), ("south", "moon-adept"),
                          ("west", "sun-souls-7")])), "already played"),
    (json.dumps(hand_obj([], moon_seats=["north", "east"])), "not opposite"),
    (json.dumps(hand_obj([], mode="three")), "soloist"),
    (json.dumps({"format": "twilight-hand/9", "plays": []}), "format"),
    (json.dumps({"format": "twilight-match/1", "mode": "five", "hands": []}), "mode"),
    ("\xff\xfe", ""),
]


@pytest.mark.parametrize(("text", "words"), BAD)
def test_score_cli_refuses_invalid_records(cli, text, words) -> None:
    out = run_score(cli, text)
    assert out.returncode == 2
    assert out.stdout == ""
    lines = out.stderr.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in out.stderr
    assert words in lines[0]


def test_score_cli_missing_file(cli, tmp_path) -> None:
    out = subprocess.run([*cli, "score", str(tmp_path / "nope.json")], capture_output=True,
                         text=True, timeout=30)
    assert out.returncode == 2 and out.stdout == "" and "cannot read" in out.stderr


def test_read_record_tells_hand_from_match() -> None:
    assert isinstance(read_record(hand_obj(R6_PLAYS)), Hand)
    assert isinstance(read_record({"format": "twilight-match/1", "hands": []}), Match)
    assert all(isinstance(s, Seat) for s in SEATS)


def test_python_dash_m_companion(tmp_path) -> None:
    import sys

    out = subprocess.run([sys.executable, "-m", "companion", "score", "-"],
                         input=json.dumps(hand_obj(R6_PLAYS)), capture_output=True, text=True,
                         timeout=30)
    assert out.returncode == 0 and json.loads(out.stdout)["score"]["sun"] == 51
