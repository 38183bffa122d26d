"""``twilight-companion`` with one more camera source a test can name in its config.

    python tests/fakes/paced_serve.py serve --data DIR --config PATH --port N

``[camera] source = "paced:FOLDER:FPS"`` plays a recorded hand movie (a
``simulate`` frame folder) as a live camera at FPS frames a second — a table that
plays at a human pace, through the real capture thread, frame checks, tracker, game
log, LEDs and web page. Every other source is the wiring's real ``open_camera``.

With ``TWILIGHT_TRUTH_OUT=PATH`` in the environment, the simulator of ``demo``
writes its truth (C7 events, hand records) to PATH as JSON when the run ends and
every 20 s meanwhile, so a long demo can be checked against it.
"""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from faulty_sources import FaultyCamera  # noqa: E402

import companion.app as wiring  # noqa: E402

_real_open_camera = wiring.open_camera


def _dump_truth(source, path: str) -> None:
    import json
    import os

    table = source.table
    tmp = f"{path}.tmp"
    with open(tmp, "w", encoding="utf-8") as fh:
        json.dump({"events": list(table.truth_events),
                   "hand_records": list(table.hand_records)}, fh)
    os.replace(tmp, path)


def open_camera(spec, size, **options):
    import atexit
    import os
    import threading

    text = str(spec)
    if text.startswith("paced:"):
        folder, _, fps = text[len("paced:"):].rpartition(":")
        return FaultyCamera(folder, [], fps=float(fps))
    source = _real_open_camera(spec, size, **options)
    out = os.environ.get("TWILIGHT_TRUTH_OUT")
    if text == "demo" and out:
        atexit.register(_dump_truth, source, out)

        def every_while() -> None:
            while True:
                threading.Event().wait(20)
                try:
                    _dump_truth(source, out)
                except (OSError, RuntimeError, ValueError):
                    pass

        threading.Thread(target=every_while, daemon=True).start()
    return source


wiring.open_camera = open_camera

if __name__ == "__main__":
    from companion.cli import main

    sys.exit(main())
