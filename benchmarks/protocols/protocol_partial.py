"""A protocol run cut short (a session's end, a restart): its finished tiers, figured as the
protocol script's own ``table_of`` does, from the trials it had written (each tier's trials are
written when the tier ends), and, with ``--banks``, every transcript its two bank folders hold.
Not the protocol's table: a tier not written is not there.

    python benchmarks/protocols/protocol_partial.py --protocol 17
    python benchmarks/protocols/protocol_partial.py --protocol 17 --banks "$RUN_DIR"   # the run's skillbank-consistency-* temp folder
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE), str(HERE.parent), str(HERE.parents[1])]

import real_model_protocol as rmp  # noqa: E402


def finished_tiers(trials: Path) -> dict[str, tuple[dict, dict]]:
    """tier -> (without, with): task id -> outcomes, for tiers whose both arms were written."""
    arms: dict[tuple[str, str], dict[str, list[bool]]] = defaultdict(lambda: defaultdict(list))
    for line in trials.read_text().splitlines():
        row = json.loads(line)
        # The evolution tier's phase names its arm ("evolution/without"); the others carry it in "arm".
        tier, _, arm = row["phase"].partition("/")
        arm = arm or row.get("arm") or ""
        if row["phase"] not in ("evidence", "gate") and arm:
            arms[(tier, "without" if arm == "without" else "with")][row["task_id"]].append(bool(row["success"]))
    tiers = {}
    for tier in dict.fromkeys(t for t, _ in arms):
        without, with_ = arms[(tier, "without")], arms[(tier, "with")]
        if without and with_ and set(without) == set(with_):
            tiers[tier] = (dict(without), dict(with_))
    return tiers


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", type=int, required=True)
    parser.add_argument("--banks", type=Path, help="the run's temporary folder (evidence/, bank-<variant>/)")
    args = parser.parse_args(argv)
    tiers = finished_tiers(HERE / "runs" / f"consistency_trials_v{args.protocol}.jsonl")
    for tier, r in rmp.table_of(tiers, 3).items():
        print(rmp.table_row(tier, r, 3))
    for tier, (without, with_) in tiers.items():
        for task in sorted(without):
            print(f"{tier}: {task.split('#')[0]} "
                  + "".join(str(int(x)) for x in without[task]) + " -> "
                  + "".join(str(int(x)) for x in with_[task]))
    if args.banks:
        banks = {"evidence": args.banks / "evidence",
                 **{p.name.removeprefix("bank-"): p for p in sorted(args.banks.glob("bank-*"))}}
        out = HERE / "runs" / f"consistency_transcripts_v{args.protocol}_partial.jsonl.gz"
        rmp.keep_transcripts(banks, out)
        print(f"transcripts of {', '.join(banks)} kept in {out.relative_to(HERE.parents[1])}")


if __name__ == "__main__":
    main()
