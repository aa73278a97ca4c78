"""Rounds and reports: each evolution round's report (what it read and wrote, read back from
the bank), and each consistency measurement (`skillbank eval`, the demo) stored in the bank,
rendered as the tables and figures of the HTML report.

A round's report is rebuilt from the bank: the rounds table (number, when it finished, runs
read) and the skill versions it wrote. Rounds run one at a time (the evolution lock), so a
version by ``evolution:*`` written after the previous round finished and before this one did
is this round's, and a version by its gate (``gate``/``policy``) written after it finished and
before the next one wrote anything is its gate's.

A measurement is rebuilt from its trials, which ``eval`` stores labelled with the run id, arm,
trial and split: the same :class:`MeasureResult` the HTML report is drawn from.
"""

from __future__ import annotations

import base64
import bisect
import dataclasses
import hashlib
import json
from collections import Counter, defaultdict
from types import SimpleNamespace
from typing import Any, Callable

from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from skillbank.bank import SkillBank
from skillbank._lru import LRU
from skillbank.store._rounds import FinishedRound
from skillbank.store._skills import VersionStamp

GATE_AUTHORS = ("gate", "policy")
FIGURES = ("pass_k", "by_type", "cost")
_FIGURES_CACHED = 60  # PNGs of some 30 KB: 20 reports' figures in under 2 MB


def _is_evolution(author: str) -> bool:
    return author.startswith("evolution")


def round_versions(bank: SkillBank) -> tuple[list[FinishedRound], dict[int, list[VersionStamp]]]:
    """The finished rounds (oldest first) and, by round, the versions it and its gate wrote."""
    rounds = bank.rounds.finished()
    finished = [r.finished_at or "" for r in rounds]
    by_round: dict[int, list[VersionStamp]] = defaultdict(list)
    for v in bank.skills.stamps(author_prefix="evolution", authors=GATE_AUTHORS):
        if _is_evolution(v.author):
            i = bisect.bisect_left(finished, v.created_at)  # the first round finishing at or after it
        else:
            i = bisect.bisect_left(finished, v.created_at) - 1  # the last round finished before it
        if 0 <= i < len(rounds):
            by_round[rounds[i].round].append(v)
    return rounds, by_round


def round_summary(rnd: FinishedRound, versions: list[VersionStamp]) -> dict[str, Any]:
    own = [v for v in versions if _is_evolution(v.author)]
    gate = [v for v in versions if v.author in GATE_AUTHORS]
    return {
        "round": rnd.round, "finished_at": (rnd.finished_at or "–")[:19].replace("T", " "),
        "runs": "–" if rnd.trajectories is None else rnd.trajectories,
        "proposed": sum(1 for v in own if v.version == 1),
        "changed": sum(1 for v in own if v.version > 1 and v.status != "retired"),
        "retired": sum(1 for v in own if v.status == "retired"),
        "promoted": sum(1 for v in gate if v.status == "active"),
        "rejected": sum(1 for v in gate if v.status == "retired" and v.reason.startswith("rejected")),
    }


def measurements(bank: SkillBank) -> list[dict[str, Any]]:
    """The consistency runs stored in the bank, newest first: run id, trials, first/last time."""
    return [{"run": m.run, "trials": m.trials, "arms": m.arms,
             "first": m.first[:19].replace("T", " "), "last": m.last[:19].replace("T", " ")}
            for m in bank.trajectories.labelled_runs()]


def measure_result(bank: SkillBank, run_id: str) -> Any:
    """The run's finished trials as a MeasureResult; 404 when the bank holds none."""
    from skillbank.consistency.result import MeasureResult
    from skillbank.consistency._trials import ARM_WITH, ARM_WITHOUT, is_finished, record_from_trajectory

    trajs = [t for t in bank.trajectories.list(limit=None, with_steps=True, labels={"run": run_id})
             if is_finished(t.labels) and t.labels.get("arm") and t.success is not None]
    if not trajs:
        raise HTTPException(404, f"no finished trials of a measurement named {run_id!r} in this bank")
    tasks: dict[str, dict[str, Any]] = {}
    records = []
    for t in trajs:
        task_id = t.task_id or t.id
        split = t.labels.get("split")
        tasks.setdefault(task_id, {"type": str(t.task_type or "task"), "split": split})
        task = SimpleNamespace(id=task_id, type=tasks[task_id]["type"])
        trial = int(t.labels["trial"]) if str(t.labels.get("trial", "")).isdigit() else 0
        seed = int(t.labels["seed"]) if str(t.labels.get("seed", "")).isdigit() else 0
        records.append(record_from_trajectory(t, task=task, split=split, arm=t.labels["arm"], trial=trial,
                                              seed=seed, success=bool(t.success), latency_s=None,
                                              snapshot=t.labels.get("snapshot"), resumed=False))
    present = {r.arm for r in records}
    arms = tuple(a for a in (ARM_WITHOUT, ARM_WITH) if a in present) + tuple(sorted(present - {ARM_WITH, ARM_WITHOUT}))
    per_task = Counter((r.task_id, r.arm) for r in records)
    models = {t.model for t in trajs if t.model}
    return MeasureResult(run_id=run_id, arms=arms, trials=min(per_task.values()), tasks=tasks, records=records,
                         model=", ".join(sorted(models)) or None,
                         bank_snapshot=next((r.snapshot for r in records if r.snapshot), None))


def report_view(result: Any) -> dict[str, Any]:
    """The tables the HTML report shows for ``result`` (figures are served as PNG by URL)."""
    from skillbank.consistency import report

    data = report.report_data(result)["results"][result.run_id]
    k = result.key_k
    return {
        "k": k, "run_id": result.run_id, "n_tasks": len(result.tasks), "trials": result.trials,
        "arms": list(result.arms), "model": result.model or "unnamed",
        "consistency": report._table(
            ["set", "arm", "tasks", "trials", "pass^1", f"pass^{k}", "95% CI", f"pass@{k}", f"gap @{k}",
             "gap 95% CI", "mean task var.", "all-identical", "type spread"],
            report._headline_rows(result, data), left=2),
        "deltas": report._table(["set", "metric", "change", "95% CI (bootstrap over tasks)", "tasks"],
                                report._delta_rows(result, data), left=2),
        "by_type": report._type_table(result, data),
        "cost": report._cost_table(result, data),
    }


def _drawn_from(result: Any) -> str:
    """A digest of everything a report's figures are drawn from: a new or finished trial
    changes it, so a cached figure is never stale."""
    rows = sorted(json.dumps(dataclasses.asdict(r), sort_keys=True, default=str) for r in result.records)
    return hashlib.sha256("\n".join(rows).encode()).hexdigest()


def figure_png(result: Any, name: str) -> bytes:
    from skillbank.consistency import report

    draw = {"pass_k": report._fig_pass_k, "by_type": report._fig_by_type, "cost": report._fig_cost}[name]
    return base64.b64decode(draw(result))


def routes(bank: SkillBank, page: Callable[..., Response]) -> list[Route]:
    # Drawing a figure costs ~120 ms of matplotlib; reading the trials it is drawn from, a few.
    drawn: LRU[tuple[str, str, str], bytes] = LRU(_FIGURES_CACHED)

    async def rounds(request: Request) -> Response:
        found, by_round = round_versions(bank)
        rows = [round_summary(r, by_round.get(r.round, [])) for r in reversed(found)]
        return page(request, "rounds.html.j2", rounds=rows, measurements=measurements(bank))

    async def one_round(request: Request) -> Response:
        raw = request.path_params["round_no"]
        if not raw.isdigit():
            from skillbank._web.forms import BadForm

            raise BadForm("round", "not a round number")
        found, by_round = round_versions(bank)
        match = [r for r in found if r.round == int(raw)]
        if not match:
            raise HTTPException(404, f"no finished evolution round {raw} in this bank")
        versions = by_round.get(int(raw), [])
        return page(request, "round.html.j2", summary=round_summary(match[0], versions), versions=versions)

    async def one_report(request: Request) -> Response:
        result = measure_result(bank, request.path_params["run_id"])
        try:
            import matplotlib  # noqa: F401

            figures: tuple[str, ...] = FIGURES
        except ImportError:  # the tables still show; the figures need matplotlib
            figures = ()
        return page(request, "measurement.html.j2", r=report_view(result), figures=figures)

    async def figure(request: Request) -> Response:
        name = request.path_params["figure"]
        if name not in FIGURES:
            raise HTTPException(404, f"no figure {name!r}: one of {', '.join(FIGURES)}")
        result = measure_result(bank, request.path_params["run_id"])
        key = (request.path_params["run_id"], name, _drawn_from(result))
        png = drawn.get(key)
        if png is None:
            try:
                png = figure_png(result, name)
            except ImportError as exc:
                raise HTTPException(404, f"figures need matplotlib ({exc})") from exc
            drawn.put(key, png)
        return Response(png, media_type="image/png")

    return [Route("/rounds", rounds), Route("/rounds/{round_no}", one_round),
            Route("/reports/{run_id}", one_report), Route("/reports/{run_id}/{figure}.png", figure)]
