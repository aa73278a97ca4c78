"""scripts/hardening_report.py's injection checks (issue 32): the first stage's curve, placed from one
verdict per line, and a small run of the staged layer with scripted detectors standing in for
MiniLM and the local model (the real ones are the report's to run)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

import skillbank._screen.second_layer as second_layer
from skillbank.adapters.testing import ScriptedChatModel
from skillbank._screen.detector import InjectionDetector, Score, chunks
from skillbank._screen.llm_detector import LLMDetector

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
import hardening_report as report  # noqa: E402


def test_a_line_is_stopped_by_the_patterns_the_clear_band_or_the_llm():
    loud, sure, fine, middle_bad, middle_unsure, middle_fine = (
        report.Staging(True, None, "not asked"), report.Staging(False, 0.9995, "clean"),
        report.Staging(False, 0.1, "injection"), report.Staging(False, 0.6, "injection"),
        report.Staging(False, 0.6, "unsure"), report.Staging(False, 0.6, "clean"))
    band = (0.2, 0.999)
    assert [s.stopped(*band) for s in (loud, sure, fine, middle_bad, middle_unsure, middle_fine)] == \
        [True, True, False, True, True, False]
    assert [s.skips_llm(*band) for s in (loud, sure, fine, middle_bad)] == [True, True, True, False]
    # the LLM alone: no line is waved through or flagged by the band
    assert fine.stopped(0.0, 1.01) and not sure.stopped(0.0, 1.01)
    assert report.Staging(False, None, "injection").stopped(*band)  # nothing to score: the LLM decides


def test_the_curve_counts_recall_fp_unsure_and_llm_calls():
    bad = [report.Staging(True, None, "not asked"), report.Staging(False, 0.1, "injection")]
    good = [report.Staging(False, 0.1, "unsure"), report.Staging(False, 0.6, "unsure")]
    rows = report._curve(bad, good)
    assert len(rows) == len(report.CURVE_CLEAR_CLEAN) * len(report.CURVE_CLEAR_INJECTION)
    assert rows["curve: the LLM alone"] == "recall 100.0% (2/2), FP 100.0% (2/2, 2 unsure), LLM asked about 3/4 lines"
    assert rows["curve: clear clean < 0.25, clear injection >= 0.999"] == \
        "recall 50.0% (1/2), FP 50.0% (1/2, 1 unsure), LLM asked about 1/4 lines"


class Scored(InjectionDetector):
    def __init__(self):
        self.threshold = 0.5

    def scores(self, text: str) -> list[Score]:
        return [Score(c, 0.6) for c in chunks(text)]


def test_the_staged_layer_on_every_way_in_with_its_curve(monkeypatch, tmp_path):
    model = ScriptedChatModel([json.dumps({"asks": "x", "reason": "y", "verdict": "clean"})])
    monkeypatch.setattr(second_layer, "_LOADED", {"embedding": Scored(), "llm": LLMDetector(model)})
    monkeypatch.setattr(second_layer, "_UNAVAILABLE", {})
    fig, met = report.heldout_injection(tmp_path, ["patterns+embedding+llm"], 3)
    layer = "patterns+embedding+llm"
    assert fig[f"{layer}/band"] == report._band(second_layer.CLEAR_CLEAN, second_layer.CLEAR_INJECTION) == \
        f"clear clean < {second_layer.CLEAR_CLEAN}, clear injection >= {second_layer.CLEAR_INJECTION}"
    assert f"{layer}/curve: the LLM alone" in fig and f"{layer}/add_skill clean flagged by style" in fig
    assert all(f"{layer}/{way}" in fig for way in report.WAYS_IN)
    # the curve asked about every line the patterns let through; add_skill, the import and the
    # distiller's lint screen the same texts and were answered from those verdicts, and only
    # update_skill's texts (the added line alone) cost a second call each
    asked = int(fig[f"{layer}/curve: the LLM alone"].split("LLM asked about ")[1].split("/")[0])
    assert asked and len(model.received) == 2 * asked
    cost = fig[f"{layer}/LLM cost"]
    assert f"{2 * asked} model calls" in cost and f"{3 * asked} from its verdicts" in cost
    assert fig[f"{layer}/add_skill"].startswith("recall ") and not met


def test_a_calibration_run_can_ask_for_the_curve_alone(monkeypatch, tmp_path):
    model = ScriptedChatModel([json.dumps({"asks": "x", "reason": "y", "verdict": "unsure"})])
    monkeypatch.setattr(second_layer, "_LOADED", {"embedding": Scored(), "llm": LLMDetector(model)})
    monkeypatch.setattr(second_layer, "_UNAVAILABLE", {})
    fig, _ = report.heldout_injection(tmp_path, ["patterns+embedding+llm"], 3, curve_only=True)
    layer = "patterns+embedding+llm"
    asked = int(fig[f"{layer}/curve: the LLM alone"].split("LLM asked about ")[1].split("/")[0])
    assert len(model.received) == asked and f"{asked} unsure (held for review)" in fig[f"{layer}/LLM cost"]
    assert not [k for k in fig if k.endswith(report.WAYS_IN)]


@pytest.mark.parametrize("check", ["heldout-injection", "heldout-injection-v3"])
def test_both_corpora_read(check):
    bad, good = report._corpus(check)
    assert len(bad) >= 120 and len(good) >= 200
