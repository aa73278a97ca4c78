"""Reminders at the answer (issue 29, item 4): a final reply that an injected lesson contradicts
(a call described instead of made; the skills block repeated) is asked again once, in the same
model call; a reply the lesson does not concern stands. Real ``create_agent`` graphs, a real
SQLite bank, a scripted model in place of a remote one."""

from __future__ import annotations

import json

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage, HumanMessage
from langchain_core.tools import tool
from typer.testing import CliRunner

from conftest import _lesson, check_first
from skillbank.adapters.config import InjectionConfig
from skillbank.adapters._interventions import INTERVENTION_KEY as ANSWER_REMINDER_METADATA_KEY
from skillbank.adapters._injection_middleware import SkillInjectionMiddleware
from skillbank.adapters.langchain import SkillBankMiddleware
from skillbank.adapters._recording_middleware import SkillRecordingMiddleware
from skillbank.adapters.testing import ScriptedChatModel, tool_call
from skillbank.cli import app
from skillbank.lessons import MethodStep
from skillbank.models import ANSWER_REMINDER_STEP

CALLED: list[str] = []


@tool
def find_trains(origin: str, destination: str, date: str) -> str:
    """Trains between two stations on a date (YYYY-MM-DD)."""
    CALLED.append("find_trains")
    return json.dumps({"trains": [{"train_id": "IC 7", "departs": "06:10"}]})


@tool
def book_ticket(train_id: str) -> str:
    """Book a seat on a train."""
    CALLED.append("book_ticket")
    return json.dumps({"booked": train_id})


@pytest.fixture(autouse=True)
def _fresh():
    CALLED.clear()


def _skill(bank, lesson):
    return bank.add_skill(name="first-train", description="the first train between two stations tomorrow",
                          kind="procedure", tools=["find_trains"], lessons=(lesson,))


def _run(bank, script, *, reminders=True, text="What is the first train from Hamburg to Berlin tomorrow?"):
    model = ScriptedChatModel(script)
    mw = SkillBankMiddleware(bank, k=3, reminders=reminders)
    agent = create_agent(model, [find_trains, book_ticket], system_prompt="Be brief.", middleware=[mw])
    return agent.invoke({"messages": [("user", text)]}), model


SKIP = _lesson("pitfall", avoid="skip", tool="find_trains")
DESCRIBED = "To find it, you can call the `find_trains` function with origin Hamburg."
CALL = tool_call("find_trains", origin="Hamburg", destination="Berlin", date="2027-03-09")


def test_a_call_described_instead_of_made_is_asked_again_once(bank):
    skill = _skill(bank, SKIP)
    result, model = _run(bank, [DESCRIBED, CALL, "The first train leaves at 06:10."])
    assert CALLED == ["find_trains"]
    assert result["messages"][-1].text == "The first train leaves at 06:10."
    # The second request held the draft and the note; the note names the tool and the lesson.
    again = model.received[1]
    assert isinstance(again[-2], AIMessage) and again[-2].text == DESCRIBED
    assert isinstance(again[-1], HumanMessage) and "call `find_trains`" in again[-1].text
    assert "Do not skip `find_trains`" in again[-1].text
    # The reply that replaced the draft says why (kept for whoever records the run), and the
    # draft never enters the conversation the agent keeps.
    record = next(m for m in result["messages"] if ANSWER_REMINDER_METADATA_KEY in m.response_metadata)
    meta = record.response_metadata[ANSWER_REMINDER_METADATA_KEY]
    assert meta["reason"] == "described" and meta["skill_id"] == skill.id and meta["draft"] == DESCRIBED
    assert DESCRIBED not in [m.text for m in result["messages"]]


def test_only_once_per_run(bank):
    _skill(bank, SKIP)
    result, model = _run(bank, [DESCRIBED, DESCRIBED])
    assert len(model.received) == 2 and result["messages"][-1].text == DESCRIBED


@pytest.mark.parametrize("script, text", [
    (["You're welcome, have a good trip!"], "Thanks a lot!"),          # small talk: no tool named
    ([CALL, "The first train, find_trains says, leaves at 06:10."], None),  # named, but called
    (["Which day do you want to travel?"], None),                       # a question back
])
def test_a_reply_the_lesson_does_not_concern_stands(bank, script, text):
    _skill(bank, SKIP)
    kw = {"text": text} if text else {}
    result, model = _run(bank, script, **kw)
    assert len(model.received) == len(script)
    assert result["messages"][-1].text == script[-1]


def test_a_tool_the_lessons_do_not_ask_for_is_not_pushed(bank):
    # The block's lesson is about find_trains; the reply names book_ticket, which no lesson asks for.
    _skill(bank, SKIP)
    reply = "You could call book_ticket once you have chosen."
    result, model = _run(bank, [reply])
    assert len(model.received) == 1 and result["messages"][-1].text == reply


@pytest.mark.parametrize("lesson", [
    _lesson("procedure", steps=(MethodStep(tool="find_trains", args={"date": "<date>"}),
                                MethodStep(tool="book_ticket", args={"train_id": "<train_id>"}))),
    check_first("find_trains", "book_ticket"),
    # A unit lesson's number comes from its tool's result: the tool is part of the method.
    _lesson("answer_unit", tool="find_trains", field="minutes", scale=60),
])
def test_procedures_and_checks_name_the_tools_to_call(bank, lesson):
    _skill(bank, lesson)
    result, model = _run(bank, [DESCRIBED, CALL, "06:10."])
    assert CALLED == ["find_trains"] and len(model.received) == 3


def test_the_skills_block_repeated_as_the_answer_is_asked_again(bank):
    _skill(bank, SKIP)
    parrot = '<skill name="first-train">When: the first train ...</skill>'
    result, model = _run(bank, [parrot, CALL, "06:10."])
    assert "repeats the skills block" in model.received[1][-1].text
    assert result["messages"][-1].text == "06:10."


def test_an_empty_reply_is_asked_again_once(bank):
    _skill(bank, SKIP)
    result, model = _run(bank, [CALL, "", "The first train leaves at 06:10."])
    note = model.received[2][-1].text
    assert "Your reply is empty" in note and "from the results above" in note
    assert result["messages"][-1].text == "The first train leaves at 06:10."
    assert result["messages"][-1].response_metadata[ANSWER_REMINDER_METADATA_KEY]["reason"] == "empty"
    # With no result to answer from, the note asks for a reply to the user's message; once only.
    result, model = _run(bank, ["", ""])
    assert len(model.received) == 2 and "Answer the user's last message now" in model.received[1][-1].text


def test_off_without_reminders_and_without_skills(bank):
    result, model = _run(bank, [DESCRIBED], reminders=False)
    assert len(model.received) == 1  # no skills at all
    _skill(bank, SKIP)
    result, model = _run(bank, [DESCRIBED], reminders=False)
    assert len(model.received) == 1 and result["messages"][-1].text == DESCRIBED


def test_async_agents_are_asked_again_too(bank):
    import asyncio

    _skill(bank, SKIP)
    model = ScriptedChatModel([DESCRIBED, CALL, "06:10."])
    agent = create_agent(model, [find_trains], system_prompt="Be brief.",
                         middleware=[SkillBankMiddleware(bank, k=3, reminders=True)])
    result = asyncio.run(agent.ainvoke({"messages": [("user", "first train Hamburg Berlin tomorrow?")]}))
    assert CALLED == ["find_trains"] and result["messages"][-1].text == "06:10."


def test_the_recorded_run_keeps_the_draft_and_the_reply(bank):
    _skill(bank, SKIP)
    result, _ = _run(bank, [DESCRIBED, CALL, "06:10."])
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    texts = [s.content for s in traj.steps if s.kind == "model"]
    assert DESCRIBED in texts and texts[-1] == "06:10."


def _asked_again(traj):
    (step,) = [s for s in traj.steps if s.kind == ANSWER_REMINDER_STEP]
    return step


def test_the_recorded_run_says_why_the_reply_was_asked_again(bank):
    skill = _skill(bank, SKIP)
    result, model = _run(bank, [DESCRIBED, CALL, "06:10."])
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    step = _asked_again(traj)
    kinds = [s.kind for s in traj.steps]
    # between the draft's model step and the reply's: the note the model got, why, the lesson
    assert kinds[step.index - 1] == "model" and traj.steps[step.index - 1].content == DESCRIBED
    assert kinds[step.index + 1] == "model"
    assert step.reason == "described" and step.tool == "find_trains"
    assert step.result == model.received[1][-1].text and step.content is None
    assert [(i.skill_id, i.version) for i in traj.injections if i.step == step.index] == [(skill.id, skill.version)]
    shown = CliRunner().invoke(app, ["runs", "show", "-d", str(bank.path), traj.id],
                               env={"SKILLBANK_EMBEDDER": "hash", "COLUMNS": "200"})
    assert shown.exit_code == 0, shown.output
    assert f"[{step.index}] reply asked again: described" in shown.output


def test_a_recording_part_outside_the_injection_keeps_the_draft_with_the_note(bank):
    skill = _skill(bank, SKIP)
    model = ScriptedChatModel([DESCRIBED, CALL, "06:10."])
    recording = SkillRecordingMiddleware(bank)
    agent = create_agent(model, [find_trains, book_ticket], system_prompt="Be brief.",
                         middleware=[recording, SkillInjectionMiddleware(bank, k=3, reminders=True)])
    agent.invoke({"messages": [("user", "What is the first train from Hamburg to Berlin tomorrow?")]})
    traj = bank.trajectories.get(recording.last_trajectory_id)
    step = _asked_again(traj)
    assert step.reason == "described" and step.content == DESCRIBED
    assert DESCRIBED not in [s.content for s in traj.steps if s.kind == "model"]  # it never saw the draft
    assert [i.skill_id for i in traj.injections if i.step == step.index] == [skill.id]


def test_a_run_not_asked_again_records_no_such_step(bank):
    _skill(bank, SKIP)
    result, _ = _run(bank, [CALL, "The first train leaves at 06:10."])
    traj = bank.trajectories.get(result["skillbank_trajectory_id"])
    assert all(s.kind != ANSWER_REMINDER_STEP for s in traj.steps)


# -- a raw number where the lesson says a scaled one ------------------------------------------------

@tool
def get_accounts() -> str:
    """The user's accounts with their balances in cents."""
    CALLED.append("get_accounts")
    return json.dumps({"accounts": [{"account_id": "AC-310", "name": "current", "balance_cents": 24175}]})


UNIT = _lesson("answer_unit", tool="get_accounts", field="balance_cents", scale=100)


def _balance_run(bank, script, text="What is my current balance in euros?", tools=(get_accounts,)):
    bank.add_skill(name="balance-in-euros", description="the balance of an account in euros",
                   kind="procedure", tools=["get_accounts"], lessons=(UNIT,))
    model = ScriptedChatModel(script)
    agent = create_agent(model, list(tools), system_prompt="Be brief.",
                         middleware=[SkillBankMiddleware(bank, k=3, reminders=True)])
    return agent.invoke({"messages": [("user", text)]}), model


def test_a_raw_number_is_asked_again_and_the_model_converts_it(bank):
    result, model = _balance_run(bank, [tool_call("get_accounts"), "Your balance is 24175.",
                                        "Your balance is 241.75 euros."])
    note = model.received[2][-1].text
    assert "24175" in note and "divided by 100" in note
    assert "241.75" not in note  # the library never computes the answer
    assert result["messages"][-1].text == "Your balance is 241.75 euros."


@pytest.mark.parametrize("reply", [
    "Your balance is 241.75 euros.",          # already converted
    "Your balance is 241,75 €.",               # a decimal comma is converted too
    "Your balance is 24175 cents, that is 241.75 euros.",  # both: the conversion is there
    "Which account do you mean?",             # no number at all
])
def test_a_reply_in_the_users_unit_stands(bank, reply):
    result, model = _balance_run(bank, [tool_call("get_accounts"), reply])
    assert len(model.received) == 2 and result["messages"][-1].text == reply


def test_a_number_no_tool_returned_is_asked_again_with_the_tool_to_call(bank):
    # A model with the lesson in its block may skip the call and answer with a number of its own.
    result, model = _balance_run(bank, ["Your balance is 75 euros.", tool_call("get_accounts"),
                                        "Your balance is 241.75 euros."])
    note = model.received[1][-1].text
    assert "75" in note and "`get_accounts` has not been called" in note and "divided by 100" in note
    assert CALLED == ["get_accounts"] and result["messages"][-1].text == "Your balance is 241.75 euros."
    record = next(m for m in result["messages"] if ANSWER_REMINDER_METADATA_KEY in m.response_metadata)
    assert record.response_metadata[ANSWER_REMINDER_METADATA_KEY]["reason"] == "unsourced number"


@pytest.mark.parametrize("text, reply", [
    ("What is my current balance in euros?", "Which account do you mean?"),  # no number
    ("Is 250 euros enough for the rent?", "250 euros may be enough; shall I check your balance?"),
    ("Can I pay it in 2 hours?", "Yes, 120 minutes from now works."),  # the user's, converted
])
def test_a_number_the_user_gave_stands_without_the_tool(bank, text, reply):
    result, model = _balance_run(bank, [reply], text=text)
    assert "balance-in-euros" in model.received[0][0].text  # the lesson was in the block
    assert len(model.received) == 1 and result["messages"][-1].text == reply


def test_a_number_another_tool_returned_stands(bank):
    # The lesson's tool did not run, but the reply's number is a result the run did get.
    result, model = _balance_run(bank, [CALL, "The first train leaves at 06:10."],
                                 text="What is the first train to Berlin tomorrow?",
                                 tools=(get_accounts, find_trains))
    assert "balance-in-euros" in model.received[0][0].text  # the lesson was in the block
    assert len(model.received) == 2 and result["messages"][-1].text == "The first train leaves at 06:10."


# -- the guidance repeated as the answer (protocol v6's reading) -------------------------------------

NO_TOOL = _lesson("no_tool")
NO_TOOL_SENTENCE = "No tool: reply in one or two sentences."


def _small_talk_run(bank, script, text="Cheers, that was a great help!"):
    bank.add_skill(name="great-help-no-tools", kind="pitfall", lessons=(NO_TOOL,),
                   description='When the user says something like "thanks a lot, the trains were spot on!" '
                               "and asks for nothing a tool does.")
    model = ScriptedChatModel(script)
    # match_toolset=False: the scope by request is tests/unit/adapters/test_no_tool_scope.py's subject, on MiniLM
    mw = SkillBankMiddleware(bank, injection=InjectionConfig(k=3, reminders=True, match_toolset=False))
    agent = create_agent(model, [find_trains, book_ticket], system_prompt="Be brief.", middleware=[mw])
    return agent.invoke({"messages": [("user", text)]}), model


@pytest.mark.parametrize("parrot", [
    NO_TOOL_SENTENCE,                                       # the lesson's sentence (v6: 7 of 27 replies)
    "You can call no tool.",                                 # most of it
    "Great-help-no-tools",                                   # the skill's name
    "Thanks a lot, the trains were spot on!",                # the request its description quotes
    "The user asks for nothing a tool does.",                # its description
])
def test_the_lessons_own_words_as_the_answer_are_asked_again(bank, parrot):
    result, model = _small_talk_run(bank, [parrot, "You're welcome, safe travels!"])
    assert len(model.received) == 2 and "repeats guidance" in model.received[1][-1].text
    assert result["messages"][-1].text == "You're welcome, safe travels!"
    record = result["messages"][-1].response_metadata[ANSWER_REMINDER_METADATA_KEY]
    assert record["reason"] == "repeated guidance" and record["draft"] == parrot


def test_the_block_repeated_on_small_talk_pushes_no_tool(bank):
    # Protocol v21: 4 small-talk replies were the block; the note asked to "call the tools it needs".
    parrot = '<skill name="great-help-no-tools">No tool needed.</skill>'
    result, model = _small_talk_run(bank, [parrot, "You're welcome, safe travels!"])
    note = model.received[1][-1].text
    assert "repeats the skills block" in note and "tool" not in note.replace("skills block", "")
    assert result["messages"][-1].text == "You're welcome, safe travels!"


@pytest.mark.parametrize("reply", [
    "You're welcome, safe travels!",
    "Cheers, that was a great help for me too!",             # the user's own words: not the block's
    "Thank you! No tool is needed for a thank-you, and I am glad the trains worked out for you today.",
])
def test_a_reply_in_its_own_words_stands(bank, reply):
    result, model = _small_talk_run(bank, [reply])
    assert len(model.received) == 1 and result["messages"][-1].text == reply
