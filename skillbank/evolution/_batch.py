"""Reading evidence for a round: labelled trajectories loaded into :class:`Run` s, grouped by the
skills injected into them, past the watermark.

The watermark: every trajectory a round reads is stamped with the round number
(``consumed_round``), so the next round skips it; a round started with ``since`` re-reads
labelled trajectories from that time on, consumed or not.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Sequence

from skillbank.evolution._evidence import HiddenLiterals, Run, _hide, build_run
from skillbank.evolution._methods import instance_values
from skillbank.evolution._seam import EvolutionBank
from skillbank.evolution._templates import task_template
from skillbank._splits import HELD_OUT_SPLITS

__all__ = ["Batch", "load_batch", "group", "retemplate"]


@dataclass
class Batch:
    """The labelled trajectories one round reads."""

    runs: list[Run]
    hidden: HiddenLiterals
    by_skill: dict[str, list[Run]]
    uncovered: list[Run]

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.runs]


def load_batch(bank: EvolutionBank, *, since: datetime | None = None, chunk: int = 500,
               include_heldout: bool = False) -> Batch:
    """Labelled trajectories not consumed by an earlier round (or all since ``since``).

    Runs labelled with a held-out split (``split=heldout``, ``test``, ...) are measured on, not
    learned from: they are left out (and left unconsumed) unless ``include_heldout``. Rows are
    read in batches of ``chunk`` ids straight from the store into :class:`Run` (no per-step
    model validation: the rows were validated when written), so a 100,000-trajectory round
    stays in memory and in minutes.
    """
    ids = bank.evidence.labelled_ids(since=since, exclude_splits=() if include_heldout else HELD_OUT_SPLITS)
    runs: list[Run] = []
    hidden = HiddenLiterals()
    for start in range(0, len(ids), chunk):
        runs.extend(_load_runs(bank, ids[start:start + chunk], hidden))
    return group(runs, hidden)


def _load_runs(bank: EvolutionBank, ids: list[str], hidden: HiddenLiterals) -> list[Run]:
    rows = bank.evidence.run_rows(ids)
    out: list[Run] = []
    for tid in ids:
        r = rows.trajectories.get(tid)
        if r is None:
            continue
        note = json.loads(r["outcome"]).get("note") if r["outcome"] else None
        _hide(hidden, r["task_id"], r["task_type"], json.loads(r["labels"] or "{}"), note)
        out.append(build_run(id=tid, task=r["task"], success=r["success"], steps=rows.steps.get(tid, ()),
                             limits=rows.limits.get(tid, ()), injections=rows.injections.get(tid, ()),
                             answer=r["final_answer"], started_at=r["started_at"],
                             task_id=r["task_id"], task_type=r["task_type"], today=r.get("today")))
    return out


def retemplate(runs: Sequence[Run]) -> None:
    """Template every run's task with the instance values any run of the batch revealed.

    A run's own calls show which of its task's words are instance values ("ann" in "refund
    ann's last order", passed as ``customer``); a run that made no such call (a shortcut, a
    refusal) would keep them and fall out of its kind of request. The union fixes that.
    """
    known: set[str] = set()
    for run in runs:
        known.update(v.lower() for v in instance_values(run.task, run.calls))
    if not known:
        return
    for run in runs:
        task = run.task.lower()
        mine = sorted((v for v in known if v in task), key=lambda v: (-len(v), v))
        template = task_template(run.task, mine)
        if run.group == run.template:
            run.group = template
        run.template = template


def group(runs: list[Run], hidden: HiddenLiterals | None = None) -> Batch:
    """Group runs by the skills injected into them; runs that used none are uncovered (task
    templates first made consistent across the batch, see :func:`retemplate`)."""
    retemplate(runs)
    by_skill: dict[str, list[Run]] = defaultdict(list)
    uncovered: list[Run] = []
    for run in runs:
        if run.skills:
            for sid in run.skills:
                by_skill[sid].append(run)
        else:
            uncovered.append(run)
    return Batch(runs=runs, hidden=hidden or HiddenLiterals(), by_skill=dict(by_skill),
                 uncovered=uncovered)
