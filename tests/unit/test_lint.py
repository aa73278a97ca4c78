"""The library passes its linters: ``ruff check skillbank`` and ``mypy skillbank``.

Both read their settings from pyproject.toml (``[tool.ruff]``, ``[tool.mypy]``; the choices in
docs/decisions/0010-ruff-and-mypy.md). .ci/run runs the same two commands before the tests;
this test keeps a local ``pytest`` run honest too. Both tools come with the dev extra.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import unavailable

ROOT = Path(__file__).resolve().parents[2]


def _run(tool: str, *args: str) -> subprocess.CompletedProcess:
    if importlib.util.find_spec(tool) is None:
        unavailable(f"{tool} is not installed (pip install -e '.[dev]')")
    return subprocess.run([sys.executable, "-m", tool, *args], cwd=ROOT, capture_output=True, text=True,
                          timeout=900)


def test_ruff_finds_nothing_in_the_library() -> None:
    result = _run("ruff", "check", "skillbank")
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow  # about a minute from a cold cache on 2 cores
def test_mypy_finds_nothing_in_the_library() -> None:
    result = _run("mypy", "skillbank")
    assert result.returncode == 0, result.stdout + result.stderr
