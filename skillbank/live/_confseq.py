"""Anytime-valid confidence sequences for a Bernoulli mean and a difference of two.

A confidence sequence (CS) is a sequence of intervals that hold the true mean at *every* sample
size at once with probability at least ``1 - alpha``, so it may be looked at after every run and
acted on whenever it excludes a value, unlike a fixed-sample interval re-tested every round.

The boundary is the two-sided normal-mixture boundary of Howard, Ramdas, McAuliffe and Sekhon,
"Time-uniform, nonparametric, nonasymptotic confidence sequences", Annals of Statistics 49(2),
2021 (Eq. 14, with Hoeffding's sub-Gaussian bound for [0, 1] outcomes, variance proxy 1/4 per
observation): after ``n`` outcomes with sum ``S``,

    |S - n p| <= sqrt(2 (V + rho) log(sqrt((V + rho) / rho) / alpha)),  V = n / 4,

for all ``n`` simultaneously with probability ``>= 1 - alpha`` (Ville's inequality on the
Gaussian mixture of the exponential supermartingales). ``rho`` sets the sample size where the
boundary is tightest; :func:`rho_for` picks it for a given ``n``.

A difference ``p_shown - p_held`` takes one CS per arm at ``alpha / 2`` each (a union bound): both
hold at every time with probability ``>= 1 - alpha``, and the difference's interval is
``[lo_shown - hi_held, hi_shown - lo_held]``. Under randomized exposure each arm's outcomes are a
sample of runs assigned to it independently of anything about them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

__all__ = ["DEFAULT_RHO", "Interval", "bernoulli_cs", "difference_cs", "rho_for"]


def rho_for(n: int, alpha: float = 0.05) -> float:
    """The mixture parameter that makes the boundary tightest near ``n`` observations (Howard et
    al. 2021, Eq. 15's approximation, for variance proxy ``n / 4``)."""
    v = n / 4.0
    a = 2.0 * math.log(1.0 / alpha) + math.log(1.0 + 2.0 * math.log(1.0 / alpha))
    return v / a


#: Tightest near 200 labelled runs per arm: a few hundred runs is what a skill sees in weeks.
DEFAULT_RHO = rho_for(200)


@dataclass(frozen=True)
class Interval:
    """A confidence interval ``[low, high]`` around ``estimate`` (``None``: no observations)."""

    estimate: float | None
    low: float
    high: float

    def excludes_zero(self) -> bool:
        return self.low > 0.0 or self.high < 0.0

    def as_dict(self) -> dict[str, float | None]:
        return {"estimate": self.estimate, "low": self.low, "high": self.high}


def _radius(n: int, alpha: float, rho: float) -> float:
    v = n / 4.0
    return math.sqrt(2.0 * (v + rho) * math.log(math.sqrt((v + rho) / rho) / alpha))


def bernoulli_cs(successes: int, n: int, alpha: float = 0.05, rho: float = DEFAULT_RHO) -> Interval:
    """The CS for a mean in [0, 1] after ``n`` outcomes summing to ``successes``, clipped to [0, 1]."""
    if n <= 0:
        return Interval(None, 0.0, 1.0)
    if not 0 <= successes <= n:
        raise ValueError(f"successes must be in [0, {n}], not {successes}")
    mean = successes / n
    r = _radius(n, alpha, rho) / n
    return Interval(mean, max(0.0, mean - r), min(1.0, mean + r))


def difference_cs(shown: tuple[int, int], held: tuple[int, int], alpha: float = 0.05,
                  rho: float = DEFAULT_RHO) -> Interval:
    """The CS for ``p_shown - p_held`` from ``(successes, n)`` of each arm, valid at ``alpha``."""
    a = bernoulli_cs(*shown, alpha=alpha / 2, rho=rho)
    b = bernoulli_cs(*held, alpha=alpha / 2, rho=rho)
    estimate = a.estimate - b.estimate if a.estimate is not None and b.estimate is not None else None
    return Interval(estimate, a.low - b.high, a.high - b.low)
