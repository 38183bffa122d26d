"""Decks for the simulator's art styles, taught the way a table teaches one.

The built-in deck (style 0) needs no teaching. Any other style is taught by
writing one upright image per card (as a phone or scanner would give) and
running the same enrolment as ``twilight-companion deck enrol``. Tests and
benchmarks use this so recognition is measured on a deck it learned, not on
one it was built around.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

_TAUGHT: dict[int, str] = {}


def taught_deck(style: int) -> str | None:
    """A deck profile folder for ``style`` (None: the built-in deck needs none)."""
    if style == 0:
        return None
    if style not in _TAUGHT:
        import cv2

        from companion.core.cards import BACK_IDS, CARD_IDS, TWILIGHT_ID
        from vision.deck_art import render_card
        from vision.profile import enrol

        folder = Path(tempfile.mkdtemp(prefix=f"twilight-style-{style}-"))
        for cid in (*CARD_IDS, TWILIGHT_ID, *BACK_IDS):
            cv2.imwrite(str(folder / f"{cid}.png"), render_card(cid, style=style))
        enrol(folder, folder / "profile")
        _TAUGHT[style] = str(folder / "profile")
    return _TAUGHT[style]
