"""``python -m skillbank_harness.envs``: success of the simulated policy with and without skills.

Each task kind is run unguided (no skills) and guided (the template's ``hints`` rendered into
the system prompt), over several policy seeds. These numbers come from a simulated policy and
show the machinery working; they are not a claim about any real model.
"""

from __future__ import annotations

import argparse
import collections
import time

from skillbank_harness.envs.policy import SimulatedPolicy
from skillbank_harness.envs.runner import run_task
from skillbank_harness.envs.tasks import TASK_TYPES, generate_tasks

KINDS = [*TASK_TYPES, *(f"{t}+budget" for t in TASK_TYPES)]


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(prog="python -m skillbank_harness.envs", description=__doc__.split("\n")[0])
    ap.add_argument("--per-template", type=int, default=2, help="task instances per template")
    ap.add_argument("--seeds", type=int, default=5, help="policy seeds per task")
    ap.add_argument("--seed", type=int, default=0, help="task generation seed")
    ap.add_argument("--family", action="append", help="only these families (repeatable)")
    args = ap.parse_args(argv)

    tasks = generate_tasks(args.family, per_template=args.per_template, seed=args.seed)
    policy = SimulatedPolicy()
    wins: dict[tuple[str, str], list[int]] = collections.defaultdict(lambda: [0, 0])
    started = time.perf_counter()
    for task in tasks:
        for s in range(args.seeds):
            for arm, skills in (("unguided", None), ("guided", list(task.hints))):
                ok = run_task(task, policy.with_seed(s), skills=skills).success
                cell = wins[(task.kind, arm)]
                cell[0] += ok
                cell[1] += 1
    print("Simulated policy (not a real model): success rate per task kind")
    print(f"{'kind':24s} {'unguided':>9s} {'guided':>9s} {'runs':>6s}")
    for kind in KINDS:
        u, g = wins[(kind, "unguided")], wins[(kind, "guided")]
        if u[1]:
            print(f"{kind:24s} {u[0] / u[1]:9.2f} {g[0] / g[1]:9.2f} {u[1]:6d}")
    print(f"{len(tasks)} tasks x {args.seeds} seeds x 2 arms in "
          f"{time.perf_counter() - started:.1f}s; policy defaults: {policy._identifying_params}")


if __name__ == "__main__":
    main()
