"""Dry check, no model: what the stated-time and stated-date lessons (skillbank._clock,
skillbank._dates, skillbank/lessons/_kinds/stated_value.py, the check in adapters/_reminders.py) would have done
on every run the protocols kept.

1. Learning: for each protocol's evidence bank (the without arm, before any skill existed), per
   template, would the rule propose ``stated_time``, and for which tool and parameter?
2. The check: over every kept run of every arm, each call that passes a time where the user said
   one, per tool parameter: how many calls it would answer with the said time instead of running
   them, in failed runs (a catch) and in successful runs (a false alarm, which must be none).

Run for times before protocol v17 was committed (its output is quoted in protocol_v17.json's
written_after), and for dates after v18 (``--kind date``). The kept runs were recorded before
runs carried their today; every one is a ``steady`` run, whose world's today is Monday
8 March 2027 (its system prompts say so), so that is the today they are read with. The kept
runs are past data; a protocol measures on fresh seeds.

    python benchmarks/protocols/stated_times_dry.py [--kind time|date]
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import gzip
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parents[1])]

from skillbank.evolution._evidence import to_run  # noqa: E402
from skillbank.lessons._kinds.stated_value import stated_values  # noqa: E402
from skillbank.lessons import LessonKind  # noqa: E402
from skillbank.models import Trajectory  # noqa: E402
from skillbank._said import said_values, value_reading  # noqa: E402

STEADY_TODAY = dt.date(2027, 3, 8)  # skillbank_harness.envs.families.steady.TODAY
KINDS = {"time": LessonKind.stated_time, "date": LessonKind.stated_date}


def _trajectories(path: Path):
    with gzip.open(path, "rt") as fh:
        for line in fh:
            row = json.loads(line)
            row.pop("bank", None)  # v2 kept one bank
            traj = Trajectory.model_validate(row)
            # Each bank holds the evidence phase's runs (copied into every arm's bank): count them once.
            yield traj.labels.get("run") == "evidence", traj


def _template(task_id: str | None) -> str:
    return (task_id or "?").split("#")[0]


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kind", choices=sorted(KINDS), default="time")
    kind = KINDS[parser.parse_args(argv).kind]
    files = sorted(HERE.glob("runs/consistency_transcripts_v*.jsonl.gz"),
                   key=lambda p: int(p.name.split("_v")[1].split(".")[0].split("_")[0]))
    checked: Counter = Counter()  # (tool, parameter, outcome, flagged) -> calls
    print("1. Learning, on each protocol's evidence bank (per template):")
    for path in files:
        evidence: dict[str, list] = defaultdict(list)
        seen: set[str] = set()
        for is_evidence, traj in _trajectories(path):
            if traj.id in seen:
                continue
            seen.add(traj.id)
            run = dataclasses.replace(to_run(traj), today=traj.today or STEADY_TODAY)
            said = {r for t in said_values(kind, run.task, run.today) for r in t.readings}
            for call in run.calls:
                for parameter, value in (call.args or {}).items():
                    named = parameter == kind.value.removeprefix("stated_")  # "time", "date"
                    if said and (value_reading(kind, value) is not None or named):
                        flagged = value_reading(kind, value) not in said
                        checked[(call.tool, parameter, run.success, flagged)] += 1
            if is_evidence:
                evidence[_template(run.task_id)].append(run)
        proposed = []
        for template, runs in sorted(evidence.items()):
            ok = [r for r in runs if r.success]
            bad = [r for r in runs if not r.success]
            for lesson, why in stated_values(ok, bad, kind):
                proposed.append(f"{template.split('.', 1)[1]}: `{lesson.tool}`.`{lesson.parameter}` ({why})")
        print(f"  {path.name.split('_')[2].split('.')[0]}: " + ("; ".join(proposed) or "none"))
    print(f"\n2. The check, on every kept call that passes a {kind.value[7:]} where the user said one:")
    print("  tool.parameter: failed runs flagged/calls; successful runs flagged/calls")
    keys = sorted({(tool, parameter) for tool, parameter, _, _ in checked})
    for tool, parameter in keys:
        def n(success, flagged=None):
            return sum(v for (t, p, s, f), v in checked.items()
                       if (t, p, s) == (tool, parameter, success) and (flagged is None or f == flagged))
        print(f"  {tool}.{parameter}: failed {n(False, True)}/{n(False)}; successful {n(True, True)}/{n(True)}")


if __name__ == "__main__":
    main()
