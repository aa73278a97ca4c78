"""A post-hoc reading of a protocol run, NOT the protocol's figure (issue 29): a success whose
reply echoes the skills block or the lesson ("<skill", "No tool."), or is tool-call text, counted
as a failure. Written after v4's run, from its kept transcripts; the pattern is unchanged since
(committed before v5 finished). pass^3 as the protocol computes it (``by_template.per_template``),
averaged over templates:

    python benchmarks/protocols/reread_echoes.py --protocol 4

``--empty`` also re-reads a success whose reply is empty as a failure (the user was told
nothing): the reading RESULTS.md gave v21 by hand, added after v21 and committed before v22.
"""

from __future__ import annotations

import argparse
import gzip
import json
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from by_template import bootstrap, mean, per_template, resamples_of, sign_flip_p  # noqa: E402

ECHO = re.compile(r"<skill|<tool name=|\bno tools?\b|use-no-tools|^\s*(\{\{|```|\{)", re.I)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--protocol", type=int, default=4, help="the protocol version whose run to re-read (4 or later)")
    parser.add_argument("--empty", action="store_true", help="an empty reply fails too")
    args = parser.parse_args(argv)
    version = args.protocol
    resamples = resamples_of(json.loads((HERE / f"protocol_v{version}.json").read_text()))
    kept = HERE / "runs" / f"consistency_transcripts_v{version}.jsonl.gz"
    if not kept.exists():  # a run cut short keeps what its banks held when it stopped
        kept = kept.with_name(f"consistency_transcripts_v{version}_partial.jsonl.gz")
    with gzip.open(kept, "rt") as f:
        answers = {r["id"]: r["final_answer"] or "" for r in map(json.loads, f)}
    unread: Counter = Counter()  # trials with no kept transcript: counted as the protocol did
    arms: dict[str, dict[str, dict[str, list[bool]]]] = defaultdict(lambda: defaultdict(dict))
    echoed: Counter = Counter()
    for r in map(json.loads, (HERE / "runs" / f"consistency_trials_v{version}.jsonl").open()):
        if r["phase"] in ("evidence", "gate"):
            continue
        tier, ok = r["phase"].split("/")[0], bool(r["success"])
        if r["trajectory_id"] not in answers:
            unread[tier] += 1
        answer = answers.get(r["trajectory_id"], "")
        if ok and (ECHO.search(answer) or (args.empty and r["trajectory_id"] in answers and not answer.strip())):
            ok, echoed[(tier, r["arm"])] = False, echoed[(tier, r["arm"])] + 1
        arms[tier][r["arm"]].setdefault(r["task_id"], []).append(ok)
    for tier, by_arm in arms.items():
        scores = {arm: per_template(tasks, 3) for arm, tasks in by_arm.items()}
        without, with_ = scores.get("without"), scores.get("with")
        # The protocol's interval and test on the re-read scores (as the table's, by template).
        gain = "" if not (without and with_) else \
            "with - without {:+.0f} pts [{:+.0f}, {:+.0f}], p = {:.2f}".format(
                *(100 * x for x in bootstrap(without, with_, n=resamples)), sign_flip_p(without, with_))
        print(tier, {arm: f"{100 * mean(s):.0f}%" for arm, s in scores.items()}, gain,
              "successes re-read as failures:", {arm: echoed[(tier, arm)] for arm in by_arm},
              f"(trials without a kept transcript, left as scored: {unread[tier]})" if unread[tier] else "")


if __name__ == "__main__":
    main()
