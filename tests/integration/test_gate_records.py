"""The gate's evidence is kept (issue 29: "the gate's trials are not kept") and shown (issue 30):
one gate record per measured candidate, written with the decision, on every backend; the skill
page, the candidates queue and ``skillbank candidates show`` read it back."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from skillbank import SkillBank
from skillbank.cli import app
from skillbank.evolution import GateConfig, GateResult, evolve
from skillbank.evolution.gate import Gate
from skillbank.evolution._review import get_pending, list_candidates
from skillbank.models import SkillStatus
from skillbank.store._gate_records import GateRecord, GateVerdict, TaskTrials
from test_evolution_support import eta, refund, window

PROCEDURE = "refund-order-arrived-damaged"
GUARD_REJECTED = "when-track-order-eta-is-unknown"
PLAIN_REJECTED = "when-open-window-is-unavailable"
EVIL_TASK = "<script>alert('xss-task')</script>"


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


# -- shown: the skill page, the candidates queue, the CLI ----------------------------------------------


def _evidence_bank(bank):
    """A candidate measured twice: an earlier version rejected on three tasks (one id carries a
    script tag), the current one on a single task; returns its id and the two records."""
    cand = bank.add_skill("cancel-order", "Cancel an order.", "Call cancel_order once.",
                          status=SkillStatus.candidate, author="evolution:rule")
    older = bank.gate_records.add(GateRecord(
        skill_id=cand.id, version=1, decision=GateVerdict.rejected, round=2,
        reason="gate failed: gain -0.250 (pass^2 -0.33) on 3 task(s) <b>bold</b>", gain=-0.25, cost=12.0,
        pass_hat_k_change=-1 / 3, success_change=-1 / 6,
        trials=(TaskTrials(EVIL_TASK, (True, True), (False, False)), TaskTrials("cancel-1", (True, True), (True, True)),
                TaskTrials("cancel-2", (False, True), (False, True))),
        planned=(EVIL_TASK, "cancel-1", "cancel-2", "cancel-3", "cancel-4"), not_reached=("cancel-3",),
        stopped_early=True))
    cand = bank.update_skill(cand.id, reason="re-proposed", body="Call cancel_order once, then confirm.",
                             status=SkillStatus.candidate)
    newer = bank.gate_records.add(GateRecord(
        skill_id=cand.id, version=cand.version, decision=GateVerdict.decided, reason="a person promoted it first",
        gain=0.5, cost=4.0, pass_hat_k_change=1.0, success_change=0.5,
        trials=(TaskTrials("cancel-1", (False, False), (True, True)),), planned=("cancel-1",)))
    return cand.id, older, newer


@pytest.fixture
def web_client(bank):
    pytest.importorskip("starlette")
    from serve_support import client

    return client(bank)


def test_the_skill_page_shows_each_record_with_its_trials_and_interval(bank, web_client):
    sid, older, newer = _evidence_bank(bank)
    page = web_client.get(f"/skills/{sid}")
    assert page.status_code == 200
    html = page.text
    evidence = html[html.index('id="gate-evidence"'):html.index("<h2>History</h2>")]
    assert evidence.index(f'id="gate-{newer.id}"') < evidence.index(f'id="gate-{older.id}"')  # newest first
    newer_part = evidence[:evidence.index(f'id="gate-{older.id}"')]
    older_part = evidence[evidence.index(f'id="gate-{older.id}"'):]
    assert "decided" in newer_part and "one task: no interval" in newer_part
    assert '<td class="marks">✗✗</td><td class="marks">✓✓</td>' in newer_part
    # three tasks: a 95% bootstrap over tasks of the per-task pass^2 changes (-1, 0, 0)
    assert "95% interval [-1.000, +0.000], bootstrap over 3 tasks" in older_part
    assert "rejected" in older_part and "+0.000" not in newer_part
    assert "Gain</th><td>-0.250 (a bound" in older_part and "Cost</th><td>12</td>" in older_part
    assert "Not reached (run, but the candidate was in none of their prompts): cancel-3" in older_part
    assert "Not run (the verdict was settled first): cancel-4" in older_part
    # bank text is text: the task id and the reason are escaped, never markup
    assert "<script>" not in html and "<b>bold</b>" not in html
    assert "<td>&lt;script&gt;alert(&#39;xss-task&#39;)&lt;/script&gt;</td>" in older_part


def test_a_skill_the_gate_never_measured_says_so(bank, web_client):
    plain = bank.add_skill("lookup-order", "Look an order up first.", "Call get_order.")
    html = web_client.get(f"/skills/{plain.id}").text
    assert 'id="gate-evidence"' in html and "The gate has not measured this skill." in html


def test_the_candidates_queue_links_each_measured_candidate_to_its_evidence(bank, web_client):
    sid, _, newer = _evidence_bank(bank)
    unmeasured = bank.add_skill("refund-order", "Refund.", "Call refund.", status=SkillStatus.candidate)
    html = web_client.get("/candidates").text
    mine = html[html.index(f'id="cand-{sid}"'):]
    mine = mine[:mine.index("</section>")]
    assert f"The gate measured v{newer.version}:" in mine and "gain +0.500" in mine
    assert f'href="/skills/{sid}#gate-{newer.id}"' in mine
    other = html[html.index(f'id="cand-{unmeasured.id}"'):]
    assert "The gate measured" not in other[:other.index("</section>")]


def test_candidates_show_prints_the_latest_record_with_its_trials(bank, cli_env):
    sid, _, newer = _evidence_bank(bank)
    folder = bank.path
    bank.close()
    runner = CliRunner()
    shown = runner.invoke(app, ["candidates", "show", sid, "-d", str(folder)])
    assert shown.exit_code == 0, shown.output
    out = shown.output
    assert "the gate's latest measurement" in out and "decided" in out and "a person promoted it first" in out
    assert "cancel-1" in out and "✗✗" in out and "✓✓" in out and "pass^2 change" in out and "+1.000" in out
    as_json = runner.invoke(app, ["candidates", "show", sid, "-d", str(folder), "--json"])
    gate = json.loads(as_json.stdout)["gate"]
    assert gate["id"] == newer.id and gate["trials"] == [
        {"task_id": "cancel-1", "current": [False, False], "candidate": [True, True]}]
    with SkillBank.open(folder, embedder="hash") as again:
        unmeasured = again.add_skill("refund-order", "Refund.", "Call refund.", status=SkillStatus.candidate)
    none = runner.invoke(app, ["candidates", "show", unmeasured.id, "-d", str(folder)])
    assert none.exit_code == 0 and "the gate's latest measurement" not in none.output
