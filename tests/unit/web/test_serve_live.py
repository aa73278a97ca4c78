"""The live evidence on the review pages at the HTTP level: a skill's live effect, the canaries,
a canary started and a rollback acknowledged through CSRF-checked forms, and reads that write
nothing."""

from __future__ import annotations

import pytest

from conftest import unavailable

try:
    from starlette.testclient import TestClient

    from skillbank._web import create_app
except ImportError as exc:  # pragma: no cover - depends on the install
    unavailable(f"{exc}: pip install 'skillbank[web]'", allow_module_level=True)

from serve_support import TOKEN, csrf_and_version, fill_live
from skillbank.live._decisions import pending_rollbacks
from skillbank.live._exposure import is_canary
from skillbank.live._view import live_view
from skillbank.models import SkillStatus


@pytest.fixture
def ids(bank):
    return fill_live(bank)


def client(bank, *, read_only=False):
    c = TestClient(create_app(bank, token=TOKEN, read_only=read_only), base_url="http://127.0.0.1",
                   follow_redirects=False)
    assert c.get(f"/skills?token={TOKEN}").status_code == 303
    return c


def test_the_skill_page_shows_the_live_effect_the_monitor_computes(bank, ids):
    html = client(bank).get(f"/skills/{ids['running']}").text
    view = live_view(bank, ids["running"])
    e = view.as_dict()["effect"]
    table = html[html.index('id="live-table"'):html.index("</table>", html.index('id="live-table"'))]
    assert f"{e['shown']['successes']}/{e['shown']['labelled']}" in table
    assert f"{e['held']['successes']}/{e['held']['labelled']}" in table
    d = e["difference"]
    assert f"{d['estimate']:+.2f}" in table and f"[{d['low']:+.2f}, {d['high']:+.2f}]" in table
    assert ">refund<" in table and ">return<" in table  # a row per kind of request
    assert "in canary: shown to 50%" in html and "none written" in html


def test_the_candidates_queue_shows_each_canary_with_its_running_evidence(bank, ids):
    html = client(bank).get("/candidates").text
    assert f'id="canary-{ids["running"]}"' in html and f'id="canary-{ids["hurt"]}"' not in html
    assert f'id="canary-table-{ids["running"]}"' in html


def test_a_reviewer_starts_a_canary_with_csrf_and_reads_what_happened(bank, ids):
    c = client(bank)
    html = c.get(f"/skills/{ids['plain']}").text
    assert "Not randomized" in html
    action = f"/skills/{ids['plain']}/canary"
    fields = csrf_and_version(html, action)
    assert c.post(action, data={"drawn_version": fields["drawn_version"]}).status_code == 403  # no CSRF token
    assert not is_canary(bank.get_skill(ids["plain"]))
    r = c.post(action, data={**fields, "reason": "try it on live traffic"})
    assert r.status_code == 303 and r.headers["location"] == f"/skills/{ids['plain']}?done=canary"
    skill = bank.get_skill(ids["plain"])
    assert is_canary(skill) and bank.history(skill.id)[-1].author == "web"
    page = c.get(r.headers["location"]).text
    assert "cancel-politely is in canary (v2)" in page and 'id="canary-form"' not in page
    # The same form again: the page it came from is stale.
    assert c.post(action, data={**fields, "reason": "again"}).status_code == 409


def test_a_canary_the_page_does_not_offer_is_refused_with_why(bank, ids):
    c = client(bank)
    hurt = bank.get_skill(ids["hurt"])
    r = c.post(f"/skills/{hurt.id}/canary", data={**csrf_and_version(c.get(f"/skills/{ids['plain']}").text,
                                                                       f"/skills/{ids['plain']}/canary"),
                                                  "drawn_version": str(hurt.version)})
    assert r.status_code == 409 and "is retired" in r.text
    assert bank.get_skill(hurt.id).status == SkillStatus.retired


def test_a_rollback_is_marked_in_the_list_until_acknowledged(bank, ids):
    c = client(bank)
    listing = c.get("/skills").text
    assert 'id="rollbacks"' in listing and "rolled back by the monitor (reject)" in listing
    html = c.get(f"/skills/{ids['hurt']}").text
    assert 'id="rollback"' in html and "reject at v" in html
    action = f"/skills/{ids['hurt']}/acknowledge"
    versions = len(bank.history(ids["hurt"]))
    r = c.post(action, data={**csrf_and_version(html, action), "reason": "saw it"})
    assert r.status_code == 303 and r.headers["location"].endswith("?done=ack")
    assert pending_rollbacks(bank) == {} and len(bank.history(ids["hurt"])) == versions
    assert "Acknowledged: the monitor" in c.get(r.headers["location"]).text
    assert 'id="rollbacks"' not in c.get("/skills").text
    assert c.post(action, data={**csrf_and_version(html, action)}).status_code == 409  # nothing left to acknowledge


def test_the_pages_write_nothing_and_read_only_offers_no_action(bank, ids):
    seq, versions = bank.skills.last_event_seq(), {i: bank.get_skill(i).version for i in ids.values()}
    c = client(bank)
    for path in ["/skills", "/candidates", *(f"/skills/{i}" for i in ids.values()),
                 f"/skills/{ids['plain']}?done=canary", f"/skills/{ids['hurt']}?done=ack"]:
        r = c.get(path)
        assert r.status_code == 200, path
        assert "is in canary (v" not in r.text and "Acknowledged:" not in r.text  # nothing was done
    assert bank.skills.last_event_seq() == seq
    assert {i: bank.get_skill(i).version for i in ids.values()} == versions
    ro = client(bank, read_only=True)
    html = ro.get(f"/skills/{ids['hurt']}").text
    assert 'id="live-table"' in html and "/acknowledge" not in html and "/canary" not in html
    assert ro.post(f"/skills/{ids['hurt']}/acknowledge", data={}).status_code in (404, 405)
