"""The protocol script's resume (``--measure --resume RUN_DIR``): a cut-short run's finished
phases are read back from its trials log, never run again, and a run that did not finish its
round is refused with what to do. No model: what is tested is what happens before one loads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

BENCH_DIR = Path(__file__).resolve().parents[2] / "benchmarks" / "protocols"


@pytest.fixture()
def rmp(monkeypatch):
    monkeypatch.syspath_prepend(str(BENCH_DIR))
    monkeypatch.syspath_prepend(str(BENCH_DIR.parent))  # bench_real_model, which measure() imports late
    import real_model_protocol

    real_model_protocol.use(max(real_model_protocol.PROTOCOLS))
    return real_model_protocol


def _row(phase, task, trial, success, arm="with"):
    return {"phase": phase, "task_id": task, "trial": trial, "success": success, "arm": arm}


def _log(path: Path, rows) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


def test_finished_phases_are_read_back_with_their_outcomes_in_trial_order(rmp, tmp_path):
    log = _log(tmp_path / "trials.jsonl", [
        _row("evidence", "a#1", 0, True, "without"),
        {"phase": "gate", "task_id": "a#1", "success": False},  # the round's: not a measurement phase
        _row("unseen instances", "b#2", 1, True, "with"), _row("unseen instances", "b#2", 0, False, "with"),
        _row("unseen instances", "b#2", 0, True, "without"),
    ])
    phases = rmp.written_phases(log)
    assert sorted(phases) == ["evidence", "unseen instances"]
    assert rmp.outcomes(phases["unseen instances"], "with") == {"b#2": [False, True]}
    assert rmp.outcomes(phases["unseen instances"], "without") == {"b#2": [True]}
    assert rmp.outcomes(phases["evidence"]) == {"a#1": [True]}


def test_a_line_cut_mid_write_is_named(rmp, tmp_path):
    log = tmp_path / "trials.jsonl"
    log.write_text(json.dumps(_row("evidence", "a#1", 0, True)) + '\n{"phase": "evolu')
    with pytest.raises(SystemExit, match=r"trials.jsonl:2 is not a JSON line .* remove that line to resume"):
        rmp.written_phases(log)


def test_a_run_whose_round_did_not_finish_is_refused(rmp, tmp_path, monkeypatch):
    monkeypatch.setattr(rmp, "TRIALS_LOG", _log(tmp_path / "trials.jsonl", [_row("evidence", "a#1", 0, True)]))
    run = tmp_path / "skillbank-consistency-x"
    (run / "evidence").mkdir(parents=True)
    with pytest.raises(SystemExit, match=r"its evidence or its round \(rule\+llm\) did not finish there"):
        rmp.measure(None, resume=run)
    assert rmp.TRIALS_LOG.read_text().count("\n") == 1  # the log is left as it was


def test_resume_needs_the_run_folder_and_measure(rmp, tmp_path, capsys):
    with pytest.raises(SystemExit):
        rmp.main(["--calibrate", "--resume", str(tmp_path)])
    assert "--resume takes the folder a cut-short --measure run printed" in capsys.readouterr().err
