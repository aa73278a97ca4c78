"""A no-tool lesson's support is counted over small talk in all its wordings: groups too small to
teach alone whose successes called no tool are one group (_cluster.py), and the lesson quotes
each wording when they share no pattern (rule.py). The trace (protocol v7 on the real 1.5B,
RESULTS.md): "Hi, lovely to be here!" and "Good evening! How are you doing?" each succeeded once
without a call and failed with one (`list_rooms`, an invented `hello`); neither alone had the two
successes a lesson needs, and no no-tool lesson was proposed."""

from __future__ import annotations

from skillbank.evolution import evolve
from skillbank.lessons import LessonKind
from test_evolution_support import traj


def _chat(text: str, i: int, *, called: str | None):
    calls = [(called, {"bed": "1"}, '{"moisture": 40}')] if called else []
    return traj(text, calls, success=called is None, answer="Good morning to you too!" if called is None else "",
                task_id=f"chat-{i}")


def _no_tool_changes(report):
    return [c for c in report.changes if c.skill.endswith("no-tools")]


def _save_two_wordings(bank):
    runs = [_chat("Morning! Nice weather for it.", 0, called=None),
            _chat("Morning! Nice weather for it.", 1, called="get_soil_moisture"),
            _chat("Hey there, how is your day going?", 2, called=None),
            _chat("Hey there, how is your day going?", 3, called="water_bed")]
    for t in runs:
        bank.trajectories.save(t)


def test_two_wordings_of_small_talk_support_one_no_tool_lesson(bank):
    _save_two_wordings(bank)
    report = evolve(bank, distiller="rule", dry_run=True)
    (change,) = _no_tool_changes(report)
    assert "2 successful run(s) called no tool" in change.reason


def test_the_lesson_quotes_each_wording_and_only_says_call_no_tool(bank):
    _save_two_wordings(bank)
    evolve(bank, distiller="rule")
    (skill,) = [s for s in bank.skills.list() if s.name.endswith("no-tools")]
    assert [x.kind for x in skill.content.lessons] == [LessonKind.no_tool]
    assert '"morning! nice weather for it."' in skill.description.lower()
    assert '"hey there, how is your day going?"' in skill.description.lower()


def test_one_success_is_still_no_support(bank):
    for t in [_chat("Morning! Nice weather for it.", 0, called=None),
              _chat("Morning! Nice weather for it.", 1, called="get_soil_moisture"),
              _chat("Hey there, how is your day going?", 3, called="water_bed")]:
        bank.trajectories.save(t)
    assert not _no_tool_changes(evolve(bank, distiller="rule", dry_run=True))


def test_a_wording_that_always_succeeded_lends_its_support_to_one_that_failed_with_calls(bank):
    # Protocol v10's trace: "thank you, that helps a lot." 2 of 2 without a call (enough
    # successes, no failure to contrast), "thank you so much, that's all i needed." 1 of 4 (the
    # failures called tools, one success is too few). Apart, neither teaches the no-tool lesson.
    runs = [_chat("Thank you, that helps a lot.", 0, called=None),
            _chat("Thank you, that helps a lot.", 1, called=None),
            _chat("Thank you so much, that's all I needed.", 2, called=None),
            _chat("Thank you so much, that's all I needed.", 3, called="get_soil_moisture"),
            _chat("Thank you so much, that's all I needed.", 4, called="water_bed"),
            _chat("Thank you so much, that's all I needed.", 5, called="water_bed")]
    for t in runs:
        bank.trajectories.save(t)
    (change,) = _no_tool_changes(evolve(bank, distiller="rule", dry_run=True))
    assert "3 successful run(s) called no tool; 3 failed run(s) called" in change.reason


def test_a_wording_that_teaches_alone_stays_alone(bank):
    # Two successes without a call and two failures with one: the wording teaches on its own,
    # and a wording that always succeeded is not mixed into its lesson.
    runs = [_chat("Morning! Nice weather for it.", i, called=None if i < 2 else "water_bed") for i in range(4)]
    runs += [_chat("Hey there, how is your day going?", 4 + i, called=None) for i in range(2)]
    for t in runs:
        bank.trajectories.save(t)
    (change,) = _no_tool_changes(evolve(bank, distiller="rule", dry_run=True))
    assert "2 successful run(s) called no tool; 2 failed run(s) called water_bed" in change.reason
