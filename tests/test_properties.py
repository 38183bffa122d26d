"""Property tests over random legal hands simulated from random deals (R3)."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from companion.core.cards import CARDS, SEATS, Cult
from companion.core.deal import random_plays
from companion.core.rules import Hand, IllegalPlay

seeds = st.integers(min_value=0, max_value=2**32 - 1)
leaders = st.sampled_from(SEATS)
moon_pairs = st.sampled_from([(SEATS[0], SEATS[2]), (SEATS[1], SEATS[3])])


def played(seed: int, moon, leader, n: int = 28) -> Hand:
    hand = Hand(moon, leader)
    for p in random_plays(random.Random(seed), moon, leader)[:n]:
        hand.play(p.seat, p.card)
    return hand


@settings(max_examples=150, deadline=None)
@given(seeds, moon_pairs, leaders, st.integers(min_value=0, max_value=28))
def test_partition_and_score(seed, moon, leader, n) -> None:
    hand = played(seed, moon, leader, n)
    cards = [p.card for p in hand.plays]
    assert len(set(cards)) == len(cards) == n
    in_progress = hand.tricks[-1].cards if hand.tricks and not hand.tricks[-1].complete else []
    parts = hand.won(Cult.SUN) + hand.won(Cult.MOON) + hand.neutral + hand.lying + in_progress
    assert sorted(parts, key=CARDS.index) == sorted(cards, key=CARDS.index)
    for party in Cult:
        assert 0 <= hand.multiplier(party) <= 6
        assert hand.score(party) == hand.souls(party) * hand.multiplier(party)
        for card in hand.won(party):
            assert card in cards
    # every card at a side is that side's cult (R3)
    for p in hand.plays:
        assert p.card.cult is hand.cult_of(p.seat)
    if n == 28:
        neutral = sum(card.souls for card in hand.neutral)
        assert hand.souls(Cult.SUN) + hand.souls(Cult.MOON) + neutral == 60
        assert hand.next is None and hand.complete


@settings(max_examples=100, deadline=None)
@given(seeds, moon_pairs, leaders, st.integers(min_value=1, max_value=28))
def test_undo_restores_equal_state(seed, moon, leader, n) -> None:
    before = played(seed, moon, leader, n - 1)
    after = played(seed, moon, leader, n)
    after.undo()
    assert after == before


@settings(max_examples=100, deadline=None)
@given(seeds, moon_pairs, leaders, st.integers(min_value=1, max_value=28), st.data())
def test_replace_with_same_card_changes_nothing(seed, moon, leader, n, data) -> None:
    hand = played(seed, moon, leader, n)
    k = data.draw(st.integers(min_value=1, max_value=n))
    before = hand.state_key()
    hand.replace(k, hand.plays[k - 1].card)
    assert hand.state_key() == before


@settings(max_examples=150, deadline=None)
@given(seeds, moon_pairs, leaders, st.integers(min_value=0, max_value=28),
       st.sampled_from(SEATS), st.sampled_from(CARDS))
def test_refused_plays_change_nothing(seed, moon, leader, n, seat, card) -> None:
    hand = played(seed, moon, leader, n)
    before = hand.state_key()
    try:
        hand.play(seat, card)
    except IllegalPlay as exc:
        assert exc.index == n + 1 and exc.rule in ("R3", "R9")
        assert hand.state_key() == before
    else:
        assert len(hand.plays) == n + 1
