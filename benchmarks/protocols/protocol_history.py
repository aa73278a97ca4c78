"""Every measured protocol run side by side, re-read from its kept trials: pass^3 without → with
per tier, with − without and its 95% bootstrap over templates, all drawn with one resample count
(so the intervals here can differ from a run's own printed ones, which used 2,000 before v23).
A run that measured several forms on one tier is listed as skipped; v1's log (no version in its
name) and v13's (killed after its first tier, `_killed`) are left out.

    python benchmarks/protocols/protocol_history.py            # a Markdown table, for the README
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from by_template import bootstrap, mean  # noqa: E402
from pool_protocols import tier_scores  # noqa: E402

TIERS = ("evolution", "unseen instances", "unseen templates")


def versions() -> list[int]:
    """Every version with a kept trials log, oldest first (v1's log has no version in its name)."""
    found = (p.stem.removeprefix("consistency_trials_v") for p in (HERE / "runs").glob("consistency_trials_v*.jsonl"))
    return sorted(int(v) for v in found if v.isdigit())


def cell(scores: dict[str, dict[str, float]], resamples: int) -> str:
    without, with_ = scores["without"], scores["with"]
    gain, lo, hi = bootstrap(without, with_, n=resamples)
    return f"{100 * mean(without):.0f} → {100 * mean(with_):.0f}, {100 * gain:+.0f} [{100 * lo:+.0f}, {100 * hi:+.0f}]"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--resamples", type=int, default=200_000, help="bootstrap resamples (v23's count by default)")
    args = parser.parse_args(argv)
    print("| protocol | " + " | ".join(f"{t}: pass^3 % without → with, with − without [95% CI]" for t in TIERS) + " |")
    print("|---|" + "---|" * len(TIERS))
    for version in versions():
        try:
            run = tier_scores(version)
        except ValueError as skipped:
            print(f"| v{version} | skipped: {skipped} |" + " |" * (len(TIERS) - 1))
            continue
        cells = [cell(run[t], args.resamples) if t in run and {"without", "with"} <= set(run[t]) else "not measured"
                 for t in TIERS]
        print(f"| v{version} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
