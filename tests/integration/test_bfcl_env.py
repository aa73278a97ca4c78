"""The BFCL environment: tasks and split, tools and schemas, turns, withheld functions, call
order, BFCL's step limit, instance clean-up and the ``skillbank eval --env bfcl`` wiring."""

from __future__ import annotations

import gc
import json
from pathlib import Path

import pytest
from bfcl_support import require_bfcl

require_bfcl()

from langchain_core.messages import AIMessage, HumanMessage  # noqa: E402
from langchain_core.utils.function_calling import convert_to_openai_tool  # noqa: E402
from pydantic import Field  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from skillbank_harness import envs  # noqa: E402
from skillbank.adapters.testing import ScriptedChatModel, tool_call  # noqa: E402
from skillbank.cli import app  # noqa: E402
from skillbank_harness.envs import bfcl  # noqa: E402
from skillbank_harness.envs.bfcl import _bfcl  # noqa: E402

DATA = Path(__file__).parents[1] / "data"


@pytest.fixture(scope="module")
def tasks():
    return {t.id: t for t in bfcl.load_tasks(bfcl.CATEGORIES)}


def _bfcl_globals(run_name: str) -> list[str]:
    return [k for k in vars(_bfcl.multi_turn_utils) if k.startswith(run_name + "_")]


# ------------------------------------------------------------------------ tasks and the split


def test_every_entry_is_a_task_split_by_api_class(tasks):
    by_type: dict[str, int] = {}
    for t in tasks.values():
        by_type[t.type] = by_type.get(t.type, 0) + 1
        assert t.split == ("heldout" if "VehicleControlAPI" in t.classes else "train")
        assert t.input == t.entry["question"][0][0]["content"]
        assert len(t.ground_truth) == len(t.entry["question"])
    assert by_type == {"base": 200, "miss_func": 200, "miss_param": 200, "long_context": 200}
    # a scenario lands on one side in every category: no conversation is on both sides
    sides: dict[int, set[str]] = {}
    for t in tasks.values():
        sides.setdefault(t.scenario, set()).add(t.split)
    assert sides and all(len(s) == 1 for s in sides.values())
    assert sum(s == {"heldout"} for s in sides.values()) == 50


def test_categories_and_classes_are_checked():
    assert bfcl.parse_categories("base, multi_turn_miss_func,base") == ("base", "miss_func")
    with pytest.raises(ValueError, match="unknown BFCL category 'web_search'.*choose from"):
        bfcl.parse_categories("base,web_search")
    with pytest.raises(ValueError, match="no BFCL category"):
        bfcl.parse_categories(" , ")
    with pytest.raises(ValueError, match="unknown BFCL API classes"):
        bfcl.load_tasks("base", heldout_classes=["Spaceship"])
    held = bfcl.load_tasks("base", heldout_classes=["TravelAPI", "TicketAPI"])
    assert sum(t.split == "heldout" for t in held) == 66


def test_spread_keeps_the_same_scenarios_in_every_category(tasks):
    chosen = bfcl.spread([t for t in tasks.values() if t.type != "long_context"], 12)
    assert len(chosen) == 36
    per_type = {ty: {t.scenario for t in chosen if t.type == ty} for ty in ("base", "miss_func", "miss_param")}
    assert per_type["base"] == per_type["miss_func"] == per_type["miss_param"]
    assert len({t.template for t in chosen}) == 12  # round-robin: one scenario per API combination


# ------------------------------------------------------------------------ tools


def test_schemas_are_bfcl_own_casting():
    """Our casting of BFCL's function docs equals BFCL's convert_to_tool output (snapshot)."""
    snapshot = json.loads((DATA / "bfcl_tool_schemas.json").read_text())
    assert snapshot["bfcl_eval"] == bfcl.TESTED_VERSION
    from bfcl_eval.constants.eval_config import MULTI_TURN_FUNC_DOC_PATH
    from bfcl_eval.constants.executable_backend_config import MULTI_TURN_FUNC_DOC_FILE_MAPPING

    docs = []
    for name in _bfcl.MULTI_TURN_CLASSES:
        path = MULTI_TURN_FUNC_DOC_PATH / MULTI_TURN_FUNC_DOC_FILE_MAPPING[name]
        docs.extend(json.loads(line) for line in path.read_text().splitlines() if line.strip())
    ours = {d["name"]: bfcl.json_schema(d) for d in docs}
    assert len(ours) == 128
    assert ours == snapshot["schemas"]
    assert ours["adjustClimateControl"]["properties"]["temperature"] == {
        "type": "number", "format": "float",
        "description": "The temperature to set in degree. Default to be celsius. This is a float type value."}


def test_tools_carry_bfcl_docs_and_return_bfcl_results(tasks):
    task = tasks["multi_turn_base_0"]
    env = task.make_env()
    tools = {t.name: t for t in env.tools()}
    assert set(tools) == {d["name"] for d in task.entry["function"]}
    doc = next(d for d in task.entry["function"] if d["name"] == "mv")
    assert tools["mv"].description == doc["description"]
    assert tools["mv"].args_schema == bfcl.json_schema(doc)
    assert convert_to_openai_tool(tools["mv"])["function"]["parameters"] == bfcl.json_schema(doc)
    assert bfcl.call_string("mv", {"source": "a b.txt", "n": 2}) == "mv(source='a b.txt',n=2)"
    # a backend's error dict and the executor's error text come back as BFCL gives them
    assert json.loads(tools["cd"].invoke({"folder": "nowhere"})) == {
        "error": "cd: 'nowhere': No such file or directory"}
    assert tools["mv"].invoke({"source": "final_report.pdf"}).startswith(
        "Error during execution: GorillaFileSystem.mv() missing 1 required positional argument")
    assert json.loads(tools["cd"].invoke({"folder": "document"})) == {"current_working_directory": "document"}
    assert env.instances()["GorillaFileSystem"]._current_dir.name == "document"
    assert env.turns == [[["cd(folder='nowhere')", "mv(source='final_report.pdf')", "cd(folder='document')"]]]


def test_parse_call_names_positional_arguments_by_bfcl_signature():
    assert bfcl.parse_call("sort('final_report.pdf')", ["TwitterAPI", "GorillaFileSystem"]) == (
        "sort", {"file_name": "final_report.pdf"})
    assert bfcl.parse_call("ls(a=True)", ["GorillaFileSystem"]) == ("ls", {"a": True})
    with pytest.raises(ValueError, match="no method 'sort'"):
        bfcl.parse_call("sort('x')", ["TwitterAPI"])
    with pytest.raises(ValueError, match="not a plain function call"):
        bfcl.parse_call("a.b(1)", ["TwitterAPI"])


# ------------------------------------------------------------------------ turns and toolsets


class _ToolsSeen(ScriptedChatModel):
    """Records the tool names offered at every model call (bind_tools is called per call)."""

    seen: list[list[str]] = Field(default_factory=list)

    def bind_tools(self, tools, **kwargs):
        super().bind_tools(tools, **kwargs)
        self.seen = [*self.seen, list(self.bound_tools)]
        return self


def test_user_turns_arrive_in_order_and_withheld_functions_join_at_their_turn(tasks):
    task = tasks["multi_turn_miss_func_0"]  # `sort` is withheld until turn 3 (no user message)
    script = [tool_call("sort", file_name="final_report.pdf"), "Cannot sort.",  # turn 0
              "ok", "ok", tool_call("sort", file_name="final_report.pdf"), "Sorted.", "ok"]
    model = _ToolsSeen(script, cycle=False)
    result = envs.run_task(task, model)
    humans = [m.content for m in result.messages if isinstance(m, HumanMessage)]
    assert humans == [q[0]["content"] if q else _bfcl.MORE_FUNCTIONS_PROMPT for q in task.entry["question"]]
    assert "sort" not in model.seen[0] and "sort" in model.seen[-1]
    assert [("sort" in names) for names in model.seen] == [False, False, False, False, True, True, True]
    tool_messages = [m for m in result.messages if m.type == "tool"]
    # turn 0: ToolNode refuses the call (not a tool yet); it never reaches the backend
    assert tool_messages[0].status == "error" and "sort is not a valid tool" in tool_messages[0].content
    # turn 3: the backend runs it (and answers that the file is not in the current directory)
    assert tool_messages[1].status == "success"
    assert json.loads(tool_messages[1].content) == {"error": "sort: final_report.pdf: No such file or directory"}
    assert result.env.turns == [[[]], [], [], [["sort(file_name='final_report.pdf')"]], []]


def test_parallel_calls_run_in_the_order_the_model_wrote_them(tasks):
    """cd, mkdir, mv in one message only work in that order; LangGraph alone would run them
    concurrently."""
    task = tasks["multi_turn_base_0"]
    for _ in range(5):
        result = envs.run_task(task, bfcl.GroundTruthModel.for_task(task, parallel=True))
        (step,) = result.env.turns[0]
        assert [c.split("(")[0] for c in step] == ["cd", "mkdir", "mv"]
        assert result.success, result.env.last_check


def test_more_than_bfcl_step_limit_in_one_turn_force_quits(tasks):
    task = tasks["multi_turn_long_context_38"]  # 34 ground-truth calls in turn 0
    result = envs.run_task(task, bfcl.GroundTruthModel.for_task(task))
    assert result.env.forced_quit and not result.success
    assert len(result.env.turns) == 1 and len(result.env.turns[0]) == _bfcl.MAXIMUM_STEP_LIMIT + 1
    assert result.final_answer == bfcl.FORCE_QUIT_MESSAGE
    assert result.env.last_check["error_type"] == "multi_turn:force_terminated"
    # the same calls as one message per turn stay within the limit and pass
    assert envs.run_task(task, bfcl.GroundTruthModel.for_task(task, parallel=True)).success


def test_a_run_leaves_no_instances_behind(tasks):
    task = tasks["multi_turn_base_3"]
    result = envs.run_task(task, bfcl.GroundTruthModel.for_task(task))
    assert result.success
    run_name = result.env.run_name
    assert _bfcl_globals(run_name)  # live while the env is
    before = [k for k in vars(_bfcl.multi_turn_utils) if k.startswith("skillbank_")]
    task.verify(result.env)  # the checker's own instances are dropped at once
    assert [k for k in vars(_bfcl.multi_turn_utils) if k.startswith("skillbank_")] == before
    del result
    gc.collect()
    assert _bfcl_globals(run_name) == []


def test_run_without_tool_calls_fails_bfcl_check(tasks):
    task = tasks["multi_turn_base_0"]
    result = envs.run_task(task, ScriptedChatModel(["I cannot help."]))
    assert not result.success
    assert result.env.last_check["error_type"] == "multi_turn:empty_turn_model_response"
    assert [m.content for m in result.messages if isinstance(m, AIMessage)] == ["I cannot help."] * len(task.ground_truth)


# ------------------------------------------------------------------------ the CLI


def test_eval_env_bfcl_runs_the_chosen_categories(tmp_path, monkeypatch):
    monkeypatch.setattr("skillbank.cli._eval.load_chat_model",
                        lambda spec: ScriptedChatModel(["I cannot do that with these tools."]))
    out = tmp_path / "numbers.json"
    res = CliRunner().invoke(app, ["eval", "--env", "bfcl", "--categories", "base,miss_param",
                                   "--scenarios", "2", "--model", "fake:any", "-n", "1",
                                   "--embedder", "hash", "-d", str(tmp_path / "bank"),
                                   "--json", str(out)])
    assert res.exit_code == 0, res.output
    data = json.loads(out.read_text())
    text = json.dumps(data)
    assert "multi_turn_base_" in text and "multi_turn_miss_param_" in text
    assert "multi_turn_miss_func_" not in text
    assert "--categories base,miss_param --scenarios 2" in text


def test_eval_split_keeps_one_side(tmp_path, monkeypatch):
    monkeypatch.setattr("skillbank.cli._eval.load_chat_model", lambda spec: ScriptedChatModel(["No."]))
    out = tmp_path / "numbers.json"
    res = CliRunner().invoke(app, ["eval", "--env", "bfcl", "--categories", "base", "--scenarios", "8",
                                   "--split", "heldout", "--model", "fake:any", "-n", "1",
                                   "--embedder", "hash", "-d", str(tmp_path / "bank"), "--json", str(out)])
    assert res.exit_code == 0, res.output
    text = out.read_text()
    held = [t.id for t in bfcl.spread(bfcl.load_tasks("base"), 8) if t.split == "heldout"]
    assert held and all(t in text for t in held)
    assert '"train"' not in text


@pytest.mark.parametrize("args, message", [
    (["--env", "bfcl"], "--env bfcl needs --model"),
    (["--env", "bfcl", "--model", "fake:any", "--categories", "base,nope"], "unknown BFCL category 'nope'"),
    (["--env", "car", "--categories", "base"], "apply to --env bfcl only"),
    (["--env", "bfcl", "--model", "fake:any", "--split", "test"], "unknown --split 'test'"),
])
def test_eval_env_bfcl_bad_arguments(tmp_path, monkeypatch, args, message):
    monkeypatch.setattr("skillbank.cli._eval.load_chat_model", lambda spec: ScriptedChatModel(["x"]))
    res = CliRunner().invoke(app, ["eval", *args, "--embedder", "hash", "-d", str(tmp_path / "b")])
    assert res.exit_code != 0
    assert message in res.output
