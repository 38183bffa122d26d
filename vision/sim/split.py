"""The one place the simulator's material is split, up front (issue 20).

Recognition may be tuned on the tuning decks and seeds only; the held-out decks
and seeds are for the benches' held-out figures, and no decision looks at them.
``"builtin"`` (the product's own deck) is in both lists: its held-out figures use
held-out scene seeds. Procedural deck seeds are the ints (see
:mod:`vision.sim.decks`); scene and hand seeds are separate ranges.
"""

from __future__ import annotations

#: Procedural deck seeds recognition may be tuned on (plus the built-in deck).
TUNING_DECKS: tuple[str | int, ...] = ("builtin", *range(101, 111))
#: Decks never looked at while tuning: >= 5 procedural ones plus the built-in deck.
#: Their Twilight cards span the aspects 1.0-1.8 (1.72, 1.01, 1.05, 1.61, 1.27,
#: 1.31, 1.01, 1.45; the built-in deck's 1.40), chosen by design, not by results.
HELDOUT_DECKS: tuple[str | int, ...] = ("builtin", *range(9001, 9009))
#: Scene and hand seeds for tuning.
TUNING_SEEDS = range(1_000_000, 2_000_000)
#: Scene and hand seeds never looked at while tuning.
HELDOUT_SEEDS = range(7_000_000, 8_000_000)


def check_disjoint() -> None:
    """Raise if the tuning and held-out material overlap (other than the built-in deck)."""
    shared = (set(TUNING_DECKS) & set(HELDOUT_DECKS)) - {"builtin"}
    if shared:
        raise AssertionError(f"decks both tuning and held out: {sorted(shared)}")
    if TUNING_SEEDS.stop > HELDOUT_SEEDS.start and HELDOUT_SEEDS.stop > TUNING_SEEDS.start:
        raise AssertionError("tuning and held-out seed ranges overlap")
