"""Evidence for a round: which trajectories, grouped how, and seen as the agent saw them.

A trajectory becomes a :class:`Run`: the task text, the tool calls with their arguments,
results and errors, the limit events and the final answer. That is what the agent had at run
time. What it did not have stays out of a ``Run``: the task id, the benchmark labels, the
verifier's note and the outcome's details. Those are collected separately, as
:class:`HiddenLiterals`, only so the linter can refuse a skill that mentions them (step 6 and 7
of the round). The success label is kept: it is the signal being learned from, never text that
reaches a skill.

The watermark: every trajectory a round reads is stamped with the round number
(``consumed_round``), so the next round skips it; a round started with ``since`` re-reads
labelled trajectories from that time on, consumed or not.
"""

from __future__ import annotations

import json
import re
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable, Sequence

from skillbank.hashing import canonical_json
from skillbank.models import Injection, LimitEvent, LimitType, Outcome, Step, Trajectory

ROUND_KEY = "evolution:round"
LAST_RUN_KEY = "evolution:last_run"

# -- task templates ------------------------------------------------------------------------------
# Tasks that differ only in their values (an order number, a city, a person) share a template;
# templates are what the round clusters and what descriptions are written from.

_URL = re.compile(r"https?://\S+|www\.\S+")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.-]+\b")
_UUID = re.compile(r"\b[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}\b")
_QUOTED = re.compile(r"\"[^\"\n]{1,80}\"|'[^'\n]{1,80}'|“[^”\n]{1,80}”")
_NUMBER = re.compile(r"(?<![\w<])[-+]?\$?\d[\d,.:/-]*\b")
_MIXED = re.compile(r"\b(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[\w-]{2,}\b")
_PROPER = re.compile(r"(?<=[a-z0-9,;] )[A-Z][a-zA-Z]+(?: [A-Z][a-zA-Z]+)*")
_WORD = re.compile(r"<[a-z]+>|[a-z][a-z'-]*")

STOPWORDS = frozenset("""
a an the and or but if then else of for to in on at by with from into onto about as is are was
were be been being it its this that these those my your our their his her me you we they i he
she them us please can could would should will shall may might must do does did done have has
had not no so than too very just also up out over under again there here what which who whom
whose when where why how all any each some such own same other more most both few nor only
""".split())


def task_template(task: str) -> str:
    """``"Refund order 1234 for Alice"`` -> ``"refund order <num> for <name>"``."""
    text = _URL.sub(" <url> ", task)
    text = _EMAIL.sub(" <email> ", text)
    text = _UUID.sub(" <id> ", text)
    text = _QUOTED.sub(" <text> ", text)
    text = _MIXED.sub(" <id> ", text)
    text = _NUMBER.sub(" <num> ", text)
    text = _PROPER.sub("<name>", text)
    return " ".join(text.lower().split())


def template_words(template: str) -> list[str]:
    """Content words of a template (placeholders and stop words dropped), in order."""
    return [w for w in _WORD.findall(template) if not w.startswith("<") and w not in STOPWORDS]


def common_pattern(templates: Sequence[str], share: float = 0.6) -> str:
    """The most frequent template with every word not shared by ``share`` of them elided."""
    if not templates:
        return ""
    counts: dict[str, int] = defaultdict(int)
    for t in templates:
        for w in set(_WORD.findall(t)):
            counts[w] += 1
    need = max(1, int(share * len(templates) + 0.999))
    base = max(set(templates), key=lambda t: (templates.count(t), -len(t)))
    out: list[str] = []
    for token in base.split():
        words = _WORD.findall(token)
        keep = words and all(counts[w] >= need for w in words)
        if keep:
            out.append(token)
        elif not out or out[-1] != "…":
            out.append("…")
    return " ".join(out).strip()


def common_words(templates: Sequence[str], share: float = 0.6, limit: int = 4) -> list[str]:
    """Content words present in at least ``share`` of the templates, in order of first use."""
    if not templates:
        return []
    need = max(1, int(share * len(templates) + 0.999))
    counts: dict[str, int] = defaultdict(int)
    for t in templates:
        for w in set(template_words(t)):
            counts[w] += 1
    base = max(set(templates), key=lambda t: templates.count(t))
    ordered = list(dict.fromkeys(w for w in template_words(base) if counts[w] >= need))
    return ordered[:limit]


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

    @property
    def tools(self) -> list[str]:
        return [c.tool for c in self.calls]

    @property
    def sequence(self) -> tuple[str, ...]:
        """Tool names with immediate repeats collapsed: the shape of the method."""
        out: list[str] = []
        for c in self.calls:
            if not out or out[-1] != c.tool:
                out.append(c.tool)
        return tuple(out)

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


def _int(value: Any) -> int | None:
    try:
        return int(value) if value is not None and str(value).strip() != "" else None
    except (TypeError, ValueError):
        return None


_FIELD_IN_DETAIL = re.compile(r"field[s]?\s+[`'\"]?([A-Za-z_][\w.]*)")
_PARAM_IN_DETAIL = re.compile(r"(?:param(?:eter)?|argument)[s]?\s+[`'\"]?([A-Za-z_]\w*)")
_TOOL_IN_DETAIL = re.compile(r"tool\s+[`'\"]?([A-Za-z_][\w.\-]*)")


def _limit_hit(event: Any, scrub: Callable[[str], str]) -> LimitHit:
    data = event.data or {}
    detail = event.detail or ""
    tool = event.tool or data.get("tool")
    if tool is None and (m := _TOOL_IN_DETAIL.search(detail)):
        tool = m.group(1)
    fld = data.get("field")
    if fld is None and event.type == LimitType.unknown_field and (m := _FIELD_IN_DETAIL.search(detail)):
        fld = m.group(1)
    param = data.get("param") or data.get("parameter") or data.get("arg")
    if param is None and event.type == LimitType.invalid_tool_args and (m := _PARAM_IN_DETAIL.search(detail)):
        param = m.group(1)
    limit = _int(data.get("limit", data.get("max", data.get("budget"))))
    used = _int(data.get("used", data.get("count", data.get("calls"))))
    return LimitHit(type=LimitType(event.type), step=event.step, detail=scrub(detail)[:500],
                    tool=str(tool) if tool else None, field=str(fld) if fld else None,
                    param=str(param) if param else None, limit=limit, used=used)


def _scrub_value(value: Any, scrub: Callable[[str], str]) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        return {k: _scrub_value(v, scrub) for k, v in value.items()}
    if isinstance(value, list):
        return [_scrub_value(v, scrub) for v in value]
    return value


def to_run(traj: Trajectory, scrub: Callable[[str], str] = lambda s: s) -> Run:
    """The agent-visible view of a labelled trajectory; secrets scrubbed from every text."""
    calls: list[ToolCall] = []
    model_turns = tokens = 0
    for step in traj.steps:
        tokens += (step.input_tokens or 0) + (step.output_tokens or 0)
        if step.kind == "model":
            model_turns += 1
        elif step.kind == "tool" and step.tool:
            calls.append(ToolCall(step=step.index, tool=step.tool,
                                  args=_scrub_value(dict(step.args or {}), scrub),
                                  result=scrub(step.result) if step.result else step.result,
                                  error=scrub(step.error) if step.error else step.error))
    skills: dict[str, set[int]] = defaultdict(set)
    for inj in traj.injections:
        skills[inj.skill_id].add(inj.version)
    template = task_template(traj.task or "")
    return Run(
        id=traj.id,
        task=scrub(traj.task or ""),
        success=bool(traj.success),
        calls=calls,
        answer=scrub(traj.final_answer) if traj.final_answer else None,
        limits=[_limit_hit(e, scrub) for e in traj.limit_events],
        model_turns=model_turns,
        tokens=tokens,
        skills={k: frozenset(v) for k, v in skills.items()},
        started_at=traj.started_at,
        group=traj.task_type or template,
        template=template,
        task_id=traj.task_id,
    )


# -- what the agent did not see: collected only to keep it out of skills ---------------------------

_ANSWER_KEYS = re.compile(r"expect|answer|gold|target|solution|truth|reference|label|correct", re.I)
_LABEL_LIKE = re.compile(r"[\d_/:#]")
_NOTE_VALUES = re.compile(r"\"([^\"]{2,80})\"|'([^']{2,80})'|`([^`]{2,80})`|(\b\d[\d.,:/-]*\d\b)")


@dataclass
class HiddenLiterals:
    """Strings a skill must never contain, each with why (task id, expected answer, ...)."""

    values: dict[str, str] = field(default_factory=dict)

    def add(self, value: Any, why: str) -> None:
        if value is None or isinstance(value, bool):
            return
        text = " ".join(str(value).split())
        if len(text) < 2 or len(text) > 200:
            return
        self.values.setdefault(text.lower(), why)

    def merge(self, other: "HiddenLiterals") -> "HiddenLiterals":
        out = HiddenLiterals(dict(self.values))
        for k, v in other.values.items():
            out.values.setdefault(k, v)
        return out


def hidden_literals(trajs: Iterable[Trajectory], into: HiddenLiterals | None = None) -> HiddenLiterals:
    """Task ids, benchmark labels, expected answers and verifier details of ``trajs``."""
    hidden = into if into is not None else HiddenLiterals()
    for t in trajs:
        hidden.add(t.task_id, "task id")
        if t.task_type and _LABEL_LIKE.search(t.task_type):
            hidden.add(t.task_type, "benchmark label")
        for key, value in (t.labels or {}).items():
            if _ANSWER_KEYS.search(key):
                hidden.add(value, "expected answer")
            elif isinstance(value, str) and (_LABEL_LIKE.search(value) or len(value) >= 12):
                hidden.add(value, "benchmark label")
        note = t.outcome.note if t.outcome else None
        if note:
            for m in _NOTE_VALUES.finditer(note):
                hidden.add(next(g for g in m.groups() if g), "verifier detail")
    return hidden


def instance_literals(runs: Sequence[Run]) -> HiddenLiterals:
    """Argument values that vary between runs: environment-specific, so never in a skill.

    A value every run passes (``status="open"``) is part of the method; one that changes with
    the task (an order number, a city, an e-mail address) is not.
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


def _leaf_strings(value: Any) -> Iterable[str]:
    if isinstance(value, bool):
        return
    if isinstance(value, (str, int, float)):
        text = str(value).strip()
        if len(text) >= 3 and not (isinstance(value, (int, float)) and abs(value) < 1000):
            yield text
    elif isinstance(value, dict):
        for v in value.values():
            yield from _leaf_strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from _leaf_strings(v)


# -- loading, grouping and the watermark ----------------------------------------------------------


@dataclass
class Batch:
    """The labelled trajectories one round reads."""

    runs: list[Run]
    hidden: HiddenLiterals
    by_skill: dict[str, list[Run]]
    uncovered: list[Run]

    @property
    def ids(self) -> list[str]:
        return [r.id for r in self.runs]


def load_batch(bank: Any, *, since: datetime | None = None,
               scrub: Callable[[str], str] | None = None, chunk: int = 2000) -> Batch:
    """Labelled trajectories not consumed by an earlier round (or all since ``since``)."""
    scrub = scrub or getattr(bank, "scrubber", None) or (lambda s: s)
    rows = bank.store.query(
        "SELECT id FROM trajectories WHERE success IS NOT NULL"
        + (" AND started_at >= ?" if since is not None else " AND consumed_round IS NULL")
        + " AND status != 'running' ORDER BY started_at, id",
        (since.isoformat(),) if since is not None else (),
    )
    ids = [r["id"] for r in rows]
    runs: list[Run] = []
    hidden = HiddenLiterals()
    for start in range(0, len(ids), chunk):
        trajs = _load_many(bank, ids[start:start + chunk])
        hidden_literals(trajs, into=hidden)
        runs.extend(to_run(t, scrub) for t in trajs)
    return group(runs, hidden)


def _load_many(bank: Any, ids: list[str]) -> list[Trajectory]:
    """Whole trajectories for ``ids``: four batched queries per 500 ids.

    Rows are read straight from the schema and built without re-validation (they were
    validated when written), which keeps a 100,000-trajectory round in memory and in minutes.
    """
    out: list[Trajectory] = []
    for start in range(0, len(ids), 500):
        part = ids[start:start + 500]
        marks = ",".join("?" * len(part))
        q = bank.store.query
        steps: dict[str, list[Step]] = defaultdict(list)
        for r in q(f"SELECT trajectory_id, data FROM steps WHERE trajectory_id IN ({marks})"
                   " ORDER BY trajectory_id, idx", part):
            steps[r["trajectory_id"]].append(Step.model_construct(**json.loads(r["data"])))
        limits: dict[str, list[LimitEvent]] = defaultdict(list)
        for r in q(f"SELECT * FROM limit_events WHERE trajectory_id IN ({marks}) ORDER BY rowid", part):
            limits[r["trajectory_id"]].append(LimitEvent.model_construct(
                type=LimitType(r["type"]), step=r["step"], detail=r["detail"], tool=r["tool"],
                data=json.loads(r["data"] or "{}")))
        injections: dict[str, list[Injection]] = defaultdict(list)
        for r in q(f"SELECT * FROM injections WHERE trajectory_id IN ({marks}) ORDER BY step, rank", part):
            injections[r["trajectory_id"]].append(Injection.model_construct(
                step=r["step"], skill_id=r["skill_id"], version=r["version"], rank=r["rank"],
                score=r["score"]))
        rows = {r["id"]: r for r in q(f"SELECT * FROM trajectories WHERE id IN ({marks})", part)}
        for tid in part:
            r = rows.get(tid)
            if r is None:
                continue
            outcome_data = json.loads(r["outcome"]) if r["outcome"] else {}
            out.append(Trajectory.model_construct(
                id=r["id"], task=r["task"] or "", task_id=r["task_id"], task_type=r["task_type"],
                labels=json.loads(r["labels"] or "{}"), model=r["model"],
                bank_snapshot=r["bank_snapshot"], status=r["status"], error=r["error"],
                final_answer=r["final_answer"], started_at=_dt(r["started_at"]),
                ended_at=_dt(r["ended_at"]) if r["ended_at"] else None,
                steps=steps.get(tid, []), limit_events=limits.get(tid, []),
                injections=injections.get(tid, []),
                outcome=Outcome.model_construct(
                    success=None if r["success"] is None else bool(r["success"]),
                    score=r["score"], source=outcome_data.get("source", "manual"),
                    note=outcome_data.get("note"), recorded_at=None),
            ))
    return out


def _dt(value: Any) -> datetime:
    return value if isinstance(value, datetime) else datetime.fromisoformat(str(value))


def group(runs: list[Run], hidden: HiddenLiterals | None = None) -> Batch:
    """Group runs by the skills injected into them; runs that used none are uncovered."""
    by_skill: dict[str, list[Run]] = defaultdict(list)
    uncovered: list[Run] = []
    for run in runs:
        if run.skills:
            for sid in run.skills:
                by_skill[sid].append(run)
        else:
            uncovered.append(run)
    return Batch(runs=runs, hidden=hidden or HiddenLiterals(), by_skill=dict(by_skill),
                 uncovered=uncovered)


def current_round(bank: Any) -> int:
    return int(bank.store.get_meta(ROUND_KEY) or 0)


def finish_round(bank: Any, round_no: int, ids: Sequence[str], when: datetime) -> None:
    """Stamp ``ids`` as consumed by ``round_no`` and advance the round counter, atomically."""
    with bank.store.transaction():
        bank.trajectories.mark_consumed(ids, round_no)
        bank.store.set_meta(ROUND_KEY, str(round_no))
        bank.store.set_meta(LAST_RUN_KEY, json.dumps({"round": round_no, "at": when.isoformat(),
                                                      "trajectories": len(ids)}))
