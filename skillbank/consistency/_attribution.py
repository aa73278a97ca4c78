"""Which skills go with a change in consistency, and which set each skill was learned from.

:func:`attribute` compares two arms of one measurement, paired by task:

* for each task whose pass^k moved between the arms, the skills injected into its trials in
  the treatment arm (how many trials each was injected into);
* for each injected skill, its success rate over the trials it was injected into, against the
  baseline arm's success rate on the *same tasks* (all their baseline trials). The difference is
  an association on those tasks, not a causal estimate: several skills are often injected
  together, and each row counts every trial the skill was in.

:func:`skill_provenance` answers the held-out question: for every skill, the trajectories its
versions were distilled from (their provenance) and the split those trajectories were measured
on. A skill evolved only on ``train`` trajectories and measured on ``held_out`` tasks is an
honest held-out result; any ``held_out`` evidence is flagged.
"""

from __future__ import annotations

from collections import defaultdict
from typing import TYPE_CHECKING, Any, Iterable, Protocol, Sequence

from skillbank.consistency import _metrics as metrics
from skillbank.consistency._trials import ARM_WITH, ARM_WITHOUT, TrialRecord
from skillbank._splits import ALL_SPLITS, HELD_OUT_SPLITS

if TYPE_CHECKING:  # pragma: no cover
    from skillbank.bank import SkillBank

__all__ = ["attribute", "skill_names", "skill_provenance", "ArmResults"]


class ArmResults(Protocol):
    """What :func:`attribute` reads of a measurement (a
    :class:`~skillbank.consistency.result.MeasureResult` is one): typed here, so that the
    result can call :func:`attribute` without the two modules importing each other."""

    @property
    def records(self) -> Sequence[TrialRecord]: ...

    tasks: dict[str, dict[str, Any]]
    skill_names: dict[str, str]

    @property
    def key_k(self) -> int: ...

    def results(self, arm: str, split: str | None = None) -> dict[str, list[bool]]: ...


def attribute(
    result: ArmResults,
    *,
    split: str | None = None,
    k: int | None = None,
    baseline: str = ARM_WITHOUT,
    treatment: str = ARM_WITH,
) -> dict[str, Any]:
    """Tasks whose pass^k moved and the skills injected into them; per-skill success rates.

    Returns a JSON-ready dict with ``k``, ``tasks`` (one row per moved task, largest move first)
    and ``skills`` (one row per injected skill, most-used first).
    """
    k = k or result.key_k
    base = result.results(baseline, split)
    treat = result.results(treatment, split)
    records = [r for r in result.records
               if split in (None, ALL_SPLITS) or r.split == split]
    by_task_arm: dict[tuple[str, str], list] = defaultdict(list)
    for r in records:
        by_task_arm[(r.task_id, r.arm)].append(r)

    names = result.skill_names
    moved: list[dict[str, Any]] = []
    for task_id in sorted(set(base) & set(treat)):
        b, t = base[task_id], treat[task_id]
        if len(b) < k or len(t) < k:
            continue
        hat_b = metrics.pass_hat_k(sum(b), len(b), k)
        hat_t = metrics.pass_hat_k(sum(t), len(t), k)
        if hat_t == hat_b:
            continue
        counts: dict[str, int] = defaultdict(int)
        for r in by_task_arm[(task_id, treatment)]:
            for skill_id in r.injected:
                counts[skill_id] += 1
        moved.append({
            "task_id": task_id,
            "type": result.tasks[task_id]["type"],
            "split": result.tasks[task_id].get("split"),
            "pass_hat_k": {baseline: hat_b, treatment: hat_t},
            "success_rate": {baseline: sum(b) / len(b), treatment: sum(t) / len(t)},
            "delta": hat_t - hat_b,
            "skills": [{"skill_id": s, "name": names.get(s, s), "trials": n}
                       for s, n in sorted(counts.items(), key=lambda x: (-x[1], x[0]))],
        })
    moved.sort(key=lambda row: (-abs(row["delta"]), row["task_id"]))

    per_skill: dict[str, dict[str, Any]] = {}
    for r in records:
        if r.arm != treatment:
            continue
        for skill_id in r.injected:
            row = per_skill.setdefault(skill_id, {"trials": 0, "successes": 0, "tasks": set()})
            row["trials"] += 1
            row["successes"] += int(r.success)
            row["tasks"].add(r.task_id)
    skills: list[dict[str, Any]] = []
    for skill_id, row in per_skill.items():
        base_trials = [o for task_id in row["tasks"] for o in base.get(task_id, [])]
        with_rate = row["successes"] / row["trials"]
        base_rate = sum(base_trials) / len(base_trials) if base_trials else None
        skills.append({
            "skill_id": skill_id,
            "name": names.get(skill_id, skill_id),
            "trials_injected": row["trials"],
            "tasks": len(row["tasks"]),
            "success_when_injected": with_rate,
            "baseline_success_same_tasks": base_rate,
            "baseline_trials": len(base_trials),
            "delta": None if base_rate is None else with_rate - base_rate,
        })
    skills.sort(key=lambda row: (-row["trials_injected"], row["name"]))
    return {"k": k, "baseline": baseline, "treatment": treatment, "split": split or ALL_SPLITS,
            "tasks": moved, "skills": skills}


def skill_names(bank: "SkillBank", ids: Iterable[str]) -> dict[str, str]:
    """``skill id -> name`` for the ids the bank still knows (unknown ids map to themselves)."""
    ids = list(dict.fromkeys(ids))
    found = bank.skills.get_many(ids) if ids else {}
    return {i: found[i].name if i in found else i for i in ids}


def skill_provenance(bank: "SkillBank", *, extra_ids: Iterable[str] = ()) -> list[dict[str, Any]]:
    """For every active skill (and any in ``extra_ids``): which sets it was evolved on.

    Each row has the skill's id, name, status and version, ``evidence`` (number of distinct
    trajectories in the provenance of all its versions), ``evidence_splits`` (split label ->
    count, ``"unlabelled"`` for trajectories measured outside a split, ``"missing"`` for ids no
    longer in the bank) and ``held_out_evidence`` (True when any evidence came from a held-out
    split).
    """
    from skillbank.models import SkillStatus
    from skillbank._provenance import evidence as provenance_evidence

    skills = {s.id: s for s in bank.list_skills(status=SkillStatus.active)}
    extra = [i for i in dict.fromkeys(extra_ids) if i not in skills]
    if extra:
        skills.update(bank.skills.get_many(extra))
    rows: list[dict[str, Any]] = []
    for skill in sorted(skills.values(), key=lambda s: s.name):
        evidence: list[str] = []
        authors: list[str] = []
        for version in bank.history(skill.id):
            evidence.extend(provenance_evidence(version.provenance))
            authors.append(version.author)
        evidence = list(dict.fromkeys(evidence))
        splits = bank.evidence.splits_of(evidence)
        counts: dict[str, int] = defaultdict(int)
        runs: set[str] = set()
        for tid in evidence:
            split, run = splits.get(tid, ("missing", None))
            counts[split] += 1
            if run:
                runs.add(run)
        rows.append({
            "skill_id": skill.id,
            "name": skill.name,
            "status": skill.status.value,
            "version": skill.version,
            "kind": skill.kind.value,
            "authors": sorted(set(authors)),
            "evidence": len(evidence),
            "evidence_splits": dict(sorted(counts.items())),
            "evidence_runs": sorted(runs),
            "held_out_evidence": any(s in HELD_OUT_SPLITS for s in counts),
        })
    return rows

