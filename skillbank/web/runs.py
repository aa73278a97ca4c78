"""The runs pages (list with filters, one run's transcript) and the prune plan with apply."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from skillbank.bank import SkillBank
from skillbank.models import LimitType
from skillbank.web import forms

RUNS_SHOWN = 200  # the newest runs the list filters; older ones are reachable by id
OUTCOMES = ("success", "failure", "unlabelled")


def _outcome(run: Any) -> str:
    return "unlabelled" if run.success is None else ("success" if run.success else "failure")


def filter_runs(runs: list[Any], *, outcome: str, limit: str, skill: str) -> list[Any]:
    """The runs matching every given filter (an empty one matches all)."""
    return [r for r in runs
            if (not outcome or _outcome(r) == outcome)
            and (not limit or any(e.type.value == limit for e in r.limit_events))
            and (not skill or any(i.skill_id == skill for i in r.injections))]


def routes(bank: SkillBank, page: Callable[..., Response], read_form: Callable[..., Any],
           read_only: bool) -> list[Route]:
    async def runs(request: Request) -> Response:
        p = request.query_params
        outcome, limit, skill = (p.get(k, "").strip()[:100] for k in ("outcome", "limit", "skill"))
        if outcome and outcome not in OUTCOMES:
            raise forms.BadForm("outcome", f"one of {', '.join(OUTCOMES)}")
        limits = [t.value for t in LimitType]
        if limit and limit not in limits:
            raise forms.BadForm("limit", "not a limit type")
        recent = bank.trajectories.list(limit=RUNS_SHOWN, with_steps=True)
        shown = filter_runs(recent, outcome=outcome, limit=limit, skill=skill)
        return page(request, "runs.html.j2", runs=shown, outcome=outcome, limit=limit, skill=skill,
                    outcomes=OUTCOMES, limits=limits, cap=RUNS_SHOWN, outcome_of=_outcome)

    async def run(request: Request) -> Response:
        traj = bank.trajectories.get(request.path_params["run_id"])
        injected: dict[int, list[Any]] = defaultdict(list)
        for i in traj.injections:
            injected[i.step].append(i)
        limits: dict[int, list[Any]] = defaultdict(list)
        for e in traj.limit_events:
            limits[e.step].append(e)
        return page(request, "run.html.j2", run=traj, injected=injected, limits=limits,
                    outcome=_outcome(traj))

    def plan_args(source: Any) -> dict[str, Any]:
        """The prune rules from a query or a form; each optional, numbers checked."""
        args: dict[str, Any] = {}
        for name, cast in (("unused_days", float), ("min_success_rate", float), ("max_active", int),
                           ("min_evidence", int)):
            raw = (source.get(name) or "").strip()
            if raw:
                try:
                    args[name] = cast(raw)
                except ValueError:
                    raise forms.BadForm(name, f"not a number: {raw[:20]!r}") from None
        return args

    async def prune(request: Request) -> Response:
        args = plan_args(request.query_params)
        plan = bank.prune(dry_run=True, **args) if args else []
        return page(request, "prune.html.j2", plan=plan, args=args,
                    plan_key=",".join(sorted(a.skill_id for a in plan)))

    async def prune_apply(request: Request) -> Response:
        form = await read_form(request)
        args = plan_args(form)
        if not args:
            raise forms.BadForm("unused_days", "give at least one rule")
        # The plan shown must still be the plan: a skill used or changed since would otherwise
        # be retired on a page's stale word.
        now = ",".join(sorted(a.skill_id for a in bank.prune(dry_run=True, **args)))
        if now != forms.text(form, "plan_key", required=False, limit=200_000):
            raise forms.StaleForm("The prune plan", ["the skills it would retire changed"])
        bank.prune(**args)
        return RedirectResponse("/skills?status=retired&sort=updated", status_code=303)

    out = [Route("/runs", runs), Route("/runs/{run_id}", run), Route("/prune", prune)]
    if not read_only:
        out.append(Route("/prune", prune_apply, methods=["POST"]))
    return out
