"""``twilight-companion`` with one more camera source a test can name in its config.

    python tests/fakes/paced_serve.py serve --data DIR --config PATH --port N

``[camera] source = "paced:FOLDER:FPS"`` plays a recorded hand movie (a
``simulate`` frame folder) as a live camera at FPS frames a second — a table that
plays at a human pace, through the real capture thread, frame checks, tracker, game
log, LEDs and web page. Every other source is the real ``open_source``.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from faulty_sources import FaultyCamera  # noqa: E402

import vision.sources as sources  # noqa: E402

_real_open_source = sources.open_source


def open_source(spec, size=sources.DEFAULT_SIZE, **options):
    text = str(spec)
    if text.startswith("paced:"):
        folder, _, fps = text[len("paced:"):].rpartition(":")
        return FaultyCamera(folder, [], fps=float(fps))
    return _real_open_source(spec, size, **options)


sources.open_source = open_source

if __name__ == "__main__":
    from companion.cli import main

    sys.exit(main())
