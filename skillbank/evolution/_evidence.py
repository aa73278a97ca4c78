"""Evidence for a round, seen as the agent saw it: the :class:`Run` model and what it hides.

A trajectory becomes a :class:`Run`: the task text, the tool calls with their arguments,
results and errors, the limit events and the final answer. That is what the agent had at run
time. What it did not have stays out of a ``Run``: the task id, the benchmark labels, the
verifier's note and the outcome's details. Those are collected separately, as
:class:`HiddenLiterals`, only so the linter can refuse a skill that mentions them (step 6 and 7
of the round). The success label is kept: it is the signal being learned from, never text that
reaches a skill.

Secrets are removed where text leaves the round, not on reading: the LLM distiller scrubs its
whole prompt with the bank's scrubber, and the linter refuses any skill text the scrubber would
change (scrubbing every stored step on read would cost more than the rest of a rule round).

Reading them for a round (loading, grouping, the watermark) is :mod:`skillbank.evolution._batch`;
the task templates and request patterns are :mod:`skillbank.evolution._templates`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import cached_property
from typing import Any, Iterable, Sequence

from skillbank.evolution._methods import instance_values, leaves, method_key, skeleton, word_tokens
from skillbank.evolution._templates import STOPWORDS, task_template
from skillbank._hashing import canonical_json
from skillbank.models import LimitType, Trajectory

# -- the agent-visible record --------------------------------------------------------------------


@dataclass(frozen=True)
class ToolCall:
    step: int
    tool: str
    args: dict[str, Any]
    result: str | None = None
    error: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.tool, canonical_json(self.args)

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass(frozen=True)
class LimitHit:
    type: LimitType
    step: int
    detail: str
    tool: str | None = None
    field: str | None = None
    param: str | None = None
    limit: int | None = None
    used: int | None = None

    @property
    def category(self) -> str:
        return self.type.category


@dataclass
class Run:
    """One labelled trajectory as the agent saw it (see the module docstring)."""

    id: str
    task: str
    success: bool
    calls: list[ToolCall]
    answer: str | None
    limits: list[LimitHit]
    model_turns: int
    tokens: int
    skills: dict[str, frozenset[int]]  # skill id -> versions injected
    started_at: datetime
    # For grouping only, never rendered for a distiller: the task type if the runner set one,
    # otherwise the task's template.
    group: str = ""
    template: str = ""
    task_id: str | None = None  # for the gate's replay only
    suspect: str | None = None  # why this success looks like an environment exploit
    questions: tuple[int, ...] = ()  # steps where the model asked the user instead of acting
    toolset: tuple[str, ...] = ()  # every tool the model was offered during the run
    today: date | None = None  # the date the run took as today (what "tomorrow" meant in its request)

    @cached_property
    def skeleton(self) -> tuple:
        """The steps with the request's own words blanked (``methods.skeleton``)."""
        return skeleton(self.task, self.calls)

    @cached_property
    def method(self) -> tuple:
        """What this run's method is, for comparing runs (``methods.method_key``)."""
        return method_key(self.task, self.calls)

    @cached_property
    def tools(self) -> list[str]:
        return [c.tool for c in self.calls]

    @cached_property
    def sequence(self) -> tuple[str, ...]:
        """Tool names with immediate repeats collapsed: the shape of the method."""
        out: list[str] = []
        for c in self.calls:
            if not out or out[-1] != c.tool:
                out.append(c.tool)
        return tuple(out)

    def asked_before(self, tool: str) -> bool:
        """Whether the agent asked the user a question before its first call of ``tool``."""
        first = next((c.step for c in self.calls if c.tool == tool), None)
        return first is not None and any(q < first for q in self.questions)

    @property
    def repeats(self) -> int:
        """Calls that repeated an earlier call with the same arguments."""
        seen: set[tuple[str, str]] = set()
        n = 0
        for c in self.calls:
            if c.key in seen:
                n += 1
            seen.add(c.key)
        return n


class RunGroup:
    """``successes`` and ``failures`` of ``self.runs``, for every grouping of runs (a cluster, a
    skill's evidence): suspected exploits count as neither."""

    runs: list[Run]

    @property
    def successes(self) -> list[Run]:
        return [r for r in self.runs if r.success and not r.suspect]

    @property
    def failures(self) -> list[Run]:
        return [r for r in self.runs if not r.success]


def _dt(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None and str(value).strip() != "" else None
    except (TypeError, ValueError):
        return None


# The adapters' wording (skillbank.adapters.limits) and LangChain's, parsed when an event's data
# does not name the field or parameter: "tool result has unknown or null fields: eta, items[0].price",
# "Error invoking tool 'x' with kwargs {...} with error:\n temperature: Field required".
_FIELDS_IN_DETAIL = re.compile(r"fields?\s*:\s*(.+)$", re.S)
_FIELD_IN_DETAIL = re.compile(r"field\s+[`'\"]?([A-Za-z_][\w.\[\]]*)")
_PARAM_IN_DETAIL = re.compile(r"^\s*([A-Za-z_]\w*)\s*[:\n]\s*(?:Field required|Input should|Value error|"
                              r"Extra inputs|value is not|field required)", re.M)
_PARAM_NAMED = re.compile(r"(?:param(?:eter)?|argument)s?\s+[`'\"]?([A-Za-z_]\w*)")
_TOOL_IN_DETAIL = re.compile(r"tool\s+[`'\"]?([A-Za-z_][\w.\-]*)")
# LangChain's limit middlewares: "Tool call limit reached: run limit exceeded (4/3 calls)."
_USED_OF_LIMIT = re.compile(r"\((\d+)\s*/\s*(\d+)\s*(?:calls?|steps?|tokens?)?\)")


def _field_name(path: str) -> str | None:
    """``items[0].price`` -> ``price``: the lesson is about the field, not where it sat."""
    last = re.sub(r"\[\d*\]", "", path.strip().strip("`'\"")).split(".")[-1]
    return last if re.match(r"^[A-Za-z_]\w*$", last) else None


def _limit_hits(type_: Any, step: int, detail: str | None, tool: str | None,
                data: dict[str, Any] | None) -> list[LimitHit]:
    """One hit per field for an unknown-field event naming several; one otherwise."""
    data = data or {}
    detail = detail or ""
    type_ = LimitType(type_)
    tool = str(tool or data.get("tool") or "").strip() or None  # a blank name is no tool
    if tool is None and type_ != LimitType.policy_refusal and (m := _TOOL_IN_DETAIL.search(detail)):
        tool = m.group(1)
    fields: list[str | None] = [None]
    if type_ == LimitType.unknown_field:
        named = data.get("field") or data.get("fields")
        if isinstance(named, str):
            named = [named]
        if not named and (m := _FIELDS_IN_DETAIL.search(detail)):
            named = m.group(1).split(",")
        elif not named and (m := _FIELD_IN_DETAIL.search(detail)):
            named = [m.group(1)]
        found: list[str | None] = [f for f in dict.fromkeys(_field_name(str(n)) for n in named or ()) if f]
        fields = found[:10] or [None]
    param = data.get("param") or data.get("parameter") or data.get("arg")
    if param is None and type_ == LimitType.invalid_tool_args:
        m = _PARAM_IN_DETAIL.search(detail) or _PARAM_NAMED.search(detail)
        param = m.group(1) if m else None
    limit = _int(data.get("limit", data.get("max", data.get("budget"))))
    used = _int(data.get("used", data.get("count", data.get("calls"))))
    if limit is None and (m := _USED_OF_LIMIT.search(detail)):
        used, limit = int(m.group(1)), int(m.group(2))
    return [LimitHit(type=type_, step=step, detail=detail[:500], tool=str(tool) if tool else None,
                     field=f, param=str(param) if param else None, limit=limit, used=used)
            for f in fields]


def build_run(*, id: str, task: str | None, success: Any, steps: Iterable[dict[str, Any]],
              limits: Iterable[tuple], injections: Iterable[tuple[str, int]], answer: str | None,
              started_at: Any, task_id: str | None = None, task_type: str | None = None,
              today: Any = None) -> Run:
    """A :class:`Run` from plain parts: step dicts (as stored), ``(type, step, detail, tool,
    data)`` limit tuples and ``(skill_id, version)`` injections. Nothing hidden goes in."""
    calls: list[ToolCall] = []
    questions: list[int] = []
    offered: dict[str, None] = {}
    model_turns = tokens = 0
    for step in steps:
        tokens += (step.get("input_tokens") or 0) + (step.get("output_tokens") or 0)
        kind = step.get("kind")
        if kind == "model":
            model_turns += 1
            if step.get("asks"):
                questions.append(step.get("index", 0))
            offered.update(dict.fromkeys(step.get("tools_offered") or ()))
        elif kind == "tool" and step.get("tool"):
            calls.append(ToolCall(step=step.get("index", 0), tool=step["tool"],
                                  args=dict(step.get("args") or {}), result=step.get("result"),
                                  error=step.get("error")))
    skills: dict[str, set[int]] = defaultdict(set)
    for sid, version in injections:
        skills[sid].add(version)
    task = task or ""
    template = task_template(task, instance_values(task, calls))
    return Run(id=id, task=task, success=bool(success), calls=calls, answer=answer,
               limits=[h for hit in limits for h in _limit_hits(*hit)], model_turns=model_turns, tokens=tokens,
               skills={k: frozenset(v) for k, v in skills.items()}, started_at=_dt(started_at),
               group=task_type or template, template=template, task_id=task_id,
               questions=tuple(questions), toolset=tuple(sorted(offered)),
               today=date.fromisoformat(today) if isinstance(today, str) else today)


def asks(content: str | None, tool_calls: Any) -> bool:
    """A model turn that asked the user something: a question and no tool call."""
    return not tool_calls and (content or "").rstrip().endswith("?")


def to_run(traj: Trajectory) -> Run:
    """The agent-visible view of a labelled trajectory.

    Secrets are scrubbed where text leaves the round: the LLM distiller scrubs its whole prompt,
    and the linter refuses a skill the scrubber would change.
    """
    return build_run(
        id=traj.id, task=traj.task, success=traj.success, answer=traj.final_answer,
        started_at=traj.started_at, task_id=traj.task_id, task_type=traj.task_type, today=traj.today,
        steps=({"index": st.index, "kind": st.kind, "tool": st.tool, "args": st.args,
                "result": st.result, "error": st.error, "input_tokens": st.input_tokens,
                "output_tokens": st.output_tokens, "tools_offered": st.tools_offered,
                "asks": st.kind == "model" and asks(st.content, st.tool_calls)} for st in traj.steps),
        limits=((e.type, e.step, e.detail, e.tool, e.data) for e in traj.limit_events),
        injections=((i.skill_id, i.version) for i in traj.injections),
    )


# -- what the agent did not see: collected only to keep it out of skills ---------------------------

_ANSWER_KEYS = re.compile(r"expect|answer|gold|target|solution|truth|reference|label|correct", re.I)
_LABEL_LIKE = re.compile(r"[\d_/:#]")
_NOTE_VALUES = re.compile(r"\"([^\"]{2,80})\"|'([^']{2,80})'|`([^`]{2,80})`|(\b\d[\d.,:/-]*\d\b)")


_LITERAL_TOKENS = re.compile(r"[a-z0-9][a-z0-9_@.:/#+-]*[a-z0-9]|[a-z0-9]", re.I)


def literal_tokens(text: str) -> list[str]:
    """Lower-cased tokens of ``text``: one tokenizer for stored literals and the linted skill."""
    return [t.lower() for t in _LITERAL_TOKENS.findall(text)]


def literal_key(text: str) -> str:
    """How literals are compared: lower-cased tokens joined by single spaces."""
    return " ".join(literal_tokens(text))


@dataclass
class HiddenLiterals:
    """Strings a skill must never contain: ``values`` maps each (as :func:`literal_key`) to why
    (task id, expected answer, ...); ``originals`` keeps the text as it was, for messages."""

    values: dict[str, str] = field(default_factory=dict)
    originals: dict[str, str] = field(default_factory=dict)
    long: set[str] = field(default_factory=set)  # keys of five or more tokens (substring-checked)

    def add(self, value: Any, why: str) -> None:
        if value is None or isinstance(value, bool):
            return
        text = " ".join(str(value).split())
        if len(text) < 2 or len(text) > 200:
            return
        key = literal_key(text)
        if key:
            self._put(key, why, text)

    def merge(self, other: "HiddenLiterals") -> "HiddenLiterals":
        out = HiddenLiterals(dict(self.values), dict(self.originals), set(self.long))
        for k, v in other.values.items():
            out._put(k, v, other.originals.get(k, k))
        return out

    def _put(self, key: str, why: str, original: str) -> None:
        """Record ``key`` unless known: one place that keeps ``long`` in step with ``values``."""
        if key not in self.values:
            self.values[key] = why
            self.originals[key] = original
            if key.count(" ") >= 4:
                self.long.add(key)


def _hide(hidden: HiddenLiterals, task_id: str | None, task_type: str | None,
          labels: dict[str, Any], note: str | None) -> None:
    hidden.add(task_id, "task id")
    if task_type and _LABEL_LIKE.search(task_type):
        hidden.add(task_type, "benchmark label")
    for key, value in (labels or {}).items():
        if _ANSWER_KEYS.search(key):
            hidden.add(value, "expected answer")
        elif isinstance(value, str) and (_LABEL_LIKE.search(value) or len(value) >= 12):
            hidden.add(value, "benchmark label")
    if note:
        for m in _NOTE_VALUES.finditer(note):
            hidden.add(next(g for g in m.groups() if g), "verifier detail")


def hidden_literals(trajs: Iterable[Trajectory], into: HiddenLiterals | None = None) -> HiddenLiterals:
    """Task ids, benchmark labels, expected answers and verifier details of ``trajs``."""
    hidden = into if into is not None else HiddenLiterals()
    for t in trajs:
        _hide(hidden, t.task_id, t.task_type, t.labels, t.outcome.note if t.outcome else None)
    return hidden


def instance_literals(runs: Sequence[Run]) -> HiddenLiterals:
    """Argument values that vary between ``runs`` (the runs a skill was learned from):
    environment-specific, so never in the skill.

    A value every run passes (``status="open"``, ``take watering can``) is part of the method;
    one that changes with the task (an order number, a city, an e-mail address) is not.
    """
    per_value: dict[str, int] = defaultdict(int)
    for run in runs:
        seen: set[str] = set()
        for call in run.calls:
            for value in _leaf_strings(call.args):
                seen.add(value)
        for value in seen:
            per_value[value] += 1
    out = HiddenLiterals()
    n = len(runs)
    for value, count in per_value.items():
        specific = bool(re.search(r"\d|[A-Z@/#:]", value)) or len(value) >= 12
        if specific and (count < n or n == 1 or re.search(r"\d{3,}|@", value)):
            out.add(value, "environment-specific value from a tool call")
    return out


def request_words(runs: Sequence[Run]) -> frozenset[str]:
    """Words arguments took from their own request that not every run of that method has:
    instance values ("fern" in ``water fern`` for "Please water the fern.", where "water" is the
    method's). Only text a skill learned from runs is held to these (an argument shape, a
    description, free guidance), not the fixed sentences every lesson renders to."""
    by_method: dict[tuple, list[Run]] = defaultdict(list)
    for run in runs:
        by_method[run.method].append(run)
    varying: set[str] = set()
    for group in by_method.values():
        if len(group) < 2:
            continue  # one run cannot tell its method's words from its request's
        counts: dict[str, int] = defaultdict(int)
        for run in group:
            task_words = {w.lower() for w in word_tokens(run.task)}
            words = {w.lower() for c in run.calls for v in _leaf_strings(c.args) for w in word_tokens(v)}
            for word in words & task_words:
                counts[word] += 1
        # A stop word ("at" in "lunch at noon") names no instance: holding a lesson to it
        # rejected a calendar lesson for "an environment-specific value: 'at'" (issue 29).
        varying.update(w for w, c in counts.items() if c < len(group) and len(w) >= 2 and w not in STOPWORDS)
    return frozenset(varying)


def _leaf_strings(value: Any) -> Iterable[str]:
    """The argument's scalar values worth hiding: three characters or more, no small numbers."""
    for leaf in leaves(value):
        text = str(leaf).strip()
        if len(text) >= 3 and not (isinstance(leaf, (int, float)) and abs(leaf) < 1000):
            yield text
