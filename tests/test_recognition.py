"""Recognition that holds on any table (issue 20): behaviour, not internals.

Scenes are composed here from card faces (the built-in art, or a procedural deck
drawn below and taught through ``deck enrol``) on the simulator's table textures, so
each test pins one invariance exactly: a square Twilight card, portrait cards at east
and west, cards at 45 degrees, a deck never seen, one card photographed with table
around it. Small frames (640 x 480), a few scenes each.
"""

from __future__ import annotations

import json
import random

import cv2
import numpy as np
import pytest

from companion.cli import main
from companion.core.cards import CARD_IDS, SEATS, TWILIGHT_ID, Card
from vision.annotate import annotate
from vision.deck_art import render_card
from vision.profile import REQUIRED_IDS, DeckProfile, builtin_profile, load_deck
from vision.read import align
from vision.recognise import Recogniser, inscribed_outlines
from vision.sim.decks import deck_images, sim_deck, taught_deck
from vision.sim.simulator import (
    add_glare,
    add_sheen,
    quad_error,
    render_card_photo,
    render_scene,
    table_texture,
)

SIZE = (640, 480)
#: image px per mm of the composed scenes: a card 88 mm long is 79 px
PX_PER_MM = 0.9
#: seats' directions in the picture (north up)
DIRECTION = {"north": (0, -1), "east": (1, 0), "south": (0, 1), "west": (-1, 0)}


def _rounded_mask(w: int, h: int, r: int) -> np.ndarray:
    m = np.zeros((h, w), np.uint8)
    cv2.rectangle(m, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(m, (0, r), (w - 1, h - 1 - r), 255, -1)
    for x, y in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(m, (x, y), r, 255, -1)
    return m


def _paste(img: np.ndarray, face: np.ndarray, centre, angle: float, size_mm) -> np.ndarray:
    """Draw *face* (upright) at *centre* (px), turned *angle* degrees clockwise, *size_mm*
    (w, h) big; returns its corners (TL, TR, BR, BL of the upright art) in px."""
    fh, fw = face.shape[:2]
    w, h = size_mm[0] * PX_PER_MM, size_mm[1] * PX_PER_MM
    a = np.radians(angle)
    R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    local = np.array([(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)])
    quad = (local @ R.T + centre).astype(np.float32)
    src = np.float32([(0, 0), (fw, 0), (fw, fh), (0, fh)])
    M = cv2.getPerspectiveTransform(src, quad)
    mask = _rounded_mask(fw, fh, max(2, fw // 20))
    H, W = img.shape[:2]
    warped = cv2.warpPerspective(face, M, (W, H), flags=cv2.INTER_AREA)
    alpha = cv2.warpPerspective(mask, M, (W, H), flags=cv2.INTER_LINEAR).astype(np.float32) / 255
    img[:] = (img * (1 - alpha[..., None]) + warped * alpha[..., None]).astype(np.uint8)
    return quad


def _scene(faces: dict[str, np.ndarray], twilight_mm, sides: dict[str, str | None], *,
           twilight_deg: float = 0.0, card_deg=None, card_mm=(63, 88), texture: int = 0,
           seed: int = 0, under: dict[str, str] | None = None, lift_deg=(10, 25),
           cloth: np.ndarray | None = None):
    """A frame with the Twilight card turned *twilight_deg* and a card at each side,
    on the simulator's table *texture* or on *cloth* (a picture of SIZE);
    *card_deg* maps a seat to the card's turn (degrees clockwise in the picture), by
    default 'radial' (its top away from the Twilight card); a card *under* a side's
    lies turned *lift_deg* (a range, degrees) from it."""
    rng = random.Random(seed)
    img = np.ascontiguousarray((table_texture(texture, SIZE) if cloth is None else cloth).copy())
    c = np.array(SIZE, float) / 2
    _paste(img, faces[TWILIGHT_ID], c, twilight_deg, twilight_mm)
    k = round(twilight_deg / 90)
    radial = {"north": 0.0, "east": 90.0, "south": 180.0, "west": 270.0}
    quads = {}
    for seat in ("north", "east", "south", "west"):
        dx, dy = DIRECTION[seat]
        # the Twilight card's extent towards this seat
        reach_mm = (twilight_mm[1] if (seat in ("north", "south")) == (k % 2 == 0)
                    else twilight_mm[0]) / 2
        for cid, lift in (((under or {}).get(seat), True), (sides.get(seat), False)):
            if cid is None:
                continue
            angle = radial[seat] if card_deg is None else card_deg[seat]
            if lift:
                angle += rng.uniform(*lift_deg)
            a = np.radians(angle)
            # the card's extent along the seat's direction, at this turn
            ext = (abs(np.sin(a) * dx - np.cos(a) * dy) * card_mm[1]
                   + abs(np.cos(a) * dx + np.sin(a) * dy) * card_mm[0]) / 2
            dist = (reach_mm + rng.uniform(4, 10) + ext) * PX_PER_MM
            off = rng.uniform(-6, 6) * PX_PER_MM
            centre = c + np.array([dx, dy]) * dist + np.array([-dy, dx]) * off
            quads[seat] = _paste(img, faces[cid], centre, angle, card_mm)
    img = cv2.GaussianBlur(img, (0, 0), 0.6)
    noise = np.random.default_rng(seed).normal(0, 3, img.shape)
    return np.clip(img + noise, 0, 255).astype(np.uint8), quads


def _builtin_faces() -> dict[str, np.ndarray]:
    p = builtin_profile(0)
    return {cid: p.faces[cid] for cid in REQUIRED_IDS}


def _moon_seats(twilight_deg: float) -> list[str]:
    return ["north", "south"] if round(twilight_deg / 90) % 2 == 0 else ["east", "west"]


def _check(rec: Recogniser, image: np.ndarray, sides: dict, twilight_deg: float) -> None:
    result = rec.recognise(image)
    assert result["twilight"] == {"found": True, "moon_seats": _moon_seats(twilight_deg)}
    assert result["sides"] == {s.value: sides.get(s.value) for s in SEATS}


SIDES = {"north": "moon-hierarch", "east": "sun-souls-4", "south": "moon-temple",
         "west": "sun-novice"}


# -- the invariances -----------------------------------------------------------------------


@pytest.mark.parametrize("twilight_deg", [0.0, 90.0, 8.0])
def test_portrait_cards_at_east_and_west(twilight_deg):
    """Every card lies the same way in the picture (portrait), as many players lay them."""
    rec = Recogniser(builtin_profile(0))
    sides = SIDES if round(twilight_deg / 90) % 2 == 0 else {
        "north": "sun-souls-4", "east": "moon-hierarch", "south": "sun-novice",
        "west": "moon-temple"}
    turn = {s: 0.0 for s in DIRECTION}
    image, _ = _scene(_builtin_faces(), (63, 88), sides, twilight_deg=twilight_deg,
                      card_deg=turn, seed=1)
    _check(rec, image, sides, twilight_deg)


@pytest.mark.parametrize("base", [45.0, 135.0])
def test_cards_at_45_degrees(base):
    rec = Recogniser(builtin_profile(0))
    turn = {s: base + 90.0 * i for i, s in enumerate(DIRECTION)}
    image, _ = _scene(_builtin_faces(), (63, 88), SIDES, card_deg=turn, seed=2, texture=1)
    _check(rec, image, SIDES, 0.0)


def _square_twilight(side_px: int = 200) -> np.ndarray:
    """A square Twilight card: moon (blue, crescent) quarters top and bottom, sun (orange,
    disc) quarters left and right."""
    img = np.full((side_px, side_px, 3), 235, np.uint8)
    s = side_px
    c = (s // 2, s // 2)
    blue, orange = (150, 70, 20), (40, 140, 240)
    cv2.fillConvexPoly(img, np.int32([(8, 8), (s - 8, 8), c]), blue)
    cv2.fillConvexPoly(img, np.int32([(8, s - 8), (s - 8, s - 8), c]), blue)
    cv2.fillConvexPoly(img, np.int32([(8, 8), (8, s - 8), c]), orange)
    cv2.fillConvexPoly(img, np.int32([(s - 8, 8), (s - 8, s - 8), c]), orange)
    for y in (s // 5, 4 * s // 5):  # crescents in the moon quarters
        cv2.circle(img, (s // 2, y), s // 12, (240, 240, 240), -1)
        cv2.circle(img, (s // 2 + s // 30, y - s // 40), s // 12, blue, -1)
    for x in (s // 5, 4 * s // 5):  # suns in the sun quarters
        cv2.circle(img, (x, s // 2), s // 14, (120, 230, 255), -1)
    cv2.circle(img, c, s // 9, (250, 250, 250), -1)
    cv2.putText(img, "T", (s // 2 - s // 20, s // 2 + s // 20), cv2.FONT_HERSHEY_SIMPLEX,
                s / 200, (60, 60, 60), 2)
    return img


def _enrol(tmp_path, faces: dict[str, np.ndarray], name: str = "deck") -> Recogniser:
    src = tmp_path / f"{name}-photos"
    src.mkdir()
    for cid, img in faces.items():
        cv2.imwrite(str(src / f"{cid}.png"), img)
    assert main(["deck", "enrol", str(src), "--out", str(tmp_path / name)]) == 0
    return Recogniser(DeckProfile.load(tmp_path / name))


@pytest.mark.parametrize("twilight_deg", [0.0, 90.0, 20.0])
def test_a_square_twilight_card(tmp_path, twilight_deg):
    faces = {cid: render_card(cid, style=0, px_per_mm=3.0) for cid in CARD_IDS}
    faces[TWILIGHT_ID] = _square_twilight()
    rec = _enrol(tmp_path, faces)
    assert rec.profile.twilight_aspect == pytest.approx(1.0)
    sides = SIDES if round(twilight_deg / 90) % 2 == 0 else {
        "north": "sun-souls-4", "east": "moon-hierarch", "south": "sun-novice",
        "west": "moon-temple"}
    image, _ = _scene(faces, (75, 75), sides, twilight_deg=twilight_deg, seed=3)
    _check(rec, image, sides, twilight_deg)


def _procedural_deck(seed: int) -> dict[str, np.ndarray]:
    """A deck this project never drew: each cult a colour, each card a shape, a count of
    marks and a name (any art will do: the recogniser knows only what it is taught)."""
    rng = random.Random(seed)
    w, h = 189, 252  # 1:1.33
    cult_colour = {"sun": (30, 60 + rng.randrange(80), 200), "moon": (170, 90, 40)}
    faces = {}
    for i, cid in enumerate(CARD_IDS):
        card = Card.parse(cid)
        img = np.full((h, w, 3), 245, np.uint8)
        col = cult_colour[card.cult.value]
        cv2.rectangle(img, (6, 6), (w - 7, h - 7), col, 5)
        kind = i % 14
        cx, cy = w // 2, h // 2
        if kind % 3 == 0:
            cv2.circle(img, (cx, cy), 30 + kind * 2, col, -1)
        elif kind % 3 == 1:
            cv2.rectangle(img, (cx - 35, cy - 20 - kind), (cx + 35, cy + 20 + kind), col, -1)
        else:
            cv2.fillConvexPoly(img, np.int32([(cx, cy - 45), (cx + 40, cy + 30),
                                               (cx - 40, cy + 30)]), col)
        for m in range(kind % 5 + 1):  # marks along the top
            cv2.circle(img, (25 + m * 30, 30), 9, (40, 40, 40), -1)
        cv2.putText(img, cid.split("-", 1)[1][:8], (14, h - 20), cv2.FONT_HERSHEY_SIMPLEX,
                    0.7, (30, 30, 30), 2)
        faces[cid] = img
    tw = np.full((w, w * 3 // 2, 3), 240, np.uint8)  # landscape: 1:1.5, moon sides long
    th, tww = tw.shape[:2]
    cv2.rectangle(tw, (0, 0), (tww, th // 3), cult_colour["moon"], -1)
    cv2.rectangle(tw, (0, 2 * th // 3), (tww, th), cult_colour["moon"], -1)
    cv2.circle(tw, (tww // 4, th // 2), th // 8, cult_colour["sun"], -1)
    cv2.circle(tw, (3 * tww // 4, th // 2), th // 8, cult_colour["sun"], -1)
    cv2.putText(tw, "DUSK", (tww // 2 - 40, th // 2 + 10), cv2.FONT_HERSHEY_SIMPLEX, 1.0,
                (20, 20, 20), 2)
    faces[TWILIGHT_ID] = tw
    return faces


def test_a_deck_never_seen_taught_through_enrol(tmp_path):
    faces = _procedural_deck(7)
    rec = _enrol(tmp_path, faces)
    assert rec.profile.card_aspect == pytest.approx(252 / 189, rel=0.01)
    assert rec.profile.twilight_aspect == pytest.approx(2 / 3, rel=0.02)
    tw_mm = (88.0, 88.0 * 2 / 3)
    sides = {"north": "moon-souls-5", "east": "sun-hierarch", "south": None,
             "west": "sun-purgatory"}
    turn = {"north": 30.0, "east": 0.0, "south": 0.0, "west": 200.0}
    image, _ = _scene(faces, tw_mm, sides, card_deg=turn, card_mm=(63, 84), seed=4,
                      texture=2)
    _check(rec, image, sides, 0.0)


def test_the_uppermost_card_of_a_pile_and_an_empty_table():
    rec = Recogniser(builtin_profile(0))
    under = {"north": "moon-adept", "east": "sun-altar", "west": "sun-souls-6"}
    image, _ = _scene(_builtin_faces(), (63, 88), SIDES, under=under, seed=5)
    _check(rec, image, SIDES, 0.0)
    empty = np.ascontiguousarray(table_texture(1, SIZE).copy())
    assert rec.recognise(empty)["twilight"]["found"] is False


def test_a_side_read_before_the_cards_size_is_known_is_read_again():
    """A fresh recogniser knows no card's size and reads its first side at a nominal
    card's. Tuning scene 1 308 000 (deck 108, 640 x 480): north's sun-souls-6 lies on
    like cards on a gingham of their colours, its outline lost among theirs, and the
    deck's cards are 1.23 times a nominal card's length in the Twilight card's frame,
    so the face search at the nominal size places it nowhere. The cards named at the
    other sides teach the size; north, read again, is named."""
    scene = render_scene(1_308_000, size=SIZE, deck=108)
    rec = Recogniser(load_deck(taught_deck(108)))
    assert scene.under_quads.get("north")
    assert rec.recognise(scene.image)["sides"] == scene.truth["sides"]


def test_alike_faces_duel_on_the_picture_that_lies_on_the_cards_edges():
    """Faces a numeral apart each pull the card, aligned with them, to where their own
    fine print lies. Tuning scene 1 505 005 (deck 105, 1920 x 1080, dim): north's
    sun-adept, 152 px long on the card beneath, aligned with sun-priest's print lies
    3.5% off and the duel on that picture names the priest; aligned with its own, the
    adept fits better and its outline lies on the card's edges. The duel is fought on
    the picture whose outline lies on the edges: the adept."""
    scene = render_scene(1_505_005, size=(1920, 1080), deck=105)
    rec = Recogniser(load_deck(taught_deck(105)))
    assert scene.truth["sides"]["north"] == "sun-adept"
    assert rec.recognise(scene.image)["sides"]["north"] == "sun-adept"


@pytest.mark.parametrize("seed, deck, seat, size", [
    (1_504_003, 104, "south", (640, 480)),
    (1_305_000, 105, "south", (640, 480)),
    (1_307_001, 107, "north", (1280, 720)),
    (1_508_000, 108, "south", (640, 480)),
])
def test_a_duel_the_zone_leaves_undecided_is_fought_again_as_in_a_photo(seed, deck, seat, size):
    """Cards of 40-130 px a numeral apart from another face (adept, priest, high priest,
    hierarch), seen whole, whose duel the zone's picture leaves undecided (the margin
    under 0 at a quad 1-4% of the card off): named again as a photo of one card is, from
    that quad, they are named right."""
    scene = render_scene(seed, size=size, deck=deck)
    rec = Recogniser(load_deck(taught_deck(deck)))
    assert rec.recognise(scene.image)["sides"][seat] == scene.truth["sides"][seat]
    assert rec.last_readings[seat].identity.margin > 0


@pytest.mark.parametrize("seed, deck, seat, size, named", [
    (1_510_001, 110, "north", (1280, 720), False),  # sun-high-priest, duelled as sun-priest
    (1_304_003, 104, "north", (640, 480), False),  # sun-hierarch, duelled as sun-high-priest
    (1_300_008, "builtin", "north", (1920, 1080), True),  # moon-adept
    (1_301_003, 101, "east", (640, 480), True),  # sun-altar
])
def test_a_duels_name_is_kept_only_where_a_closer_look_agrees(seed, deck, seat, size, named):
    """A card named by a duel against a face alike at the zone's resolution is seen
    again as a photo of one card (at the finest bank, aligned in perspective). Where
    that look agrees, or leans to the same face, the name stands; where it leans to
    another face, the card is left unnamed rather than named wrong (cards of 30-45 px,
    a numeral's bars a pixel or two)."""
    scene = render_scene(seed, size=size, deck=deck)
    rec = Recogniser(load_deck(taught_deck(deck)))
    got = rec.recognise(scene.image)["sides"][seat]
    if named:
        assert got == scene.truth["sides"][seat]
        assert rec.last_readings[seat].identity.duelled
    else:
        assert got == "unknown"
        assert rec.last_readings[seat].identity.plausible


def _gingham(period_px: float, turn_deg: float, size: tuple[int, int] = SIZE) -> np.ndarray:
    """A blue gingham cloth of *size*: white, light and dark squares *period_px* / 2
    across, its weave turned *turn_deg*."""
    yy, xx = np.mgrid[0:size[1], 0:size[0]].astype(np.float32)
    a = np.radians(turn_deg)
    u, v = xx * np.cos(a) + yy * np.sin(a), -xx * np.sin(a) + yy * np.cos(a)
    bands = (((u // (period_px / 2)) % 2) + ((v // (period_px / 2)) % 2))[..., None]
    white, blue = np.float32([235, 240, 245]), np.float32([160, 90, 30])
    return (white + (blue - white) * bands / 2).astype(np.uint8)


@pytest.mark.parametrize("across", [3, 4, 5, 6])
def test_a_gingham_cloth_is_no_card(across):
    """A gingham's squares outline card-sized rectangles all round (here squares of
    one card's width / *across*): its lines run on past their corners, where a card's
    sides end, so an empty side stays empty — also where an outline is found a few
    degrees off the weave (its sides still lie on the lines' px-wide edges, their
    continuations drift off), with the weave turned, and in soft focus."""
    rec = Recogniser(builtin_profile(0))
    sides = {"north": "moon-altar", "south": "moon-souls-4"}
    for i, (turn, blur) in enumerate(((0.0, 0.0), (8.0, 0.0), (30.0, 1.4))):
        image, _ = _scene(_builtin_faces(), (63, 88), sides, seed=3 + i % 2,
                          cloth=_gingham(2 * 63 * PX_PER_MM / across, turn))
        if blur:
            image = cv2.GaussianBlur(image, (0, 0), blur)
        _check(rec, image, sides, 0.0)


@pytest.mark.parametrize("seed", [1, 2])
def test_the_uppermost_card_squarely_on_cards_of_its_own_print(seed):
    """Laid nearly square on earlier cards of the same border, the card on top makes
    little edge where its border meets theirs, and their borders make outlines of
    their own: it is found by its face."""
    rec = Recogniser(builtin_profile(0))
    under = {"north": "moon-adept", "east": "sun-altar", "south": "moon-souls-3",
             "west": "sun-souls-6"}
    image, _ = _scene(_builtin_faces(), (63, 88), SIDES, under=under, seed=seed,
                      lift_deg=(2, 6))
    _check(rec, image, SIDES, 0.0)


#: a sparse print (small pips on a dark ground) of a procedural deck, and cards laid
#: on earlier cards of the same print a fifth of a card off
SPARSE_DECK = 104
PILE_SIDES = {"north": "moon-souls-4", "east": "sun-souls-7", "south": "moon-souls-3",
              "west": "sun-souls-6"}
PILE_UNDER = {"north": "moon-souls-6", "east": "sun-souls-5", "south": "moon-souls-5",
              "west": "sun-souls-3"}


@pytest.mark.parametrize("shift", [(0.15, -0.2, 2.0), (-0.15, -0.25, -3.0),
                                   (0.2, -0.15, 3.0), (-0.1, -0.2, -2.0)])
def test_the_uppermost_card_a_little_off_the_card_beneath(shift):
    """A card laid a fifth of a card off (*shift*: along its short and long side, and
    turned, degrees) an earlier card of the same sparse print: where their dark
    grounds meet there is no edge, so the outlines found there mix the two cards' sides
    and lie a little off the card on top, and the few pips are too small for the
    coarse search by face. The card is found by moving those outlines to where a face
    fits them. (A light card on a light card on a lighter wood is still missed at
    times: docs/recognition.md, "Open".)"""
    rec = Recogniser(load_deck(taught_deck(SPARSE_DECK)))
    _check(rec, _piles(shift), PILE_SIDES, 0.0)


def _piles(shift, cloth: np.ndarray | None = None) -> np.ndarray:
    """A scene of the sparse deck's PILE_SIDES, each laid *shift* (along its short and
    long side, shares of the card, and turned, degrees) off an earlier card of
    PILE_UNDER, on the simulator's table or on *cloth*; in the soft focus of a camera."""
    faces = deck_images(SPARSE_DECK)
    th, tw = faces[TWILIGHT_ID].shape[:2]
    fh, fw = faces[CARD_IDS[0]].shape[:2]
    card_mm = (63, 63 * fh / fw)
    image, quads = _scene(faces, (63, 63 * th / tw), PILE_UNDER, card_mm=card_mm, cloth=cloth)
    sx, sy, turn = shift
    for seat, q in quads.items():
        centre = q.mean(axis=0) + sx * (q[1] - q[0]) + sy * (q[3] - q[0])
        _paste(image, faces[PILE_SIDES[seat]], centre,
               {"north": 0.0, "east": 90.0, "south": 180.0, "west": 270.0}[seat] + turn,
               card_mm)
    return cv2.GaussianBlur(image, (0, 0), 0.6)


def _tiles(w_px: float, h_px: float, turn_deg: float, size: tuple[int, int] = SIZE
           ) -> np.ndarray:
    """A cloth of *size* ruled in dark lines into light tiles *w_px* x *h_px*, the
    ruling turned *turn_deg*."""
    yy, xx = np.mgrid[0:size[1], 0:size[0]].astype(np.float32)
    a = np.radians(turn_deg)
    u, v = xx * np.cos(a) + yy * np.sin(a), -xx * np.sin(a) + yy * np.cos(a)
    img = np.full((size[1], size[0], 3), (200, 205, 210), np.uint8)
    img[((u % w_px) < 2.5) | ((v % h_px) < 2.5)] = (60, 50, 40)
    return img


@pytest.mark.parametrize("across", [1.0, 1.5, 2.0])
def test_the_uppermost_card_of_a_pile_on_a_cloth_ruled_in_cards(across):
    """On a cloth ruled into tiles of a card's shape (a card's size / *across*), every
    tile is an outline on edges all round, and they fill the zone's outlines ranked by
    their edges; the card on top of a pile, whose side over the card beneath makes no
    edge, ranks far below them. It is found among the outlines its edges make by how
    much their insides look like a face. (Two other placements on such a cloth are
    still missed: docs/recognition.md, "Open".)"""
    rec = Recogniser(load_deck(taught_deck(SPARSE_DECK)))
    fh, fw = deck_images(SPARSE_DECK)[CARD_IDS[0]].shape[:2]
    w = 63 * PX_PER_MM / across
    _check(rec, _piles((-0.15, -0.25, -3.0), _tiles(w, w * fh / fw, 20.0)), PILE_SIDES, 0.0)


#: soft focus over the composed scene, as a camera focused on the table gives
BLUR = 1.4


@pytest.mark.parametrize("turn", [0.0, 35.0])
def test_alike_faces_a_numeral_apart_are_told_apart(turn):
    """Adept, priest, novice, hierarch and high priest differ in a numeral and a small
    figure: the whole card cannot tell them apart, the duel on where they differ can."""
    rec = Recogniser(builtin_profile(0))
    faces = _builtin_faces()
    card_deg = {s: turn + 90.0 * i for i, s in enumerate(DIRECTION)}
    for seed, sides in enumerate((
            {"north": "moon-adept", "east": "sun-priest", "south": "moon-priest",
             "west": "sun-adept"},
            {"north": "moon-novice", "east": "sun-hierarch", "south": "moon-high-priest",
             "west": "sun-novice"})):
        image, _ = _scene(faces, (63, 88), sides, card_deg=card_deg, seed=10 + seed)
        image = cv2.GaussianBlur(image, (0, 0), BLUR)  # soft focus
        _check(rec, image, sides, 0.0)


#: the ranks whose faces differ in a numeral and a small figure
RANKS = ("adept", "priest", "novice", "hierarch", "high-priest")


def _small_soft_ranks(profile: DeckProfile, seed: int) -> tuple[np.ndarray, dict[str, str]]:
    """A composed scene of cards of *profile*'s RANKS some 32 px across, turned alike
    by a random angle, under a soft focus of 1.8 px: (image, card id per seat)."""
    faces = {c: profile.faces[c] for c in REQUIRED_IDS}
    rng = np.random.default_rng(seed)
    sides = {seat: f"{cult}-{RANKS[rng.integers(len(RANKS))]}"
             for seat, cult in (("north", "moon"), ("south", "moon"), ("east", "sun"),
                                ("west", "sun"))}
    turn = float(rng.uniform(0, 360))
    card_deg = {s: turn + 90.0 * i for i, s in enumerate(DIRECTION)}
    image, _ = _scene(faces, (63, 88), sides, card_deg=card_deg, card_mm=(36, 50.3),
                      seed=seed)
    return cv2.GaussianBlur(image, (0, 0), 1.8), sides


def test_small_soft_cards_a_numeral_apart_are_read_right_or_not_at_all():
    """Cards some 32 px across under soft focus (1.8 px, more than twice the blur the
    faces are matched at), of a deck whose faces of a rank differ in a numeral and a
    small figure and carry a line frame inside the card: each is read as itself or
    "unknown", never as the face a numeral apart. (Blurred as the card is, alike faces
    are more alike than the deck's own likeness says; and a rival aligned with the
    card on its own may fit it as well as the face it was aligned with first.)"""
    profile = load_deck(taught_deck(107))
    rec = Recogniser(profile)
    named, wrong = 0, []
    for seed in range(20):
        image, sides = _small_soft_ranks(profile, seed)
        rec.reader.seen_long_mm.clear()  # each scene on its own
        got = rec.recognise(image)["sides"]
        for seat, truth in sides.items():
            named += got[seat] == truth
            if got[seat] not in (truth, "unknown", None):
                wrong.append((seed, seat, truth, got[seat]))
    assert wrong == []
    assert named >= 30  # of 80: not by abstaining


def test_a_card_played_already_is_no_rival():
    """A watcher of a hand knows the cards played (each card is played once a hand):
    a face a numeral apart that was played is no rival, so small soft cards their
    duels left unnamed are named once their rivals are known played, never wrongly."""
    profile = load_deck(taught_deck(107))
    rec = Recogniser(profile)
    alone = rivals_played = 0
    wrong = []
    for seed in range(12):
        image, sides = _small_soft_ranks(profile, seed)
        rec.reader.seen_long_mm.clear()  # each scene on its own
        rec.recognise(image)  # the cards' size learnt
        pose = rec.last_pose
        if pose is None:
            continue  # (a Twilight card this small and soft is not always found)
        for seat, truth in sides.items():
            cult = truth.split("-")[0]
            others = {f"{cult}-{r}" for r in RANKS} - {truth}
            alone += rec.read_side(image, pose, seat).card_id == truth
            got = rec.read_side(image, pose, seat, among=set(CARD_IDS) - others).card_id
            rivals_played += got == truth
            if got not in (truth, "unknown", None):
                wrong.append((seed, seat, truth, got))
    assert wrong == []
    assert rivals_played >= alone + 5, (alone, rivals_played)


def test_a_rival_ruled_out_by_the_faces_likeness_never_reaches_the_lead():
    """The side reader aligns a card with a rival face only when the deck's own
    likeness allows that face to take over; a face the bound rules out must stay
    under what taking over needs, however the card lies (cards of every face, moved,
    scaled and blurred as a camera may show them)."""
    from vision.faces import MARGIN_SHARE, FaceBank
    from vision.read import _can_overtake

    faces = {c: f for c, f in _builtin_faces().items() if c in CARD_IDS}
    bank = FaceBank(faces, (44, 62))
    n = len(bank.ids)
    rng = np.random.default_rng(5)
    ruled_out = 0
    for i, cid in enumerate(bank.ids):
        big = cv2.resize(faces[cid], (176, 248), interpolation=cv2.INTER_AREA)
        for _ in range(3):
            dx, dy, scale = rng.uniform(-6, 6), rng.uniform(-6, 6), rng.uniform(0.94, 1.06)
            m = cv2.getRotationMatrix2D((88, 124), rng.uniform(-3, 3), scale)
            m[:, 2] += (dx, dy)
            moved = cv2.warpAffine(big, m, (176, 248), borderMode=cv2.BORDER_REPLICATE)
            card = cv2.GaussianBlur(cv2.resize(moved, (44, 62), interpolation=cv2.INTER_AREA),
                                    (0, 0), rng.uniform(0.3, 1.2))
            row = bank.scores(card[None])[0]
            s = float(row[i])
            need = 1 - MARGIN_SHARE * (1 - s)
            out = ~_can_overtake(bank.alike[i], s)
            out[i] = False
            ruled_out += int(out.sum())
            assert (np.maximum(row[:n], row[n:])[out] < need).all()
    assert ruled_out > 0


def test_an_outline_on_edges_all_round_is_aligned_however_little_it_correlates():
    """Of a zone's outlines, grown by GROW, the FINE_CANDIDATES correlating best at the
    coarse resolution are aligned and matched finely; so is the outline with the most
    support on edges all round (OUTLINE_SURE each side), once, at its best growth,
    however little its inside correlates there (a card a few px off whose plain face
    contrasts with the cloth)."""
    from vision.read import FINE_CANDIDATES, GROW, OUTLINE_SURE, _to_align

    rng = np.random.default_rng(2)
    quads = 12
    owner = [i for i in range(quads) for _ in GROW]
    scores = rng.uniform(0.5, 0.9, (len(owner), 56))
    sides = rng.uniform(0.0, OUTLINE_SURE - 0.05, (quads, 4))
    best = [int(j) for j in np.argsort(-scores.max(axis=1))[:FINE_CANDIDATES]]
    assert _to_align(scores, owner, sides) == best  # no outline all round
    low = next(i for i in range(quads) if i not in {owner[j] for j in best})
    rows = [j for j in range(len(owner)) if owner[j] == low]
    scores[rows] = 0.2
    scores[rows[1], 7] = 0.3  # its best growth
    sides[low] = (0.9, 1.0, 0.85, 1.0)
    weaker = next(i for i in range(quads) if i not in {owner[j] for j in best} | {low})
    sides[weaker] = OUTLINE_SURE
    assert _to_align(scores, owner, sides) == best + [rows[1]]
    sides[owner[best[2]]] = 1.0  # one of the best outlined all round too: the same
    assert _to_align(scores, owner, sides) == best + [rows[1]]
    sides[low] = (0.9, 1.0, 0.7, 1.0)  # not all round
    assert _to_align(scores, owner, sides) == best + [max(
        (j for j in range(len(owner)) if owner[j] == weaker), key=lambda j: scores[j].max())]


def test_faces_alike_but_for_their_colours_are_told_apart_by_a_duel():
    """Two faces printed alike in each cult's colours correlate 1.0 channel by channel;
    the duel, over all channels at once, names the one the card is, and both the card
    and its twin are never mistaken for the other."""
    from vision.faces import FaceBank

    sun = render_card("sun-temple", style=0, px_per_mm=3.0)
    moon = np.clip(sun.astype(np.float32) * np.float32([1.0, 0.6, 0.35])
                   + np.float32([90, 40, 10]), 0, 255).astype(np.uint8)  # recoloured
    other = render_card("sun-souls-5", style=0, px_per_mm=3.0)
    bank = FaceBank({"sun-temple": sun, "moon-temple": moon, "sun-souls-5": other}, (44, 62))
    assert bank.alike[0, 1] > 0.99  # per channel the two are one picture
    rng = np.random.default_rng(3)
    for face, name in ((sun, "sun-temple"), (moon, "moon-temple")):
        card = cv2.resize(face, (44, 62), interpolation=cv2.INTER_AREA).astype(np.float32)
        card = np.clip(card * 0.8 + 12 + rng.normal(0, 4, card.shape), 0, 255).astype(np.uint8)
        row = bank.scores(card[None])[0]
        assert bank.decide(row)[0] == "unknown"  # the whole card alone cannot say
        assert bank.decide(row, card=card)[0] == name


def test_enrol_refuses_faces_it_cannot_tell_apart(tmp_path, capsys):
    faces = {cid: render_card(cid, style=0, px_per_mm=3.0) for cid in REQUIRED_IDS}
    faces["sun-priest"] = faces["sun-adept"].copy()
    src = tmp_path / "photos"
    src.mkdir()
    for cid, img in faces.items():
        cv2.imwrite(str(src / f"{cid}.png"), img)
    assert main(["deck", "enrol", str(src), "--out", str(tmp_path / "deck")]) == 2
    err = capsys.readouterr().err
    assert "sun-adept" in err and "sun-priest" in err and "apart" in err
    assert not (tmp_path / "deck").exists()


# -- recognise --card --------------------------------------------------------------------------


def _lit(image: np.ndarray, gains: float | tuple[float, float, float] | np.ndarray
         ) -> np.ndarray:
    """*image* (B, G, R uint8) under a light *gains* times as bright (one number, per
    channel, or a field broadcast over it), clipped as a camera clips."""
    return np.clip(image.astype(np.float32) * np.float32(gains), 0, 255).astype(np.uint8)


def _card_photo(card_id: str, angle: float, *, tight: bool = False, seed: int = 0,
                cloth: np.ndarray | None = None, face: np.ndarray | None = None,
                far: float = 6.0) -> np.ndarray:
    """One card (the built-in deck's, or *face*) on a table (or on *cloth*, 480 x 480),
    turned *angle*, seen with mild perspective (each corner of its far side *far* px
    in), as a phone takes it; or (*tight*) cropped to the card."""
    return _card_photo_and_quad(card_id, angle, tight=tight, seed=seed, cloth=cloth,
                                face=face, far=far)[0]


def _card_photo_and_quad(card_id: str, angle: float, *, tight: bool = False, seed: int = 0,
                         cloth: np.ndarray | None = None, face: np.ndarray | None = None,
                         far: float = 6.0) -> tuple[np.ndarray, np.ndarray]:
    """:func:`_card_photo` and the card's corners in it (TL, TR, BR, BL of its face)."""
    if face is None:
        face = render_card(card_id, style=0, px_per_mm=4.0)
    if tight:
        h, w = face.shape[:2]
        return cv2.GaussianBlur(face, (0, 0), 0.8), np.float32([(0, 0), (w, 0), (w, h), (0, h)])
    img = np.ascontiguousarray(table_texture(seed % 3, (480, 480)).copy() if cloth is None
                               else cloth.copy())
    h, w = face.shape[:2]
    a = np.radians(angle)
    R = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    local = np.array([(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)]) * 0.8
    quad = local @ R.T + (240, 240)
    quad[:2] += np.array([[far, 0], [-far, 0]])  # perspective: the far edge shorter
    M = cv2.getPerspectiveTransform(np.float32([(0, 0), (w, 0), (w, h), (0, h)]),
                                    quad.astype(np.float32))
    mask = cv2.warpPerspective(_rounded_mask(w, h, w // 20), M, (480, 480)) > 128
    warped = cv2.warpPerspective(face, M, (480, 480), flags=cv2.INTER_AREA)
    img[mask] = warped[mask]
    return cv2.GaussianBlur(img, (0, 0), 0.7), quad.astype(np.float32)


@pytest.mark.parametrize("card_id,angle", [("sun-souls-7", 0.0), ("moon-adept", 117.0),
                                           ("sun-temple", 200.0), ("moon-obelisk", 301.0)])
def test_recognise_card_on_a_table_any_turn(tmp_path, capsys, card_id, angle):
    path = tmp_path / "photo.png"
    cv2.imwrite(str(path), _card_photo(card_id, angle, seed=int(angle)))
    tight = tmp_path / "tight.png"
    cv2.imwrite(str(tight), _card_photo(card_id, 0.0, tight=True))
    assert main(["recognise", "--card", str(path), str(tight)]) == 0
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["card"] for x in lines] == [card_id, card_id]


@pytest.mark.parametrize("card_id,angle", [("moon-priest", 30.0), ("sun-souls-6", 200.0),
                                           ("sun-adept", 290.0), ("moon-temple", 120.0)])
def test_a_card_photographed_at_a_tilt_is_aligned_in_perspective(card_id, angle):
    """A card filling much of a photo taken with the phone tilted shows its perspective
    (here its far side a quarter shorter than its near side). From an outline without
    it (the parallelogram of the card's mean sides), the card is aligned onto its
    corners; an affine alignment alone ends further off than it started."""
    rec = Recogniser(builtin_profile(0))
    image, quad = _card_photo_and_quad(card_id, angle, far=24.0)
    c = quad.mean(axis=0)
    across = (quad[1] - quad[0] + quad[2] - quad[3]) / 2
    down = (quad[3] - quad[0] + quad[2] - quad[1]) / 2
    start = np.float32([c + (sx * across + sy * down) / 2
                        for sx, sy in ((-1, -1), (1, -1), (1, 1), (-1, 1))])
    assert quad_error(start, quad) > 0.03
    got, ident = rec.reader.identify(image, start)
    assert ident.card_id == card_id
    assert quad_error(got, quad) < 0.02
    fine = rec.reader.banks[-1]
    assert quad_error(align(image, start, fine, fine.ids.index(card_id)), quad) > 0.04


@pytest.mark.parametrize("angle", [0.0, 17.0, 45.0, 90.0, 123.0, 250.0, 333.0])
@pytest.mark.parametrize("margin", [0.0, 0.05])
def test_the_outlines_a_tight_crop_holds(angle, margin):
    """A card of the deck's outline ratio turned any way and cropped to its bounding
    box (and a margin of up to a twentieth each way) is among the outlines inscribed in
    the photo, within a fiftieth of its diagonal."""
    aspect = 1.43
    a = np.radians(angle)
    turn = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    card = np.array([(-1, -aspect), (1, -aspect), (1, aspect), (-1, aspect)]) * 75 @ turn.T
    lo, hi = card.min(axis=0), card.max(axis=0)
    pad = margin * (hi - lo).max()
    card = card - lo + pad
    w, h = np.ceil(hi - lo + 2 * pad).astype(int)
    assert min(quad_error(q, card.astype(np.float32))
               for q in inscribed_outlines(int(w), int(h), aspect)) < 0.02


@pytest.mark.parametrize("card_id,angle", [("moon-adept", 35.0), ("moon-purgatory", 123.0),
                                           ("sun-temple", 160.0)])
def test_a_turned_card_cropped_tightly_round_it(card_id, angle):
    """A photo cropped to a turned card's bounding box, the card on a cloth of its own
    rim's colour: its corners touch the photo's borders, and no outline found on
    edges or the whole photo names it. The card is where a card of the deck's outline
    ratio, turned so that it fits the photo, lies."""
    face = deck_images("builtin")[card_id]
    rim = np.median(np.concatenate([face[:4].reshape(-1, 3), face[-4:].reshape(-1, 3)]), axis=0)
    cloth = np.full((480, 480, 3), rim, np.uint8)
    image, quad = _card_photo_and_quad(card_id, angle, face=face, cloth=cloth, far=0.0)
    (x0, y0), (x1, y1) = np.floor(quad.min(axis=0)).astype(int), np.ceil(quad.max(axis=0)).astype(int)
    crop = np.ascontiguousarray(image[y0:y1, x0:x1])
    assert Recogniser(builtin_profile(0)).identify_card(crop).card_id == card_id


def test_recognise_card_photo_on_gingham():
    """On a gingham of large squares, squares outline more card-like quads, and better,
    than the card's own outline: the outlines are weighed by their faces before the
    best few are named."""
    rec = Recogniser(builtin_profile(0))
    # (card, its turn, the weave's turn, squares across the card's width of 202 px)
    for card_id, angle, weave, across in (("sun-obelisk", 20.0, 0.0, 3),
                                          ("sun-souls-3", 45.0, 45.0, 4)):
        cloth = _gingham(2 * 202 / across, weave, (480, 480))
        assert rec.identify_card(_card_photo(card_id, angle, cloth=cloth)).card_id == card_id


@pytest.mark.parametrize("card_id,angle,at", [("moon-novice", 108.0, (-0.25, -0.3)),
                                               ("moon-novice", 108.0, (0.25, -0.3)),
                                               ("moon-novice", 108.0, (-0.25, 0.3)),
                                               ("moon-souls-3", 37.0, (-0.25, -0.3))])
def test_a_lamps_reflection_on_a_dark_card(card_id, angle, at):
    """A lamp's reflection on a dark card lifts every channel without washing it out
    to white, so no glare mask catches it and a quarter of the card matches no face:
    where the card is brighter in every channel than its best face predicts, a spot,
    is left out as glare is."""
    deck = sim_deck(104)  # a taught deck of dark cards with sparse prints
    rec = Recogniser(load_deck(taught_deck(104)))
    face = deck.art(card_id, 4.0)
    image = _card_photo(card_id, angle, face=face)
    h, w = face.shape[:2]
    a = np.radians(angle)
    turn = np.array([[np.cos(a), -np.sin(a)], [np.sin(a), np.cos(a)]])
    x, y = turn @ np.array([at[0] * w, at[1] * h]) * 0.8 + 240
    add_glare(image, (x, y), 40, 0.45)
    assert rec.identify_card(image).card_id == card_id


@pytest.mark.parametrize("deck,card_id,angle,across", [(110, "moon-souls-4", 30.0, False),
                                                        (110, "moon-souls-5", 250.0, True),
                                                        (104, "sun-souls-3", 120.0, False)])
def test_a_sparse_print_under_a_lamps_falloff(deck, card_id, angle, across):
    """A lamp lights one end of the card more than the other: on a face of a few small
    marks on plain paper the falloff is as strong as the print in a quarter, which no
    part of the card missing explains. The quarter test fits the light's falloff."""
    rec = Recogniser(load_deck(taught_deck(deck)))
    image = _card_photo(card_id, angle, face=sim_deck(deck).art(card_id, 4.0))
    ramp = np.linspace(1.35, 0.55, image.shape[0], dtype=np.float32)
    light = ramp[None, :, None] if across else ramp[:, None, None]
    lit = _lit(image, light)
    assert rec.identify_card(lit).card_id == card_id


@pytest.mark.parametrize("card_id,angle,tint", [("sun-temple", 75.0, (0.65, 0.9, 1.15)),
                                                ("sun-adept", 140.0, (0.65, 0.9, 1.15)),
                                                ("moon-adept", 10.0, (1.2, 0.95, 0.7))])
def test_a_card_photographed_in_tinted_light_is_read_by_its_prints_white(card_id, angle,
                                                                          tint):
    """A taught deck whose faces are printed alike in both cults' colours: in a photo
    of one card under a warm or cool light (B, G, R gains *tint*) only the colours tell
    the cult, and no Twilight card shows the light. The print's white parts do."""
    rec = Recogniser(load_deck(taught_deck(107)))
    image = _card_photo(card_id, angle, face=sim_deck(107).art(card_id, 4.0))
    lit = _lit(image, tint)
    assert rec.identify_card(lit).card_id == card_id


@pytest.mark.parametrize("card_id,angle,tint", [("moon-souls-3", 30.0, (0.65, 0.9, 1.15)),
                                                ("moon-obelisk", 250.0, (1.2, 0.95, 0.7)),
                                                ("sun-obelisk", 320.0, (1.2, 0.95, 0.7))])
def test_a_card_without_white_photographed_in_tinted_light(card_id, angle, tint):
    """A taught deck whose faces have no white or grey parts to show the light, and
    whose cults print alike but for their colours (blue and green): under a warm or
    cool light the hues shift so far that little of the card's meets either cult's
    taught hues, but one cult's far more than the other's (HUE_RATIO). (A sun card
    of this deck under the warm light is still named in the moon's colours:
    docs/recognition.md, Open.)"""
    rec = Recogniser(load_deck(taught_deck(109)))
    image = _card_photo(card_id, angle, face=sim_deck(109).art(card_id, 4.0))
    lit = _lit(image, tint)
    assert rec.identify_card(lit).card_id == card_id


@pytest.mark.parametrize("seed, deck", [(1_550_000, 105), (1_540_057, 104)])
def test_a_card_photo_duels_alike_faces_on_the_picture_on_its_edges(seed, deck):
    """A photo of one card with table around it, its outline found a few % off: aligned
    with its best face it is named as a face a numeral apart (tuning photos: a
    sun-high-priest as sun-hierarch, a moon-adept as moon-priest). Aligned with each
    alike face as well, the duel is fought on the picture whose outline lies on the
    photo's edges, as for a side card."""
    image, card_id, factors = render_card_photo(seed, deck, with_factors=True)
    assert not factors["tight"]
    assert Recogniser(load_deck(taught_deck(deck))).identify_card(image).card_id == card_id


@pytest.mark.parametrize("deck,card_id,angle,at", [(110, "sun-obelisk", 250.0, (200, 200)),
                                                    (110, "moon-adept", 80.0, (300, 260)),
                                                    (110, "sun-priest", 200.0, (300, 260)),
                                                    (104, "sun-priest", 200.0, (200, 200))])
def test_a_card_photographed_under_a_glossy_sheen_in_dim_light(deck, card_id, angle, at):
    """A glossy cloth's broad sheen over a card in a dim room lifts half of it far more
    than its print's contrast: no face correlates whole (0.61-0.83 measured), so the
    photo is named by the faces without their smooth light field, as side cards are."""
    rec = Recogniser(load_deck(taught_deck(deck)))
    image = _card_photo(card_id, angle, face=sim_deck(deck).art(card_id, 4.0))
    dim = _lit(image, 0.55)
    add_sheen(dim, at, 140, 0.45)
    assert rec.identify_card(dim).card_id == card_id


@pytest.mark.parametrize("card_id,angle", [("sun-souls-4", 30.0), ("sun-souls-6", 250.0),
                                           ("moon-souls-4", 150.0)])
@pytest.mark.parametrize("cast", [(0.75, 0.93, 1.1), (0.5, 0.62, 0.73)])
def test_twins_of_two_colours_under_a_warm_lamp_told_by_the_light_they_need(card_id,
                                                                          angle, cast):
    """Tuning deck 109 prints its souls cards alike in both cults, on light blue (sun)
    and light green (moon) paper without a white part. Under a warm lamp (B, G, R
    gains; bright and dim) the blue card turns grey and its colours say neither cult;
    seen as the green one, its light would have to be magenta, which no lamp is."""
    rec = Recogniser(load_deck(taught_deck(109)))
    image = _card_photo(card_id, angle, face=sim_deck(109).art(card_id, 4.0))
    lit = _lit(image, cast)
    ident = rec.identify_card(lit)
    assert (ident.card_id, ident.cult) == (card_id, card_id.split("-")[0])


@pytest.mark.parametrize("deck", ["builtin", 106])
def test_the_cult_of_a_card_photographed_in_a_dim_or_bright_room(deck):
    """A photo of one card has no Twilight card to tell the light by: a dim room scales
    every chroma, so the colours fall outside the cults' taught chroma histograms. The
    hues stay: the cult is read from them."""
    if deck == "builtin":
        rec, art = Recogniser(builtin_profile(0)), None
    else:
        rec, art = Recogniser(load_deck(taught_deck(deck))), sim_deck(deck).art
    for card_id, angle in (("sun-souls-6", 20.0), ("moon-souls-6", 200.0),
                           ("sun-temple", 75.0), ("moon-altar", 300.0)):
        face = None if art is None else art(card_id, 4.0)
        for level in (0.45, 1.3):
            image = _card_photo(card_id, angle, face=face).astype(np.float32) * level
            ident = rec.identify_card(np.clip(image, 0, 255).astype(np.uint8))
            assert ident.cult == card_id.split("-")[0], (card_id, level)


# -- the command and the API ----------------------------------------------------------------


def test_recognise_command_c6_lines_errors_and_annotate(tmp_path, capsys):
    image, _ = _scene(_builtin_faces(), (63, 88), SIDES, seed=6)
    good = tmp_path / "frame-0001.png"
    cv2.imwrite(str(good), image)
    broken = tmp_path / "frame-0002.png"
    broken.write_bytes(b"not an image")
    empty = tmp_path / "frame-0003.png"
    cv2.imwrite(str(empty), render_scene(5, twilight=False, hand=False).image)
    out = tmp_path / "ann"
    status = main(["recognise", str(good), str(broken), str(empty), "--annotate", str(out)])
    assert status == 2
    lines = [json.loads(x) for x in capsys.readouterr().out.splitlines()]
    assert [x["image"] for x in lines] == [str(good), str(broken), str(empty)]
    assert lines[0]["twilight"] == {"found": True, "moon_seats": ["north", "south"]}
    assert lines[0]["sides"] == SIDES
    assert "error" in lines[1]
    assert lines[2]["twilight"]["found"] is False
    assert set(lines[2]["sides"].values()) == {None}
    drawn = cv2.imread(str(out / "frame-0001.png"))
    assert drawn is not None and drawn.shape == image.shape
    assert (drawn != image).any()


def test_per_side_reading():
    rec = Recogniser(builtin_profile(0))
    sides = dict(SIDES, west=None)
    image, quads = _scene(_builtin_faces(), (63, 88), sides, seed=8)
    pose = rec.locate(image)
    reading = rec.read_side(image, pose, "north")
    assert reading.card_id == "moon-hierarch" and reading.cult == "moon"
    assert 0.5 < reading.confidence <= 1
    # the quad is the card's own corners, TL of its upright art first
    assert np.abs(reading.quad - quads["north"]).max() < 3
    assert rec.read_side(image, pose, "west").card_id is None
    assert rec.side_ms["read_ms"] > 0
    rec.recognise(image)
    assert {"locate_ms", "read_ms", "total_ms"} <= set(rec.timings)


def test_annotate_without_twilight_draws_a_note():
    scene = render_scene(6, twilight=False, hand=False)
    img = annotate(scene.image, None, {})
    assert img.shape == scene.image.shape and (img != scene.image).any()


@pytest.mark.parametrize("card_id,at,dim,strength,spread", [
    ("moon-souls-3", (0.3, -0.3), 1.0, 110.0, 0.6),
    ("moon-souls-3", (-0.3, 0.3), 1.0, 110.0, 0.6),
    ("sun-souls-4", (0.3, 0.3), 1.0, 110.0, 0.6)])
def test_a_card_under_a_broad_sheen_is_a_card(card_id, at, dim, strength, spread):
    """A glossy card's broad sheen (no washed-out core, as wide as the card) over a
    face of a few marks on plain paper, in a room lit normally or dimly (*dim*): the
    card is still seen as a card (named, or unknown for the table's rules to weigh),
    never as no card. (A dim room makes it harder: see docs/recognition.md, "Open".)"""
    deck = sim_deck(105)
    faces = {cid: deck.art(cid, 4.0) for cid in REQUIRED_IDS}
    rec = Recogniser(load_deck(taught_deck(105)))
    sides = {"north": None, "east": card_id, "south": None, "west": None}
    image, quads = _scene(faces, (63, 88), sides, seed=3)
    q = quads["east"]
    w = float(np.hypot(*(q[1] - q[0])))
    centre = q.mean(axis=0) + (q[1] - q[0]) * at[0] + (q[3] - q[0]) * at[1]
    yy, xx = np.mgrid[0:SIZE[1], 0:SIZE[0]].astype(np.float32)
    blob = np.exp(-((xx - centre[0]) ** 2 + (yy - centre[1]) ** 2) / (2 * (spread * w) ** 2))
    sheened = np.clip(image * dim + strength * blob[..., None], 0, 255).astype(np.uint8)
    result = rec.recognise(sheened)
    assert result["twilight"]["found"]
    assert result["sides"]["east"] in (card_id, "unknown")


def test_a_card_under_a_reflection_on_a_pile_is_read_where_the_side_changed():
    """A card laid at 45 degrees on the card before it, a lamp's reflection over one
    corner (tuning hand 1800015, deck 104, west): the reflection and the card beneath
    leave its outline without edges on two sides, a box beside it names some face
    weakly, and at its true outline the plain correlation is 0.30. Where the side
    changed (the rectangle the tracker passes, here the card's own outline) it is read
    with the light's smooth field left out, as uneven light is (FaceBank.flattened):
    named, over the weak name."""
    from vision.sim.movie import HandMovie

    movie = HandMovie(1_800_015, 0, (1280, 720), 10.0, deck=104)
    frame = next(f for f in movie.frames() if f.index == 195)
    rec = Recogniser(load_deck(taught_deck(104)))
    pose = rec.locate(frame.image)
    assert pose is not None
    laid = np.float32(frame.quads["west"])
    reading = rec.read_side(frame.image, pose, "west", laid=laid)
    assert reading.card_id == frame.top["west"] == "sun-high-priest"
    assert reading.confidence >= 0.5


@pytest.mark.parametrize("seed,tint", [(0, (0.65, 0.9, 1.15)), (1, (1.2, 0.95, 0.7)),
                                       (2, (0.6, 0.85, 1.2))])
def test_cards_without_white_at_the_twilight_card_in_tinted_light(seed, tint):
    """A taught deck whose faces have no white or grey parts, and whose cults print
    alike but for their colours, under a warm or cool lamp: the Twilight card's light
    may leave a card's colours undecided, and its twin in the other cult's colours
    then ties with it; the hues alone, one cult's many times the other's (HUE_RATIO),
    tell the cult, and each card is read as itself."""
    profile = load_deck(taught_deck(109))
    rec = Recogniser(profile)
    faces = {c: profile.faces[c] for c in REQUIRED_IDS}
    sides = {"north": "moon-altar", "east": "sun-temple", "south": "moon-souls-4",
             "west": "sun-souls-4"}
    image, _ = _scene(faces, (63, 88), sides, seed=seed, twilight_deg=20.0 * seed)
    lit = _lit(image, tint)
    assert rec.recognise(lit)["sides"] == sides
