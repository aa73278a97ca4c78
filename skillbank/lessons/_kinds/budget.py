"""``budget``: finish within ``budget`` tool calls (``tool``: the one runs kept repeating).

Everything the library knows about the kind is here: its fields, its sentence, where it is
delivered, how a call breaks it (an identical call: its answer is already at hand), and how
evolution learns it from a budget limit (:data:`BUDGETS`, :func:`step_budget`).
"""

from __future__ import annotations

import statistics
from typing import Literal

from pydantic import Field

from skillbank.lessons._base import Lesson, LessonKind
from skillbank.lessons._learning import LimitLearner, LimitSituation
from skillbank.lessons._registry import CallCheck, KindSpec, kind_class, register
from skillbank.lessons._render import tool_ref
from skillbank.lessons._kinds._calls import already_answered

__all__ = ["Budget", "BUDGETS", "step_budget"]

BUDGETS: dict[str, str] = {
    "recursion_limit": "steps",
    "step_limit": "steps",
    "model_call_limit": "steps",
    "tool_call_limit": "steps",
    "token_budget": "tokens",
    "context_overflow": "tokens",
    "time_budget": "time",
}
"""The budget each budget limit type (a ``LimitType`` value) counts against; evolution groups the
hits of one budget into one situation of the family ``"budget:<budget>"``."""

# What a budget other than steps teaches besides the number of calls.
_GUIDANCE = {
    "tokens": "Request only the fields you need and summarise long tool outputs instead of quoting them.",
    "time": "Prefer one broad call over many narrow ones; do not wait on slow calls that are not needed "
            "for the answer.",
}


class Budget(Lesson):
    """Finish within ``budget`` tool calls; ``tool`` is the one runs kept repeating, if any."""

    kind: Literal[LessonKind.budget] = LessonKind.budget
    budget: int = Field(ge=1)
    tool: str | None = None


def sentence(lesson: Budget) -> str:
    text = (f"Finish within {lesson.budget} tool calls: never repeat a call with the same arguments, "
            "and answer as soon as the needed facts are known.")
    if lesson.tool:
        text += (f" Do not keep calling {tool_ref(lesson.tool)}: if two calls did not find it, a third will "
                 "not; answer with what is known and say what is still missing.")
    return text


def step_budget(sit: LimitSituation, near_share: float = 0.8) -> int:
    """The tool-call budget to advise for a budget situation: below the known limit, and room for
    what successes needed.

    Successes that came close to the limit are evidence that the budget is tight, not a model
    of how many calls to make, so the comfortable successes set the number when there are any.

    Args:
        sit: a situation of a ``"budget:..."`` family.
        near_share: the share of the limit from which a success counts as close to it.

    Returns:
        At least 1 (at least 2 when only failures, without a limit, set it).
    """
    hit_type = sit.hit_type or "tool_call_limit"
    # A token or time limit is not a number of calls: only the runs' own calls can set it.
    limit = sit.limit if BUDGETS.get(hit_type) == "steps" else None
    ok = [len(r.calls) for r in sit.successes if r.calls]
    if limit is not None:
        # The most tool calls the limit allows: all of them for a tool-call limit; one model
        # call must be left for the answer under a model-call limit; a graph step limit counts
        # a model step and a tool step per call.
        if hit_type in ("recursion_limit", "step_limit"):
            cap = (limit - 1) // 2
        elif hit_type == "model_call_limit":
            cap = limit - 1
        else:
            cap = limit
        cap = max(1, cap)
        comfortable = [n for n in ok if n < near_share * limit]
        return max(1, min(cap, max(comfortable))) if comfortable else cap
    if ok:
        return max(1, max(ok))
    distinct_failed = [len({c.key for c in r.calls}) for r in sit.failures]
    return max(2, int(statistics.median(distinct_failed)) if distinct_failed else 2)


def _budget(sit: LimitSituation) -> str:
    return sit.family.split(":", 1)[1]


def lessons(sit: LimitSituation) -> list[Lesson]:
    taught: list[Lesson] = [Budget(budget=step_budget(sit), tool=sit.tool)]
    advice = _GUIDANCE.get(_budget(sit))
    if advice:
        taught.append(kind_class(LessonKind.guidance).model_validate({"text": advice}))
    return taught


# Only a call identical to one already run is held back: its answer is truly at hand. A new call
# past the budget runs (it may be the very action the user asked for).
SPEC = register(KindSpec(
    LessonKind.budget, Budget, "Budget", sentence, delivery="tool",
    call_check=CallCheck(scope=lambda lesson: "any_tool", breaks=lambda lesson, call: call.ran_before(),
                         reminder=lambda lesson, call: already_answered(call)),
    limit_learner=LimitLearner(
        families=tuple(f"budget:{b}" for b in dict.fromkeys(BUDGETS.values())),
        lessons=lessons,
        name=lambda sit, tool, detail: [f"finish-within-{_budget(sit)}-budget",
                                        *(["stop-repeating", tool] if tool else [])],
        what_happened=lambda sit: (f"the {_budget(sit)} budget ran out"
                                   + (f" while repeating `{sit.tool}`" if sit.tool else "")),
        description=lambda sit, tool: (f"When a task risks running out of its {_budget(sit)} budget"
                                       + (f", especially by repeating {tool}" if sit.tool else "") + "."))))
