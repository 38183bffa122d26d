"""``twilight-companion recognise [--deck DECK] [--card] [--annotate DIR] IMAGE…`` (C6).

One JSON line per image, in order; an unreadable image gives a line with an
``"error"`` field and the run goes on (exit 2 at the end). The work is
:class:`vision.recognise.Recogniser`'s; this module only reads files and prints.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path


def run(args) -> int:
    """Run the ``recognise`` command on parsed *args*; the exit status."""
    import cv2

    from vision.imagefile import read_image
    from vision.profile import ProfileError, load_deck
    from vision.recognise import Recogniser

    try:
        profile = load_deck(args.deck)
    except ProfileError as exc:
        print(f"recognise: {exc}", file=sys.stderr)
        return 2
    rec = Recogniser(profile, mirror=bool(getattr(args, "mirror", False)))
    out_dir = Path(args.annotate) if getattr(args, "annotate", None) else None
    if out_dir is not None:
        out_dir.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name in args.images:
        frame = read_image(name) if os.path.isfile(name) else None
        if frame is None:
            failed += 1
            reason = "no such file" if not os.path.exists(name) else "not a readable image"
            print(json.dumps({"image": name, "error": reason}), flush=True)
            continue
        if args.card:
            ident = rec.identify_card(frame)
            line = {"image": name, "card": ident.card_id}
        else:
            line = rec.recognise(frame, image_name=name)
        print(json.dumps(line), flush=True)
        if out_dir is not None:
            from vision.annotate import annotate

            drawn = annotate(frame, rec.last_pose, rec.last_readings, card=args.card)
            cv2.imwrite(str(out_dir / (Path(name).stem + ".png")), drawn)
    return 2 if failed else 0
