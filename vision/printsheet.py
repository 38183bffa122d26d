"""Print sheets of the built-in deck (C8): ``twilight-companion deck print --out DIR``.

Nine cards of 63 x 88 mm per A4 page in a 3 x 3 grid with cut marks in the
margins: the 28 cards and the Twilight card on four front pages, each followed
by its back page, mirrored left to right so that a duplex print (flip on the
long edge) puts every back behind its own front. Written as one PDF
(``twilight-deck.pdf``, through Pillow) and as 300 dpi PNG pages.
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path

import cv2
import numpy as np
from PIL import Image

from companion.core.cards import CARD_IDS, TWILIGHT_ID, Card
from vision.deck_art import CARD_MM, render_print

#: Print resolution, dots per inch.
DPI = 300
MM_PER_INCH = 25.4
#: A4 portrait in millimetres.
PAGE_MM = (210.0, 297.0)
#: Cards per page: columns, rows.
GRID = (3, 3)
#: Cut marks: length, distance from the card grid and line width (mm).
CUT_MARK_MM = 6.0
CUT_MARK_GAP_MM = 1.5
CUT_MARK_WIDTH_MM = 0.25
#: Every card on the fronts, in print order.
FRONT_IDS: tuple[str, ...] = (*CARD_IDS, TWILIGHT_ID)
PDF_NAME = "twilight-deck.pdf"
#: zlib level of the PNG pages (fast; the flat card art compresses well anyway).
PNG_COMPRESS_LEVEL = 2
#: Pillow stores RGB pages in the PDF as JPEG; high quality keeps edges crisp in print.
PDF_JPEG_QUALITY = 95
_INK = (0, 0, 0)
_LABEL_GREY = (110, 110, 110)


def mm_to_px(mm: float, dpi: int = DPI) -> int:
    return round(mm / MM_PER_INCH * dpi)


def back_of(card_id: str) -> str:
    """The id printed on the back of ``card_id``: its cult's back; the Twilight
    card shows its face on both sides."""
    if card_id == TWILIGHT_ID:
        return TWILIGHT_ID
    return f"{Card.parse(card_id).cult.value}-back"


@dataclass(frozen=True)
class Page:
    """One page: ``side`` "front" or "back", its sheet number from 1, and the card
    in each slot as (card id, column, row)."""

    sheet: int
    side: str
    slots: tuple[tuple[str, int, int], ...]


def layout() -> list[Page]:
    """The pages in print order: sheet 1 front, sheet 1 back, sheet 2 front, ..."""
    per_page = GRID[0] * GRID[1]
    pages = []
    for n, start in enumerate(range(0, len(FRONT_IDS), per_page), start=1):
        ids = FRONT_IDS[start:start + per_page]
        front = tuple((cid, i % GRID[0], i // GRID[0]) for i, cid in enumerate(ids))
        # Mirrored left to right: the back of column c lies under column (cols-1-c).
        back = tuple((back_of(cid), GRID[0] - 1 - col, row) for cid, col, row in front)
        pages.append(Page(n, "front", front))
        pages.append(Page(n, "back", back))
    return pages


def grid_origin_mm() -> tuple[float, float]:
    """Top-left corner of the card grid on the page (the grid is centred)."""
    return ((PAGE_MM[0] - GRID[0] * CARD_MM[0]) / 2, (PAGE_MM[1] - GRID[1] * CARD_MM[1]) / 2)


def slot_box_px(col: int, row: int, dpi: int = DPI) -> tuple[int, int, int, int]:
    """Pixel box (x0, y0, x1, y1) of a grid slot on a page at ``dpi``."""
    ox, oy = grid_origin_mm()
    x0 = mm_to_px(ox + col * CARD_MM[0], dpi)
    y0 = mm_to_px(oy + row * CARD_MM[1], dpi)
    x1 = mm_to_px(ox + (col + 1) * CARD_MM[0], dpi)
    y1 = mm_to_px(oy + (row + 1) * CARD_MM[1], dpi)
    return x0, y0, x1, y1


def _cut_marks(img: np.ndarray, dpi: int) -> None:
    ox, oy = grid_origin_mm()
    gx1, gy1 = ox + GRID[0] * CARD_MM[0], oy + GRID[1] * CARD_MM[1]
    w = max(1, mm_to_px(CUT_MARK_WIDTH_MM, dpi))
    gap, length = CUT_MARK_GAP_MM, CUT_MARK_MM
    for c in range(GRID[0] + 1):
        x = mm_to_px(ox + c * CARD_MM[0], dpi)
        cv2.line(img, (x, mm_to_px(oy - gap - length, dpi)), (x, mm_to_px(oy - gap, dpi)),
                 _INK, w)
        cv2.line(img, (x, mm_to_px(gy1 + gap, dpi)), (x, mm_to_px(gy1 + gap + length, dpi)),
                 _INK, w)
    for r in range(GRID[1] + 1):
        y = mm_to_px(oy + r * CARD_MM[1], dpi)
        cv2.line(img, (mm_to_px(ox - gap - length, dpi), y), (mm_to_px(ox - gap, dpi), y),
                 _INK, w)
        cv2.line(img, (mm_to_px(gx1 + gap, dpi), y), (mm_to_px(gx1 + gap + length, dpi), y),
                 _INK, w)


def render_page(page: Page, dpi: int = DPI) -> np.ndarray:
    """One page as a BGR image of A4 at ``dpi``."""
    size = (mm_to_px(PAGE_MM[0], dpi), mm_to_px(PAGE_MM[1], dpi))
    img = np.full((size[1], size[0], 3), 255, np.uint8)
    ppm = dpi / MM_PER_INCH
    for card_id, col, row in page.slots:
        # The art is the card size rounded to whole pixels; slots may be a pixel
        # larger where the grid's millimetres round up, and that pixel stays white.
        x0, y0, _, _ = slot_box_px(col, row, dpi)
        art = render_print(card_id, 0, ppm)
        img[y0:y0 + art.shape[0], x0:x0 + art.shape[1]] = art
    _cut_marks(img, dpi)
    note = (f"Twilight companion - built-in deck - sheet {page.sheet} {page.side}"
            + (" (mirrored: print duplex, flip on long edge)" if page.side == "back" else ""))
    scale = 0.45 * dpi / 100
    cv2.putText(img, note, (mm_to_px(12, dpi), size[1] - mm_to_px(5, dpi)),
                cv2.FONT_HERSHEY_SIMPLEX, scale, _LABEL_GREY, max(1, dpi // 150), cv2.LINE_AA)
    return img


def page_name(page: Page) -> str:
    return f"sheet-{page.sheet}-{page.side}.png"


def write_sheets(out: Path, dpi: int = DPI) -> list[Path]:
    """Write the PNG pages and the PDF to ``out``; returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    written = []
    images = []
    for page in layout():
        rgb = Image.fromarray(cv2.cvtColor(render_page(page, dpi), cv2.COLOR_BGR2RGB))
        path = out / page_name(page)
        rgb.save(path, dpi=(dpi, dpi), compress_level=PNG_COMPRESS_LEVEL)
        written.append(path)
        images.append(rgb)
    pdf = out / PDF_NAME
    images[0].save(pdf, "PDF", resolution=float(dpi), save_all=True, quality=PDF_JPEG_QUALITY,
                   append_images=images[1:], title="Twilight companion built-in deck")
    written.append(pdf)
    return written


def run(args: argparse.Namespace) -> int:
    """``twilight-companion deck print --out DIR``."""
    try:
        paths = write_sheets(Path(args.out))
    except OSError as exc:
        print(f"twilight-companion deck print: {exc}", file=sys.stderr)
        return 2
    for path in paths:
        print(path)
    return 0


# -- deck export ---------------------------------------------------------------------------
#: Every image ``deck export`` writes: the 28 faces, the Twilight card, both backs.
EXPORT_IDS: tuple[str, ...] = (*CARD_IDS, TWILIGHT_ID, "sun-back", "moon-back")


def export_deck(out: Path, dpi: int = DPI) -> list[Path]:
    """Write the built-in deck as a C5 enrolment folder: one upright PNG per card at
    ``dpi`` (``<card-id>.png``, ``twilight.png`` with its moon sides at the top and
    bottom, ``sun-back.png``, ``moon-back.png``), square-cornered as printed, so a
    single card can be printed, the deck drawn elsewhere, or taught again with
    ``deck enrol``. Returns the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    px_per_mm = dpi / MM_PER_INCH
    paths = []
    for card_id in EXPORT_IDS:
        path = out / f"{card_id}.png"
        if not cv2.imwrite(str(path), render_print(card_id, 0, px_per_mm),
                           [cv2.IMWRITE_PNG_COMPRESSION, PNG_COMPRESS_LEVEL]):
            raise OSError(f"cannot write {path}")
        paths.append(path)
    return paths


def run_export(args: argparse.Namespace) -> int:
    """``twilight-companion deck export --out DIR``."""
    out = Path(args.out)
    if out.exists() and not out.is_dir():
        print(f"twilight-companion deck export: {out} exists and is not a folder",
              file=sys.stderr)
        return 2
    try:
        paths = export_deck(out)
    except OSError as exc:
        print(f"twilight-companion deck export: {exc}", file=sys.stderr)
        return 2
    print(f"deck export: {len(paths)} images -> {out}")
    return 0
