"""Lessons that read right on agents that are not ours (issue 31, item 7), each test shaped like
the trace it comes from: a text-game agent with one tool, ``act(command)``, on a real game
engine; requests whose common pattern is stop words and ellipses; a limit with no tool."""

from __future__ import annotations

from skillbank.evolution import evolve
from skillbank.evolution._evidence import to_run
from skillbank.evolution._templates import common_pattern
from skillbank.lessons import LessonKind, sentence
from skillbank.models import LimitEvent
from test_evolution_support import traj

COMMANDS = ["look", "go north", "open door", "take lamp", "go east", "examine lamp"]


def game(i: int, *, toolset=("act",)):
    """A run of the one-tool agent that spent its step budget on different actions."""
    calls = [("act", {"command": c}, "You see nothing special.") for c in COMMANDS]
    t = traj(f"Find the brass key in the cellar, game {i}.", calls, success=False,
             answer="I could not find it.", task_id=f"game-{i}",
             limits=[LimitEvent(type="tool_call_limit", step=12, detail="tool call limit reached",
                                data={"limit": 6, "used": 6})])
    t.steps[0].tools_offered = list(toolset)
    return t


def _budget_lessons(bank):
    return [x for s in bank.list_skills() for x in s.content.lessons if x.kind == LessonKind.budget]


def test_a_one_tool_agents_budget_lesson_is_about_identical_calls_not_its_tool(bank):
    for i in range(2):
        bank.trajectories.save(game(i))
    evolve(bank, promote_policy="all")
    [lesson] = _budget_lessons(bank)
    assert lesson.tool is None, lesson  # "do not keep calling `act`" would stop the agent playing
    assert "`act`" not in sentence(lesson) and "same arguments" in sentence(lesson)


def test_an_agent_with_several_tools_still_hears_which_one_it_kept_calling(bank):
    for i in range(2):
        bank.trajectories.save(game(i, toolset=("act", "inventory", "map")))
    evolve(bank, promote_policy="all")
    [lesson] = _budget_lessons(bank)
    assert lesson.tool == "act"


def test_a_request_pattern_of_stop_words_and_ellipses_is_left_out():
    # The game's requests share few content words: the pattern elides nearly all of them.
    requests = ["there is a key under the mat east of here and it opens the cellar",
                "you see a door to the east that is locked, open it first",
                "the room is dark and a lamp is to the east of the stairs"]
    assert common_pattern(requests) == ""
    # Requests that share most of their words keep a pattern.
    assert common_pattern(["go north and open the gate", "go north and open the door",
                           "go north and close the door"]) == "go north and open the …"


def test_a_limit_with_a_blank_tool_is_a_limit_with_no_tool():
    refused = LimitEvent(type="policy_refusal", step=1, detail="refused by policy", tool="")
    assert refused.tool is None
    t = traj("Unlock the front door.", [("set_thermostat", {"c": 20}, None, "refused by policy")],
             success=False, limits=[LimitEvent(type="policy_refusal", step=1, detail="refused", tool=" "),
                                    LimitEvent(type="policy_refusal", step=1, detail="refused",
                                               data={"tool": ""})])
    assert [h.tool for h in to_run(t).limits] == [None, None]
