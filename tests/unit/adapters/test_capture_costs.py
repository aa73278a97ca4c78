"""Capture that never costs the agent (issue 11): no lost steps, every limit failure labelled,
one configuration, and an injected block that keeps the prompt prefix stable.

All of it on the real ``create_agent`` / ``create_react_agent`` with scripted chat models.
"""

from __future__ import annotations

import asyncio
import warnings

import pytest
from langchain.agents import create_agent
from langchain.agents.middleware import ModelCallLimitMiddleware, ToolCallLimitMiddleware
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool
from langgraph.errors import GraphRecursionError

from skillbank import SkillBank
from skillbank.adapters.callbacks import SkillBankCallbackHandler
from skillbank.adapters.config import InjectionConfig, RecordingConfig
from skillbank.adapters.injection import Block, SkillInjector
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.langgraph import skillbank_hook, skillbank_prompt
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.models import LimitType

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from langgraph.prebuilt import create_react_agent

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore:.*create_react_agent.*")


@pytest.fixture
def bank(tmp_path):
    b = SkillBank.open(tmp_path / "bank", embedder="hash")
    b.add_skill(name="ping-politely", description="pinging a server", body="Ping once, then answer.")
    b.add_skill(name="refund-after-eligibility", description="refund an order after checking eligibility",
                body="Look up the order, check eligibility, then refund.")
    yield b
    b.close()


@tool
def ping() -> str:
    """Ping the server."""
    return "pong"


def looping_model() -> ScriptedChatModel:
    return ScriptedChatModel([tool_call("ping")])  # calls ping forever


# -- 1. no superstep per model turn --------------------------------------------------------------


def _counting_tool():
    calls: list[int] = []

    @tool("ping")
    def counted() -> str:
        """Ping the server."""
        calls.append(1)
        return "pong"

    return counted, calls


def _run_until_limit(build, limit: int, mode: str, config=None, *, must_raise: bool = True) -> int:
    """Tool calls a looping agent makes before its step budget stops it."""
    counted, calls = _counting_tool()
    agent = build(counted)
    config = {"recursion_limit": limit, **(config or {})}
    try:
        if mode == "invoke":
            agent.invoke({"messages": [("user", "ping forever")]}, config)
        else:
            asyncio.run(agent.ainvoke({"messages": [("user", "ping forever")]}, config))
    except GraphRecursionError:
        pass
    else:
        assert not must_raise, "the looping agent was expected to hit GraphRecursionError"
    return len(calls)


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
@pytest.mark.parametrize("limit", [16, 33])
def test_middleware_costs_create_agent_no_step(bank, mode, limit):
    without = _run_until_limit(lambda t: create_agent(looping_model(), [t]), limit, mode)
    mw = SkillBankMiddleware(bank, k=2)
    with_bank = _run_until_limit(lambda t: create_agent(looping_model(), [t], middleware=[mw]), limit, mode)
    assert with_bank == without == limit // 2  # one model and one tools superstep per call
    # and the run it cut short is recorded, injected and labelled
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.status == "incomplete" and traj.injections
    assert sum(1 for s in traj.steps if s.kind == "tool") == with_bank
    assert traj.outcome.success is False and traj.outcome.source == "limit:recursion_limit"


@pytest.mark.parametrize("mode", ["invoke", "ainvoke"])
def test_react_agent_prompt_and_handler_cost_no_step(bank, mode):
    limit = 15  # odd: at an even limit create_react_agent answers "need more steps" instead
    without = _run_until_limit(lambda t: create_react_agent(looping_model(), [t]), limit, mode)
    handler = SkillBankCallbackHandler(bank)
    with_bank = _run_until_limit(
        lambda t: create_react_agent(looping_model(), [t], prompt=skillbank_prompt(bank, system_prompt="Be brief.")),
        limit, mode, config={"callbacks": [handler]})
    assert with_bank == without == limit // 2
    traj = bank.trajectories.get(handler.last_trajectory_id)
    assert traj.injections and traj.outcome.source == "limit:recursion_limit"


def test_pre_model_hook_costs_one_step_per_turn_as_documented(bank):
    limit = 15
    without = _run_until_limit(lambda t: create_react_agent(looping_model(), [t]), limit, "invoke")
    hooked = _run_until_limit(lambda t: create_react_agent(looping_model(), [t], pre_model_hook=skillbank_hook(bank)),
                              limit, "invoke", must_raise=False)
    assert hooked < without  # the README says so; skillbank_prompt is the free way in


# -- 2. a run that ends at a limit is a labelled failure -----------------------------------------


def test_recursion_limit_calls_the_verifier_with_the_last_state(bank):
    seen = {}

    def verifier(state):
        seen["state"] = state
        return 0.2

    mw = SkillBankMiddleware(bank, verifier=verifier)
    with pytest.raises(GraphRecursionError):
        create_agent(looping_model(), [ping], middleware=[mw]).invoke(
            {"messages": [("user", "ping forever")]}, {"recursion_limit": 8})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.outcome.success is False and traj.outcome.score == 0.2 and traj.outcome.source == "verifier"
    messages = seen["state"]["messages"]
    # the state as the agent last had it: the question, then every call and result so far
    assert messages[0].content == "ping forever"
    assert sum(1 for m in messages if m.type == "tool") == sum(1 for s in traj.steps if s.kind == "tool")
    assert seen["state"]["skillbank_trajectory_id"] == traj.id


def test_a_verifier_that_raises_at_a_limit_still_labels_a_failure(bank, caplog):
    def verifier(state):
        raise KeyError("the final state this verifier expects never came")

    mw = SkillBankMiddleware(bank, verifier=verifier)
    with pytest.raises(GraphRecursionError):
        create_agent(looping_model(), [ping], middleware=[mw]).invoke(
            {"messages": [("user", "ping")]}, {"recursion_limit": 6})
    outcome = bank.trajectories.get(mw.recording_middleware.last_trajectory_id).outcome
    assert outcome.success is False and outcome.source == "limit:recursion_limit"
    assert "verifier failed" in caplog.text


@pytest.mark.parametrize("extra, error, expected", [
    (ModelCallLimitMiddleware(run_limit=2, exit_behavior="error"), Exception, LimitType.model_call_limit),
    (ToolCallLimitMiddleware(run_limit=2, exit_behavior="error"), Exception, LimitType.tool_call_limit),
    (ModelCallLimitMiddleware(run_limit=2), None, LimitType.model_call_limit),
    (ToolCallLimitMiddleware(run_limit=2, exit_behavior="end"), None, LimitType.tool_call_limit),
])
def test_every_limit_ending_is_labelled_without_a_verifier(bank, extra, error, expected):
    mw = SkillBankMiddleware(bank)
    agent = create_agent(looping_model(), [ping], middleware=[mw, extra])
    if error is not None:
        with pytest.raises(error):
            agent.invoke({"messages": [("user", "ping")]})
    else:
        agent.invoke({"messages": [("user", "ping")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.outcome is not None and traj.outcome.success is False
    assert traj.outcome.source == f"limit:{expected.value}"


@pytest.mark.parametrize("options, expected", [
    ({"max_tokens_per_run": 200}, LimitType.token_budget),
    ({"max_seconds_per_run": 0.05}, LimitType.time_budget),
])
def test_budget_stops_are_labelled_failures(bank, options, expected):
    model = ScriptedChatModel([tool_call("ping")], usage={"input_tokens": 100, "output_tokens": 20}, sleep=0.03)
    mw = SkillBankMiddleware(bank, **options)
    result = create_agent(model, [ping], middleware=[mw]).invoke({"messages": [("user", "ping")]})
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    assert traj.status == "complete" and traj.outcome.source == f"limit:{expected.value}"
    assert traj.outcome.success is False


def test_a_tool_that_raises_ends_the_run_at_a_labelled_limit(bank):
    @tool
    def flaky() -> str:
        """A device that is offline."""
        raise RuntimeError("device offline")

    mw = SkillBankMiddleware(bank)
    with pytest.raises(RuntimeError):
        create_agent(ScriptedChatModel([tool_call("flaky")]), [flaky], middleware=[mw]).invoke(
            {"messages": [("user", "use the device")]})
    outcome = bank.trajectories.get(mw.recording_middleware.last_trajectory_id).outcome
    assert outcome.success is False and outcome.source == "limit:tool_error"


def test_an_ordinary_error_is_not_a_limit_and_stays_unlabelled(bank):
    mw = SkillBankMiddleware(bank)
    with pytest.raises(ValueError):
        create_agent(ScriptedChatModel([ValueError("provider had a bad day")]), [ping], middleware=[mw]).invoke(
            {"messages": [("user", "ping")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    assert traj.status == "incomplete" and traj.outcome is None


def test_record_outcome_later_overrides_a_limit_label(bank):
    mw = SkillBankMiddleware(bank)
    with pytest.raises(GraphRecursionError):
        create_agent(looping_model(), [ping], middleware=[mw]).invoke(
            {"messages": [("user", "ping")]}, {"recursion_limit": 6})
    tid = mw.recording_middleware.last_trajectory_id
    bank.record_outcome(tid, success=True, note="the pings were all that was needed")
    assert bank.trajectories.get(tid).outcome.success is True


def test_the_round_reads_limit_ended_runs(bank):
    from skillbank.evolution._batch import load_batch

    mw = SkillBankMiddleware(bank)
    for _ in range(3):
        with pytest.raises(GraphRecursionError):
            create_agent(looping_model(), [ping], middleware=[mw]).invoke(
                {"messages": [("user", "ping the server")]}, {"recursion_limit": 8})
    batch = load_batch(bank)
    assert len(batch.runs) == 3 and not any(r.success for r in batch.runs)
    assert all(r.limits and all(h.type == LimitType.recursion_limit for h in r.limits) for r in batch.runs)


def test_callback_handler_labels_limit_endings(bank):
    agent = create_react_agent(looping_model(), [ping])
    # an odd limit: the graph raises GraphRecursionError between nodes
    handler = SkillBankCallbackHandler(bank, verifier=lambda output: True)
    with pytest.raises(GraphRecursionError):
        agent.invoke({"messages": [("user", "ping")]}, {"recursion_limit": 7, "callbacks": [handler]})
    # the verifier was asked about the last state it saw and said yes: that stands
    assert bank.trajectories.get(handler.last_trajectory_id).outcome.source == "verifier"

    handler = SkillBankCallbackHandler(bank)
    with pytest.raises(GraphRecursionError):
        agent.invoke({"messages": [("user", "ping")]}, {"recursion_limit": 7, "callbacks": [handler]})
    outcome = bank.trajectories.get(handler.last_trajectory_id).outcome
    assert outcome.success is False and outcome.source == "limit:recursion_limit"

    # an even limit: create_react_agent answers "need more steps" itself, a step limit
    handler = SkillBankCallbackHandler(bank)
    agent.invoke({"messages": [("user", "ping")]}, {"recursion_limit": 6, "callbacks": [handler]})
    outcome = bank.trajectories.get(handler.last_trajectory_id).outcome
    assert outcome.success is False and outcome.source == "limit:step_limit"


# -- 3. one configuration ------------------------------------------------------------------------


def test_detectors_switch_off_with_none(bank):
    mw = SkillBankMiddleware(bank, recording=RecordingConfig(unknown_field_detector=None, refusal_detector=None))
    assert mw.recording_middleware.detectors.unknown_fields is None and mw.recording_middleware.detectors.refusal is None


# -- 5. a stable block keeps the prompt prefix -------------------------------------------------


def test_system_message_is_identical_across_turns_unless_a_skill_is_added(bank):
    model = ScriptedChatModel([tool_call("ping"), tool_call("ping"), tool_call("ping"), "done"], cycle=False)
    mw = SkillBankMiddleware(bank, k=1)
    create_agent(model, [ping], system_prompt="Be brief.", middleware=[mw]).invoke(
        {"messages": [("user", "ping the server please")]})
    systems = [received[0].text for received in model.received]
    assert len(systems) == 4
    for before, after in zip(systems, systems[1:]):
        # the same text, or the same text with a skill appended inside the block
        assert after == before or after.startswith(before.removesuffix("</skills>"))


def test_a_block_only_appends_and_a_new_skill_must_beat_the_weakest(bank):
    injector = SkillInjector(bank, InjectionConfig(k=1, general_k=0))
    block = Block()
    first = injector.inject([HumanMessage("ping the server")], block=block)
    assert [h.skill.name for h in first.hits] == ["ping-politely"]
    second = injector.inject([HumanMessage("ping the server"), HumanMessage("now refund order 7 after eligibility")],
                             task="ping the server", block=block)
    names = [h.skill.name for h in second.hits]
    assert names[0] == "ping-politely"  # never reshuffled
    assert second.text.startswith(first.text.removesuffix("</skills>"))


# -- 4. only what fits the agent in front of it ------------------------------------------------


def test_skills_learned_with_another_toolset_are_not_injected(bank):
    from skillbank.lessons import Lesson, LessonKind

    car_guard = bank.add_skill(
        name="when-range-is-unknown", description="pinging a server when the vehicle range is unknown",
        lessons=[Lesson(kind=LessonKind.unknown_field, tool="get_vehicle_status", field="range_km")],
        kind="guard", tools=["get_vehicle_status"], toolset=["get_vehicle_status", "set_climate"])
    window_guard = bank.add_skill(
        name="when-open-window-is-unavailable", description="pinging when the window tool is unavailable",
        lessons=[Lesson(kind=LessonKind.missing_tool, tool="open_window")],
        kind="guard", tools=["open_window"], toolset=["ping", "set_climate"])
    injector = SkillInjector(bank, InjectionConfig(k=5, general_k=0))
    messages = [HumanMessage("ping the server")]
    names = lambda tools: {h.skill.name for h in injector.inject(messages, tools=tools).hits}  # noqa: E731
    # An agent with only `ping`: the car guard was learned beside other tools; the window guard
    # was learned beside `ping` (its own tool is missing by definition).
    assert car_guard.name not in names(["ping"]) and window_guard.name in names(["ping"])
    assert car_guard.name in names(["get_vehicle_status"])
    assert {car_guard.name, window_guard.name} <= names(None)  # tools not known: no filter
    off = SkillInjector(bank, InjectionConfig(k=5, general_k=0, match_toolset=False))
    assert car_guard.name in {h.skill.name for h in off.inject(messages, tools=["ping"]).hits}

    # Through the middleware, which knows the agent's tools.
    mw = SkillBankMiddleware(bank, k=5)
    create_agent(ScriptedChatModel(["done"]), [ping], middleware=[mw]).invoke({"messages": [("user", "ping it")]})
    injected = {i.skill_id for i in bank.trajectories.get(mw.recording_middleware.last_trajectory_id).injections}
    assert car_guard.id not in injected and window_guard.id in injected


def test_the_tools_offered_are_recorded_and_read_by_the_round(bank):
    from skillbank.evolution._batch import load_batch

    mw = SkillBankMiddleware(bank, verifier=lambda state: True)
    create_agent(ScriptedChatModel([tool_call("ping"), "done"]), [ping], middleware=[mw]).invoke(
        {"messages": [("user", "ping it")]})
    traj = bank.trajectories.get(mw.recording_middleware.last_trajectory_id)
    offered = [s.tools_offered for s in traj.steps if s.kind == "model"]
    assert offered == [["ping"], None]  # recorded when it changes
    [run] = load_batch(bank).runs
    assert run.toolset == ("ping",)


def test_injection_precision_counts_skills_learned_with_the_runs_tools(bank):
    from skillbank.consistency.precision import injection_precision
    from skillbank.lessons import Lesson, LessonKind

    bank.add_skill(name="ping-guard", description="pinging a server that may be down",
                   lessons=[Lesson(kind=LessonKind.tool_error, tool="ping")], kind="guard",
                   tools=["ping"], toolset=["ping"])
    bank.add_skill(name="car-guard", description="pinging the car",
                   lessons=[Lesson(kind=LessonKind.missing_tool, tool="open_window")], kind="guard",
                   tools=["open_window"], toolset=["set_climate"])
    ids = []
    for match in (True, False):
        mw = SkillBankMiddleware(bank, injection=InjectionConfig(k=5, general_k=0, match_toolset=match))
        create_agent(ScriptedChatModel(["done"]), [ping], middleware=[mw]).invoke({"messages": [("user", "ping")]})
        ids.append(mw.recording_middleware.last_trajectory_id)
    matched, unmatched = (injection_precision(bank, [i]) for i in ids)
    assert matched.share == 1.0
    assert unmatched.pairs > matched.pairs and unmatched.share < 1.0
    # the two hand-written skills of the fixture record no toolset: counted apart
    assert matched.no_toolset >= 1
