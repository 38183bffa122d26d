"""Gaps (issue 21): a card laid in turn that nobody could name is an open gap at its
seat and place; the plays after it are taken as they come, and naming it settles the
trick, who led next and the score exactly (the rules core, the game and its log)."""

from __future__ import annotations

import random

import pytest

from companion.core.cards import Card, Seat
from companion.core.deal import random_plays
from companion.core.gamelog import GameLog
from companion.core.rules import Hand, IllegalPlay

MOON = (Seat.NORTH, Seat.SOUTH)


def _hand_with_gap(plays, k):
    hand = Hand(MOON)
    for i, p in enumerate(plays):
        if i == k:
            hand.play_gap(p.seat)
        else:
            hand.play(p.seat, p.card)
    return hand


@pytest.mark.parametrize("seed", range(40))
def test_a_gap_anywhere_keeps_every_later_play_and_naming_it_is_exact(seed) -> None:
    rng = random.Random(seed)
    plays = random_plays(rng, MOON, Seat.EAST)
    k = rng.randrange(28)
    hand = _hand_with_gap(plays, k)
    assert hand.complete and hand.provisional and hand.gaps == [k + 1]
    assert hand.to_dict()["provisional"] is True
    # all 27 other cards are known: only the missing card can lie there
    assert hand.gap_choices(k + 1) == [plays[k].card]
    full = Hand(MOON)
    for p in plays:
        full.play(p.seat, p.card)
    hand.replace(k + 1, plays[k].card)
    assert not hand.provisional
    assert hand.to_dict() == full.to_dict()


def test_a_gap_must_be_laid_in_turn_and_names_only_what_the_rules_allow() -> None:
    hand = Hand(MOON, Seat.EAST)
    with pytest.raises(IllegalPlay, match="not on turn"):
        hand.play_gap(Seat.SOUTH)
    hand.play_gap(Seat.EAST)
    assert hand.next is not None and hand.next[0] is Seat.SOUTH
    hand.play(Seat.SOUTH, Card.parse("moon-priest"))
    # a sun seat: a sun card, and not one played already
    choices = {c.id for c in hand.gap_choices(1)}
    assert "sun-hierarch" in choices and not any(c.startswith("moon-") for c in choices)
    with pytest.raises(IllegalPlay):
        hand.replace(1, Card.parse("moon-adept"))
    assert hand.gaps == [1]  # refused: unchanged


def test_after_an_open_trick_the_next_card_tells_who_leads() -> None:
    hand = Hand(MOON, Seat.EAST)
    hand.play_gap(Seat.EAST)
    hand.play(Seat.SOUTH, Card.parse("moon-novice"))
    hand.play(Seat.WEST, Card.parse("sun-souls-3"))
    hand.play(Seat.NORTH, Card.parse("moon-souls-4"))
    assert hand.next is None and not hand.complete  # who took it is not known
    hand.play(Seat.SOUTH, Card.parse("moon-souls-5"))  # south leads: south took it
    assert hand.tricks[0].winner is Seat.SOUTH
    # now only cards below the novice fit east's gap (else east would have led)
    choices = {c.id for c in hand.gap_choices(1)}
    assert "sun-hierarch" not in choices and "sun-souls-7" in choices


def test_the_game_log_keeps_gaps_and_names_them(tmp_path) -> None:
    rng = random.Random(5)
    plays = random_plays(rng, MOON, Seat.EAST)
    log = GameLog.open(tmp_path)
    for i, p in enumerate(plays):
        if i == 6:
            log.gap(p.seat, frame=i)
        else:
            log.play(p.seat, p.card, frame=i)
    snap = log.snapshot()
    gap = snap["hand"]["gaps"]
    assert gap == [{"index": 7, "seat": plays[6].seat.value, "trick": 2, "place": 3,
                    "choices": [plays[6].card.id]}]
    assert snap["hand"]["provisional"] and snap["match"]["hands"]
    log.close()
    log = GameLog.open(tmp_path)  # replayed from the disk: the same
    assert log.snapshot()["hand"]["gaps"] == gap
    snap = log.correct(7, plays[6].card)
    assert snap["hand"]["gaps"] == [] and not snap["hand"]["provisional"]
    full = Hand(MOON)
    for p in plays:
        full.play(p.seat, p.card)
    assert snap["hand"]["score"] == full.scores
    assert snap["match"]["totals"] == full.scores
    log.close()
