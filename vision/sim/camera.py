"""The built-in table simulator as a camera: the source of ``demo`` and
``watch --source demo``.

The wiring (:mod:`companion.app`) builds it by name ``demo``; every real camera
and recording comes from :func:`vision.sources.open_source`. Both give the same
shape: ``read()`` a B,G,R frame (None once ended), ``close()``, ``name``, ``live``.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from vision.sim.movie import DEMO_END_STILL_S, DEMO_KEEP_HANDS, SimulatedTable
from vision.sources import DEFAULT_SIZE


class DemoCamera:
    """The simulated table (:class:`~vision.sim.movie.SimulatedTable`) as a camera.

    Keyword options go to the simulator unchanged; its object is available as
    ``.table`` for the demo's simulated LEDs and truth. With ``realtime=False`` it is
    read like a recording: every frame, the table moving on as frames are read.
    """

    def __init__(self, size: tuple[int, int] = DEFAULT_SIZE, **options: Any) -> None:
        self.name = "demo"
        options = {"keep_hands": DEMO_KEEP_HANDS, "end_still_s": DEMO_END_STILL_S, **options}
        self.table = SimulatedTable(size=size, **options)
        #: The table played all its hands (``hands``) and lies still: no more frames.
        self.ended = False

    @property
    def live(self) -> bool:
        """Paced like a live camera (``realtime``) until the table's last hand is over;
        then it has ended, like a recording."""
        return bool(self.table.live) and not self.ended

    def read(self) -> np.ndarray | None:
        image = self.table.read()
        if image is None:
            self.ended = True
        return image

    def close(self) -> None:
        close = getattr(self.table, "close", None)
        if close is not None:
            close()
