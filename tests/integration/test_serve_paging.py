"""The skills list's paging, read in SQL (SkillBank.list_skills_page): every order, filters,
drafts hidden (the web page lists them, labelled), a page past the end; on SQLite and on both PostgreSQL servers (any_bank)."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from skillbank.models import SkillStatus

# Usage per skill index: (uses, successes, failures); ties on purpose, so name must break them.
USAGE = {1: (5, 4, 1), 2: (5, 1, 4), 3: (9, 0, 0), 4: (2, 2, 0), 5: (2, 2, 0), 7: (1, 0, 1)}


def _python_order(skills, order):
    """What each order means, computed in Python from the full list."""
    out = sorted(skills, key=lambda s: s.name)  # stable sorts below: name breaks every tie
    if order == "updated":
        out.sort(key=lambda s: s.updated_at, reverse=True)
    elif order == "uses":
        out.sort(key=lambda s: s.stats.uses, reverse=True)
    elif order == "success":
        out.sort(key=lambda s: -1.0 if s.stats.success_rate is None else s.stats.success_rate, reverse=True)
    return [s.id for s in out]


@pytest.fixture
def paged_bank(any_bank):
    bank = any_bank
    made = [bank.add_skill(f"skill-{i:02d}", f"skill number {i}", f"do step {i}",
                           tags=["even" if i % 2 == 0 else "odd"]) for i in range(23)]
    with bank.store.transaction() as conn:
        for i, (uses, ok, bad) in USAGE.items():
            bank.skills.bump_usage(conn, [made[i].id], datetime.now(timezone.utc), successes=ok, failures=bad,
                                   uses=uses)
    # later edits, so "updated" is not the creation (= name) order
    bank.update_skill(made[3].id, reason="newer", body="do step 3 twice")
    bank.update_skill(made[0].id, reason="newest", body="do step 0 twice")
    bank.retire(made[22].id, reason="old")
    cand = bank.add_skill("zz-candidate", "a candidate", "try this", status=SkillStatus.candidate,
                          author="evolution:rule")
    draft = bank.add_skill("zz-draft", "a draft edit", "do step 1 better", status=SkillStatus.candidate,
                           author="evolution:rule")
    bank.drafts.save_pending(draft.id, {"kind": "edit", "target": made[1].id, "evidence": [], "task_ids": [],
                                        "reason": "better", "author": "evolution:rule", "round": 1,
                                        "name": made[1].name, "base_hash": made[1].content_hash})
    return bank, made, cand, draft


@pytest.mark.parametrize("order", ["name", "updated", "uses", "success"])
def test_pages_concatenate_to_the_full_list_in_order(paged_bank, order):
    bank, made, cand, draft = paged_bank
    everything = bank.list_skills()  # drafts hidden
    assert draft.id not in {s.id for s in everything} and cand.id in {s.id for s in everything}
    seen, offset = [], 0
    while True:
        page, total = bank.list_skills_page(order=order, offset=offset, limit=5)
        assert total == len(everything) == 24
        if not page:
            break
        assert len(page) <= 5
        seen += [s.id for s in page]
        offset += 5
    assert seen == _python_order(everything, order)
    if order == "success":
        assert seen[:2] == [made[4].id, made[5].id]  # 100% on 2, name breaks the tie
    if order == "updated":
        assert seen[:3] == [cand.id, made[22].id, made[0].id]  # latest change first
    # the page objects are the skills the bank holds (same stats as get_skill)
    first, _ = bank.list_skills_page(order=order, limit=3)
    assert [s.stats for s in first] == [bank.get_skill(s.id).stats for s in first]


def test_filters_and_past_the_end(paged_bank):
    bank, made, cand, draft = paged_bank
    page, total = bank.list_skills_page(status="candidate")
    assert [s.id for s in page] == [cand.id] and total == 1  # the draft row stays hidden
    page, total = bank.list_skills_page(status=SkillStatus.retired)
    assert [s.id for s in page] == [made[22].id] and total == 1
    page, total = bank.list_skills_page(tag="even", order="uses", limit=100)
    assert total == 12 and {s.id for s in page} == {made[i].id for i in range(0, 23, 2)}
    assert [s.id for s in page[:2]] == [made[2].id, made[4].id]  # 5 uses, then 2 (the most among the even ones)
    page, total = bank.list_skills_page(offset=1000, limit=5)
    assert page == [] and total == 24
    page, total = bank.list_skills_page(kind="no-such-kind")
    assert page == [] and total == 0
    with pytest.raises(ValueError, match="order must be one of"):
        bank.list_skills_page(order="name; DROP TABLE skills")
    with pytest.raises(ValueError, match="offset must be"):
        bank.list_skills_page(offset=-1)
    assert bank.list_skills_page(limit=1)[1] == 24  # nothing was written


def test_web_list_pages_and_a_page_past_the_end_shows_the_last(paged_bank):
    try:
        from starlette.testclient import TestClient

        from skillbank._web import create_app
    except ImportError as exc:  # pragma: no cover - depends on the install
        pytest.skip(f"the web extra is missing ({exc})")
    from serve_support import TOKEN

    bank, made, cand, draft = paged_bank
    for i in range(40):  # 65 listed (the draft too): two pages of 50
        bank.add_skill(f"bulk-{i:02d}", "bulk skill", "x")
    c = TestClient(create_app(bank, token=TOKEN), base_url="http://127.0.0.1")
    c.cookies.set("skillbank_token", TOKEN)
    last = c.get("/skills?sort=uses&page=2")
    assert last.status_code == 200 and "Page 2 of 2" in last.text
    beyond = c.get("/skills?sort=uses&page=99")
    assert beyond.status_code == 200 and "Page 2 of 2" in beyond.text
    assert beyond.text.count("<tr") == last.text.count("<tr")
    # a draft is listed, labelled as the edit it proposes (the page counts what `stats` counts)
    candidates = c.get("/skills?status=candidate").text
    assert "zz-draft" in candidates and f'proposed edit of <a href="/skills/{made[1].id}">skill-01</a>' in candidates
    first = c.get("/skills?sort=uses&page=1").text
    assert first.index("skill-03") < first.index("skill-01") < first.index("skill-07")  # 9, 5, 1 uses
    assert c.get("/skills?page=-1").status_code == 400
