"""``skillbank eval --agent module:factory --tasks tasks.jsonl``: your own agent, measured with
the same table, report and resume as the environments; the task file's bad lines named."""

import json
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from skillbank.cli import app
from skillbank.consistency.runner import MeasureError
from skillbank.consistency._taskfile import load_tasks

runner = CliRunner()

FACTORY = '''
from langchain.agents import create_agent
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

CALLS = []


class Scripted(FakeMessagesListChatModel):
    def bind_tools(self, tools, **kwargs):
        return self


@tool
def get_weather(city: str) -> dict:
    """Get the weather in a city."""
    return {"city": city, "temperature_c": 4}


def verify(task, state):
    answer = state["messages"][-1].content
    return task.data["expect"] in answer


def build(middleware, seed):
    CALLS.append(seed)
    # odd seeds answer wrongly: the agent is inconsistent by construction
    answer = "It is 4 degrees." if seed % 2 == 0 else "No idea."
    model = Scripted(responses=[
        AIMessage("", tool_calls=[{"name": "get_weather", "args": {"city": "Oslo"}, "id": "c1",
                                   "type": "tool_call"}]),
        AIMessage(answer)])
    return create_agent(model, [get_weather], middleware=middleware), verify
'''

TASKS = [
    {"id": "oslo", "type": "lookup", "split": "train", "input": "Weather in Oslo?", "expect": "4 degrees"},
    {"id": "oslo-2", "type": "lookup", "split": "heldout", "input": "How warm is Oslo?", "expect": "4 degrees"},
]


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "my_agent.py").write_text(FACTORY)
    (tmp_path / "tasks.jsonl").write_text("\n".join(json.dumps(t) for t in TASKS) + "\n\n")
    return tmp_path


def _eval(project: Path, *extra: str):
    return runner.invoke(app, ["eval", "--agent", f"{project / 'my_agent.py'}:build", "--tasks",
                               str(project / "tasks.jsonl"), "--trials", "3", "-d",
                               str(project / "bank"), "--embedder", "hash", *extra])


def test_your_agent_is_measured_logged_and_resumed(project: Path):
    first = _eval(project, "--json", str(project / "out.json"), "--report", str(project / "r.html"))
    assert first.exit_code == 0, first.output
    assert "Consistency" in first.stdout and "held-out" in first.stdout and "pass^3" in first.stdout
    data = json.loads((project / "out.json").read_text())
    (res,) = data["results"].values()
    without = res["splits"]["all"]["arms"]["without"]["summary"]
    assert without["n_tasks"] == 2 and res["model"] == f"{project / 'my_agent.py'}:build"
    # the verdicts follow the seeds (even seeds answer right): neither 0 nor 1 overall
    records = res["records"]
    assert {r["success"] for r in records} == {True, False}
    assert all(r["trajectory_id"] and r["steps"] >= 2 for r in records)  # logged by the middleware
    assert (project / "r.html").exists()
    again = _eval(project)
    assert again.exit_code == 0 and "resuming: 12 trials already stored" in again.stdout


def test_module_factories_import_from_the_current_folder(project: Path, monkeypatch):
    monkeypatch.chdir(project)
    result = runner.invoke(app, ["eval", "--agent", "my_agent:build", "--tasks", "tasks.jsonl",
                                 "--trials", "1", "-d", "bank", "--embedder", "hash", "--json", "-"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["results"]


@pytest.mark.parametrize("args, message", [
    (["--agent", "my_agent:build"], "--agent and --tasks go together"),
    (["--agent", "my_agent:nope", "--tasks", "tasks.jsonl"], "has no callable 'nope'"),
    (["--agent", "no_such_module_x:build", "--tasks", "tasks.jsonl"], "cannot import no_such_module_x"),
    (["--agent", "my_agent", "--tasks", "tasks.jsonl"], "use module:factory"),
    (["--agent", "my_agent:build", "--tasks", "tasks.jsonl", "--model", "local:1.5b"],
     "--model does not apply with --agent"),
    (["--agent", "my_agent:build", "--tasks", "missing.jsonl"], "no tasks file at missing.jsonl"),
])
def test_bad_agent_arguments_fail_in_one_line(project: Path, monkeypatch, args, message):
    monkeypatch.chdir(project)
    result = runner.invoke(app, ["eval", *args, "-d", "bank", "--embedder", "hash"])
    assert result.exit_code == 1 and message in result.stderr, result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("lines, message", [
    (['{"id": "a", "type": "t", "input": "x"}', "not json"], ":2: not valid JSON"),
    (['["a"]'], ":1: a task is a JSON object"),
    (['{"id": "a", "input": "x"}'], ":1: the task has no type"),
    (['{"id": "a", "type": "t", "input": "x"}', '{"id": "a", "type": "t", "input": "y"}'],
     ":2: duplicate id 'a' (first on line 1)"),
    (['{"id": "", "type": "t", "input": "x"}'], "id must be a non-empty string"),
    (['{"id": "a", "type": "t", "input": 3}'], "input must be a string or an object"),
    ([""], "has no tasks"),
])
def test_a_bad_task_file_names_the_line(tmp_path: Path, lines, message):
    path = tmp_path / "t.jsonl"
    path.write_text("\n".join(lines))
    with pytest.raises(MeasureError, match=message.replace("(", r"\(").replace(")", r"\)")):
        load_tasks(path)


def test_task_lines_keep_what_the_verifier_needs(tmp_path: Path):
    path = tmp_path / "t.jsonl"
    path.write_text(textwrap.dedent('''\
        {"id": "a", "type": "t", "input": {"messages": [["user", "hi"]]}, "must_call": ["x"]}
    '''))
    (task,) = load_tasks(path)
    assert task.data["must_call"] == ["x"] and task.split is None and isinstance(task.input, dict)
