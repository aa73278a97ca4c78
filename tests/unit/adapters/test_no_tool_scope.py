"""A lesson to call no tool fits every toolset, so it is scoped by the request instead: it goes
into a turn whose request's nearest neighbour is on its side (what it says it is for, requests the
bank saw succeed without a tool) rather than a tool's (what a tool is for, requests that
succeeded with a call). Protocol v4 on the real 1.5B showed why (RESULTS.md): one small-talk lesson in a small
bank rode on every prompt, and the model skipped the refill, weather and cinema calls its tasks
needed. These tests use the bundled MiniLM: the scope is a comparison of its similarities."""

from __future__ import annotations

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool

from skillbank import SkillBank
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.adapters.injection import SkillInjector, calls_no_tool
from skillbank.adapters._tools import tool_names, tool_purposes
from skillbank.lessons import Lesson, LessonKind
from test_evolution_support import traj

pytestmark = pytest.mark.model


@tool
def get_order(order_id: str) -> str:
    """Look up an order by its id: status, items, delivery date."""
    return "{}"


@tool
def lock_door(door: str) -> str:
    """Lock a door of the house."""
    return "{}"


@tool
def get_door_status(door: str) -> str:
    """Whether a door of the house is open, closed or locked."""
    return "{}"


@pytest.fixture(scope="module")
def bank(tmp_path_factory):
    with SkillBank.open(tmp_path_factory.mktemp("scope") / "bank") as b:  # the bundled MiniLM
        # as the rule distiller writes it (RuleDistiller.no_tools), learned on the shop's tools
        b.add_skill("shop-compliment-no-tools",
                    'When the user says something like "Hi! I just wanted to say your service has '
                    'been great." and asks for nothing a tool does.',
                    kind="pitfall", tags=["learned"], lessons=[Lesson(kind=LessonKind.no_tool)],
                    toolset=["get_order"], author="evolution")
        b.add_skill("look-up-before-answering", "Answer questions about an order from its record",
                    "Call `get_order` with the order id before saying anything about the order.",
                    tools=["get_order"], toolset=["get_order"])
        yield b


def _injected(bank, request: str, tools) -> list[str]:
    result = SkillInjector(bank, k=5).inject([HumanMessage(request)], tools=tool_names(tools),
                                             purposes=tool_purposes(tools))
    return [h.skill.name for h in result.hits]


@pytest.mark.parametrize("request_text", ["Thanks so much, you folks have been wonderful!",
                                          "Hello there, just dropping by to say hi."])
def test_small_talk_gets_the_no_tool_lesson_under_any_toolset(bank, request_text):
    assert "shop-compliment-no-tools" in _injected(bank, request_text, [get_order])
    assert "shop-compliment-no-tools" in _injected(bank, request_text, [lock_door, get_door_status])


@pytest.mark.parametrize("request_text, tools", [
    ("Where is my order ORD-2231? It has not arrived yet.", [get_order]),
    ("Hi! Can you check whether order ORD-77 has shipped?", [get_order]),
    ("Please lock the back door.", [lock_door, get_door_status]),
    ("Is the garage door still open?", [lock_door, get_door_status]),
])
def test_a_request_a_tool_is_for_never_gets_it(bank, request_text, tools):
    names = _injected(bank, request_text, tools)
    assert "shop-compliment-no-tools" not in names
    if tools == [get_order]:  # the skill that does fit is still there: only the no-tool lesson is scoped
        assert "look-up-before-answering" in names


def test_without_purposes_the_tool_names_stand_in(bank):
    result = SkillInjector(bank, k=5).inject([HumanMessage("Please lock the back door.")],
                                             tools=["lock_door", "get_door_status"])
    assert "shop-compliment-no-tools" not in [h.skill.name for h in result.hits]


def test_tools_unknown_leaves_retrieval_as_it_was(bank):
    result = SkillInjector(bank, k=5).inject([HumanMessage("Please lock the back door.")])
    assert "shop-compliment-no-tools" in [h.skill.name for h in result.hits]


def test_tool_purpose_reads_name_and_first_line():
    assert tool_purposes([get_order]) == ("get order: Look up an order by its id: status, items, delivery date.",)
    schema = {"type": "function", "function": {"name": "set_light", "description": "Switch a light.\nMore."}}
    assert tool_purposes([schema, {"name": "ping"}, {}]) == ("set light: Switch a light.", "ping")


def test_calls_no_tool_needs_every_lesson_to_say_so(bank):
    assert calls_no_tool(bank.get_skill("shop-compliment-no-tools"))
    assert not calls_no_tool(bank.get_skill("look-up-before-answering"))


# -- at the tool: a call on small talk is held back once ---------------------------------------------


ORDERS_RUN: list[str] = []


@tool
def look_up_order(order_id: str) -> str:
    """Look up an order by its id: status, items, delivery date."""
    ORDERS_RUN.append(order_id)
    return '{"status": "delivered"}'


@pytest.fixture
def shop(tmp_path):
    with SkillBank.open(tmp_path / "bank") as b:  # its own: the agent's runs go into its neighbours
        b.add_skill("shop-compliment-no-tools",
                    'When the user says something like "Hi! I just wanted to say your service has '
                    'been great." and asks for nothing a tool does.',
                    kind="pitfall", tags=["learned"], lessons=[Lesson(kind=LessonKind.no_tool)],
                    toolset=["look_up_order"], author="evolution")
        yield b


def _run(bank, request_text, script):
    ORDERS_RUN.clear()
    agent = create_agent(ScriptedChatModel(script), [look_up_order], system_prompt="You help a shop's customers.",
                         middleware=[SkillBankMiddleware(bank, reminders=True)])
    return agent.invoke({"messages": [("user", request_text)]})["messages"]


def test_a_tool_called_on_small_talk_is_answered_with_the_lesson_and_not_run(shop):
    messages = _run(shop, "Thanks so much, you folks have been wonderful!",
                    [tool_call("look_up_order", order_id="ORD-1"), "You're welcome, glad we could help!"])
    assert ORDERS_RUN == []
    held = [m.text for m in messages if m.type == "tool"]
    assert len(held) == 1 and held[0].startswith("`look_up_order` was not run. The user's message asks for nothing")
    assert messages[-1].text == "You're welcome, glad we could help!"


def test_a_request_for_a_tool_is_not_held_back(shop):
    _run(shop, "Where is my order ORD-2231? It has not arrived yet.",
         [tool_call("look_up_order", order_id="ORD-2231"), "It was delivered."])
    assert ORDERS_RUN == ["ORD-2231"]


# -- labelled neighbours: what the bank saw requests like this one need -------------------------------


@tool
def get_tide_times(port: str, day: str) -> str:
    """High and low tide times for a port on a day."""
    return "{}"


TIDE_THANKS = ('When the user says something like "lovely, thanks for the tide times!" and asks for '
               'nothing a tool does.')


def _tide_bank(folder, runs: list[tuple[str, bool, bool]]):
    """A bank with the tide lesson as the rule distiller writes it, and recorded runs:
    (request, called a tool, succeeded)."""
    bank = SkillBank.open(folder)
    bank.add_skill("tide-thanks-no-tools", TIDE_THANKS, kind="pitfall", tags=["learned"],
                   lessons=[Lesson(kind=LessonKind.no_tool)], toolset=["get_tide_times"], author="evolution")
    for request, called, ok in runs:
        calls = [("get_tide_times", {"port": "Dover", "day": "Friday"}, '{"high": "06:12"}')] if called else []
        bank.trajectories.save(traj(request, calls, success=ok, answer="Here you are." if called else "Any time!"))
    return bank


RECORDED = [
    ("Lovely, thanks for the tide times!", False, True),
    ("Cheers, the tide info was really useful.", False, True),
    ("When is high tide in Dover on Friday?", True, True),
    ("What time is low tide at Brighton tomorrow?", True, True),
    ("Tide times for Plymouth on Sunday, please.", True, True),
    ("When is high tide in Oban tomorrow?", False, False),  # answered from thin air: a failure
]


@pytest.fixture(scope="module")
def tide_bank(tmp_path_factory):
    with _tide_bank(tmp_path_factory.mktemp("tide") / "bank", RECORDED) as b:
        yield b


def test_small_talk_naming_a_tools_subject_gets_the_lesson_once_the_bank_has_seen_such_requests(tmp_path, tide_bank):
    request = "Great, thanks for the tide times, very handy!"
    with _tide_bank(tmp_path / "empty", []) as empty:  # protocol v5's defect: the tool's purpose is nearer
        assert "tide-thanks-no-tools" not in _injected(empty, request, [get_tide_times])
    assert "tide-thanks-no-tools" in _injected(tide_bank, request, [get_tide_times])


@pytest.mark.parametrize("request_text", ["When is high tide in Brest tomorrow?",
                                          "Could you tell me the tide times for Dover on Saturday?"])
def test_a_request_for_the_tool_on_the_same_subject_does_not_get_it(tide_bank, request_text):
    assert "tide-thanks-no-tools" not in _injected(tide_bank, request_text, [get_tide_times])


def test_a_failed_run_is_no_neighbour(tide_bank):
    # The very request of the failed no-tool run above: were failures counted, it would be its
    # own nearest neighbour (similarity 1.0) on the no-tool side.
    assert "tide-thanks-no-tools" not in _injected(tide_bank, "When is high tide in Oban tomorrow?", [get_tide_times])


def test_the_gates_view_reads_the_same_recorded_requests(tide_bank):
    from skillbank.consistency.validation import CandidateView

    view = CandidateView(tide_bank, tide_bank.get_skill("tide-thanks-no-tools"))
    assert view.solved_requests(200) == tide_bank.solved_requests()
    assert {r.called_tool for r in view.solved_requests(200)} == {True, False}


def test_every_call_of_the_turn_it_answers_is_held_back(shop):
    # Protocol v22: on "thanks" the 1.5B asked for two tools in one turn; the reminder answered the
    # first and the second ran. Held once per run still: a call of a later turn runs.
    two = AIMessage(content="", tool_calls=[
        {"name": "look_up_order", "args": {"order_id": "ORD-1"}, "id": "", "type": "tool_call"},
        {"name": "look_up_order", "args": {"order_id": "ORD-2"}, "id": "", "type": "tool_call"}])
    messages = _run(shop, "Thanks so much, you folks have been wonderful!",
                    [two, tool_call("look_up_order", order_id="ORD-3"), "You're welcome!"])
    assert ORDERS_RUN == ["ORD-3"]
    held = [m.text for m in messages if m.type == "tool"][:2]
    assert all(t.startswith("`look_up_order` was not run. The user's message asks for nothing") for t in held)
