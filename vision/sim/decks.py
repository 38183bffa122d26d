"""Decks for the simulator: the built-in deck, the second art style and any number
of procedurally generated decks, each taught the way a table teaches one.

A deck is named by ``"builtin"``, ``"style1"`` or an int. The ints 0 and 1 name
the two art styles of :mod:`vision.deck_art` (kept for older callers: 0 is the
built-in deck); every other int is the seed of a procedural deck, drawn by
:func:`procedural_images`: its own palettes (each cult one colour identity),
symbol shapes, Hershey fonts, borders, corner radius, card outline ratio
(1.3-1.6) and Twilight card design and aspect (1.0-1.8, either orientation).

:func:`deck_images` gives a deck's C5 enrolment images (upright, tightly cropped,
BGR), :func:`enrolment_folder` writes them as a C5 folder, :func:`taught_deck`
runs the real ``deck enrol`` on that folder. Recognition knows a deck only by
what enrolment gives it, so tests and benches measure it on decks it learned.
:func:`sim_deck` is what the renderer uses: the images plus each card's size in
millimetres.
"""

from __future__ import annotations

import colorsys
import functools
import math
import random
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np

from companion.core.cards import BACK_IDS, CARD_IDS, CLERIC_NUMERALS, TWILIGHT_ID, Card, Cult, Kind
from vision.deck_art import CARD_MM, CORNER_RADIUS_MM, Canvas, render_card, round_corners

#: Every id a deck has an image for: 28 cards, the Twilight card, both backs.
DECK_IDS: tuple[str, ...] = (*CARD_IDS, TWILIGHT_ID, *BACK_IDS)
#: Long side of every card in mm (the short side follows from the deck's ratio).
CARD_LONG_MM = 88.0
#: Resolution of a procedural deck's images (px per mm).
IMAGE_PX_PER_MM = 6.0
#: Card outline ratios (long / short side) of procedural decks.
RATIO_RANGE = (1.3, 1.6)
#: Twilight card aspects (long / short side) of procedural decks.
TWILIGHT_ASPECT_RANGE = (1.0, 1.8)
#: Hershey fonts a procedural deck may use.
FONTS = (cv2.FONT_HERSHEY_SIMPLEX, cv2.FONT_HERSHEY_DUPLEX, cv2.FONT_HERSHEY_COMPLEX,
         cv2.FONT_HERSHEY_TRIPLEX, cv2.FONT_HERSHEY_COMPLEX_SMALL, cv2.FONT_HERSHEY_PLAIN,
         cv2.FONT_HERSHEY_SCRIPT_SIMPLEX, cv2.FONT_HERSHEY_SCRIPT_COMPLEX)

Colour = tuple[int, int, int]
Point = tuple[float, float]
DeckName = str | int


def _key(deck: DeckName) -> str | int:
    """The canonical name: ``"builtin"``, ``"style1"`` or a procedural seed."""
    if deck in (0, "builtin", "style0"):
        return "builtin"
    if deck in (1, "style1"):
        return "style1"
    if isinstance(deck, bool) or not isinstance(deck, int):
        raise ValueError(f"unknown deck {deck!r}: 'builtin', 'style1' or an int seed")
    return deck


def style_of(deck: DeckName) -> int | None:
    """The :mod:`vision.deck_art` style a deck is drawn in, or None (procedural)."""
    key = _key(deck)
    return 0 if key == "builtin" else 1 if key == "style1" else None


# -- the renderer's view of a deck -------------------------------------------------------------
@dataclass(frozen=True)
class SimDeck:
    """A deck as the renderer uses it: sizes in mm, and its images by :meth:`art`
    (drawn on demand: this small record keeps no pictures alive)."""

    name: str | int
    style: int | None          # the deck_art style, or None for a procedural deck
    card_mm: tuple[float, float]      # (width, height) of every card and back, portrait
    twilight_mm: tuple[float, float]  # (width, height) of the upright Twilight image
    corner_mm: float

    def size_mm(self, card_id: str) -> tuple[float, float]:
        return self.twilight_mm if card_id == TWILIGHT_ID else self.card_mm

    @property
    def twilight_aspect(self) -> float:
        w, h = self.twilight_mm
        return max(w, h) / min(w, h)

    @property
    def key(self) -> str:
        return f"{self.name}"

    def art(self, card_id: str, px_per_mm: float) -> np.ndarray:
        """The card's image at ``px_per_mm`` (cached, read-only)."""
        return _art(self.name, card_id, float(px_per_mm))


@functools.lru_cache(maxsize=16)
def sim_deck(deck: DeckName) -> SimDeck:
    """The renderer's deck for a deck name (cached)."""
    key = _key(deck)
    style = style_of(key)
    if style is not None:
        size = (float(CARD_MM[0]), float(CARD_MM[1]))
        return SimDeck(key, style, size, size, CORNER_RADIUS_MM)
    design = _design(int(key))
    return SimDeck(key, None, design.card_mm, design.twilight_mm, design.corner_mm)


@functools.lru_cache(maxsize=512)
def _art(name: str | int, card_id: str, px_per_mm: float) -> np.ndarray:
    deck = sim_deck(name)
    if deck.style is not None:
        return render_card(card_id, deck.style, px_per_mm)
    src = _procedural_cached(int(name))[card_id]
    w, h = deck.size_mm(card_id)
    out = cv2.resize(src, (max(2, round(w * px_per_mm)), max(2, round(h * px_per_mm))),
                     interpolation=cv2.INTER_AREA)
    out.setflags(write=False)
    return out


# -- public API -------------------------------------------------------------------------------
def deck_images(deck: DeckName) -> dict[str, np.ndarray]:
    """The C5 enrolment images of ``deck``: the 28 card ids, ``"twilight"`` (moon sides
    at the top and bottom of the image), ``"sun-back"``, ``"moon-back"``; BGR uint8,
    upright, tightly cropped. Read-only arrays."""
    key = _key(deck)
    style = style_of(key)
    if style is not None:
        return {cid: render_card(cid, style) for cid in DECK_IDS}  # as taught before
    return dict(_procedural_cached(int(key)))


_FOLDERS: dict[str | int, Path] = {}
_TAUGHT: dict[str | int, str] = {}


def enrolment_folder(deck: DeckName) -> Path:
    """``deck``'s images written as a C5 enrolment folder (made once per process)."""
    key = _key(deck)
    if key not in _FOLDERS:
        folder = Path(tempfile.mkdtemp(prefix=f"twilight-deck-{key}-"))
        for cid, img in deck_images(key).items():
            cv2.imwrite(str(folder / f"{cid}.png"), img)
        _FOLDERS[key] = folder
    return _FOLDERS[key]


def taught_deck(deck: DeckName) -> str | None:
    """A deck profile folder made by the real enrolment (:func:`vision.profile.enrol`)
    from :func:`enrolment_folder`; cached per process. None for the built-in deck
    (the recogniser's default)."""
    key = _key(deck)
    if key == "builtin":
        return None
    if key not in _TAUGHT:
        from vision.profile import enrol

        folder = enrolment_folder(key)
        enrol(folder, folder / "profile")
        _TAUGHT[key] = str(folder / "profile")
    return _TAUGHT[key]


# -- procedural decks: the design drawn from the seed ------------------------------------------
@dataclass(frozen=True)
class _Design:
    seed: int
    card_mm: tuple[float, float]
    twilight_mm: tuple[float, float]
    corner_mm: float
    outside: Colour
    palettes: dict[str, dict[str, Colour]]
    font: int
    italic: bool
    weight: float
    border: str        # "band", "line", "double", "none"
    border_mm: float
    index_corners: int  # 2 or 4
    index_mark: bool
    pip: str
    pip_layout: str    # "grid", "ring", "column"
    cleric: str        # "roman", "arabic", "letters", "bars"
    cleric_figure: str  # "robe", "crown", "tower", "none"
    shrines: tuple[str, str, str]  # shapes of altar, temple, obelisk
    purgatory: str     # "spiral", "rings", "cross", "flames"
    name_text: bool
    twilight_design: str  # "triangles", "bands", "frame", "halves"
    back: str          # "stripes", "dots", "rings", "checks"


PIPS = ("circle", "diamond", "star", "square", "triangle", "heart", "hexagon", "cross")
SHRINE_SHAPES = ("tower", "dome", "pyramid", "arch", "column", "gate", "stupa", "flame-altar")
CLERIC_LABELS = {
    "roman": CLERIC_NUMERALS,
    "arabic": {"hierarch": "1", "high-priest": "2", "priest": "3", "adept": "4", "novice": "5"},
    "letters": {"hierarch": "H", "high-priest": "HP", "priest": "P", "adept": "A", "novice": "N"},
    "bars": {"hierarch": "K", "high-priest": "Q", "priest": "B", "adept": "D", "novice": "J"},
}
CLERIC_RANK = {"hierarch": 5, "high-priest": 4, "priest": 3, "adept": 2, "novice": 1}
SHRINE_LABELS = {"altar": "AL", "temple": "TE", "obelisk": "OB"}


def _hsv(h: float, s: float, v: float) -> Colour:
    r, g, b = colorsys.hsv_to_rgb(h % 1.0, min(max(s, 0), 1), min(max(v, 0), 1))
    return (round(b * 255), round(g * 255), round(r * 255))


def _palette(rng: random.Random, hue: float) -> dict[str, Colour]:
    """One cult's colours: all of one hue, so the cult reads from colour."""
    frame = _hsv(hue, rng.uniform(0.65, 0.95), rng.uniform(0.55, 0.9))
    kind = rng.choice(("light", "light", "dark", "tint"))
    if kind == "light":
        face = _hsv(hue, rng.uniform(0.04, 0.15), rng.uniform(0.93, 1.0))
        ink = _hsv(hue, rng.uniform(0.6, 0.9), rng.uniform(0.25, 0.45))
    elif kind == "tint":
        face = _hsv(hue, rng.uniform(0.25, 0.4), rng.uniform(0.9, 1.0))
        ink = _hsv(hue, rng.uniform(0.7, 1.0), rng.uniform(0.2, 0.35))
    else:
        face = _hsv(hue, rng.uniform(0.6, 0.9), rng.uniform(0.22, 0.38))
        ink = _hsv(hue, rng.uniform(0.05, 0.2), rng.uniform(0.9, 1.0))
    accent = _hsv(hue + rng.uniform(-0.04, 0.04), rng.uniform(0.8, 1.0), rng.uniform(0.6, 0.95))
    back = _hsv(hue, rng.uniform(0.6, 0.95), rng.uniform(0.35, 0.75))
    back_ink = _hsv(hue, rng.uniform(0.1, 0.35), rng.uniform(0.85, 1.0))
    return {"frame": frame, "face": face, "ink": ink, "accent": accent, "back": back,
            "back_ink": back_ink}


@functools.lru_cache(maxsize=64)
def _design(seed: int) -> _Design:
    rng = random.Random(f"deck-{seed}")
    ratio = rng.uniform(*RATIO_RANGE)
    card_mm = (CARD_LONG_MM / ratio, CARD_LONG_MM)
    aspect = rng.uniform(*TWILIGHT_ASPECT_RANGE)
    long_side = CARD_LONG_MM * rng.uniform(0.85, 1.1)
    # Either orientation: moon sides (top and bottom) along the long or the short side.
    if rng.random() < 0.5:
        tw = (long_side / aspect, long_side)
    else:
        tw = (long_side, long_side / aspect)
    sun_hue = rng.random()
    moon_hue = sun_hue + rng.uniform(0.22, 0.78)  # at least 80 degrees of hue apart
    palettes = {"sun": _palette(rng, sun_hue), "moon": _palette(rng, moon_hue)}
    outside = rng.choice(((255, 255, 255), (128, 128, 128), (235, 235, 235), (40, 40, 40)))
    shapes = list(SHRINE_SHAPES)
    rng.shuffle(shapes)
    return _Design(
        seed=seed, card_mm=card_mm, twilight_mm=tw, corner_mm=rng.uniform(0.5, 5.0),
        outside=outside, palettes=palettes, font=rng.choice(FONTS), italic=rng.random() < 0.25,
        weight=rng.uniform(0.08, 0.16), border=rng.choice(("band", "line", "double", "none")),
        border_mm=rng.uniform(2.0, 5.5), index_corners=rng.choice((2, 4)),
        index_mark=rng.random() < 0.7, pip=rng.choice(PIPS),
        pip_layout=rng.choice(("grid", "ring", "column")),
        cleric=rng.choice(tuple(CLERIC_LABELS)),
        cleric_figure=rng.choice(("robe", "crown", "tower", "none")),
        shrines=(shapes[0], shapes[1], shapes[2]),
        purgatory=rng.choice(("spiral", "rings", "cross", "flames")),
        name_text=rng.random() < 0.6,
        twilight_design=rng.choice(("triangles", "bands", "frame", "halves")),
        back=rng.choice(("stripes", "dots", "rings", "checks")))


# -- drawing ----------------------------------------------------------------------------------
class _Canvas(Canvas):
    """A BGR image of ``size_mm`` addressed in millimetres (circles at least a
    sixteenth of a pixel)."""

    min_radius16 = 1

    def __init__(self, size_mm: tuple[float, float], s: float, background: Colour) -> None:
        super().__init__(s, background, size_mm)
        self.w, self.h = size_mm

    def turned(self) -> None:
        """Turn the drawing by 180 degrees (draw, turn, draw again: reads both ways)."""
        self.img = np.ascontiguousarray(self.img[::-1, ::-1])


def _shape(kind: str, centre: Point, r: float) -> list[list[Point]]:
    """Polygons of a pip shape of radius ``r`` (mm) at ``centre``."""
    cx, cy = centre

    def ring(n: int, rr: float, a0: float = -math.pi / 2) -> list[Point]:
        return [(cx + rr * math.cos(a0 + 2 * math.pi * i / n),
                 cy + rr * math.sin(a0 + 2 * math.pi * i / n)) for i in range(n)]

    if kind == "circle":
        return [ring(32, r)]
    if kind == "diamond":
        return [[(cx, cy - r), (cx + r * 0.7, cy), (cx, cy + r), (cx - r * 0.7, cy)]]
    if kind == "star":
        pts = []
        for i in range(10):
            rr = r if i % 2 == 0 else r * 0.45
            a = -math.pi / 2 + math.pi * i / 5
            pts.append((cx + rr * math.cos(a), cy + rr * math.sin(a)))
        return [pts]
    if kind == "square":
        q = r * 0.8
        return [[(cx - q, cy - q), (cx + q, cy - q), (cx + q, cy + q), (cx - q, cy + q)]]
    if kind == "triangle":
        return [ring(3, r)]
    if kind == "hexagon":
        return [ring(6, r)]
    if kind == "cross":
        a, b = r * 0.32, r
        return [[(cx - a, cy - b), (cx + a, cy - b), (cx + a, cy + b), (cx - a, cy + b)],
                [(cx - b, cy - a), (cx + b, cy - a), (cx + b, cy + a), (cx - b, cy + a)]]
    # heart
    pts = []
    for i in range(40):
        t = 2 * math.pi * i / 40
        x = 16 * math.sin(t) ** 3
        y = -(13 * math.cos(t) - 5 * math.cos(2 * t) - 2 * math.cos(3 * t) - math.cos(4 * t))
        pts.append((cx + x / 17 * r, cy + (y + 2) / 17 * r))
    return [pts]


def _pip(c: _Canvas, kind: str, centre: Point, r: float, colour: Colour) -> None:
    for poly in _shape(kind, centre, r):
        c.poly(poly, colour)


def _shrine_polys(kind: str, box: tuple[float, float, float, float]) -> list[list[Point]]:
    x0, y0, x1, y1 = box

    def m(pts: list[Point]) -> list[Point]:
        return [(x0 + u * (x1 - x0), y0 + v * (y1 - y0)) for u, v in pts]

    if kind == "tower":
        parts = [[(0.3, 0.15), (0.7, 0.15), (0.7, 1.0), (0.3, 1.0)],
                 [(0.25, 0.0), (0.35, 0.0), (0.35, 0.15), (0.25, 0.15)],
                 [(0.45, 0.0), (0.55, 0.0), (0.55, 0.15), (0.45, 0.15)],
                 [(0.65, 0.0), (0.75, 0.0), (0.75, 0.15), (0.65, 0.15)]]
    elif kind == "dome":
        dome = [(0.5 + 0.4 * math.cos(a), 0.55 - 0.45 * math.sin(a))
                for a in np.linspace(0, math.pi, 24)]
        parts = [dome, [(0.05, 0.55), (0.95, 0.55), (0.95, 1.0), (0.05, 1.0)],
                 [(0.47, 0.0), (0.53, 0.0), (0.53, 0.12), (0.47, 0.12)]]
    elif kind == "pyramid":
        parts = [[(0.5, 0.0), (1.0, 1.0), (0.0, 1.0)]]
    elif kind == "arch":
        outer = [(0.5 + 0.45 * math.cos(a), 0.45 - 0.45 * math.sin(a))
                 for a in np.linspace(0, math.pi, 24)]
        parts = [[(0.95, 0.45)] + outer[1:] + [(0.05, 1.0), (0.3, 1.0), (0.3, 0.5), (0.7, 0.5),
                                               (0.7, 1.0), (0.95, 1.0)]]
    elif kind == "column":
        parts = [[(0.2, 0.0), (0.8, 0.0), (0.8, 0.1), (0.2, 0.1)],
                 [(0.33, 0.1), (0.67, 0.1), (0.67, 0.9), (0.33, 0.9)],
                 [(0.15, 0.9), (0.85, 0.9), (0.85, 1.0), (0.15, 1.0)]]
    elif kind == "gate":
        parts = [[(0.0, 0.05), (1.0, 0.0), (1.0, 0.12), (0.0, 0.17)],
                 [(0.1, 0.3), (0.9, 0.3), (0.9, 0.38), (0.1, 0.38)],
                 [(0.18, 0.12), (0.3, 0.12), (0.3, 1.0), (0.18, 1.0)],
                 [(0.7, 0.12), (0.82, 0.12), (0.82, 1.0), (0.7, 1.0)]]
    elif kind == "stupa":
        parts = [[(0.5, 0.0), (0.58, 0.3), (0.42, 0.3)],
                 [(0.5 + 0.35 * math.cos(a), 0.65 - 0.35 * math.sin(a))
                  for a in np.linspace(0, math.pi, 20)],
                 [(0.05, 0.65), (0.95, 0.65), (0.95, 1.0), (0.05, 1.0)]]
    else:  # flame-altar
        flame = [(0.5 + 0.18 * math.sin(t) * math.sin(t / 2) ** 1.6 / 0.65,
                  0.25 - 0.25 * math.cos(t)) for t in np.linspace(0, 2 * math.pi, 30)]
        parts = [flame, [(0.1, 0.55), (0.9, 0.55), (0.9, 0.65), (0.1, 0.65)],
                 [(0.2, 0.65), (0.8, 0.65), (0.8, 1.0), (0.2, 1.0)]]
    return [m(p) for p in parts]


def _index_label(card: Card, d: _Design) -> str:
    if card.kind is Kind.CLERIC:
        return CLERIC_LABELS[d.cleric][card.name]
    if card.kind is Kind.SOULS:
        return str(card.souls)
    if card.kind is Kind.SHRINE:
        return SHRINE_LABELS[card.name]
    return "P" if d.purgatory != "cross" else "X"


def _draw_border(c: _Canvas, d: _Design, pal: dict[str, Colour]) -> tuple[float, ...]:
    """Card background and border; returns the inner panel box."""
    w, h = c.w, c.h
    b = d.border_mm
    if d.border == "band":
        c.rect(0, 0, w, h, pal["frame"])
        c.rect(b, b, w - b, h - b, pal["face"])
    elif d.border == "line":
        c.rect(0, 0, w, h, pal["face"])
        c.polyline([(b * 0.6, b * 0.6), (w - b * 0.6, b * 0.6), (w - b * 0.6, h - b * 0.6),
                    (b * 0.6, h - b * 0.6)], pal["frame"], 0.9)
    elif d.border == "double":
        c.rect(0, 0, w, h, pal["frame"])
        c.rect(b * 0.5, b * 0.5, w - b * 0.5, h - b * 0.5, pal["face"])
        c.polyline([(b, b), (w - b, b), (w - b, h - b), (b, h - b)], pal["frame"], 0.6)
    else:
        c.rect(0, 0, w, h, pal["face"])
        c.rect(0, 0, w, 1.5, pal["frame"])
        c.rect(0, h - 1.5, w, h, pal["frame"])
    return (b, b, w - b, h - b)


def _corner_index(c: _Canvas, card: Card, d: _Design, pal: dict[str, Colour]) -> None:
    label = _index_label(card, d)
    xs = [d.border_mm + 4.5]
    if d.index_corners == 4:
        xs.append(c.w - d.border_mm - 4.5)
    y = d.border_mm + 4.5
    for x in xs:
        c.text(label, (x, y), 5.0 if len(label) < 2 else 4.0, pal["ink"], d.font, d.weight,
               max_width_mm=8.0)
        if d.index_mark:
            _pip(c, d.pip, (x, y + 6.5), 2.0, pal["accent"])


def _draw_face(c: _Canvas, card: Card, d: _Design) -> None:
    pal = d.palettes[card.cult.value]
    x0, y0, x1, y1 = _draw_border(c, d, pal)
    cx, cy = c.w / 2, c.h / 2
    for _ in range(2):  # indices and the name, readable either way up
        _corner_index(c, card, d, pal)
        if d.name_text:
            name = (f"{card.souls} SOULS" if card.kind is Kind.SOULS
                    else card.name.replace("-", " ").upper())
            c.text(name, (cx, y0 + 2.6), 2.6, pal["ink"], d.font, 0.1, max_width_mm=c.w * 0.45)
        c.turned()
    inner_w = x1 - x0 - 4
    if card.kind is Kind.SOULS:
        n = card.souls
        r = min(inner_w / 7.5, 4.8)
        if d.pip_layout == "ring":
            for i in range(n):
                a = -math.pi / 2 + 2 * math.pi * i / n
                _pip(c, d.pip, (cx + inner_w * 0.32 * math.cos(a), cy + 22 * math.sin(a)), r,
                     pal["ink"])
            c.text(str(n), (cx, cy), 11.0, pal["accent"], d.font, d.weight)
        elif d.pip_layout == "column":
            for i in range(n):
                py = cy - 26 + 52 * (i + 0.5) / n
                px = cx + (inner_w * 0.18 if i % 2 else -inner_w * 0.18)
                _pip(c, d.pip, (px, py), r * 0.9, pal["ink"])
        else:
            cols = 2 if n > 3 else 1
            rows = math.ceil(n / cols)
            for i in range(n):
                row, k = divmod(i, cols)
                px = cx if (row == rows - 1 and n % cols) else cx + (k - (cols - 1) / 2) * 17
                _pip(c, d.pip, (px, cy - 22 + (row + 0.5) * 44 / rows), r, pal["ink"])
    elif card.kind is Kind.CLERIC:
        rank = CLERIC_RANK[card.name]
        label = CLERIC_LABELS[d.cleric][card.name]
        if d.cleric_figure == "none":
            c.circle((cx, cy - 4), inner_w * 0.34, pal["accent"])
            c.text(label, (cx, cy - 4), 12.0, pal["face"], d.font, d.weight + 0.03,
                   max_width_mm=inner_w * 0.5)
            for i in range(rank):  # rank as bars under the disc, seen from afar
                bw = inner_w * 0.6 * (i + 1) / rank
                by = cy + inner_w * 0.34 + 1.5 + i * 2.6
                c.rect(cx - bw / 2, by, cx + bw / 2, by + 1.6, pal["ink"])
        else:
            c.text(label, (cx, cy + 19), 8.0, pal["accent"], d.font, d.weight,
                   max_width_mm=inner_w * 0.7)
            for i in range(rank):  # rank as dots in a row under the label
                c.circle((cx + (i - (rank - 1) / 2) * 4.2, cy + 27), 1.4, pal["ink"])
            fx0, fy0, fx1, fy1 = cx - inner_w * 0.3, cy - 24, cx + inner_w * 0.3, cy + 12
            fw, fh = fx1 - fx0, fy1 - fy0
            if d.cleric_figure == "robe":
                spread = 0.1 + 0.07 * rank  # higher ranks wear wider robes and taller hats
                c.poly([(cx, fy0 + 0.4 * fh), (cx - spread * fw * 1.6, fy1),
                        (cx + spread * fw * 1.6, fy1)], pal["ink"])
                head_y = fy0 + 0.33 * fh
                c.circle((cx, head_y), 0.11 * fw, pal["ink"])
                hat = 0.06 * fh * rank
                c.poly([(cx - 0.1 * fw, head_y - 0.06 * fh), (cx + 0.1 * fw, head_y - 0.06 * fh),
                        (cx, head_y - 0.06 * fh - hat)], pal["ink"])
                if rank >= 4:  # a staff
                    c.line((fx1 - 0.05 * fw, fy0 + 0.05 * fh), (fx1 - 0.05 * fw, fy1),
                           pal["ink"], 1.0)
            elif d.cleric_figure == "crown":
                pts = [(fx0, fy1 - 0.3 * fh)]
                for i in range(rank + 1):
                    x = fx0 + fw * i / (rank + 1)
                    pts += [(x, fy1 - 0.3 * fh), (x + fw / (rank + 1) / 2, fy0 + 0.2 * fh)]
                pts += [(fx1, fy1 - 0.3 * fh), (fx1, fy1), (fx0, fy1)]
                c.poly(pts, pal["ink"])
            else:  # tower of rank blocks
                for i in range(rank):
                    bw = fw * (1.0 - 0.15 * i)
                    by1 = fy1 - i * fh / 5.5
                    c.rect(cx - bw / 2, by1 - fh / 6.5, cx + bw / 2, by1, pal["ink"])
    elif card.kind is Kind.SHRINE:
        kind = d.shrines[("altar", "temple", "obelisk").index(card.name)]
        bw = inner_w * 0.75
        for poly in _shrine_polys(kind, (cx - bw / 2, cy - 22, cx + bw / 2, cy + 18)):
            c.poly(poly, pal["ink"])
        c.text(SHRINE_LABELS[card.name], (cx, cy + 26), 5.0, pal["accent"], d.font, d.weight)
    else:  # purgatory: busy, high contrast, unlike any other card
        r = min(inner_w * 0.45, 24.0)
        if d.purgatory == "spiral":
            pts = [(cx + (r * t / 25) * math.cos(t), cy + (r * t / 25) * math.sin(t))
                   for t in np.linspace(0, 25, 300)]
            c.polyline(pts, pal["accent"], 1.6, closed=False)
        elif d.purgatory == "rings":
            for k in range(6, 0, -1):
                c.circle((cx, cy), r * k / 6, pal["accent"] if k % 2 else pal["ink"])
        elif d.purgatory == "cross":
            c.line((cx - r, cy - r), (cx + r, cy + r), pal["accent"], 4.0)
            c.line((cx - r, cy + r), (cx + r, cy - r), pal["accent"], 4.0)
            c.circle((cx, cy), r * 0.35, pal["ink"])
        else:
            for k in range(-8, 9):
                c.line((cx + k * 5 - 20, y0), (cx + k * 5 + 20, y1), pal["accent"], 1.2)
            c.circle((cx, cy), r * 0.7, pal["face"])
            for dx, s in ((-0.3, 0.6), (0.3, 0.6), (0.0, 1.0)):
                flame = [(cx + dx * r + s * r * 0.3 * math.sin(t) * math.sin(t / 2) ** 1.6 / 0.65,
                          cy + s * r * 0.5 - s * r * 0.5 * (1 - math.cos(t)))
                         for t in np.linspace(0, 2 * math.pi, 30)]
                c.poly(flame, pal["ink"])


def _draw_back(c: _Canvas, cult: Cult, d: _Design) -> None:
    pal = d.palettes[cult.value]
    w, h = c.w, c.h
    c.rect(0, 0, w, h, pal["back"])
    if d.back == "stripes":
        for i in range(-20, 20):
            c.line((i * 5.0, 0), (i * 5.0 + h, h), pal["back_ink"], 0.8)
    elif d.back == "dots":
        for y in np.arange(4, h, 6):
            for x in np.arange(4 + (y % 12 > 5) * 3, w, 6):
                c.circle((x, y), 1.1, pal["back_ink"])
    elif d.back == "rings":
        for k in range(1, 12):
            c.circle((w / 2, h / 2), k * 4.5, pal["back_ink"], 0.7)
    else:
        for y in np.arange(0, h, 6):
            for x in np.arange(0, w, 6):
                if (round(x / 6) + round(y / 6)) % 2:
                    c.rect(x, y, x + 6, y + 6, pal["back_ink"])
    c.polyline([(2, 2), (w - 2, 2), (w - 2, h - 2), (2, h - 2)], pal["back"], 3.0)
    _pip(c, d.pip, (w / 2, h / 2), 7.0, pal["back_ink"])


def _draw_twilight(c: _Canvas, d: _Design) -> None:
    """Moon colour along the top and bottom edges, sun colour along the left and right."""
    w, h = c.w, c.h
    sun, moon = d.palettes["sun"], d.palettes["moon"]
    cx, cy = w / 2, h / 2
    light = (240, 240, 240)
    c.rect(0, 0, w, h, light)
    m = 2.0
    if d.twilight_design == "triangles":
        c.poly([(m, m), (w - m, m), (cx, cy)], moon["frame"])
        c.poly([(m, h - m), (w - m, h - m), (cx, cy)], moon["frame"])
        c.poly([(m, m + 1), (m, h - m - 1), (cx, cy)], sun["frame"])
        c.poly([(w - m, m + 1), (w - m, h - m - 1), (cx, cy)], sun["frame"])
    elif d.twilight_design == "bands":
        bh = h * 0.22
        c.rect(0, 0, w, bh, moon["frame"])
        c.rect(0, h - bh, w, h, moon["frame"])
        c.rect(0, bh, w * 0.2, h - bh, sun["frame"])
        c.rect(w * 0.8, bh, w, h - bh, sun["frame"])
    elif d.twilight_design == "frame":
        b = min(w, h) * 0.16
        c.rect(0, 0, w, h, sun["frame"])
        c.poly([(0, 0), (w, 0), (w - b, b), (b, b)], moon["frame"])
        c.poly([(0, h), (w, h), (w - b, h - b), (b, h - b)], moon["frame"])
        c.rect(b, b, w - b, h - b, light)
    else:  # halves: moon half-discs at top and bottom, sun half-discs at the sides
        c.rect(0, 0, w, h, sun["face"])
        r = min(w, h) * 0.42
        for y in (0.0, h):
            c.poly([(cx + r * math.cos(a), y + r * math.sin(a) * (1 if y == 0 else -1))
                    for a in np.linspace(0, math.pi, 30)], moon["frame"])
        for x in (0.0, w):
            c.poly([(x + r * 0.6 * math.sin(a) * (1 if x == 0 else -1), cy + r * 0.6 * math.cos(a))
                    for a in np.linspace(0, math.pi, 30)], sun["frame"])
    rr = min(w, h) * 0.16
    c.circle((cx, cy), rr, light)
    c.circle((cx, cy), rr, (40, 40, 40), 0.5)
    _pip(c, d.pip, (cx, cy - rr * 0.35), rr * 0.45, sun["accent"])
    _pip(c, d.pip, (cx, cy + rr * 0.4), rr * 0.4, moon["accent"])


def _round_corners(img: np.ndarray, r_px: int, outside: Colour) -> np.ndarray:
    h, w = img.shape[:2]
    return round_corners(img, max(1, min(r_px, min(h, w) // 3)), outside)


def procedural_images(seed: int, px_per_mm: float = IMAGE_PX_PER_MM
                      ) -> dict[str, np.ndarray]:
    """Draw procedural deck ``seed``: every id of :data:`DECK_IDS`, upright, tightly
    cropped, rounded corners showing the deck's backdrop colour."""
    d = _design(seed)
    font = d.font | (cv2.FONT_ITALIC if d.italic else 0)
    d = _Design(**{**d.__dict__, "font": font})
    out: dict[str, np.ndarray] = {}
    draw: dict[str, Callable[[_Canvas], None]] = {}
    for cid in CARD_IDS:
        draw[cid] = functools.partial(_draw_face, card=Card.parse(cid), d=d)
    draw[TWILIGHT_ID] = functools.partial(_draw_twilight, d=d)
    for bid in BACK_IDS:
        draw[bid] = functools.partial(_draw_back, cult=Cult.parse(bid.split("-")[0]), d=d)
    for cid, fn in draw.items():
        size = d.twilight_mm if cid == TWILIGHT_ID else d.card_mm
        c = _Canvas(size, px_per_mm, (255, 255, 255))
        fn(c)
        img = _round_corners(c.img, round(d.corner_mm * px_per_mm), d.outside)
        img.setflags(write=False)
        out[cid] = img
    return out


@functools.lru_cache(maxsize=4)
def _procedural_cached(seed: int) -> dict[str, np.ndarray]:
    return procedural_images(seed)


def design_summary(deck: DeckName) -> dict[str, object]:
    """What a procedural deck looks like, for reports (empty for the art styles)."""
    key = _key(deck)
    if style_of(key) is not None:
        return {}
    d = _design(int(key))
    w, h = d.twilight_mm
    return {"ratio": round(d.card_mm[1] / d.card_mm[0], 3),
            "twilight_aspect": round(max(w, h) / min(w, h), 3),
            "twilight_landscape": w > h, "twilight_design": d.twilight_design,
            "border": d.border, "pip": d.pip, "font": d.font}
