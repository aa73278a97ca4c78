"""General lessons: the general directive forms, how the simulated policy reads them, asking
first as a learned lesson, the generalisation step of a round, and general skills injected on
every turn."""

from __future__ import annotations

import pytest
from langchain_core.messages import HumanMessage

from conftest import ask_for, budget, check_first, missing_parameter, missing_tool, order, unknown_field

from skillbank_harness.envs import directives as dx
from skillbank_harness.envs.guidance import read
from skillbank.adapters.config import InjectionConfig
from skillbank.adapters.injection import SkillInjector
from skillbank.consistency.validation import CandidateView
from skillbank_harness.envs import SimulatedPolicy, run_task
from skillbank.evolution import EvolutionConfig, evolve
from skillbank.evolution._batch import load_batch
from skillbank.evolution._evidence import build_run, to_run
from skillbank.evolution._general import general_proposals
from skillbank.evolution.rule import RuleDistiller, mistakes
from skillbank.lessons import general_form, sentence
from skillbank.models import LimitEvent, SkillStatus, Step
from test_envs_policy import _rate, _task
from test_evolution_support import refund, traj, utcnow, window

GENERAL = [check_first(), missing_tool(), missing_parameter(), ask_for(), unknown_field()]
SPECIFIC = [check_first("a", "b"), missing_tool("x"), missing_parameter("t", "p"), ask_for("p", "t"),
            ask_for(None, "t"), unknown_field("t", "f")]


# -- general lessons: data, rendering, and the simulator reading them back ------------------------


def test_general_and_tool_level_forms_render_and_the_simulator_reads_them_back():
    # One lesson a line, as a skill body renders them; no tool schemas, so roles go by position.
    text = "\n".join(sentence(x) for x in GENERAL + SPECIFIC)
    assert read(text) == [dx.CheckFirst(None, None), dx.Unavailable(None), dx.NoParam(None, None),
                              dx.AskFor(None, None), dx.UnknownField(None, None),
                              dx.CheckFirst("a", "b"), dx.Unavailable("x"), dx.NoParam("t", "p"),
                              dx.AskFor("p", "t"), dx.AskFor(None, "t"), dx.UnknownField("t", "f")]
    assert [x.general for x in GENERAL + SPECIFIC] == [True] * 5 + [False] * 6
    assert "`" not in " ".join(sentence(x) for x in GENERAL)  # names no tool
    assert all(general_form(x) == y for x, y in zip(SPECIFIC, [check_first(), missing_tool(),
                                                                missing_parameter(), ask_for(), ask_for(),
                                                                unknown_field()]))


@pytest.mark.parametrize("make", [lambda: check_first("a", None), lambda: ask_for("p", None),
                                  lambda: unknown_field(None, "f"), lambda: missing_parameter("t", None)])
def test_half_general_lessons_are_refused(make):
    with pytest.raises(ValueError):
        make()


def test_a_general_lesson_covers_every_tool_and_a_specific_one_only_its_own():
    assert missing_tool().covers(missing_tool("open_window")) and missing_tool().covers(missing_tool("book_room"))
    assert missing_tool("open_window").covers(missing_tool("open_window"))
    assert not missing_tool("open_window").covers(missing_tool("book_room"))
    assert not missing_tool().covers(unknown_field("t", "f"))
    # ... and so does the simulator's reading of them
    assert dx.Unavailable(None).covers("open_window") and not dx.Unavailable("open_window").covers("book_room")
    assert dx.AskFor(None, "cancel_order").covers("cancel_order", "order_id")
    assert not dx.AskFor(None, "cancel_order").covers("issue_refund", "order_id")
    assert dx.CheckFirst(None, None).covers("get_order", "cancel_order")


# -- the simulated policy reads the general forms as the specific one for every tool ----------------


def test_general_unavailable_declines_and_names_a_tool_never_named_in_a_skill():
    """The general lesson stops the call and makes it name the missing tool -- by the name it
    gives it itself, which passes only where that is the real name (``open_window``; it calls
    the missing refund tool ``refund_order``, the environment ``issue_refund``)."""
    reckless = SimulatedPolicy(p_call_unavailable=1.0, p_name_blocker=0.0, p_skip_check=0.0,
                               p_wander=0.0, adherence=1.0, p_misread=0.0, p_misreport=0.0,
                               p_stop_early=0.0)
    for template, own_name, real in [("car.capability.window_missing", "open_window", True),
                                     ("retail.capability.refund_missing", "refund_order", False)]:
        task = _task(template)
        assert not run_task(task, reckless).success
        good = run_task(task, reckless, skills=[missing_tool()])
        called = [tc["name"] for m in good.messages for tc in getattr(m, "tool_calls", None) or []]
        assert own_name not in called and f"`{own_name}`" in good.final_answer
        assert good.success == real


def test_general_check_first_runs_every_check_a_description_asks_for():
    always_skips = SimulatedPolicy(p_skip_check=1.0, adherence=1.0)
    for template in ("retail.base.cancel", "car.base.climate"):
        tasks = [(_task(template, instance=i, seed=3), i) for i in range(6)]
        assert _rate(tasks, always_skips) == 0.0
        assert _rate(tasks, always_skips, lambda t: [check_first()]) == 1.0


def test_general_and_tool_level_ask_make_it_ask_only_where_they_apply():
    guesser = SimulatedPolicy(p_guess_missing=1.0, p_skip_check=0.0, p_wander=0.0, adherence=1.0)
    task = _task("retail.disambiguation.cancel_which")
    assert not run_task(task, guesser).success
    for skills in ([ask_for()], [ask_for(None, "cancel_order")]):
        asked = run_task(task, guesser, skills=skills)
        assert asked.success and len(asked.env.asks()) == 1
    # A tool-level lesson about another tool changes nothing.
    assert not run_task(task, guesser, skills=[ask_for(None, "issue_refund")]).success


def test_general_unknown_field_says_unknown_instead_of_inventing():
    inventor = SimulatedPolicy(p_guess_missing=1.0, p_name_blocker=0.0, p_skip_check=0.0,
                               p_wander=0.0, adherence=1.0)
    task = _task("car.capability.range_unknown")
    assert not run_task(task, inventor).success
    good = run_task(task, inventor, skills=[unknown_field()])
    assert good.success and "range_km" in good.final_answer


# -- asking the user, in the agent-visible record ----------------------------------------------------


def _asking_traj(i: int, *, asks: bool, success: bool):
    """A disambiguation run: the user has two orders; the agent asks which one, or guesses."""
    order = f"{5100 + i}"
    t = traj("Please cancel my order.", [("list_orders", {}, f'{{"orders": ["{order}", "{order}1"]}}'),
                                          ("cancel_order", {"order_id": order}, "cancelled")],
             success=success, task_id=f"cancel-which-{i:03d}")
    if asks:  # a question between the lookup and the action, answered by the user
        t.steps.insert(2, Step(index=2, kind="model", started_at=t.started_at,
                               content="Which order should I cancel?"))
        for n, step in enumerate(t.steps):
            step.index = n
    return t


def test_runs_know_when_the_agent_asked_first_from_either_loader(bank):
    asked, guessed = _asking_traj(0, asks=True, success=True), _asking_traj(1, asks=False, success=False)
    for t in (asked, guessed):
        bank.trajectories.save(t)
    loaded = {r.id: r for r in load_batch(bank).runs}
    for t in (asked, guessed):
        assert loaded[t.id].questions == to_run(t).questions
    assert loaded[asked.id].asked_before("cancel_order") and not loaded[asked.id].asked_before("list_orders")
    assert not loaded[guessed.id].asked_before("cancel_order")
    # A final answer that ends in a question mark but also calls a tool is not a question.
    run = build_run(id="r", task="t", success=True, answer=None, started_at=utcnow(), limits=(),
                    injections=(), steps=[{"index": 0, "kind": "model", "asks": False},
                                          {"index": 1, "kind": "tool", "tool": "x", "args": {}}])
    assert run.questions == ()


def test_contrast_learns_to_ask_before_the_action_the_failures_guessed_at(bank):
    ok = [to_run(_asking_traj(i, asks=True, success=True)) for i in range(4)]
    bad = [to_run(_asking_traj(10 + i, asks=False, success=False)) for i in range(3)]
    method = ok[0].method
    lessons = [lesson for lesson, _ in mistakes(ok, bad, method)]
    assert ask_for(None, "cancel_order") in lessons
    # Successes that did not ask either: nothing to learn about asking.
    plain = [to_run(_asking_traj(20 + i, asks=False, success=True)) for i in range(4)]
    assert not any(x.kind.value == "ask_for" for x, _ in mistakes(plain, bad, method))


def test_a_one_tool_method_with_recurring_mistakes_becomes_a_pitfall_skill():
    def run(i, asks, success):
        t = traj("Open the window, please.", [("open_window", {"window": "driver"}, "opened")],
                 success=success, task_id=f"w-{i}")
        if asks:
            t.steps.insert(0, Step(index=0, kind="model", started_at=t.started_at,
                                   content="Which window should I open?"))
            for n, step in enumerate(t.steps):
                step.index = n
        return to_run(t)

    ok, bad = [run(i, True, True) for i in range(3)], [run(9 + i, False, False) for i in range(3)]
    config = EvolutionConfig()
    assert RuleDistiller().procedure(ok, bad, config)[0] is None  # one tool: no procedure
    content, support, why = RuleDistiller().pitfalls(ok, bad, config)
    assert content.kind.value == "pitfall" and content.tools == ("open_window",)
    assert content.lessons == (ask_for(None, "open_window"),)
    # The tool is named as the one to call with care, never as one to avoid.
    assert content.description.endswith("; mistakes to avoid when calling `open_window`.")
    assert "without asking" in why and len(support) == 3
    assert RuleDistiller().pitfalls(ok, [], config)[0] is None  # no failures: nothing to contrast


# -- generalisation -----------------------------------------------------------------------------------


def test_a_lesson_for_two_tools_becomes_one_general_proposal():
    one, two = [missing_tool("open_window")], [missing_tool("book_room")]
    assert general_proposals([(one, ["a", "b"])], [], min_tools=2) == []
    [prop] = general_proposals([(one, ["a", "b"]), (two, ["c"]), (one, ["d"])], [], min_tools=2)
    assert prop.origin == "generalise" and prop.content.tools == ()
    assert "general" in prop.content.tags and prop.content.lessons == (missing_tool(),)
    assert prop.evidence == ("c", "a", "b", "d")  # alternating tools: book_room, open_window
    assert "book_room, open_window" in prop.reason
    # Already in the bank, or switched off: nothing.
    assert general_proposals([(one, []), (two, [])], [missing_tool()], min_tools=2) == []
    # Each kind generalises on its own, and procedures and budgets never do.
    lessons = [check_first("get_order", "cancel_order"), check_first("get_route", "start_navigation"),
               order("a", "b"), budget(3)]
    [prop] = general_proposals([(lessons, ["x"]), ([order("c", "d")], ["y"])], [], 2)
    assert prop.content.lessons == (check_first(),)


def test_a_persons_structured_lessons_generalise_like_learned_ones(bank):
    for tool in ("open_window", "book_room"):
        bank.add_skill(name=f"no-{tool.replace('_', '-')}", description=f"When {tool} is missing",
                       lessons=[missing_tool(tool)], kind="guard", tools=[tool], author="human")
    bank.trajectories.save(window(0))
    report = evolve(bank, dry_run=True)
    assert [c.skill for c in report.changes if c.origin == "generalise"] == ["when-a-needed-tool-is-unavailable"]


def _room(i: int):
    t = traj(f"Book a room for the {i % 3 + 2} o'clock sync.", [("book_room", {}, None, "Tool book_room is not available.")],
             success=False, answer="Booked.", task_id=f"room-{i:03d}",
             limits=[LimitEvent(type="missing_tool", step=1, detail="book_room is not among the tools",
                                tool="book_room")])
    return t


def test_a_round_proposes_the_general_guard_once_two_tools_were_missing(bank):
    for t in [window(0), window(1), _room(0), _room(1)]:
        bank.trajectories.save(t)
    report = evolve(bank, dry_run=True)
    general = [c for c in report.changes if c.origin == "generalise"]
    assert [c.skill for c in general] == ["when-a-needed-tool-is-unavailable"]
    assert "book_room, open_window" in general[0].reason and len(general[0].evidence) == 4
    off = evolve(bank, dry_run=True, min_general_tools=0)
    assert not [c for c in off.changes if c.origin == "generalise"]
    # Written for real, it waits as a candidate; once active it is not proposed again.
    report = evolve(bank)
    skill = bank.get_skill("when-a-needed-tool-is-unavailable")
    assert skill.status == SkillStatus.candidate
    bank.activate(skill.id)
    window_skill = bank.get_skill("when-open-window-is-unavailable")
    bank.activate(window_skill.id)
    bank.trajectories.save(window(2, skill=window_skill))
    bank.trajectories.save(_room(2))
    assert not [c for c in evolve(bank, dry_run=True).changes if c.origin == "generalise"]


# -- general skills are injected on every turn ------------------------------------------------------


def _general_bank(bank):
    [prop] = general_proposals([([missing_tool("a")], []), ([missing_tool("b")], [])], [], min_tools=2)
    general = bank.add_skill(**prop.content.model_dump(exclude={"body"}), status="active")
    specific = bank.add_skill(name="refund-orders", description="Refund a customer's damaged order",
                              body="Look the order up, then refund it.", kind="procedure",
                              tools=["find_order", "issue_refund"], status="active")
    return general, specific


def test_general_skills_go_into_every_turn_whatever_the_query(bank):
    general, specific = _general_bank(bank)
    for query in ("Refund my damaged order", "What is the weather in Lisbon?"):
        messages = [HumanMessage(content=query)]
        hits = SkillInjector(bank, k=1).inject(messages).hits
        assert hits[0].skill.id == general.id and hits[0].score == 1.0
        assert [h.skill.id for h in hits].count(general.id) == 1  # not retrieved a second time
    off = SkillInjector(bank, InjectionConfig(k=1, general_k=0)).inject(
        [HumanMessage(content="Refund my damaged order")])
    assert [h.skill.id for h in off.hits] == [specific.id]
    # Filters apply to general skills too, and the token budget bounds them.
    assert not SkillInjector(bank, InjectionConfig(k=0, kinds=["procedure"])).inject([HumanMessage(content="x")]).hits
    assert not SkillInjector(bank, InjectionConfig(k=0, token_budget=20)).inject([HumanMessage(content="x")]).hits
    # Retired: gone from the next turn.
    injector = SkillInjector(bank, k=0)
    assert injector.inject([HumanMessage(content="x")]).hits
    bank.retire(general.id, reason="no longer wanted")
    assert not injector.inject([HumanMessage(content="x")]).hits


def test_the_gate_sees_a_general_candidate_as_it_would_be_injected(bank):
    _, specific = _general_bank(bank)
    [prop] = general_proposals([([ask_for(None, "a")], []), ([ask_for(None, "b")], [])], [], min_tools=2)
    candidate = bank.add_skill(**prop.content.model_dump(exclude={"body"}), status="candidate")
    view = CandidateView(bank, candidate)
    names = [s.name for s in view.general_skills()]
    assert names == ["when-a-needed-tool-is-unavailable", "ask-instead-of-guessing"]
    hits = SkillInjector(view, k=0).inject([HumanMessage(content="Refund my order")]).hits
    assert {h.skill.name for h in hits} == set(names)
    assert candidate.name not in [s.name for s in bank.general_skills()]  # the bank itself is unchanged


def test_a_general_skill_is_not_revised_with_tool_specific_mistakes(bank):
    general, _ = _general_bank(bank)
    plain = bank.add_skill(name="refund-notes", description="Refunding orders",
                           body="Refund the order.", kind="procedure",
                           tools=["find_order", "check_refund_policy", "issue_refund"])
    for i in range(6):  # both skills were injected; the failures skipped the policy check
        for skill in (general, plain):
            bank.trajectories.save(refund(i, success=i % 2 == 0, skip_check=i % 2 == 1, skill=skill))
    report = evolve(bank, dry_run=True)
    assert general.name not in {c.skill for c in report.changes}
    assert plain.name in {c.skill for c in report.changes if c.kind == "update"}
