"""Smoke test: every benchmark script runs with --quick, exits 0 and prints a table.

No timing assertions: the numbers of a --quick run (tiny sizes, hash embedder) mean nothing.
"""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from conftest import unavailable

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks"
SCRIPTS = sorted(p.name for p in BENCH_DIR.glob("bench_*.py"))


def _run(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "SKILLBANK_BENCH_OUT": str(tmp_path / "out")}
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, env=env,
                          timeout=600, cwd=BENCH_DIR.parent)


def _has_table(out: str) -> bool:
    """A rich box, a markdown table, or at least two rows of 3+ space-aligned columns."""
    if "┏" in out or "|---" in out:
        return True
    rows = [line for line in out.splitlines() if len(re.split(r"\s{2,}", line.strip())) >= 3]
    return len(rows) >= 2


def _real_model_missing() -> str | None:
    import importlib.util

    from skillbank._engines.local.fetch import find_model

    if importlib.util.find_spec("llama_cpp") is None:
        return "llama-cpp-python is not installed (skillbank[local])"
    if find_model("0.5b") is None:
        return "the 0.5B model is not fetched (skillbank model fetch --size 0.5b)"
    return None


# bench_real_model.py loads the local model: it is a local_model test (deselected with
# -m "not local_model", like tests/integration/test_local_model.py).
@pytest.mark.parametrize("script", [pytest.param(s, marks=pytest.mark.local_model)
                                    if s == "bench_real_model.py" else s for s in SCRIPTS])
def test_benchmark_quick(script: str, tmp_path: Path) -> None:
    if script == "bench_serve.py" and importlib.util.find_spec("starlette") is None:
        # The README's plain install is skillbank[dev]; the review app is the web extra.
        unavailable("the web extra is not installed (pip install 'skillbank[web]')")
    if script == "bench_real_model.py" and (missing := _real_model_missing()):
        # tests/integration/test_local_model.py is the check that fails in CI without the real model
        pytest.skip(missing)
    results = BENCH_DIR / "RESULTS.md"
    before = results.read_text() if results.exists() else None
    proc = _run([str(BENCH_DIR / script), "--quick"], tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert _has_table(proc.stdout), proc.stdout[-3000:]
    if script in {"bench_retrieval.py", "bench_logging.py", "bench_startup.py", "bench_real_model.py",
                  "bench_capture.py", "bench_scrub.py", "bench_exposure.py"}:
        # quick numbers are never recorded
        assert (results.read_text() if results.exists() else None) == before


def test_run_all_lists_every_benchmark() -> None:
    sys.path.insert(0, str(BENCH_DIR))
    try:
        import run_all
    finally:
        sys.path.remove(str(BENCH_DIR))
    assert [p.name for p in run_all.discover()] == SCRIPTS


def test_growth_quick_is_bounded_and_unrecorded(tmp_path: Path) -> None:
    results = BENCH_DIR / "RESULTS.md"
    before = results.read_text() if results.exists() else None
    # A cap of one active skill, which the budget-off arm outgrows in three quick rounds: the
    # verdict is about a cap that binds (at the defaults the quick bank never reaches them).
    proc = _run([str(BENCH_DIR / "bench_growth.py"), "--quick", "--max-active", "1"], tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert _has_table(proc.stdout), proc.stdout[-3000:]
    assert "Verdict: BOUNDED" in proc.stdout and "the caps bound" in proc.stdout, proc.stdout[-3000:]
    assert "max 1 active skills of 1" in proc.stdout, proc.stdout[-3000:]
    assert "budget off" in proc.stdout
    assert (results.read_text() if results.exists() else None) == before


def test_middleware_benchmark_really_injects(tmp_path: Path) -> None:
    """A retrieval that fails falls back to no skills (by design, in the agent), which would
    let the benchmark time an injection arm that injects nothing: check it does inject."""
    import json

    proc = _run([str(BENCH_DIR / "bench_middleware.py"), "--quick", "--embedder", "hash", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert "retrieval_median_ms" in report["injection"] and report["query_cache"]["texts"] > 0
    assert "retrieval failed" not in proc.stderr
    assert report["injection"]["prefix_reuse"] > report["baseline"]["prefix_reuse"]  # a stable block


def test_exposure_benchmark_really_draws_and_records(tmp_path: Path) -> None:
    """The live arm must draw and store exposures and the other none, or the benchmark would
    time two arms that do the same work."""
    import json

    proc = _run([str(BENCH_DIR / "bench_exposure.py"), "--quick", "--json"], tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["live on"]["exposures_per_turn"] > 0 and report["exposures_stored"] > 0
    assert report["live off"]["exposures_per_turn"] == 0
    assert report["turns_per_arm"] > 0 and "median_ms" in report["added"] and "p95_ms" in report["added"]
