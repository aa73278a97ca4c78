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
for budgets, came within ``near_share`` of a known budget. A limit that no lesson kind learns
from teaches nothing: a provider's rate limit is no lesson for the agent.

What a guard teaches is lessons (``skillbank.lessons``), rendered like every other skill's. What a
situation teaches, and how its guard is named and described, is up to the lesson kind that learns
from its family (``KindSpec.limit_learner``, found by :func:`skillbank.lessons.limit_learner`):
this module groups limit events into situations and names no family's lessons.
"""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from typing import Iterable

from skillbank.evolution._evidence import Run, literal_tokens
from skillbank.evolution._methods import leaves
from skillbank.evolution._naming import fit_name
from skillbank.evolution._templates import common_pattern, describable
from skillbank._toolnames import fitting_tool, is_skill_name
from skillbank.lessons import Lesson, learner_of, limit_learner
from skillbank.lessons._kinds.budget import BUDGETS
from skillbank.models import LimitType, SkillContent, SkillKind

BUDGET_FAMILY = {LimitType(t): budget for t, budget in BUDGETS.items()}


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

    @property
    def hit_type(self) -> LimitType | None:
        """The limit type hit most often in this situation, if any."""
        return self.types.most_common(1)[0][0] if self.types else None

    def describe(self) -> str:
        """What the runs ran into, with how many runs did (for a round's report)."""
        what = limit_learner(self).what_happened(self)
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

    for run in runs:
        if run.suspect:
            continue
        seen: set[tuple] = set()
        for hit in run.limits:
            if hit.type in BUDGET_FAMILY:
                sit = get("budget:" + BUDGET_FAMILY[hit.type], _most_repeated(run), None)
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
            elif learner_of(hit.type.value) is None:
                continue  # no lesson kind learns from it (a provider's rate limit: no lesson for the agent)
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
        limit, hit_type = sit.limit, sit.hit_type
        if not sit.is_budget or limit is None or hit_type is None:
            continue
        have = set(sit.evidence)
        for run in runs:
            if not run.success or run.suspect or run.id in have:
                continue
            used = _budget_usage(run, hit_type)
            if used is not None and used >= near_share * limit and (sit.tool is None or sit.tool in run.tools):
                sit.successes.append(run)
    return [s for s in found.values() if s.failures or (s.is_budget and s.successes)]


def situation_lessons(sit: Situation) -> list[Lesson]:
    """What a situation teaches, as lessons (the guard's whole content).

    Raises:
        ValueError: no lesson kind learns from ``sit``'s family.
    """
    return limit_learner(sit).lessons(sit)


def guard_name(sit: Situation) -> str:
    """The guard skill's name: the parts its family's learner names, slugged and fitted."""
    t = slug(sit.tool, 64) if sit.tool else None
    d = slug(sit.detail, 64) if sit.detail else None
    return fit_name([p for p in limit_learner(sit).name(sit, t, d) if p])


def guard_content(sit: Situation) -> SkillContent:
    """A guard skill for ``sit``, written from templates."""
    templates = [r.template for r in sit.failures + sit.successes]
    pattern = describable(common_pattern(templates))
    like = f" Seen with requests like \"{pattern}\"." if pattern else ""
    # The tool's name in words too ("get vehicle status"), which requests are written in and
    # embeddings match; a one-word name ("mv") needs no second spelling.
    words = " ".join(slug(sit.tool, 64).split("-")) if sit.tool else ""
    tool = f"`{sit.tool}`" + (f" ({words})" if words and words != sit.tool else "")
    learner = limit_learner(sit)
    description = learner.description(sit, tool) + like
    tools = (sit.tool,) if sit.tool and re.match(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,127}$", sit.tool) else ()
    tags = ("limit", sit.family.replace(":", "-"), "budget" if sit.is_budget else "capability")
    kind = SkillKind(learner.skill_kind)
    toolset = tuple(sorted({t for r in sit.failures + sit.successes for t in r.toolset}))
    return SkillContent(name=guard_name(sit), description=description[:1000], kind=kind,
                        tools=tools, tags=tags, lessons=tuple(learner.lessons(sit)), toolset=toolset)
