"""The library never imports the harness (environments, the simulated policy, the demo).

The harness reads and imports the library; the library's modules — core, store, adapters,
evolution, consistency, local — must work with ``skillbank/envs`` and ``skillbank/demo.py``
deleted. The CLI is the application on top of both: it loads the harness lazily, only inside
the commands that run it (``demo``, ``eval --env``).
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent / "skillbank"
HARNESS = ("skillbank.envs", "skillbank.demo")


def _library_modules() -> list[Path]:
    return [p for p in ROOT.rglob("*.py")
            if not p.is_relative_to(ROOT / "envs") and p != ROOT / "demo.py"
            and not p.is_relative_to(ROOT / "cli")]


def _imports(path: Path) -> list[str]:
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            found.append(module)
            if module == "skillbank":  # from skillbank import envs
                found.extend(f"skillbank.{alias.name}" for alias in node.names)
        elif isinstance(node, ast.Import):
            found.extend(alias.name for alias in node.names)
    return found


def test_no_library_module_imports_the_harness():
    offenders = {str(p.relative_to(ROOT)): m for p in _library_modules() for m in _imports(p)
                 if m.startswith(HARNESS)}
    assert offenders == {}


def test_the_cli_loads_the_harness_only_inside_commands():
    for path in (ROOT / "cli").rglob("*.py"):
        tree = ast.parse(path.read_text())
        top = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
        names = [n.module or "" for n in top if isinstance(n, ast.ImportFrom)] + \
                [a.name for n in top if isinstance(n, ast.Import) for a in n.names]
        assert not [m for m in names if m.startswith(HARNESS)], path
