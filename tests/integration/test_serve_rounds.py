"""The "Rounds and reports" page, on SQLite and both PostgreSQL servers (any_bank): real
evolution rounds (a gate that promotes, one that rejects) and a consistency measurement stored
in the bank, read back as tables."""

from __future__ import annotations

import re

import pytest

from conftest import unavailable

try:
    from starlette.testclient import TestClient

    from skillbank._web import create_app
except ImportError as exc:  # pragma: no cover - depends on the install
    unavailable(f"the web extra is missing ({exc}): pip install 'skillbank[web]'", allow_module_level=True)

from serve_support import PAYLOADS, TOKEN
from skillbank.consistency.measure import measure
from skillbank.consistency.tasks import SimpleTask
from skillbank.evolution import evolve
from skillbank._web import rounds
from test_hardening_support import family_runs


def _client(bank):
    c = TestClient(create_app(bank, token=TOKEN), base_url="http://127.0.0.1")
    c.cookies.set("skillbank_token", TOKEN)
    return c


def _rows(html: str, table: str) -> list[list[str]]:
    body = html[html.index(f'id="{table}"'):]
    body = body[body.index("<tbody>"):body.index("</tbody>")]
    return [[re.sub(r"<[^>]+>", "", c).strip() for c in re.findall(r"<td[^>]*>(.*?)</td>", tr, re.S)]
            for tr in re.findall(r"<tr>(.*?)</tr>", body, re.S)]


def test_each_round_with_what_it_and_its_gate_wrote(any_bank):
    bank = any_bank
    for f in range(3):
        for run in family_runs(f):
            bank.trajectories.save(run)
    first = evolve(bank, validate=lambda skill, tasks: True, auto_promote=True)
    for run in family_runs(3):
        bank.trajectories.save(run)
    second = evolve(bank, validate=lambda skill, tasks: False, auto_promote=True)
    made = [c.skill_id for c in first.changes if c.skill_id]
    assert len(made) == 3 and [d.decision for d in first.gate] == ["promoted"] * 3
    assert [d.decision for d in second.gate] == ["rejected"]

    c = _client(bank)
    html = c.get("/rounds").text
    rows = _rows(html, "rounds")  # newest first
    # round, finished, runs read, proposed, changed, retired, promoted, rejected
    assert [r[0] for r in rows] == ["round 2", "round 1"]
    assert rows[1][2:] == [str(first.trajectories), "3", "0", "0", "3", "0"]
    assert rows[0][2:] == [str(second.trajectories), "1", "0", "0", "0", "1"]
    one = c.get("/rounds/1").text
    versions = _rows(one, "round-versions")
    assert sorted(r[3] for r in versions) == ["evolution:rule"] * 3 + ["gate"] * 3
    assert all(sid in one for sid in made)
    assert c.get("/rounds/9").status_code == 404 and c.get("/rounds/x").status_code == 400


def test_a_measurement_is_the_report_rebuilt_from_its_stored_trials(any_bank):
    bank = any_bank
    bank.add_skill("lookup-order", "Look an order up first.", "Call get_order.")
    tasks = [SimpleTask(id=f"t{i}", type="lookup" if i % 2 else f"refund {PAYLOADS[0]}", input=f"order {i}")
             for i in range(6)]

    def factory(arm, b, task):  # "with" always succeeds; "without" on even trials only
        return lambda spec: arm == "with" or spec.index % 2 == 0

    result = measure(factory, tasks, trials=3, bank=bank, run_id="demo-run", progress=False)
    c = _client(bank)
    listed = _rows(c.get("/rounds").text, "measurements")
    assert listed == [["demo-run", "36", "2", listed[0][3], listed[0][4]]]
    page = c.get("/reports/demo-run")
    assert page.status_code == 200 and "<script>alert" not in page.text  # task types are escaped
    rebuilt = rounds.report_view(rounds.measure_result(bank, "demo-run"))
    direct = rounds.report_view(result)
    for name in ("consistency", "deltas", "by_type", "cost"):  # the same numbers as the run itself
        assert rebuilt[name]["rows"] == direct[name]["rows"], name
    table = _rows(page.text, "consistency")
    assert [r[1] for r in table] == ["without", "with"]
    assert table[1][5] == "100.0%" and table[0][5] == "0.0%"  # pass^3: with always, without never
    for fig in rounds.FIGURES if _has_matplotlib() else ():
        img = c.get(f"/reports/demo-run/{fig}.png")
        assert img.status_code == 200 and img.content.startswith(b"\x89PNG")
    assert c.get("/reports/no-such-run").status_code == 404
    assert c.get("/reports/demo-run/nope.png").status_code == 404


def test_a_figure_is_drawn_once_until_a_trial_changes(bank, monkeypatch):
    tasks = [SimpleTask(id=f"t{i}", type="lookup", input=f"order {i}") for i in range(2)]
    measure(lambda arm, b, task: (lambda spec: arm == "with"), tasks, trials=2, bank=bank, run_id="r",
            progress=False)
    drawn = []
    real = rounds.figure_png
    monkeypatch.setattr(rounds, "figure_png", lambda result, name: drawn.append(name) or real(result, name))
    c = _client(bank)
    first, again = c.get("/reports/r/pass_k.png"), c.get("/reports/r/pass_k.png")
    assert first.content == again.content and drawn == ["pass_k"]  # the second from the cache
    more = [SimpleTask(id="t9", type="lookup", input="order 9")]
    measure(lambda arm, b, task: (lambda spec: True), more, trials=2, bank=bank, run_id="r",
            progress=False)  # more trials in the same run: the figure is drawn again
    assert c.get("/reports/r/pass_k.png").status_code == 200 and drawn == ["pass_k", "pass_k"]


def _has_matplotlib() -> bool:
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        return False
    return True


def test_pages_take_no_action_and_need_the_token(bank):
    c = TestClient(create_app(bank, token=TOKEN), base_url="http://127.0.0.1")
    assert c.get("/rounds").status_code == 403
    c.cookies.set("skillbank_token", TOKEN)
    assert c.post("/rounds", data={}).status_code == 405
    assert "Rounds and reports" in c.get("/skills").text  # in the navigation


@pytest.fixture(autouse=True)
def _offline(monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
