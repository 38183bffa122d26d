"""The climb that moves outlines to where a face fits best (vision.proposals.climb)."""

from __future__ import annotations

import numpy as np

from vision.proposals import climb, moved


def _square(centre: tuple[float, float], side: float = 100.0) -> np.ndarray:
    cx, cy = centre
    h = side / 2
    return np.float32([[cx - h, cy - h], [cx + h, cy - h], [cx + h, cy + h], [cx - h, cy + h]])


def _nearness(target: np.ndarray):
    """A score that is best at *target*'s centre and falls off with the distance."""
    def weigh(quads: np.ndarray) -> np.ndarray:
        return -np.hypot(*(quads.mean(axis=1) - target).T)
    return weigh


def _shifts(step: float) -> np.ndarray:
    v = np.float32([-step, 0.0, step])
    return np.stack(np.meshgrid(v, v, np.float32([0.0]), np.float32([1.0]), indexing="ij"),
                    -1).reshape(-1, 4)


def test_a_climb_keeps_moving_while_it_scores_better_up_to_most_moves():
    """A quad 45 px (0.45 of its side) off where the score is best: one move a step
    stops it 27 px short; moves repeated while they score better bring it there, and
    a quad already there is left."""
    target = np.float32([245.0, 200.0])
    start = np.stack([_square((200.0, 200.0)), _square((245.0, 200.0))])
    steps = [_shifts(0.12), _shifts(0.06)]
    once, _ = climb(start, _nearness(target), lambda s: s, steps)
    again, score = climb(start, _nearness(target), lambda s: s, steps, most=4)
    assert np.hypot(*(once[0].mean(axis=0) - target)) > 15
    # within half the finer step (6 px)
    assert np.hypot(*(again[0].mean(axis=0) - target)) <= 3.0 + 1e-3
    np.testing.assert_allclose(again[1], start[1])
    assert score[1] == 0.0
    # each move is one of the step's moves: the quad keeps its shape
    np.testing.assert_allclose(np.hypot(*(again[0] - np.roll(again[0], 1, axis=0)).T), 100.0,
                               rtol=1e-4)


def test_moved_shifts_along_the_quads_own_sides():
    q = _square((0.0, 0.0))
    out = moved(q[None], np.float32([[0.1, 0.0, 0.0, 1.0]]))[0, 0]
    np.testing.assert_allclose(out.mean(axis=0), (10.0, 0.0), atol=1e-4)
