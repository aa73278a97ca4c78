#!/usr/bin/env python
"""Choose the first stage's band (skillbank._screen.second_layer.CLEAR_CLEAN, CLEAR_INJECTION) on the
training split: the embedding detector alone, no LLM.

    HF_HUB_OFFLINE=1 python scripts/calibrate_injection_stages.py

The split is tests/data/heldout (issue 20): its lines were never trained on by the embedding
weights, so its scores are what new text gets. Each line is scored as add_skill screens it (a
skill's name, description and body); lines the patterns stop never reach the stage. CLEAR_CLEAN is
the highest threshold that lets at most 2% of the injection lines pass unasked, CLEAR_INJECTION the
lowest that flags at most 0.5% of the clean lines unasked. The fresh set (tests/data/heldout_injection_v3)
is never read here.
"""

from __future__ import annotations

import math
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

MAX_RECALL_COST = 0.02  # injection lines the band may wave through as clearly clean
MAX_FP_COST = 0.005  # clean lines the band may flag as clearly injections


def unscreened_scores(lines: list[str]) -> list[float]:
    """The embedding detector's top probability for each line the patterns let through."""
    from hardening_report import version_text  # the text add_skill screens in its ways in

    from skillbank._screen.detector import InjectionDetector
    from skillbank._screen.patterns import injection_findings

    detector = InjectionDetector()
    texts = [t for i, line in enumerate(lines) if not injection_findings(t := version_text(i, line))]
    return [detector.top(t).probability for t in texts]


def band(bad: list[str], good: list[str]) -> tuple[float, float]:
    """(clear_clean, clear_injection) within the costs above, counted against every line of each kind."""
    low = sorted(unscreened_scores(bad))
    high = sorted(unscreened_scores(good), reverse=True)
    spare_bad, spare_good = int(len(bad) * MAX_RECALL_COST), int(len(good) * MAX_FP_COST)
    clear_clean = low[spare_bad] if spare_bad < len(low) else 1.0
    clear_injection = min(1.0, high[spare_good] + 1e-6) if spare_good < len(high) else 0.0
    return clear_clean, max(clear_injection, clear_clean)


def main() -> int:
    from heldout_corpus import clean_lines, injections

    bad, good = [t for _, t in injections()], [t for _, t in clean_lines()]
    clear_clean, clear_injection = band(bad, good)
    print(f"training split: {len(bad)} injection lines, {len(good)} clean lines")
    # Rounded outwards, so the constants keep within the costs (scores tie at a version's
    # boilerplate chunks, and a threshold rounded up past a tie would wave a dozen lines through).
    print(f"CLEAR_CLEAN = {math.floor(clear_clean * 1000) / 1000}\n"
          f"CLEAR_INJECTION = {math.ceil(clear_injection * 1000) / 1000}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
