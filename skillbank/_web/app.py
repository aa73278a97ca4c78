"""Routes. GET never changes state; every POST checks the CSRF token and, for a skill, the
version the page was drawn from, then calls the bank's public API with author "web"."""

from __future__ import annotations

import contextlib
import hmac
from pathlib import Path
from typing import Any, Iterator

from jinja2 import Environment, FileSystemLoader, select_autoescape
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import HTMLResponse, RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from skillbank.bank import SkillBank
from skillbank.errors import InvalidSkillError, SkillNotFoundError, TrajectoryNotFoundError, VersionNotFoundError
from skillbank.evolution import _review as review
from skillbank.live._config import LiveConfig
from skillbank.live._decisions import NothingToAcknowledge
from skillbank.models import SkillStatus
from skillbank._web import evidence, forms, live, promotion, rounds, runs, search, views
from skillbank._web.security import AllowedHosts, TokenMiddleware, csrf_token

HERE = Path(__file__).parent
AUTHOR = "web"


def _templates() -> Environment:
    # autoescape for every template: bank text is untrusted and must never render as HTML.
    env = Environment(loader=FileSystemLoader(HERE / "templates"),
                      autoescape=select_autoescape(default=True, default_for_string=True), trim_blocks=True,
                      lstrip_blocks=True)
    return env


def create_app(bank: SkillBank, *, token: str, read_only: bool = False, host: str = "127.0.0.1",
               live_config: LiveConfig | None = None) -> Starlette:
    """The review app over ``bank``; ``token`` opens it; ``host`` is the address the server binds,
    and a request whose Host header names another is refused (:class:`AllowedHosts`).
    ``live_config``: the live monitor's settings the live effect is read with (default: its
    defaults, as ``skillbank monitor`` without options)."""
    env = _templates()
    live_config = live_config or LiveConfig()
    csrf = csrf_token(token)

    def page(request: Request, name: str, status_code: int = 200, **context: Any) -> HTMLResponse:
        html = env.get_template(name).render(request=request, csrf=csrf, read_only=read_only, **context)
        return HTMLResponse(html, status_code=status_code)

    async def read_form(request: Request, skill_id: str | None = None):
        """The form, after the CSRF check; with ``skill_id``, the skill must exist and the form
        must name the version the page was drawn from (checked again in :func:`acting_on`)."""
        if read_only:
            raise HTTPException(405, "read-only: this server takes no actions")
        form = await request.form()
        presented = form.get("csrf")
        if not isinstance(presented, str) or not hmac.compare_digest(presented.encode(), csrf.encode()):
            raise HTTPException(403, "CSRF token missing or wrong: reload the page")
        if skill_id is not None:
            bank.get_skill(skill_id)
            forms.integer(form, "drawn_version")
        return form

    @contextlib.contextmanager
    def acting_on(form: Any, skill_id: str) -> Iterator[None]:
        """The stale-page check and the action in one write transaction, ordered against every
        other change (an evolution round in another process included): a change landing between
        the check and the write cannot be overwritten, it makes the form stale (409)."""
        with bank.transaction(ordered=True):
            skill = bank.get_skill(skill_id)
            drawn = forms.integer(form, "drawn_version")
            if drawn != skill.version:
                raise forms.StaleForm(f"{skill.name} (drawn at v{drawn})", views.changes_since(bank, skill_id, drawn))
            yield

    async def index(request: Request) -> Response:
        return RedirectResponse("/skills", status_code=303)

    async def skills(request: Request) -> Response:
        p = request.query_params
        q, status, kind, tag, tools = (p.get(k, "").strip()[:500] for k in ("q", "status", "kind", "tag", "tools"))
        if status and status not in views.STATUSES:
            raise forms.BadForm("status", f"one of {', '.join(views.STATUSES)}")
        page_no, k = p.get("page", "1"), p.get("k", "") or str(search.DEFAULT_K)
        if not page_no.isdigit():
            raise forms.BadForm("page", "not a positive integer")
        if not k.isdigit() or not 1 <= int(k) <= search.SHOWN:
            raise forms.BadForm("k", f"how many skills an agent is given, 1 to {search.SHOWN}")
        toolset = [t.strip() for t in tools.split(",") if t.strip()]
        sort = p.get("sort", "name")
        context: dict[str, Any] = dict(q=q, status=status, kind=kind, tag=tag, sort=sort, k=int(k),
                                       tools=", ".join(toolset), statuses=views.STATUSES, sorts=views.SORTS)
        if q:  # search answers with active skills only: what an agent would be given
            rows = search.search_rows(bank, q, k=int(k), tools=toolset or None, kind=kind or None, tag=tag or None)
            return page(request, "skills.html.j2", found=rows, listing=None, **context)
        listing = views.list_page(bank, status=status, kind=kind, tag=tag, sort=sort, page=int(page_no))
        return page(request, "skills.html.j2", found=None, listing=listing, waiting=live.waiting(bank), **context)

    async def skill(request: Request) -> Response:
        skill_id = request.path_params["skill_id"]
        current = bank.get_skill(skill_id)
        history = bank.history(skill_id)
        p = request.query_params
        diff = None
        a, b = p.get("a"), p.get("b")
        if a and b:
            if not (a.isdigit() and b.isdigit()):
                raise forms.BadForm("a" if not a.isdigit() else "b", "not a version number")
            diff = bank.diff(skill_id, int(a), int(b))
        pending = bank.drafts.pending(skill_id)
        checks = (promotion.for_candidate(bank, skill_id)
                  if pending and current.status in (SkillStatus.candidate, SkillStatus.quarantined) else [])
        view = live.for_skill(bank, current.id, live_config)
        return page(request, "skill.html.j2", skill=current, history=list(reversed(history)), diff=diff,
                    live=view, live_data=view.as_dict(), canary_refusal=live.refusal(bank, current),
                    done=live.done_message(p.get("done"), view, live_config),
                    a=a, b=b, rendered=bank.render([current]), pending=pending, checks=checks,
                    evidence=evidence.for_skill(bank, current.id),
                    lessons=[views.lesson_view(lesson) for lesson in current.content.lessons],
                    injected_runs=bank.trajectories.browse(skill_ids=[current.id], limit=0).total,
                    provenance_view=views.provenance_view, short_hash=views.short_hash)

    async def candidates(request: Request) -> Response:
        return page(request, "candidates.html.j2", rows=views.candidate_rows(bank),
                    canaries=live.canary_views(bank, live_config))

    # -- actions -----------------------------------------------------------------------------

    def back(skill_id: str) -> RedirectResponse:
        return RedirectResponse(f"/skills/{skill_id}", status_code=303)

    async def retire(request: Request) -> Response:
        sid = request.path_params["skill_id"]
        form = await read_form(request, sid)
        reason = forms.text(form, "reason")
        with acting_on(form, sid):
            bank.retire(sid, reason=reason, author=AUTHOR)
        return back(sid)

    async def rollback(request: Request) -> Response:
        sid = request.path_params["skill_id"]
        form = await read_form(request, sid)
        to, reason = forms.integer(form, "to_version"), forms.text(form, "reason")
        bank.version(sid, to)  # a missing version is a 404 before anything is written
        with acting_on(form, sid):
            bank.rollback(sid, to, reason=reason, author=AUTHOR)
        return back(sid)

    async def edit(request: Request) -> Response:
        sid = request.path_params["skill_id"]
        form = await read_form(request, sid)
        reason = forms.text(form, "reason")
        description, body = forms.text(form, "description"), forms.text(form, "body", required=False)
        with acting_on(form, sid):
            bank.update_skill(sid, reason=reason, author=AUTHOR, description=description, body=body)
        return back(sid)

    async def pin(request: Request) -> Response:
        sid = request.path_params["skill_id"]
        form = await read_form(request, sid)
        wanted = forms.text(form, "pinned", limit=5)
        if wanted not in ("true", "false"):
            raise forms.BadForm("pinned", "true or false")
        reason = forms.text(form, "reason", required=False) or None
        with acting_on(form, sid):
            bank.pin(sid, wanted == "true", reason=reason)
        return back(sid)

    async def promote(request: Request) -> Response:
        sid = request.path_params["skill_id"]
        form = await read_form(request, sid)
        reason = forms.text(form, "reason")
        with acting_on(form, sid):
            needed = promotion.for_candidate(bank, sid)
            missing = promotion.unconfirmed(needed, form.getlist("confirm"))
            if missing:
                raise promotion.Unconfirmed(bank.get_skill(sid).name, missing)
            result = review.promote(bank, sid, force=promotion.needs_force(needed), reason=reason, author=AUTHOR)
        return back(result.id)

    async def canary(request: Request) -> Response:
        sid = request.path_params["skill_id"]
        form = await read_form(request, sid)
        reason = (forms.text(form, "reason", required=False)
                  or "canary: shown to part of its eligible runs until the monitor decides")
        with acting_on(form, sid):
            live.start(bank, sid, author=AUTHOR, reason=reason)
        return RedirectResponse(f"/skills/{sid}?done=canary", status_code=303)

    async def acknowledge(request: Request) -> Response:
        sid = request.path_params["skill_id"]
        form = await read_form(request, sid)
        reason = forms.text(form, "reason", required=False) or "acknowledged the monitor's rollback"
        with acting_on(form, sid):
            live.acknowledge(bank, sid, author=AUTHOR, reason=reason)
        return RedirectResponse(f"/skills/{sid}?done=ack", status_code=303)

    async def reject(request: Request) -> Response:
        sid = request.path_params["skill_id"]
        form = await read_form(request, sid)
        reason = forms.text(form, "reason")
        with acting_on(form, sid):
            review.reject(bank, sid, reason=reason, author=AUTHOR)
        return RedirectResponse("/candidates", status_code=303)

    # -- errors ------------------------------------------------------------------------------

    async def not_found(request: Request, exc: Exception) -> Response:
        return page(request, "error.html.j2", 404, title="Not found", message=str(exc))

    async def bad_form(request: Request, exc: Exception) -> Response:
        return page(request, "error.html.j2", 400, title="Bad request", message=str(exc))

    async def conflict(request: Request, exc: Exception) -> Response:
        return page(request, "error.html.j2", 409, title="Not done", message=str(exc))

    async def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)  # registered for HTTPException (and its subclasses) only
        return page(request, "error.html.j2", exc.status_code, title=f"Error {exc.status_code}",
                    message=exc.detail)

    actions = [] if read_only else [
        Route("/skills/{skill_id}/retire", retire, methods=["POST"]),
        Route("/skills/{skill_id}/rollback", rollback, methods=["POST"]),
        Route("/skills/{skill_id}/edit", edit, methods=["POST"]),
        Route("/skills/{skill_id}/pin", pin, methods=["POST"]),
        Route("/skills/{skill_id}/canary", canary, methods=["POST"]),
        Route("/skills/{skill_id}/acknowledge", acknowledge, methods=["POST"]),
        Route("/candidates/{skill_id}/promote", promote, methods=["POST"]),
        Route("/candidates/{skill_id}/reject", reject, methods=["POST"]),
    ]
    routes = [
        Route("/", index),
        Route("/skills", skills),
        Route("/skills/{skill_id}", skill),
        Route("/candidates", candidates),
        *actions,
        *runs.routes(bank, page, read_form, read_only),
        *rounds.routes(bank, page),
        Mount("/static", StaticFiles(directory=HERE / "static"), name="static"),
    ]
    app = Starlette(routes=routes, exception_handlers={
        SkillNotFoundError: not_found, VersionNotFoundError: not_found, TrajectoryNotFoundError: not_found,
        forms.BadForm: bad_form, forms.StaleForm: conflict, InvalidSkillError: conflict,
        promotion.Unconfirmed: conflict, live.CanaryRefused: conflict, NothingToAcknowledge: conflict,
        HTTPException: http_error,
    })
    app.add_middleware(TokenMiddleware, token=token, hosts=AllowedHosts(host))
    return app

