"""The ``twilight-companion`` command (CONTRACT C3–C9).

Only argparse lives here. Each command's work is imported lazily from the
module that owns it, so ``score`` starts without loading OpenCV, numpy or Flask.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable, Sequence

EXIT_INVALID = 2


def _score(args: argparse.Namespace) -> int:
    from companion.score import run

    return run(args)


def _history(args: argparse.Namespace) -> int:
    from companion.history import run_history

    return run_history(args)


def _export(args: argparse.Namespace) -> int:
    from companion.history import run_export

    return run_export(args)


def _deck_print(args: argparse.Namespace) -> int:
    from vision.printsheet import run

    return run(args)


def _deck_enrol(args: argparse.Namespace) -> int:
    from vision.profile import run_enrol

    return run_enrol(args)


def _deck_export(args: argparse.Namespace) -> int:
    from vision.printsheet import run_export

    return run_export(args)


def _recognise(args: argparse.Namespace) -> int:
    from companion.recognise_cmd import run

    return run(args)


def _simulate(args: argparse.Namespace) -> int:
    from vision.sim.movie import run

    return run(args)


def _watch(args: argparse.Namespace) -> int:
    from companion.app import run_watch

    return run_watch(args)


def _serve(args: argparse.Namespace) -> int:
    from companion.app import run_serve

    return run_serve(args)


def _demo(args: argparse.Namespace) -> int:
    from companion.app import run_demo

    return run_demo(args)


def _log_repair(args: argparse.Namespace) -> int:
    from companion.repair import run

    return run(args)


def _leds_test(args: argparse.Namespace) -> int:
    from hardware.leds import run_test

    return run_test(args)


#: command -> its handler: takes the parsed args, returns an exit status. Each imports
#: the module that does the work when called, so ``score`` never loads OpenCV or Flask.
HANDLERS: dict[str, Callable[[argparse.Namespace], int]] = {
    "score": _score,
    "history": _history,
    "export": _export,
    "deck print": _deck_print,
    "deck enrol": _deck_enrol,
    "deck export": _deck_export,
    "recognise": _recognise,
    "simulate": _simulate,
    "watch": _watch,
    "serve": _serve,
    "demo": _demo,
    "leds test": _leds_test,
    "log repair": _log_repair,
}


def _add_data(p: argparse.ArgumentParser) -> None:
    p.add_argument("--data", metavar="DIR", help="folder of the game log (default: "
                   "$STATE_DIRECTORY, else ~/.local/share/twilight-companion)")


def _port_number(text: str) -> int:
    """A TCP port, 0 for any free one (the address is printed at start)."""
    try:
        port = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a port number: {text!r}") from None
    if not 0 <= port <= 65535:
        raise argparse.ArgumentTypeError(f"port {port} is not in 0..65535")
    return port


def _count(text: str) -> int:
    """A number of hands: 0 or more."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text!r}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must be 0 or more, not {value}")
    return value


def _add_service(p: argparse.ArgumentParser, host: str | None) -> None:
    _add_data(p)
    p.add_argument("--config", metavar="PATH", help="TOML config file")
    p.add_argument("--port", type=_port_number, default=None,
                   help="web port (default 8000; 0: any free port)")
    p.add_argument("--host", default=host, metavar="ADDR", help="bind address")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="twilight-companion", description="A camera table companion for Twilight."
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser("score", help="score a hand (C2) or match (C4) record")
    p.add_argument("file", metavar="FILE", help="record file, - for standard input")

    p = sub.add_parser("history", help="matches in the game log")
    _add_data(p)
    p = sub.add_parser("export", help="write a match from the game log as a C4 record")
    p.add_argument("match", metavar="MATCH", help="match number from `history`")
    p.add_argument("--out", required=True, metavar="FILE")
    _add_data(p)

    deck = sub.add_parser("deck", help="built-in deck sheets and deck profiles")
    dsub = deck.add_subparsers(dest="deck_command", required=True, metavar="ACTION")
    p = dsub.add_parser("print", help="print sheets of the built-in deck (C8)")
    p.add_argument("--out", required=True, metavar="DIR")
    p = dsub.add_parser("enrol", help="teach a deck from one image per card (C5)")
    p.add_argument("dir", metavar="DIR")
    p.add_argument("--out", required=True, metavar="DECK")
    p = dsub.add_parser("export", help="the built-in deck as enrolment images (C5)")
    p.add_argument("--out", required=True, metavar="DIR")

    p = sub.add_parser("recognise", help="read the cards at the Twilight card (C6)")
    p.add_argument("images", nargs="+", metavar="IMAGE")
    p.add_argument("--deck", metavar="DECK", help="deck profile (default: built-in deck)")
    p.add_argument("--card", action="store_true", help="each image is one card alone")
    p.add_argument("--annotate", metavar="DIR", help="write annotated images here")
    p.add_argument("--mirror", action="store_true", help="swap east and west")

    p = sub.add_parser("simulate", help="render simulated hand movies with truth")
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--hands", type=int, default=1)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--style", type=int, default=0)
    p.add_argument("--size", default="1280x720")
    p.add_argument("--fps", type=float, default=10.0)
    p.add_argument("--video", action="store_true", help="write a video instead of frames")
    p.add_argument("--mode", choices=["four", "three"], default="four")
    p.add_argument("--soloist", metavar="SEAT", help="three players: the first soloist")
    p.add_argument("--new-moon-cards", action="store_true",
                   help="three players: lay the new moon's cards face up on the table")
    p.add_argument("--deck", metavar="DECK", help="randomised movie with this simulator "
                   "deck: builtin or a procedural deck's seed (docs/simulator.md)")

    p = sub.add_parser("watch", help="watch a table or a recording, write events (C7)")
    p.add_argument("--source", required=True, metavar="SRC")
    p.add_argument("--deck", metavar="DECK")
    p.add_argument("--events", required=True, metavar="FILE")
    p.add_argument("--mode", choices=["four", "three"], default="four")
    p.add_argument("--soloist", metavar="SEAT")
    p.add_argument("--web", action="store_true", help="also serve the score page")
    p.add_argument("--mirror", action="store_true")
    _add_service(p, None)

    p = sub.add_parser("serve", help="run the companion on the table (C9)")
    _add_service(p, None)
    p.add_argument("--source", metavar="SRC", help="camera: picamera, a camera number (0: "
                   "the first USB camera), a video file or a folder of frames (default: the "
                   "config's [camera] source, else picamera)")
    p = sub.add_parser("demo", help="run the companion on its simulated table (C9)")
    _add_service(p, None)
    p.add_argument("--hands", type=_count, default=0,
                   help="play N hands, then show the result until stopped (0: play on)")
    p.add_argument("--seed", type=int, default=None)
    p.add_argument("--speed", type=float, default=1.0, help="pace of the simulated table")
    p.add_argument("--pace", choices=["human", "frames"], default="human",
                   help="human: the simulated camera gives 10 frames a second, like a live "
                   "one; frames: the table moves on one frame per frame recognised, none dropped, "
                   "as fast as this machine goes (soaks and benchmarks; no camera preview)")

    logs = sub.add_parser("log", help="the game log")
    gsub = logs.add_subparsers(dest="log_command", required=True, metavar="ACTION")
    p = gsub.add_parser("repair", help="copy every readable event of a damaged log into a "
                        "new one; the damaged file is kept beside it")
    _add_data(p)

    leds = sub.add_parser("leds", help="seat LEDs")
    lsub = leds.add_subparsers(dest="leds_command", required=True, metavar="ACTION")
    p = lsub.add_parser("test", help="light each seat in turn and name it")
    p.add_argument("--config", metavar="PATH")
    p.add_argument("--delay", type=float, default=1.0)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser()
    args = parser.parse_args(args_list)
    key = args.command
    if key == "deck":
        key = f"deck {args.deck_command}"
    elif key == "leds":
        key = f"leds {args.leds_command}"
    elif key == "log":
        key = f"log {args.log_command}"
    try:
        return int(HANDLERS[key](args) or 0)
    except KeyboardInterrupt:
        return 130
    except Exception as exc:  # the last resort: one line, never a traceback
        if os.environ.get("TWILIGHT_DEBUG"):
            raise
        message = " ".join(str(exc).split()) or "no details"
        print(f"twilight-companion {key}: {type(exc).__name__}: {message} "
              "(TWILIGHT_DEBUG=1 shows where)", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
