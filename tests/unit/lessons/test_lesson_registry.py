"""Lesson kinds as plug-ins: one class per kind with only its own fields, one registry.

The last tests add kinds from this file alone (a class, sentence, section and call check; a
limit learner that evolution writes guards with; a contrast learner that evolution learns from
successes and failures, with an answer check that asks a reply again), the way a new kind is
added to the library: one module and its registry line.
"""

from __future__ import annotations

import json
from typing import Literal

import pytest
from pydantic import ValidationError

from skillbank.lessons import (KINDS, Budget, CallCheck, CheckFirst, Guidance, KindSpec, Lesson, LessonKind,
                               MethodStep, NoTool, Pitfall, STORED_FIELDS, parse_lesson, render_body, sentence,
                               spec_of)
from skillbank.lessons._registry import register
from skillbank.models import SkillContent


def test_every_kind_is_registered_with_its_own_class():
    assert set(KINDS) == {k.value for k in LessonKind}
    for name, spec in KINDS.items():
        assert spec.cls.model_fields["kind"].default == name
        assert spec.section  # every kind renders somewhere


def test_building_by_kind_gives_the_kinds_class():
    lesson = Lesson(kind="budget", budget=4)
    assert type(lesson) is Budget and lesson.budget == 4
    assert isinstance(lesson, Lesson)
    assert type(Lesson(kind=LessonKind.no_tool)) is NoTool


def test_a_field_the_kind_does_not_have_is_refused():
    with pytest.raises(ValidationError):
        Lesson(kind="no_tool", tool="search")
    with pytest.raises(ValidationError):
        Budget(budget=0)
    with pytest.raises(ValueError, match="check_first takes both"):
        CheckFirst(check="get_order")
    with pytest.raises(ValueError, match="unknown lesson kind 'nonsense'"):
        Lesson(kind="nonsense")


def test_the_stored_form_has_every_legacy_key_whatever_the_kind():
    stored = NoTool().model_dump(mode="json")
    assert set(stored) == {"kind", *STORED_FIELDS}
    assert stored["steps"] == [] and stored["tool"] is None
    # and it reads back as the same lesson (empty keys of other kinds are dropped, not refused)
    assert parse_lesson(stored) == NoTool()
    again = parse_lesson(json.loads(json.dumps(Budget(budget=3, tool="search").model_dump(mode="json"))))
    assert again == Budget(budget=3, tool="search")


def test_a_stored_lesson_with_a_value_its_kind_cannot_hold_is_refused():
    stored = {**NoTool().model_dump(mode="json"), "tool": "search"}
    with pytest.raises(ValidationError):
        parse_lesson(stored)


def test_a_field_no_kind_has_reads_as_empty_on_any_lesson():
    # Code that looks at any lesson's tool or steps needs no branch per kind.
    assert NoTool().tool is None and NoTool().steps == ()
    with pytest.raises(AttributeError):
        NoTool().no_such_field  # noqa: B018


def test_skill_content_keeps_each_lessons_class_through_json():
    content = SkillContent(name="refunds", description="When refunding.",
                           lessons=(CheckFirst(check="get_order", tool="refund"), Budget(budget=4)))
    again = SkillContent.model_validate(json.loads(content.model_dump_json()))
    assert [type(x) for x in again.lessons] == [CheckFirst, Budget]
    assert again.hash() == content.hash()


def test_rendering_loops_over_the_registry():
    body = render_body([Budget(budget=4), CheckFirst(check="get_order", tool="refund"),
                        Pitfall(avoid="repeat")])
    assert body.index("## Checks") < body.index("## Budget") < body.index("## Common mistakes")
    assert "Always call `get_order` before `refund`." in body


# -- a kind added from one module: this file -------------------------------------------------


class ConfirmFirst(Lesson):
    """Ask the user to confirm before calling ``tool``."""

    kind: Literal["confirm_first"] = "confirm_first"  # type: ignore[assignment]
    tool: str


def _confirm_sentence(lesson: ConfirmFirst) -> str:
    return f"Before calling `{lesson.tool}`, ask the user to confirm."


@pytest.fixture(scope="module")
def confirm_kind():
    spec = register(KindSpec(
        "confirm_first", ConfirmFirst, "Checks", _confirm_sentence, delivery="tool",
        call_check=CallCheck(scope=lambda lesson: "its_tool",
                             breaks=lambda lesson, call: not call.said.lower().startswith("yes"),
                             reminder=lambda lesson, call: f"`{call.tool}` was not run. Ask the user to confirm.")))
    yield spec
    KINDS.pop("confirm_first")


def test_a_new_kind_from_one_module_validates_renders_and_round_trips(confirm_kind):
    lesson = Lesson(kind="confirm_first", tool="delete_account")
    assert isinstance(lesson, ConfirmFirst)
    assert spec_of("confirm_first") is confirm_kind
    assert sentence(lesson) == "Before calling `delete_account`, ask the user to confirm."
    content = SkillContent(name="careful-deletes", description="When deleting.", lessons=(lesson, Guidance(text="Be kind.")))
    assert "## Checks\n- Before calling `delete_account`" in content.body
    again = SkillContent.model_validate(json.loads(content.model_dump_json()))
    assert again.lessons[0] == lesson and again.hash() == content.hash()


def test_a_new_kinds_call_check_holds_a_call_at_the_tool(confirm_kind):
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from skillbank import SkillBank
    from skillbank.adapters import SkillBankMiddleware
    from skillbank.adapters.testing import ScriptedChatModel, tool_call

    ran: list[dict] = []

    @tool
    def delete_account(account: str) -> str:
        """Delete an account."""
        ran.append({"account": account})
        return "deleted"

    import tempfile
    with tempfile.TemporaryDirectory() as tmp, SkillBank.open(tmp) as bank:
        bank.add_skill("careful-deletes", "When the user asks to delete an account.",
                       lessons=[ConfirmFirst(tool="delete_account")], tools=["delete_account"])
        model = ScriptedChatModel([tool_call("delete_account", account="a-1"), "I asked first."])
        agent = create_agent(model, [delete_account], middleware=[SkillBankMiddleware(bank, k=3)])
        result = agent.invoke({"messages": [("user", "delete the account a-1 please")]})
    assert ran == []  # held back: the lesson's own check, with no library code of its own
    texts = [m.text for m in result["messages"] if m.type == "tool"]
    assert texts == ["`delete_account` was not run. Ask the user to confirm."]


# -- a new kind that evolution learns from a limit, from this file alone ----------------------------
# A provider's rate limit teaches nothing today (no kind learns from the ``rate_limit`` family).
# Registering a kind whose limit learner lists that family is all it takes for evolution to write
# a guard of it: no line of evolution changes.


class BackOff(Lesson):
    kind: Literal["back_off"] = "back_off"  # type: ignore[assignment]
    tool: str


@pytest.fixture()
def back_off_kind():
    from skillbank.lessons import LimitLearner
    from skillbank.lessons._base import CLASSES

    spec = register(KindSpec(
        "back_off", BackOff, "When a tool is missing or falls short",
        lambda lesson: f"If `{lesson.tool}` is rate limited, wait a moment and retry once; then tell the user.",
        limit_learner=LimitLearner(
            families=("rate_limit",),
            lessons=lambda sit: [BackOff(tool=sit.tool or "")],
            name=lambda sit, tool, detail: ["back-off-when", tool, "is-rate-limited"],
            what_happened=lambda sit: f"`{sit.tool}` was rate limited",
            description=lambda sit, tool: f"When {tool} may answer that it is rate limited.")))
    yield spec
    KINDS.pop("back_off")
    CLASSES.pop("back_off")


def _rate_limited(i: int):
    from test_evolution_support import traj

    from skillbank.models import LimitEvent, LimitType
    return traj(f"Find flights to Lisbon for trip {i}.", [("search_flights", {"to": "Lisbon"}, None, "429 slow down")],
                success=False, answer="", task_id=f"t-{i}",
                limits=[LimitEvent(type=LimitType.rate_limit, step=1, detail="429 slow down", tool="search_flights")])


def _saved(bank) -> list:
    """Two runs that hit a rate limit on ``search_flights``, saved to ``bank``, as the round reads them."""
    from skillbank.evolution._evidence import to_run
    trajectories = [_rate_limited(i) for i in range(2)]
    for t in trajectories:
        bank.trajectories.save(t)
    return [to_run(t) for t in trajectories]


def test_a_limit_no_kind_learns_from_teaches_nothing(bank):
    from skillbank.evolution import evolve
    from skillbank.lessons import learner_of
    from skillbank.evolution._guards import situations
    assert learner_of("rate_limit") is None
    assert situations(_saved(bank)) == []
    assert [c for c in evolve(bank, distiller="rule", dry_run=True).changes if c.origin == "guard"] == []


def test_a_new_kinds_limit_learner_is_what_evolution_writes(bank, back_off_kind):
    from skillbank.evolution import evolve
    from skillbank.evolution._guards import guard_content, situations
    [sit] = situations(_saved(bank))
    content = guard_content(sit)
    assert content.name == "back-off-when-search-flights-is-rate-limited"
    assert content.description.startswith("When `search_flights` (search flights) may answer that it is rate limited.")
    assert content.lessons == (BackOff(tool="search_flights"),)
    assert "- If `search_flights` is rate limited, wait a moment and retry once" in content.body
    assert sit.describe() == "`search_flights` was rate limited in 2 failed run(s)"
    guards = [c for c in evolve(bank, distiller="rule", dry_run=True).changes if c.origin == "guard"]
    assert [(c.skill, c.reason) for c in guards] == [
        ("back-off-when-search-flights-is-rate-limited",
         "limit lesson: `search_flights` was rate limited in 2 failed run(s)")]


def test_two_kinds_cannot_learn_from_one_limit_family(back_off_kind):
    from skillbank.lessons import LimitLearner

    class Twice(Lesson):
        kind: Literal["twice"] = "twice"  # type: ignore[assignment]

    learner = LimitLearner(families=("rate_limit",), lessons=lambda sit: [Twice()], name=lambda sit, t, d: ["x"],
                           what_happened=lambda sit: "", description=lambda sit, tool: "")
    with pytest.raises(ValueError, match="learns from the limit family 'rate_limit', which lesson kind 'back_off'"):
        register(KindSpec("twice", Twice, "Checks", lambda lesson: "Twice.", limit_learner=learner))
    assert "twice" not in KINDS


# -- a new kind that evolution learns from successes and failures, from this file alone --------------
# The successes told the user the booking reference their tool returned; the failures did not.
# Registering a kind with a contrast learner is all it takes for a round to learn it, and with an
# answer check for a reply that leaves the reference out to be asked again: no line of evolution
# or of the adapters changes.


class GiveReference(Lesson):
    kind: Literal["give_reference"] = "give_reference"  # type: ignore[assignment]
    tool: str
    field: str


def _references(run) -> dict[tuple[str, str], str]:
    """``(tool, field)`` -> the reference a call of the run returned (a text field ``*_ref``)."""
    out: dict[tuple[str, str], str] = {}
    for call in run.calls:
        try:
            data = json.loads(call.result or "") if call.ok else None
        except ValueError:
            continue
        if isinstance(data, dict):
            out.update({(call.tool, k): v for k, v in data.items() if k.endswith("_ref") and isinstance(v, str)})
    return out


def _learn_references(ok, bad, min_support):
    from collections import Counter

    gave, left_out_ok, left_out_bad = Counter(), Counter(), Counter()
    for runs, success in ((ok, True), (bad, False)):
        for run in runs:
            for key, value in _references(run).items():
                if value in (run.answer or ""):
                    gave[key] += 1 if success else 0
                else:
                    (left_out_ok if success else left_out_bad)[key] += 1
    return [(GiveReference(tool=tool, field=field),
             f"{n} successes gave `{field}`; {left_out_bad[(tool, field)]} failed run(s) left it out")
            for (tool, field), n in sorted(gave.items())
            if n >= min_support and not left_out_ok[(tool, field)] and left_out_bad[(tool, field)]]


def _reference_left_out(lesson: GiveReference, answer) -> str | None:
    given = [json.loads(text).get(lesson.field) for text in answer.results(lesson.tool)]
    if any(isinstance(v, str) for v in given) and not any(isinstance(v, str) and v in answer.text for v in given):
        return (f"Your reply leaves out `{lesson.field}`, which `{lesson.tool}` returned. Answer the user again "
                "and give it.")  # the note asks; it never writes the answer
    return None


@pytest.fixture()
def reference_kind():
    from skillbank.lessons import AnswerCheck, ContrastLearner
    from skillbank.lessons._base import CLASSES

    spec = register(KindSpec(
        "give_reference", GiveReference, "Answer",
        lambda lesson: f"When `{lesson.tool}` returns `{lesson.field}`, give it to the user.",
        contrast_learner=ContrastLearner(learn=_learn_references),
        answer_checks=(AnswerCheck("reference left out", _reference_left_out),)))
    yield spec
    KINDS.pop("give_reference")
    CLASSES.pop("give_reference")


def _booking(i: int, *, success: bool):
    from test_evolution_support import traj

    ref = f"BK-{7100 + i}"
    calls = [("book_table", {"people": 2 + i % 3}, json.dumps({"booking_ref": ref, "people": 2 + i % 3}))]
    return traj(f"Book a table for {2 + i % 3} people tonight.", calls, success=success,
                answer=f"Booked: your reference is {ref}." if success else "Your table is booked.",
                task_id=f"book-{i}")


def _save_bookings(bank):
    for i in range(5):
        bank.trajectories.save(_booking(i, success=i < 3))


def test_no_kind_learns_what_the_successes_said_until_one_is_registered(bank):
    from skillbank.evolution import evolve
    _save_bookings(bank)
    assert [c for c in evolve(bank, distiller="rule", dry_run=True).changes if c.origin == "induce"] == []


def test_a_new_kinds_contrast_learner_is_what_evolution_learns(bank, reference_kind):
    from skillbank.evolution import evolve
    _save_bookings(bank)
    [change] = [c for c in evolve(bank, distiller="rule", promote_policy="all").changes if c.origin == "induce"]
    assert change.reason == "recurring mistakes: 3 successes gave `booking_ref`; 2 failed run(s) left it out"
    [skill] = [s for s in bank.list_skills() if s.name == change.skill]
    assert skill.content.lessons == (GiveReference(tool="book_table", field="booking_ref"),)
    assert "## Answer\n- When `book_table` returns `booking_ref`, give it to the user." in skill.body


def test_an_opt_in_learner_is_asked_only_when_the_round_asks_for_it(reference_kind):
    import dataclasses

    from skillbank.evolution._evidence import to_run
    from skillbank.evolution.rule import consensus, mistakes
    from skillbank.lessons import contrast_learners

    runs = [to_run(_booking(i, success=i < 3)) for i in range(5)]
    ok, bad = runs[:3], runs[3:]
    assert [x for x, _ in mistakes(ok, bad, consensus(ok)[0])] == [GiveReference(tool="book_table", field="booking_ref")]
    opt_in = dataclasses.replace(reference_kind.contrast_learner, opt_in=True)
    KINDS["give_reference"] = dataclasses.replace(reference_kind, contrast_learner=opt_in)
    assert opt_in not in contrast_learners() and opt_in in contrast_learners(opt_in=True)
    assert mistakes(ok, bad, consensus(ok)[0]) == []
    assert [x for x, _ in mistakes(ok, bad, consensus(ok)[0], stated_values=True)] == \
        [GiveReference(tool="book_table", field="booking_ref")]


def test_a_new_kinds_answer_check_asks_the_reply_again(bank, reference_kind):
    from langchain.agents import create_agent
    from langchain_core.tools import tool

    from skillbank.adapters import SkillBankMiddleware
    from skillbank.adapters._interventions import INTERVENTION_KEY
    from skillbank.adapters.testing import ScriptedChatModel, tool_call

    @tool
    def book_table(people: int) -> str:
        """Book a table."""
        return json.dumps({"booking_ref": "BK-7", "people": people})

    skill = bank.add_skill("table-bookings", "When the user asks to book a table.",
                           lessons=[GiveReference(tool="book_table", field="booking_ref")], tools=["book_table"])
    model = ScriptedChatModel([tool_call("book_table", people=2), "Your table is booked.",
                               "Booked: your reference is BK-7."])
    agent = create_agent(model, [book_table], middleware=[SkillBankMiddleware(bank, k=3, reminders=True)])
    result = agent.invoke({"messages": [("user", "Book a table for 2 people tonight.")]})
    assert result["messages"][-1].text == "Booked: your reference is BK-7."
    assert model.received[2][-1].text == ("Your reply leaves out `booking_ref`, which `book_table` returned. "
                                          "Answer the user again and give it.")
    meta = next(m for m in result["messages"] if INTERVENTION_KEY in m.response_metadata).response_metadata[
        INTERVENTION_KEY]
    assert (meta["reason"], meta["skill_id"], meta["tool"]) == ("reference left out", skill.id, "book_table")
