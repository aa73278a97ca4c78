"""The import contracts (pyproject.toml, ``[tool.importlinter]``) hold, and they can fail.

The library (``skillbank``) never imports its harness (``skillbank_harness``: environments,
the simulated policy, the demo); the harness plugs into the command through entry points. The
library is in layers (a module imports only from the layers below its own) and has no import
cycles; neither has the harness.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
LINT = shutil.which("lint-imports", path=str(Path(sys.executable).parent))


def _lint(cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([LINT, "--no-cache"], cwd=cwd, capture_output=True, text=True,
                          env={"PYTHONPATH": str(cwd), "PATH": str(Path(sys.executable).parent)})


@pytest.fixture(scope="module")
def lint() -> str:
    if LINT is None:
        pytest.fail("lint-imports is missing: pip install -e '.[dev]' installs import-linter")
    return LINT


def test_the_tree_keeps_its_import_contracts(lint):
    result = _lint(ROOT)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Contracts: " in result.stdout and " broken" in result.stdout


def _copy(tmp_path: Path) -> Path:
    """A copy of the tree to add a violating import to."""
    copy = tmp_path / "tree"
    for name in ("skillbank", "skillbank_harness"):
        shutil.copytree(ROOT / name, copy / name, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copy(ROOT / "pyproject.toml", copy / "pyproject.toml")
    return copy


def test_a_library_import_of_the_harness_breaks_the_contract(lint, tmp_path):
    copy = _copy(tmp_path)
    (copy / "skillbank" / "sneaky.py").write_text("from skillbank_harness.envs import base\n")
    result = _lint(copy)
    assert result.returncode != 0
    assert "skillbank.sneaky -> skillbank_harness.envs" in result.stdout


def test_an_import_from_a_higher_layer_breaks_the_layers(lint, tmp_path):
    copy = _copy(tmp_path)
    # The store reaching up into the bank: the kind of import that made the old cycles.
    (copy / "skillbank" / "store" / "sneaky.py").write_text("from skillbank.bank import SkillBank\n")
    result = _lint(copy)
    assert result.returncode != 0
    assert "The library is layered BROKEN" in result.stdout
    assert "skillbank.store.sneaky -> skillbank.bank" in result.stdout


def test_an_import_cycle_breaks_the_contract(lint, tmp_path):
    copy = _copy(tmp_path)
    # Two modules of one layer importing each other, one of them lazily (as index and vectors did).
    (copy / "skillbank" / "store" / "sneaky.py").write_text("def f():\n    from skillbank.store import _sync\n")
    with (copy / "skillbank" / "store" / "_sync.py").open("a") as fh:
        fh.write("\nfrom skillbank.store import sneaky  # noqa: E402\n")
    result = _lint(copy)
    assert result.returncode != 0
    assert "No import cycles BROKEN" in result.stdout


@pytest.mark.parametrize("lazy", [False, True], ids=["top-level", "inside-a-function"])
def test_a_harness_import_cycle_breaks_the_harness_contract(lint, tmp_path, lazy):
    copy = _copy(tmp_path)
    # directives <-> guidance was one of the two cycles (hidden by an import inside a function).
    back = "from skillbank_harness.envs.guidance import read\n"
    with (copy / "skillbank_harness" / "envs" / "directives.py").open("a") as fh:
        fh.write(f"\n\ndef _reader():\n    {back}    return read\n" if lazy else f"\n{back}")
    result = _lint(copy)
    assert result.returncode != 0
    assert "The harness has no import cycles BROKEN" in result.stdout
    assert ".guidance -> .directives" in result.stdout or ".directives -> .guidance" in result.stdout


def test_an_engine_importing_the_onnx_engine_breaks_the_engines_layers(lint, tmp_path):
    copy = _copy(tmp_path)
    # The numpy MiniLM reaching up into the ONNX engine built on it.
    with (copy / "skillbank" / "_engines" / "minilm.py").open("a") as fh:
        fh.write("\n\ndef _onnx():\n    from skillbank._engines import minilm_onnx\n    return minilm_onnx\n")
    result = _lint(copy)
    assert result.returncode != 0
    assert "The engines are layered BROKEN" in result.stdout
    assert "skillbank._engines.minilm -> skillbank._engines.minilm_onnx" in result.stdout
