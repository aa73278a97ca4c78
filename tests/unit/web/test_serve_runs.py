"""skillbank serve's runs pages and prune page, at the HTTP level on a real SQLite bank."""

from __future__ import annotations

import re

from conftest import unavailable

try:
    from starlette.testclient import TestClient

    from skillbank._web import create_app
except ImportError as exc:  # pragma: no cover - depends on the install
    unavailable(f"the web extra is missing ({exc}): pip install 'skillbank[web]'", allow_module_level=True)

from serve_support import TOKEN, add_run, fill
from skillbank.models import SkillStatus


def client(bank, read_only=False):
    c = TestClient(create_app(bank, token=TOKEN, read_only=read_only), base_url="http://127.0.0.1",
                   follow_redirects=False)
    c.cookies.set("skillbank_token", TOKEN)
    return c


def test_runs_list_filters_and_transcript_escaped(bank):
    ids = fill(bank)
    failed = add_run(bank, ids["plain"], success=False)
    passed = add_run(bank, ids["evil"], success=True, payload="<img src=x onerror=alert(1)>")
    c = client(bank)
    listing = c.get("/runs").text
    assert failed in listing and passed in listing
    only_failed = c.get("/runs?outcome=failure").text
    assert failed in only_failed and passed not in only_failed
    by_skill = c.get(f"/runs?skill={ids['evil']}").text
    assert passed in by_skill and failed not in by_skill
    assert failed in c.get("/runs?limit=missing_tool").text
    assert "No runs match" in c.get("/runs?limit=rate_limit").text
    assert c.get("/runs?outcome=maybe").status_code == 400
    for run_id in (failed, passed):
        r = c.get(f"/runs/{run_id}")
        assert r.status_code == 200
        assert "<script>" not in r.text and "<img src=x" not in r.text
        assert "In the prompt:" in r.text and "limit missing_tool" in r.text
    assert "&lt;script&gt;" in c.get(f"/runs/{failed}").text
    assert c.get("/runs/tr_nosuchrun").status_code == 404


def test_prune_shows_the_plan_then_applies_it(bank):
    fill(bank)
    c = client(bank)
    assert c.get("/prune?unused_days=abc").status_code == 400
    page = c.get("/prune?max_active=1").text
    planned = re.findall(r'href="/skills/(sk_[0-9a-f]+)"', page)
    assert len(planned) == 1 and bank.get_skill(planned[0]).status == SkillStatus.active  # dry run
    form = dict(re.findall(r'name="(csrf|plan_key|max_active)" value="([^"]*)"', page))
    bank.add_skill("new-one", "A newer skill.", "x")  # the plan changes under the page
    r = c.post("/prune", data=form)
    assert r.status_code == 409 and "prune plan changed" in r.text
    page = c.get("/prune?max_active=1").text
    form = dict(re.findall(r'name="(csrf|plan_key|max_active)" value="([^"]*)"', page))
    assert c.post("/prune", data=form).status_code == 303
    assert len(bank.list_skills(status="active")) == 1
    retired = bank.history(planned[0])[-1]
    assert retired.status == SkillStatus.retired and retired.author == "prune"


def test_read_only_has_no_prune_apply(bank):
    fill(bank)
    c = client(bank, read_only=True)
    page = c.get("/prune?max_active=1").text
    assert 'method="post"' not in page
    assert c.post("/prune", data={"max_active": "1"}).status_code == 405
    assert len(bank.list_skills(status="active")) == 2


def test_a_reply_asked_again_shows_why(bank):
    from skillbank.models import ANSWER_REMINDER_STEP, Step, new_id, utcnow

    ids = fill(bank)
    run_id = add_run(bank, ids["plain"], success=True)
    traj = bank.trajectories.get(run_id)
    note = Step(index=len(traj.steps), kind=ANSWER_REMINDER_STEP, started_at=utcnow(), tool="find_trains",
                result="Your reply described `find_trains` instead of calling it.", reason="described")
    asked = traj.model_copy(update={"id": new_id("tr"), "steps": [*traj.steps, note]})
    bank.trajectories.save(asked)
    page = client(bank).get(f"/runs/{asked.id}").text
    assert "answer_reminder" in page and "why: described" in page and "instead of calling it" in page
