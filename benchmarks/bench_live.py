"""A simulated production stream for the live monitor: who is decided, when, and how often a
null stream is decided on wrongly.

A seeded Bernoulli stream of runs, each of one of two kinds of request ("a", "b"), each eligible
for every live skill; each skill's arm is drawn per run (skillbank.live._exposure.draw) and the
run succeeds with probability ``BASE`` plus the effect of every skill it was shown:

- ``helps``    canary, +0.12 on both kinds            -> the monitor should promote it
- ``hurts``    canary, -0.12 on both kinds            -> reject
- ``mixed``    canary, +0.15 on "a", -0.15 on "b"     -> narrow (not for "b")
- ``neutral``  canary, 0                              -> undecided (or stale)
- ``turns``    active, +0.08, then -0.15 from run TURN_AT -> retire

Every ``CHECK_EVERY`` runs the monitor's decision rule (skillbank.live._monitor.decide) reads
each skill's tally; a decision takes effect at once (a promoted skill stays under the holdout, a
rejected or retired one is never shown again, a narrowed one is no longer eligible for the kind
it hurts, and its evidence starts again). Then ``--null-seeds`` streams where no skill has any
effect: the share of streams with any decision other than stale is the monitor's error rate.

    python benchmarks/bench_live.py [--seeds 20] [--null-seeds 200] [--runs 20000]
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from skillbank.live._canary import with_canary, without_canary
from skillbank.live._config import LiveConfig
from skillbank.live._effect import Tally
from skillbank.live._exposure import ExposureDraw
from skillbank.live._monitor import Action, decide
from skillbank.models import Skill, SkillContent, SkillStatus, utcnow

BASE = 0.5
CHECK_EVERY = 25
TURN_AT = 1000
KINDS = ("a", "b")
EXPECTED = {"helps": Action.promote, "hurts": Action.reject, "mixed": Action.narrow, "neutral": None,
            "turns": Action.retire}


def _effect(name: str, kind: str, t: int) -> float:
    return {"helps": 0.12, "hurts": -0.12, "neutral": 0.0,
            "mixed": 0.15 if kind == "a" else -0.15,
            "turns": 0.08 if t < TURN_AT else -0.15}[name]


def _skill(name: str, canary: bool) -> Skill:
    content = SkillContent(name=name, description=f"the {name} skill", body=f"Do the {name} thing.")
    content = with_canary(content) if canary else content
    now = utcnow()
    return Skill(id=name, content=content, status=SkillStatus.active, version=1, content_hash=content.hash(),
                 created_at=now, updated_at=now)


@dataclass
class Live:
    skill: Skill
    tally: Tally = field(default_factory=Tally)
    not_for: set[str] = field(default_factory=set)
    gone: bool = False
    decided: list[tuple[Action, int]] = field(default_factory=list)


def stream(seed: int, runs: int, config: LiveConfig, *, null: bool = False) -> dict[str, list[tuple[Action, int]]]:
    """One seeded stream; per skill, the decisions taken and the run each was taken at."""
    rng = random.Random(seed)
    draw = ExposureDraw(LiveConfig(canary_exposure=config.canary_exposure, holdout=config.holdout,
                                   salt=f"seed{seed}"))
    skills = {n: Live(_skill(n, canary=n != "turns")) for n in EXPECTED}
    for t in range(runs):
        kind = KINDS[rng.random() < 0.5]
        eligible = [s for s in skills.values() if not s.gone and kind not in s.not_for]
        arms = {e.skill_id: e.arm for e in draw.assign(f"run{t}", [s.skill for s in eligible])}
        p = BASE + sum(0.0 if null else _effect(s.skill.id, kind, t)
                       for s in eligible if arms.get(s.skill.id, "shown") == "shown")
        success = rng.random() < p
        for s in eligible:
            s.tally.add(arms.get(s.skill.id, "shown"), success, kind=kind)
        if (t + 1) % CHECK_EVERY:
            continue
        for s in eligible:
            d = decide(s.skill, s.tally, config)
            if d is None or d.action == Action.stale:
                continue
            s.decided.append((d.action, t + 1))
            if d.action == Action.promote:
                s.skill = s.skill.model_copy(update={"content": without_canary(s.skill.content)})
            elif d.action in (Action.reject, Action.retire):
                s.gone = True
            elif d.action == Action.narrow:
                s.not_for.update(d.hurts)
                s.tally = Tally()
    return {n: s.decided for n, s in skills.items()}


def first(decided: list[tuple[Action, int]]) -> tuple[Action | None, int | None]:
    return decided[0] if decided else (None, None)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, default=20)
    ap.add_argument("--null-seeds", type=int, default=200)
    ap.add_argument("--runs", type=int, default=20000)
    ap.add_argument("--null-runs", type=int, default=5000)
    ap.add_argument("--holdout", type=float, default=0.05)
    ap.add_argument("--quick", action="store_true", help="a smoke run: 2 seeds, 5 null seeds, short streams")
    args = ap.parse_args(argv)
    if args.quick:
        args.seeds, args.null_seeds, args.runs, args.null_runs = 2, 5, 6000, 1000
    config = LiveConfig(holdout=args.holdout, stale_after=timedelta(days=3650))
    t0 = time.perf_counter()
    print(f"effect stream: {args.seeds} seeds x {args.runs} runs, holdout {args.holdout}, alpha {config.alpha}, "
          f"checked every {CHECK_EVERY} runs")
    correct = {n: 0 for n in EXPECTED}
    took: dict[str, list[int]] = {n: [] for n in EXPECTED}
    for seed in range(args.seeds):
        for name, decided in stream(seed, args.runs, config).items():
            action, at = first(decided)
            correct[name] += action == EXPECTED[name]
            if action is not None and action == EXPECTED[name]:
                took[name].append(at - (TURN_AT if name == "turns" else 0))
    for name, want in EXPECTED.items():
        runs = sorted(took[name])
        median = runs[len(runs) // 2] if runs else None
        after = " after the turn" if name == "turns" else ""
        print(f"  {name:8s} expected {want.value if want else 'undecided':9s} right in {correct[name]}/{args.seeds}"
              + (f"; runs to decide{after}: median {median}, range {runs[0]}-{runs[-1]}" if runs else ""))
    wrong = 0
    for seed in range(args.null_seeds):
        decided = stream(10_000 + seed, args.null_runs, config, null=True)
        wrong += any(decided.values())
    print(f"null stream: {args.null_seeds} seeds x {args.null_runs} runs: any wrong decision in "
          f"{wrong}/{args.null_seeds} = {wrong / args.null_seeds:.1%} of streams (target <= 5%)")
    print(f"({time.perf_counter() - t0:.1f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
