"""One batch holding failures of every cause at once: each cause becomes its own lesson, from its
own runs only, next to the method the successes share."""

from __future__ import annotations

from conftest import teaches
from skillbank.evolution import evolve
from test_evolution_support import eta, refund, search_budget, window


def test_failures_with_mixed_causes_in_one_batch(bank):
    runs = {
        "success": [refund(i) for i in range(3)],
        "skipped check": [refund(i, success=False, skip_check=True) for i in range(3, 5)],  # no limit
        "missing tool": [window(i) for i in range(2)],
        "unknown field": [eta(i) for i in range(2)],
        "budget": [search_budget(i) for i in range(2)],
    }
    for group in runs.values():
        for t in group:
            bank.trajectories.save(t)
    ids = {cause: {t.id for t in group} for cause, group in runs.items()}

    report = evolve(bank, promote_policy="all")
    assert (report.trajectories, report.successes, report.failures) == (11, 3, 8)
    changes = {c.skill_id: c for c in report.changes}
    skills = {s.id: s for s in bank.list_skills()}
    assert set(changes) == set(skills) and len(skills) == 4

    def only(kind, **fields):
        found = [s for s in skills.values() if teaches(s, kind, **fields)]
        assert len(found) == 1, (kind, fields, [s.name for s in skills.values()])
        return set(changes[found[0].id].evidence)

    # each limit lesson comes from the runs that hit that limit, and from nothing else
    assert only("missing_tool", tool="open_window") == ids["missing tool"]
    assert only("unknown_field", tool="track_order", field="eta") == ids["unknown field"]
    assert only("budget", tool="search") == ids["budget"]
    # the method comes from the successes; the failures that skipped its check add that mistake
    assert only("procedure", tools=("find_order", "check_refund_policy", "issue_refund")) \
        == ids["success"] | ids["skipped check"]
    assert only("check_first", check="check_refund_policy", tool="issue_refund") \
        == ids["success"] | ids["skipped check"]
