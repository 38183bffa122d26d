"""Print sheets of the built-in deck (C8, issue 3): A4 pages, 63 x 88 mm cards at 300 dpi."""

from __future__ import annotations

import argparse
import io
import re
from collections import Counter
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import cv2
import numpy as np
import pytest
from PIL import Image

from companion.core.cards import CARD_IDS, TWILIGHT_ID, Card
from vision.deck_art import render_print
from vision.printsheet import (
    DPI,
    FRONT_IDS,
    GRID,
    PDF_NAME,
    back_of,
    grid_origin_mm,
    layout,
    mm_to_px,
    page_name,
    render_page,
    run,
    slot_box_px,
)

A4_PX = (2480, 3508)  # 210 x 297 mm at 300 dpi
POINTS_PER_MM = 72 / 25.4


@pytest.fixture(scope="module")
def sheets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("deck")
    with redirect_stdout(io.StringIO()):
        assert run(argparse.Namespace(out=str(out))) == 0
    return out


def test_pages_are_a4_at_300_dpi(sheets: Path) -> None:
    pngs = sorted(sheets.glob("sheet-*.png"))
    assert len(pngs) == 8  # 29 fronts -> 4 sheets, each with its back page
    for path in pngs:
        with Image.open(path) as im:
            assert im.size == A4_PX
            assert round(im.info["dpi"][0]) == DPI and round(im.info["dpi"][1]) == DPI


def test_pdf_has_eight_a4_pages(sheets: Path) -> None:
    data = (sheets / PDF_NAME).read_bytes()
    assert data.startswith(b"%PDF")
    boxes = re.findall(rb"/MediaBox\s*\[\s*0\s+0\s+([\d.]+)\s+([\d.]+)\s*\]", data)
    assert len(boxes) == 8
    for w, h in boxes:
        assert abs(float(w) / POINTS_PER_MM - 210) < 0.5
        assert abs(float(h) / POINTS_PER_MM - 297) < 0.5


def test_cards_are_63_by_88_mm_at_300_dpi() -> None:
    art = render_print("moon-temple", 0, DPI / 25.4)
    assert abs(art.shape[1] / DPI * 25.4 - 63) < 0.1
    assert abs(art.shape[0] / DPI * 25.4 - 88) < 0.1
    for col in range(GRID[0]):
        for row in range(GRID[1]):
            x0, y0, x1, y1 = slot_box_px(col, row)
            assert abs((x1 - x0) - 63 / 25.4 * DPI) <= 1
            assert abs((y1 - y0) - 88 / 25.4 * DPI) <= 1
    ox, oy = grid_origin_mm()
    assert ox > 5 and oy > 5  # the grid fits the page with margins for cut marks


def test_every_card_is_printed_once_with_its_back_behind_it(sheets: Path) -> None:
    pages = layout()
    fronts = Counter(cid for p in pages if p.side == "front" for cid, _, _ in p.slots)
    assert fronts == Counter(FRONT_IDS)
    assert set(FRONT_IDS) == {*CARD_IDS, TWILIGHT_ID}
    for front, back in zip(pages[::2], pages[1::2], strict=True):
        assert (front.sheet, front.side, back.sheet, back.side) == (
            front.sheet, "front", front.sheet, "back")
        backs = {(col, row): cid for cid, col, row in back.slots}
        for cid, col, row in front.slots:
            # Mirrored left to right for a long-edge duplex flip.
            assert backs[(GRID[0] - 1 - col, row)] == back_of(cid)
    assert back_of("moon-adept") == "moon-back" and back_of("sun-souls-3") == "sun-back"
    # The pixels in every slot are that card's art.
    for page in pages:
        with Image.open(sheets / page_name(page)) as im:
            img = cv2.cvtColor(np.asarray(im.convert("RGB")), cv2.COLOR_RGB2BGR)
        for cid, col, row in page.slots:
            x0, y0, _, _ = slot_box_px(col, row)
            art = render_print(cid, 0, DPI / 25.4)
            h, w = art.shape[:2]
            assert np.array_equal(img[y0:y0 + h, x0:x0 + w], art), (page.sheet, page.side, cid)


def test_cut_marks_in_the_margins() -> None:
    page = layout()[0]
    img = render_page(page)
    ox, oy = grid_origin_mm()
    x = mm_to_px(ox)
    y_mark = mm_to_px(oy - 4.0)  # in the top margin, above the first column's edge
    assert img[y_mark, x].max() < 60
    assert img[y_mark, x + mm_to_px(3)].min() > 200  # and only there: white beside it
    y = mm_to_px(oy + 88)  # the cut between the first and second rows
    assert img[y, mm_to_px(ox - 4.0)].max() < 60  # a mark in the left margin
    assert img[y + mm_to_px(3), mm_to_px(ox - 4.0)].min() > 200


def test_deck_print_reports_an_unwritable_folder(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    err = io.StringIO()
    with redirect_stderr(err):
        assert run(argparse.Namespace(out=str(blocker / "deck"))) == 2
    assert len(err.getvalue().strip().splitlines()) == 1


def test_sheet_cards_are_legal_ids() -> None:
    for cid in FRONT_IDS:
        if cid != TWILIGHT_ID:
            Card.parse(cid)


def test_deck_export_round_trips_through_deck_enrol(tmp_path: Path) -> None:
    """`deck export` writes the built-in deck as a C5 folder that `deck enrol` takes,
    and the taught faces are the built-in deck's own."""
    from companion.cli import main
    from vision.printsheet import EXPORT_IDS
    from vision.profile import DeckProfile, builtin_profile

    out = tmp_path / "export"
    with redirect_stdout(io.StringIO()):
        assert main(["deck", "export", "--out", str(out)]) == 0
        assert main(["deck", "enrol", str(out), "--out", str(tmp_path / "deck")]) == 0
    assert sorted(p.name for p in out.iterdir()) == sorted(f"{cid}.png" for cid in EXPORT_IDS)
    twilight = cv2.imread(str(out / "twilight.png"))
    assert twilight.shape[0] > twilight.shape[1] > 700  # upright, about 300 dpi
    taught, builtin = DeckProfile.load(tmp_path / "deck"), builtin_profile(0)
    assert set(taught.ids) == set(builtin.ids)
    for cid in taught.ids:
        a, b = taught.faces[cid].astype(np.float32), builtin.faces[cid].astype(np.float32)
        m = 8  # square printed corners against the rounded built-in ones
        assert np.abs(a[m:-m, m:-m] - b[m:-m, m:-m]).mean() < 6, cid


def test_deck_export_refuses_a_file_as_its_folder(tmp_path: Path) -> None:
    from vision.printsheet import run_export

    blocker = tmp_path / "file"
    blocker.write_text("x")
    err = io.StringIO()
    with redirect_stderr(err):
        assert run_export(argparse.Namespace(out=str(blocker))) == 2
    assert "not a folder" in err.getvalue() and len(err.getvalue().strip().splitlines()) == 1
    assert blocker.read_text() == "x"
