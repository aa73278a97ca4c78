"""Limit-aware lessons: limit events become guard skills, one per limit type and situation.

A *situation* is what the lesson is about:

- capability limits: the limit type plus the tool and, where recorded, the field or parameter
  (``missing_tool`` of ``open_window``; ``missing_parameter`` ``fan_speed`` of ``set_climate``;
  ``unknown_field`` ``eta`` of ``track_order``);
- a call to a name that is not among the run's tools is a missing tool only when no tool of the
  toolset fits it (``toolnames``): ``add_event`` where ``create_event`` is offered is a
  ``wrong_tool_name`` of ``create_event`` (the lesson names the right tool, never the invented
  one), and a skill's name called as a tool is no lesson at all;
- a refusal or error that names another tool of the toolset ("refused by policy: call
  ``get_room_status`` for it first") is a check before the refused tool (``check_first``), not a
  generic error to retry;
- budget limits (steps, model or tool calls, recursion, tokens, time): the budget family plus
  the tool the run kept repeating, if any (the usual way a budget is burnt).

Evidence is the failures that hit the limit, plus successes that hit it too (the agent coped) or,
for budgets, came within ``near_share`` of a known budget. Provider rate limits are not a lesson
for the agent and are ignored.

What a guard teaches is lessons (``skillbank.lessons``), rendered like every other skill's.
"""

from __future__ import annotations

import re
import statistics
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from skillbank.evolution.evidence import Run, literal_tokens
from skillbank.evolution.methods import leaves
from skillbank.evolution.naming import fit_name
from skillbank.evolution.templates import common_pattern, describable
from skillbank.toolnames import fitting_tool, is_skill_name
from skillbank.lessons import (AskFor, Budget, CheckFirst, Guidance, Lesson, MissingParameter, MissingTool, Policy,
                               ToolError, UnknownField, WrongToolName)
from skillbank.models import LimitType, SkillContent, SkillKind

BUDGET_FAMILY = {
    LimitType.recursion_limit: "steps",
    LimitType.step_limit: "steps",
    LimitType.model_call_limit: "steps",
    LimitType.tool_call_limit: "steps",
    LimitType.token_budget: "tokens",
    LimitType.context_overflow: "tokens",
    LimitType.time_budget: "time",
}
IGNORED = {LimitType.rate_limit}


def slug(text: str, limit: int = 24) -> str:
    s = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "-", text or "")
    s = re.sub(r"[^a-z0-9]+", "-", s.lower()).strip("-")
    return s[:limit].strip("-") or "x"


@dataclass
class Situation:
    family: str  # a capability limit type's value, or "budget:steps" / "budget:tokens" / "budget:time"
    tool: str | None
    detail: str | None  # the field (unknown_field) or parameter (missing_parameter, invalid_tool_args)
    types: Counter = field(default_factory=Counter)
    failures: list[Run] = field(default_factory=list)
    successes: list[Run] = field(default_factory=list)  # coped with the limit, or came close
    limits: list[int] = field(default_factory=list)
    called: set[str] = field(default_factory=set)  # wrong_tool_name: the names runs called instead

    @property
    def key(self) -> tuple[str, str | None, str | None]:
        return self.family, self.tool, self.detail

    @property
    def is_budget(self) -> bool:
        return self.family.startswith("budget:")

    @property
    def evidence(self) -> tuple[str, ...]:
        return tuple(dict.fromkeys(r.id for r in self.failures + self.successes))

    @property
    def support(self) -> int:
        return len(self.evidence)

    @property
    def limit(self) -> int | None:
        return min(self.limits) if self.limits else None

    def describe(self) -> str:
        what = {"missing_tool": f"`{self.tool}` was unavailable",
                "missing_parameter": f"`{self.tool}` has no "
                + (f"`{self.detail}` parameter" if self.detail else "parameter for an argument given"),
                "unknown_field": f"`{self.tool}` returned `{self.detail}` as unknown",
                "invalid_tool_args": f"`{self.tool}` could not take the arguments given"
                + (f" (`{self.detail}`)" if self.detail else ""),
                "tool_error": f"`{self.tool}` returned errors",
                "policy_refusal": f"a policy refused `{self.tool}`" if self.tool else "a policy refused the request",
                "check_first": f"`{self.tool}` was refused with a message naming `{self.detail}` to call first",
                "wrong_tool_name": f"`{self.tool}` was called by another name ("
                                   + ", ".join(f"`{c}`" for c in sorted(self.called)) + ")",
                }.get(self.family)
        if what is None:
            budget = self.family.split(":", 1)[1]
            what = f"the {budget} budget ran out" + (f" while repeating `{self.tool}`" if self.tool else "")
        # Separators keep a count ("3,532 runs") from reading as a literal id to the linter.
        near = f", {len(self.successes):,} success(es) that coped or came close" if self.successes else ""
        return f"{what} in {len(self.failures):,} failed run(s){near}"


def _most_repeated(run: Run) -> str | None:
    """The tool a run kept calling, for "do not keep calling it" — never the only tool an agent
    has (``act(command)``, a shell): there every action is a call of it, and the lesson would
    tell the agent to stop acting. Such an agent's budget lesson is about identical calls."""
    counts = Counter(run.tools)
    if not counts:
        return None
    tool, n = counts.most_common(1)[0]
    only_tool = len(run.toolset) == 1  # unknown (not recorded): the old reading
    return tool if n >= 2 and not only_tool else None


def _budget_usage(run: Run, hit_type: LimitType) -> int | None:
    """How much of a budget of ``hit_type`` the run used, in that budget's unit (``None``:
    not recorded per run, as for time or a per-call context window)."""
    if hit_type == LimitType.model_call_limit:
        return run.model_turns
    if hit_type in (LimitType.recursion_limit, LimitType.step_limit):
        return run.model_turns + len(run.calls)
    if hit_type == LimitType.token_budget:
        return run.tokens
    if hit_type in (LimitType.time_budget, LimitType.context_overflow):
        return None
    return len(run.calls)


# LangGraph's ToolNode lists the tools it has when a call names another: "Error: x is not a
# valid tool, try one of [a, b]." (the toolset of a run recorded without the tools offered).
_VALID_TOOLS = re.compile(r"try one of \[([^\]]*)\]")


def _toolset(run: Run, detail: str) -> tuple[str, ...]:
    if run.toolset:
        return run.toolset
    m = _VALID_TOOLS.search(detail or "")
    return tuple(t.strip(" '\"`") for t in m.group(1).split(",") if t.strip(" '\"`")) if m else ()


def _invented(run: Run, hit, skill_names: set[str], known_args: dict[str, set[str]]) -> tuple[str, str | None] | None:
    """How a ``missing_tool`` hit reads once the run's toolset is known: ``("skill", None)`` for a
    skill's name called as a tool, ``("wrong_tool_name", tool)`` when a tool of the toolset fits
    the called name, ``None`` when the hit stays a missing tool."""
    if is_skill_name(hit.tool, skill_names):
        return "skill", None
    toolset = _toolset(run, hit.detail)
    if not toolset or hit.tool in toolset:
        return None  # nothing to compare with: the limit is what the adapter recorded
    args = next((set(c.args) for c in run.calls if c.tool == hit.tool), set())
    fit = fitting_tool(hit.tool, run.task, toolset, known_args, args)
    return ("wrong_tool_name", fit) if fit else None


_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_.\-]*")


def _failed_call(run: Run, hit):
    """The call ``hit`` is about: the one at its step, else the last call of its tool."""
    return next((c for c in run.calls if c.step == hit.step and c.tool == hit.tool), None) \
        or next((c for c in reversed(run.calls) if c.tool == hit.tool), None)


# Errors that a call's values can cause. A failure of a call whose every value was made up says
# nothing about the tool: the model called it with an id or a city from nowhere.
_VALUE_ERRORS = (LimitType.tool_error, LimitType.invalid_tool_args)


def _made_up(run: Run, hit) -> bool:
    """Whether the call ``hit`` failed on was given values and none of them came from anywhere:
    no token of any value is in the request or in a result an earlier call returned.

    A call with made-up values on small talk (``set_pickup_time(order_id="12345")`` on "Thanks,
    have a nice day!") fails for calling at all, which the no-tool lesson teaches; a guard
    ("if `set_pickup_time` returns an error, retry ...") would cost real requests their call.
    A value converted from the request's words ("half past six" as ``06:30``) also shares no
    token with it: a call made only of such values teaches no guard either.
    """
    call = _failed_call(run, hit)
    if call is None:
        return False
    given = {t for leaf in leaves(call.args) if leaf is not None and not isinstance(leaf, bool)
             for t in literal_tokens(str(leaf))}
    if not given:
        return False
    known = set(literal_tokens(run.task))
    for earlier in run.calls:
        if earlier.step < call.step and earlier.result:
            known.update(literal_tokens(earlier.result))
    return not (given & known)


def _named_prerequisite(run: Run, hit) -> str | None:
    """The tool a refusal or error of ``hit.tool`` names as the one to call first: another tool
    of the run's toolset (or, without a recorded toolset, one the run called), the first the
    message names."""
    call = _failed_call(run, hit)
    text = " ".join(t for t in (call.error, call.result) if t) if call else ""
    text = f"{text} {hit.detail}"
    tools = set(_toolset(run, "") or run.tools) - {hit.tool}
    # Named as the thing to do ("call x", "use x", "x first"), not merely mentioned.
    return next((w for w in _NAME.findall(text) if w in tools and re.search(
        rf"\b(?:call|calling|use|using|run|running|invoke|via|after)\s+[`'\"]?{re.escape(w)}\b"
        rf"|\b{re.escape(w)}[`'\"]?(?:\s+\w+){{0,4}}\s+first\b", text, re.I)), None)


def situations(runs: list[Run], *, near_share: float = 0.8,
               skill_names: Iterable[str] = ()) -> list[Situation]:
    """Group the limit events of ``runs`` into situations (see the module docstring);
    ``skill_names`` are the bank's skills, which a model may call as if they were tools."""
    found: dict[tuple, Situation] = {}
    skill_names = set(skill_names)
    known_args: dict[str, set[str]] = defaultdict(set)
    for run in runs:
        for call in run.calls:
            if call.ok:
                known_args[call.tool].update(call.args)

    def get(family: str, tool: str | None, detail: str | None) -> Situation:
        key = (family, tool, detail)
        if key not in found:
            found[key] = Situation(family, tool, detail)
        return found[key]

    budget_types: dict[tuple, set[LimitType]] = defaultdict(set)
    for run in runs:
        if run.suspect:
            continue
        seen: set[tuple] = set()
        for hit in run.limits:
            if hit.type in IGNORED:
                continue
            if hit.type in BUDGET_FAMILY:
                sit = get("budget:" + BUDGET_FAMILY[hit.type], _most_repeated(run), None)
                budget_types[sit.key].add(hit.type)
                if hit.limit:
                    sit.limits.append(hit.limit)
            elif hit.type == LimitType.missing_tool and hit.tool and (
                    read := _invented(run, hit, skill_names, known_args)) is not None:
                family, fit = read
                if fit is None:
                    continue  # a skill's name is not a tool: no guard about it
                sit = get(family, fit, None)
                sit.called.add(hit.tool)
            elif hit.type in (LimitType.policy_refusal, LimitType.tool_error) and hit.tool and (
                    check := _named_prerequisite(run, hit)):
                sit = get("check_first", hit.tool, check)
            elif hit.type in _VALUE_ERRORS and _made_up(run, hit):
                continue  # the failure is the call itself, not the tool (see _made_up)
            else:
                detail = hit.field if hit.type == LimitType.unknown_field else (
                    hit.param if hit.type in (LimitType.invalid_tool_args, LimitType.missing_parameter)
                    else None)
                if hit.tool is None and hit.type != LimitType.policy_refusal:
                    continue
                sit = get(hit.type.value, hit.tool, detail)
            sit.types[hit.type] += 1
            if sit.key in seen:
                continue
            seen.add(sit.key)
            (sit.successes if run.success else sit.failures).append(run)
    # Successes that came close to a known budget count as evidence for that budget's lesson.
    for sit in list(found.values()):
        limit = sit.limit
        if not sit.is_budget or limit is None:
            continue
        hit_type = sit.types.most_common(1)[0][0]
        have = set(sit.evidence)
        for run in runs:
            if not run.success or run.suspect or run.id in have:
                continue
            used = _budget_usage(run, hit_type)
            if used is not None and used >= near_share * limit and (sit.tool is None or sit.tool in run.tools):
                sit.successes.append(run)
    return [s for s in found.values() if s.failures or (s.is_budget and s.successes)]


def step_budget(sit: Situation, near_share: float = 0.8) -> int:
    """The tool-call budget to advise: below the known limit, and room for what successes needed.

    Successes that came close to the limit are evidence that the budget is tight, not a model
    of how many calls to make, so the comfortable successes set the number when there are any.
    """
    hit_type = sit.types.most_common(1)[0][0] if sit.types else LimitType.tool_call_limit
    # A token or time limit is not a number of calls: only the runs' own calls can set it.
    limit = sit.limit if BUDGET_FAMILY.get(hit_type) == "steps" else None
    ok = [len(r.calls) for r in sit.successes if r.calls]
    if limit is not None:
        # The most tool calls the limit allows: all of them for a tool-call limit; one model
        # call must be left for the answer under a model-call limit; a graph step limit counts
        # a model step and a tool step per call.
        if hit_type in (LimitType.recursion_limit, LimitType.step_limit):
            cap = (limit - 1) // 2
        elif hit_type == LimitType.model_call_limit:
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


def situation_lessons(sit: Situation) -> list[Lesson]:
    """What a situation teaches, as lessons (the guard's whole content)."""
    t, d = sit.tool, sit.detail
    named = t or ""  # a situation of a family about one tool names it (an empty name fails validation)
    if sit.family == "missing_tool":
        return [MissingTool(tool=t)]
    if sit.family == "missing_parameter" and d:
        return [MissingParameter(tool=t, parameter=d)]
    if sit.family in ("missing_parameter", "invalid_tool_args") and not d:
        return [AskFor(tool=t)]
    if sit.family == "unknown_field":
        if d:
            return [UnknownField(tool=t, field=d)]
        return [UnknownField()]
    if sit.family == "invalid_tool_args":
        return [AskFor(tool=t, parameter=d)]
    if sit.family == "tool_error":
        return [ToolError(tool=named)]
    if sit.family == "policy_refusal":
        return [Policy(tool=t)]
    if sit.family == "wrong_tool_name":
        return [WrongToolName(tool=named)]
    if sit.family == "check_first":
        return [CheckFirst(check=d, tool=t)]
    budget = sit.family.split(":", 1)[1]
    lessons: list[Lesson] = [Budget(budget=step_budget(sit), tool=t)]
    if budget == "tokens":
        lessons.append(Guidance(text="Request only the fields you need and "
                              "summarise long tool outputs instead of quoting them."))
    if budget == "time":
        lessons.append(Guidance(text="Prefer one broad call over many narrow "
                              "ones; do not wait on slow calls that are not needed for the answer."))
    return lessons


def guard_name(sit: Situation) -> str:
    t = slug(sit.tool, 64) if sit.tool else None
    d = slug(sit.detail, 64) if sit.detail else None
    named: dict[str, list[str | None]] = {
        "missing_tool": ["when", t, "is-unavailable"],
        "missing_parameter": ["when", t, "has-no", d] if d else ["check", t, "arguments"],
        "unknown_field": ["when", t, d, "is-unknown"] if d else ["when", t, "returns-unknown"],
        "invalid_tool_args": ["ask-for", d, "before", t] if d else ["check", t, "arguments"],
        "tool_error": ["when", t, "fails"],
        "policy_refusal": ["check-policy-before", t] if t else ["check-policy-first"],
        "wrong_tool_name": ["call", t, "by-its-exact-name"],
        "check_first": ["call", d, "before", t],
    }
    parts = named.get(sit.family)
    if parts is None:
        budget = sit.family.split(":", 1)[1]
        parts = [f"finish-within-{budget}-budget", *(["stop-repeating", t] if t else [])]
    return fit_name([p for p in parts if p])


def guard_content(sit: Situation) -> SkillContent:
    """A guard skill for ``sit``, written from templates."""
    templates = [r.template for r in sit.failures + sit.successes]
    pattern = describable(common_pattern(templates))
    like = f" Seen with requests like \"{pattern}\"." if pattern else ""
    # The tool's name in words too ("get vehicle status"), which requests are written in and
    # embeddings match; a one-word name ("mv") needs no second spelling.
    words = " ".join(slug(sit.tool, 64).split("-")) if sit.tool else ""
    tool = f"`{sit.tool}`" + (f" ({words})" if words and words != sit.tool else "")
    if sit.is_budget:
        budget = sit.family.split(":", 1)[1]
        description = (f"When a task risks running out of its {budget} budget"
                       + (f", especially by repeating {tool}" if sit.tool else "")
                       + "." + like)
    else:
        description = {
            "missing_tool": f"When a request needs {tool} and that tool may "
                            "not be among your tools.",
            "missing_parameter": f"When a request asks {tool} for "
                                 + (f"`{sit.detail}`" if sit.detail else "a setting")
                                 + ", which it may have no parameter for.",
            "unknown_field": f"When {tool} may return "
                             + (f"`{sit.detail}`" if sit.detail else "a field") + " as unknown or null.",
            "invalid_tool_args": f"When calling {tool}"
                                 + (f", which needs `{sit.detail}`" if sit.detail else "") + ".",
            "tool_error": f"When {tool} returns an error.",
            "policy_refusal": "When a request may not be allowed by policy"
                              + (f", before calling {tool}" if sit.tool else "") + ".",
            "wrong_tool_name": f"When a request needs {tool}: call it by its exact name.",
            "check_first": f"When a request needs {tool}, which needs `{sit.detail}` called first.",
        }[sit.family] + like
    tools = (sit.tool,) if sit.tool and re.match(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,127}$", sit.tool) else ()
    tags = ("limit", sit.family.replace(":", "-"), "budget" if sit.is_budget else "capability")
    kind = {"wrong_tool_name": SkillKind.pitfall, "check_first": SkillKind.policy}.get(sit.family, SkillKind.guard)
    toolset = tuple(sorted({t for r in sit.failures + sit.successes for t in r.toolset}))
    return SkillContent(name=guard_name(sit), description=description[:1000], kind=kind,
                        tools=tools, tags=tags, lessons=tuple(situation_lessons(sit)), toolset=toolset)
