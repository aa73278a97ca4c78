"""Tests for skillbank.consistency._metrics.

Reference values are computed independently of the module: by hand, by brute-force enumeration
of every k-subset of trials, or by the published formulas written out again here.
"""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from skillbank.consistency._metrics import (
    DEFAULT_MAX_K,
    ConsistencySummary,
    bootstrap_ci,
    by_type,
    consistency_summary,
    mean_pass_at_k,
    mean_pass_hat_k,
    pass_at_k,
    pass_hat_k,
    type_spread,
)

# --------------------------------------------------------------------------- strategies


@st.composite
def c_n_k(draw, max_n: int = 8):
    """(c, n, k) with 0 <= c <= n, 1 <= k <= n <= max_n."""
    n = draw(st.integers(1, max_n))
    c = draw(st.integers(0, n))
    k = draw(st.integers(1, n))
    return c, n, k


@st.composite
def results_with_k(draw, max_tasks: int = 8, max_trials: int = 10):
    """A results mapping where every task has at least k trials, plus that k."""
    k = draw(st.integers(1, 4))
    n_tasks = draw(st.integers(1, max_tasks))
    results = {
        f"task-{i}": draw(st.lists(st.booleans(), min_size=k, max_size=max_trials))
        for i in range(n_tasks)
    }
    return results, k


def brute_force(c: int, n: int, k: int) -> tuple[Fraction, Fraction]:
    """(P(all k succeed), P(at least one of k succeeds)) by enumerating every k-subset."""
    trials = [True] * c + [False] * (n - c)
    subsets = list(itertools.combinations(range(n), k))
    all_ok = sum(all(trials[i] for i in s) for s in subsets)
    any_ok = sum(any(trials[i] for i in s) for s in subsets)
    return Fraction(all_ok, len(subsets)), Fraction(any_ok, len(subsets))


# --------------------------------------------------------------------------- hand-computed values


def test_hand_computed_two_of_four():
    # 6 pairs from 4 trials; only the pair of the 2 successes is all-pass, and only the pair of
    # the 2 failures is all-fail.
    assert pass_hat_k(2, 4, 2) == pytest.approx(1 / 6, rel=1e-15)
    assert pass_at_k(2, 4, 2) == pytest.approx(5 / 6, rel=1e-15)


def test_hand_computed_three_of_five():
    # C(3,2)/C(5,2) = 3/10; 1 - C(2,2)/C(5,2) = 9/10; C(3,3)/C(5,3) = 1/10; pass@3 = 1 (only two
    # failures, so any three trials contain a success).
    assert pass_hat_k(3, 5, 2) == pytest.approx(3 / 10, rel=1e-15)
    assert pass_at_k(3, 5, 2) == pytest.approx(9 / 10, rel=1e-15)
    assert pass_hat_k(3, 5, 3) == pytest.approx(1 / 10, rel=1e-15)
    assert pass_at_k(3, 5, 3) == 1.0


@pytest.mark.parametrize("n", [1, 2, 5, 50, 300])
def test_all_successes_is_one_and_no_successes_is_zero(n):
    for k in {1, max(1, n // 2), n}:
        assert pass_hat_k(n, n, k) == 1.0
        assert pass_at_k(n, n, k) == 1.0
        assert pass_hat_k(0, n, k) == 0.0
        assert pass_at_k(0, n, k) == 0.0


def test_fewer_successes_than_k_gives_zero_pass_hat():
    assert pass_hat_k(2, 10, 3) == 0.0
    assert pass_at_k(8, 10, 3) == 1.0  # only 2 failures: any 3 trials include a success


@pytest.mark.parametrize("c,n,k", [(150, 300, 100), (299, 300, 150), (1, 400, 200), (250, 500, 7)])
def test_large_n_is_exact_and_finite(c, n, k):
    # C(300, 150) ~ 1e89 and C(500, 250) ~ 1e149: naive float factorials would overflow or lose
    # precision; compare against exact rational arithmetic.
    hat_exact = Fraction(math.comb(c, k), math.comb(n, k))
    at_exact = 1 - Fraction(math.comb(n - c, k), math.comb(n, k))
    assert pass_hat_k(c, n, k) == pytest.approx(float(hat_exact), rel=1e-12, abs=1e-300)
    assert pass_at_k(c, n, k) == pytest.approx(float(at_exact), rel=1e-12)
    assert 0.0 <= pass_hat_k(c, n, k) <= pass_at_k(c, n, k) <= 1.0


@given(st.integers(1, 300).flatmap(lambda n: st.tuples(st.just(n), st.integers(1, n))))
def test_single_success_or_single_failure_closed_forms(nk):
    # One success among n: it is among the k drawn with probability k/n. One failure: all k
    # drawn succeed with probability (n-k)/n. The tight tolerance also catches computing
    # pass@k as 1 - float ratio, which cancels badly when that ratio is close to 1.
    n, k = nk
    assert pass_at_k(1, n, k) == pytest.approx(k / n, rel=1e-15)
    assert pass_hat_k(n - 1, n, k) == pytest.approx((n - k) / n, rel=1e-15, abs=0)


# --------------------------------------------------------------------------- properties


@given(c_n_k())
def test_pass_hat_k_matches_brute_force_enumeration(cnk):
    c, n, k = cnk
    all_ok, _ = brute_force(c, n, k)
    assert math.isclose(pass_hat_k(c, n, k), float(all_ok), rel_tol=1e-12, abs_tol=0)


@given(c_n_k())
def test_pass_at_k_matches_brute_force_enumeration(cnk):
    c, n, k = cnk
    _, any_ok = brute_force(c, n, k)
    assert math.isclose(pass_at_k(c, n, k), float(any_ok), rel_tol=1e-12, abs_tol=0)


@given(c_n_k(max_n=300))
def test_pass_hat_k_at_most_pass_at_k(cnk):
    c, n, k = cnk
    assert 0.0 <= pass_hat_k(c, n, k) <= pass_at_k(c, n, k) <= 1.0


@given(c_n_k(max_n=300))
def test_k_equals_one_is_the_success_rate(cnk):
    c, n, _ = cnk
    assert pass_hat_k(c, n, 1) == pytest.approx(c / n, rel=1e-15)
    assert pass_at_k(c, n, 1) == pytest.approx(c / n, rel=1e-15)
    assert pass_hat_k(c, n, 1) == pass_at_k(c, n, 1)


@given(c_n_k(max_n=60))
def test_pass_hat_k_non_increasing_and_pass_at_k_non_decreasing_in_k(cnk):
    c, n, _ = cnk
    hats = [pass_hat_k(c, n, k) for k in range(1, n + 1)]
    ats = [pass_at_k(c, n, k) for k in range(1, n + 1)]
    assert all(a >= b for a, b in zip(hats, hats[1:])), hats
    assert all(a <= b for a, b in zip(ats, ats[1:])), ats


@given(c_n_k(max_n=60))
def test_pass_at_k_is_one_minus_pass_hat_k_of_failures(cnk):
    # "at least one success" is the complement of "all k are failures".
    c, n, k = cnk
    assert pass_at_k(c, n, k) == pytest.approx(1 - pass_hat_k(n - c, n, k), abs=1e-15)


@given(results_with_k())
def test_means_match_published_formulas(data):
    results, k = data
    # tau-bench pass^k and Chen et al. (2021) pass@k, averaged over tasks, written out again.
    hat = []
    at = []
    for outcomes in results.values():
        n, c = len(outcomes), sum(outcomes)
        hat.append(Fraction(math.comb(c, k), math.comb(n, k)))
        at.append(1 - Fraction(math.comb(n - c, k), math.comb(n, k)))
    expected_hat = float(sum(hat) / len(hat))
    expected_at = float(sum(at) / len(at))
    assert mean_pass_hat_k(results, k) == pytest.approx(expected_hat, rel=1e-12, abs=1e-15)
    assert mean_pass_at_k(results, k) == pytest.approx(expected_at, rel=1e-12, abs=1e-15)


@given(results_with_k())
def test_summary_is_consistent_with_the_means(data):
    results, k = data
    summary = consistency_summary(results, ks=range(1, k + 1))
    assert summary.ks == tuple(range(1, k + 1))
    for j in summary.ks:
        assert summary.pass_hat_k[j] == mean_pass_hat_k(results, j)
        assert summary.pass_at_k[j] == mean_pass_at_k(results, j)
        assert summary.gap[j] == pytest.approx(summary.pass_at_k[j] - summary.pass_hat_k[j])
        assert summary.gap[j] >= -1e-15
    assert summary.n_tasks == len(results)
    assert summary.n_trials == sum(len(v) for v in results.values())
    identical = sum(1 for v in results.values() if len(set(v)) == 1)
    assert summary.identical_share == pytest.approx(identical / len(results))
    assert 0.0 <= summary.mean_task_variance <= 0.25


# --------------------------------------------------------------------------- means and summary


def test_mean_accepts_numpy_and_int_outcomes():
    results = {"a": np.array([True, False, True, True]), "b": [1, 0, 0, 0]}
    assert mean_pass_hat_k(results, 1) == pytest.approx((3 / 4 + 1 / 4) / 2)
    assert mean_pass_hat_k(results, 2) == pytest.approx((3 / 6 + 0) / 2)


MIXED = {
    "always": [True, True, True, True],
    "never": [False, False, False, False],
    "coin": [True, False, True, False],
}


def test_consistency_summary_hand_computed():
    summary = consistency_summary(MIXED, ks=(1, 2))
    assert isinstance(summary, ConsistencySummary)
    assert summary.ks == (1, 2)
    assert summary.pass_hat_k[1] == pytest.approx(0.5)
    assert summary.pass_at_k[1] == pytest.approx(0.5)
    # (1 + 0 + 1/6) / 3 and (1 + 0 + 5/6) / 3
    assert summary.pass_hat_k[2] == pytest.approx(7 / 18)
    assert summary.pass_at_k[2] == pytest.approx(11 / 18)
    assert summary.gap[1] == pytest.approx(0.0)
    assert summary.gap[2] == pytest.approx(4 / 18)
    assert summary.task_variance == pytest.approx({"always": 0.0, "never": 0.0, "coin": 0.25})
    assert summary.mean_task_variance == pytest.approx(0.25 / 3)
    assert summary.all_pass_share == pytest.approx(1 / 3)
    assert summary.all_fail_share == pytest.approx(1 / 3)
    assert summary.identical_share == pytest.approx(2 / 3)
    assert summary.n_tasks == 3
    assert summary.n_trials == 12


def test_consistency_summary_default_ks_follow_the_shortest_task():
    results = {"a": [True] * 3, "b": [False] * 10}
    assert consistency_summary(results).ks == (1, 2, 3)
    long_runs = {"a": [True] * 50}
    assert consistency_summary(long_runs).ks == tuple(range(1, DEFAULT_MAX_K + 1))


def test_consistency_summary_to_dict_is_json_ready():
    import json

    data = consistency_summary(MIXED, ks=(2,)).to_dict()
    assert json.loads(json.dumps(data)) == data
    assert data["pass_hat_k"]["2"] == pytest.approx(7 / 18)
    assert data["n_tasks"] == 3


# --------------------------------------------------------------------------- bootstrap


def _mean_hat_2(r):
    return mean_pass_hat_k(r, 2)


BOOT = {
    f"t{i}": [bool((i * 7 + j * 3) % 5 < (i % 5)) for j in range(6)] for i in range(20)
}


def test_bootstrap_ci_contains_point_estimate():
    point = _mean_hat_2(BOOT)
    low, high = bootstrap_ci(BOOT, _mean_hat_2, n_resamples=500, seed=1)
    assert low < point < high
    assert 0.0 <= low < high <= 1.0


def test_bootstrap_ci_is_deterministic_with_a_seed():
    first = bootstrap_ci(BOOT, _mean_hat_2, n_resamples=300, seed=42)
    second = bootstrap_ci(BOOT, _mean_hat_2, n_resamples=300, seed=42)
    other = bootstrap_ci(BOOT, _mean_hat_2, n_resamples=300, seed=43)
    assert first == second
    assert first != other


def test_bootstrap_ci_is_the_percentile_interval_of_the_resampled_statistic():
    values: list[float] = []

    def record(r):
        values.append(_mean_hat_2(r))
        return values[-1]

    low, high = bootstrap_ci(BOOT, record, n_resamples=400, confidence=0.9, seed=5)
    assert len(values) == 400
    # 90% interval: the 5th and 95th percentiles, not the 10th and 90th.
    assert low == pytest.approx(float(np.quantile(values, 0.05)))
    assert high == pytest.approx(float(np.quantile(values, 0.95)))
    assert low != pytest.approx(float(np.quantile(values, 0.10)))


def test_bootstrap_ci_narrows_with_lower_confidence():
    wide = bootstrap_ci(BOOT, _mean_hat_2, n_resamples=400, confidence=0.99, seed=3)
    narrow = bootstrap_ci(BOOT, _mean_hat_2, n_resamples=400, confidence=0.5, seed=3)
    assert wide[0] <= narrow[0] <= narrow[1] <= wide[1]
    assert wide[1] - wide[0] > narrow[1] - narrow[0]


def test_bootstrap_ci_is_degenerate_when_every_task_is_the_same():
    results = {f"t{i}": [True, False, True] for i in range(10)}
    low, high = bootstrap_ci(results, _mean_hat_2, n_resamples=100)
    assert low == pytest.approx(1 / 3) and high == pytest.approx(1 / 3)


def test_bootstrap_resamples_whole_tasks_with_replacement():
    results = {f"t{i}": [True] * (i + 1) for i in range(5)}  # trial count identifies the task
    seen: list[list[int]] = []

    def record(r):
        seen.append(sorted(len(v) for v in r.values()))
        return 0.0

    bootstrap_ci(results, record, n_resamples=200, seed=0)
    assert len(seen) == 200
    assert all(len(s) == 5 for s in seen)
    assert all(set(s) <= {1, 2, 3, 4, 5} for s in seen)  # outcomes of a task are never split
    assert any(len(set(s)) < 5 for s in seen)  # some task drawn twice: with replacement


# --------------------------------------------------------------------------- by type


TYPES = {"always": "easy", "never": "hard", "coin": "hard", "unused": "other"}


def test_by_type_breakdown_and_spread():
    breakdown = by_type(MIXED, TYPES, 2)
    assert list(breakdown) == ["easy", "hard"]  # types without tasks are not reported
    assert breakdown["easy"].pass_hat_k[2] == pytest.approx(1.0)
    assert breakdown["hard"].pass_hat_k[2] == pytest.approx((0 + 1 / 6) / 2)
    assert breakdown["hard"].n_tasks == 2
    # population std of two values is half their distance
    assert type_spread(breakdown, 2) == pytest.approx((1.0 - 1 / 12) / 2)


def test_type_spread_zero_for_a_single_type():
    breakdown = by_type(MIXED, {t: "all" for t in MIXED}, 1)
    assert type_spread(breakdown, 1) == 0.0


# --------------------------------------------------------------------------- bad inputs


@pytest.mark.parametrize("fn", [pass_hat_k, pass_at_k])
@pytest.mark.parametrize(
    "c,n,k,message",
    [
        (2, 4, 5, r"k cannot exceed n: k=5 .* n=4"),
        (5, 4, 2, r"c \(successes\) cannot exceed n \(trials\): c=5, n=4"),
        (-1, 4, 2, r"non-negative.*c=-1"),
        (1, -4, 2, r"non-negative.*n=-4"),
        (1, 4, -2, r"non-negative.*k=-2"),
        (1, 4, 0, r"k must be at least 1"),
    ],
)
def test_per_task_errors(fn, c, n, k, message):
    with pytest.raises(ValueError, match=message):
        fn(c, n, k)


@pytest.mark.parametrize("fn", [pass_hat_k, pass_at_k])
def test_per_task_rejects_non_integers(fn):
    with pytest.raises(TypeError, match="k must be an integer"):
        fn(1, 4, 2.0)
    with pytest.raises(TypeError, match="c must be an integer"):
        fn(True, 4, 1)


@pytest.mark.parametrize("fn", [mean_pass_hat_k, mean_pass_at_k])
def test_mean_names_tasks_with_too_few_trials(fn):
    results = {"ok": [True] * 5, "short-one": [True, False], "tiny": [False]}
    with pytest.raises(ValueError, match=r"k=3 .* 2 task\(s\).*'short-one' \(2 trials\)") as err:
        fn(results, 3)
    assert "'tiny' (1 trials)" in str(err.value)
    assert "'ok'" not in str(err.value)


@pytest.mark.parametrize("fn", [mean_pass_hat_k, mean_pass_at_k])
def test_mean_rejects_empty_and_non_boolean_results(fn):
    with pytest.raises(ValueError, match="results is empty"):
        fn({}, 1)
    with pytest.raises(ValueError, match=r"task 'x'.*booleans.*'fail'"):
        fn({"x": [True, "fail"]}, 1)
    with pytest.raises(ValueError, match=r"task 'x'.*booleans.*2"):
        fn({"x": [1, 2]}, 1)
    with pytest.raises(ValueError, match=r"task 'x'.*got a string"):
        fn({"x": "TTF"}, 1)
    with pytest.raises(ValueError, match="k must be at least 1"):
        fn({"x": [True]}, 0)


def test_summary_errors():
    with pytest.raises(ValueError, match=r"k=5 .*'coin' \(4 trials\)"):
        consistency_summary(MIXED, ks=(1, 5))
    with pytest.raises(ValueError, match="ks is empty"):
        consistency_summary(MIXED, ks=())
    with pytest.raises(ValueError, match=r"no trials: 'empty'"):
        consistency_summary({"empty": [], "full": [True]})


def test_bootstrap_errors():
    with pytest.raises(ValueError, match="results is empty"):
        bootstrap_ci({}, _mean_hat_2)
    with pytest.raises(ValueError, match="n_resamples must be at least 1"):
        bootstrap_ci(MIXED, _mean_hat_2, n_resamples=0)
    for bad in (0.0, 1.0, 1.5, -0.1):
        with pytest.raises(ValueError, match="confidence must be strictly between 0 and 1"):
            bootstrap_ci(MIXED, _mean_hat_2, confidence=bad)


def test_by_type_errors():
    with pytest.raises(ValueError, match=r"1 task\(s\) have no type in task_types: 'coin'"):
        by_type(MIXED, {"always": "easy", "never": "hard"}, 1)
    breakdown = by_type(MIXED, TYPES, 1)
    with pytest.raises(ValueError, match=r"k=2 is not reported"):
        type_spread(breakdown, 2)
    with pytest.raises(ValueError, match="breakdown is empty"):
        type_spread({}, 1)


def test_bootstrap_mean_ci_is_bootstrap_ci_of_the_mean():
    """One resampling scheme: the vectorised interval (used by the runner) equals the general one."""
    from skillbank.consistency._metrics import bootstrap_mean_ci

    per_task = {task: pass_hat_k(sum(o), len(o), 2) for task, o in BOOT.items()}
    for seed, confidence in ((0, 0.95), (7, 0.8)):
        general = bootstrap_ci(BOOT, _mean_hat_2, n_resamples=300, confidence=confidence, seed=seed)
        fast = bootstrap_mean_ci(list(per_task.values()), n_resamples=300, confidence=confidence, seed=seed)
        assert fast == pytest.approx(general, abs=1e-12)
    with pytest.raises(ValueError):
        bootstrap_mean_ci([], n_resamples=10)
    with pytest.raises(ValueError):
        bootstrap_mean_ci([1.0], confidence=1.0)
