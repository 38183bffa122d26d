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
from companion.core.records import RecordError, load, read_record

EXIT_INVALID = 2


def score_text(path: str) -> dict[str, object]:
    """Read and score the record at ``path`` (``-`` for standard input)."""
    if path == "-":
        obj = load(sys.stdin)
    else:
        try:
            with open(path, encoding="utf-8") as fp:
                obj = load(fp)
        except OSError as exc:
            raise RecordError(f"cannot read {path}: {exc.strerror}") from None
    result = read_record(obj)
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
