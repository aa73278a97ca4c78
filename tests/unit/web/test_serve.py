"""skillbank serve at the HTTP level (Starlette's TestClient) on a real SQLite bank."""

from __future__ import annotations

import pytest

from conftest import unavailable

try:
    from starlette.testclient import TestClient  # noqa: F401  (the web extra is installed)

    from skillbank._web import create_app  # noqa: F401
except ImportError as exc:  # pragma: no cover - depends on the install
    unavailable(f"the web extra is missing ({exc}): pip install 'skillbank[web]'", allow_module_level=True)

from serve_support import TOKEN, client, csrf_and_version, fill
from skillbank.evolution._review import list_candidates
from skillbank.models import SkillStatus


@pytest.fixture
def ids(bank):
    return fill(bank)


def test_no_token_is_403_with_no_bank_data(bank, ids):
    c = client(bank, login=False)
    for path in ["/skills", f"/skills/{ids['plain']}", "/candidates", "/static/style.css"]:
        r = c.get(path)
        assert r.status_code == 403 and "lookup-order" not in r.text
    assert c.get("/skills?token=wrong").status_code == 403
    c.cookies.set("skillbank_token", "wrong")
    assert c.get("/skills").status_code == 403
    r = c.post(f"/skills/{ids['plain']}/retire", data={"reason": "x"})
    assert r.status_code == 403
    assert bank.get_skill(ids["plain"]).status == SkillStatus.active


def test_list_shows_skills_and_every_response_has_the_csp(bank, ids):
    r = client(bank).get("/skills")
    assert r.status_code == 200 and "lookup-order" in r.text and "cancel-order" in r.text
    csp = r.headers["content-security-policy"]
    assert "script-src 'self'" in csp and "unsafe-inline" not in csp
    assert r.headers["x-frame-options"] == "DENY"


def test_search_filters_sort_and_pages(bank, ids):
    c = client(bank)
    r = c.get("/skills?q=look+an+order+up")
    assert "lookup-order" in r.text and "cancel-order" not in r.text  # search: active only
    r = c.get("/skills?status=candidate")
    assert "cancel-order" in r.text and "lookup-order" not in r.text
    for i in range(60):
        bank.add_skill(f"bulk-{i:02d}", "bulk skill", "x")
    first, second = c.get("/skills?sort=name&page=1").text, c.get("/skills?sort=name&page=2").text
    assert "Page 1 of 2" in first and "bulk-00" in first and "bulk-00" not in second


def test_payloads_are_escaped_on_every_page(bank, ids):
    c = client(bank)
    pages = [c.get("/skills"), c.get(f"/skills/{ids['evil']}"), c.get("/candidates"),
             c.get(f"/skills/{ids['evil']}?a=1&b=1"), c.get(f"/skills/{ids['cand']}"), c.get(f"/skills/{ids['odd']}")]
    for r in pages:
        assert r.status_code == 200
        for raw in ["<script>", "<img src=x", "<svg onload", "<b onmouseover", "<i>now</i>"]:
            assert raw not in r.text, (r.url, raw)
    assert "&lt;script&gt;alert(&#39;xss-script&#39;)&lt;/script&gt;" in pages[1].text
    # markdown is never rendered: a javascript: link or image stays text, not an href/src
    assert 'href="javascript:' not in pages[1].text and 'src="https://attacker' not in pages[1].text


def test_edit_is_a_version_by_web_and_stale_forms_are_refused(bank, ids):
    c = client(bank)
    sid = ids["plain"]
    page = c.get(f"/skills/{sid}").text
    hidden = csrf_and_version(page, f"/skills/{sid}/edit")
    assert hidden["drawn_version"] == "2"
    r = c.post(f"/skills/{sid}/edit", data={**hidden, "description": "Look the order up.",
                                            "body": "Call get_order(order_id).", "reason": "typo"})
    assert r.status_code == 303
    latest = bank.history(sid)[-1]
    assert (latest.version, latest.author, latest.reason) == (3, "web", "typo")
    # the same page, drawn at v2, posted again: refused with what changed, nothing written
    r = c.post(f"/skills/{sid}/retire", data={**hidden, "reason": "old"})
    assert r.status_code == 409 and "v3 by web: typo" in r.text
    assert bank.get_skill(sid).status == SkillStatus.active and bank.get_skill(sid).version == 3


def test_rollback_pin_retire(bank, ids):
    c = client(bank)
    sid = ids["plain"]
    hidden = csrf_and_version(c.get(f"/skills/{sid}").text, f"/skills/{sid}/rollback")
    assert c.post(f"/skills/{sid}/rollback", data={**hidden, "reason": "v2 was worse"}).status_code == 303
    assert bank.get_skill(sid).body == bank.version(sid, 1).content.body
    hidden = csrf_and_version(c.get(f"/skills/{sid}").text, f"/skills/{sid}/pin")
    assert hidden["pinned"] == "true"
    assert c.post(f"/skills/{sid}/pin", data=hidden).status_code == 303
    assert bank.get_skill(sid).pinned
    hidden = csrf_and_version(c.get(f"/skills/{sid}").text, f"/skills/{sid}/retire")
    assert c.post(f"/skills/{sid}/retire", data={**hidden, "reason": "unused"}).status_code == 303
    assert bank.get_skill(sid).status == SkillStatus.retired
    assert [v.author for v in bank.history(sid)][-3:] == ["web", "human", "web"]  # pin: the bank's default


def test_promote_and_reject_go_through_review(bank, ids):
    c = client(bank)
    other = bank.add_skill("void-order", "Void.", "Call void_order.", status=SkillStatus.candidate)
    page = c.get("/candidates").text
    assert "seen in 3 runs" in page and "tr_0123456789abcdef" in page
    hidden = csrf_and_version(page, f"/candidates/{ids['cand']}/promote")
    assert c.post(f"/candidates/{ids['cand']}/promote",
                  data={**hidden, "reason": "good", "confirm": "unmeasured"}).status_code == 303
    promoted = bank.history(ids["cand"])[-1]
    assert (promoted.status, promoted.author) == (SkillStatus.active, "web")
    hidden = csrf_and_version(c.get("/candidates").text, f"/candidates/{other.id}/reject")
    assert c.post(f"/candidates/{other.id}/reject", data={**hidden, "reason": "duplicate"}).status_code == 303
    assert bank.get_skill(other.id).status == SkillStatus.retired
    assert bank.get_skill(other.id).note == "rejected: duplicate"
    assert [p.skill.id for p in list_candidates(bank)] == [ids["odd"]]


def test_candidates_show_a_draft_as_a_diff_against_its_target_newest_first(bank, ids):

    target = bank.get_skill(ids["plain"])
    draft = bank.add_skill("lookup-order-draft", "Look an order up first.",
                           "Call get_order with the order id.\nThen check its status.",
                           status=SkillStatus.candidate, author="evolution:rule")
    bank.drafts.save_pending(draft.id, {"kind": "edit", "target": target.id, "evidence": [], "task_ids": [],
                                        "reason": "runs checked the status", "author": "evolution:rule", "round": 3,
                                        "name": target.name, "base_hash": target.content_hash})
    page = client(bank).get("/candidates").text
    card = page[page.index(f'id="cand-{draft.id}"'):]
    card = card[:card.index("</section>")]
    assert "--- lookup-order v2" in card and "+++ lookup-order-draft v1" in card
    assert '<span class="add">+Then check its status.</span>' in card
    assert page.index(f'id="cand-{draft.id}"') < page.index(f'id="cand-{ids["cand"]}"')  # newest first
    bank.retire(target.id, reason="gone")  # the diff is against the target as it is now
    card = client(bank).get("/candidates").text
    card = card[card.index(f'id="cand-{draft.id}"'):]
    assert "-status: retired" in card[:card.index("</section>")]


def test_the_stale_check_and_the_action_share_one_write_transaction(bank, ids, monkeypatch):
    """A change from elsewhere (an evolution round in another process) cannot land between the
    page's stale-form check and its write: while the action runs, no other writer gets in."""
    import sqlite3

    from skillbank.evolution import _review as review

    seen, real = [], review.reject

    def reject(b, sid, **kw):
        other = sqlite3.connect(bank.store.path, timeout=0.05)
        try:
            other.execute("BEGIN IMMEDIATE")
            seen.append("another writer got in")
            other.rollback()
        except sqlite3.OperationalError as exc:
            seen.append(str(exc))
        finally:
            other.close()
        return real(b, sid, **kw)

    monkeypatch.setattr(review, "reject", reject)
    c = client(bank)
    hidden = csrf_and_version(c.get("/candidates").text, f"/candidates/{ids['cand']}/reject")
    assert c.post(f"/candidates/{ids['cand']}/reject", data={**hidden, "reason": "no"}).status_code == 303
    assert seen == ["database is locked"]
    assert bank.get_skill(ids["cand"]).status == SkillStatus.retired


def test_csrf_is_required_on_every_post(bank, ids):
    c = client(bank)
    sid = ids["plain"]
    hidden = csrf_and_version(c.get(f"/skills/{sid}").text, f"/skills/{sid}/retire")
    for data in [{"drawn_version": hidden["drawn_version"], "reason": "x"},
                 {**hidden, "csrf": "0" * 64, "reason": "x"}]:
        assert c.post(f"/skills/{sid}/retire", data=data).status_code == 403
    assert bank.get_skill(sid).version == 2


def test_read_only_serves_no_action(bank, ids):
    c = client(bank, read_only=True)
    page = c.get(f"/skills/{ids['plain']}").text
    assert "<form method=\"post\"" not in page and "read-only" in page
    assert "<form method=\"post\"" not in c.get("/candidates").text
    for action in ["retire", "rollback", "edit", "pin"]:
        assert c.post(f"/skills/{ids['plain']}/{action}", data={"reason": "x"}).status_code in (404, 405)
    for action in ["promote", "reject"]:
        assert c.post(f"/candidates/{ids['cand']}/{action}", data={"reason": "x"}).status_code in (404, 405)
    assert bank.get_skill(ids["plain"]).version == 2 and bank.get_skill(ids["cand"]).status == SkillStatus.candidate


def test_unknown_ids_are_404_and_malformed_forms_400_naming_the_field(bank, ids):
    c = client(bank)
    sid = ids["plain"]
    assert c.get("/skills/sk_doesnotexist").status_code == 404
    assert c.get(f"/skills/{sid}?a=1&b=99").status_code == 404
    assert c.get("/nowhere").status_code == 404
    r = c.get("/skills?page=abc")
    assert r.status_code == 400 and "page" in r.text
    hidden = csrf_and_version(c.get(f"/skills/{sid}").text, f"/skills/{sid}/rollback")
    r = c.post(f"/skills/{sid}/rollback", data={**hidden, "to_version": "x", "reason": "r"})
    assert r.status_code == 400 and "to_version" in r.text
    r = c.post(f"/skills/{sid}/rollback", data={**hidden, "to_version": "42", "reason": "r"})
    assert r.status_code == 404
    r = c.post(f"/skills/{sid}/retire", data={**hidden})
    assert r.status_code == 400 and "reason" in r.text
    r = c.post(f"/skills/{sid}/retire", data={**hidden, "drawn_version": "two", "reason": "r"})
    assert r.status_code == 400 and "drawn_version" in r.text
    r = c.post(f"/skills/{sid}/retire", content=b"reason=" + b"x" * 70_000,
               headers={"content-type": "application/x-www-form-urlencoded"})
    assert r.status_code == 413
    assert bank.get_skill(sid).version == 2


def test_serve_command_is_registered():
    from typer.testing import CliRunner

    from skillbank.cli import app

    result = CliRunner().invoke(app, ["serve", "--help"])
    assert result.exit_code == 0 and "--read-only" in result.output and "--bank" in result.output
