"""The gate's evidence is kept (issue 29: "the gate's trials are not kept"; issue 30): one gate
record per measured candidate, written with the decision, on every backend."""

from __future__ import annotations

import pytest

from skillbank import SkillBank
from skillbank.evolution import GateConfig, GateResult, evolve
from skillbank.evolution.gate import Gate
from skillbank.evolution.review import get_pending, list_candidates
from skillbank.models import SkillStatus
from skillbank.store.gate_records import GateRecord, GateVerdict, TaskTrials
from test_evolution_support import eta, refund, window

PROCEDURE = "refund-order-arrived-damaged"
GUARD_REJECTED = "when-track-order-eta-is-unknown"
PLAIN_REJECTED = "when-open-window-is-unavailable"


def _fill(bank):
    """Runs from which a round proposes the three candidates named above."""
    for t in [*(refund(i) for i in range(3)), *(refund(i, success=False, skip_check=True) for i in (3, 4)),
              window(0), window(1), eta(0), eta(1)]:
        bank.trajectories.save(t)


def scripted(candidate, task_ids):
    """A validator with a fixed answer per candidate: two kinds of measured evidence and a plain
    result of a user's own validate function (no trials)."""
    if candidate.name == PROCEDURE:
        run = task_ids[:3]
        trials = (TaskTrials(run[0], (False, False), (True, True)), TaskTrials(run[1], (False, True), (True, True)),
                  TaskTrials(run[2], (True, True), (True, True)))
        return GateResult(gain=0.5, cost=16.0, checked=tuple(run), trials=trials, planned=tuple(task_ids),
                          not_reached=(task_ids[3],), stopped_early=True, pass_hat_k_change=2 / 3,
                          success_change=0.5)
    if candidate.name == GUARD_REJECTED:
        return GateResult(gain=0.3, regressions=["track-000"], cost=4.0, checked=("track-000",),
                          trials=(TaskTrials("track-000", (True, True), (False, True)),),
                          planned=("track-000",), pass_hat_k_change=-1.0, success_change=-0.5)
    return GateResult(gain=0.0)


# -- the migration ---------------------------------------------------------------------------------


def test_migration_0004_applies_on_a_0003_bank_without_losing_data(any_bank, backend_target):
    _fill(any_bank)
    report = evolve(any_bank)  # candidates waiting, a finished round, versions and runs
    waiting = {c.candidate_id for c in report.changes}
    skills_before = {s.id: [(v.version, v.content_hash) for v in any_bank.history(s.id)]
                     for s in any_bank.list_skills(drafts=True)}
    migrations = "_sqlite_migrations" if any_bank.store.backend == "sqlite" else "skillbank_migrations"
    with any_bank.store.transaction() as conn:  # back to the schema of the release before 0004
        conn.execute("DROP TABLE gate_records")
        conn.execute(f"DELETE FROM {migrations} WHERE name = ?", ("0004_gate_records",))
    any_bank.close()

    with SkillBank.open(backend_target, embedder="hash") as bank:
        assert {s.id: [(v.version, v.content_hash) for v in bank.history(s.id)]
                for s in bank.list_skills(drafts=True)} == skills_before
        assert {p.skill.id for p in list_candidates(bank)} == waiting
        assert bank.rounds.current() == report.round
        assert len(bank.trajectories.list(limit=None)) == 9
        assert bank.verify(check_index=False).ok
        # the new table works on the migrated bank
        sid = sorted(waiting)[0]
        record = bank.gate_records.add(GateRecord(skill_id=sid, version=1, decision=GateVerdict.rejected,
                                                  reason="measured after the migration", gain=-0.25, cost=2.0))
        assert bank.gate_records.latest_for(sid, 1) == record


# -- the gate records what it decides ----------------------------------------------------------------


def test_a_round_records_promoted_and_rejected_with_their_trials(any_bank, backend_target):
    _fill(any_bank)
    report = evolve(any_bank, validate=scripted, auto_promote=True)
    decided = {c.skill: c for c in report.changes}
    assert {name: c.status for name, c in decided.items()} == {
        PROCEDURE: "active", GUARD_REJECTED: "rejected", PLAIN_REJECTED: "rejected"}

    procedure = decided[PROCEDURE].skill_id
    [promoted] = any_bank.gate_records.for_skill(procedure)
    assert promoted.decision == GateVerdict.promoted and promoted.reason.startswith("gate passed: gain +0.500")
    assert promoted.version == 1 and any_bank.get_skill(procedure).version == 2  # the version measured
    assert promoted.round == report.round and promoted.target_id is None
    assert [t.task_id for t in promoted.trials] == sorted(f"retail-refund-{i:04d}" for i in range(3))
    assert promoted.trials[0] == TaskTrials("retail-refund-0000", (False, False), (True, True))
    assert promoted.not_reached == ("retail-refund-0003",) and promoted.planned[:4] == (
        "retail-refund-0000", "retail-refund-0001", "retail-refund-0002", "retail-refund-0003")
    assert promoted.stopped_early and promoted.cost == 16.0 and promoted.k == 2
    assert promoted.pass_hat_k_change == pytest.approx(2 / 3) and promoted.success_change == 0.5

    [regressed] = any_bank.gate_records.for_skill(decided[GUARD_REJECTED].skill_id)
    assert regressed.decision == GateVerdict.rejected and "regressions on track-000" in regressed.reason
    assert regressed.trials == (TaskTrials("track-000", (True, True), (False, True)),)
    [plain] = any_bank.gate_records.for_skill(decided[PLAIN_REJECTED].skill_id)
    assert plain.decision == GateVerdict.rejected and plain.gain == 0.0
    assert (plain.trials, plain.planned, plain.pass_hat_k_change, plain.k) == ((), (), None, None)

    kept = {sid: any_bank.gate_records.for_skill(sid) for sid in (c.skill_id for c in decided.values())}
    any_bank.close()
    with SkillBank.open(backend_target, embedder="hash") as again:  # kept, not held in memory
        assert {sid: again.gate_records.for_skill(sid) for sid in kept} == kept
        assert again.gate_records.for_version(procedure, 1) == kept[procedure]
        assert again.gate_records.for_version(procedure, 2) == []


def test_a_decision_is_not_kept_without_its_record(bank, monkeypatch):
    """The record is written in the decision's transaction: when it cannot be written, the
    promotion is rolled back with it."""
    _fill(bank)

    def full(record):
        raise RuntimeError("disk full while writing the gate record")

    monkeypatch.setattr(bank.gate_records, "add", full)
    with pytest.raises(RuntimeError, match="disk full"):
        evolve(bank, validate=scripted, auto_promote=True)
    measured = bank.get_skill(PROCEDURE)
    assert measured.status == SkillStatus.candidate and measured.version == 1
    assert not any(v.author == "gate" for v in bank.history(measured.id))


def test_an_edit_measured_as_a_draft_is_shown_on_the_skill_it_edits(bank):
    target = bank.add_skill("lookup-order", "Look an order up first.", "Call get_order.")
    draft = bank.add_skill("lookup-order-next", "Look an order up first, by id.", "Call get_order with the id.",
                           status=SkillStatus.candidate, author="evolution:rule")
    bank.drafts.save_pending(draft.id, {"kind": "update", "target": target.id, "name": target.name,
                                        "base_hash": target.content_hash, "task_ids": ["t1", "t2"], "round": 4})
    trials = (TaskTrials("t1", (False, False), (True, True)), TaskTrials("t2", (True, False), (True, True)))
    gate = Gate(GateConfig(validate=lambda c, t: GateResult(gain=0.75, trials=trials, cost=8.0),
                           auto_promote=True))
    [decision] = gate.run(bank, [get_pending(bank, draft.id)], ["t1", "t2"])
    assert decision.decision == GateVerdict.promoted and decision.active_id == target.id

    [record] = bank.gate_records.for_skill(target.id)  # the edited skill sees its edit's evidence
    assert (record.skill_id, record.version, record.target_id, record.round) == (draft.id, 1, target.id, 4)
    assert bank.gate_records.for_skill(draft.id) == [record]
    assert bank.gate_records.latest_for_each([draft.id, target.id]) == {draft.id: record}
