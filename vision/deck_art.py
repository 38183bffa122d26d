"""The built-in deck: card faces, backs and the Twilight card, drawn by our own code.

Two art styles (:data:`STYLES`):

* style 0, the built-in deck, designed to be read from above at a distance:
  sun cards are a light cream face in a warm orange frame whose inner edge is
  **toothed** (sun rays), moon cards a dark navy face in a cool blue frame whose
  inner edge is **scalloped** (moons). Light against dark and teeth against
  scallops survive colour blindness and bad white balance. Each card has one
  large symbol (numeral and robed figure for clerics, the soul count as a number
  and as drop glyphs, three shrine silhouettes, hazard-striped flames for
  purgatory) and an index in all four corners (the bottom two turned 180°), so
  a card half covered by another, or upside down, still reads.
* style 1, a second deck with other colours (crimson and purple on white),
  a serif font, indices in two corners only, pips instead of drops and outlined
  shrines, for measuring recognition on a deck it was not designed around.

All drawing is in millimetres on the 63 x 88 mm card (:data:`CARD_MM`) and
scaled by ``px_per_mm``; images are BGR uint8, upright, the full card face.

>>> render_card("moon-adept").shape
(352, 252, 3)
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence

import cv2
import numpy as np

from companion.core.cards import BACK_IDS, CARD_IDS, CLERIC_NUMERALS, TWILIGHT_ID, Card, Cult, Kind

#: Art styles: 0 the built-in deck, 1 a second deck with other colours, fonts and layout.
STYLES: tuple[int, ...] = (0, 1)
#: Card size in millimetres (width, height), portrait.
CARD_MM: tuple[int, int] = (63, 88)
#: Every id :func:`render_card` draws: 28 cards, the Twilight card, both backs.
ALL_IDS: tuple[str, ...] = (*CARD_IDS, TWILIGHT_ID, *BACK_IDS)

#: Corner radius of the card in mm (the image corners outside it are table-neutral grey).
CORNER_RADIUS_MM = 3.0
#: Draw at least this many px/mm and shrink, for smooth anti-aliased edges.
_SUPERSAMPLE_MIN_PX_PER_MM = 8.0

Colour = tuple[int, int, int]
Point = tuple[float, float]


# -- palettes (BGR) --------------------------------------------------------------------------
_PALETTE: dict[int, dict[str, dict[str, Colour]]] = {
    0: {
        "sun": {"frame": (30, 130, 240), "face": (205, 238, 255), "ink": (20, 45, 120),
                "accent": (0, 90, 215), "back": (25, 150, 245), "back_ink": (170, 235, 255)},
        "moon": {"frame": (170, 90, 30), "face": (85, 42, 22), "ink": (245, 235, 215),
                 "accent": (255, 200, 120), "back": (120, 50, 20), "back_ink": (240, 205, 150)},
    },
    1: {
        "sun": {"frame": (40, 30, 190), "face": (245, 248, 250), "ink": (40, 30, 170),
                "accent": (30, 170, 230), "back": (50, 40, 175), "back_ink": (120, 210, 245)},
        "moon": {"frame": (120, 40, 95), "face": (240, 236, 232), "ink": (110, 40, 85),
                 "accent": (160, 150, 40), "back": (95, 35, 75), "back_ink": (215, 200, 150)},
    },
}
_FONT = {0: cv2.FONT_HERSHEY_DUPLEX, 1: cv2.FONT_HERSHEY_TRIPLEX}
_OUTSIDE: Colour = (128, 128, 128)
_PURGATORY_FLAME: Colour = (0, 60, 230)
_PURGATORY_STRIPE: Colour = (20, 20, 20)
_PURGATORY_STRIPE_LIGHT: Colour = (215, 215, 215)

_WHITE_PALETTE: dict[str, Colour] = {k: (255, 255, 255) for k in
                                     ("frame", "face", "ink", "accent", "back", "back_ink")}

SHRINE_INDEX = {"altar": "x1", "temple": "x2", "obelisk": "x3"}


class Canvas:
    """A BGR image of ``size_mm`` (a card, unless told) addressed in millimetres."""

    #: Smallest circle radius drawn, in sixteenths of a pixel.
    min_radius16 = 0

    def __init__(self, px_per_mm: float, background: Colour,
                 size_mm: tuple[float, float] = CARD_MM) -> None:
        self.s = px_per_mm
        w, h = size_mm
        self.img = np.empty((round(h * px_per_mm), round(w * px_per_mm), 3), np.uint8)
        self.img[:] = background

    def px(self, pts: Sequence[Point]) -> np.ndarray:
        # cv2 draws with 4 fractional bits: sub-pixel precise, anti-aliased.
        return (np.asarray(pts, np.float64) * self.s * 16).round().astype(np.int32)

    def poly(self, pts: Sequence[Point], colour: Colour) -> None:
        cv2.fillPoly(self.img, [self.px(pts)], colour, cv2.LINE_AA, shift=4)

    def polyline(self, pts: Sequence[Point], colour: Colour, width_mm: float,
                 closed: bool = True) -> None:
        cv2.polylines(self.img, [self.px(pts)], closed, colour,
                      max(1, round(width_mm * self.s)), cv2.LINE_AA, shift=4)

    def rect(self, x0: float, y0: float, x1: float, y1: float, colour: Colour) -> None:
        self.poly([(x0, y0), (x1, y0), (x1, y1), (x0, y1)], colour)

    def circle(self, c: Point, r: float, colour: Colour, width_mm: float = -1) -> None:
        centre = tuple(int(v) for v in self.px([c])[0])
        thickness = -1 if width_mm < 0 else max(1, round(width_mm * self.s))
        cv2.circle(self.img, centre, max(self.min_radius16, round(r * self.s * 16)), colour,
                   thickness, cv2.LINE_AA, shift=4)

    def line(self, a: Point, b: Point, colour: Colour, width_mm: float) -> None:
        pa, pb = self.px([a, b])
        cv2.line(self.img, tuple(int(v) for v in pa), tuple(int(v) for v in pb), colour,
                 max(1, round(width_mm * self.s)), cv2.LINE_AA, shift=4)

    def text(self, text: str, centre: Point, height_mm: float, colour: Colour, font: int,
             weight: float = 0.12, max_width_mm: float | None = None) -> None:
        """Text centred at ``centre`` with cap height ``height_mm``; stroke ``weight`` x height;
        narrowed to ``max_width_mm`` if wider."""
        thickness = max(1, round(height_mm * weight * self.s))
        (tw, th), _ = cv2.getTextSize(text, font, 1.0, thickness)
        scale = height_mm * self.s / max(th, 1)
        if max_width_mm is not None and tw * scale > max_width_mm * self.s:
            scale = max_width_mm * self.s / max(tw, 1)
        (tw, th), _ = cv2.getTextSize(text, font, scale, thickness)
        x = centre[0] * self.s - tw / 2
        y = centre[1] * self.s + th / 2
        cv2.putText(self.img, text, (round(x), round(y)), font, scale, colour, thickness,
                    cv2.LINE_AA)

    def text_width_mm(self, text: str, height_mm: float, font: int, weight: float = 0.12) -> float:
        thickness = max(1, round(height_mm * weight * self.s))
        (tw, th), _ = cv2.getTextSize(text, font, 1.0, thickness)
        return tw * height_mm / max(th, 1)


# -- shapes in a unit box, mapped into a mm box ----------------------------------------------
def _map(pts: Sequence[Point], box: tuple[float, float, float, float]) -> list[Point]:
    x0, y0, x1, y1 = box
    return [(x0 + u * (x1 - x0), y0 + v * (y1 - y0)) for u, v in pts]


def _drop(n: int = 40, m: float = 1.6) -> list[Point]:
    """A teardrop (a soul, or a flame tongue) in the unit box, tip at the top."""
    pts = []
    for i in range(n):
        t = 2 * math.pi * i / n
        x = math.sin(t) * math.sin(t / 2) ** m
        y = math.cos(t)
        pts.append((0.5 + 0.5 * x / 0.65, 0.5 - 0.5 * y))
    return pts


def _sun_emblem(c: Canvas, centre: Point, r: float, colour: Colour, rays: int = 12) -> None:
    cx, cy = centre
    c.circle(centre, r * 0.55, colour)
    for i in range(rays):
        a = 2 * math.pi * i / rays
        w = math.pi / rays * 0.55
        c.poly([(cx + r * math.cos(a), cy + r * math.sin(a)),
                (cx + r * 0.6 * math.cos(a + w), cy + r * 0.6 * math.sin(a + w)),
                (cx + r * 0.6 * math.cos(a - w), cy + r * 0.6 * math.sin(a - w))], colour)


def _crescent_points(centre: Point, r: float, n: int = 48) -> list[Point]:
    """A crescent opening to the right: outer arc round the left, inner arc back."""
    cx, cy = centre
    off = 0.45 * r
    # The two circles (r at cx, r*0.85 at cx+off) meet where both equations hold.
    r2 = 0.85 * r
    xi = (r * r - r2 * r2 + off * off) / (2 * off)
    yi = math.sqrt(max(r * r - xi * xi, 0.0))
    a_out = math.atan2(yi, xi)
    a_in = math.atan2(yi, xi - off)
    pts = []
    for i in range(n + 1):
        a = a_out + (2 * math.pi - 2 * a_out) * i / n
        pts.append((cx + r * math.cos(a), cy + r * math.sin(a)))
    for i in range(n + 1):
        a = (2 * math.pi - a_in) - (2 * math.pi - 2 * a_in) * i / n
        pts.append((cx + off + r2 * math.cos(a), cy + r2 * math.sin(a)))
    return pts


def _moon_emblem(c: Canvas, centre: Point, r: float, colour: Colour) -> None:
    c.poly(_crescent_points(centre, r), colour)


def _cult_emblem(c: Canvas, cult: Cult, centre: Point, r: float, colour: Colour) -> None:
    if cult is Cult.SUN:
        _sun_emblem(c, centre, r, colour)
    else:
        _moon_emblem(c, centre, r, colour)


def _shrine(c: Canvas, name: str, box: tuple[float, float, float, float], colour: Colour,
            outline: Colour | None = None) -> None:
    """Shrine silhouettes: obelisk tall and narrow, temple with pediment and columns,
    altar low and wide with a flame on it."""
    parts: list[list[Point]]
    if name == "obelisk":
        parts = [[(0.5, 0.0), (0.62, 0.12), (0.58, 0.82), (0.42, 0.82), (0.38, 0.12)],
                 [(0.28, 0.82), (0.72, 0.82), (0.72, 0.9), (0.28, 0.9)],
                 [(0.2, 0.9), (0.8, 0.9), (0.8, 1.0), (0.2, 1.0)]]
    elif name == "temple":
        parts = [[(0.0, 0.3), (0.5, 0.05), (1.0, 0.3)],
                 [(0.02, 0.33), (0.98, 0.33), (0.98, 0.41), (0.02, 0.41)],
                 [(0.0, 0.88), (1.0, 0.88), (1.0, 1.0), (0.0, 1.0)]]
        for i in range(4):
            x = 0.1 + i * 0.245
            parts.append([(x, 0.44), (x + 0.1, 0.44), (x + 0.1, 0.85), (x, 0.85)])
    else:  # altar
        parts = [[(0.05, 0.55), (0.95, 0.55), (0.95, 0.64), (0.05, 0.64)],
                 [(0.15, 0.64), (0.85, 0.64), (0.85, 0.92), (0.15, 0.92)],
                 [(0.05, 0.92), (0.95, 0.92), (0.95, 1.0), (0.05, 1.0)],
                 _map(_drop(), (0.33, 0.08, 0.67, 0.52))]
    for part in parts:
        pts = _map(part, box)
        if outline is None:
            c.poly(pts, colour)
        else:
            c.polyline(pts, outline, 0.7)


def _figure(c: Canvas, name: str, box: tuple[float, float, float, float], colour: Colour,
            style: int) -> None:
    """A robed cleric; headgear grows with rank (novice bare-headed, hierarch tiara)."""
    robe = [(0.5, 0.36), (0.78, 0.5), (0.9, 1.0), (0.1, 1.0), (0.22, 0.5)]
    if style == 1:
        robe = [(0.35, 0.38), (0.65, 0.38), (0.8, 1.0), (0.2, 1.0)]
    c.poly(_map(robe, box), colour)
    x0, y0, x1, y1 = box
    w, h = x1 - x0, y1 - y0
    c.circle((x0 + 0.5 * w, y0 + 0.3 * h), 0.1 * w, colour)
    hat: list[list[Point]] = []
    if name == "hierarch":
        hat = [[(0.38, 0.24), (0.62, 0.24), (0.6, 0.16), (0.4, 0.16)],
               [(0.4, 0.15), (0.6, 0.15), (0.57, 0.08), (0.43, 0.08)],
               [(0.47, 0.08), (0.53, 0.08), (0.53, 0.0), (0.47, 0.0)],
               [(0.44, 0.025), (0.56, 0.025), (0.56, 0.045), (0.44, 0.045)]]
    elif name == "high-priest":
        hat = [[(0.39, 0.24), (0.61, 0.24), (0.58, 0.1), (0.5, 0.03), (0.42, 0.1)]]
    elif name == "priest":
        hat = [[(0.36, 0.24), (0.64, 0.24), (0.6, 0.18), (0.4, 0.18)],
               [(0.42, 0.18), (0.58, 0.18), (0.56, 0.12), (0.44, 0.12)]]
    elif name == "adept":
        hat = [[(0.37, 0.32), (0.4, 0.2), (0.5, 0.14), (0.6, 0.2), (0.63, 0.32)]]
    for part in hat:
        c.poly(_map(part, box), colour)
    if name in ("hierarch", "high-priest"):  # a staff
        c.line((x0 + 0.86 * w, y0 + 0.12 * h), (x0 + 0.86 * w, y0 + 0.98 * h), colour, 0.08 * w)
        c.circle((x0 + 0.86 * w, y0 + 0.12 * h), 0.05 * w, colour)


def _flames(c: Canvas, box: tuple[float, float, float, float], colour: Colour) -> None:
    for u0, v0, u1, v1 in ((0.0, 0.35, 0.4, 1.0), (0.6, 0.35, 1.0, 1.0), (0.2, 0.0, 0.8, 1.0)):
        c.poly(_map(_map(_drop(), (u0, v0, u1, v1)), box), colour)


# -- card parts --------------------------------------------------------------------------------
_FRAME_MM = 4.0
_PANEL = (_FRAME_MM, _FRAME_MM, CARD_MM[0] - _FRAME_MM, CARD_MM[1] - _FRAME_MM)


def _frame_edge(c: Canvas, cult: Cult, colour: Colour) -> None:
    """The cult's shape cue along the inside of the frame: teeth (sun) or scallops (moon)."""
    x0, y0, x1, y1 = _PANEL
    step = 4.0
    depth = 1.6
    for horizontal, a0, a1, fixed, sign in ((True, x0, x1, y0, 1), (True, x0, x1, y1, -1),
                                            (False, y0, y1, x0, 1), (False, y0, y1, x1, -1)):
        n = max(1, round((a1 - a0) / step))
        d = (a1 - a0) / n
        for i in range(n):
            a = a0 + i * d
            if cult is Cult.SUN:
                tri = [(a, fixed), (a + d, fixed), (a + d / 2, fixed + sign * depth)]
                c.poly([p if horizontal else (p[1], p[0]) for p in tri], colour)
            else:
                centre = (a + d / 2, fixed)
                c.circle(centre if horizontal else (fixed, a + d / 2), d * 0.42, colour)


def _index_label(card: Card) -> str:
    if card.kind is Kind.CLERIC:
        return CLERIC_NUMERALS[card.name]
    if card.kind is Kind.SOULS:
        return str(card.souls)
    if card.kind is Kind.SHRINE:
        return SHRINE_INDEX[card.name]
    return "P"


def _corner_index(c: Canvas, card: Card, style: int, pal: dict[str, Colour],
                  corner: Point) -> None:
    """One corner index: the rank label over the cult emblem, top-left origin ``corner``."""
    font = _FONT[style]
    ink = pal["ink"]
    x, y = corner
    if style == 0:
        label_h, em_r, width = 6.5, 3.2, 9.0
    else:
        label_h, em_r, width = 7.0, 3.0, 10.0
    label = _index_label(card)
    if card.kind is Kind.SHRINE:
        _shrine(c, card.name, (x + 1.5, y, x + width - 1.5, y + 8.0), ink)
        c.text(label, (x + width / 2, y + 11.0), 3.2, ink, font)
        c.circle((x + width / 2, y + 17.0), em_r, pal["face"])
        _cult_emblem(c, card.cult, (x + width / 2, y + 17.0), em_r, pal["accent"])
        return
    h = label_h
    if len(label) >= 3:
        h *= 0.8
    colour = pal["accent"] if card.kind is Kind.PURGATORY else ink
    c.text(label, (x + width / 2, y + h / 2 + 0.5), h, colour, font)
    if card.souls >= 6 and card.kind is Kind.SOULS:  # underline 6 so it is not a 9 upside down
        c.line((x + 2.5, y + h + 1.8), (x + width - 2.5, y + h + 1.8), ink, 0.6)
    _cult_emblem(c, card.cult, (x + width / 2, y + h + 3.0 + em_r), em_r, pal["accent"])


def _panel_base(c: Canvas, card: Card, style: int, pal: dict[str, Colour]) -> None:
    x0, y0, x1, y1 = _PANEL
    if style == 0:
        c.rect(x0, y0, x1, y1, pal["face"])
        _frame_edge(c, card.cult, pal["frame"])
    else:
        # Style 1: white face, thin double frame, cult band top and bottom.
        c.rect(0, 0, CARD_MM[0], CARD_MM[1], pal["face"])
        c.rect(2.5, 2.5, CARD_MM[0] - 2.5, 7.0, pal["frame"])
        c.rect(2.5, CARD_MM[1] - 7.0, CARD_MM[0] - 2.5, CARD_MM[1] - 2.5, pal["frame"])
        c.polyline([(2.5, 2.5), (CARD_MM[0] - 2.5, 2.5), (CARD_MM[0] - 2.5, CARD_MM[1] - 2.5),
                    (2.5, CARD_MM[1] - 2.5)], pal["frame"], 0.5)
        for cx in (6.0, CARD_MM[0] - 6.0):
            for cy in (4.75, CARD_MM[1] - 4.75):
                if card.cult is Cult.SUN:
                    _sun_emblem(c, (cx, cy), 1.9, pal["face"], rays=8)
                else:
                    _moon_emblem(c, (cx, cy), 1.8, pal["face"])


def _centre_symbol(c: Canvas, card: Card, style: int, pal: dict[str, Colour]) -> None:
    font = _FONT[style]
    ink = pal["ink"]
    cx = CARD_MM[0] / 2
    if card.kind is Kind.CLERIC:
        numeral = CLERIC_NUMERALS[card.name]
        if style == 0:
            c.text(numeral, (cx, 23.0), 12.0, pal["accent"], font, 0.14)
            _figure(c, card.name, (cx - 15, 32.0, cx + 15, 72.0), ink, style)
        else:
            _figure(c, card.name, (cx - 13, 18.0, cx + 13, 54.0), ink, style)
            c.text(numeral, (cx, 64.0), 10.0, ink, font, 0.1)
    elif card.kind is Kind.SOULS:
        n = card.souls
        if style == 0:
            c.circle((cx, 44.0), 13.0, pal["accent"])
            c.text(str(n), (cx, 44.0), 15.0, pal["face"], font, 0.16)
            if n >= 6:
                c.line((cx - 5, 55.0), (cx + 5, 55.0), pal["face"], 1.0)
            for i in range(n):  # drops on a ring round the number
                a = -math.pi / 2 + 2 * math.pi * i / n
                px, py = cx + 20.0 * math.cos(a), 44.0 + 22.0 * math.sin(a)
                c.poly(_map(_drop(), (px - 3.2, py - 4.5, px + 3.2, py + 4.5)), ink)
        else:
            cols = 2 if n > 3 else 1
            rows = math.ceil(n / cols)
            for i in range(n):
                r, k = divmod(i, cols)
                if r == rows - 1 and n % cols:
                    px = cx
                else:
                    px = cx + (k - (cols - 1) / 2) * 16.0
                py = 20.0 + (r + 0.5) * (44.0 / rows)
                c.circle((px, py), 4.2, ink)
            c.text(str(n), (cx, 74.0), 6.0, ink, font, 0.1)
    elif card.kind is Kind.SHRINE:
        if style == 0:
            box = {"obelisk": (cx - 12, 14.0, cx + 12, 70.0),
                   "temple": (cx - 19, 24.0, cx + 19, 64.0),
                   "altar": (cx - 19, 26.0, cx + 19, 66.0)}[card.name]
            _shrine(c, card.name, box, ink)
        else:
            box = {"obelisk": (cx - 10, 18.0, cx + 10, 64.0),
                   "temple": (cx - 17, 24.0, cx + 17, 60.0),
                   "altar": (cx - 17, 26.0, cx + 17, 62.0)}[card.name]
            _shrine(c, card.name, box, ink, outline=ink)
    else:  # purgatory
        x0, y0, x1, y1 = 13.0, 14.0, CARD_MM[0] - 13.0, CARD_MM[1] - 14.0
        if style == 0:
            # Dark stripes on the light sun face, light stripes on the dark moon face.
            stripe = _PURGATORY_STRIPE if sum(pal["face"]) > 384 else _PURGATORY_STRIPE_LIGHT
            before = c.img.copy()
            for k in range(-12, 12):  # hazard stripes, kept inside the panel below
                x = cx + k * 8.0
                c.line((x - 40.0, 84.0), (x + 40.0, 4.0), stripe, 3.5)
            r0, r1 = round(y0 * c.s), round(y1 * c.s)
            q0, q1 = round(x0 * c.s), round(x1 * c.s)
            inside = c.img[r0:r1, q0:q1].copy()
            c.img[:] = before
            c.img[r0:r1, q0:q1] = inside
            c.circle((cx, 44.0), 15.0, pal["face"])
            _flames(c, (cx - 12, 30.0, cx + 12, 58.0), _PURGATORY_FLAME)
        else:
            for i in range(9):
                y = 20.0 + i * 5.5
                c.line((10.0, y), (CARD_MM[0] - 10.0, y + 8.0), pal["accent"], 0.6)
            c.circle((cx, 44.0), 16.0, pal["face"])
            c.circle((cx, 44.0), 16.0, ink, 1.0)
            _flames(c, (cx - 11, 31.0, cx + 11, 57.0), ink)


def _name_text(card: Card) -> str:
    if card.kind is Kind.SOULS:
        return f"{card.souls} SOULS"
    return card.name.replace("-", " ").upper()


def rounded_mask(w: int, h: int, r: int) -> np.ndarray:
    """A ``w`` x ``h`` px rectangle with corners rounded to radius ``r`` px, as a
    uint8 mask (255 inside, anti-aliased at the corners)."""
    mask = np.zeros((h, w), np.uint8)
    cv2.rectangle(mask, (r, 0), (w - 1 - r, h - 1), 255, -1)
    cv2.rectangle(mask, (0, r), (w - 1, h - 1 - r), 255, -1)
    for x, y in ((r, r), (w - 1 - r, r), (r, h - 1 - r), (w - 1 - r, h - 1 - r)):
        cv2.circle(mask, (x, y), r, 255, -1, cv2.LINE_AA)
    return mask


def round_corners(img: np.ndarray, r: int, outside: Colour) -> np.ndarray:
    """``img`` with its corners rounded to radius ``r`` px, ``outside`` beyond them."""
    h, w = img.shape[:2]
    alpha = rounded_mask(w, h, r).astype(np.float32)[..., None] / 255.0
    out = img.astype(np.float32) * alpha + np.float32(outside) * (1 - alpha)
    return out.round().astype(np.uint8)


def _round_corners(img: np.ndarray, px_per_mm: float) -> np.ndarray:
    return round_corners(img, max(1, round(CORNER_RADIUS_MM * px_per_mm)), _OUTSIDE)


def _draw_face(c: Canvas, card: Card, style: int) -> None:
    pal = _PALETTE[style][card.cult.value]
    _panel_base(c, card, style, pal)
    _centre_symbol(c, card, style, pal)
    corners = [(_FRAME_MM + 0.8, _FRAME_MM + 1.0), (CARD_MM[0] - _FRAME_MM - 9.8, _FRAME_MM + 1.0)]
    if style == 1:
        corners = [(3.0, 8.0)]
    font = _FONT[style]
    name = _name_text(card)

    def top_half(layer: Canvas, p: dict[str, Colour]) -> None:
        for corner in corners:
            _corner_index(layer, card, style, p, corner)
        if style == 0:
            layer.text(name, (CARD_MM[0] / 2, 9.0), 3.4, p["ink"], font, 0.14)
        else:
            layer.text(name, (CARD_MM[0] / 2, 4.75), 3.4, p["face"], font, 0.12)

    _both_ways(c, top_half, pal)


def _both_ways(c: Canvas, draw: Callable[[Canvas, dict[str, Colour]], None],
               pal: dict[str, Colour]) -> None:
    """Draw ``draw`` upright and turned by 180 degrees, so the card reads both ways up."""
    layer = Canvas(c.s, (0, 0, 0))
    draw(layer, pal)
    mask = Canvas(c.s, (0, 0, 0))
    draw(mask, _WHITE_PALETTE)
    a = mask.img[..., 0].astype(np.float32) * np.float32(1 / 255)
    img = c.img
    for colour, alpha in ((layer.img, a), (layer.img[::-1, ::-1], a[::-1, ::-1])):
        alpha = np.ascontiguousarray(alpha)
        img = cv2.blendLinear(np.ascontiguousarray(colour), img, alpha, 1.0 - alpha)
    c.img = img


def _draw_back(c: Canvas, cult: Cult, style: int) -> None:
    pal = _PALETTE[style][cult.value]
    w, h = CARD_MM
    c.rect(0, 0, w, h, pal["back"])
    cx, cy = w / 2, h / 2
    if style == 0:
        if cult is Cult.SUN:
            for i in range(24):  # rays from the centre, point-symmetric
                a = 2 * math.pi * i / 24
                r = 60.0
                c.poly([(cx, cy), (cx + r * math.cos(a + 0.06), cy + r * math.sin(a + 0.06)),
                        (cx + r * math.cos(a - 0.06), cy + r * math.sin(a - 0.06))],
                       pal["back_ink"])
            c.circle((cx, cy), 13.0, pal["back"])
            _sun_emblem(c, (cx, cy), 11.0, pal["back_ink"])
        else:
            for k, (px, py) in enumerate([(15, 20), (48, 20), (15, 68), (48, 68), (31.5, 12),
                                          (31.5, 76), (10, 44), (53, 44)]):
                c.circle((px, py), 1.2 if k % 2 else 1.8, pal["back_ink"])
            c.circle((cx, cy), 17.0, pal["back_ink"], 1.0)
            _moon_emblem(c, (cx - 2.0, cy), 12.0, pal["back_ink"])
        # The frame band, clean over the pattern, with the cult's teeth or scallops.
        half = _FRAME_MM / 2
        c.polyline([(half, half), (w - half, half), (w - half, h - half), (half, h - half)],
                   pal["back"], _FRAME_MM + 0.1)
        _frame_edge(c, cult, pal["back_ink"])
    else:
        step = 7.0
        for i in range(-12, 14):
            c.line((i * step, 0), (i * step + 80, h), pal["back_ink"], 0.5)
            c.line((w - i * step, 0), (w - i * step - 80, h), pal["back_ink"], 0.5)
        inset = [(1.6, 1.6), (w - 1.6, 1.6), (w - 1.6, h - 1.6), (1.6, h - 1.6)]
        c.polyline(inset, pal["back"], 3.4)
        c.polyline([(3.8, 3.8), (w - 3.8, 3.8), (w - 3.8, h - 3.8), (3.8, h - 3.8)],
                   pal["back_ink"], 1.4)
        c.circle((cx, cy), 12.0, pal["back"])
        c.circle((cx, cy), 12.0, pal["back_ink"], 0.8)
        _cult_emblem(c, cult, (cx, cy), 8.0, pal["back_ink"])


def _draw_twilight(c: Canvas, style: int) -> None:
    """Moon triangles at the top and bottom edges, sun triangles at the left and right."""
    w, h = CARD_MM
    cx, cy = w / 2, h / 2
    sun, moon = _PALETTE[style]["sun"], _PALETTE[style]["moon"]
    sun_fill = sun["frame"] if style == 0 else sun["back"]
    moon_fill = moon["face"] if style == 0 else moon["back"]
    c.rect(0, 0, w, h, (235, 235, 235))
    b = 2.5
    c.poly([(b, b), (w - b, b), (cx, cy)], moon_fill)
    c.poly([(b, h - b), (w - b, h - b), (cx, cy)], moon_fill)
    c.poly([(b, b + 1), (b, h - b - 1), (cx, cy)], sun_fill)
    c.poly([(w - b, b + 1), (w - b, h - b - 1), (cx, cy)], sun_fill)
    light = (245, 245, 245)
    _moon_emblem(c, (cx - 1.5, b + 10.0), 6.5, moon["back_ink"])
    _moon_emblem(c, (cx - 1.5, h - b - 10.0), 6.5, moon["back_ink"])
    _sun_emblem(c, (b + 8.0, cy), 6.0, light)
    _sun_emblem(c, (w - b - 8.0, cy), 6.0, light)
    c.circle((cx, cy), 9.0, light)
    c.circle((cx, cy), 9.0, (60, 60, 60), 0.6)
    _sun_emblem(c, (cx, cy - 3.5), 3.6, sun_fill, rays=8)
    _moon_emblem(c, (cx - 0.8, cy + 3.5), 3.2, moon_fill)
    font = _FONT[style]

    def label(layer: Canvas, p: dict[str, Colour]) -> None:
        layer.text("TWILIGHT", (cx, b + 21.0), 3.0, p["back_ink"], font)

    _both_ways(c, label, moon)


def _render_uncached(card_id: str, style: int, px_per_mm: float,
                     rounded: bool = True) -> np.ndarray:
    scale = max(1.0, math.ceil(_SUPERSAMPLE_MIN_PX_PER_MM / px_per_mm))
    s = px_per_mm * scale
    if card_id == TWILIGHT_ID:
        c = Canvas(s, (235, 235, 235))
        _draw_twilight(c, style)
    elif card_id in BACK_IDS:
        cult = Cult.parse(card_id.split("-")[0])
        c = Canvas(s, _PALETTE[style][cult.value]["back"])
        _draw_back(c, cult, style)
    else:
        card = Card.parse(card_id)
        c = Canvas(s, _PALETTE[style][card.cult.value]["frame"])
        _draw_face(c, card, style)
    img = _round_corners(c.img, s) if rounded else c.img
    if scale > 1:
        w, h = CARD_MM
        img = cv2.resize(img, (round(w * px_per_mm), round(h * px_per_mm)),
                         interpolation=cv2.INTER_AREA)
    return img


def forget_renderings() -> None:
    """Let go of the faces drawn so far (tens of MB at profile resolution); they are
    drawn again when asked for."""
    _render_cached.cache_clear()


@functools.lru_cache(maxsize=512)
def _render_cached(card_id: str, style: int, px_per_mm: float, rounded: bool = True
                   ) -> np.ndarray:
    if px_per_mm < _SUPERSAMPLE_MIN_PX_PER_MM:
        # Shrink the one fine drawing: each further scale costs a resize, not a redraw.
        fine = _render_cached(card_id, style, _SUPERSAMPLE_MIN_PX_PER_MM, rounded)
        w, h = CARD_MM
        img = cv2.resize(fine, (round(w * px_per_mm), round(h * px_per_mm)),
                         interpolation=cv2.INTER_AREA)
    else:
        img = _render_uncached(card_id, style, px_per_mm, rounded)
    img.setflags(write=False)
    return img


def _check(card_id: str, style: int, px_per_mm: float) -> None:
    if style not in STYLES:
        raise ValueError(f"unknown art style {style!r} (styles: {STYLES})")
    if card_id not in ALL_IDS:
        raise ValueError(f"unknown card id {card_id!r} (C1)")
    if not px_per_mm > 0:
        raise ValueError(f"px_per_mm must be positive, not {px_per_mm!r}")


def render_print(card_id: str, style: int = 0, px_per_mm: float = 300 / 25.4) -> np.ndarray:
    """Like :func:`render_card` but with square corners, for print sheets: a card cut
    along straight lines then shows its frame colour right into the corners."""
    _check(card_id, style, px_per_mm)
    return _render_cached(card_id, style, float(px_per_mm), False)


def render_card(card_id: str, style: int = 0, px_per_mm: float = 4.0) -> np.ndarray:
    """The face of ``card_id`` (a C1 card id, ``"twilight"``, ``"sun-back"`` or
    ``"moon-back"``): BGR uint8, upright, the full card incl. its border, of size
    ``CARD_MM * px_per_mm``. The Twilight card has its moon sides at the top and bottom.
    Cached; the returned array is read-only (copy it to draw on it).

    Raises ``ValueError`` for an unknown id or style.
    """
    _check(card_id, style, px_per_mm)
    return _render_cached(card_id, style, float(px_per_mm))
