"""The rooms keep to themselves (issue 23). The game core imports only the standard
library and itself; recognition, the simulator, the web and the hardware import the
core but never the wiring (the modules directly in ``companion/``), nor each other
upwards: recognition never imports the simulator, the web or the hardware; the
simulator never the web or the hardware; the web neither recognition nor the
hardware; the hardware neither recognition nor the web. The wiring imports the
simulator only inside the functions of ``demo`` and ``simulate``. Nothing is loaded
by name at run time."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CORE = sorted((ROOT / "companion" / "core").glob("*.py"))
RECOGNITION = sorted((ROOT / "vision").glob("*.py"))
SIMULATOR = sorted((ROOT / "vision" / "sim").glob("*.py"))
WEB = sorted((ROOT / "web").glob("*.py"))
HARDWARE = sorted((ROOT / "hardware").glob("*.py"))
WIRING = sorted((ROOT / "companion").glob("*.py"))
PRODUCT = [*CORE, *RECOGNITION, *SIMULATOR, *WEB, *HARDWARE, *WIRING]
FORBIDDEN = {"cv2", "numpy", "flask", "gpiozero", "waitress", "vision", "hardware", "web", "PIL"}


def _imports_of(node: ast.AST) -> list[str]:
    """The modules one import statement names (none for any other node)."""
    if isinstance(node, ast.Import):
        return [alias.name for alias in node.names]
    if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
        return [node.module]
    return []


def imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        names.update(_imports_of(node))
    return names


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


def _wiring(module: str) -> bool:
    return module.split(".")[0] == "companion" and not (
        module == "companion.core" or module.startswith("companion.core."))


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


def test_simulator_never_imports_the_web_hardware_or_wiring() -> None:
    assert len(SIMULATOR) >= 4
    for path in SIMULATOR:
        for module in imported_modules(path):
            assert module.split(".")[0] not in {"web", "hardware"}, f"{_rel(path)} imports {module}"
            assert not _wiring(module), f"{_rel(path)} imports the wiring ({module})"


def test_web_imports_neither_vision_hardware_nor_wiring() -> None:
    assert len(WEB) >= 8
    for path in WEB:
        for module in imported_modules(path):
            assert module.split(".")[0] not in {"vision", "hardware"}, (
                f"{_rel(path)} imports {module}: the wiring hands the web what it needs "
                "as create_app's arguments")
            assert not _wiring(module), f"{_rel(path)} imports the wiring ({module})"


def test_hardware_imports_neither_vision_web_nor_wiring() -> None:
    assert len(HARDWARE) >= 4
    for path in HARDWARE:
        for module in imported_modules(path):
            assert module.split(".")[0] not in {"vision", "web"}, f"{_rel(path)} imports {module}"
            assert not _wiring(module), f"{_rel(path)} imports the wiring ({module})"


def test_wiring_imports_the_simulator_only_inside_functions() -> None:
    """``demo`` and ``simulate`` build the simulator through ordinary imports in the
    functions that run them; loading the wiring never loads it."""
    inside: set[str] = set()
    for path in WIRING:
        tree = ast.parse(path.read_text())
        stack: list[ast.AST] = list(tree.body)
        while stack:  # what runs when the module is loaded: all but function bodies
            node = stack.pop()
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
                continue
            for module in _imports_of(node):
                assert not module.startswith("vision.sim"), (
                    f"{_rel(path)} imports {module} when loaded")
            stack.extend(ast.iter_child_nodes(node))
        for func in ast.walk(tree):
            if isinstance(func, ast.FunctionDef):
                for sub in ast.walk(func):
                    if any(m.startswith("vision.sim") for m in _imports_of(sub)):
                        inside.add(f"{path.stem}.{func.name}")
    assert inside == {"cli._simulate", "app.open_camera"}


def test_nothing_is_loaded_by_name() -> None:
    """No ``importlib.import_module`` or ``__import__`` in the product; only the bench
    runner picks its benches by name."""
    for path in [*PRODUCT, *sorted((ROOT / "bench").glob("*.py"))]:
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Call):
                func = node.func
                name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
                if name in ("import_module", "__import__"):
                    assert _rel(path) == "bench/__main__.py", (
                        f"{_rel(path)}:{node.lineno} loads a module by name")
