"""The pooled reading of several protocol runs (protocol v23's ``pooled_reading``), secondary to
each run's own figure: per tier, each template's with − without pass^3 averaged over the runs,
then the mean over templates with the protocol's bootstrap and sign-flip test over templates.

Each run measures one task of every template on fresh seeds, so averaging a template over runs
adds tasks, never templates: the interval stays one over templates.

    python benchmarks/protocols/pool_protocols.py 21 22 23

Each run is read from its kept trials log (`runs/consistency_trials_vN.jsonl`), the primary record.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from by_template import bootstrap, mean, per_template, resamples_of, sign_flip_p  # noqa: E402


def tier_scores(version: int) -> dict[str, dict[str, dict[str, float]]]:
    """tier → arm ("without", "with") → template → pass^3, from a run's kept trials (the
    primary record: a run cut short has no measurement JSON). A run that measured several
    forms on one tier (v2) has no single "with" arm: refused."""
    outcomes: dict[str, dict[str, dict[str, list[bool]]]] = defaultdict(lambda: defaultdict(dict))
    forms: dict[str, set[str]] = defaultdict(set)
    with (HERE / "runs" / f"consistency_trials_v{version}.jsonl").open() as f:
        for r in map(json.loads, f):
            if r["phase"] in ("evidence", "gate"):
                continue
            tier, _, form = r["phase"].partition("/")
            if r["arm"] == "with":
                forms[tier].add(form)
            outcomes[tier][r["arm"]].setdefault(r["task_id"], []).append(bool(r["success"]))
    for tier, names in forms.items():
        if len(names) > 1:
            raise ValueError(f"protocol v{version} measured {len(names)} forms on its {tier} tier "
                             f"({', '.join(sorted(names))}): there is no one 'with' arm to read")
    return {tier: {arm: per_template(tasks, 3) for arm, tasks in arms.items()} for tier, arms in outcomes.items()}


def pooled(runs: list[dict[str, dict[str, dict[str, float]]]], tier: str) -> dict[str, dict[str, float]]:
    """Each arm's per-template pass^3 averaged over the runs, on the templates every run measured."""
    common = set.intersection(*(set(run[tier]["without"]) & set(run[tier]["with"]) for run in runs))
    return {arm: {t: sum(run[tier][arm][t] for run in runs) / len(runs) for t in sorted(common)}
            for arm in ("without", "with")}


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("versions", type=int, nargs="+", help="protocol versions to pool (each with its kept trials log)")
    args = parser.parse_args(argv)
    # The newest version's resample count: the one the pooled reading was declared with.
    resamples = resamples_of(json.loads((HERE / f"protocol_v{max(args.versions)}.json").read_text()))
    runs = [tier_scores(v) for v in args.versions]
    for tier in runs[0]:
        arms = pooled(runs, tier)
        without, with_ = arms["without"], arms["with"]
        gain, lo, hi = bootstrap(without, with_, n=resamples)
        print(f"{tier:17s} pass^3 {100 * mean(without):.0f}% -> {100 * mean(with_):.0f}%, with - without "
              f"{100 * gain:+.1f} pts [{100 * lo:+.1f}, {100 * hi:+.1f}], p = {sign_flip_p(without, with_):.3f}; "
              f"{len(without)} templates x {len(runs)} runs ({resamples} resamples)")
        for t in without:
            per_run = " ".join(f"{100 * (run[tier]['with'][t] - run[tier]['without'][t]):+4.0f}" for run in runs)
            print(f"    {t:44s} {per_run}")


if __name__ == "__main__":
    main()
