"""A table simulator: what a camera above a Twilight table sees, with ground truth.

:func:`render_scene` draws one still scene from a seed: a wood or cloth table,
the Twilight card in a random pose, cards at some or all of its sides (older
cards under them as when a purgatory trick lies), sometimes a hand and arm over
the table, seen through a camera tilted up to about 12 degrees, with uneven
light, soft shadows, a glare spot now and then, sensor noise, slight defocus
and JPEG artefacts. Its :class:`Scene` carries the truth in the C6 form and the
card outlines in image coordinates.

The building blocks are public for :mod:`vision.sim.movie`: a :class:`Table` holds
what stays fixed for a scene or a whole movie (camera pose, table texture, light,
noise) and renders lists of :class:`Placed` cards and an :class:`Arm`.

Coordinates: the table plane is in millimetres, x to the right and y down the
image (towards the south seat), origin at the image centre. Angles are degrees,
positive clockwise as seen in the image. Seats' directions on the table follow
C1: north is up the image, east right.
"""

from __future__ import annotations

import functools
import math
import random
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import cv2
import numpy as np

from companion.core.cards import CARD_IDS, CARDS, SEATS, Card, Cult, Seat
from vision.deck_art import ALL_IDS, CARD_MM, STYLES, render_card, rounded_mask
from vision.sim.decks import sim_deck

#: Default image size (width, height).
DEFAULT_SIZE = (1280, 720)
#: Table millimetres seen across the image height with no zoom jitter.
VIEW_HEIGHT_MM = 400.0
#: Horizontal field of view of the simulated camera, degrees.
FOV_DEG = 62.0
#: Largest camera tilt, degrees.
MAX_TILT_DEG = 12.0
#: Largest random turn of a side card from its seat's direction, degrees.
SIDE_JITTER_DEG = 20.0
#: Largest random turn of the Twilight card away from square to the image, degrees.
#: Kept clear of 45 so that which side faces north is never ambiguous (C1).
TWILIGHT_JITTER_DEG = 30.0
#: Gap between the Twilight card and a side card, mm.
SIDE_GAP_MM = (2.0, 14.0)
#: Largest offset of a side card along its side of the Twilight card, mm.
SIDE_OFFSET_MM = 12.0
#: Chance that a side card lies upside down (turned 180 degrees from its seat).
UPSIDE_DOWN_P = 0.3
#: A card counts as occluded when this fraction of it is under the arm.
OCCLUDED_FRACTION = 0.02
#: Low-resolution factor for light, shadow and occlusion maps.
_LOWRES = 4
#: Passes (width factor, brightness) that shade the arm from its rims to its middle.
ARM_SHADING = ((1.0, 0.7), (0.88, 0.78), (0.74, 0.86), (0.6, 0.93), (0.45, 0.99), (0.28, 1.04))
#: uint8 light gain meaning 1.0 (gains up to 255/128 brighten).
_LIGHT_ONE = 128.0
#: Noise buffer margin (px): a random window of the buffer is used per frame.
_NOISE_PAD = 64

Quad = np.ndarray  # 4x2 float32, image px
SEAT_DIRECTION = {Seat.NORTH: (0.0, -1.0), Seat.EAST: (1.0, 0.0), Seat.SOUTH: (0.0, 1.0),
             Seat.WEST: (-1.0, 0.0)}
#: Turn (degrees) of a card lying upright for the player at that seat (its foot towards him).
SEAT_CARD_ANGLE = {Seat.SOUTH: 0.0, Seat.WEST: 90.0, Seat.NORTH: 180.0, Seat.EAST: 270.0}


# -- poses ------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Placed:
    """A card lying (or held ``lift_mm`` above the table): its id, centre in table mm
    and turn in degrees (0 = upright in the image, positive clockwise)."""

    card_id: str
    x: float
    y: float
    angle: float
    lift_mm: float = 0.0
    #: The card's (width, height) in mm, upright (its deck's size for that card).
    size_mm: tuple[float, float] = (float(CARD_MM[0]), float(CARD_MM[1]))

    def corners_mm(self) -> np.ndarray:
        """The card's own corners (its top-left, top-right, bottom-right, bottom-left)
        on the table, 4x2 mm."""
        w, h = self.size_mm
        local = np.array([(-w / 2, -h / 2), (w / 2, -h / 2), (w / 2, h / 2), (-w / 2, h / 2)])
        return local @ _rot(self.angle).T + (self.x, self.y)

    def moved(self, x: float, y: float, angle: float | None = None,
              lift_mm: float | None = None) -> Placed:
        return Placed(self.card_id, x, y, self.angle if angle is None else angle,
                      self.lift_mm if lift_mm is None else lift_mm, self.size_mm)


@dataclass(frozen=True, slots=True)
class Arm:
    """A forearm and hand reaching in from ``entry`` (a point off the table's edge
    of the image, mm) with the palm centred at ``hand`` (mm)."""

    entry: tuple[float, float]
    hand: tuple[float, float]
    skin: tuple[int, int, int] = (120, 150, 200)
    sleeve: tuple[int, int, int] = (90, 60, 40)
    width_mm: float = 75.0


def _rot(deg: float) -> np.ndarray:
    a = math.radians(deg)
    c, s = math.cos(a), math.sin(a)
    return np.array([[c, -s], [s, c]])


def seat_of_direction(dx: float, dy: float) -> Seat:
    """The seat whose direction (C1: north up the image) is nearest to (dx, dy)."""
    return max(SEATS, key=lambda s: SEAT_DIRECTION[s][0] * dx + SEAT_DIRECTION[s][1] * dy)


def twilight_sides(angle: float) -> dict[Seat, int]:
    """Which side of the Twilight card (0 top, 1 right, 2 bottom, 3 left of its upright
    image; 0 and 2 are moon sides) faces each seat when it lies turned by ``angle``."""
    k = round(angle / 90.0) % 4
    return {SEATS[(i + k) % 4]: i for i in range(4)}


def twilight_moon_seats(angle: float) -> list[str]:
    """The C6 ``moon_seats`` of a Twilight card turned by ``angle``, in C1 seat order."""
    sides = twilight_sides(angle)
    return [s.value for s in SEATS if sides[s] in (0, 2)]


# -- cached, per size resources ---------------------------------------------------------------
def _lowfreq(rng: np.random.Generator, h: int, w: int, cells: int) -> np.ndarray:
    """Smooth noise in [-1, 1] of size h x w with about ``cells`` blobs across."""
    gh, gw = max(2, cells * h // max(w, 1) + 2), cells + 2
    grid = rng.uniform(-1, 1, (gh, gw)).astype(np.float32)
    return cv2.resize(grid, (w, h), interpolation=cv2.INTER_CUBIC)


#: Table textures: (kind, base BGR colour).
TEXTURES: tuple[tuple[str, tuple[int, int, int]], ...] = (
    ("wood", (70, 120, 170)),   # oak
    ("wood", (40, 65, 100)),    # walnut
    ("wood", (110, 150, 185)),  # pale pine
    ("felt", (60, 110, 40)),    # green baize
    ("felt", (100, 70, 40)),    # blue felt
    ("cloth", (170, 185, 195)),  # linen
    ("cloth", (95, 95, 100)),   # grey cloth
)


@functools.lru_cache(maxsize=16)
def table_texture(index: int, size: tuple[int, int]) -> np.ndarray:
    """Table texture ``index`` (see :data:`TEXTURES`) at ``size``; cached, read-only."""
    kind, base = TEXTURES[index % len(TEXTURES)]
    w, h = size
    rng = np.random.default_rng(1000 + index)
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    scale = h / 720.0
    if kind == "wood":
        warp = _lowfreq(rng, h, w, 6) * 25 * scale + _lowfreq(rng, h, w, 30) * 3 * scale
        plank = 130.0 * scale
        fine = rng.normal(0, 1, (h, w)).astype(np.float32)
        fine = cv2.GaussianBlur(fine, (0, 0), sigmaX=6 * scale, sigmaY=0.6)
        fibres = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0),
                                  sigmaX=25 * scale, sigmaY=0.7)
        fibres /= fibres.std() + 1e-6
        grain = np.sin((yy + warp) * (2 * np.pi / (11.0 * scale)) + fibres) * 0.35 + fibres * 0.5
        ring = np.sin((yy + warp * 2.5) * (2 * np.pi / (60.0 * scale))) * 0.5
        lum = 1.0 + 0.07 * grain + 0.05 * ring + 0.08 * _lowfreq(rng, h, w, 4) + 0.02 * fine
        plank_shift = (np.floor(yy / plank) * 0.37) % 1.0
        lum *= 0.93 + 0.14 * plank_shift.astype(np.float32)
        seam = (np.abs((yy % plank) - plank / 2) > plank / 2 - 1.2 * scale)
        lum[seam] *= 0.55
    elif kind == "felt":
        fine = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 0.8)
        lum = 1.0 + 0.05 * fine + 0.06 * _lowfreq(rng, h, w, 8)
    else:
        weave = (np.sin(xx * (2 * np.pi / 3.2)) * np.sin(yy * (2 * np.pi / 3.2))).astype(np.float32)
        slub = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 4, 0.5)
        lum = 1.0 + 0.05 * weave + 0.12 * slub + 0.05 * _lowfreq(rng, h, w, 6)
    img = np.clip(lum[..., None] * np.float32(base), 0, 255).astype(np.uint8)
    img.setflags(write=False)
    return img


@functools.lru_cache(maxsize=32)
def _flipped_texture(index: int, size: tuple[int, int], flip: int) -> np.ndarray:
    """Texture ``index`` as is (``flip`` 0) or mirrored (1: both ways, 2: up-down,
    3: left-right), for more variety from the same few textures; cached, read-only."""
    tex = table_texture(index, size)
    if flip == 0:
        return tex
    out = cv2.flip(tex, flip - 2)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=8)
def _noise_buffer(size: tuple[int, int]) -> np.ndarray:
    """Gaussian noise around 128 (sigma 20), a bit larger than ``size``; cached."""
    w, h = size
    rng = np.random.default_rng(7)
    buf = rng.normal(128, 20, (h + _NOISE_PAD, w + _NOISE_PAD, 3))
    out = np.clip(buf, 0, 255).astype(np.uint8)
    out.setflags(write=False)
    return out


@functools.lru_cache(maxsize=16)
def _soft_spot(radius: int, spread: float) -> np.ndarray:
    """A soft white spot (uint8, 3 channels) of the given radius: a Gaussian of sigma
    ``radius / spread``."""
    n = 2 * radius + 1
    g = cv2.getGaussianKernel(n, radius / spread)
    spot = (g @ g.T) / (g.max() ** 2) * 255
    out = np.repeat(spot[..., None], 3, axis=2).astype(np.uint8)
    out.setflags(write=False)
    return out


def _add_spot(img: np.ndarray, spot: np.ndarray, centre: tuple[float, float], radius: int,
              strength: float) -> None:
    """Add ``spot`` (of ``radius``) times ``strength`` to ``img`` at ``centre``, in
    place, saturating, clipped to the image."""
    h, w = img.shape[:2]
    x0, y0 = int(centre[0]) - radius, int(centre[1]) - radius
    sx0, sy0 = max(0, -x0), max(0, -y0)
    x0c, y0c = max(0, x0), max(0, y0)
    x1c, y1c = min(w, x0 + spot.shape[1]), min(h, y0 + spot.shape[0])
    if x1c > x0c and y1c > y0c:
        roi = img[y0c:y1c, x0c:x1c]
        part = spot[sy0:sy0 + (y1c - y0c), sx0:sx0 + (x1c - x0c)]
        cv2.addWeighted(roi, 1.0, part, strength, 0, dst=roi)


def add_glare(img: np.ndarray, centre: tuple[float, float], radius: int,
              strength: float) -> None:
    """A lamp's reflection: the soft white spot of *radius* px added to *img* (BGR
    uint8, in place, saturating) at *centre*, times *strength* (0..1)."""
    _add_spot(img, _soft_spot(radius, 2.2), centre, radius, strength)


@functools.lru_cache(maxsize=64)
def _card_alpha(w: int, h: int, r: int) -> np.ndarray:
    """A card's rounded outline (uint8 0..255) of ``w`` x ``h`` px with corner radius
    ``r`` px, with one transparent pixel round it so a warp fades the outline instead
    of cutting it."""
    m = rounded_mask(w, h, max(1, min(r, min(w, h) // 3)))
    return cv2.copyMakeBorder(m, 1, 1, 1, 1, cv2.BORDER_CONSTANT, value=0)


@functools.lru_cache(maxsize=512)
def card_bgra(card_id: str, deck: int | str, px_per_mm: float) -> np.ndarray:
    """Card art of ``deck`` (a :func:`vision.sim.decks.sim_deck` name; the art styles'
    ints too) with its outline as alpha (B, G, R, A), padded by one pixel (colour
    repeated, alpha 0), so one warp carries both; cached, read-only."""
    d = sim_deck(deck)
    if d.style is not None:
        art = render_card(card_id, d.style, px_per_mm)
        w, h = round(CARD_MM[0] * px_per_mm), round(CARD_MM[1] * px_per_mm)
        alpha = _card_alpha(w, h, max(1, round(3.0 * px_per_mm)))
    else:
        art = d.art(card_id, px_per_mm)
        alpha = _card_alpha(art.shape[1], art.shape[0], round(d.corner_mm * px_per_mm))
    art = cv2.copyMakeBorder(art, 1, 1, 1, 1, cv2.BORDER_REPLICATE)
    out = np.dstack([art, alpha])
    out.setflags(write=False)
    return out


# -- the camera and the table -----------------------------------------------------------------
@dataclass
class Camera:
    """Table mm -> image px: a scale and a tilted camera (pure rotation homography)."""

    size: tuple[int, int]
    px_per_mm: float
    tilt_deg: float = 0.0
    tilt_axis_deg: float = 0.0
    centre_mm: tuple[float, float] = (0.0, 0.0)
    fov_deg: float = FOV_DEG
    H: np.ndarray = field(init=False)

    def __post_init__(self) -> None:
        w, h = self.size
        f = (w / 2) / math.tan(math.radians(self.fov_deg / 2))
        K = np.array([[f, 0, w / 2], [0, f, h / 2], [0, 0, 1]])
        ax = math.radians(self.tilt_axis_deg)
        axis = np.array([math.cos(ax), math.sin(ax), 0.0])
        R, _ = cv2.Rodrigues(axis * math.radians(self.tilt_deg))
        Ht = K @ R @ np.linalg.inv(K)
        # Keep the table point under the image centre at the image centre.
        c = Ht @ np.array([w / 2, h / 2, 1.0])
        T = np.array([[1, 0, w / 2 - c[0] / c[2]], [0, 1, h / 2 - c[1] / c[2]], [0, 0, 1]])
        s = self.px_per_mm
        S = np.array([[s, 0, w / 2 - s * self.centre_mm[0]], [0, s, h / 2 - s * self.centre_mm[1]],
                      [0, 0, 1]])
        self.H = T @ Ht @ S

    def project(self, pts_mm: np.ndarray) -> np.ndarray:
        """Table mm (N x 2) -> image px (N x 2, float32)."""
        p = np.asarray(pts_mm, np.float64).reshape(-1, 1, 2)
        return cv2.perspectiveTransform(p, self.H).reshape(-1, 2).astype(np.float32)

    def scale_at(self, x: float, y: float) -> float:
        """Image px per table mm near (x, y)."""
        a, b = self.project(np.array([(x, y), (x + 10.0, y)]))
        return float(np.hypot(*(b - a)) / 10.0)


@dataclass
class Effects:
    """The camera's and room's look, fixed for a scene or a movie."""

    light_lowres: np.ndarray  # float32 (h/LOWRES, w/LOWRES, 3): illumination x colour cast
    light_dir: tuple[float, float] = (0.6, 0.8)  # where shadows fall, unit vector in the image
    shadow_strength: float = 0.35
    blur_sigma: float = 0.8
    noise_amp: float = 0.15
    jpeg_quality: int | None = 80
    glare: tuple[float, float, int, float] | None = None  # x, y, radius px, strength 0..1
    sharpen: bool = False

    @classmethod
    def random(cls, rng: random.Random, size: tuple[int, int], enabled: bool = True,
               glare: bool | None = None, jpeg_quality: int | None = -1) -> Effects:
        w, h = size
        lw, lh = max(2, w // _LOWRES), max(2, h // _LOWRES)
        if not enabled:
            return cls(np.ones((lh, lw, 3), np.float32), shadow_strength=0.0, blur_sigma=0.0,
                       noise_amp=0.0, jpeg_quality=None)
        nrng = np.random.default_rng(rng.getrandbits(32))
        cw, ch = max(2, lw // 4), max(2, lh // 4)  # light varies slowly: compute it coarser
        yy, xx = np.mgrid[0:ch, 0:cw].astype(np.float32)
        xx = xx / cw - 0.5
        yy = yy / ch - 0.5
        a = rng.uniform(0, 2 * math.pi)
        grad = (xx * math.cos(a) + yy * math.sin(a)) * rng.uniform(0.1, 0.45)
        lx, ly = rng.uniform(-0.6, 0.6), rng.uniform(-0.6, 0.6)
        lamp = np.exp(-((xx - lx) ** 2 + (yy - ly) ** 2) / (2 * rng.uniform(0.15, 0.5) ** 2))
        vignette = 1.0 - rng.uniform(0.1, 0.35) * (xx ** 2 + yy ** 2) * 2
        mottle = cv2.resize(nrng.uniform(-1, 1, (4, 6)).astype(np.float32), (cw, ch),
                            interpolation=cv2.INTER_CUBIC) * 0.04
        lum = (rng.uniform(0.75, 1.05) + grad + lamp * rng.uniform(0.05, 0.3)) * vignette + mottle
        # Colour cast: warm lamp to cool daylight (B, G, R gains).
        warmth = rng.uniform(-1, 1)
        cast = np.array([1 - 0.12 * warmth, 1 - 0.03 * abs(warmth), 1 + 0.1 * warmth],
                        np.float32)
        light = cv2.resize((lum[..., None] * cast).astype(np.float32), (lw, lh),
                           interpolation=cv2.INTER_LINEAR)
        d = rng.uniform(0, 2 * math.pi)
        g = None
        if glare or (glare is None and rng.random() < 0.25):
            g = (rng.uniform(0.2, 0.8) * w, rng.uniform(0.2, 0.8) * h,
                 int(rng.uniform(0.03, 0.08) * h), rng.uniform(0.35, 0.8))
        q = rng.choice([None, 60, 70, 80, 90]) if jpeg_quality == -1 else jpeg_quality
        return cls(light, (math.cos(d), math.sin(d)), rng.uniform(0.2, 0.45),
                   rng.uniform(0.5, 1.3), rng.uniform(0.08, 0.25), q, g,
                   rng.random() < 0.3)


class Table:
    """What stays fixed while cards come and go: camera, table texture and effects.

    ``render(cards, arm)`` draws the cards (first one lowest) and the arm on top.
    For movies, :meth:`board` pre-composes the cards that do not move, and
    :meth:`render_on` adds the moving ones per frame.
    """

    def __init__(self, camera: Camera, texture: int, effects: Effects, style: int = 0,
                 flip: int = 0, deck: int | str | None = None) -> None:
        if deck is None and style not in STYLES:
            raise ValueError(f"unknown art style {style!r} (styles: {STYLES})")
        self.camera = camera
        self.size = camera.size
        self.style = style
        #: The deck drawn (a :func:`vision.sim.decks.sim_deck` name).
        self.deck: int | str = style if deck is None else deck
        self.sim_deck = sim_deck(self.deck)
        self.effects = effects
        self.background = _flipped_texture(texture, self.size, flip)
        # Card art slightly finer than it appears, rounded so the cache is reused.
        self.art_px_per_mm = max(1.0, math.ceil(camera.scale_at(0, 0) * 1.25 * 2) / 2)
        w, h = self.size
        self.lowres_size = (max(2, w // _LOWRES), max(2, h // _LOWRES))
        sx = self.lowres_size[0] / w
        sy = self.lowres_size[1] / h
        self.to_lowres = np.diag([sx, sy, 1.0])

    # -- geometry ---------------------------------------------------------------------------
    def quad(self, card: Placed) -> Quad:
        """The card's own corners (top-left, top-right, bottom-right, bottom-left of its
        upright art) in image px."""
        return self.camera.project(card.corners_mm())

    def placed(self, card_id: str, x: float, y: float, angle: float,
               lift_mm: float = 0.0) -> Placed:
        """A card of this table's deck (its size) at (x, y) mm turned by ``angle``."""
        return Placed(card_id, x, y, angle, lift_mm, self.sim_deck.size_mm(card_id))

    def _card_homography(self, card: Placed) -> np.ndarray:
        M = np.eye(3)
        M[:2, :2] = _rot(card.angle)
        M[:2, 2] = (card.x, card.y)
        H = self.camera.H
        if card.lift_mm:
            # A lifted card is nearer the camera: a little larger about the image centre.
            w, h = self.size
            k = 1.0 + card.lift_mm / 700.0
            H = np.array([[k, 0, (1 - k) * w / 2], [0, k, (1 - k) * h / 2], [0, 0, 1]]) @ H
        w_mm, h_mm = card.size_mm
        s = 1.0 / self.art_px_per_mm
        art_to_local = np.array([[s, 0, -w_mm / 2], [0, s, -h_mm / 2], [0, 0, 1]])
        return H @ M @ art_to_local

    # -- drawing ----------------------------------------------------------------------------
    def new_layers(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """A fresh (image, shadow map, arm map): the table, no shadow, no arm."""
        lw, lh = self.lowres_size
        return (self.background.copy(), np.zeros((lh, lw), np.float32),
                np.zeros((lh, lw), np.float32))

    def draw_card(self, img: np.ndarray, shadow: np.ndarray, card: Placed,
                  art: np.ndarray | None = None) -> None:
        """Warp ``card``'s art (or *art*, as :func:`card_bgra` gives it) into ``img``
        (only its bounding box is touched) and add its shadow to the low-resolution
        ``shadow`` map."""
        if art is None:
            art = card_bgra(card.card_id, self.deck, self.art_px_per_mm)
        # Art px (with its 1 px pad) -> image px.
        H = self._card_homography(card) @ np.array([[1, 0, -1], [0, 1, -1], [0, 0, 1]],
                                                   np.float64)
        ah, aw = art.shape[:2]
        quad = cv2.perspectiveTransform(
            np.array([[(1, 1)], [(aw - 1, 1)], [(aw - 1, ah - 1)], [(1, ah - 1)]], np.float64),
            H).reshape(4, 2)
        h, w = img.shape[:2]
        x0 = max(0, int(math.floor(quad[:, 0].min())) - 1)
        y0 = max(0, int(math.floor(quad[:, 1].min())) - 1)
        x1 = min(w, int(math.ceil(quad[:, 0].max())) + 2)
        y1 = min(h, int(math.ceil(quad[:, 1].max())) + 2)
        if x1 > x0 and y1 > y0:
            T = np.array([[1, 0, -x0], [0, 1, -y0], [0, 0, 1]], np.float64)
            roi = img[y0:y1, x0:x1]
            warped = cv2.warpPerspective(art, T @ H, (x1 - x0, y1 - y0), flags=cv2.INTER_LINEAR,
                                         borderMode=cv2.BORDER_CONSTANT, borderValue=0)
            alpha = warped[..., 3].astype(np.float32) * np.float32(1 / 255)
            roi[:] = cv2.blendLinear(np.ascontiguousarray(warped[..., :3]), roi, alpha,
                                     1.0 - alpha)
        self._add_shadow(shadow, quad, card.lift_mm)

    def _add_shadow(self, shadow: np.ndarray, quad: np.ndarray, lift_mm: float) -> None:
        e = self.effects
        if e.shadow_strength <= 0:
            return
        s = self.camera.scale_at(0, 0)
        off = (1.2 + lift_mm * 0.5) * s
        shifted = quad + (e.light_dir[0] * off, e.light_dir[1] * off)
        lowres = cv2.perspectiveTransform(shifted.reshape(-1, 1, 2), self.to_lowres)
        pts = (lowres.reshape(-1, 2) * 16).round().astype(np.int32)
        cv2.fillConvexPoly(shadow, pts, 1.0, cv2.LINE_AA, shift=4)

    def _arm_shapes(self, arm: Arm, k: float = 1.0) -> tuple[list[np.ndarray], list[np.ndarray],
                                              list[tuple[np.ndarray, np.ndarray, float]]]:
        """The arm in table mm: sleeve polygon(s), skin polygons, finger capsules; ``k``
        scales every width (smaller ``k`` draws the lit middle of a rounded limb)."""
        ex, ey = arm.entry
        hx, hy = arm.hand
        u = np.array([hx - ex, hy - ey])
        length = float(np.hypot(*u))
        if length < 1e-6:  # the hand back at its entry point: any direction will do
            u, length = np.array([0.0, 1.0]), 1.0
        u /= length
        p = np.array([-u[1], u[0]])
        wdt = arm.width_mm * k
        e = np.array(arm.entry)
        hnd = np.array(arm.hand)
        wrist = hnd - u * 45
        forearm = np.array([e + p * wdt * 0.6, wrist + p * wdt * 0.38, wrist - p * wdt * 0.38,
                            e - p * wdt * 0.6])
        sleeve_end = e + u * min(length * 0.55, 260.0)
        sleeve = np.array([e + p * wdt * 0.72, sleeve_end + p * wdt * 0.58,
                           sleeve_end - p * wdt * 0.58, e - p * wdt * 0.72])
        t = np.linspace(0, 2 * np.pi, 24, endpoint=False)
        palm = (hnd + np.outer(np.cos(t), u) * 48 * (0.5 + 0.5 * k)
                + np.outer(np.sin(t), p) * 40 * k)
        fingers = []
        for i, (side, reach) in enumerate(((-0.27, 62.0), (-0.09, 72.0), (0.09, 70.0),
                                           (0.27, 58.0))):
            base = hnd + u * 30 + p * side * 2 * 40
            dirn = u + p * side * 0.35
            dirn /= np.hypot(*dirn)
            fingers.append((base, base + dirn * reach, (17.0 - i * 0.5) * k))
        thumb_base = hnd + p * 30 - u * 10
        tdir = u * 0.6 + p * 0.8
        fingers.append((thumb_base, thumb_base + tdir * 48, 19.0 * k))
        return [sleeve], [forearm, palm], fingers

    def draw_arm(self, img: np.ndarray | None, shadow: np.ndarray | None,
                 arm_map: np.ndarray | None, arm: Arm) -> None:
        """Draw ``arm`` into ``img``; add its shadow and its footprint to the low-res maps
        (``img`` and ``shadow`` may be None to get the footprint alone; ``img`` and
        ``arm_map`` None to get the shadow alone: an arm above the picture)."""
        cam = self.camera
        # The arm is some 15 cm above the table: its shadow falls well aside, blurred later.
        s = cam.scale_at(0, 0)
        off = np.array(self.effects.light_dir) * 45 * s

        def draw(target: np.ndarray, Hx: np.ndarray, colour_skin: Any, colour_sleeve: Any,
                 shift: np.ndarray, k: float = 1.0) -> None:
            sleeves, skins, fingers = self._arm_shapes(arm, k)

            def px(pts: np.ndarray) -> np.ndarray:
                q = cam.project(pts) + shift
                q = cv2.perspectiveTransform(q.reshape(-1, 1, 2).astype(np.float64), Hx)
                return (q.reshape(-1, 2) * 16).round().astype(np.int32)

            scale = abs(Hx[0, 0]) * s
            for poly in skins:
                cv2.fillPoly(target, [px(poly)], colour_skin, cv2.LINE_AA, shift=4)
            for a, b, wdt in fingers:
                pa, pb = px(np.array([a, b]))
                cv2.line(target, tuple(int(v) for v in pa), tuple(int(v) for v in pb),
                         colour_skin, max(1, round(wdt * scale)), cv2.LINE_AA, shift=4)
            for poly in sleeves:
                cv2.fillPoly(target, [px(poly)], colour_sleeve, cv2.LINE_AA, shift=4)

        if shadow is not None and self.effects.shadow_strength > 0:
            draw(shadow, self.to_lowres, 1.0, 1.0, off)
        if arm_map is not None:
            draw(arm_map, self.to_lowres, 1.0, 1.0, np.zeros(2))
        if img is None:
            return
        for k, shade in ARM_SHADING:  # darker rims, lit middle: a rounded limb
            draw(img, np.eye(3), tuple(c * shade for c in arm.skin),
                 tuple(c * shade for c in arm.sleeve), np.zeros(2), k)

    def occlusion(self, arm_map: np.ndarray, quad: Quad) -> float:
        """Fraction of the card with image outline ``quad`` that lies under the arm."""
        lw, lh = self.lowres_size
        q = cv2.perspectiveTransform(quad.reshape(-1, 1, 2).astype(np.float64), self.to_lowres)
        pts = q.reshape(-1, 2)
        x0, y0 = np.floor(pts.min(axis=0)).astype(int)
        x1, y1 = np.ceil(pts.max(axis=0)).astype(int) + 1
        x0, y0, x1, y1 = max(x0, 0), max(y0, 0), min(x1, lw), min(y1, lh)
        if x1 <= x0 or y1 <= y0:
            return 0.0
        m = np.zeros((y1 - y0, x1 - x0), np.uint8)
        cv2.fillConvexPoly(m, ((pts - (x0, y0)) * 16).round().astype(np.int32), 1, shift=4)
        area = int(m.sum())
        if area == 0:
            return 0.0
        covered = float((arm_map[y0:y1, x0:x1] > 0.5)[m > 0].sum())
        return covered / area

    def light_gains(self, shadow: np.ndarray, arm_map: np.ndarray) -> np.ndarray:
        """Full-size uint8 light gains (:data:`_LIGHT_ONE` = 1.0): the room's light times
        the soft shadows of the cards and the arm (not on the arm itself)."""
        e = self.effects
        w, h = self.size
        light = e.light_lowres
        if e.shadow_strength > 0:
            sigma = max(1.0, self.camera.scale_at(0, 0) * 2.0 / _LOWRES)
            soft = cv2.GaussianBlur(shadow, (0, 0), sigma)
            soft = np.minimum(soft, 1.0) * (1.0 - np.minimum(arm_map, 1.0))
            light = light * (1.0 - e.shadow_strength * soft)[..., None]
        gains = np.clip(light * _LIGHT_ONE, 0, 255).astype(np.uint8)
        return cv2.resize(gains, (w, h), interpolation=cv2.INTER_LINEAR)

    def finish(self, img: np.ndarray, shadow: np.ndarray, arm_map: np.ndarray,
               rng: random.Random, gains: np.ndarray | None = None) -> np.ndarray:
        """The camera's picture of a drawn image: light, shadows, glare, defocus, noise, JPEG.
        ``gains`` from :meth:`light_gains` may be passed when they are known already."""
        e = self.effects
        w, h = self.size
        if gains is None:
            gains = self.light_gains(shadow, arm_map)
        img = cv2.multiply(img, gains, scale=1.0 / _LIGHT_ONE)
        if e.glare is not None:
            gx, gy, r, strength = e.glare
            add_glare(img, (gx, gy), r, strength)
        if e.blur_sigma > 0:
            k = 3 if e.blur_sigma < 0.8 else 5 if e.blur_sigma <= 1.3 else 0
            img = cv2.GaussianBlur(img, (k, k), e.blur_sigma)
            if e.sharpen:  # phone-like sharpening halo
                soft = cv2.GaussianBlur(img, (7, 7), 2.0)
                img = cv2.addWeighted(img, 1.4, soft, -0.4, 0)
        if e.noise_amp > 0:
            buf = _noise_buffer(self.size)
            ox, oy = rng.randrange(_NOISE_PAD), rng.randrange(_NOISE_PAD)
            img = cv2.addWeighted(img, 1.0, buf[oy:oy + h, ox:ox + w], e.noise_amp,
                                  -128.0 * e.noise_amp)
        if e.jpeg_quality is not None:
            ok, data = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, int(e.jpeg_quality)])
            if ok:
                img = cv2.imdecode(data, cv2.IMREAD_COLOR)
        return img

    def render(self, cards: Iterable[Placed], arm: Arm | None, rng: random.Random
               ) -> tuple[np.ndarray, np.ndarray]:
        """Draw ``cards`` (lowest first) and ``arm``; returns (image, low-res arm map)."""
        img, shadow, arm_map = self.new_layers()
        for card in cards:
            self.draw_card(img, shadow, card)
        if arm is not None:
            self.draw_arm(img, shadow, arm_map, arm)
        return self.finish(img, shadow, arm_map, rng), arm_map


def random_table(rng: random.Random, style: int, size: tuple[int, int], *,
                 tilt_deg: float | None = None, px_per_mm: float | None = None,
                 texture: int | None = None, effects: bool = True, glare: bool | None = None,
                 jpeg_quality: int | None = -1) -> Table:
    """A table with a random camera pose, texture and look (see :func:`render_scene`)."""
    w, h = size
    tilt = rng.uniform(0, MAX_TILT_DEG) if tilt_deg is None else tilt_deg
    axis = rng.uniform(0, 360)
    scale = px_per_mm if px_per_mm is not None else h / VIEW_HEIGHT_MM * rng.uniform(0.85, 1.15)
    cam = Camera(size, scale, tilt, axis)
    tex = rng.randrange(len(TEXTURES)) if texture is None else texture
    fx = Effects.random(rng, size, effects, glare, jpeg_quality)
    return Table(cam, tex, fx, style, flip=rng.randrange(4))


#: Arms start this far beyond the image edge (mm), so the sleeve runs off the picture.
ARM_ENTRY_BEYOND_MM = 160.0
#: Skin tones and sleeve colours (BGR) of simulated players.
SKINS = ((120, 150, 200), (95, 125, 180), (70, 95, 140), (50, 70, 110), (140, 170, 215))
SLEEVES = ((90, 60, 40), (40, 40, 40), (150, 150, 150), (40, 40, 140), (60, 110, 60),
           (200, 200, 210))


def random_look(rng: random.Random) -> tuple[tuple[int, int, int], tuple[int, int, int], float]:
    """A player's skin, sleeve colour and forearm width (mm)."""
    return rng.choice(SKINS), rng.choice(SLEEVES), rng.uniform(65, 85)


def random_arm(rng: random.Random, seat: Seat, target: tuple[float, float],
               table: Table, look: tuple[Any, Any, float] | None = None) -> Arm:
    """An arm reaching from ``seat``'s image edge to ``target`` (table mm), of a
    player with ``look`` (see :func:`random_look`; random if None)."""
    w, h = table.size
    s = table.camera.px_per_mm
    half_w, half_h = w / 2 / s, h / 2 / s
    dx, dy = SEAT_DIRECTION[seat]
    # Enter well beyond the edge so the sleeve runs off the image.
    along = rng.uniform(-0.35, 0.35)
    if dx == 0:
        entry = (target[0] * 0.4 + along * half_w, dy * (half_h + ARM_ENTRY_BEYOND_MM))
    else:
        entry = (dx * (half_w + ARM_ENTRY_BEYOND_MM), target[1] * 0.4 + along * half_h)
    skin, sleeve, width = look if look is not None else random_look(rng)
    return Arm(entry, target, skin, sleeve, width)


def art_scales(size: tuple[int, int]) -> list[float]:
    """The card-art resolutions :func:`random_table` may pick for ``size``."""
    h = size[1]
    scales = set()
    for zoom in np.linspace(0.85, 1.15, 13):
        px = h / VIEW_HEIGHT_MM * zoom
        scales.add(max(1.0, math.ceil(px * 1.25 * 2) / 2))
    return sorted(scales)


def prepare(styles: Iterable[int] = STYLES, size: tuple[int, int] = DEFAULT_SIZE) -> None:
    """Render once what scenes of ``size`` reuse: every card's art at the scales a
    scene may use, and the table textures, so the first scenes are not slower."""
    for style in styles:
        for px in art_scales(size):
            for card_id in ALL_IDS:
                render_card(card_id, style, px)
    for index in range(len(TEXTURES)):
        for flip in range(4):
            _flipped_texture(index, size, flip)
    _noise_buffer(size)


# -- scenes -----------------------------------------------------------------------------------
def quad_error(quad: Quad, truth: Quad) -> float:
    """How far a card's outline *quad* found lies from its *truth* (image px, either
    from any corner, either way round): its corner farthest from the truth's, as a share
    of the truth's diagonal."""
    q, t = np.asarray(quad, np.float64), np.asarray(truth, np.float64)
    off = min(float(np.abs(np.roll(q[::w], s, axis=0) - t).max())
              for s in range(4) for w in (1, -1))
    return off / float(np.linalg.norm(t[0] - t[2]))


@dataclass
class Scene:
    """One rendered still and its truth.

    ``truth`` is in the C6 form. ``twilight_quad`` lists the Twilight card's own
    corners in image px in the order top-left, top-right, bottom-right, bottom-left
    of its upright art, so edges 0-1 and 2-3 are its moon sides. ``side_quads`` the
    same for the uppermost card at each seat (``None`` where none lies),
    ``under_quads`` the older cards beneath it (lowest first). ``occluded`` tells
    whether the arm covers more than :data:`OCCLUDED_FRACTION` of that side's
    uppermost card (``twilight_occluded`` the same for the Twilight card).
    ``homography`` maps table mm (origin at the image centre) to image px;
    ``px_per_mm`` is the image scale at the Twilight card.
    """

    image: np.ndarray
    truth: dict[str, Any]
    twilight_quad: Quad | None
    side_quads: dict[str, Quad | None]
    under_quads: dict[str, list[Quad]]
    occluded: dict[str, bool]
    twilight_occluded: bool
    homography: np.ndarray
    px_per_mm: float
    seed: int
    style: int
    #: The deck drawn (``render_scene(deck=...)``), None for an art style's scene.
    deck: int | str | None = None
    #: The randomised factors drawn for this scene (see :func:`render_scene`).
    factors: dict[str, Any] = field(default_factory=dict)


def side_pose(rng: random.Random, seat: Seat, tw: Placed, *, jitter: float = SIDE_JITTER_DEG,
              upside_down_p: float = UPSIDE_DOWN_P, gap: float | None = None,
              offset: float | None = None) -> tuple[float, float, float]:
    """A random (x, y, angle) for a card at ``seat``'s side of the Twilight card ``tw``."""
    k = round(tw.angle / 90.0)
    base = tw.angle - 90.0 * k  # the Twilight card's small turn away from square
    d = _rot(base) @ np.array(SEAT_DIRECTION[seat])
    t = np.array([-d[1], d[0]])
    side = twilight_sides(tw.angle)[seat]
    half_tw = (tw.size_mm[1] if side in (0, 2) else tw.size_mm[0]) / 2
    phi = rng.uniform(-jitter, jitter)
    upside = rng.random() < upside_down_p
    angle = SEAT_CARD_ANGLE[seat] + base + phi + (180.0 if upside else 0.0)
    a = math.radians(phi)
    half_card = CARD_MM[1] / 2 * abs(math.cos(a)) + CARD_MM[0] / 2 * abs(math.sin(a))
    g = rng.uniform(*SIDE_GAP_MM) if gap is None else gap
    o = rng.uniform(-SIDE_OFFSET_MM, SIDE_OFFSET_MM) if offset is None else offset
    centre = np.array([tw.x, tw.y]) + d * (half_tw + g + half_card) + t * o
    return float(centre[0]), float(centre[1]), angle % 360.0


def _seat_cult(seat: Seat, moon_seats: Sequence[str]) -> Cult:
    return Cult.MOON if seat.value in moon_seats else Cult.SUN


#: Options of :func:`render_scene` without a deck, and of :func:`render_randomised`.
SCENE_OPTIONS = frozenset({
    "twilight", "twilight_deg", "twilight_xy", "sides", "under_cards", "hand", "hand_seat",
    "hand_target", "tilt_deg", "px_per_mm", "texture", "glare", "jpeg_quality", "effects",
    "mirror"})
RANDOMISED_OPTIONS = SCENE_OPTIONS | {"rotation", "card_px", "fov_deg", "light", "blur_sigma",
                                      "arm_shadow"}


def _check_options(options: Mapping[str, Any], known: frozenset[str]) -> None:
    unknown = set(options) - known
    if unknown:
        raise TypeError(f"render_scene: unknown options {sorted(unknown)}")


def _twilight_deg(rng: random.Random, options: Mapping[str, Any]) -> float:
    """The Twilight card's turn: ``options["twilight_deg"]``, or a random multiple of
    90 degrees plus up to :data:`TWILIGHT_JITTER_DEG`."""
    angle = options.get("twilight_deg")
    if angle is None:
        angle = rng.randrange(4) * 90.0 + rng.uniform(-TWILIGHT_JITTER_DEG, TWILIGHT_JITTER_DEG)
    return angle


def _side_ids(rng: random.Random, seat: Seat, moon_seats: Sequence[str],
              options: Mapping[str, Any], used: set[str]) -> list[str]:
    """The cards at ``seat``'s side, lowest first (empty where none lies): the
    uppermost from ``options["sides"]`` (random: one with chance 0.75), the ones
    beneath from ``options["under_cards"]``; none of them in ``used``, which grows."""
    forced = options.get("sides")
    unders = options.get("under_cards")
    cult = _seat_cult(seat, moon_seats)
    if forced is not None:
        top = forced.get(seat.value, forced.get(seat)) if isinstance(forced, Mapping) else None
    else:
        top = None
        if rng.random() < 0.75:
            top = rng.choice([c.id for c in CARDS if c.cult is cult and c.id not in used])
    if top is None:
        return []
    if top not in CARD_IDS or Card.parse(top).cult is not cult:
        raise ValueError(f"sides: {top!r} cannot lie at {seat.value}, a {cult.value} "
                         f"side (C1, R3)")
    used.add(top)
    if isinstance(unders, Mapping):
        n_under = int(unders.get(seat.value, unders.get(seat, 0)) or 0)
    elif unders is not None:
        n_under = int(unders)
    else:
        n_under = rng.choice([0, 0, 0, 0, 1, 1, 2, 3])
    pool = [c.id for c in CARDS if c.cult is cult and c.id not in used]
    rng.shuffle(pool)
    ids = pool[:n_under] + [top]
    used.update(ids)
    return ids


def _lowest_first(tw: Placed, stacks: Mapping[Seat, Sequence[Placed]], present: bool
                  ) -> list[Placed]:
    """The cards in drawing order: the Twilight card, the cards beneath the sides'
    uppermost cards, then the uppermost cards."""
    cards: list[Placed] = [tw] if present else []
    for seat in SEATS:
        cards.extend(stacks[seat][:-1])
    for seat in SEATS:
        cards.extend(stacks[seat][-1:])
    return cards


def _scene_arm(rng: random.Random, options: Mapping[str, Any], tw: Placed, table: Table, *,
               hand_p: float) -> Arm | None:
    """The arm over the table (``options["hand"]``; random: with chance ``hand_p``),
    from ``options["hand_seat"]`` to ``options["hand_target"]`` (random: near ``tw``)."""
    want_hand = options.get("hand")
    if want_hand is None:
        want_hand = rng.random() < hand_p
    if not want_hand:
        return None
    seat_opt = options.get("hand_seat")
    hand_seat = Seat.parse(seat_opt) if isinstance(seat_opt, str) else (
        seat_opt or rng.choice(SEATS))
    target = options.get("hand_target")
    if target is None:
        dx, dy = SEAT_DIRECTION[hand_seat]
        reach = rng.uniform(60, 200)
        target = (tw.x + dx * reach + rng.uniform(-80, 80) * (1 - abs(dx)),
                  tw.y + dy * reach + rng.uniform(-60, 60) * (1 - abs(dy)))
    return random_arm(rng, hand_seat, (float(target[0]), float(target[1])), table)


def render_scene(seed: int, style: int = 0, size: tuple[int, int] = DEFAULT_SIZE, *,
                 deck: int | str | None = None, **options: Any) -> Scene:
    """Render a random table scene from ``seed`` (same seed, same pixels).

    With ``deck`` (a :mod:`vision.sim.decks` name: ``"builtin"`` or a procedural
    deck's seed) the scene is domain-randomised, see :func:`render_randomised`;
    without it, the scene is drawn as before in art ``style`` (side cards radial,
    tilt up to 12 degrees, cards about 135-180 px long at 720 px high), which the
    older tests pin.

    Options (all optional; ``None`` means random):

    * ``twilight`` (bool, default True): is the Twilight card on the table; without it
      the truth has ``found`` false and all sides null, and no side cards are drawn.
    * ``twilight_deg`` (float): turn of the Twilight card, 0 = moon sides up and down.
      Random: a multiple of 90 plus up to +-30 degrees.
    * ``twilight_xy`` ((x, y) mm from the image centre).
    * ``sides`` (mapping seat -> card id or None): the uppermost card at each side;
      seats left out get no card. Cards must suit the side's cult (R3).
      Random: each side has a card with chance 0.75.
    * ``under_cards`` (int, or mapping seat -> int): older cards beneath the uppermost
      card at each side that has one. Random: usually none, sometimes 1-3.
    * ``hand`` (bool): an arm over the table (random: half the scenes).
    * ``hand_seat`` (seat name), ``hand_target`` ((x, y) mm): where the arm comes from
      and where the palm is.
    * ``tilt_deg`` (float, 0-12), ``px_per_mm`` (float), ``texture`` (index into
      :data:`TEXTURES`), ``glare`` (bool), ``jpeg_quality`` (int or None for none),
      ``effects`` (bool, default True: False gives even light, no shadow, noise,
      blur, glare or JPEG, for geometry checks).
    * ``mirror`` (bool, default False): the picture of a mirrored camera (flipped left
      to right, so east shows on the left). The truth keeps the table's real seats:
      ``recognise --mirror`` should reproduce it. Quads and homography are of the
      flipped picture.
    """
    if deck is not None:
        return render_randomised(seed, deck, size, **options)
    _check_options(options, SCENE_OPTIONS)
    rng = random.Random(f"scene-{seed}")
    table = random_table(rng, style, size, tilt_deg=options.get("tilt_deg"),
                         px_per_mm=options.get("px_per_mm"), texture=options.get("texture"),
                         effects=options.get("effects", True), glare=options.get("glare"),
                         jpeg_quality=options.get("jpeg_quality", -1))
    w, h = size
    s = table.camera.px_per_mm
    present = options.get("twilight", True)
    angle = _twilight_deg(rng, options)
    xy = options.get("twilight_xy")
    if xy is None:
        # Keep the Twilight card and its side cards (about 150 mm out) in the picture.
        room_x = max(0.0, w / 2 / s - 150.0)
        room_y = max(0.0, h / 2 / s - 150.0)
        xy = (rng.uniform(-room_x, room_x) * 0.8, rng.uniform(-room_y, room_y) * 0.8)
    tw = Placed("twilight", float(xy[0]), float(xy[1]), float(angle))
    moon_seats = twilight_moon_seats(tw.angle)

    stacks: dict[Seat, list[Placed]] = {seat: [] for seat in SEATS}
    if present:
        used: set[str] = set()
        for seat in SEATS:
            ids = _side_ids(rng, seat, moon_seats, options, used)
            if not ids:
                continue
            for cid in ids:
                x, y, a = side_pose(rng, seat, tw)
                stacks[seat].append(Placed(cid, x, y, a))

    cards = _lowest_first(tw, stacks, present)

    arm = _scene_arm(rng, options, tw, table, hand_p=0.5)

    image, arm_map = table.render(cards, arm, rng)
    return _scene(table, tw, stacks, arm, image, arm_map, present=present,
                  mirror=bool(options.get("mirror")), seed=seed, style=style)


def _scene(table: Table, tw: Placed, stacks: Mapping[Seat, Sequence[Placed]], arm: Arm | None,
           image: np.ndarray, arm_map: np.ndarray, *, present: bool, mirror: bool, seed: int,
           style: int, deck: int | str | None = None,
           factors: dict[str, Any] | None = None) -> Scene:
    """The :class:`Scene` of a rendered table: truth, outlines, occlusion, mirroring."""
    w, h = table.size
    moon_seats = twilight_moon_seats(tw.angle)
    side_quads: dict[str, Quad | None] = {}
    under_quads: dict[str, list[Quad]] = {}
    occluded: dict[str, bool] = {}
    sides_truth: dict[str, str | None] = {}
    for seat in SEATS:
        stack = stacks[seat]
        top_quad = table.quad(stack[-1]) if stack else None
        side_quads[seat.value] = top_quad
        under_quads[seat.value] = [table.quad(c) for c in stack[:-1]]
        sides_truth[seat.value] = stack[-1].card_id if stack else None
        occluded[seat.value] = bool(
            arm is not None and top_quad is not None
            and table.occlusion(arm_map, top_quad) > OCCLUDED_FRACTION)
    tw_quad = table.quad(tw) if present else None
    homography = table.camera.H
    if mirror:
        image = np.ascontiguousarray(image[:, ::-1])
        flip = np.array([[-1.0, 0.0, w - 1.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]])
        homography = flip @ homography

        def mirrored(q: Quad | None) -> Quad | None:
            return None if q is None else np.column_stack([w - 1.0 - q[:, 0], q[:, 1]]).astype(
                np.float32)

        side_quads = {k: mirrored(q) for k, q in side_quads.items()}
        under_quads = {k: [mirrored(q) for q in qs] for k, qs in under_quads.items()}
        tw_quad = mirrored(tw_quad)
    truth = {"twilight": {"found": bool(present), "moon_seats": moon_seats if present else []},
             "sides": sides_truth}
    return Scene(
        image=image, truth=truth, twilight_quad=tw_quad, side_quads=side_quads,
        under_quads=under_quads, occluded=occluded,
        twilight_occluded=bool(arm is not None and tw_quad is not None
                               and table.occlusion(arm_map, tw_quad) > OCCLUDED_FRACTION),
        homography=homography, px_per_mm=table.camera.scale_at(tw.x, tw.y),
        seed=seed, style=style, deck=deck, factors=factors or {})


# -- domain-randomised scenes (issue 20) ------------------------------------------------------
#: How side cards lie in a randomised scene, and each kind's share: radial (long side
#: pointing away from the Twilight card), aligned (all one way in the picture,
#: portrait), askew (uniform over 0-360 degrees).
ROTATION_KINDS: tuple[str, ...] = ("radial", "aligned", "askew")
#: Largest turn of an aligned card from portrait, degrees.
ALIGNED_JITTER_DEG = 8.0
#: A card's long side in px at 1280x720 (scaled by image height for other sizes).
CARD_PX_RANGE = (45.0, 150.0)
#: Camera tilt and horizontal field of view of randomised scenes, degrees.
RANDOM_TILT_DEG = 15.0
FOV_RANGE_DEG = (45.0, 75.0)
#: Light kinds of randomised scenes.
LIGHTS: tuple[str, ...] = ("neutral", "warm", "cool", "dim")
#: Most cards lying about in a randomised scene without the Twilight card.
LOOSE_CARDS_MAX = 5
#: Patterned and glossy cloths of randomised scenes (kind, colours BGR), indexed after
#: :data:`TEXTURES`.
PATTERNS: tuple[tuple[str, tuple[tuple[int, int, int], ...]], ...] = (
    ("gingham", ((40, 40, 190), (245, 245, 245))),
    ("gingham", ((150, 90, 30), (240, 240, 235))),
    ("stripes", ((60, 140, 200), (230, 230, 220), (50, 60, 70))),
    ("stripes", ((110, 60, 60), (180, 200, 200), (90, 150, 90))),
    ("dots", ((30, 30, 120), (220, 230, 235))),
    ("floral", ((70, 110, 60), (60, 60, 200), (200, 160, 90), (190, 210, 230))),
    ("floral", ((60, 40, 80), (120, 200, 230), (230, 230, 230), (100, 60, 130))),
    ("glossy", ((30, 30, 30),)),
    ("glossy", ((225, 225, 225),)),
    ("glossy", ((50, 80, 120),)),
)
#: Every table surface a randomised scene may show: :data:`TEXTURES` then :data:`PATTERNS`.
CLOTH_COUNT = len(TEXTURES) + len(PATTERNS)


def cloth_name(index: int) -> str:
    """A short name of table surface ``index`` (wood, felt, cloth, gingham, ...)."""
    if index < len(TEXTURES):
        return TEXTURES[index][0]
    return PATTERNS[index - len(TEXTURES)][0]


@functools.lru_cache(maxsize=16)
def pattern_texture(index: int, size: tuple[int, int]) -> np.ndarray:
    """Patterned or glossy cloth ``index`` (into :data:`PATTERNS`) at ``size``; cached."""
    kind, colours = PATTERNS[index % len(PATTERNS)]
    w, h = size
    rng = np.random.default_rng(5000 + index)
    scale = h / 720.0
    yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
    cols = [np.float32(c) for c in colours]
    if kind == "gingham":
        period = 34.0 * scale
        a = ((xx % period) < period / 2).astype(np.float32)
        b = ((yy % period) < period / 2).astype(np.float32)
        k = (a + b)[..., None] / 2.0  # 0 white, 0.5 half tone, 1 full colour
        img = cols[1] * (1 - k) + cols[0] * k
    elif kind == "stripes":
        ang = 0.6
        u = xx * math.cos(ang) + yy * math.sin(ang)
        period = 60.0 * scale
        band = np.floor(u / (period / 3)).astype(np.int64) % 3
        img = np.zeros((h, w, 3), np.float32)
        for i, c in enumerate(cols[:3]):
            img[band == i] = c
    elif kind == "dots":
        period = 28.0 * scale
        r = 7.0 * scale
        dx = (xx % period) - period / 2
        dy = (yy % period) - period / 2
        inside = (dx * dx + dy * dy) < r * r
        img = np.empty((h, w, 3), np.float32)
        img[:] = cols[1]
        img[inside] = cols[0]
    elif kind == "floral":
        canvas = np.empty((h, w, 3), np.uint8)
        canvas[:] = colours[-1]
        n = int(w * h / (60 * scale) ** 2)
        for _ in range(n):
            cx, cy = int(rng.uniform(0, w)), int(rng.uniform(0, h))
            c = colours[int(rng.integers(0, len(colours) - 1))]
            rr = max(2, int(rng.uniform(5, 14) * scale))
            for p in range(5):  # petals round a centre
                a = 2 * math.pi * p / 5 + rng.uniform(0, 1)
                cv2.ellipse(canvas, (int(cx + rr * math.cos(a)), int(cy + rr * math.sin(a))),
                            (rr, max(1, rr // 2)), math.degrees(a), 0, 360, c, -1, cv2.LINE_AA)
            cv2.circle(canvas, (cx, cy), max(1, rr // 2), colours[0], -1, cv2.LINE_AA)
        img = canvas.astype(np.float32)
    else:  # glossy: smooth laminate with faint streaks
        lum = 1.0 + 0.05 * _lowfreq(rng, h, w, 3)
        img = lum[..., None] * cols[0]
    fine = cv2.GaussianBlur(rng.normal(0, 1, (h, w)).astype(np.float32), (0, 0), 0.8)
    img = img * (1.0 + 0.03 * fine)[..., None] * (1.0 + 0.05 * _lowfreq(rng, h, w, 5))[..., None]
    out = np.clip(img, 0, 255).astype(np.uint8)
    out.setflags(write=False)
    return out


def _cloth(index: int, size: tuple[int, int], flip: int) -> np.ndarray:
    if index < len(TEXTURES):
        return _flipped_texture(index, size, flip)
    tex = pattern_texture(index - len(TEXTURES), size)
    return tex if flip == 0 else cv2.flip(tex, flip - 2)


def random_effects(rng: random.Random, size: tuple[int, int], light: str,
                   glossy: bool, *, blur_sigma: float | None = None,
                   jpeg_quality: int | None = -1, glare: bool | None = None
                   ) -> tuple[Effects, dict[str, Any]]:
    """A randomised scene's light, noise, blur, JPEG and glare; and the factors drawn."""
    w, h = size
    fx = Effects.random(rng, size, True, False, None)  # the legacy light field and shadows
    # Dim light: the camera's automatic gain keeps the picture fairly bright, at the
    # cost of much more sensor noise (below).
    level = {"dim": rng.uniform(0.45, 0.7)}.get(light, rng.uniform(0.8, 1.1))
    if light == "warm":
        cast = (rng.uniform(0.68, 0.85), rng.uniform(0.9, 0.97), rng.uniform(1.05, 1.15))
    elif light == "cool":
        cast = (rng.uniform(1.05, 1.15), rng.uniform(0.98, 1.03), rng.uniform(0.75, 0.9))
    else:
        cast = tuple(rng.uniform(0.95, 1.05) for _ in range(3))
    fx.light_lowres = fx.light_lowres * (np.float32(level) * np.float32(cast))
    fx.noise_amp = rng.uniform(0.25, 0.5) if light == "dim" else rng.uniform(0.06, 0.22)
    soft = rng.random() < 0.2
    if blur_sigma is None:
        blur_sigma = (rng.uniform(1.5, 2.5) if soft else rng.uniform(0.3, 1.2)) * h / 720.0
    fx.blur_sigma = blur_sigma
    fx.shadow_strength = rng.uniform(0.2, 0.6)
    fx.jpeg_quality = (rng.choice([None, 50, 60, 70, 80, 90, 95]) if jpeg_quality == -1
                       else jpeg_quality)
    fx.glare = None
    if glare or (glare is None and rng.random() < 0.25):  # a lamp on glossy cards
        fx.glare = (rng.uniform(0.15, 0.85) * w, rng.uniform(0.15, 0.85) * h,
                    int(rng.uniform(0.03, 0.08) * h), rng.uniform(0.3, 0.8))
    sheen = None
    if glossy:  # a broad sheen on a glossy cloth
        sheen = (rng.uniform(0.1, 0.9) * w, rng.uniform(0.1, 0.9) * h,
                 max(8, int(rng.uniform(0.15, 0.35) * h) // 8 * 8), rng.uniform(0.2, 0.45))
    factors = {"light": light, "light_level": round(level, 3), "noise": round(fx.noise_amp, 3),
               "blur_sigma": round(blur_sigma, 2), "soft_focus": soft,
               "jpeg_quality": fx.jpeg_quality, "glare": fx.glare is not None,
               "sheen": sheen is not None}
    return fx, {**factors, "_sheen": sheen}


def add_sheen(img: np.ndarray, centre: tuple[float, float], radius: int,
              strength: float) -> None:
    """A glossy cloth's broad sheen: like :func:`add_glare`, softer and without a rim."""
    _add_spot(img, _soft_spot(radius, 3.5), centre, radius, strength)


class _RandomTable(Table):
    """A :class:`Table` that may add a glossy cloth's sheen to its light."""

    sheen: tuple[float, float, int, float] | None = None

    def finish(self, img: np.ndarray, shadow: np.ndarray, arm_map: np.ndarray,
               rng: random.Random, gains: np.ndarray | None = None) -> np.ndarray:
        if self.sheen is None:
            return Table.finish(self, img, shadow, arm_map, rng, gains)
        if gains is None:
            gains = self.light_gains(shadow, arm_map)
        img = cv2.multiply(img, gains, scale=1.0 / _LIGHT_ONE)
        gx, gy, r, strength = self.sheen
        add_sheen(img, (gx, gy), r, strength)
        return Table.finish(self, img, shadow, arm_map, rng,
                            np.full_like(gains, int(_LIGHT_ONE)))


def random_table_randomised(rng: random.Random, deck: int | str, size: tuple[int, int], *,
                            options: Mapping[str, Any] | None = None,
                            cloth_size: tuple[int, int] | None = None
                            ) -> tuple[Table, dict[str, Any]]:
    """A domain-randomised table for ``deck``: card size, camera height (scale), tilt
    and field of view, cloth, light, noise, blur, JPEG, glare; and the factors drawn.
    ``options`` may pin ``card_px``, ``px_per_mm``, ``tilt_deg``, ``fov_deg``,
    ``texture``, ``light``, ``blur_sigma``, ``jpeg_quality``, ``glare``, ``effects``.
    ``cloth_size`` (at least ``size``): the cloth is cut from a picture of that size
    (one cached picture for pictures of several sizes)."""
    opts = dict(options or {})
    w, h = size
    d = sim_deck(deck)
    card_px = opts.get("card_px")
    if card_px is None:
        card_px = rng.uniform(*CARD_PX_RANGE) * h / 720.0
    scale = opts.get("px_per_mm") or card_px / max(d.card_mm)
    tilt = rng.uniform(0, RANDOM_TILT_DEG) if opts.get("tilt_deg") is None else opts["tilt_deg"]
    axis = rng.uniform(0, 360)
    fov = rng.uniform(*FOV_RANGE_DEG) if opts.get("fov_deg") is None else opts["fov_deg"]
    cam = Camera(size, float(scale), float(tilt), axis, fov_deg=float(fov))
    tex = rng.randrange(CLOTH_COUNT) if opts.get("texture") is None else int(opts["texture"])
    glossy = cloth_name(tex) == "glossy"
    light = opts.get("light") or rng.choice(LIGHTS)
    if light not in LIGHTS:
        raise ValueError(f"light must be one of {', '.join(LIGHTS)}, not {light!r}")
    flip = rng.randrange(4)
    if opts.get("effects", True):
        fx, factors = random_effects(rng, size, light, glossy, blur_sigma=opts.get("blur_sigma"),
                                     jpeg_quality=opts.get("jpeg_quality", -1),
                                     glare=opts.get("glare"))
    else:
        fx = Effects.random(rng, size, False)
        factors = {"light": "even", "_sheen": None}
    table = _RandomTable(cam, 0, fx, deck=deck, flip=0)
    if cloth_size is None:
        table.background = _cloth(tex, size, flip)
    else:
        table.background = np.ascontiguousarray(_cloth(tex, cloth_size, flip)[:h, :w])
    table.sheen = factors.pop("_sheen")
    factors.update({"card_px": round(float(scale) * max(d.card_mm), 1),
                    "card_px_720": round(float(scale) * max(d.card_mm) * 720.0 / h, 1),
                    "tilt_deg": round(float(tilt), 2), "fov_deg": round(float(fov), 1),
                    "cloth": cloth_name(tex), "texture": tex})
    return table, factors


def card_angle(rng: random.Random, rotation: str | float, seat: Seat, tw_angle: float) -> float:
    """A side card's turn (degrees, 0 = upright in the picture) for ``rotation``: a
    kind of :data:`ROTATION_KINDS` or a fixed angle."""
    if not isinstance(rotation, str):
        return float(rotation) % 360.0
    if rotation == "radial":
        base = tw_angle - 90.0 * round(tw_angle / 90.0)
        a = SEAT_CARD_ANGLE[seat] + base + rng.uniform(-SIDE_JITTER_DEG, SIDE_JITTER_DEG)
        return (a + (180.0 if rng.random() < UPSIDE_DOWN_P else 0.0)) % 360.0
    if rotation == "aligned":
        a = rng.uniform(-ALIGNED_JITTER_DEG, ALIGNED_JITTER_DEG)
        return (a + (180.0 if rng.random() < UPSIDE_DOWN_P else 0.0)) % 360.0
    if rotation == "askew":
        return rng.uniform(0.0, 360.0)
    raise ValueError(f"rotation must be one of {', '.join(ROTATION_KINDS)} or degrees, "
                     f"not {rotation!r}")


def place_at_side(rng: random.Random, seat: Seat, tw: Placed, size_mm: tuple[float, float],
                  angle: float, *, gap: float | None = None, offset: float | None = None,
                  extra_gap: float = 0.0) -> tuple[float, float]:
    """The centre (mm) of a card of ``size_mm`` turned by ``angle`` lying beyond the
    side of the Twilight card ``tw`` that faces ``seat`` (wholly beyond the line of
    that edge, so it never covers the Twilight card)."""
    k = round(tw.angle / 90.0)
    base = tw.angle - 90.0 * k
    dvec = _rot(base) @ np.array(SEAT_DIRECTION[seat])
    t = np.array([-dvec[1], dvec[0]])
    side = twilight_sides(tw.angle)[seat]
    half_tw = (tw.size_mm[1] if side in (0, 2) else tw.size_mm[0]) / 2
    R = _rot(angle)
    w, h = size_mm
    ext = w / 2 * abs(float(R[:, 0] @ dvec)) + h / 2 * abs(float(R[:, 1] @ dvec))
    g = rng.uniform(*SIDE_GAP_MM) if gap is None else gap
    o = rng.uniform(-SIDE_OFFSET_MM, SIDE_OFFSET_MM) if offset is None else offset
    centre = np.array([tw.x, tw.y]) + dvec * (half_tw + g + extra_gap + ext) + t * o
    return float(centre[0]), float(centre[1])


def _overlaps(a: Placed, b: Placed) -> bool:
    area, _ = cv2.intersectConvexConvex(a.corners_mm().astype(np.float32),
                                        b.corners_mm().astype(np.float32))
    return area > 1.0


def _in_picture(table: Table, cards: Sequence[Placed], margin: float = 2.0) -> bool:
    w, h = table.size
    for card in cards:
        q = table.quad(card)
        if (q[:, 0].min() < margin or q[:, 1].min() < margin or q[:, 0].max() > w - 1 - margin
                or q[:, 1].max() > h - 1 - margin):
            return False
    return True


def render_randomised(seed: int, deck: int | str, size: tuple[int, int] = DEFAULT_SIZE,
                      **options: Any) -> Scene:
    """A domain-randomised scene of ``deck`` from ``seed`` (same seed, same pixels).

    Drawn from the seed unless pinned by an option: each side card's ``rotation``
    (a kind of :data:`ROTATION_KINDS` for the whole scene, or a fixed angle in
    degrees, 0 = upright in the picture), card length ``card_px`` (45-150 px at
    1280x720, scaled by image height), ``tilt_deg`` (0-15), ``fov_deg`` (45-75: the
    camera's height for the same card size), ``texture`` (index of wood, felt,
    cloth, patterned and glossy cloths, see :func:`cloth_name`), ``light``
    (:data:`LIGHTS`), ``blur_sigma``, ``jpeg_quality``, ``glare``, an ``arm_shadow``
    from an arm above the picture, and ``hand`` (an arm over the table). The
    Twilight card's shape is the deck's own. Options of :func:`render_scene` work as
    there (``twilight``: without it a few cards lie about, none at a side;
    ``twilight_deg``, ``twilight_xy``, ``sides``,
    ``under_cards``, ``hand_seat``, ``hand_target``, ``px_per_mm``, ``effects``,
    ``mirror``). ``Scene.factors`` records what was drawn.
    """
    _check_options(options, RANDOMISED_OPTIONS)
    rng = random.Random(f"randomised-scene-{seed}")
    d = sim_deck(deck)
    table, factors = random_table_randomised(rng, deck, size, options=options)
    rotation = options.get("rotation")
    if rotation is None:
        rotation = rng.choice(ROTATION_KINDS)
    present = options.get("twilight", True)
    angle = _twilight_deg(rng, options)
    tw0 = table.placed("twilight", 0.0, 0.0, float(angle))
    moon_seats = twilight_moon_seats(tw0.angle)

    # Lay out round a Twilight card at the origin; then move it all into the picture.
    stacks: dict[Seat, list[Placed]] = {seat: [] for seat in SEATS}
    angles: dict[str, float] = {}
    if present:
        used: set[str] = set()
        tops: list[Placed] = []
        for seat in SEATS:
            ids = _side_ids(rng, seat, moon_seats, options, used)
            if not ids:
                continue
            *under_ids, top = ids
            for cid in under_ids:
                a = card_angle(rng, rotation, seat, tw0.angle)
                x, y = place_at_side(rng, seat, tw0, d.card_mm, a)
                stacks[seat].append(table.placed(cid, x, y, a))
            a = card_angle(rng, rotation, seat, tw0.angle)
            card = None
            for attempt in range(12):  # the uppermost cards of two sides never overlap
                x, y = place_at_side(rng, seat, tw0, d.card_mm, a, extra_gap=4.0 * attempt)
                card = table.placed(top, x, y, a)
                if not any(_overlaps(card, other) for other in tops):
                    break
            assert card is not None
            tops.append(card)
            stacks[seat].append(card)
            angles[seat.value] = round(a, 2)

    layout = [tw0] + [c for seat in SEATS for c in stacks[seat]]
    xy = options.get("twilight_xy")
    w, h = size
    s = table.camera.px_per_mm
    if xy is None:
        ext = max(float(np.abs(c.corners_mm()).max()) for c in layout)
        room_x, room_y = max(0.0, w / 2 / s - ext), max(0.0, h / 2 / s - ext)
        xy = (0.0, 0.0)
        for _ in range(12):
            cand = (rng.uniform(-room_x, room_x) * 0.9, rng.uniform(-room_y, room_y) * 0.9)
            moved = [c.moved(c.x + cand[0], c.y + cand[1]) for c in layout]
            if _in_picture(table, moved):
                xy = cand
                break
    dx, dy = float(xy[0]), float(xy[1])
    tw = tw0.moved(tw0.x + dx, tw0.y + dy)
    stacks = {seat: [c.moved(c.x + dx, c.y + dy) for c in stack] for seat, stack in stacks.items()}

    cards = _lowest_first(tw, stacks, present)
    loose = 0
    if not present:  # no Twilight card: a few cards lie about anyway (none of them counts)
        loose = rng.randrange(LOOSE_CARDS_MAX + 1)
        for cid in rng.sample(CARD_IDS, loose):
            cards.append(table.placed(cid, rng.uniform(-0.4, 0.4) * w / s,
                                      rng.uniform(-0.4, 0.4) * h / s, rng.uniform(0, 360)))

    arm = _scene_arm(rng, options, tw, table, hand_p=0.4)
    shadow_arm = None
    want_shadow = options.get("arm_shadow")
    if want_shadow is None:
        want_shadow = rng.random() < 0.25
    if want_shadow and table.effects.shadow_strength > 0:
        seat = rng.choice(SEATS)
        shadow_arm = random_arm(rng, seat, (tw.x + rng.uniform(-80, 80),
                                            tw.y + rng.uniform(-80, 80)), table)

    img, shadow, arm_map = table.new_layers()
    for card in cards:
        table.draw_card(img, shadow, card)
    if shadow_arm is not None:
        table.draw_arm(None, shadow, None, shadow_arm)
    if arm is not None:
        table.draw_arm(img, shadow, arm_map, arm)
    image = table.finish(img, shadow, arm_map, rng)
    factors.update({
        "deck": d.name, "rotation": rotation if isinstance(rotation, str) else "fixed",
        "card_angles": angles, "twilight_aspect": round(d.twilight_aspect, 3),
        "twilight_landscape": d.twilight_mm[0] > d.twilight_mm[1],
        "twilight_deg": round(float(angle), 2), "hand": arm is not None,
        "arm_shadow": shadow_arm is not None, "loose_cards": loose,
        "under_cards": sum(len(st) - 1 for st in stacks.values() if st)})
    return _scene(table, tw, stacks, arm, image, arm_map, present=present,
                  mirror=bool(options.get("mirror")), seed=seed,
                  style=d.style if d.style is not None else -1, deck=d.name, factors=factors)


# -- card photos for `recognise --card` -------------------------------------------------------
#: Picture sizes of simulated phone photos of one card (landscape and portrait).
CARD_PHOTO_SIZES: tuple[tuple[int, int], ...] = ((640, 480), (800, 600), (1024, 768),
                                                 (480, 640), (720, 960))
#: The card's long side as a share of the photo's short side.
CARD_PHOTO_FILL = (0.3, 0.7)
#: Largest camera tilt of a card photo, degrees (a phone held not quite flat).
CARD_PHOTO_TILT_DEG = 20.0
#: The cloth picture card photos are cropped from (covers every size above).
CARD_PHOTO_CLOTH_SIZE = (1024, 960)
#: Chance that a photo is cropped tightly round the card.
TIGHT_CROP_P = 0.3


def render_card_photo(seed: int, deck: int | str, *, card_id: str | None = None,
                      with_factors: bool = False
                      ) -> tuple[np.ndarray, str] | tuple[np.ndarray, str, dict[str, Any]]:
    """A phone photo of one card of ``deck`` lying on a table, as a person checks a
    card with ``recognise --card``: any rotation, mild perspective (tilt up to
    :data:`CARD_PHOTO_TILT_DEG`), table round it, the randomised light, cloth,
    noise, blur and JPEG of :func:`render_randomised`; now and then cropped tightly
    round the card. Returns (image, card id), plus the factors drawn when
    ``with_factors`` (``quad``: the card's corners in the photo, its top-left,
    top-right, bottom-right, bottom-left). Same seed, same pixels."""
    rng = random.Random(f"card-photo-{seed}")
    size = rng.choice(CARD_PHOTO_SIZES)
    cid = card_id if card_id is not None else rng.choice(CARD_IDS)
    if cid not in CARD_IDS:
        raise ValueError(f"unknown card id {cid!r} (C1)")
    fill = rng.uniform(*CARD_PHOTO_FILL)
    tilt = rng.uniform(0.0, CARD_PHOTO_TILT_DEG)
    table, factors = random_table_randomised(
        rng, deck, size, options={"card_px": fill * min(size), "tilt_deg": tilt},
        cloth_size=CARD_PHOTO_CLOTH_SIZE)
    angle = rng.uniform(0.0, 360.0)
    w, h = size
    s = table.camera.px_per_mm
    card = table.placed(cid, 0.0, 0.0, angle)
    for _ in range(12):
        cand = table.placed(cid, rng.uniform(-0.2, 0.2) * w / s, rng.uniform(-0.2, 0.2) * h / s,
                            angle)
        if _in_picture(table, [cand], margin=4.0):
            card = cand
            break
    img, shadow, arm_map = table.new_layers()
    table.draw_card(img, shadow, card)
    if rng.random() < 0.3 and table.effects.shadow_strength > 0:  # the photographer's arm
        seat = rng.choice(SEATS)
        table.draw_arm(None, shadow, None, random_arm(rng, seat, (card.x + rng.uniform(
            -60, 60), card.y + rng.uniform(-60, 60)), table))
    image = table.finish(img, shadow, arm_map, rng)
    tight = rng.random() < TIGHT_CROP_P
    q = table.quad(card)
    if tight:
        x0, y0 = q.min(axis=0)
        x1, y1 = q.max(axis=0)
        m = rng.uniform(0.0, 0.06) * max(x1 - x0, y1 - y0)
        xa, ya = max(0, int(x0 - m)), max(0, int(y0 - m))
        xb, yb = min(w, int(math.ceil(x1 + m))), min(h, int(math.ceil(y1 + m)))
        image = np.ascontiguousarray(image[ya:yb, xa:xb])
        q = q - np.float32((xa, ya))
    factors.update({"deck": sim_deck(deck).name, "card_deg": round(angle, 2), "tight": tight,
                    "fill": round(fill, 3), "photo_size": list(image.shape[1::-1]),
                    "quad": q.round(2).tolist()})
    if with_factors:
        return image, cid, factors
    return image, cid
