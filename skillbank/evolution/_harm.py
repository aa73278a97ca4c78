"""The harmful-skill rule (step 3): retire a skill whose use measurably hurts.

For an active, unpinned skill, compare the labelled runs that had its *current version*
injected ("with") against comparable labelled runs that did not have it ("without"):
comparable means the same task group (the runner's task type, or else the task's template).
The baseline rate is standardised to the with-runs' mix of groups (each group's without-rate
weighted by how many with-runs it has), so a skill is not blamed for being retrieved on hard
tasks. Groups with no without-runs are left out of both sides.

Retire when all hold (defaults in ``EvolutionConfig``):

- at least ``harm_min_uses`` (8) with-runs and ``harm_min_baseline`` (8) comparable without-runs;
- the standardised without-rate exceeds the with-rate by at least ``harm_margin`` (0.20);
- a one-sided two-proportion z-test gives z >= ``harm_z`` (1.645, about 95 % confidence).

Only the current version is judged: an edit resets the evidence, because the edit is what
the next runs will see.
"""

from __future__ import annotations

import math
from collections import Counter, defaultdict
from dataclasses import dataclass
from typing import Iterable

from skillbank.evolution.config import EvolutionConfig
from skillbank.evolution._seam import EvolutionBank
from skillbank.evolution._templates import task_template
from skillbank.models import Skill


@dataclass
class HarmVerdict:
    skill_id: str
    with_n: int
    with_rate: float
    base_n: int
    base_rate: float
    z: float
    harmful: bool
    evidence: tuple[str, ...] = ()

    def describe(self) -> str:
        return (f"success {self.with_rate:.0%} over {self.with_n} runs with it vs "
                f"{self.base_rate:.0%} over {self.base_n} comparable runs without (z={self.z:.2f})")


def assess_harm(bank: EvolutionBank, skills: Iterable[Skill], config: EvolutionConfig,
                groups: dict[str, str] | None = None) -> dict[str, HarmVerdict]:
    """Verdicts for the skills with enough uses; ``groups`` (trajectory id -> task group) saves
    recomputing templates for runs the round already read."""
    skills = [s for s in skills if not s.pinned]
    if not skills:
        return {}
    wanted = {(s.id, s.version) for s in skills}
    rows = bank.evidence.labelled_injections()
    uses: dict[str, set[str]] = defaultdict(set)
    injected_any: dict[str, set[str]] = defaultdict(set)
    for r in rows:
        injected_any[r["skill_id"]].add(r["trajectory_id"])
        if (r["skill_id"], r["version"]) in wanted:
            uses[r["skill_id"]].add(r["trajectory_id"])
    eligible = [s for s in skills if len(uses[s.id]) >= config.harm_min_uses]
    if not eligible:
        return {}
    templates: dict[str, str] = {}
    groups = groups or {}
    runs = {}
    for r in bank.evidence.labelled_tasks():
        key = r["task_type"] or groups.get(r["id"])
        if not key:
            task = r["task"] or ""
            key = templates.get(task)
            if key is None:
                key = templates[task] = task_template(task)
        runs[r["id"]] = (key, bool(r["success"]))
    by_group: dict[str, list[str]] = defaultdict(list)
    for tid, (key, _) in runs.items():
        by_group[key].append(tid)
    verdicts: dict[str, HarmVerdict] = {}
    for skill in eligible:
        with_ids = [t for t in uses[skill.id] if t in runs]
        mix = Counter(runs[t][0] for t in with_ids)
        excluded = injected_any[skill.id]
        with_kept: list[str] = []
        base_n = 0
        weighted = 0.0
        for group, count in mix.items():
            base = [t for t in by_group[group] if t not in excluded]
            if not base:
                continue
            rate = sum(runs[t][1] for t in base) / len(base)
            weighted += rate * count
            base_n += len(base)
            with_kept.extend(t for t in with_ids if runs[t][0] == group)
        n1 = len(with_kept)
        if n1 == 0 or base_n == 0:
            continue
        p1 = sum(runs[t][1] for t in with_kept) / n1
        p2 = weighted / n1
        pooled = (p1 * n1 + p2 * base_n) / (n1 + base_n)
        se = math.sqrt(pooled * (1 - pooled) * (1 / n1 + 1 / base_n)) if 0 < pooled < 1 else 0.0
        z = (p2 - p1) / se if se > 0 else 0.0
        harmful = (n1 >= config.harm_min_uses and base_n >= config.harm_min_baseline
                   and p2 - p1 >= config.harm_margin and z >= config.harm_z)
        verdicts[skill.id] = HarmVerdict(skill.id, n1, p1, base_n, p2, z, harmful,
                                         tuple(sorted(with_kept)))
    return verdicts
