"""Intervals over templates, not tasks: the protocol's statistics (``protocol.json``).

Trials of one task are not independent draws of the model's skill, and neither are two
instances of one template: a template is the unit a gain must hold across. Each template's
score is the mean over its tasks of the per-task pass^k; the bootstrap resamples templates
(all arms together), and the paired test flips the sign of each template's difference.

    python benchmarks/protocols/by_template.py benchmarks/protocols/real_model_loop.json   # a loop's JSON, re-read
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

__all__ = ["template_of", "per_template", "mean", "resamples_of", "bootstrap", "sign_flip_p"]


def template_of(task_id: str) -> str:
    return task_id.split("#", 1)[0].removesuffix("+budget")


def _pass_hat(outcomes: Sequence[bool], k: int) -> float:
    from skillbank.consistency._metrics import pass_hat_k

    return pass_hat_k(sum(outcomes), len(outcomes), k)


def per_template(arm: Mapping[str, Sequence[bool]], k: int) -> dict[str, float]:
    """Each template's mean over its tasks of pass^k."""
    groups: dict[str, list[float]] = {}
    for task, outcomes in arm.items():
        groups.setdefault(template_of(task), []).append(_pass_hat(outcomes, k))
    return {t: float(np.mean(v)) for t, v in groups.items()}


def mean(scores: Mapping[str, float]) -> float:
    """The mean over templates of per-template scores (a tier's figure)."""
    return float(np.mean(list(scores.values())))


def resamples_of(protocol: Mapping) -> int:
    """The bootstrap's resample count a protocol names (v23 on); 2,000 before, as those ran."""
    return protocol["metrics"].get("resamples", 2000)


def bootstrap(without: Mapping[str, float], with_: Mapping[str, float], *, n: int = 2000,
              seed: int = 0) -> tuple[float, float, float]:
    """Mean with − without over templates, and its 95% bootstrap interval over templates."""
    names = sorted(set(without) & set(with_))
    diff = np.array([with_[t] - without[t] for t in names])
    draws = np.random.default_rng(seed).integers(0, len(names), size=(n, len(names)))
    lo, hi = np.quantile(diff[draws].mean(axis=1), [0.025, 0.975])
    return float(diff.mean()), float(lo), float(hi)


def sign_flip_p(without: Mapping[str, float], with_: Mapping[str, float]) -> float:
    """Two-sided paired permutation test over templates: every sign flip (n ≤ 16)."""
    names = sorted(set(without) & set(with_))
    diff = np.array([with_[t] - without[t] for t in names])
    observed = abs(diff.sum())
    flips = np.array(list(itertools.product((1, -1), repeat=len(names))))
    return float(np.mean(np.abs(flips @ diff) >= observed - 1e-12))


def _reread(path: Path) -> None:
    out = json.loads(path.read_text())
    arms = out["arms"]
    sets = {"evolution set": (arms["without_train"], arms["forms"][out["winner"]])}
    if arms.get("heldout"):
        sets["held-out"] = (arms["heldout"]["without"], arms["heldout"]["with"])
    k = out["config"]["trials"]
    for name, (without, with_) in sets.items():
        for kk in (1, k):
            w, b = per_template(without, kk), per_template(with_, kk)
            o = per_template({t: arms["oracle"][t] for t in without}, kk)
            gain, lo, hi = bootstrap(w, b)
            head = np.mean([o[t] - w[t] for t in w])
            print(f"{name:14s} pass^{kk}: {len(w)} templates, {len(without)} tasks x {k} trials; "
                  f"with - without {100 * gain:+.0f} pts [{100 * lo:+.0f}, {100 * hi:+.0f}] by template, "
                  f"sign-flip p = {sign_flip_p(w, b):.2f}; captured "
                  + (f"{gain / head:.0%}" if head > 1e-9 else "– (no headroom)"))


if __name__ == "__main__":
    for arg in sys.argv[1:]:
        print(arg)
        _reread(Path(arg))
