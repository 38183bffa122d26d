"""Finding the Twilight card where its outline is hard to see (issue 20).

Randomised simulator scenes of the tuning decks and seeds (vision/sim/split.py), a
few each: a cloth of many straight edges (gingham, stripes) must not hide the
Twilight card or turn its moon sides, and a table without one must not grow one.
What varies within a test (deck, turn, place, camera, blur, JPEG) is drawn by the
seed; what the test is about is pinned.
"""

from __future__ import annotations

import functools

import cv2
import numpy as np
import pytest

from vision.locate import (
    PARTS,
    SHOWN_SCORE,
    clockwise,
    corner_hypotheses,
    pose_from_quad,
    shrunk,
    window_mask,
)
from vision.profile import load_deck
from vision.proposals import Pyramid, polish
from vision.quads import edge_maps
from vision.recognise import Recogniser
from vision.sim.decks import taught_deck
from vision.sim.simulator import (
    CLOTH_COUNT,
    SEAT_DIRECTION,
    add_glare,
    cloth_name,
    quad_error,
    render_scene,
)
from vision.sim.split import TUNING_DECKS, TUNING_SEEDS

SIZE = (1280, 720)
#: scene seeds of these tests: tuning seeds, a block no other test uses
BASE = TUNING_SEEDS.start + 630_000


@functools.cache
def _recogniser(deck) -> Recogniser:
    return Recogniser(load_deck(taught_deck(deck)))


def _cloths(kind: str) -> list[int]:
    return [i for i in range(CLOTH_COUNT) if cloth_name(i) == kind]


def _moon_sides(scene) -> list[str]:
    return sorted(scene.truth["twilight"]["moon_seats"])


@pytest.mark.parametrize("kind", ["gingham", "stripes"])
def test_found_on_a_cloth_of_straight_edges(kind):
    """The cloth's squares or stripes outnumber the cards' sides many times over; the
    Twilight card (any deck, turn, shape, place, size 90-130 px) is found all the same
    with its moon sides."""
    cloths = _cloths(kind)
    first = cloths[0]
    for k in range(6):
        deck = TUNING_DECKS[(3 * k + first) % len(TUNING_DECKS)]
        scene = render_scene(BASE + 100 * first + k, size=SIZE, deck=deck,
                             texture=cloths[k % len(cloths)], hand=False, light="neutral",
                             glare=False, card_px=90.0 + 8 * k)
        pose = _recogniser(deck).locate(scene.image)
        assert pose is not None, f"deck {deck}, scene {scene.seed}: Twilight card not found"
        assert sorted(pose.moon_seats) == _moon_sides(scene), (deck, scene.seed)
        # where it is, not a look-alike: the found outline lies on the card's
        corners = np.abs(np.asarray(pose.quad)[:, None] - scene.twilight_quad[None]).sum(-1)
        side = float(np.linalg.norm(scene.twilight_quad[1] - scene.twilight_quad[0]))
        assert corners.min(axis=1).max() < 0.25 * side, (deck, scene.seed)


@pytest.mark.parametrize("light", ["dim", "warm"])
def test_found_in_dim_and_coloured_light(light):
    """Dim light (more sensor noise, weaker edges) and a warm cast on patterned and
    plain cloths: found, right moon sides."""
    for k in range(4):
        deck = TUNING_DECKS[(5 * k + len(light)) % len(TUNING_DECKS)]
        scene = render_scene(BASE + 10_000 + 100 * len(light) + k, size=SIZE, deck=deck,
                             hand=False, light=light, card_px=100.0)
        pose = _recogniser(deck).locate(scene.image)
        assert pose is not None, f"deck {deck}, scene {scene.seed}: Twilight card not found"
        assert sorted(pose.moon_seats) == _moon_sides(scene), (deck, scene.seed)


def test_no_twilight_card_none_found():
    """Cards lying about on busy cloths, none of them the Twilight card: none found (the
    search over the whole frame must not settle for a look-alike)."""
    cloths = _cloths("gingham") + _cloths("stripes") + _cloths("floral")
    for k in range(6):
        deck = TUNING_DECKS[(2 * k + 1) % len(TUNING_DECKS)]
        scene = render_scene(BASE + 20_000 + k, size=SIZE, deck=deck, twilight=False,
                             texture=cloths[k % len(cloths)])
        assert _recogniser(deck).locate(scene.image) is None, (deck, scene.seed)


@pytest.mark.xfail(reason="two of the four cards, fingers across most of the print: at "
                          "the true outline the face's cells seen (locate.visible_cells, 4 "
                          "across) correlate 0.73 and 0.48, its parts 0.56 and 0.49, under "
                          "the covered-card check's 0.95 and 0.75; cells twice as fine pass "
                          "them (0.98) but let more look-alikes through on the tuning "
                          "scenes (docs/recognition.md, Open)", strict=False)
def test_found_half_under_an_arm():
    """A hand reaching over the Twilight card from a seat, its palm a card's length
    beyond the card's centre: the fingers cover part of the card; the part that shows
    still finds it, with the right moon sides."""
    for k, seat in enumerate(SEAT_DIRECTION):
        deck = TUNING_DECKS[(2 * k + 2) % len(TUNING_DECKS)]
        dx, dy = SEAT_DIRECTION[seat]
        scene = render_scene(BASE + 30_000 + k, size=SIZE, deck=deck, twilight_xy=(0.0, 0.0),
                             card_px=110.0, light="neutral", hand=True, hand_seat=seat,
                             hand_target=(dx * 90.0, dy * 90.0))
        assert scene.twilight_occluded
        pose = _recogniser(deck).locate(scene.image)
        assert pose is not None, f"deck {deck}, scene {scene.seed}: Twilight card not found"
        assert sorted(pose.moon_seats) == _moon_sides(scene), (deck, scene.seed)


@pytest.mark.parametrize("k", range(2))
def test_warp_scores_are_the_face_banks(k):
    """The finder weighs many warps at once from sums and dot products: the same
    correlations as the face bank's (whole face and the better half of its parts), at
    the Twilight card's true outline (all four turns), beside it and on plain cloth."""
    deck = TUNING_DECKS[(4 * k + 1) % len(TUNING_DECKS)]
    scene = render_scene(BASE + 40_000 + k, size=SIZE, deck=deck, hand=False,
                         light="neutral", card_px=110.0)
    finder = _recogniser(deck).twilight
    true = np.asarray(scene.twilight_quad, np.float32)
    quads = [true, true + (true[1] - true[0]) * 0.4, true + np.float32([300, 0])]
    pics = finder.warps(scene.image, quads)
    pics = np.concatenate([pics, np.full((1,) + pics.shape[1:], 140, np.uint8)])
    whole, parts = finder.warp_scores(pics)
    np.testing.assert_allclose(whole, finder.bank.scores(pics)[:, 0], atol=1e-4)
    np.testing.assert_allclose(parts, finder.bank.cell_scores(pics, PARTS)[:, 0], atol=1e-4)
    # the card upright (or turned half round: the same moon sides) is the face
    assert max(whole[0], whole[2]) > 0.8, (deck, scene.seed)


def test_polish_without_growth_moves_a_quad_onto_the_face():
    """An outline a fifth of the card off the Twilight card, polished without growth
    (as the face search places a card): same size, a better score, nearer the card."""
    deck = TUNING_DECKS[3]
    scene = render_scene(BASE + 41_000, size=SIZE, deck=deck, hand=False, light="neutral",
                         card_px=120.0)
    finder = _recogniser(deck).twilight
    small, scale = shrunk(scene.image)
    true = np.asarray(scene.twilight_quad, np.float32) * scale
    off = true + (true[1] - true[0]) * 0.2
    pyramid = Pyramid(small)
    before = finder.grid.scores(pyramid, off[None])[0, 0]
    moved, score = polish(finder.grid, pyramid, off[None], grow=False, any_turn=False)

    def sides(q):
        return np.hypot(*(np.roll(q, -1, axis=0) - q).T)

    np.testing.assert_allclose(sides(moved[0]), sides(off), rtol=1e-3)
    assert score[0, 0] > before
    assert np.abs(moved[0] - true).max() < np.abs(off - true).max()


def test_corner_hypotheses_from_two_runs_meeting_at_a_rounded_corner():
    """Two runs square to each other whose ends stop short of where their lines meet (a
    rounded corner) give outlines from that corner along both runs, each run along the
    long or the short side, at least as long as the run, of the shape asked for."""
    aspect = 1.4
    segs = np.float32([[103, 100, 140, 100],    # along x from near the corner
                       [100, 125, 100, 102]])   # along y, drawn towards the corner
    quads = corner_hypotheses(segs, aspect, (20.0, 200.0))
    assert len(quads)
    assert np.allclose(quads[:, 0], (100, 100), atol=0.5)
    for q in quads:
        a, b = q[1] - q[0], q[3] - q[0]
        la, lb = np.hypot(*a), np.hypot(*b)
        # along the runs, away from the corner, holding them
        assert np.allclose(a / la, (1, 0), atol=1e-3) and np.allclose(b / lb, (0, 1), atol=1e-3)
        assert la >= 40 - 0.5 and lb >= 25 - 0.5
        assert np.isclose(max(la, lb) / min(la, lb), aspect, rtol=1e-3)
    # both ways round: the x run along the long side and along the short side
    assert {bool(np.hypot(*(q[1] - q[0])) > np.hypot(*(q[3] - q[0]))) for q in quads} \
        == {True, False}
    # runs that do not meet at a corner (a T, or too far apart) give none
    assert not len(corner_hypotheses(np.float32([[80, 100, 140, 100], [110, 103, 110, 130]]),
                                     aspect, (20.0, 200.0)))
    assert not len(corner_hypotheses(np.float32([[120, 100, 160, 100], [100, 110, 100, 140]]),
                                     aspect, (20.0, 200.0)))


@pytest.mark.parametrize("k", range(2))
def test_found_from_its_corners(k):
    """The search from the corners seen (for a card an arm covers so much that no
    outline of its size is proposed) finds a Twilight card all of whose corners show,
    on its outline, with the right moon sides."""
    for j in range(3):
        deck = TUNING_DECKS[(3 * j + 5 * k) % len(TUNING_DECKS)]
        scene = render_scene(BASE + 42_000 + 10 * k + j, size=SIZE, deck=deck, hand=False,
                             light="neutral", card_px=100.0 + 10 * j)
        finder = _recogniser(deck).twilight
        small, scale = shrunk(scene.image)
        finder.new_frame()
        found = finder.verify_corners(scene.image, finder.hypotheses(small), scale)
        assert found is not None, (deck, scene.seed)
        pose = pose_from_quad(found[0])
        assert sorted(pose.moon_seats) == _moon_sides(scene), (deck, scene.seed)
        true = clockwise(scene.twilight_quad)
        corners = np.abs(np.asarray(found[0])[:, None] - true[None]).sum(-1)
        side = float(np.linalg.norm(true[1] - true[0]))
        assert corners.min(axis=1).max() < 0.25 * side, (deck, scene.seed)


@pytest.mark.parametrize("k", range(2))
def test_what_a_lesser_face_shows_is_the_face(k):
    """A face correlating less than clearly must show what it shows as the Twilight
    face (locate.SHOWN_SCORE): the Twilight card at its outline does; the deck's other
    cards at theirs, at any turn, do not."""
    for j in range(2):
        deck = TUNING_DECKS[(7 * (2 * k + j) + 3) % len(TUNING_DECKS)]
        scene = render_scene(BASE + 43_000 + 2 * k + j, size=SIZE, deck=deck, hand=False,
                             light="neutral")
        finder = _recogniser(deck).twilight
        finder.new_frame()
        assert finder.shown(scene.image, clockwise(scene.twilight_quad), 0) >= SHOWN_SCORE, \
            (deck, scene.seed)
        for seat, quad in scene.side_quads.items():
            if quad is not None:
                assert max(finder.shown(scene.image, clockwise(quad), r) for r in range(4)) \
                    < SHOWN_SCORE, (deck, scene.seed, seat)


def test_a_lamps_reflection_over_the_twilight_card_is_left_out():
    """Dim light and a lamp's reflection over part of the Twilight card: the reflection
    swamps its face's plain correlation at its very outline (the check of a card found
    passes none), but with the light's smooth field left out (FaceBank.flattened) the
    same check finds most of them there, each with its moon sides. Eight decks; the
    check stays strict (an oblong card's quarter turns must still fit clearly worse),
    so not every one."""
    found = 0
    for k in range(8):
        deck = TUNING_DECKS[(4 * k + 3) % len(TUNING_DECKS)]
        scene = render_scene(BASE + 60_000 + k, size=SIZE, deck=deck, hand=False,
                             light="dim", glare=False, card_px=100.0, twilight_xy=(0.0, 0.0))
        image = scene.image.copy()
        true = clockwise(scene.twilight_quad)
        glint = true.mean(axis=0) + 0.25 * (true[1] - true[0])
        add_glare(image, (float(glint[0]), float(glint[1])), 60, 0.6)
        finder = _recogniser(deck).twilight
        finder.new_frame()
        plain = finder.turn_scores(image, [true])
        assert finder.verify(image, true[None], plain) is None, (deck, scene.seed)
        got = finder.verify(image, true[None], finder.turn_scores(image, [true], flat=True),
                            flat=True)
        if got is not None:
            assert sorted(pose_from_quad(got[0]).moon_seats) == _moon_sides(scene), \
                (deck, scene.seed)
            assert quad_error(got[0], true) < 0.05, (deck, scene.seed)
            found += 1
    assert found >= 5, found


@pytest.mark.parametrize("k", range(2))
def test_a_part_of_the_card_taken_for_it_grows_to_the_card(k):
    """A face found less than clearly may be a part of the card that looks like the
    whole (a light middle in a frame, where the card's outline is lost in the cloth):
    from an outline on a part of the card, half its size or less and anchored at its
    middle or a corner, the card itself is found, with its moon sides."""
    for j in range(3):
        deck = TUNING_DECKS[(3 * j + 5 * k + 1) % len(TUNING_DECKS)]
        scene = render_scene(BASE + 44_000 + 10 * k + j, size=SIZE, deck=deck, hand=False,
                             light="neutral", card_px=110.0)
        finder = _recogniser(deck).twilight
        small, scale = shrunk(scene.image)
        finder.new_frame()
        hy = finder.hypotheses(small)
        true = clockwise(scene.twilight_quad)
        anchor = true.mean(axis=0) if j == 0 else true[j]
        part = (true - anchor) * np.float32(0.5 - 0.05 * j) + anchor
        score = float(finder.turn_scores(scene.image, [part]).max())
        quad, _ = finder.outgrown(scene.image, (part, score), hy.pyramid, scale, hy.maps)
        assert quad_error(quad, true) < 0.05, (deck, scene.seed)
        assert sorted(pose_from_quad(quad).moon_seats) == _moon_sides(scene), (deck, scene.seed)


def test_a_card_found_under_a_hand_is_no_part_of_a_larger_one():
    """A Twilight card a hand reaches over, found at its own outline (less than
    clearly, as the hand hides part of it): growing it finds no larger card it would be
    a part of, and what shows of the card within a grown outline, placed a little off
    it, does not replace it (locate.PART_OF)."""
    for k in range(12):
        seat = list(SEAT_DIRECTION)[k % 4]
        deck = TUNING_DECKS[(3 * k + 1) % len(TUNING_DECKS)]
        dx, dy = SEAT_DIRECTION[seat]
        scene = render_scene(BASE + 45_000 + k, size=SIZE, deck=deck, card_px=110.0,
                             light="neutral", hand=True, hand_seat=seat,
                             hand_target=(dx * 110.0, dy * 110.0), twilight_xy=(0.0, 0.0))
        finder = _recogniser(deck).twilight
        small, scale = shrunk(scene.image)
        finder.new_frame()
        hy = finder.hypotheses(small)
        true = clockwise(scene.twilight_quad)
        score = float(finder.turn_scores(scene.image, [true])[0, 0])
        quad, _ = finder.outgrown(scene.image, (true, score), hy.pyramid, scale, hy.maps)
        assert quad_error(quad, true) < 0.05, (deck, scene.seed)


def test_window_mask_holds_the_cells_seen_and_the_margin_beyond_them():
    """An alignment window's mask from the cells a card shows: each cell over its part
    of the face, a rim cell's reaching out across the margin; a cell covered is left
    out with the table beyond it."""
    seen = np.array([[1, 1, 0, 0],
                     [1, 1, 0, 0],
                     [1, 1, 1, 0]], bool).ravel()
    mask = window_mask(seen, (4, 3), (40, 30), 5)
    assert mask.shape == (40, 50) and mask.dtype == np.uint8
    assert set(np.unique(mask)) == {0, 255}
    assert mask[5:15, 5:25].all() and not mask[5:25, 25:45].any()  # the face's cells
    assert mask[0:5, 0:25].all() and not mask[0:5, 25:].any()  # the margin above
    assert mask[35:, 5:35].all() and not mask[35:, 35:].any()  # below: the third row
    assert mask[15:25, 0:5].all() and not mask[15:25, 45:].any()  # left, right


def test_aligned_on_what_shows_an_outline_moves_onto_a_covered_card():
    """An outline a twentieth of the card off a Twilight card whose far part a cover
    hides (a plain patch over the art's right two fifths and the table beyond),
    aligned with the face on the cells that show only (locate.TwilightFinder.align
    with *seen*): it ends on the card. (Aligned on the whole face, a quarter of the
    starts end further than 0.07 of the diagonal off, the cover pulling them; so, one
    in 44 here.)"""
    errors = []
    for k, deck in enumerate(TUNING_DECKS):
        scene = render_scene(BASE + 46_000 + k, size=SIZE, deck=deck, twilight_xy=(0.0, 0.0),
                             card_px=110.0, light="neutral", hand=False)
        finder = _recogniser(deck).twilight
        true = np.float32(scene.twilight_quad)
        across, down = true[1] - true[0], true[3] - true[0]
        cover = np.float32([true[0] + across * u + down * v
                            for u, v in ((0.6, -0.3), (1.5, -0.3), (1.5, 1.3), (0.6, 1.3))])
        image = scene.image.copy()
        cv2.fillConvexPoly(image, np.int32(cover), (120, 160, 215))
        cx, cy = finder.cells
        seen = np.tile((np.arange(cx) + 1) / cx <= 0.6 + 1e-6, cy)  # columns left of it
        finder.new_frame()
        for du, dv in ((0.05, 0), (0, 0.05), (-0.05, 0), (0, -0.05)):
            start = true + across * du + down * dv
            errors.append(quad_error(finder.align(image, start, seen), true))
    errors = np.array(errors)
    assert np.median(errors) <= 0.04, np.round(errors, 3)
    assert (errors > 0.07).mean() <= 0.1, np.round(errors, 3)


def test_the_face_s_best_half_finds_the_card_without_its_outline():
    """The last search (locate.TwilightFinder.covered_anywhere, for a card under a
    hand whose outline is lost in the hand's) looks for the face's best half all over
    the frame, with no outline to start from. On 16 scenes of a Twilight card a hand
    reaches past, it finds at least half on their outlines (within a twentieth of the
    diagonal) with the right moon sides (a coarse search: 26 of 40 so; one more a
    fifth off), and none off the card. (On tables without one it finds none:
    test_no_twilight_card_none_found, through find.)"""
    found_right = 0
    for k in range(16):
        seat = list(SEAT_DIRECTION)[k % 4]
        deck = TUNING_DECKS[(3 * k + 2) % len(TUNING_DECKS)]
        dx, dy = SEAT_DIRECTION[seat]
        scene = render_scene(BASE + 47_000 + k, size=SIZE, deck=deck, twilight_xy=(0.0, 0.0),
                             card_px=110.0, light="neutral", hand=True, hand_seat=seat,
                             hand_target=(dx * 160.0, dy * 160.0))
        finder = _recogniser(deck).twilight
        small, scale = shrunk(scene.image)
        finder.new_frame()
        found = finder.covered_anywhere(scene.image, Pyramid(small), scale, edge_maps(small))
        if found is None:
            continue
        error = quad_error(found[0], scene.twilight_quad)
        assert error < 0.25, (deck, scene.seed)  # on the card, not elsewhere
        pose = pose_from_quad(found[0], size_mm=finder.size_mm)
        assert sorted(pose.moon_seats) == _moon_sides(scene), (deck, scene.seed)
        found_right += error < 0.05
    assert found_right >= 8
