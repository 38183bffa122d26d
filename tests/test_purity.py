"""The rooms keep to themselves: the game core imports only the standard library and
itself; recognition never imports the simulator, the web or the hardware."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = sorted((ROOT / "companion" / "core").glob("*.py"))
RECOGNITION = sorted((ROOT / "vision").glob("*.py"))
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
    assert len(CORE) >= 8
    for path in CORE:
        for module in imported_modules(path):
            top = module.split(".")[0]
            inside = module == "companion.core" or module.startswith("companion.core.")
            assert top in sys.stdlib_module_names or inside or top == "__future__", (
                f"companion/core/{path.name} imports {module}, which is neither the standard "
                "library nor the core"
            )


def test_recognition_never_imports_the_simulator_web_or_hardware() -> None:
    for path in RECOGNITION:
        for module in imported_modules(path):
            top = module.split(".")[0]
            assert top not in {"web", "hardware"}, f"vision/{path.name} imports {module}"
            assert not module.startswith("vision.sim"), f"vision/{path.name} imports {module}"
            assert not (module.startswith("companion") and not module.startswith("companion.core")), (
                f"vision/{path.name} imports the wiring ({module})")


def test_score_path_loads_nothing_heavy() -> None:
    code = ("import sys, companion.cli, companion.score, companion.core.gamelog, companion.history;"
            f"print(sorted(m for m in sys.modules if m.split('.')[0] in {FORBIDDEN!r}))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    assert out.stdout.strip() == "[]"
