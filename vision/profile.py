"""Deck profiles (CONTRACT C5): what the recogniser knows about one physical deck.

A profile holds one flat, upright face image per card (the 28 cards, the Twilight
card with its moon sides at top and bottom, and the backs when given), resampled
to :data:`FACE_PX_PER_MM`, plus each cult's colour *as it appears* in that deck and
light: a chroma histogram and a representative colour per cult, measured from the
cult's own faces. Matching features are derived from the faces when a
:class:`~vision.recognise.Recogniser` is made, so the stored form stays simple:

``DECK/profile.json``  format, name, ids, card size, cult colours, Twilight inset
``DECK/faces.npz``     one BGR uint8 face per id, ``FACE_SIZE``, plus cult histograms

>>> profile = builtin_profile()          # the built-in deck, no enrolment needed
>>> profile.faces["moon-adept"].shape
(176, 126, 3)

``twilight-companion deck enrol DIR --out DECK`` runs :func:`run_enrol`.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sys
import tempfile
import warnings
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from companion.core.cards import BACK_IDS, CARD_IDS, TWILIGHT_ID, Card, Cult
from vision.imagefile import MAX_PIXELS, read_image

FORMAT = "twilight-deck/1"
#: Card size in millimetres (width, height), portrait — the standard size of the deck.
CARD_MM = (63, 88)
#: Resolution of the stored faces: enough for every later use, small on disk.
FACE_PX_PER_MM = 2.0
FACE_SIZE = (round(CARD_MM[0] * FACE_PX_PER_MM), round(CARD_MM[1] * FACE_PX_PER_MM))
#: Image suffixes ``deck enrol`` accepts, in order of preference.
IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg")
#: Ids an enrolment must have, and may have.
REQUIRED_IDS = (*CARD_IDS, TWILIGHT_ID)
OPTIONAL_IDS = BACK_IDS
#: Chroma histogram of a cult: bins per axis over Lab a* and b* (OpenCV 8-bit Lab,
#: 128 = neutral) and the chroma below which a pixel counts as grey (paper, ink, shadow).
HIST_BINS = 16
#: Hue bins over a full turn (30 degrees each): the cults' colours lie far apart in hue.
HUE_BINS = 12
CHROMA_MIN = 14.0
#: Margin (mm) left out at a face's edge when measuring colours: the table shows there.
COLOUR_MARGIN_MM = 3.0
#: Bump when the built-in cache's content changes meaning.
_CACHE_VERSION = 2
#: Limits on an enrolment image, checked before it is decoded (the pixels: the one
#: limit of every image the product reads, vision.imagefile.MAX_PIXELS).
MAX_ENROL_BYTES = 40_000_000
MAX_ENROL_PIXELS = MAX_PIXELS


class ProfileError(ValueError):
    """A deck folder or profile that cannot be used; the message names what is wrong."""


@dataclass
class DeckProfile:
    """One deck: faces by id (BGR uint8, :data:`FACE_SIZE`), cult colours, Twilight inset."""

    name: str
    faces: dict[str, np.ndarray]
    #: cult ("sun"/"moon") -> normalised a*b* chroma histogram (HIST_BINS x HIST_BINS)
    cult_hist: dict[str, np.ndarray]
    #: cult -> its representative colour as it appears, BGR (for drawing and reports)
    cult_bgr: dict[str, tuple[int, int, int]] = field(default_factory=dict)
    #: the cards' outline ratio (long / short side, the median of the taught faces)
    card_aspect: float = CARD_MM[1] / CARD_MM[0]
    #: the Twilight card's height / width as taught (moon sides top and bottom)
    twilight_aspect: float = CARD_MM[1] / CARD_MM[0]

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self.faces)

    # -- building
    @classmethod
    def from_faces(cls, name: str, images: dict[str, np.ndarray]) -> DeckProfile:
        """A profile from upright, tightly cropped face images (any size, BGR)."""
        missing = [i for i in REQUIRED_IDS if i not in images]
        if missing:
            raise ProfileError(f"missing card images: {', '.join(missing)}")
        faces = {cid: _normalise_face(img, turn=cid != TWILIGHT_ID)
                 for cid, img in images.items() if cid in REQUIRED_IDS or cid in OPTIONAL_IDS}
        card_aspect = float(np.median([max(images[c].shape[:2]) / min(images[c].shape[:2])
                                       for c in CARD_IDS]))
        th, tw = images[TWILIGHT_ID].shape[:2]
        cult_hist, cult_bgr = {}, {}
        for cult in Cult:
            ids = [c for c in CARD_IDS if Card.parse(c).cult is cult]
            hist = sum(chroma_hist(faces[c]) for c in ids)
            cult_hist[cult.value] = hist / max(float(hist.sum()), 1e-9)
            cult_bgr[cult.value] = _dominant_colour([faces[c] for c in ids])
        return cls(name, faces, cult_hist, cult_bgr, card_aspect, th / tw)

    # -- files
    def save(self, folder: str | os.PathLike) -> None:
        """Write ``profile.json`` and ``faces.npz`` into *folder* (made if needed)."""
        out = Path(folder)
        out.mkdir(parents=True, exist_ok=True)
        meta = {"format": FORMAT, "name": self.name, "ids": list(self.faces),
                "card_mm": list(CARD_MM), "face_px_per_mm": FACE_PX_PER_MM,
                "cult_colours": {k: list(v) for k, v in self.cult_bgr.items()},
                "card_aspect": round(self.card_aspect, 4),
                "twilight_aspect": round(self.twilight_aspect, 4)}
        arrays = {f"face:{cid}": img for cid, img in self.faces.items()}
        arrays.update({f"hist:{k}": v.astype(np.float32) for k, v in self.cult_hist.items()})
        np.savez_compressed(out / "faces.npz", **arrays)
        (out / "profile.json").write_text(json.dumps(meta, indent=2) + "\n")

    @classmethod
    def load(cls, folder: str | os.PathLike) -> DeckProfile:
        """Read a profile written by :meth:`save`; :class:`ProfileError` names the problem."""
        root = Path(folder)
        try:
            meta = json.loads((root / "profile.json").read_text())
            data = np.load(root / "faces.npz")
        except FileNotFoundError as exc:
            raise ProfileError(f"{root}: not a deck profile (no {Path(exc.filename).name})"
                               ) from None
        except (OSError, ValueError) as exc:
            raise ProfileError(f"{root}: unreadable deck profile ({exc})") from None
        if meta.get("format") != FORMAT:
            raise ProfileError(f"{root}: deck profile format {meta.get('format')!r}, "
                               f"expected {FORMAT!r}")
        with data:
            faces = {cid: data[f"face:{cid}"] for cid in meta["ids"]}
            hist = {c.value: data[f"hist:{c.value}"] for c in Cult}
        bgr = {k: tuple(int(x) for x in v) for k, v in meta.get("cult_colours", {}).items()}
        default = CARD_MM[1] / CARD_MM[0]
        return cls(meta.get("name", root.name), faces, hist, bgr,
                   float(meta.get("card_aspect", default)),
                   float(meta.get("twilight_aspect", default)))


def _normalise_face(img: np.ndarray, turn: bool = True) -> np.ndarray:
    """*img* as B,G,R at FACE_SIZE (its shape is kept apart, as an aspect); a landscape
    picture of a card is turned upright (*turn*; not the Twilight card's, whose moon
    sides are top and bottom as taught, whatever its shape)."""
    if img.ndim == 2:
        img = cv2.cvtColor(img, cv2.COLOR_GRAY2BGR)
    elif img.shape[2] == 4:
        img = cv2.cvtColor(img, cv2.COLOR_BGRA2BGR)
    h, w = img.shape[:2]
    if turn and w > h:  # a landscape photo of a portrait card: the C5 images are upright
        img = cv2.rotate(img, cv2.ROTATE_90_CLOCKWISE)
    return cv2.resize(img, FACE_SIZE, interpolation=cv2.INTER_AREA)


def chroma_hist(bgr: np.ndarray, margin_mm: float = COLOUR_MARGIN_MM,
                px_per_mm: float | None = None) -> np.ndarray:
    """Histogram of the chromatic pixels' Lab a*, b* (HIST_BINS²), summing to 1 (or 0)."""
    h, w = bgr.shape[:2]
    if px_per_mm is None:
        px_per_mm = w / CARD_MM[0]
    m = int(round(margin_mm * px_per_mm))
    core = bgr[m:h - m, m:w - m] if m > 0 and h > 2 * m and w > 2 * m else bgr
    lab = cv2.cvtColor(core, cv2.COLOR_BGR2Lab)
    a = lab[..., 1].astype(np.float32) - 128
    b = lab[..., 2].astype(np.float32) - 128
    mask = ((a * a + b * b) > CHROMA_MIN ** 2).astype(np.uint8)
    hist = cv2.calcHist([lab], [1, 2], mask, [HIST_BINS, HIST_BINS], [0, 256, 0, 256])
    total = float(hist.sum())
    return hist / total if total > 0 else hist


def hue_hist(bgr: np.ndarray) -> np.ndarray:
    """Histogram of the chromatic pixels' hue (the angle of Lab a*, b*; HUE_BINS over a
    full turn), each weighted by its chroma, summing to 1 (or 0). A light dimmer or
    brighter than the one a card was taught in scales its chroma, not its hue."""
    lab = cv2.cvtColor(bgr, cv2.COLOR_BGR2Lab).reshape(-1, 3).astype(np.float32)
    a, b = lab[:, 1] - 128, lab[:, 2] - 128
    chroma = np.hypot(a, b)
    keep = chroma > CHROMA_MIN
    # each pixel shared between the two bins whose middles its hue lies between, so
    # that hues a few degrees apart fill alike bins wherever the bins' edges fall
    at = (np.arctan2(b[keep], a[keep]) / (2 * np.pi)) % 1.0 * HUE_BINS - 0.5
    low = np.floor(at)
    upper = (at - low) * chroma[keep]
    low = low.astype(np.int64) % HUE_BINS
    hist = (np.bincount(low, weights=chroma[keep] - upper, minlength=HUE_BINS)
            + np.bincount((low + 1) % HUE_BINS, weights=upper, minlength=HUE_BINS))
    total = float(hist.sum())
    return hist / total if total > 0 else hist


def _dominant_colour(faces: list[np.ndarray]) -> tuple[int, int, int]:
    pix = np.concatenate([f.reshape(-1, 3) for f in faces]).astype(np.float32)
    lab = cv2.cvtColor(pix.reshape(-1, 1, 3).astype(np.uint8), cv2.COLOR_BGR2Lab).reshape(-1, 3)
    chroma = np.hypot(lab[:, 1].astype(np.float32) - 128, lab[:, 2].astype(np.float32) - 128)
    strong = pix[chroma > np.percentile(chroma, 75)]
    return tuple(int(x) for x in np.median(strong, axis=0))


# -- the built-in deck --------------------------------------------------------------------


_BUILTIN: dict[int, DeckProfile] = {}


def _cache_dir() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "twilight-companion"


def builtin_profile(style: int = 0) -> DeckProfile:
    """The profile of the built-in deck (``style`` 0), or of the simulator's other art
    style, drawn by :mod:`vision.deck_art` — no enrolment. Kept in memory and cached on
    disk (keyed by the art's source), so later starts take milliseconds."""
    if style in _BUILTIN:
        return _BUILTIN[style]
    from vision import deck_art

    source = Path(deck_art.__file__).read_bytes()
    key = hashlib.sha256(source + f"{style}:{_CACHE_VERSION}:{FACE_SIZE}".encode()).hexdigest()
    cached = _cache_dir() / f"builtin-{style}-{key[:16]}"
    profile = None
    if (cached / "profile.json").exists():
        try:
            profile = DeckProfile.load(cached)
        except (ProfileError, KeyError):
            profile = None
    if profile is None:
        images = {cid: deck_art.render_card(cid, style=style, px_per_mm=FACE_PX_PER_MM)
                  for cid in (*REQUIRED_IDS, *OPTIONAL_IDS)}
        profile = DeckProfile.from_faces(f"built-in (style {style})", images)
        del images
        deck_art.forget_renderings()  # kept for nothing, they would stay resident
        try:
            tmp = Path(tempfile.mkdtemp(prefix=".builtin-", dir=_ensure(cached.parent)))
            profile.save(tmp)
            os.replace(tmp, cached)
        except OSError:
            pass  # a read-only home only costs the rendering next time
    _BUILTIN[style] = profile
    return profile


def _ensure(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    return folder


# -- deck enrol ------------------------------------------------------------------------------


def _too_big(path: Path) -> str | None:
    """Why the image at *path* is too big to decode (file size, or pixels as its header
    says, read without decoding it), or None: a photo of one card needs far less than
    MAX_ENROL_PIXELS, and a crafted file must not take the Pi's memory."""
    size = path.stat().st_size
    if size > MAX_ENROL_BYTES:
        return f"too large ({size / 1e6:.0f} MB; at most {MAX_ENROL_BYTES / 1e6:.0f} MB)"
    from PIL import Image, UnidentifiedImageError

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", Image.DecompressionBombWarning)  # judged below
            with Image.open(path) as img:
                w, h = img.size
    except (UnidentifiedImageError, OSError, ValueError):
        return None  # not for Pillow to judge: OpenCV says whether it can read it
    except Image.DecompressionBombError:
        return "too many pixels"
    if w * h > MAX_ENROL_PIXELS:
        return f"too many pixels ({w}x{h}; at most {MAX_ENROL_PIXELS / 1e6:.0f} MP)"
    return None


def read_enrolment(folder: str | os.PathLike) -> dict[str, np.ndarray]:
    """The face images of a C5 enrolment folder, by id; :class:`ProfileError` names
    every missing, unreadable or doubled image."""
    root = Path(folder)
    if not root.is_dir():
        raise ProfileError(f"{root}: not a folder")
    found: dict[str, list[Path]] = {}
    for path in sorted(root.iterdir()):
        if path.is_file() and path.suffix.lower() in IMAGE_SUFFIXES:
            found.setdefault(path.stem.lower(), []).append(path)
    problems = []
    doubled = [paths for cid, paths in found.items()
               if len(paths) > 1 and cid in (*REQUIRED_IDS, *OPTIONAL_IDS)]
    for paths in doubled:
        problems.append("two images of the same card: " + ", ".join(p.name for p in paths))
    missing = [cid for cid in REQUIRED_IDS if cid not in found]
    if missing:
        problems.append("missing card images: " + ", ".join(f"{cid}.png" for cid in missing))
    images = {}
    for cid in (*REQUIRED_IDS, *OPTIONAL_IDS):
        if cid not in found or len(found[cid]) > 1:
            continue
        path = found[cid][0]
        too_big = _too_big(path)
        if too_big:
            problems.append(f"{path.name}: {too_big}")
            continue
        img = read_image(path)
        if img is None or img.size == 0 or min(img.shape[:2]) < 16:
            problems.append(f"unreadable image: {path.name}")
            continue
        images[cid] = img
    if problems:
        raise ProfileError(f"{root}: " + "; ".join(problems))
    return images


def enrol(folder: str | os.PathLike, out: str | os.PathLike) -> DeckProfile:
    """Teach a deck from a C5 folder and write its profile to *out*; nothing is
    written unless every image is good."""
    images = read_enrolment(folder)
    profile = DeckProfile.from_faces(Path(out).name or "deck", images)
    from vision.faces import alike_pairs

    alike = alike_pairs(profile.faces, profile.card_aspect)
    if alike:
        pairs = ", ".join(f"{a} and {b} ({c:.3f})" for a, b, c in alike)
        raise ProfileError(f"{Path(folder)}: faces too alike to tell apart: {pairs}")
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise ProfileError(f"{target}: exists and is not a folder")
    parent = _ensure(target.absolute().parent)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}-", dir=parent))
    try:
        profile.save(tmp)
        if target.exists():
            for name in ("profile.json", "faces.npz"):
                os.replace(tmp / name, target / name)
        else:
            os.replace(tmp, target)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return profile


def run_enrol(args) -> int:
    """``twilight-companion deck enrol DIR --out DECK`` (C5)."""
    try:
        profile = enrol(args.dir, args.out)
    except ProfileError as exc:
        print(f"deck enrol: {exc}; nothing written", file=sys.stderr)
        return 2
    except OSError as exc:  # the deck's folder cannot be made or written
        where = exc.filename or args.out
        print(f"deck enrol: cannot write {where}: {exc.strerror or exc}; nothing written",
              file=sys.stderr)
        return 2
    print(f"deck enrol: {len(profile.faces)} faces -> {args.out}")
    return 0


def load_deck(deck: str | os.PathLike | None) -> DeckProfile:
    """The profile named by ``--deck`` (a folder), or the built-in deck for None."""
    return builtin_profile(0) if deck is None else DeckProfile.load(deck)
