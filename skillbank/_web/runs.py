"""The runs pages (list with filters, one run's transcript) and the prune plan with apply."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from typing import Any, Callable
from urllib.parse import urlencode

from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Route

from skillbank.bank import SkillBank
from skillbank.errors import SkillNotFoundError
from skillbank.models import LimitType
from skillbank.store._trajectories import RUN_OUTCOMES
from skillbank._web import forms

LIMIT_TYPES = tuple(t.value for t in LimitType)

RUNS_PER_PAGE = 50
OUTCOMES = RUN_OUTCOMES


def _outcome(run: Any) -> str:
    return "unlabelled" if run.success is None else ("success" if run.success else "failure")


@dataclass(frozen=True)
class RunFilters:
    """The runs page's query, checked: each value is what the store filters on."""

    outcome: str = ""
    limit: str = ""
    skill: str = ""  # as typed: a skill's name or id
    skill_id: str = ""  # the skill it names
    evidence_of: str = ""  # a skill id: only the runs its version ``version`` cites
    version: int | None = None
    page: int = 1

    def query(self, **changes: Any) -> str:
        """This query as a URL query string with ``changes`` applied, unset values left out."""
        values = {"outcome": self.outcome, "limit": self.limit, "skill": self.skill,
                  "evidence_of": self.evidence_of, "version": self.version, "page": self.page, **changes}
        return urlencode({k: v for k, v in values.items() if v not in ("", None)})


def read_filters(bank: SkillBank, params: Any) -> RunFilters:
    """The filters in ``params``; a bad one is a :class:`~skillbank._web.forms.BadForm`."""
    outcome, limit, skill, evidence_of = (params.get(k, "").strip()[:200]
                                          for k in ("outcome", "limit", "skill", "evidence_of"))
    if outcome and outcome not in OUTCOMES:
        raise forms.BadForm("outcome", f"one of {', '.join(OUTCOMES)}")
    if limit and limit not in LIMIT_TYPES:
        raise forms.BadForm("limit", f"one of {', '.join(LIMIT_TYPES)}")
    skill_id = ""
    if skill:
        try:
            skill_id = bank.get_skill(skill).id
        except SkillNotFoundError:
            raise forms.BadForm("skill", f"no skill has the name or id {skill!r}: "
                                "type a name from the Skills page") from None
    version = None
    if evidence_of:
        raw = params.get("version", "")
        if not raw.isdigit():
            raise forms.BadForm("version", "the version whose evidence runs to show, a number")
        version = int(raw)
        bank.version(evidence_of, version)  # a missing skill or version is a 404
    page = params.get("page", "1")
    if not page.isdigit() or int(page) < 1:
        raise forms.BadForm("page", "a page number from 1")
    return RunFilters(outcome, limit, skill, skill_id, evidence_of, version, int(page))


def why_failed(run: Any) -> list[str]:
    """Why a run did not succeed, as it recorded it: its error, the verifier's or judge's note
    and each limit it hit; a failure that recorded none of these says so. Empty for a success,
    and for an unlabelled run without an error."""
    if run.success:
        return []
    if run.success is None:  # unlabelled: only an error says it did not succeed
        return [f"error: {run.error}"] if run.error else []
    out = []
    if run.error:
        out.append(f"error: {run.error}")
    if run.outcome is not None and run.outcome.note:
        out.append(f"{run.outcome.source}: {run.outcome.note}")
    out += [f"limit {e.type.value}: {e.detail}" for e in run.limit_events]
    if not out:
        out.append(f"no reason recorded (the {run.outcome.source} left no note)")
    return out


def skill_names(bank: SkillBank, runs: list[Any]) -> dict[str, str]:
    """The current name of every skill injected into ``runs``, by id (one query)."""
    ids = {i.skill_id for r in runs for i in r.injections}
    return {sid: s.name for sid, s in bank.skills.get_many(ids).items()}


def routes(bank: SkillBank, page: Callable[..., Response], read_form: Callable[..., Any],
           read_only: bool) -> list[Route]:
    async def runs(request: Request) -> Response:
        f = read_filters(bank, request.query_params)
        ids = None
        if f.evidence_of:
            version = f.version if f.version is not None else bank.get_skill(f.evidence_of).version
            ids = [p for p in bank.version(f.evidence_of, version).provenance if p.startswith("tr_")]
        found = bank.trajectories.browse(
            outcome=f.outcome or None, limit_type=f.limit or None,
            skill_ids=[f.skill_id] if f.skill_id else None, ids=ids,
            offset=(f.page - 1) * RUNS_PER_PAGE, limit=RUNS_PER_PAGE)
        pages = max(1, -(-found.total // RUNS_PER_PAGE))
        return page(request, "runs.html.j2", runs=found.runs, total=found.total, f=f, pages=pages,
                    all_runs=bank.trajectories.count(), names=skill_names(bank, found.runs),
                    evidence_skill=bank.get_skill(f.evidence_of) if f.evidence_of else None,
                    outcomes=OUTCOMES, limits=LIMIT_TYPES, outcome_of=_outcome, why_failed=why_failed)

    async def run(request: Request) -> Response:
        traj = bank.trajectories.get(request.path_params["run_id"])
        injected: dict[int, list[Any]] = defaultdict(list)
        for i in traj.injections:
            injected[i.step].append(i)
        limits: dict[int, list[Any]] = defaultdict(list)
        for e in traj.limit_events:
            limits[e.step].append(e)
        return page(request, "run.html.j2", run=traj, injected=injected, limits=limits,
                    outcome=_outcome(traj), why=why_failed(traj), names=skill_names(bank, [traj]))

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
