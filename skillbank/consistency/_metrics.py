"""Consistency metrics for repeated agent trials: pass^k, pass@k and friends.

Every task is run ``n`` times and ``c`` of those runs succeed. Two unbiased per-task estimators
answer different questions about a random draw of ``k`` of those ``n`` runs (without
replacement):

* ``pass^k = C(c, k) / C(n, k)`` -- the chance that *all* ``k`` succeed (reliability; the
  tau-bench definition).
* ``pass@k = 1 - C(n - c, k) / C(n, k)`` -- the chance that *at least one* succeeds (capability;
  the Codex/HumanEval definition).

The benchmark-level numbers are the plain mean of the per-task values. The gap between the two
grows as an agent becomes capable but erratic, which is what this package sets out to measure.

All functions are pure. Binomial coefficients are exact integers (``math.comb``) and each ratio
is formed with one correctly rounded integer division, so ``n`` in the hundreds neither
overflows nor loses precision to cancellation.

``results`` arguments everywhere are ``Mapping[str, Sequence[bool]]``: task id to that task's
trial outcomes, in any order. Outcomes may be ``bool``, ``0``/``1`` or numpy booleans.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Mapping, Sequence

import numpy as np

__all__ = [
    "Results",
    "ConsistencySummary",
    "DEFAULT_MAX_K",
    "pass_hat_k",
    "pass_at_k",
    "mean_pass_hat_k",
    "mean_pass_at_k",
    "consistency_summary",
    "bootstrap_ci",
    "bootstrap_mean_ci",
    "by_type",
    "type_spread",
]

Results = Mapping[str, Sequence[bool]]
"""Task id -> that task's trial outcomes (True = success)."""

DEFAULT_MAX_K = 8
"""Largest k reported by :func:`consistency_summary` when ``ks`` is not given."""


# --------------------------------------------------------------------------- per-task estimators


def _check_counts(c: int, n: int, k: int) -> None:
    for name, value in (("c", c), ("n", n), ("k", k)):
        # bool is an int subclass; a stray True/False here almost always means swapped arguments.
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)):
            raise TypeError(f"{name} must be an integer, got {value!r} ({type(value).__name__})")
    if c < 0 or n < 0 or k < 0:
        raise ValueError(f"c, n and k must be non-negative, got c={c}, n={n}, k={k}")
    if k == 0:
        # Mathematically pass^0 = 1 and pass@0 = 0, but asking for them is always a bug upstream.
        raise ValueError("k must be at least 1, got k=0")
    if c > n:
        raise ValueError(f"c (successes) cannot exceed n (trials): c={c}, n={n}")
    if k > n:
        raise ValueError(
            f"k cannot exceed n: k={k} trials cannot be drawn from n={n}; run more trials or "
            "lower k"
        )


def pass_hat_k(c: int, n: int, k: int) -> float:
    """Unbiased per-task pass^k: the probability that ``k`` of ``n`` trials, drawn without
    replacement, all succeed, given that ``c`` of the ``n`` succeeded.

    Equals ``C(c, k) / C(n, k)``; ``0`` when ``c < k``.

    Raises:
        TypeError: if an argument is not an integer.
        ValueError: if an argument is negative, ``k`` is 0, ``c > n`` or ``k > n``.
    """
    _check_counts(c, n, k)
    c, n, k = int(c), int(n), int(k)
    # int / int is correctly rounded in CPython even when both sides exceed float range.
    return math.comb(c, k) / math.comb(n, k)


def pass_at_k(c: int, n: int, k: int) -> float:
    """Unbiased per-task pass@k: the probability that at least one of ``k`` of ``n`` trials,
    drawn without replacement, succeeds, given that ``c`` of the ``n`` succeeded.

    Equals ``1 - C(n - c, k) / C(n, k)``; ``1`` when ``n - c < k``.

    Raises:
        TypeError: if an argument is not an integer.
        ValueError: if an argument is negative, ``k`` is 0, ``c > n`` or ``k > n``.
    """
    _check_counts(c, n, k)
    c, n, k = int(c), int(n), int(k)
    total = math.comb(n, k)
    # Subtract in exact integers first: 1 - (tiny ratio) in floats would cancel catastrophically.
    return (total - math.comb(n - c, k)) / total


# ----------------------------------------------------------------------------- benchmark means


def _task_counts(results: Results) -> dict[str, tuple[int, int]]:
    """``task -> (successes, trials)``, validating that outcomes are boolean."""
    if len(results) == 0:
        raise ValueError("results is empty: need at least one task with trial outcomes")
    counts: dict[str, tuple[int, int]] = {}
    for task, outcomes in results.items():
        if isinstance(outcomes, (str, bytes)):
            raise ValueError(f"task {task!r}: outcomes must be a sequence of booleans, got a string")
        successes = 0
        for outcome in outcomes:
            # Strings such as "fail" are truthy; refuse anything that is not unambiguously 0/1.
            if isinstance(outcome, (str, bytes)) or outcome not in (0, 1):
                raise ValueError(
                    f"task {task!r}: trial outcomes must be booleans (or 0/1), got {outcome!r}"
                )
            successes += int(bool(outcome))
        counts[task] = (successes, len(outcomes))
    return counts


def _require_trials(counts: Mapping[str, tuple[int, int]], k: int) -> None:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)):
        raise TypeError(f"k must be an integer, got {k!r} ({type(k).__name__})")
    if k < 1:
        raise ValueError(f"k must be at least 1, got k={k}")
    short = sorted((task, n) for task, (_, n) in counts.items() if n < k)
    if short:
        listed = ", ".join(f"{task!r} ({n} trials)" for task, n in short[:5])
        more = f" and {len(short) - 5} more" if len(short) > 5 else ""
        raise ValueError(
            f"k={k} needs at least {k} trials per task, but {len(short)} task(s) have fewer: "
            f"{listed}{more}"
        )


def _mean_over_tasks(
    counts: Mapping[str, tuple[int, int]], k: int, estimator: Callable[[int, int, int], float]
) -> float:
    _require_trials(counts, k)
    return math.fsum(estimator(c, n, k) for c, n in counts.values()) / len(counts)


def mean_pass_hat_k(results: Results, k: int) -> float:
    """Benchmark pass^k: the mean over tasks of :func:`pass_hat_k`.

    Raises:
        ValueError: if ``results`` is empty, an outcome is not boolean, ``k < 1``, or a task has
            fewer than ``k`` trials (the message names the tasks).
    """
    return _mean_over_tasks(_task_counts(results), k, pass_hat_k)


def mean_pass_at_k(results: Results, k: int) -> float:
    """Benchmark pass@k: the mean over tasks of :func:`pass_at_k`.

    Raises:
        ValueError: if ``results`` is empty, an outcome is not boolean, ``k < 1``, or a task has
            fewer than ``k`` trials (the message names the tasks).
    """
    return _mean_over_tasks(_task_counts(results), k, pass_at_k)


# ---------------------------------------------------------------------------------- summaries


@dataclass(frozen=True)
class ConsistencySummary:
    """Consistency of a set of tasks, each run several times.

    Attributes:
        ks: The k values reported, ascending.
        pass_hat_k: ``k -> `` mean pass^k over tasks.
        pass_at_k: ``k -> `` mean pass@k over tasks.
        gap: ``k -> pass@k - pass^k``; how much capability fails to show up reliably.
        task_variance: ``task -> p(1 - p)`` with ``p`` the task's success rate: the variance of
            a single trial's outcome, 0 for a perfectly consistent task, at most 0.25.
        mean_task_variance: Mean of ``task_variance`` over tasks.
        all_pass_share: Share of tasks where every trial succeeded.
        all_fail_share: Share of tasks where every trial failed.
        identical_share: Share of tasks whose trials all agree (``all_pass + all_fail``).
        n_tasks: Number of tasks.
        n_trials: Total number of trials over all tasks.
    """

    ks: tuple[int, ...]
    pass_hat_k: dict[int, float]
    pass_at_k: dict[int, float]
    gap: dict[int, float]
    task_variance: dict[str, float] = field(repr=False)
    mean_task_variance: float
    all_pass_share: float
    all_fail_share: float
    identical_share: float
    n_tasks: int
    n_trials: int

    def to_dict(self) -> dict:
        """A JSON-serialisable copy (k keys become strings, as JSON requires)."""
        return {
            "ks": list(self.ks),
            "pass_hat_k": {str(k): v for k, v in self.pass_hat_k.items()},
            "pass_at_k": {str(k): v for k, v in self.pass_at_k.items()},
            "gap": {str(k): v for k, v in self.gap.items()},
            "task_variance": dict(self.task_variance),
            "mean_task_variance": self.mean_task_variance,
            "all_pass_share": self.all_pass_share,
            "all_fail_share": self.all_fail_share,
            "identical_share": self.identical_share,
            "n_tasks": self.n_tasks,
            "n_trials": self.n_trials,
        }


def consistency_summary(results: Results, ks: Sequence[int] | None = None) -> ConsistencySummary:
    """pass^k, pass@k, their gap and trial-level consistency statistics for ``results``.

    Args:
        results: Task id -> trial outcomes.
        ks: The k values to report. Default: every k from 1 to the smallest number of trials
            any task has, capped at :data:`DEFAULT_MAX_K` so that the default never fails on
            uneven trial counts. Explicit values are checked strictly instead.

    Raises:
        ValueError: if ``results`` is empty, an outcome is not boolean, ``ks`` is empty, or a
            task has fewer trials than some requested k (the message names the tasks).
    """
    counts = _task_counts(results)
    if ks is None:
        min_trials = min(n for _, n in counts.values())
        if min_trials == 0:
            empty = sorted(task for task, (_, n) in counts.items() if n == 0)
            raise ValueError(f"task(s) with no trials: {', '.join(map(repr, empty[:5]))}")
        ks = range(1, min(min_trials, DEFAULT_MAX_K) + 1)
    ks_sorted = tuple(sorted(set(ks)))
    if not ks_sorted:
        raise ValueError("ks is empty: give at least one k")

    hat = {k: _mean_over_tasks(counts, k, pass_hat_k) for k in ks_sorted}
    at = {k: _mean_over_tasks(counts, k, pass_at_k) for k in ks_sorted}

    # Every task has at least ks_sorted[0] >= 1 trials here, so n > 0 below.
    variance = {task: (c / n) * (1 - c / n) for task, (c, n) in counts.items()}
    n_tasks = len(counts)
    all_pass = sum(1 for c, n in counts.values() if c == n)
    all_fail = sum(1 for c, _ in counts.values() if c == 0)
    return ConsistencySummary(
        ks=ks_sorted,
        pass_hat_k=hat,
        pass_at_k=at,
        gap={k: at[k] - hat[k] for k in ks_sorted},
        task_variance=variance,
        mean_task_variance=math.fsum(variance.values()) / n_tasks,
        all_pass_share=all_pass / n_tasks,
        all_fail_share=all_fail / n_tasks,
        identical_share=(all_pass + all_fail) / n_tasks,
        n_tasks=n_tasks,
        n_trials=sum(n for _, n in counts.values()),
    )


# ---------------------------------------------------------------------------------- bootstrap


def bootstrap_ci(
    results: Results,
    statistic: Callable[[Results], float],
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """Percentile bootstrap confidence interval for ``statistic(results)``, resampling tasks.

    Tasks, not trials, are the unit of resampling: trials of one task are correlated, and the
    question is how the number would move on a different draw of tasks. Each resample draws
    ``len(results)`` tasks with replacement; a task drawn twice appears under two keys
    (``"<task>#<draw index>"``), so statistics must not depend on the task ids themselves --
    :func:`mean_pass_hat_k` and friends do not. :func:`bootstrap_mean_ci` is the same interval
    for a mean of per-task values, computed at once.

    Args:
        results: Task id -> trial outcomes.
        statistic: Maps a results mapping to a number, e.g.
            ``lambda r: mean_pass_hat_k(r, 3)``.
        n_resamples: Number of bootstrap resamples.
        confidence: Coverage of the interval, strictly between 0 and 1.
        seed: Seed of the random generator; the same seed gives the same interval.

    Returns:
        ``(low, high)``: the ``(1 - confidence) / 2`` and ``(1 + confidence) / 2`` quantiles of
        the resampled statistic.

    Raises:
        ValueError: if ``results`` is empty, ``n_resamples < 1`` or ``confidence`` is not in
            (0, 1); whatever ``statistic`` raises is passed through.
    """
    tasks = list(results.items())
    draws = _draws(len(tasks), n_resamples, confidence, seed)
    stats = np.empty(n_resamples, dtype=float)
    for row, picks in enumerate(draws):
        resample = {f"{tasks[i][0]}#{j}": tasks[i][1] for j, i in enumerate(picks)}
        stats[row] = statistic(resample)
    return _percentiles(stats, confidence)


def bootstrap_mean_ci(
    values: Sequence[float] | np.ndarray,
    n_resamples: int = 1000,
    confidence: float = 0.95,
    seed: int = 0,
) -> tuple[float, float]:
    """:func:`bootstrap_ci` of the mean of per-task values (one value per task, e.g. each task's
    pass^k, or a paired difference): the same draws for the same seed, so the same interval,
    computed in one vectorised step."""
    values = np.asarray(values, dtype=float)
    draws = _draws(len(values), n_resamples, confidence, seed)
    return _percentiles(values[draws].mean(axis=1), confidence)


def _draws(n_tasks: int, n_resamples: int, confidence: float, seed: int) -> np.ndarray:
    """The resampled task indices, one row per resample: the one resampling scheme."""
    if n_tasks == 0:
        raise ValueError("results is empty: cannot bootstrap over zero tasks")
    if isinstance(n_resamples, bool) or not isinstance(n_resamples, (int, np.integer)):
        raise TypeError(f"n_resamples must be an integer, got {n_resamples!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be at least 1, got {n_resamples}")
    if not 0 < confidence < 1:
        raise ValueError(f"confidence must be strictly between 0 and 1, got {confidence}")
    return np.random.default_rng(seed).integers(0, n_tasks, size=(n_resamples, n_tasks))


def _percentiles(stats: np.ndarray, confidence: float) -> tuple[float, float]:
    alpha = 1 - confidence
    low, high = np.quantile(stats, [alpha / 2, 1 - alpha / 2])
    return float(low), float(high)


# ---------------------------------------------------------------------------- per-type views


def by_type(
    results: Results, task_types: Mapping[str, str], k: int
) -> dict[str, ConsistencySummary]:
    """One :class:`ConsistencySummary` (reporting only ``k``) per task type.

    Args:
        results: Task id -> trial outcomes.
        task_types: Task id -> type label. May list tasks absent from ``results``; those are
            ignored, so one label table can serve several runs.
        k: The k to report.

    Returns:
        Type label -> summary of that type's tasks, in sorted label order.

    Raises:
        ValueError: if a task in ``results`` has no type (the message names it), or for any
            reason :func:`consistency_summary` would.
    """
    untyped = sorted(task for task in results if task not in task_types)
    if untyped:
        listed = ", ".join(map(repr, untyped[:5]))
        more = f" and {len(untyped) - 5} more" if len(untyped) > 5 else ""
        raise ValueError(f"{len(untyped)} task(s) have no type in task_types: {listed}{more}")
    if len(results) == 0:
        raise ValueError("results is empty: need at least one task with trial outcomes")

    groups: dict[str, dict[str, Sequence[bool]]] = {}
    for task, outcomes in results.items():
        groups.setdefault(task_types[task], {})[task] = outcomes
    return {label: consistency_summary(groups[label], ks=(k,)) for label in sorted(groups)}


def type_spread(breakdown: Mapping[str, ConsistencySummary], k: int) -> float:
    """Population standard deviation of pass^k across the types of a :func:`by_type` result.

    The population form (``ddof=0``) is used because the types are the whole set of interest,
    not a sample of types; it is also defined (as 0) for a single type. A large spread means the
    agent is reliable on some kinds of task and not on others.

    Raises:
        ValueError: if ``breakdown`` is empty or some summary does not report ``k``.
    """
    if len(breakdown) == 0:
        raise ValueError("breakdown is empty: need at least one task type")
    missing = sorted(label for label, summary in breakdown.items() if k not in summary.pass_hat_k)
    if missing:
        raise ValueError(
            f"k={k} is not reported for type(s) {', '.join(map(repr, missing))}; "
            f"call by_type with k={k}"
        )
    return float(np.std([summary.pass_hat_k[k] for summary in breakdown.values()]))
