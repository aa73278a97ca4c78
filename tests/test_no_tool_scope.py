"""A lesson to call no tool fits every toolset, so it is scoped by the request instead: it goes
into a turn whose request is nearer the requests it was learned from than what any offered tool
is for. Protocol v4 on the real 1.5B showed why (RESULTS.md): one small-talk lesson in a small
bank rode on every prompt, and the model skipped the refill, weather and cinema calls its tasks
needed. These tests use the bundled MiniLM: the scope is a comparison of its similarities."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage
from langchain_core.tools import tool

from skillbank import SkillBank
from skillbank.adapters.injection import SkillInjector, calls_no_tool
from skillbank.adapters.tools import tool_names, tool_purposes
from skillbank.lessons import Lesson, LessonKind

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
