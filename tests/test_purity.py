"""The rules core imports only the standard library (DEVELOPERS.md, STYLE.md)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = ["cards", "rules", "match", "records", "deal", "game", "gamelog", "score", "history"]
FORBIDDEN = {"cv2", "numpy", "flask", "gpiozero", "waitress", "vision", "hardware", "web", "PIL"}


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
    return names


def test_core_imports_only_stdlib_and_core() -> None:
    for name in CORE:
        for module in imported_modules(ROOT / "companion" / f"{name}.py"):
            top = module.split(".")[0]
            assert top not in FORBIDDEN, f"companion/{name}.py imports {module}"
            assert top in sys.stdlib_module_names or top == "companion" or top == "__future__", (
                f"companion/{name}.py imports {module}, which is not the standard library"
            )


def test_score_path_loads_nothing_heavy() -> None:
    code = ("import sys, companion.cli, companion.score, companion.gamelog, companion.history;"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
