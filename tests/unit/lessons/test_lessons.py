"""Lessons as data (issue 12): what a skill teaches is typed, rendered once, and learned at the
level of arguments, so agents whose method lives in the arguments (one ``act(command)`` tool)
and requests full of names still yield procedures; and the text a model reads is clean.

The one-tool agent and the refund agent run through the real ``create_agent`` with
``SkillBankMiddleware``; a scripted chat model plays the agent (it reads the task and acts).
"""

from __future__ import annotations

import json
import re

import pytest
from langchain.agents import create_agent
from langchain_core.tools import tool

from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.evolution import evolve
from skillbank.evolution._naming import fit_name
from skillbank.lessons import Lesson, LessonKind, MethodStep, render_body, sentence
from skillbank.models import NAME_MAX, SkillContent
from skillbank.retrieval import render

# -- the data ------------------------------------------------------------------------------------------


def test_a_body_is_rendered_from_its_lessons_and_must_match_them():
    lessons = (Lesson(kind=LessonKind.check_first, check="get_order", tool="cancel_order"),
               Lesson(kind=LessonKind.pitfall, avoid="repeat"))
    content = SkillContent(name="cancel-orders", description="Cancelling an order", lessons=lessons)
    assert content.body == render_body(lessons)
    assert "Always call `get_order` before `cancel_order`." in content.body
    with pytest.raises(ValueError, match="does not match its lessons"):
        SkillContent(name="cancel-orders", description="x", lessons=lessons, body="Cancel it.")
    # A stored version keeps the body it was hashed with, whatever the renderer says today.
    old = SkillContent.stored({**content.model_dump(), "body": "an older rendering"})
    assert old.body == "an older rendering"


def test_skills_without_lessons_hash_as_before_and_hold_their_body_as_guidance():
    plain = SkillContent(name="be-brief", description="Always", body="Answer in one sentence.")
    payload = plain.hash_payload()
    assert "lessons" not in payload and "toolset" not in payload  # versions written before keep their hash
    assert plain.all_lessons == (Lesson(kind=LessonKind.guidance, text="Answer in one sentence."),)


def test_lessons_validate_what_their_kind_needs():
    for bad in (dict(kind="procedure"), dict(kind="budget"), dict(kind="pitfall"), dict(kind="guidance"),
                dict(kind="check_first", check="a"), dict(kind="unknown_field", tool="t")):
        with pytest.raises(ValueError):
            Lesson(**bad)


def test_names_fit_the_limit_in_whole_words():
    long = ["when", "get-vehicle-status", "range-km", "is", "unknown", "while", "the", "driver",
            "is", "on", "a", "very", "long", "motorway", "trip", "again"]
    name = fit_name(long, suffix="pitfalls")
    assert len(name) <= NAME_MAX and name.endswith("-pitfalls")
    words = "-".join(long).split("-")
    assert all(part in words for part in name.removesuffix("-pitfalls").split("-"))


# -- one tool, the method in its argument ---------------------------------------------------------------

GAME = {  # template -> (task, the commands that solve it); {item}, {box}, {plant} vary per task
    "stow": ("Put the {item} in the {box}.", ["take {item}", "open {box}", "put {item} in {box}"]),
    "water": ("Please water the {plant}.", ["take watering can", "water {plant}"]),
    "peek": ("What is inside the {box}?", ["open {box}", "look in {box}"]),
}
VALUES = [dict(item="key", box="chest", plant="fern"), dict(item="coin", box="crate", plant="cactus"),
          dict(item="map", box="drawer", plant="orchid"), dict(item="lamp", box="basket", plant="ivy")]


def _game_agent(bank, commands):
    world: list[str] = []

    @tool
    def act(command: str) -> str:
        """Do one thing in the game world, described in a short imperative command."""
        world.append(command)
        return f"You {command}."

    def play(messages):
        done = sum(1 for m in messages if m.type == "tool")
        return tool_call("act", command=commands[done]) if done < len(commands) else "Done."

    verifier = lambda state: world == commands  # noqa: E731 - the game's own check
    mw = SkillBankMiddleware(bank, verifier=verifier, inject=False)
    return create_agent(ScriptedChatModel([play]), [act], middleware=[mw])


def test_a_one_tool_agent_learns_its_commands_without_instance_values(bank):
    for template, (task, commands) in GAME.items():
        for values in VALUES:
            filled = [c.format(**values) for c in commands]
            _game_agent(bank, filled).invoke({"messages": [("user", task.format(**values))]})
    report = evolve(bank)
    procedures = [bank.get_skill(c.skill_id) for c in report.changes if c.kind == "add"]
    procedures = [s for s in procedures if s.kind.value == "procedure"]
    assert len(procedures) == len(GAME), [s.name for s in procedures]
    instance = {v for values in VALUES for v in values.values()}
    texts = {}
    for skill in procedures:
        [method] = [x for x in skill.content.lessons if x.kind == LessonKind.procedure]
        commands = [step.args["command"] for step in method.steps]
        texts[tuple(commands)] = skill.body
        words = set(re.findall(r"[a-z]+", (skill.body + skill.description).lower()))
        assert not words & instance, (skill.name, words & instance)
    # The commands, with the request's values as numbered slots in the order the request names them.
    assert ("take <value_1>", "open <value_2>", "put <value_1> in <value_2>") in texts
    assert ("take watering can", "water <value_1>") in texts
    assert ("open <value_1>", "look in <value_1>") in texts
    # A command template reads as code, its slots in it, each saying where its value comes from.
    stow = texts[("take <value_1>", "open <value_2>", "put <value_1> in <value_2>")]
    assert "1. Call `act` with `command`=`take <value_1>` (<value_1> from the request)." in stow
    assert "3. Call `act` with `command`=`put <value_1> in <value_2>` (<value_1>, <value_2> from the request)." in stow


# -- names in the request ------------------------------------------------------------------------------

CUSTOMERS = ["ann", "bob", "cy", "dee"]


def _refund_agent(bank, customer):
    order = f"o-{customer}-7"

    @tool
    def find_order(customer: str) -> str:
        """Find a customer's last order."""
        return json.dumps({"order_id": order, "customer": customer})

    @tool
    def refund(order_id: str) -> str:
        """Refund an order."""
        return "refunded" if order_id == order else "no such order"

    script = [tool_call("find_order", customer=customer), tool_call("refund", order_id=order), "Refunded."]
    mw = SkillBankMiddleware(bank, verifier=lambda state: True, inject=False)
    return create_agent(ScriptedChatModel(script, cycle=False), [find_order, refund], middleware=[mw])


def test_entity_varied_requests_give_one_procedure(bank):
    for customer in CUSTOMERS:
        _refund_agent(bank, customer).invoke({"messages": [("user", f"please refund {customer}'s last order")]})
    report = evolve(bank)
    [skill] = [bank.get_skill(c.skill_id) for c in report.changes if c.kind == "add"]
    [method] = skill.content.lessons
    assert [s.tool for s in method.steps] == ["find_order", "refund"]
    assert method.steps[0] == MethodStep(tool="find_order", args={"customer": "<customer>"},
                                         sources={"customer": "request"})
    assert method.steps[1].args == {"order_id": "<order_id>"} and method.steps[1].sources == {"order_id": "find_order"}
    text = skill.body + skill.description + skill.name
    assert not any(re.search(rf"\b{c}\b", text) for c in CUSTOMERS)
    assert skill.content.toolset == ("find_order", "refund")  # what the agents it came from had


# -- the text a model reads ----------------------------------------------------------------------------

_TEMPLATE_PLACEHOLDER = re.compile(r"<(?:num|name|text|id|url|email|value)>")
_RUN_COUNT = re.compile(r"\d[\d,]* (?:failed |successful )?(?:run|success|failure)", re.I)


def test_the_rendered_block_has_no_counts_placeholders_duplicates_or_cut_names(bank):
    from test_evolution_support import refund, search_budget, window

    for t in [*(refund(i) for i in range(4)), *(refund(i, success=False, skip_check=True) for i in range(4, 7)),
              window(0), window(1), *(search_budget(i) for i in range(3))]:
        bank.trajectories.save(t)
    evolve(bank)
    skills = bank.list_skills()
    assert skills
    block = render(skills)
    assert not _RUN_COUNT.search(block), _RUN_COUNT.search(block)
    assert not _TEMPLATE_PLACEHOLDER.search(block), _TEMPLATE_PLACEHOLDER.search(block)
    for skill in skills:
        assert "<" not in skill.description, skill.description
        bullets = [line for line in skill.body.splitlines() if line.startswith("- ")]
        assert len(bullets) == len(set(bullets)), skill.name
        assert not skill.name.endswith("-") and len(skill.name) <= NAME_MAX


def test_a_lesson_about_another_tool_never_enters_a_skill(bank):
    from skillbank.evolution.rule import RuleDistiller

    events = SkillContent(name="list-events", description="Listing events", kind="procedure", tools=("list_events",),
                          lessons=(Lesson(kind=LessonKind.procedure, steps=(MethodStep(tool="list_events"),)),))
    other = SkillContent(name="list-events-too", description="Listing events", kind="procedure",
                         tools=("list_events", "check_availability"),
                         lessons=(Lesson(kind=LessonKind.check_first, check="check_availability", tool="create_event"),
                                  Lesson(kind=LessonKind.pitfall, avoid="skip", tool="list_events")))
    merged = RuleDistiller().merge(events, other)
    assert [x.kind for x in merged.lessons] == [LessonKind.procedure, LessonKind.pitfall]
    assert "check_availability" not in merged.body and merged.tools == ("list_events",)


def test_every_lesson_kind_renders_one_clean_sentence():
    examples = [
        Lesson(kind=LessonKind.procedure, steps=(MethodStep(tool="a", args={"x": "<x>"}), MethodStep(tool="b"))),
        Lesson(kind=LessonKind.check_first, check="a", tool="b"), Lesson(kind=LessonKind.missing_tool, tool="a"),
        Lesson(kind=LessonKind.missing_parameter, tool="a", parameter="p"),
        Lesson(kind=LessonKind.ask_for, tool="a", parameter="p"), Lesson(kind=LessonKind.unknown_field, tool="a", field="f"),
        Lesson(kind=LessonKind.budget, budget=3, tool="a"), Lesson(kind=LessonKind.pitfall, avoid="call", tool="a"),
        Lesson(kind=LessonKind.tool_error, tool="a"), Lesson(kind=LessonKind.policy),
        Lesson(kind=LessonKind.guidance, text="Be brief."),
    ]
    for lesson in examples:
        text = sentence(lesson)
        assert text and not _RUN_COUNT.search(text) and "None" not in text, text
