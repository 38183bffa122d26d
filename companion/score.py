"""``twilight-companion score FILE|-`` (CONTRACT C3, C4).

Prints the C3 form of a hand record or the C4 form of a match record. Anything
invalid prints nothing on standard output, one line on standard error, and
exits with status 2. Imports only the standard library and the game core.
"""

from __future__ import annotations

import argparse
import json
import sys

from companion.core.match import Match
from companion.core.records import RecordError, parse, read_record

EXIT_INVALID = 2
#: The largest record read. A match of 1000 hands is under 2 MB; anything far larger
#: is not a record, and is not read into memory whole.
MAX_RECORD_BYTES = 16 * 1024 * 1024


def _read(path: str) -> bytes:
    """The bytes of the record at ``path`` (``-``: standard input), at most
    :data:`MAX_RECORD_BYTES`."""
    try:
        if path == "-":
            data = sys.stdin.buffer.read(MAX_RECORD_BYTES + 1)
        else:
            with open(path, "rb") as fp:
                data = fp.read(MAX_RECORD_BYTES + 1)
    except OSError as exc:
        raise RecordError(f"cannot read {path}: {exc.strerror or exc}") from None
    if len(data) > MAX_RECORD_BYTES:
        name = "standard input" if path == "-" else path
        raise RecordError(f"{name} is larger than {MAX_RECORD_BYTES // (1024 * 1024)} MB: "
                          "not a hand or match record")
    return data


def score_text(path: str) -> dict[str, object]:
    """Read and score the record at ``path`` (``-`` for standard input)."""
    result = read_record(parse(_read(path)))
    return result.summary() if isinstance(result, Match) else result.to_dict()


def run(args: argparse.Namespace) -> int:
    try:
        out = score_text(args.file)
    except (RecordError, RecursionError, MemoryError) as exc:
        message = " ".join(str(exc).split()) or type(exc).__name__
        print(f"twilight-companion score: {message}", file=sys.stderr)
        return EXIT_INVALID
    print(json.dumps(out))
    return 0
