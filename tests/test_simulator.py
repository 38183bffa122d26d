"""The table simulator (issue 3): seeded scenes whose truth (C6) matches their pixels."""

from __future__ import annotations

import math
from collections.abc import Callable

import cv2
import numpy as np
import pytest

from companion.core.cards import CARD_IDS, SEATS, Card
from vision.deck_art import CARD_MM, render_card
from vision.sim.simulator import SEAT_DIRECTION, render_scene, seat_of_direction

SMALL = (640, 360)
CHECK_PX_PER_MM = 2.0


def centre(quad: np.ndarray) -> np.ndarray:
    return quad.astype(np.float64).mean(axis=0)


def unwarp(image: np.ndarray, quad: np.ndarray, px_per_mm: float = CHECK_PX_PER_MM
           ) -> np.ndarray:
    """The card inside ``quad`` (its own corner order) warped back upright."""
    w, h = round(CARD_MM[0] * px_per_mm), round(CARD_MM[1] * px_per_mm)
    dst = np.float32([(0, 0), (w, 0), (w, h), (0, h)])
    M = cv2.getPerspectiveTransform(quad.astype(np.float32), dst)
    return cv2.warpPerspective(image, M, (w, h), flags=cv2.INTER_AREA)


def art_difference(patch: np.ndarray, card_id: str, style: int) -> float:
    art = render_card(card_id, style, CHECK_PX_PER_MM).astype(np.float32)
    m = 3  # leave out the rounded corners and the anti-aliased rim
    return float(np.abs(patch[m:-m, m:-m].astype(np.float32) - art[m:-m, m:-m]).mean())


def assert_reads_as(card_id: str, patch: np.ndarray,
                    difference: Callable[[np.ndarray, str], float], where: object) -> None:
    """``patch`` (an upright card) differs least from ``card_id`` of all the cards of
    its cult, and little."""
    cult = Card.parse(card_id).cult
    scores = {cid: difference(patch, cid) for cid in CARD_IDS if Card.parse(cid).cult is cult}
    assert min(scores, key=scores.get) == card_id, (where, card_id, scores[card_id])
    assert scores[card_id] < 25


def test_truth_has_the_c6_form_and_obeys_r3() -> None:
    for seed in range(8):
        scene = render_scene(seed, size=SMALL)
        truth = scene.truth
        assert set(truth) == {"twilight", "sides"}
        assert truth["twilight"]["found"] is True
        moon = truth["twilight"]["moon_seats"]
        assert moon in (["north", "south"], ["east", "west"])
        assert set(truth["sides"]) == {s.value for s in SEATS}
        for seat, card_id in truth["sides"].items():
            if card_id is None:
                assert scene.side_quads[seat] is None
                continue
            assert card_id in CARD_IDS
            # R3: a moon card at a moon side, a sun card at a sun side.
            assert Card.parse(card_id).cult.value == ("moon" if seat in moon else "sun")


@pytest.mark.parametrize("seed", range(16))
def test_each_card_lies_at_the_side_the_truth_names(seed: int) -> None:
    """After the perspective warp, each side card is beyond the named side of the
    Twilight card, and the Twilight card's moon sides face the moon seats."""
    scene = render_scene(seed, style=seed % 2, size=SMALL)
    tw = scene.twilight_quad
    assert tw is not None and tw.shape == (4, 2)
    c = centre(tw)
    # Edges 0-1 and 2-3 of the Twilight quad are its moon sides.
    moon_dirs = {seat_of_direction(*(centre(tw[[0, 1]]) - c)).value,
                 seat_of_direction(*(centre(tw[[2, 3]]) - c)).value}
    assert moon_dirs == set(scene.truth["twilight"]["moon_seats"])
    for seat in SEATS:
        quad = scene.side_quads[seat.value]
        if quad is None:
            continue
        v = centre(quad) - c
        assert seat_of_direction(*v) is seat
        # Beyond the Twilight card's edge that faces this seat.
        edges = [tw[[0, 1]], tw[[1, 2]], tw[[2, 3]], tw[[3, 0]]]
        facing = max(edges, key=lambda e: float(np.dot(centre(e) - c,
                                                       SEAT_DIRECTION[seat])))
        normal = centre(facing) - c
        normal /= np.linalg.norm(normal)
        assert np.dot(v, normal) > np.dot(centre(facing) - c, normal)
        assert cv2.pointPolygonTest(tw.astype(np.float32), tuple(map(float, centre(quad))),
                                    False) < 0


@pytest.mark.parametrize("seed", [1, 2, 3, 8, 13])
def test_the_named_card_is_the_one_in_the_pixels(seed: int) -> None:
    """Warping each side quad back upright gives the named card's art, closer than
    any other card of its cult; the Twilight quad gives the Twilight card."""
    style = seed % 2
    scene = render_scene(seed, style=style, size=(1280, 720), effects=False, hand=False,
                         under_cards=0)
    named = 0
    for seat, card_id in scene.truth["sides"].items():
        quad = scene.side_quads[seat]
        if card_id is None:
            continue
        assert_reads_as(card_id, unwarp(scene.image, quad),
                        lambda patch, cid: art_difference(patch, cid, style), seat)
        named += 1
    assert named >= 1
    assert scene.twilight_quad is not None
    assert art_difference(unwarp(scene.image, scene.twilight_quad), "twilight", style) < 25


def test_same_seed_same_pixels_different_seed_different_scene() -> None:
    a = render_scene(7, size=SMALL)
    b = render_scene(7, size=SMALL)
    c = render_scene(8, size=SMALL)
    assert np.array_equal(a.image, b.image)
    assert a.truth == b.truth
    assert not np.array_equal(a.image, c.image)
    assert np.abs(a.image.astype(int) - c.image).mean() > 5


def test_image_size_and_type() -> None:
    scene = render_scene(0, size=(320, 240))
    assert scene.image.shape == (240, 320, 3)
    assert scene.image.dtype == np.uint8
    assert render_scene(0).image.shape == (720, 1280, 3)


def test_forced_sides_and_under_cards() -> None:
    sides = {"north": "moon-adept", "east": "sun-souls-7", "south": None, "west": "sun-altar"}
    scene = render_scene(3, size=SMALL, twilight_deg=0, sides=sides, under_cards=2, hand=False)
    assert scene.truth["twilight"]["moon_seats"] == ["north", "south"]
    assert scene.truth["sides"] == sides
    assert scene.side_quads["south"] is None
    for seat in ("north", "east", "west"):
        assert len(scene.under_quads[seat]) == 2
    assert scene.occluded == {s.value: False for s in SEATS}


def test_wrong_cult_at_a_side_is_refused() -> None:
    with pytest.raises(ValueError, match="R3"):
        render_scene(0, twilight_deg=0, sides={"north": "sun-adept"})


def test_turned_twilight_card_moves_the_moon_seats() -> None:
    scene = render_scene(4, size=SMALL, twilight_deg=90)
    assert scene.truth["twilight"]["moon_seats"] == ["east", "west"]


def test_without_twilight_nothing_is_found() -> None:
    scene = render_scene(5, size=SMALL, twilight=False)
    assert scene.truth["twilight"]["found"] is False
    assert set(scene.truth["sides"].values()) == {None}
    assert scene.twilight_quad is None


def test_an_arm_over_a_card_marks_it_occluded() -> None:
    sides = {"north": "moon-hierarch", "east": "sun-souls-3", "west": "sun-novice"}
    base = render_scene(6, size=SMALL, twilight_deg=0, hand=False, sides=sides)
    quad = base.side_quads["east"]
    assert quad is not None
    # Aim the palm at the east card: the same seed gives the same layout.
    h = np.linalg.inv(base.homography)
    target = cv2.perspectiveTransform(centre(quad).reshape(1, 1, 2), h).reshape(2)
    scene = render_scene(6, size=SMALL, twilight_deg=0, hand=True, hand_seat="east",
                         hand_target=tuple(target), sides=sides)
    assert scene.occluded["east"] is True
    assert scene.occluded["west"] is False  # an arm from the east stops short of it
    assert base.occluded == {s.value: False for s in SEATS}
    assert np.abs(scene.image.astype(int) - base.image).mean() > 1


def test_tilt_and_options_are_checked() -> None:
    flat = render_scene(9, size=SMALL, tilt_deg=0, effects=False, hand=False)
    tilted = render_scene(9, size=SMALL, tilt_deg=12, effects=False, hand=False)
    assert flat.twilight_quad is not None and tilted.twilight_quad is not None
    # A square-on camera keeps the card's opposite edges equally long.
    q = flat.twilight_quad
    assert abs(np.linalg.norm(q[1] - q[0]) - np.linalg.norm(q[2] - q[3])) < 0.5
    with pytest.raises(TypeError, match="unknown options"):
        render_scene(0, colour="red")


def test_a_mirrored_camera_flips_the_picture_not_the_truth() -> None:
    plain = render_scene(12, size=SMALL, hand=False)
    mirrored = render_scene(12, size=SMALL, hand=False, mirror=True)
    assert mirrored.truth == plain.truth
    assert np.array_equal(mirrored.image, plain.image[:, ::-1])
    for seat, quad in plain.side_quads.items():
        other = mirrored.side_quads[seat]
        if quad is None:
            assert other is None
            continue
        assert other is not None
        assert np.allclose(other[:, 0], SMALL[0] - 1 - quad[:, 0], atol=1e-3)
        # East and west swap sides in the picture.
        if seat == "east":
            assert centre(other)[0] < centre(mirrored.twilight_quad)[0]


# -- domain-randomised scenes and procedural decks (issue 20) ----------------------------------
#: A procedural deck whose Twilight card is (near enough) square, and one of another look.
SQUARE_DECK = 289
OTHER_DECK = 103


def deck_unwarp(image: np.ndarray, quad: np.ndarray, size_mm: tuple[float, float]
                ) -> np.ndarray:
    w, h = round(size_mm[0] * CHECK_PX_PER_MM), round(size_mm[1] * CHECK_PX_PER_MM)
    dst = np.float32([(0, 0), (w, 0), (w, h), (0, h)])
    M = cv2.getPerspectiveTransform(quad.astype(np.float32), dst)
    return cv2.warpPerspective(image, M, (w, h), flags=cv2.INTER_AREA)


def deck_difference(patch: np.ndarray, deck, card_id: str) -> float:
    from vision.sim.decks import sim_deck

    art = sim_deck(deck).art(card_id, CHECK_PX_PER_MM).astype(np.float32)
    art = cv2.resize(art, (patch.shape[1], patch.shape[0]), interpolation=cv2.INTER_AREA)
    m = 4
    return float(np.abs(patch[m:-m, m:-m].astype(np.float32) - art[m:-m, m:-m]).mean())


@pytest.mark.parametrize("deck", [SQUARE_DECK, "builtin"])
@pytest.mark.parametrize("seed", [1, 2])
def test_randomised_truth_matches_the_drawing_with_a_square_twilight_and_45_degrees(
        deck, seed: int) -> None:
    """Cards at 45 degrees round a square (or card-shaped) Twilight card: each side's
    uppermost card is drawn beyond the side the truth names, its pixels are that card,
    and the moon seats are where the Twilight image's top and bottom edges face."""
    from vision.sim.decks import sim_deck

    d = sim_deck(deck)
    if deck == SQUARE_DECK:
        assert d.twilight_aspect < 1.03
    scene = render_scene(seed, size=(960, 540), deck=deck, rotation=45.0, effects=False,
                         hand=False, arm_shadow=False, card_px=150, under_cards=1)
    assert scene.factors["rotation"] == "fixed"
    tw = scene.twilight_quad
    assert tw is not None
    c = centre(tw)
    moon_dirs = {seat_of_direction(*(centre(tw[[0, 1]]) - c)).value,
                 seat_of_direction(*(centre(tw[[2, 3]]) - c)).value}
    assert moon_dirs == set(scene.truth["twilight"]["moon_seats"])
    assert deck_difference(deck_unwarp(scene.image, tw, d.twilight_mm), deck, "twilight") < 25
    named = 0
    for seat in SEATS:
        card_id = scene.truth["sides"][seat.value]
        quad = scene.side_quads[seat.value]
        if card_id is None:
            assert quad is None
            continue
        edge = quad[1] - quad[0]  # the card's top edge turned by 45 degrees
        assert abs(abs(math.degrees(math.atan2(edge[1], edge[0]))) - 45) < 4
        v = centre(quad) - c
        assert seat_of_direction(*v) is seat
        assert_reads_as(card_id, deck_unwarp(scene.image, quad, d.card_mm),
                        lambda patch, cid: deck_difference(patch, deck, cid), seat)
        named += 1
    assert named >= 1


def test_randomised_scenes_repeat_and_draw_their_factors() -> None:
    a = render_scene(11, size=SMALL, deck=OTHER_DECK)
    b = render_scene(11, size=SMALL, deck=OTHER_DECK)
    assert np.array_equal(a.image, b.image) and a.truth == b.truth
    assert a.factors == b.factors and a.deck == OTHER_DECK
    kinds, aspects, sizes, lights = set(), set(), [], set()
    for seed in range(24):
        for deck in ("builtin", SQUARE_DECK, OTHER_DECK):
            s = render_scene(seed, size=(320, 180), deck=deck, effects=seed % 3 != 0)
            kinds.add(s.factors["rotation"])
            aspects.add(s.factors["twilight_aspect"])
            sizes.append(s.factors["card_px_720"])
            lights.add(s.factors["light"])
            assert s.image.shape == (180, 320, 3)
            assert 0 <= s.factors["tilt_deg"] <= 15
    assert kinds == {"radial", "aligned", "askew"}
    assert len(aspects) == 3 and min(aspects) < 1.03
    assert 45 <= min(sizes) < 70 and 125 < max(sizes) <= 150
    assert {"warm", "cool", "dim", "neutral"} <= lights


def test_aligned_cards_lie_portrait_in_the_picture_at_every_side() -> None:
    scene = render_scene(3, size=(960, 540), deck="builtin", rotation="aligned", effects=False,
                         hand=False, twilight_deg=90, tilt_deg=0,
                         sides={"north": "sun-adept", "east": "moon-novice",
                                "south": "sun-souls-5", "west": "moon-temple"})
    for seat in SEATS:
        q = scene.side_quads[seat.value]
        assert q is not None
        assert np.linalg.norm(q[3] - q[0]) > 1.3 * np.linalg.norm(q[1] - q[0])  # portrait
        assert abs(q[3][0] - q[0][0]) < 0.15 * np.linalg.norm(q[3] - q[0])  # upright-ish


def test_twilight_card_is_drawn_in_its_decks_shape() -> None:
    from vision.sim.decks import sim_deck

    for deck in (SQUARE_DECK, OTHER_DECK, "builtin"):
        scene = render_scene(5, size=SMALL, deck=deck, tilt_deg=0, effects=False, hand=False)
        q = scene.twilight_quad
        top, side = np.linalg.norm(q[1] - q[0]), np.linalg.norm(q[3] - q[0])
        w, h = sim_deck(deck).twilight_mm
        assert abs(side / top - h / w) < 0.03


def test_procedural_decks_are_distinct_keep_cult_colours_and_enrol(tmp_path) -> None:
    from vision.profile import DeckProfile
    from vision.sim.decks import DECK_IDS, deck_images, taught_deck

    a, b = deck_images(SQUARE_DECK), deck_images(OTHER_DECK)
    assert set(a) == set(b) == set(DECK_IDS)
    small = {cid: cv2.resize(img, (40, 56), interpolation=cv2.INTER_AREA).astype(np.float32)
             for cid, img in a.items()}
    for i, x in enumerate(CARD_IDS):  # every face differs from every other
        for y in CARD_IDS[i + 1:]:
            assert np.abs(small[x] - small[y]).mean() > 2, (x, y)
    other = {cid: cv2.resize(img, (40, 56), interpolation=cv2.INTER_AREA).astype(np.float32)
             for cid, img in b.items()}
    assert np.mean([np.abs(small[c] - other[c]).mean() for c in CARD_IDS]) > 20

    def hue(cid: str) -> float:  # the mean chroma direction of a face
        lab = cv2.cvtColor(a[cid], cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float32) - 128
        return math.atan2(float(lab[:, 2].mean()), float(lab[:, 1].mean()))

    for cult in ("sun", "moon"):
        own = [hue(c) for c in CARD_IDS if c.startswith(cult)]
        rival = [hue(c) for c in CARD_IDS if not c.startswith(cult)]
        for h in own:
            near_own = min(abs(math.remainder(h - o, 2 * math.pi)) for o in own if o != h)
            near_rival = min(abs(math.remainder(h - r, 2 * math.pi)) for r in rival)
            assert near_own < near_rival
    profile = DeckProfile.load(taught_deck(SQUARE_DECK))
    assert set(CARD_IDS) <= set(profile.ids) and "twilight" in profile.ids


def test_card_photos_show_their_card_any_way_round() -> None:
    from vision.sim.decks import sim_deck
    from vision.sim.simulator import render_card_photo

    a = render_card_photo(4, OTHER_DECK)
    assert np.array_equal(a[0], render_card_photo(4, OTHER_DECK)[0]) and a[1] in CARD_IDS
    tight, angles = 0, []
    for seed in range(12):
        image, cid, f = render_card_photo(seed, OTHER_DECK, with_factors=True)
        tight += f["tight"]
        angles.append(f["card_deg"])
        quad = np.float32(f["quad"])
        assert quad[:, 0].min() > -1 and quad[:, 0].max() < image.shape[1] + 1
        assert quad[:, 1].min() > -1 and quad[:, 1].max() < image.shape[0] + 1
    assert 0 < tight < 12 and max(angles) - min(angles) > 180
    image, cid, f = render_card_photo(5, OTHER_DECK, card_id="moon-priest", with_factors=True)
    assert cid == "moon-priest"
    patch = deck_unwarp(image, np.float32(f["quad"]), sim_deck(OTHER_DECK).card_mm)

    def normed(img: np.ndarray) -> np.ndarray:  # the photo's light and colour cast aside
        g = cv2.cvtColor(img, cv2.COLOR_BGR2GRAY).astype(np.float32)[6:-6, 6:-6]
        return (g - g.mean()) / (g.std() + 1e-6)

    def score(c: str) -> float:
        art = sim_deck(OTHER_DECK).art(c, CHECK_PX_PER_MM)
        art = cv2.resize(art, (patch.shape[1], patch.shape[0]), interpolation=cv2.INTER_AREA)
        return float((normed(patch) * normed(art)).mean())

    scores = {c: score(c) for c in CARD_IDS}
    assert max(scores, key=scores.get) == "moon-priest", f


def test_the_split_keeps_tuning_and_held_out_material_apart() -> None:
    from vision.sim.decks import sim_deck
    from vision.sim.split import HELDOUT_DECKS, TUNING_DECKS, check_disjoint

    check_disjoint()
    procedural = [d for d in HELDOUT_DECKS if d != "builtin"]
    assert len(procedural) >= 5 and "builtin" in HELDOUT_DECKS
    assert not set(procedural) & set(TUNING_DECKS)
    aspects = [sim_deck(d).twilight_aspect for d in procedural]
    assert min(aspects) < 1.1 and max(aspects) > 1.7


def test_randomised_scenes_without_the_twilight_card_have_cards_lying_about() -> None:
    loose = []
    for seed in range(6):
        scene = render_scene(seed, size=(320, 180), deck=OTHER_DECK, twilight=False)
        assert scene.truth == {"twilight": {"found": False, "moon_seats": []},
                               "sides": {s.value: None for s in SEATS}}
        assert scene.twilight_quad is None
        loose.append(scene.factors["loose_cards"])
    assert max(loose) > 0
