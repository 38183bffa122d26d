"""Run every benchmark module (bench/bench_*.py) or those named on the command line.

Each module has ``main() -> dict``: it prints its figures and returns them; the
figures are written to ``bench/results/<name>.json`` with the date and machine.
"""

from __future__ import annotations

import importlib
import json
import platform
import sys
import time
from pathlib import Path

RESULTS = Path(__file__).resolve().parent / "results"


def write_results(name: str, figures: dict) -> Path:
    RESULTS.mkdir(parents=True, exist_ok=True)
    out = RESULTS / f"{name}.json"
    record = {
        "benchmark": name,
        "date": time.strftime("%Y-%m-%d %H:%M:%S"),
        "machine": f"{platform.machine()} {platform.python_implementation()} "
        f"{platform.python_version()}",
        "figures": figures,
    }
    out.write_text(json.dumps(record, indent=2) + "\n")
    return out


def main(argv: list[str]) -> int:
    here = Path(__file__).resolve().parent
    names = argv or sorted(p.stem.removeprefix("bench_") for p in here.glob("bench_*.py"))
    failed = 0
    for name in names:
        print(f"== bench {name}", flush=True)
        module = importlib.import_module(f"bench.bench_{name}")
        try:
            figures = module.main()
        except Exception as exc:  # a broken benchmark must not hide the others
            print(f"bench {name} failed: {exc!r}", flush=True)
            failed += 1
            continue
        print(f"-> {write_results(name, figures)}", flush=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
