"""The limit events BFCL provokes, as the capture middleware records them.

Each test runs a BFCL task through ``run_task`` (the real ``create_agent`` loop) with
``SkillBankMiddleware`` and a scripted model that makes one mistake, then reads the stored
trajectory's limit events. The mistakes and what BFCL answers:

* a function that is not in the toolset (unknown, or withheld until a later turn):
  LangChain's ToolNode answers ``Error: <name> is not a valid tool, try one of [...]``
  (``status="error"``);
* a missing required argument: BFCL's executor answers, as an ordinary tool result,
  ``Error during execution: GorillaFileSystem.mv() missing 1 required positional argument:
  'destination'``;
* a backend refusing: the backend returns a dict, the executor sends it as JSON, e.g.
  ``{"error": "cd: 'nowhere': No such file or directory"}``;
* a backend raising: ``Error during execution: argument of type 'int' is not iterable``;
* an argument the function does not have (``ls(color=True)``);
* more than BFCL's 20 tool-calling steps in one turn.

BFCL's error results arrive as successful tool messages; the adapters read them with
``find_result_error`` (a required argument left out is ``invalid_tool_args``, anything else the
backend reports is ``tool_error``).
"""

from __future__ import annotations

import json

import pytest
from bfcl_support import require_bfcl

require_bfcl()

from skillbank.adapters.langchain import TRAJECTORY_KEY, SkillBankMiddleware  # noqa: E402
from skillbank.adapters.testing import ScriptedChatModel, tool_call  # noqa: E402
from skillbank_harness.envs import bfcl, run_task  # noqa: E402

# name: (task, the mistaken call, the answer as (status, start of the content), the expected
# limit events as (type, tool))
MISTAKES = {
    "unknown function": (
        "multi_turn_base_0", tool_call("rm_all", path="."),
        ("error", "Error: rm_all is not a valid tool, try one of ["),
        [("missing_tool", "rm_all")]),
    "withheld function before its turn": (
        "multi_turn_miss_func_0", tool_call("sort", file_name="final_report.pdf"),  # joins at turn 3
        ("error", "Error: sort is not a valid tool, try one of ["),
        [("missing_tool", "sort")]),
    "argument the function lacks": (
        "multi_turn_base_0", tool_call("ls", a=True, color=True),
        ("success", "Error during execution: GorillaFileSystem.ls() got an unexpected keyword argument 'color'"),
        [("missing_parameter", "ls")]),
    "missing required argument": (
        "multi_turn_base_0", tool_call("mv", source="final_report.pdf"),
        ("success", "Error during execution: GorillaFileSystem.mv() missing 1 required positional "
                    "argument: 'destination'"),
        [("invalid_tool_args", "mv")]),
    "backend error dict": (
        "multi_turn_base_0", tool_call("cd", folder="nowhere"),
        ("success", json.dumps({"error": "cd: 'nowhere': No such file or directory"})),
        [("tool_error", "cd")]),
    "backend exception": (
        "multi_turn_base_0", tool_call("cat", file_name=5),
        ("success", "Error during execution: argument of type 'int' is not iterable"),
        [("tool_error", "cat")]),
}


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in bfcl.load_tasks(["base", "miss_func"])}


def _run(bank, task, script):
    """One run with the mistake in turn 0; every later model turn answers without a call."""
    model = ScriptedChatModel([*script, "I could not do that."], cycle=False)
    result = run_task(task, model, middleware=[SkillBankMiddleware(bank, inject=False)])
    traj = bank.trajectories.get(result.state[TRAJECTORY_KEY])
    tool_results = [m for m in result.messages if m.type == "tool"]
    return traj, tool_results


@pytest.mark.parametrize("mistake", MISTAKES)
def test_what_the_agent_gets_back(bank, tasks, mistake):
    task_id, call, (status, content), _ = MISTAKES[mistake]
    traj, results = _run(bank, tasks[task_id], [call])
    assert len(results) == 1 and results[0].status == status
    assert results[0].content.startswith(content)
    assert traj.steps[1].kind == "tool" and traj.steps[1].tool == call.tool_calls[0]["name"]


@pytest.mark.parametrize("mistake", MISTAKES)
def test_the_mistake_is_recorded_as_a_limit(bank, tasks, mistake):
    task_id, call, _, expected = MISTAKES[mistake]
    traj, _ = _run(bank, tasks[task_id], [call])
    recorded = [(e.type.value, e.tool) for e in traj.limit_events]
    # at least the expected events (an error result may also count as a tool error)
    assert expected and all(event in recorded for event in expected), recorded


def test_more_than_bfcl_steps_in_a_turn_is_a_step_limit(bank, tasks):
    script = [tool_call("pwd")] * 21  # BFCL allows 20 tool-calling steps per turn
    traj, results = _run(bank, tasks["multi_turn_base_0"], script)
    assert len(results) == 21 and traj.final_answer == bfcl.FORCE_QUIT_MESSAGE
    assert [e.type.value for e in traj.limit_events] == ["step_limit"]
