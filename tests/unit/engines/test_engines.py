"""The engines package loads lazily: importing it, or the library's modules that reach engines,
loads no engine's heavy package (numpy's MiniLM, ONNX Runtime, llama.cpp, Betterleaks)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
HEAVY = ("llama_cpp", "onnxruntime", "onnx", "betterleaks", "torch", "sentence_transformers")
ENGINES = ("skillbank._engines.minilm", "skillbank._engines.minilm_onnx", "skillbank._engines.local")


def _loaded_after(imports: list[str]) -> set[str]:
    """The modules a fresh interpreter holds after importing ``imports``."""
    code = ("import json, sys\n" + "".join(f"import {name}\n" for name in imports)
            + "print(json.dumps(sorted(sys.modules)))")
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True,
                         env={"PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1", "PATH": ""}, check=True)
    return set(json.loads(out.stdout))


def test_importing_the_package_loads_no_engine():
    loaded = _loaded_after(["skillbank._engines"])
    assert not {m for m in loaded if m.startswith("skillbank._engines.")}
    assert not loaded & set(HEAVY)


@pytest.mark.parametrize("module", ["skillbank.embed", "skillbank.chat", "skillbank._scrub",
                                    "skillbank._screen.llm_detector", "skillbank.cli"])
def test_the_modules_that_use_an_engine_load_it_only_when_asked(module):
    loaded = _loaded_after([module])
    assert not loaded & set(ENGINES), sorted(loaded & set(ENGINES))
    assert not loaded & set(HEAVY), sorted(loaded & set(HEAVY))
