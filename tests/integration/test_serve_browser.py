"""skillbank serve in a real browser: Debian's chromium, driven by Playwright.

A person's path (list, search, a skill, a diff, promote, reject, roll back), rounds and a report
with its figures, the XSS payloads rendering as text with no dialog firing, and no token → 403.
The screenshots in docs/ are taken here (SKILLBANK_SCREENSHOTS=1 rewrites them)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from conftest import unavailable

try:
    from playwright.sync_api import sync_playwright

    import skillbank._web  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    unavailable(f"{exc}: pip install 'skillbank[web,dev]'", allow_module_level=True)

from serve_support import CHROMIUM, CHROMIUM_ARGS, PAYLOADS, TOKEN, LiveServer, fill, fill_live
from skillbank.models import SkillStatus

SHOTS = Path(__file__).resolve().parents[2] / "docs" / "serve"


@pytest.fixture(scope="module")
def browser():
    if not Path(CHROMIUM).exists():
        unavailable(f"no {CHROMIUM}: apt-get install chromium")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        yield b
        b.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1100, "height": 760})
    pg = context.new_page()
    pg.set_default_timeout(10_000)
    dialogs = []
    pg.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
    pg.dialogs = dialogs
    yield pg
    context.close()


def shoot(pg, name: str) -> None:
    if os.environ.get("SKILLBANK_SCREENSHOTS"):
        SHOTS.mkdir(parents=True, exist_ok=True)
        pg.screenshot(path=str(SHOTS / name))


def test_a_persons_path(bank, page):
    ids = fill(bank)
    with LiveServer(bank) as server:
        page.goto(f"{server.url}/?token={TOKEN}")
        assert page.url == f"{server.url}/skills"  # the token left the address bar for a cookie
        assert page.locator("#skills tbody tr").count() == 4
        shoot(page, "skills.png")

        page.fill("input[name=q]", "look an order up")
        page.click("form.filters button")
        assert page.locator("#skills tbody tr").first.locator("a").inner_text() == "lookup-order"

        page.click("text=lookup-order")
        assert "Call get_order with the order id." in page.inner_text("#rendered")
        page.fill("input[name=a]", "1")
        page.fill("input[name=b]", "2")
        page.click("#diff-form button")
        assert "+Call get_order with the order id." in page.inner_text("#diff")
        shoot(page, "skill.png")

        page.fill("input[aria-label='rollback reason v1']", "v2 was worse")
        page.click("text=Roll back to v1")
        assert bank.get_skill(ids["plain"]).body == "Call get_order with the id."
        assert bank.history(ids["plain"])[-1].author == "web"

        page.click("nav >> text=Candidates")
        shoot(page, "candidates.png")
        card = page.locator(f"#cand-{ids['cand']}")
        card.locator("input[aria-label='promote reason']").fill("seen it work")
        card.locator("input[name=confirm][value=unmeasured]").check()  # the gate never measured it
        card.locator("text=Promote").click()
        assert bank.get_skill(ids["cand"]).status == SkillStatus.active
        assert "active" in page.inner_text("#skill-name")  # promotion lands on the skill's page

        page.click("nav >> text=Candidates")

        odd = page.locator(f"#cand-{ids['odd']}")
        odd.locator("input[aria-label='reject reason']").fill("nonsense")
        odd.locator("text=Reject").click()
        assert bank.get_skill(ids["odd"]).note == "rejected: nonsense"
        assert page.inner_text("main").strip().endswith("No candidates waiting.")
    assert page.dialogs == []


def test_payloads_render_as_text_and_no_dialog_fires(bank, page):
    ids = fill(bank)
    with LiveServer(bank) as server:
        page.goto(f"{server.url}/?token={TOKEN}")
        for path in ["/skills", f"/skills/{ids['evil']}", "/candidates", f"/skills/{ids['odd']}"]:
            page.goto(server.url + path)
            page.wait_for_load_state("load")
            assert page.locator("main script, main img, main svg, main [onerror], main [onload]").count() == 0
            assert page.locator("a[href^='javascript:']").count() == 0
        page.goto(f"{server.url}/skills/{ids['evil']}")
        text = page.inner_text("#rendered")
        for payload in PAYLOADS:
            assert payload in text  # shown verbatim, as the model sees it
    assert page.dialogs == []


def test_no_token_is_403(bank, page):
    fill(bank)
    with LiveServer(bank) as server:
        response = page.goto(f"{server.url}/skills")
        assert response.status == 403
        assert "lookup-order" not in page.content()


def test_rounds_and_a_report_with_its_figures(bank, page):
    from skillbank.consistency.measure import measure
    from skillbank.consistency.tasks import SimpleTask
    from skillbank.evolution import evolve
    from test_hardening_support import family_runs

    for run in family_runs(0):
        bank.trajectories.save(run)
    evolve(bank, validate=lambda skill, tasks: True, auto_promote=True)
    tasks = [SimpleTask(id=f"t{i}", type=PAYLOADS[1], input=f"order {i}") for i in range(4)]
    measure(lambda arm, b, task: (lambda spec: arm == "with"), tasks, trials=3, bank=bank, run_id="demo-run",
            progress=False)
    with LiveServer(bank) as server:
        page.goto(f"{server.url}/?token={TOKEN}")
        page.click("nav >> text=Rounds and reports")
        assert page.locator("#rounds tbody tr").count() == 1
        page.click("text=round 1")
        assert page.locator("#round-versions tbody tr").count() == 2  # proposed, then promoted by its gate
        page.click("nav >> text=Rounds and reports")
        page.click("text=demo-run")
        page.wait_for_load_state("load")
        assert page.locator("#consistency tbody tr").count() == 2
        widths = page.eval_on_selector_all("main img", "imgs => imgs.map(i => i.naturalWidth)")
        assert len(widths) == 3 and all(w > 0 for w in widths)  # the figures load under the CSP
        assert PAYLOADS[1] in page.inner_text("#by-type")  # a task type shown as text
        shoot(page, "report.png")
    assert page.dialogs == []


def test_a_reviewer_inspects_a_skill_with_many_runs_lessons_and_a_gate_record(bank, page):
    """Issue 53 items 7, 8, 10, 11 as a person meets them: the history row stays one line high
    with 115 cited runs, lessons read as sentences (no Python None), the gate's evidence reads in
    words, and the runs page filters by a skill's name and shows names and why a run failed."""
    from datetime import datetime, timezone

    from skillbank.lessons import Lesson, sentence
    from skillbank.models import Injection, LimitEvent, LimitType, Outcome, Trajectory
    from skillbank.store._gate_records import GateRecord, GateVerdict, TaskTrials

    lessons = [Lesson(kind="ask_for", tool="book_table", parameter="party_size"),
               Lesson(kind="missing_tool", tool="open_window")]
    skill = bank.add_skill("booking-guards", "Guards for booking.", lessons=lessons)
    runs = []
    with bank.store.transaction():
        for i in range(115):
            run = Trajectory(task=f"book a table {i}", status="complete",
                             injections=[Injection(step=0, skill_id=skill.id, version=1, rank=0, score=0.5)],
                             outcome=Outcome(success=i % 3 != 0, source="judge",
                                             note=None if i % 3 else "the party size was never asked"))
            if i % 3 == 0:
                run.limit_events = [LimitEvent(type=LimitType.missing_tool, step=0, detail="no open_window")]
            runs.append(bank.trajectories.save(run))
    bank.update_skill(skill.id, reason="learned from runs", provenance=runs,
                      description="Guards for booking a table.")
    bank.gate_records.add(GateRecord(
        skill_id=skill.id, version=1, decision=GateVerdict.promoted, reason="gain +0.292", gain=0.292, cost=8,
        trials=(TaskTrials("t1", (False, True), (True, True)), TaskTrials("t2", (True, True), (True, True)),
                TaskTrials("t3", (False, False), (True, False))), planned=("t1", "t2", "t3", "t4"),
        not_reached=("t4",), decided_at=datetime(2026, 11, 3, 9, 30, tzinfo=timezone.utc)))
    with LiveServer(bank) as server:
        page.goto(f"{server.url}/?token={TOKEN}")
        page.goto(f"{server.url}/skills/{skill.id}")
        lessons_text = page.inner_text("#lessons")
        assert "None" not in lessons_text and all(sentence(lesson) in lessons_text for lesson in lessons)
        gate = " ".join(page.inner_text(".gate-record").split())
        assert "Promoted by the gate on 2026-11-03 09:30 UTC for version 1 (this skill is now at version 2)" in gate
        assert "Measured on 4 tasks (3 reached by the skill" in gate and "0.33 → 0.67" in gate
        row = page.locator("#history tbody tr").first
        assert row.bounding_box()["height"] < 120  # one line of cells, not a column of 115 ids
        assert page.locator("#history .provenance a").first.inner_text() == "115 runs"
        assert page.inner_text("#runs-link") == "115 runs it was injected into"
        page.click("#history .provenance a")
        assert page.inner_text("#runs-count") == "(115)" and "booking-guards v2" in page.inner_text("#evidence-of")
        page.goto(f"{server.url}/runs")
        page.fill("input[name=skill]", "booking-guards")
        page.select_option("select[name=outcome]", "failure")
        page.click("form.filters button")
        assert page.inner_text("#runs-count") == "(39 of 115 match)"
        first = page.locator("#runs tbody tr").first
        assert "booking-guards" in first.inner_text() and skill.id not in first.inner_text()
        assert "judge: the party size was never asked" in first.inner_text()
        assert "limit missing_tool: no open_window" in first.inner_text()
    assert page.dialogs == []


def test_promoting_an_unmeasured_candidate_needs_the_box_ticked(bank, page):
    """Issue 53 item 13: the confirmation is on the page, and Promote does nothing without it."""
    ids = fill(bank)
    with LiveServer(bank) as server:
        page.goto(f"{server.url}/?token={TOKEN}")
        page.goto(f"{server.url}/candidates")
        card = page.locator(f"#cand-{ids['cand']}")
        assert "the gate never measured it" in card.inner_text()
        card.locator("input[aria-label='promote reason']").fill("looks right")
        card.locator("text=Promote").click()
        assert page.url.endswith("/candidates")  # the browser kept the form: the box is required
        assert bank.get_skill(ids["cand"]).status == SkillStatus.candidate
        card.locator("input[name=confirm][value=unmeasured]").check()
        card.locator("text=Promote").click()
        page.wait_for_url(f"**/skills/{ids['cand']}")
        assert bank.get_skill(ids["cand"]).status == SkillStatus.active
    assert page.dialogs == []


def test_search_shows_what_an_agent_would_be_given(bank, page):
    """Issue 53 item 12: the top k are marked injected, in prompt order; the rest say why not."""
    for i in range(5):
        bank.add_skill(f"refund-step-{i}", f"Refund an order, step {i}.", f"Refund the order {i}.")
    with LiveServer(bank) as server:
        page.goto(f"{server.url}/?token={TOKEN}")
        page.fill("input[name=q]", "refund an order")
        page.fill("input[name=k]", "2")
        page.click("form.filters button")
        cells = page.locator("#skills .injected-cell").all_inner_texts()
        assert cells[:2] == ["yes, #1", "yes, #2"] and all(c == "no: below the top 2" for c in cells[2:])
        assert "sort by" not in page.inner_text("form.filters")
        assert "In the order an agent would be given them" in page.inner_text("#search-order")
    assert page.dialogs == []


def test_a_reviewer_reads_a_skill_s_live_effect_starts_a_canary_and_acknowledges_a_rollback(bank, page):
    from skillbank.live._decisions import pending_rollbacks
    from skillbank.live._exposure import is_canary
    from skillbank.live._view import live_view

    ids = fill_live(bank)
    d = live_view(bank, ids["running"]).as_dict()["effect"]["difference"]
    with LiveServer(bank) as server:
        page.goto(f"{server.url}/?token={TOKEN}")
        page.click("text=refund-after-checking")
        overall = page.locator("#live-table tr.overall")
        assert overall.locator("td.difference").inner_text() == f"{d['estimate']:+.2f}"
        assert overall.locator("td.interval").inner_text() == f"[{d['low']:+.2f}, {d['high']:+.2f}]"
        assert page.locator("#live-table tr.kind").count() == 2  # refund, return
        shoot(page, "live-effect.png")

        page.click("nav >> text=Candidates")
        assert page.locator(f"#canary-{ids['running']} table").count() == 1

        page.click("nav >> text=Skills")
        page.click("text=cancel-politely")
        assert "Not randomized" in page.inner_text("#live-effect")
        page.fill("input[aria-label='canary reason']", "try it on live traffic")
        page.click("#canary-form button")
        assert "cancel-politely is in canary" in page.inner_text("#done")
        assert is_canary(bank.get_skill(ids["plain"]))

        page.click("nav >> text=Skills")
        assert "refund-without-checking" in page.inner_text("#rollbacks")
        page.click("#rollbacks a")
        assert "Rolled back by the live monitor" in page.inner_text("#rollback")
        page.fill("input[aria-label='acknowledge reason']", "it hurt refunds; leave it retired")
        page.click("#rollback button")
        assert "Acknowledged" in page.inner_text("#done")
        assert pending_rollbacks(bank) == {}
        page.click("nav >> text=Skills")
        assert page.locator("#rollbacks").count() == 0
    assert page.dialogs == []
