"""The pooled reading (benchmarks/protocols/pool_protocols.py) against each run's own committed table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "protocols"


@pytest.fixture
def pool(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    import pool_protocols

    return pool_protocols


def _table(version: int) -> dict:
    return json.loads((BENCH_DIR / f"consistency_measurement_v{version}.json").read_text())["table"]


@pytest.mark.parametrize("version", [21, 22])
def test_one_run_pooled_is_that_runs_own_table(pool, version: int) -> None:
    run = pool.tier_scores(version)
    for tier, row in _table(version).items():
        arms = pool.pooled([run], tier)
        assert len(arms["without"]) == row["templates"]
        for arm in ("without", "with"):
            mean = sum(arms[arm].values()) / len(arms[arm])
            assert mean == pytest.approx(row["pass^3"][arm])


def test_pooling_averages_each_template_over_the_runs(pool) -> None:
    runs = [pool.tier_scores(21), pool.tier_scores(22)]
    for tier in ("evolution", "unseen instances", "unseen templates"):
        arms = pool.pooled(runs, tier)
        for arm in ("without", "with"):
            mean = sum(arms[arm].values()) / len(arms[arm])
            both = (_table(21)[tier]["pass^3"][arm] + _table(22)[tier]["pass^3"][arm]) / 2
            assert mean == pytest.approx(both)  # the same templates in both runs: a mean of means
        assert all(0.0 <= v <= 1.0 for v in arms["with"].values())


def test_history_has_a_row_per_kept_run_read_as_each_table(monkeypatch, capsys) -> None:
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    import protocol_history

    protocol_history.main(["--resamples", "200"])
    rows = {line.split(" | ")[0].removeprefix("| "): line for line in capsys.readouterr().out.splitlines()[2:]}
    assert set(rows) == {f"v{v}" for v in protocol_history.versions()}
    assert "skipped" in rows["v2"]  # three forms on one tier
    for version in (21, 22):
        cells = rows[f"v{version}"].split(" | ")[1:]
        for cell, row in zip(cells, _table(version).values()):
            p = row["pass^3"]
            assert cell.startswith(f"{100 * p['without']:.0f} → {100 * p['with']:.0f}, {100 * p['gain']:+.0f} [")
