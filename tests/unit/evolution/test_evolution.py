"""The evolution round, step by step, on a real bank (SQLite file + Chroma) with the hash embedder."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from conftest import teaches

from skillbank.evolution import (
    ChangeKind,
    EvolutionConfig,
    GateResult,
    RuleDistiller,
    evolve,
    list_candidates,
    promote,
    reject,
)
from skillbank.evolution._batch import load_batch
from skillbank.evolution._cluster import cluster_runs
from skillbank.evolution._evidence import hidden_literals, to_run
from skillbank.evolution._exploit import claimed_actions, flag_exploits
from skillbank.evolution._templates import task_template
from skillbank.lessons import Lesson, LessonKind, MethodStep
from skillbank.models import LimitEvent, SkillStatus, utcnow
from skillbank._provenance import Source, evidence, recorded
from test_evolution_support import eta, injected, refund, search_budget, traj, window

REFUND_BODY = "Look the order up, then refund it."


def procedure(*tools):
    """A method written by a person: these tools in this order."""
    return Lesson(kind=LessonKind.procedure, steps=tuple(MethodStep(tool=t) for t in tools))


def save(bank, *trajs):
    return [bank.trajectories.save(t) for t in trajs]


def by_name(bank, name):
    return bank.get_skill(name)


def refund_skill(bank, **kw):
    return bank.add_skill(name="refund-orders", description="Refund a customer's order",
                          body=kw.pop("body", REFUND_BODY), kind="procedure",
                          tools=["find_order", "issue_refund"], **kw)


# -- steps 1, 4, 5, 10: a first round on an empty bank ----------------------------------------------


def test_first_round_learns_a_procedure_and_guards_with_provenance(bank):
    ok = save(bank, *(refund(i) for i in range(4)))
    bad = save(bank, *(refund(i, success=False, skip_check=True) for i in range(4, 7)))
    win = save(bank, window(0), window(1))
    report = evolve(bank)

    kinds = {c.skill: c.kind for c in report.changes}
    assert kinds == {"refund-order-arrived-damaged": "add", "when-open-window-is-unavailable": "add"}
    proc = by_name(bank, "refund-order-arrived-damaged")
    assert proc.status == SkillStatus.candidate and proc.kind.value == "procedure"
    assert teaches(proc, "procedure", tools=("find_order", "check_refund_policy", "issue_refund"))
    assert teaches(proc, "check_first", check="check_refund_policy", tool="issue_refund")
    # Values became placeholders: no order number, customer or amount from the runs.
    assert "<order_id>" in proc.body and "<amount>" in proc.body
    for literal in ("4000", "4001", "Alice", "20.5", "retail-refund"):
        assert literal not in proc.body + proc.description
    first = bank.history(proc.id)[0]
    assert first.author == "evolution:rule" and "recurring method" in first.reason
    assert set(ok) <= set(first.provenance) and set(bad) <= set(first.provenance)

    guard = by_name(bank, "when-open-window-is-unavailable")
    assert guard.kind.value == "guard" and guard.tools == ("open_window",)
    assert teaches(guard, "missing_tool", tool="open_window")
    assert "tell the user that `open_window` is unavailable" in guard.body
    first_guard = bank.history(guard.id)[0]
    assert set(evidence(first_guard.provenance)) == set(win)
    assert recorded(first_guard.provenance).source == Source.rule_distiller

    text = str(report)
    assert "add" in text and "refund-order-arrived-damaged" in text and ok[0] in text + json.dumps(report.to_dict())


def test_watermark_each_trajectory_is_evidence_once_and_since_rereads(bank):
    save(bank, *(refund(i) for i in range(3)))
    first = evolve(bank)
    assert first.trajectories == 3 and first.round == 1
    assert bank.rounds.current() == 1
    assert {r["consumed_round"] for r in bank.store.query("SELECT consumed_round FROM trajectories")} == {1}
    second = evolve(bank)
    assert second.trajectories == 0 and second.changes == [] and second.round == 2
    # A re-run over a window reads consumed trajectories again; the same proposal is no change.
    again = evolve(bank, since=utcnow() - timedelta(days=1))
    assert again.trajectories == 3
    assert [c.kind for c in again.changes] == []
    assert {r["consumed_round"] for r in bank.store.query("SELECT consumed_round FROM trajectories")} == {3}
    # An unlabelled trajectory is never evidence.
    unlabelled = refund(9)
    unlabelled.outcome = None
    save(bank, unlabelled)
    assert evolve(bank).trajectories == 0


def test_dry_run_is_the_plan_and_writes_nothing(bank):
    save(bank, *(refund(i) for i in range(3)), window(0), window(1))
    before = bank.stats()
    report = evolve(bank, dry_run=True)
    assert {c.status for c in report.changes} == {"planned"} and len(report.changes) == 2
    assert "Dry run" in str(report)
    assert bank.stats() == before and bank.rounds.current() == 0
    assert evolve(bank).trajectories == 5  # still unconsumed


# -- step 2: grouping by the skill versions used ------------------------------------------------


def test_grouping_by_skill_versions_and_uncovered_pile(bank):
    skill = refund_skill(bank)
    save(bank, refund(0, skill=skill))
    skill = bank.update_skill(skill.id, body="Find the order, check the policy, refund.", reason="edit")
    save(bank, refund(1, skill=skill), refund(2))
    batch = load_batch(bank)
    assert sorted(v for r in batch.by_skill[skill.id] for v in r.skills[skill.id]) == [1, 2]
    assert len(batch.uncovered) == 1 and not batch.uncovered[0].skills


# -- step 3: contrast, capability sections, narrowing, splits, harmful retire ----------------------


def test_used_skill_gets_common_mistakes_as_a_draft_and_stays_active(bank):
    skill = refund_skill(bank)
    ok = save(bank, *(refund(i, skill=skill) for i in range(3)))
    bad = save(bank, *(refund(i, success=False, skip_check=True, skill=skill) for i in range(3, 6)))
    report = evolve(bank)
    change = next(c for c in report.changes if c.skill_id == skill.id)
    assert change.kind == "update" and change.status == "candidate"
    assert "common mistakes" in change.reason and set(bad) <= set(change.evidence)
    # The active version keeps being injected while the edit waits, as a draft.
    assert bank.get_skill(skill.id).status == SkillStatus.active
    assert bank.get_skill(skill.id).body == REFUND_BODY
    draft = bank.get_skill(change.candidate_id)
    assert draft.name == "refund-orders-next" and draft.status == SkillStatus.candidate
    assert teaches(draft, "check_first", check="check_refund_policy", tool="issue_refund")
    pending = {p.skill.id: p for p in list_candidates(bank)}[draft.id]
    assert pending.target == skill.id and pending.kind == "update"

    promoted = promote(bank, draft.id, reason="looks right")
    assert promoted.id == skill.id and promoted.status == SkillStatus.active
    assert teaches(promoted, "check_first", check="check_refund_policy", tool="issue_refund")
    last = bank.history(skill.id)[-1]
    assert set(last.provenance) >= set(bad) and "looks right" in last.reason
    assert "evolution:rule" in last.reason or "common mistakes" in last.reason
    assert bank.get_skill(draft.id).status == SkillStatus.retired
    assert list_candidates(bank) == []
    del ok


def test_an_edit_already_waiting_is_not_proposed_again(bank):
    skill = refund_skill(bank)
    save(bank, *(refund(i, skill=skill) for i in range(3)),
         *(refund(i, success=False, skip_check=True, skill=skill) for i in range(3, 6)))
    first = evolve(bank)
    again = evolve(bank, since=utcnow() - timedelta(days=1))
    assert again.changes == []
    assert "already waiting for review" in again.skipped[0].note
    assert first.changes[0].candidate_id in again.skipped[0].note
    assert bank.get_skill(first.changes[0].candidate_id).version == 1


def test_used_skill_learns_when_a_capability_is_missing(bank):
    skill = bank.add_skill(name="car-comfort", description="Adjust the car's windows and climate",
                           body="Use the car tools the user asks for.", kind="procedure",
                           tools=["open_window", "set_climate"])
    save(bank, *(window(i, skill=skill) for i in range(2)))
    report = evolve(bank)
    assert [c.kind for c in report.changes] == ["update"]  # owned by the skill: no separate guard
    draft = bank.get_skill(report.changes[0].candidate_id)
    assert "## When a tool is missing or falls short" in draft.body
    assert teaches(draft, "missing_tool", tool="open_window")


def test_description_narrowed_where_the_skill_did_not_apply(bank):
    skill = refund_skill(bank)
    save(bank, *(refund(i, skill=skill) for i in range(3)))
    misfits = [search_budget(i, success=False, calls_made=2) for i in range(3)]
    for t in misfits:
        t.injections = injected(skill)
        t.limit_events = []
    save(bank, *misfits)
    report = evolve(bank)
    change = next(c for c in report.changes if c.skill_id == skill.id)
    draft = bank.get_skill(change.candidate_id)
    assert "Not for requests" in draft.description and "efficiency" in draft.description
    assert "narrowed" in change.reason


def test_skill_with_two_unrelated_methods_is_split(bank):
    skill = bank.add_skill(name="order-help", description="Help with orders",
                           body="Help the customer with their order.", kind="procedure",
                           tools=["find_order", "check_refund_policy", "issue_refund", "track_order"])
    save(bank, *(refund(i, skill=skill) for i in range(3)))
    save(bank, *(refund(i, success=False, skip_check=True, skill=skill) for i in range(3, 5)))
    tracked = [traj(f"Where is parcel {800 + i}?", [
        ("track_order", {"order_id": f"{800 + i}"}, '{"carrier": "DHL"}'),
        ("carrier_status", {"carrier": "DHL", "order_id": f"{800 + i}"}, "in transit")],
        success=True, answer="It is in transit.", injections=injected(skill)) for i in range(3)]
    save(bank, *tracked)
    report = evolve(bank)
    kinds = sorted(c.kind for c in report.changes)
    assert kinds == ["split", "split"]
    spun = next(c for c in report.changes if c.skill_id != skill.id)
    new = bank.get_skill(spun.skill_id)
    assert teaches(new, "procedure", tools=("track_order", "carrier_status"))
    assert new.status == SkillStatus.candidate
    narrowed = bank.get_skill(next(c for c in report.changes if c.skill_id == skill.id).candidate_id)
    assert teaches(narrowed, "procedure", tools=("find_order", "check_refund_policy", "issue_refund"))


def test_overlong_skill_is_split_into_a_pitfall_skill(bank):
    long_lead = "Refund orders carefully. " + "Be precise and polite with the customer. " * 60
    skill = refund_skill(bank, body=long_lead)
    save(bank, *(refund(i, skill=skill) for i in range(3)))
    save(bank, *(refund(i, success=False, skip_check=True, skill=skill) for i in range(3, 6)))
    report = evolve(bank, config=EvolutionConfig(split_chars=1500, max_body_chars=4000))
    spun = next(c for c in report.changes if c.skill_id != skill.id)
    pit = bank.get_skill(spun.skill_id)
    assert pit.name == "refund-orders-pitfalls" and pit.kind.value == "pitfall"
    assert teaches(pit, "check_first", check="check_refund_policy", tool="issue_refund")
    main = bank.get_skill(next(c for c in report.changes if c.skill_id == skill.id).candidate_id)
    assert "## Common mistakes" not in main.body


def test_harmful_skill_is_retired_with_the_rule_documented(bank):
    bad_skill = bank.add_skill(name="skip-the-check", description="Refund fast",
                               body="Refund immediately, no need to look anything up.",
                               kind="procedure", tools=["issue_refund"])
    fine_skill = bank.add_skill(name="be-polite", description="Refund politely",
                                body="Be polite.", kind="policy")
    with_it = [refund(i, success=i % 5 == 0, skip_check=True, skill=bad_skill, task_type="refund")
               for i in range(10)]
    without = [refund(i, success=i % 10 != 0, task_type="refund") for i in range(10, 20)]
    few = [refund(i, success=False, skill=fine_skill, task_type="refund") for i in range(20, 23)]
    save(bank, *with_it, *without, *few)
    report = evolve(bank, config=EvolutionConfig(max_retire_fraction=0.5))
    retired = [c for c in report.changes if c.kind == "retire"]
    assert [c.skill for c in retired] == ["skip-the-check"]
    assert "harmful" in retired[0].reason and "20%" in retired[0].reason
    assert bank.get_skill(bad_skill.id).status == SkillStatus.retired
    last = bank.history(bad_skill.id)[-1]
    assert last.status == SkillStatus.retired and set(last.provenance) == {t.id for t in with_it}
    # Three failures are not enough evidence to call a skill harmful.
    assert bank.get_skill(fine_skill.id).status == SkillStatus.active


def test_retire_fraction_caps_a_round(bank):
    skills = [bank.add_skill(name=f"bad-{n}", description=f"Refund variant {n}", body="Refund now.",
                             tools=["issue_refund"]) for n in range(3)]
    for n in range(3):
        bank.add_skill(name=f"other-{n}", description=f"Unrelated {n}", body="Other advice.")
    trajs = []
    for n, s in enumerate(skills):
        trajs += [refund(100 * n + i, success=False, skip_check=True, skill=s, task_type="refund")
                  for i in range(9)]
    trajs += [refund(900 + i, task_type="refund") for i in range(12)]
    save(bank, *trajs)
    report = evolve(bank, config=EvolutionConfig(max_retire_fraction=0.2))  # ceil(0.2 * 6) = 2
    assert len([c for c in report.changes if c.kind == "retire"]) == 2
    assert any("retire cap" in (c.note or "") for c in report.skipped)


# -- step 4: the uncovered pile ----------------------------------------------------------------


def test_new_skill_needs_min_support(bank):
    save(bank, refund(0))
    assert evolve(bank).changes == []
    save(bank, refund(1))
    assert evolve(bank, since=utcnow() - timedelta(days=1), min_support=3).changes == []
    report = evolve(bank, since=utcnow() - timedelta(days=1))
    assert [c.kind for c in report.changes] == ["add"]


def test_clustering_separates_task_families_with_the_same_tools(bank):
    a = [traj(f"Translate the note number {i} into French", [("lookup", {"q": f"n{i}"}, "ok")], success=True)
         for i in range(3)]
    b = [traj(f"Summarise yesterday's sales report {i}", [("lookup", {"q": f"r{i}"}, "ok")], success=True)
         for i in range(3)]
    runs = [to_run(t) for t in a + b]
    clusters = cluster_runs(runs, bank.embedder, threshold=0.75)
    groups = sorted(sorted(r.id for r in c.runs) for c in clusters)
    assert groups == sorted([sorted(t.id for t in a), sorted(t.id for t in b)])
    # Over the embedding cap, runs are grouped by their tool signature instead.
    capped = cluster_runs(runs, bank.embedder, max_embed=0)
    assert len(capped) == 1 and capped[0].key == "tools:lookup"
    assert task_template("Refund order 4512 for Alice") == "refund order <num> for <name>"


def test_an_apostrophe_is_no_quote_in_a_template():
    # protocol v19: "'d like a late check-out at one o'" was read as a quoted value, so this
    # wording and "... at a quarter past two." of the same request were different templates
    assert task_template("For reservation R-4525, I'd like a late check-out at one o'clock.") == \
        "for reservation <id>, i'd like a late check-out at one o'clock."
    assert task_template("Don't book 'the big room' today, it's taken.") == "don't book <text> today, it's taken."
    assert task_template('Schedule "standup" at 9') == "schedule <text> at <num>"


# -- step 5: limits ----------------------------------------------------------------------------


def test_limit_failures_become_one_guard_per_type_and_situation(bank):
    save(bank, window(0), window(1), eta(0), eta(1), search_budget(0), search_budget(1))
    # A success that came close to the six-call budget is evidence too.
    close = save(bank, search_budget(2, success=True, calls_made=5))
    easy = save(bank, search_budget(3, success=True, calls_made=2))
    report = evolve(bank)
    names = sorted(c.skill for c in report.changes)
    assert names == ["finish-within-steps-budget-stop-repeating-search",
                     "when-open-window-is-unavailable", "when-track-order-eta-is-unknown"]
    budget = by_name(bank, "finish-within-steps-budget-stop-repeating-search")
    assert [x.budget for x in budget.content.lessons if x.kind.value == "budget"] == [6]  # the recorded tool-call limit
    assert "answer with what is known" in budget.body
    prov = set(bank.history(budget.id)[0].provenance)
    assert set(close) <= prov and not set(easy) & prov
    unknown = by_name(bank, "when-track-order-eta-is-unknown")
    assert teaches(unknown, "unknown_field", tool="track_order", field="eta")


def test_rate_limits_are_not_lessons(bank):
    t = refund(0, success=False)
    t.limit_events = [__import__("skillbank.models", fromlist=["LimitEvent"]).LimitEvent(
        type="rate_limit", step=1, detail="429 from provider")]
    save(bank, t)
    assert evolve(bank).situations == 0


# -- step 6: evidence as the agent saw it ----------------------------------------------------------


def test_runs_hold_only_what_the_agent_saw(bank):
    t = refund(3, success=False, skip_check=True)
    t.labels = {"expected_answer": "REFUND-99-OK", "split": "train_v2"}
    save(bank, t)
    batch = load_batch(bank)
    run = batch.runs[0]
    visible = json.dumps({"task": run.task, "calls": [c.__dict__ for c in run.calls], "answer": run.answer,
                          "limits": [h.__dict__ for h in run.limits]}, default=str)
    for hidden in ("retail-refund-0003", "REFUND-99-OK", "train_v2", "expected refund policy"):
        assert hidden not in visible
    assert "Refund order 4003" in run.task and [c.tool for c in run.calls] == ["find_order", "issue_refund"]
    why = hidden_literals([t]).values
    assert why["retail-refund-0003"] == "task id" and why["refund-99-ok"] == "expected answer"
    assert why["train_v2"] == "benchmark label"


# -- step 8: de-duplication ----------------------------------------------------------------------


def test_new_skill_similar_to_an_existing_one_becomes_a_merge(bank):
    existing = bank.add_skill(
        name="refund-damaged-orders", description="Refund orders that arrived damaged",
        lessons=[procedure("find_order", "check_refund_policy", "issue_refund")],
        kind="procedure", tools=["find_order", "check_refund_policy", "issue_refund"])
    save(bank, *(refund(i) for i in range(3)), *(refund(i, success=False, skip_check=True) for i in range(3, 5)))
    report = evolve(bank)
    assert [c.kind for c in report.changes] == ["merge"]
    change = report.changes[0]
    assert change.skill_id == existing.id and "merged into similar skill" in change.reason
    draft = bank.get_skill(change.candidate_id)
    assert teaches(draft, "check_first", check="check_refund_policy", tool="issue_refund")
    # no near-duplicate skill: one skill, whose pending version waits in a draft row
    assert len(bank.list_skills()) == 1 and len(bank.list_skills(drafts=True)) == 2


def test_existing_near_duplicates_are_merged_and_one_retired_on_promotion(bank):
    method = procedure("find_order", "issue_refund")
    a = bank.add_skill(name="refund-an-order", description="Refund an order for a customer", lessons=[method],
                       tools=["find_order", "issue_refund"])
    b = bank.add_skill(name="order-refunds", description="Refund orders",
                       lessons=[method, Lesson(kind=LessonKind.guidance, text="Be polite.")],
                       tools=["find_order", "issue_refund"])
    save(bank, refund(0))
    report = evolve(bank)
    merge = [c for c in report.changes if c.kind == "merge"]
    assert len(merge) == 1 and "near-duplicates" in merge[0].reason
    keep = bank.get_skill(promote(bank, merge[0].candidate_id).id)
    gone = b if keep.id == a.id else a
    assert keep.status == SkillStatus.active and bank.get_skill(gone.id).status == SkillStatus.retired
    assert "merged into" in bank.history(gone.id)[-1].reason


# -- step 9: the bank budget ------------------------------------------------------------------------


def test_bank_budget_retires_least_useful_within_the_fraction(bank):
    skills = [bank.add_skill(name=f"tip-{n}", description=f"Tip number {n}", body="Some advice. " * 20)
              for n in range(10)]
    # Give tip-0 a poor record and tip-9 a good one.
    save(bank, *(refund(i, success=False, skill=skills[0]) for i in range(3)),
         *(refund(i, skill=skills[9]) for i in range(3, 6)))
    report = evolve(bank, config=EvolutionConfig(max_active=5, max_retire_fraction=0.2, harm_min_uses=100))
    retired = [c for c in report.changes if c.kind == "retire"]
    assert len(retired) == 2 and retired[0].skill == "tip-0"
    assert all("bank budget" in c.reason for c in retired)
    assert bank.get_skill(skills[9].id).status == SkillStatus.active
    assert bank.skills.count(SkillStatus.active) == 8


def test_bank_budget_on_total_rendered_size(bank):
    for n in range(4):
        bank.add_skill(name=f"long-tip-{n}", description=f"Tip {n}", body="Detailed advice. " * 100)
    save(bank, refund(0))
    report = evolve(bank, config=EvolutionConfig(max_rendered_tokens=1000, max_retire_fraction=0.5))
    retired = [c for c in report.changes if c.kind == "retire"]
    assert len(retired) == 2 and "rendered tokens" in retired[0].reason


# -- step 11: the gate ------------------------------------------------------------------------


def _gate_bank(bank):
    save(bank, *(refund(i) for i in range(3)), *(refund(i, success=False, skip_check=True) for i in range(3, 5)))
    save(bank, window(0), window(1), eta(0), eta(1))


def test_gate_promotes_only_attributable_gains_without_regressions(bank):
    _gate_bank(bank)
    seen = {}

    def validate(candidate, task_ids):
        seen[candidate.name] = list(task_ids)
        if candidate.name == "when-track-order-eta-is-unknown":
            return GateResult(gain=0.3, regressions=["track-000"])
        if candidate.name == "when-open-window-is-unavailable":
            return GateResult(gain=0.0)
        return GateResult(gain=0.25, checked=task_ids)

    report = evolve(bank, validate=validate, auto_promote=True)
    status = {c.skill: c.status for c in report.changes}
    assert status == {"refund-order-arrived-damaged": "active", "when-open-window-is-unavailable": "rejected",
                      "when-track-order-eta-is-unknown": "rejected"}
    proc_tasks = seen["refund-order-arrived-damaged"]
    assert proc_tasks[:5] == sorted(f"retail-refund-{i:04d}" for i in range(5))
    assert set(proc_tasks[5:]) <= {"car-000", "car-001", "track-000", "track-001"}  # the held-out sample
    assert {t.split("-")[0] for t in proc_tasks[5:]} == {"car", "track"}
    assert bank.get_skill("refund-order-arrived-damaged").status == SkillStatus.active
    assert "gate passed" in bank.history("refund-order-arrived-damaged")[-1].reason
    assert bank.get_skill("when-track-order-eta-is-unknown").status == SkillStatus.retired
    # The rejected edit is remembered: a re-run over the same evidence does not propose it again.
    again = evolve(bank, since=utcnow() - timedelta(days=1), validate=validate, auto_promote=True)
    notes = {c.skill: c.note for c in again.skipped}
    assert "rejected" in notes["when-track-order-eta-is-unknown"]
    assert "rejected" in notes["when-open-window-is-unavailable"]
    assert "already covered" in notes["refund-order-arrived-damaged"]
    assert again.changes == []


def test_gate_respects_the_evaluation_budget(bank):
    _gate_bank(bank)
    calls = []

    def validate(candidate, task_ids):
        calls.append(candidate.name)
        return GateResult(gain=1.0, cost=2)

    report = evolve(bank, validate=validate, auto_promote=True, eval_budget=3)
    assert len(calls) == 2
    assert sorted(c.status for c in report.changes) == ["active", "active", "candidate"]
    assert any(d.detail == "evaluation budget spent" for d in report.gate)


def test_without_a_validator_candidates_wait_unless_a_policy_promotes(bank):
    _gate_bank(bank)
    report = evolve(bank, auto_promote=True)
    assert {c.status for c in report.changes} == {"candidate"}
    assert "needs a validation function" in report.gate[0].detail
    bank2_report = evolve(bank, since=utcnow() - timedelta(days=1), promote_policy="guards")
    assert bank2_report.changes == []  # same proposals: already candidates
    for p in list_candidates(bank):
        reject(bank, p.skill.id, reason="not now")
    assert list_candidates(bank) == []


def test_promote_policy_guards_promotes_only_template_guards(bank):
    _gate_bank(bank)
    report = evolve(bank, promote_policy="guards")
    status = {c.skill: c.status for c in report.changes}
    assert status["when-open-window-is-unavailable"] == "active"
    assert status["when-track-order-eta-is-unknown"] == "active"
    assert status["refund-order-arrived-damaged"] == "candidate"


def test_rolled_back_edit_is_not_proposed_again(bank):
    skill = refund_skill(bank)
    save(bank, *(refund(i, skill=skill) for i in range(3)),
         *(refund(i, success=False, skip_check=True, skill=skill) for i in range(3, 6)))
    report = evolve(bank, promote_policy="all")
    assert report.changes[0].status == "active"
    edited = bank.get_skill(skill.id)
    bank.rollback(skill.id, to_version=edited.version - 1, reason="worse in production")
    again = evolve(bank, since=utcnow() - timedelta(days=1))
    assert [c.kind for c in again.changes] == []
    assert any("rejected or rolled back" in c.note for c in again.skipped)


# -- exploits ----------------------------------------------------------------------------------


def test_exploit_successes_are_flagged_and_not_learned_from(bank):
    honest = [refund(i) for i in range(4)]
    shortcut = [traj(f"Refund order {5000 + i} for Priya, it arrived damaged.", [], success=True,
                     answer="Done, refunded.", task_type=None) for i in range(3)]
    claim = traj("Refund order 6001 for Omar, it arrived damaged.",
                 [("find_order", {"order_id": "6001"}, "{}"),
                  ("check_refund_policy", {"order_id": "6001"}, "{}")], success=True,
                 answer="I have refunded your order.")
    save(bank, *honest, *shortcut, claim)
    report = evolve(bank)
    assert set(report.exploits) == {t.id for t in shortcut} | {claim.id}
    assert "shortcut" in report.exploits[shortcut[0].id] and "unbacked claim" in report.exploits[claim.id]
    proc = by_name(bank, "refund-order-arrived-damaged")
    assert not {t.id for t in shortcut + [claim]} & set(bank.history(proc.id)[0].provenance)
    assert "Possible environment exploits" in str(report)
    assert claimed_actions("Your booking was cancelled and I have sent the receipt.") == ["cancel", "send"]


def test_skill_whose_successes_are_exploits_is_quarantined(bank):
    lazy = bank.add_skill(name="just-say-done", description="Refund requests",
                          body="Reply that the refund is done.", tools=["issue_refund"])
    save(bank, *(refund(i, task_type="refund") for i in range(4)))
    cheats = [traj(f"Refund order {5000 + i} for Priya, it arrived damaged.", [], success=True,
                   answer="All done.", task_type="refund", injections=injected(lazy)) for i in range(3)]
    save(bank, *cheats)
    report = evolve(bank)
    flag = [c for c in report.changes if c.kind == "flag"]
    assert [c.skill for c in flag] == ["just-say-done"] and "exploit" in flag[0].reason
    assert bank.get_skill(lazy.id).status == SkillStatus.quarantined


def test_exploit_detector_needs_comparable_peers():
    runs = [to_run(refund(i)) for i in range(2)] + [to_run(traj("Refund order 1 for A", [], success=True))]
    for r in runs:
        r.group = "g"
    assert flag_exploits(runs) == {}


# -- the report and the distiller name --------------------------------------------------------------


def test_report_lists_kind_skill_reason_and_evidence(bank):
    save(bank, *(refund(i) for i in range(2)))
    report = evolve(bank, distiller=RuleDistiller())
    line = str(report).splitlines()
    assert any(l.strip().startswith("add") and "refund-order-arrived-damaged" in l and "recurring" in l for l in line)
    assert any("evidence:" in l and report.changes[0].evidence[0] in l for l in line)
    data = report.to_dict()
    assert data["changes"][0]["kind"] == "add" and json.dumps(data)
    assert report.by_kind(ChangeKind.add) == report.changes


def test_config_overrides_are_validated(bank):
    with pytest.raises(TypeError, match="no_such_setting"):
        evolve(bank, no_such_setting=1)  # type: ignore[call-arg]
    assert EvolutionConfig().min_support == 2


def test_limit_details_in_the_adapters_wording_are_understood():
    from skillbank.models import LimitEvent

    t = traj("Cool the car and tell me the cabin humidity", [("get_cabin", {}, '{"humidity": null}')],
             success=False, limits=[
                 LimitEvent(type="unknown_field", step=1, tool="get_cabin",
                            detail="tool result has unknown or null fields: humidity, items[0].window"),
                 LimitEvent(type="invalid_tool_args", step=3, tool="turn_on_ac",
                            detail="Error invoking tool 'turn_on_ac' with kwargs {} with error:\n"
                                   " temperature: Field required\n Please fix the error and try again."),
                 LimitEvent(type="missing_tool", step=5, tool="open_window",
                            detail="Error: open_window is not a valid tool, try one of [turn_on_ac]."),
             ])
    hits = [(h.type.value, h.tool, h.field, h.param) for h in to_run(t).limits]
    assert hits == [("unknown_field", "get_cabin", "humidity", None),
                    ("unknown_field", "get_cabin", "window", None),
                    ("invalid_tool_args", "turn_on_ac", None, "temperature"),
                    ("missing_tool", "open_window", None, None)]


def test_a_rejected_edit_stays_rejected_when_only_its_evidence_counts_change(bank):
    save(bank, window(0), window(1))
    first = evolve(bank)
    reject(bank, first.changes[0].candidate_id, reason="not useful")
    save(bank, window(2), window(3))
    again = evolve(bank)
    assert again.changes == [] and "rejected or rolled back" in again.skipped[0].note


def test_a_validator_that_raises_leaves_candidates_waiting(bank):
    _gate_bank(bank)

    def broken(candidate, task_ids):
        raise RuntimeError("replay server down")

    report = evolve(bank, validate=broken, auto_promote=True)
    assert {c.status for c in report.changes} == {"candidate"}
    assert report.gate and all("replay server down" in d.detail for d in report.gate)


def test_split_narrows_the_tools_of_the_original(bank):
    skill = bank.add_skill(name="order-help", description="Help with orders", body="Help with orders.",
                           kind="procedure", tools=["find_order", "check_refund_policy", "issue_refund",
                                                    "track_order", "carrier_status"])
    save(bank, *(refund(i, skill=skill) for i in range(3)))
    save(bank, *(traj(f"Where is parcel {800 + i}?", [
        ("track_order", {"order_id": f"{800 + i}"}, "{}"), ("carrier_status", {"order_id": f"{800 + i}"}, "ok")],
        success=True, injections=injected(skill)) for i in range(3)))
    report = evolve(bank)
    draft = bank.get_skill(next(c for c in report.changes if c.skill_id == skill.id).candidate_id)
    assert draft.tools == ("find_order", "check_refund_policy", "issue_refund")


def test_bank_budget_holds_from_the_first_round_when_promoting(bank):
    """Retiring after promotion is capped by the retire allowance (zero on an empty bank), so
    the caps must also be checked before each promotion."""
    save(bank, window(0), window(1), eta(0), eta(1), search_budget(0), search_budget(1))
    report = evolve(bank, promote_policy="all", max_active=2)
    assert bank.skills.count(SkillStatus.active) == 2
    waiting = [d for d in report.gate if d.decision == "waiting"]
    assert len(waiting) == 1 and "bank budget full" in waiting[0].detail


def test_a_token_budget_lesson_counts_calls_not_tokens(bank):
    def run(i, *, success, calls, tokens_limit=None):
        t = search_budget(i, success=success, calls_made=calls)
        if not success:
            t.limit_events = [LimitEvent(type="token_budget", step=len(t.steps) - 1,
                                         detail="token budget of 3,000 exhausted",
                                         data={"limit": tokens_limit, "used": 3100})]
        return t

    # Failures burn 3,000 tokens in 6 repeated searches; one success came close (2,800 tokens
    # in 3 calls), another was comfortable (1,300 tokens in 1 call).
    save(bank, run(0, success=False, calls=6, tokens_limit=3000), run(1, success=False, calls=6, tokens_limit=3000))
    close, easy = run(2, success=True, calls=3), run(3, success=True, calls=1)
    close.steps[-1].input_tokens = 1100  # 3 calls x 430 + 1,160 = 2,450 tokens: within 80%
    save(bank, close, easy)
    evolve(bank)
    guard = by_name(bank, "finish-within-tokens-budget-stop-repeating-search")
    assert [x.budget for x in guard.content.lessons if x.kind.value == "budget"] == [3]
    assert close.id in bank.history(guard.id)[0].provenance
    assert easy.id not in bank.history(guard.id)[0].provenance

