"""SIGKILL in the middle of an evolution round (hardening, item 2)."""

from __future__ import annotations

import pytest

from test_hardening_support import crash_evolution


@pytest.mark.slow
def test_kill_9_during_evolution_rounds_never_half_writes(tmp_path):
    result = crash_evolution(str(tmp_path / "bank"), attempts=12, seed=11, families=120)
    assert result["failures"] == []
    assert result["killed"] >= 6  # most attempts really died mid-round (seeded, so stable)
    assert result["versions"] > 0 and result["final_round"] >= 1
