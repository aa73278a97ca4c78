"""The result of a measurement: every trial of one run, and the numbers computed from them.

:class:`MeasureResult` holds one :class:`~skillbank.consistency._trials.TrialRecord` per
``(task, arm, trial)`` and computes, per arm and split, pass^k, pass@k and their gap, per-type
breakdowns, cost per trial, bootstrap confidence intervals, the paired change between two arms
and the skills that go with it (:mod:`~skillbank.consistency._attribution`).
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from skillbank.consistency import _metrics as metrics
from skillbank.consistency._attribution import attribute
from skillbank.consistency._trials import ARM_WITH, ARM_WITHOUT, TrialRecord, key_k
from skillbank.errors import MeasureError
from skillbank._splits import ALL_SPLITS

__all__ = ["MeasureResult"]

BOOTSTRAP_RESAMPLES = 1000
CONFIDENCE = 0.95


@dataclass
class MeasureResult:
    """Every trial of one run plus the numbers computed from them.

    ``records`` hold one :class:`TrialRecord` per ``(task, arm, trial)``. The methods compute
    per arm and split (``split=None`` or ``"all"`` pools every task).

    Attributes:
        run_id: The run's name (resume a run by passing it again).
        arms: The arm names, in the order they ran.
        trials: Trials per task and arm.
        tasks: ``task id -> {"type", "split", and "family" / "template" when the task has them}``.
        records: One :class:`TrialRecord` per ``(task, arm, trial)``, in run order.
        seed: The base of the per-trial seeds and of the bootstrap.
        bank_snapshot: The bank's snapshot id when the run began; ``None``: no bank.
        bank_path: Where the bank is (a folder or a database location); ``None``: no bank.
        model: The model's label, as the config gave it.
        simulated: Whether the policy is simulated, as the config said; ``None``: not said.
        started_at: When the run began (seconds since the epoch).
        wall_time_s: How long it took, in seconds.
        ran: Trials run by this call.
        skipped: Trials resumed from an earlier call of the same run (not run again).
        skill_names: ``skill id -> name`` of every skill injected in a trial.
        skills: Per active or injected skill: its id, name, status, version and which splits
            its evidence came from.
        warnings: What resuming found worth saying (e.g. a trial kept from another bank snapshot).
        notes: Lines the task set adds to the report (a benchmark's own metric, what it skipped).
        benchmark: Numbers the task set computes its own way (e.g. ``"tau2"``: its leaderboard
            pass^k).
    """

    run_id: str
    arms: tuple[str, ...]
    trials: int
    tasks: dict[str, dict[str, Any]]
    records: list[TrialRecord]
    seed: int = 0
    bank_snapshot: str | None = None
    bank_path: str | None = None
    model: str | None = None
    simulated: bool | None = None
    started_at: float | None = None
    wall_time_s: float | None = None
    ran: int = 0
    skipped: int = 0
    skill_names: dict[str, str] = field(default_factory=dict)
    skills: list[dict[str, Any]] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    benchmark: dict[str, Any] = field(default_factory=dict)

    # -- selection ---------------------------------------------------------------------------

    @property
    def splits(self) -> list[str]:
        """The split names present, in first-seen order (empty when no task has a split)."""
        seen = dict.fromkeys(m.get("split") for m in self.tasks.values())
        return [s for s in seen if s is not None]

    def _select(self, arm: str, split: str | None) -> list[TrialRecord]:
        if arm not in self.arms:
            raise MeasureError(f"no arm {arm!r} in this run (arms: {', '.join(self.arms)})")
        pooled = split in (None, ALL_SPLITS)
        return [r for r in self.records if r.arm == arm and (pooled or r.split == split)]

    def results(self, arm: str, split: str | None = None) -> dict[str, list[bool]]:
        """``task id -> outcomes`` (ordered by trial number) for one arm and split.

        Args:
            arm: The arm's name.
            split: A split's name; ``None`` or ``"all"``: every task.

        Returns:
            Each task's outcomes, tasks in id order; empty when the split has none.

        Raises:
            MeasureError: No arm of that name in this run.
        """
        by_task: dict[str, list[TrialRecord]] = defaultdict(list)
        for r in self._select(arm, split):
            by_task[r.task_id].append(r)
        return {t: [r.success for r in sorted(rs, key=lambda r: r.trial)]
                for t, rs in sorted(by_task.items())}

    def task_types(self) -> dict[str, str]:
        """Each task's type.

        Returns:
            ``task id -> type`` (as a string) for every task of the run.
        """
        return {t: str(m["type"]) for t, m in self.tasks.items()}

    @property
    def key_k(self) -> int:
        """The k the numbers headline: 3, or fewer when the run has fewer trials per task."""
        return key_k(self.trials)

    # -- numbers -----------------------------------------------------------------------------

    def summary(self, arm: str, split: str | None = None, ks: Sequence[int] | None = None
                ) -> metrics.ConsistencySummary:
        """pass^k, pass@k, their gap and the consistency statistics of one arm and split.

        Args:
            arm: The arm's name.
            split: A split's name; ``None`` or ``"all"``: every task.
            ks: The k values to report; ``None``: every k from 1 to the fewest trials a task has
                (capped).

        Returns:
            The summary (:func:`skillbank.consistency._metrics.consistency_summary`).

        Raises:
            MeasureError: No arm of that name in this run.
            ValueError: The split has no trials, or a task has fewer trials than a k in ``ks``.
        """
        return metrics.consistency_summary(self.results(arm, split), ks=ks)

    def by_type(self, arm: str, split: str | None = None, k: int | None = None
                ) -> dict[str, metrics.ConsistencySummary]:
        """One summary per task type, reporting one k, for one arm and split.

        Args:
            arm: The arm's name.
            split: A split's name; ``None`` or ``"all"``: every task.
            k: The k to report; ``None``: :attr:`key_k`.

        Returns:
            ``type -> summary`` of that type's tasks, in sorted type order.

        Raises:
            MeasureError: No arm of that name in this run.
            ValueError: The split has no trials, or a task has fewer than ``k`` trials.
        """
        return metrics.by_type(self.results(arm, split), self.task_types(), k or self.key_k)

    def cost(self, arm: str, split: str | None = None) -> dict[str, float]:
        """Mean steps, model turns, tokens and latency per trial, and the limit-hit rate.

        Args:
            arm: The arm's name.
            split: A split's name; ``None`` or ``"all"``: every task.

        Returns:
            ``trials``, ``steps``, ``model_turns``, ``tokens``, ``latency_s`` (means per trial)
            and ``limit_hit_rate``; all 0 when there are no trials.

        Raises:
            MeasureError: No arm of that name in this run.
        """
        rs = self._select(arm, split)
        n = len(rs)
        if n == 0:
            return {"trials": 0, "steps": 0.0, "model_turns": 0.0, "tokens": 0.0,
                    "latency_s": 0.0, "limit_hit_rate": 0.0}
        return {
            "trials": n,
            "steps": math.fsum(r.steps for r in rs) / n,
            "model_turns": math.fsum(r.model_turns for r in rs) / n,
            "tokens": math.fsum(r.tokens for r in rs) / n,
            "latency_s": math.fsum(r.latency_s for r in rs) / n,
            "limit_hit_rate": sum(r.limit_hit for r in rs) / n,
        }

    def limit_counts(self, arm: str, split: str | None = None) -> dict[str, int]:
        """How many trials of one arm and split hit each kind of limit.

        Args:
            arm: The arm's name.
            split: A split's name; ``None`` or ``"all"``: every task.

        Returns:
            ``limit kind -> trials that hit it`` (a trial counts once per kind), in sorted order.

        Raises:
            MeasureError: No arm of that name in this run.
        """
        counts: dict[str, int] = defaultdict(int)
        for r in self._select(arm, split):
            for kind in set(r.limits):
                counts[kind] += 1
        return dict(sorted(counts.items()))

    def ci(self, arm: str, split: str | None = None, k: int | None = None,
           metric: str = "pass_hat_k") -> tuple[float, float]:
        """Bootstrap (tasks resampled) 95% interval of ``pass_hat_k``, ``pass_at_k`` or ``gap``.

        :func:`metrics.bootstrap_mean_ci` of the per-task values: every statistic here is a mean
        over tasks, so this is :func:`metrics.bootstrap_ci`'s interval computed at once.

        Args:
            arm: The arm's name.
            split: A split's name; ``None`` or ``"all"``: every task.
            k: The k; ``None``: :attr:`key_k`.
            metric: ``pass_hat_k``, ``pass_at_k`` or ``gap``.

        Returns:
            The interval's ``(low, high)``, resampled with the run's ``seed``.

        Raises:
            MeasureError: No arm of that name, no trials in the split, or an unknown ``metric``.
            ValueError: A task has fewer than ``k`` trials.
        """
        k = k or self.key_k
        results = self.results(arm, split)
        if not results:
            raise MeasureError(f"no trials in arm {arm!r} for split {split!r}")
        metrics.consistency_summary(results, ks=(k,))  # validates: every task has >= k trials
        values = np.array([_per_task(metric, outcomes, k) for outcomes in results.values()])
        return metrics.bootstrap_mean_ci(values, BOOTSTRAP_RESAMPLES, CONFIDENCE, self.seed)

    def delta(self, split: str | None = None, k: int | None = None, metric: str = "pass_hat_k",
              baseline: str = ARM_WITHOUT, treatment: str = ARM_WITH) -> dict[str, Any]:
        """``treatment - baseline`` for one metric, with a paired bootstrap interval (the same
        resampled tasks in both arms).

        Args:
            split: A split's name; ``None`` or ``"all"``: every task.
            k: The k; ``None``: :attr:`key_k`.
            metric: ``pass_hat_k``, ``pass_at_k`` or ``gap``.
            baseline: The arm subtracted.
            treatment: The arm compared with it.

        Returns:
            ``metric``, ``k``, ``baseline``, ``treatment``, the mean per-task ``delta`` over the
            tasks both arms ran, its ``ci`` (``[low, high]``) and ``n_tasks``.

        Raises:
            MeasureError: An arm does not exist, the two arms share no task, or an unknown
                ``metric``.
            ValueError: A task has fewer than ``k`` trials.
        """
        k = k or self.key_k
        base, treat = self.results(baseline, split), self.results(treatment, split)
        common = sorted(set(base) & set(treat))
        if not common:
            raise MeasureError("the two arms share no task")
        per_task = np.array([_per_task(metric, treat[t], k) - _per_task(metric, base[t], k)
                             for t in common])
        low, high = metrics.bootstrap_mean_ci(per_task, BOOTSTRAP_RESAMPLES, CONFIDENCE, self.seed)
        return {"metric": metric, "k": k, "baseline": baseline, "treatment": treatment,
                "delta": float(math.fsum(per_task) / len(common)),
                "ci": [low, high], "n_tasks": len(common)}

    def attribution(self, split: str | None = None, k: int | None = None,
                    baseline: str = ARM_WITHOUT, treatment: str = ARM_WITH) -> dict[str, Any]:
        """The tasks whose pass^k moved between two arms and the skills injected into them
        (:func:`~skillbank.consistency._attribution.attribute`).

        Args:
            split: A split's name; ``None`` or ``"all"``: every task.
            k: The k; ``None``: :attr:`key_k`.
            baseline: The arm without the change.
            treatment: The arm with it.

        Returns:
            JSON-ready data: ``k``, ``tasks`` (one row per moved task, largest move first) and
            ``skills`` (one row per injected skill, most used first).

        Raises:
            MeasureError: An arm does not exist.
        """
        return attribute(self, split=split, k=k, baseline=baseline, treatment=treatment)

    # -- export ------------------------------------------------------------------------------

    def split_block(self, split: str | None) -> dict[str, Any]:
        """Every number for one split (``None``: all tasks), as plain JSON-ready data.

        Args:
            split: A split's name; ``None`` or ``"all"``: every task.

        Returns:
            ``k``, ``n_tasks`` and, per arm with trials in the split, its summary, intervals,
            per-type breakdown and spread, cost and limit counts; with both the with-skills and
            without-skills arms, also their ``delta`` per metric and the ``attribution``.
        """
        k = self.key_k
        arms: dict[str, Any] = {}
        for arm in self.arms:
            if not self._select(arm, split):
                continue
            summary = self.summary(arm, split)
            breakdown = self.by_type(arm, split, k)
            arms[arm] = {
                "summary": summary.to_dict(),
                "ci": {m: {str(kk): list(self.ci(arm, split, kk, m)) for kk in sorted({1, k})}
                       for m in ("pass_hat_k", "pass_at_k", "gap")},
                "by_type": {label: s.to_dict() for label, s in breakdown.items()},
                "type_spread": metrics.type_spread(breakdown, k),
                "cost": self.cost(arm, split),
                "limits": self.limit_counts(arm, split),
            }
        block: dict[str, Any] = {"k": k, "n_tasks": len(self.results(self.arms[0], split))
                                 if self._select(self.arms[0], split) else 0, "arms": arms}
        if ARM_WITHOUT in arms and ARM_WITH in arms:
            block["delta"] = {m: self.delta(split, k, m) for m in ("pass_hat_k", "pass_at_k", "gap")}
            block["attribution"] = self.attribution(split, k)
        return block

    def to_dict(self) -> dict[str, Any]:
        """All numbers and every trial, JSON-serialisable.

        Returns:
            The run's fields, a :meth:`split_block` per split (and ``all``), and every trial
            record.
        """
        views = [ALL_SPLITS] + self.splits
        return {
            "run_id": self.run_id,
            "arms": list(self.arms),
            "trials": self.trials,
            "k": self.key_k,
            "seed": self.seed,
            "bank_snapshot": self.bank_snapshot,
            "bank_path": self.bank_path,
            "model": self.model,
            "simulated": self.simulated,
            "wall_time_s": self.wall_time_s,
            "ran": self.ran,
            "skipped": self.skipped,
            "tasks": self.tasks,
            "splits": {view: self.split_block(None if view == ALL_SPLITS else view)
                       for view in views},
            "skills": self.skills,
            "skill_names": self.skill_names,
            "warnings": self.warnings,
            "notes": self.notes,
            "benchmark": self.benchmark,
            "records": [r.to_dict() for r in self.records],
        }

    def headline(self, split: str | None = None) -> dict[str, dict[str, float]]:
        """``arm -> {pass^1, pass^k, pass@k, gap}`` at the headline k, for tables and logs.

        Args:
            split: A split's name; ``None`` or ``"all"``: every task.

        Returns:
            Per arm with trials in the split, ``pass^1``, ``pass^<k>``, ``pass@<k>`` and ``gap``
            at :attr:`key_k`.
        """
        k = self.key_k
        out = {}
        for arm in self.arms:
            if not self._select(arm, split):
                continue
            s = self.summary(arm, split, ks=sorted({1, k}))
            out[arm] = {"pass^1": s.pass_hat_k[1], f"pass^{k}": s.pass_hat_k[k],
                        f"pass@{k}": s.pass_at_k[k], "gap": s.gap[k]}
        return out


def _per_task(metric: str, outcomes: Sequence[bool], k: int) -> float:
    n, c = len(outcomes), sum(bool(o) for o in outcomes)
    if metric == "pass_hat_k":
        return metrics.pass_hat_k(c, n, k)
    if metric == "pass_at_k":
        return metrics.pass_at_k(c, n, k)
    if metric == "gap":
        return metrics.pass_at_k(c, n, k) - metrics.pass_hat_k(c, n, k)
    raise MeasureError(f"unknown metric {metric!r}")
