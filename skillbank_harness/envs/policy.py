"""A simulated policy model: a chat model that plays a sloppy tool-using agent, honestly.

No real LLM is reachable offline, so demos and benchmarks drive the real
``langchain.agents.create_agent`` loop with :class:`SimulatedPolicy`. Numbers measured with it
show the machinery working; they are not a claim about any real model.

Honesty by construction: the policy sees exactly what a real model would -- the messages
(including the system message with any injected skills) and the JSON schemas of the tools bound
to it. ``bind_tools`` keeps only the JSON schemas, never the tool objects (whose functions close
over the environment). This module imports nothing from the environments, tasks or verifiers,
and a test walks every attribute of a bound instance to check that none of them is reachable.
"""

from __future__ import annotations

import hashlib
import json
import re
import threading
from dataclasses import dataclass
from typing import Any, Sequence

from langchain_core.language_models.chat_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage, SystemMessage, ToolMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import Field

from skillbank_harness.envs.directives import (AskFor, CheckFirst, NoParam, NoRepeat, Order, StepBudget, Unavailable,
                                               UnknownField)
from skillbank_harness.envs.guidance import read
from skillbank_harness.envs.reading import (
    AMBIGUOUS,
    ToolView,
    extract,
    is_question,
    match_action,
    rank_lookups,
    requested_params,
    split_clauses,
    stems,
)

__all__ = ["SimulatedPolicy"]

# A check result with one of these keys set to false forbids the action it guards.
_VERDICT_KEYS = ("eligible", "free", "allowed", "available", "reachable", "permitted")
_UNKNOWN = (None, "", "unknown", "null", "n/a")


class SimulatedPolicy(BaseChatModel):
    """A seeded, rule-following-with-noise stand-in for an LLM agent.

    How it decides, each turn, from the conversation alone:

    1. It splits the first user message into clauses and matches each to a bound tool, to a
       tool a skill names as possibly missing, to a tool it does not have and names itself
       (verb + object noun of the clause, ``skillbank_harness.envs.reading.derived_tool``:
       "refund order X" -> ``refund_order``, whatever the missing tool is really called), or to
       a lookup that answers a question.
    2. For an action it fills arguments from the text and from earlier tool results (looking
       ids up with a lookup tool whose description names them), runs the checks it knows of,
       then calls the tool. Questions are answered from a lookup's result.
    3. When nothing is left to do it writes a final answer: what it did, what it found, what it
       could not do and why. When it decides to ask, its final message is a question.

    Without guidance it is sloppy, at these rates (constructor parameters, defaults chosen to
    model a plausibly careless agent, not tuned to any result):

    * ``p_skip_check`` = 0.35 -- skips a check that an action's description asks for
      ("Policy: call X first").
    * ``p_call_unavailable`` = 0.3 -- calls the tool it named itself for a clause no bound
      tool fits, or passes a setting the request names that the tool's schema lacks, under
      the name it gives it (``fan_speed`` for "with fan speed 3",
      ``skillbank_harness.envs.reading.requested_params``).
    * ``p_guess_missing`` = 0.4 -- guesses a missing or ambiguous value instead of asking, and
      invents a value for a field a tool returned as unknown.
    * ``p_wander`` = 0.25 -- on any turn, repeats its latest lookup instead of moving on (so a
      run can loop until a budget stops it).
    * ``p_name_blocker`` = 0.5 -- when it declines without guidance, names the exact missing
      tool, parameter or unknown field (otherwise it says something vague, or for a missing
      parameter nothing at all: it reports the call as done). It names the blocker as it calls
      it: its own name, unless a skill gave the name.

    Slips that no lesson kind addresses (chosen once at 0.05 each: the occasional mistakes of
    an agent that is careless, not confused -- a seventh of the habits above -- and fixed before
    the demo was re-measured):

    * ``p_misread`` = 0.05 -- per argument value of an action: a number one off, or the
      neighbouring option of a choice.
    * ``p_misreport`` = 0.05 -- per value it reports from a lookup: another record's value, or
      a number one off.
    * ``p_stop_early`` = 0.05 -- per request of several parts: it answers after the first.

    Skills in the system message are read by meaning with
    :func:`skillbank_harness.envs.guidance.read` (the
    advice each line gives, whatever its wording, and the names of its own tools it mentions)
    and followed literally, each with probability ``adherence`` = 0.9 (otherwise it falls back to its
    unguided behaviour for that decision): ``CheckFirst`` and ``Order`` add checks and fix
    their order, ``Unavailable`` stops it calling a missing tool and makes it name it,
    ``NoParam`` stops it passing a missing parameter and makes it name it,
    ``AskFor`` makes it ask instead of guessing, ``UnknownField`` makes it say a field is unknown,
    ``StepBudget`` stops repeats and makes it answer once it has made that many calls,
    ``NoRepeat`` stops repeats. A wrong
    skill misleads it just as literally. A general directive (no tool named) is read as the
    specific one for every tool: the general ``CheckFirst`` makes it run every check a tool's
    description asks for (it never skips one), the general ``Unavailable`` makes it decline and
    name any tool it lacks, the general ``NoParam`` makes it decline and name any parameter a
    tool lacks, the general ``AskFor`` makes it ask for any missing or ambiguous value, the
    general ``UnknownField`` makes it say any unknown field is unknown. Each is one directive,
    followed or not (``adherence``) for the whole run.

    Randomness is keyed, not sequential: every decision draws from a hash of
    ``(seed, first user message, decision)``, so a decision is stable across the turns of a run
    and a repeated trial differs only through ``seed`` (see :meth:`with_seed`).
    """

    seed: int = 0
    adherence: float = Field(0.9, ge=0.0, le=1.0)
    p_skip_check: float = Field(0.35, ge=0.0, le=1.0)
    p_call_unavailable: float = Field(0.3, ge=0.0, le=1.0)
    p_guess_missing: float = Field(0.4, ge=0.0, le=1.0)
    p_wander: float = Field(0.25, ge=0.0, le=1.0)
    p_name_blocker: float = Field(0.5, ge=0.0, le=1.0)
    p_misread: float = Field(0.05, ge=0.0, le=1.0)
    p_misreport: float = Field(0.05, ge=0.0, le=1.0)
    p_stop_early: float = Field(0.05, ge=0.0, le=1.0)
    # Plain JSON function schemas (name, description, parameters): what a provider sends a model.
    tool_specs: tuple[dict[str, Any], ...] = ()

    @property
    def _llm_type(self) -> str:
        return "skillbank-simulated-policy"

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {
            "seed": self.seed, "adherence": self.adherence, "p_skip_check": self.p_skip_check,
            "p_call_unavailable": self.p_call_unavailable, "p_guess_missing": self.p_guess_missing,
            "p_wander": self.p_wander, "p_name_blocker": self.p_name_blocker,
            "p_misread": self.p_misread, "p_misreport": self.p_misreport, "p_stop_early": self.p_stop_early,
        }

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None, **kwargs: Any) -> "SimulatedPolicy":
        return self.model_copy(update={"tool_specs": tuple(_schema(t) for t in tools)})

    def with_seed(self, seed: int) -> "SimulatedPolicy":
        return self.model_copy(update={"seed": seed})

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: Any = None,
        **kwargs: Any,
    ) -> ChatResult:
        message = _Turn(self, messages).decide()
        chars_in = sum(len(m.text) + len(json.dumps(getattr(m, "tool_calls", []) or []))
                       for m in messages) + len(json.dumps(self.tool_specs))
        chars_out = len(message.text) + len(json.dumps(message.tool_calls))
        n_in, n_out = max(1, chars_in // 4), max(1, chars_out // 4)
        message.usage_metadata = {"input_tokens": n_in, "output_tokens": n_out,
                                  "total_tokens": n_in + n_out}
        message.response_metadata = {"model_name": "simulated-policy", "seed": self.seed}
        return ChatResult(generations=[ChatGeneration(message=message)])


# create_agent binds tools on every model call, and every trial builds its tools anew;
# converting schemas dominated a run's cost. A tool's JSON schema follows from its name,
# description and argument model (a class shared by every environment of a family, or a JSON
# schema), so those are the cache key.
_SCHEMAS: dict[tuple[Any, ...], str] = {}
_SCHEMAS_LOCK = threading.Lock()  # trials run concurrently (consistency runner)


def _schema(tool: Any) -> dict[str, Any]:
    """The tool's JSON function schema, as a fresh plain dict (no object reference survives)."""
    args = getattr(tool, "args_schema", None)
    if not isinstance(args, type):
        args = json.dumps(args, sort_keys=True, default=str)
    key = (type(tool), getattr(tool, "name", None), getattr(tool, "description", None), args)
    with _SCHEMAS_LOCK:
        text = _SCHEMAS.get(key)
    if text is None:
        text = json.dumps(convert_to_openai_tool(tool)["function"], default=str)
        with _SCHEMAS_LOCK:
            if len(_SCHEMAS) > 4096:  # tasks that remove a parameter make a model each
                _SCHEMAS.clear()
            _SCHEMAS[key] = text
    return json.loads(text)


# ---------------------------------------------------------------------- one turn


def _parse_result(text: str) -> Any:
    try:
        return json.loads(text)
    except (TypeError, ValueError):
        return text


def _rows(result: Any) -> list[dict[str, Any]]:
    """Records in a tool result: the result itself and dicts inside its lists."""
    if not isinstance(result, dict):
        return []
    rows = [result]
    for value in result.values():
        if isinstance(value, list):
            rows.extend(v for v in value if isinstance(v, dict))
    return rows


def _norm(value: Any) -> str:
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    return str(value).strip().lower()


def _args_match(done: dict[str, Any], wanted: dict[str, Any]) -> bool:
    return all(_norm(done.get(k)) == _norm(v) for k, v in wanted.items())


def _is_reference(param: str) -> bool:
    """Parameters whose values are looked up rather than stated: ids and emails."""
    return param == "id" or param.endswith("_id") or "email" in param


def _aliases(param: str) -> set[str]:
    last = param.rsplit("_", 1)[-1]
    return {param, last} if "_" in param and len(last) >= 4 else {param}


@dataclass
class _Done:
    name: str
    args: dict[str, Any]
    result: Any
    ok: bool


@dataclass
class _Goal:
    kind: str  # "action" | "query"
    clause: str
    tool: str | None = None
    bound: bool = True


class _Emit(Exception):
    def __init__(self, message: AIMessage) -> None:
        self.message = message


class _Turn:
    """Everything the policy derives from one model call's input."""

    def __init__(self, policy: SimulatedPolicy, messages: Sequence[BaseMessage]) -> None:
        self.p = policy
        system = "\n".join(m.text for m in messages if isinstance(m, SystemMessage))
        humans = [m.text for m in messages if isinstance(m, HumanMessage)]
        self.request = humans[0] if humans else ""
        self.replies = humans[1:]
        self.tools = {spec["name"]: ToolView(spec) for spec in policy.tool_specs}

        results = {m.tool_call_id: m for m in messages if isinstance(m, ToolMessage)}
        self.history: list[_Done] = []
        self.n_ai = 0
        self.asked = False
        last_was_question = False
        for m in messages:
            if isinstance(m, AIMessage):
                self.n_ai += 1
                last_was_question = not m.tool_calls
                for tc in m.tool_calls:
                    tm = results.get(tc["id"])
                    body = tm.text if tm is not None else ""
                    ok = tm is not None and tm.status != "error" and not body.startswith("Error")
                    self.history.append(_Done(tc["name"], dict(tc.get("args") or {}),
                                              _parse_result(body), ok))
            elif isinstance(m, HumanMessage) and last_was_question:
                self.asked = True
                last_was_question = False

        fields = {k for c in self.history for row in _rows(c.result) for k in row}
        directives = [d for d in read(system, tools=policy.tool_specs, fields=sorted(fields))
                      if self._follows(d)]
        self.check_first = [d for d in directives if isinstance(d, CheckFirst)]
        self.orders = [d for d in directives if isinstance(d, Order)]
        self.unavailable = [d for d in directives if isinstance(d, Unavailable)]
        self.no_param = [d for d in directives if isinstance(d, NoParam)]
        self.ask_for = [d for d in directives if isinstance(d, AskFor)]
        self.unknown_fields = [d for d in directives if isinstance(d, UnknownField)]
        budgets = [d.max_tool_calls for d in directives if isinstance(d, StepBudget)]
        self.budget = min(budgets) if budgets else None
        self.no_repeat = self.budget is not None or any(isinstance(d, NoRepeat) for d in directives)
        self.notes: list[str] = []
        self.frozen = False

    # ------------------------------------------------------------------ randomness

    def _u(self, *key: object) -> float:
        raw = "\x1f".join([str(self.p.seed), self.request, *map(str, key)])
        return int(hashlib.sha256(raw.encode()).hexdigest()[:13], 16) / 16**13

    def _follows(self, directive: object) -> bool:
        return self._u("adhere", repr(directive)) < self.p.adherence

    # ------------------------------------------------------------------ emitting

    def _emit_call(self, name: str, args: dict[str, Any], why: str) -> None:
        if self.frozen:
            self.notes.append(f"I did not get to {why}.")
            raise _Skip
        call_id = "call_" + hashlib.sha256(f"{self.p.seed}|{self.n_ai}|{name}|{args}".encode()).hexdigest()[:12]
        raise _Emit(AIMessage(content="", tool_calls=[{"name": name, "args": args, "id": call_id,
                                                      "type": "tool_call"}]))

    def _emit_question(self, param: str, tool: str, options: Sequence[Any]) -> None:
        if self.frozen:
            self.notes.append(f"I still need `{param}` for `{tool}`.")
            raise _Skip
        opts = f" ({', '.join(map(str, options))})" if options else ""
        raise _Emit(AIMessage(content=f"Which `{param}` should I use for `{tool}`{opts}?"))

    # ------------------------------------------------------------------ the decision

    def decide(self) -> AIMessage:
        if self.budget is not None and len(self.history) >= self.budget:
            self.frozen = True
        elif not self.no_repeat and self._u("wander", self.n_ai) < self.p.p_wander:
            looked = [c for c in self.history
                      if c.ok and c.name in self.tools and self.tools[c.name].lookup]
            if looked:
                return _as_call(looked[-1], self.p.seed, self.n_ai)
        goals = self._goals()
        # A slip no lesson kind addresses: on a request of several parts, answer after the first.
        stop_early = len(goals) > 1 and self._u("stop_early") < self.p.p_stop_early
        for i, goal in enumerate(goals):
            if stop_early and i >= 1:
                break
            try:
                if goal.kind == "action":
                    self._action(goal)
                else:
                    self._query(goal)
            except _Emit as emit:
                return emit.message
            except _Skip:
                continue
        if self.frozen:
            self.notes.append(f"I stopped after {len(self.history)} tool calls to stay within the "
                              "step budget.")
        text = " ".join(self.notes) or "I could not work out how to help with that."
        return AIMessage(content=text)

    def _goals(self) -> list[_Goal]:
        heard = {d.tool: d.tool.replace("_", " ") for d in self.unavailable
                 if d.tool is not None and d.tool not in self.tools}
        goals = []
        for clause in split_clauses(self.request):
            if is_question(clause):
                goals.append(_Goal("query", clause))
                continue
            tool, bound = match_action(clause, self.tools, extra_heard=heard)
            if tool is not None:
                goals.append(_Goal("action", clause, tool, bound))
        return goals

    def _texts(self, goal: _Goal) -> list[str]:
        # The user's clarifications override the original clause.
        return [*reversed(self.replies), goal.clause]

    # ------------------------------------------------------------------ actions

    def _action(self, goal: _Goal) -> None:
        tool = goal.tool
        assert tool is not None
        if not goal.bound:
            self._unavailable(goal)
            return
        view = self.tools[tool]
        texts = self._texts(goal)
        for d in self.ask_for:
            if d.tool == tool and d.param is not None and d.param in view.params \
                    and not self.asked and not self._done(tool):
                value = extract(d.param, view.params[d.param], texts, self._numeric(view))
                if value is None or value is AMBIGUOUS:
                    self._emit_question(d.param, tool, _options(view.params[d.param]))
        args, rows = self._resolve(view, goal)
        args = self._misread(view, args)
        args.update(self._missing_params(view, goal))
        prior = [c for c in self.history if c.name == tool and _args_match(c.args, args)]
        if prior:
            done = prior[-1]
            if done.ok:
                self.notes.append(f"Done: {tool}({_fmt(args)}).")
                self._follow_ups(tool, goal, args, rows)
            else:
                self.notes.append(f"`{tool}` failed: {_short(done.result)}.")
            return
        for check in self._checks(tool):
            cargs = self._check_args(self.tools[check], check, args, rows, goal)
            seen = [c for c in self.history if c.name == check and _args_match(c.args, cargs)]
            if not seen:
                self._emit_call(check, cargs, f"`{check}` before `{tool}`")
            verdict = _verdict(seen[-1].result)
            if verdict:
                self.notes.append(f"I did not call `{tool}`: `{check}` returned {verdict}.")
                return
        self._emit_call(tool, args, f"`{tool}`")

    def _misread(self, view: ToolView, args: dict[str, Any]) -> dict[str, Any]:
        """A slip no lesson kind addresses: a number read one off, or the neighbouring option of
        a choice (``p_misread`` per value; keyed, so the same slip on every turn of a run)."""
        out = dict(args)
        for param, value in args.items():
            if self._u("misread", view.name, param) >= self.p.p_misread:
                continue
            options = _options(view.params.get(param, {}))
            if options and value in options and len(options) > 1:
                out[param] = options[(options.index(value) + 1) % len(options)]
            elif isinstance(value, (int, float)) and not isinstance(value, bool):
                out[param] = value + 1
        return out

    def _missing_params(self, view: ToolView, goal: _Goal) -> dict[str, Any]:
        """Settings the request names that ``view``'s schema lacks: the ones it passes anyway
        (sloppy); declining the others, named or not, goes into the answer's notes. A setting a
        skill names as missing is called by the skill's name for it."""
        passed: dict[str, Any] = {}
        for param, prop in requested_params(goal.clause, view, self.request).items():
            told = [d for d in self.no_param if d.covers(view.name, param)
                    or (d.tool == view.name and d.param and set(d.param.split("_")) & set(param.split("_")))]
            if told:
                name = told[0].param or param
                self.notes.append(f"I could not set `{name}`: `{view.name}` has no such parameter.")
            elif self._u("pass_missing", view.name, param) < self.p.p_call_unavailable:
                passed[param] = prop["value"]
            elif self._u("name_blocker", view.name, param) < self.p.p_name_blocker:
                self.notes.append(f"I could not set `{param}`: `{view.name}` has no such parameter.")
        # A skill may name a parameter the tool lacks that the request asks for in words the
        # tool's description seems to cover ("invite" for a tool that "optionally invites").
        words = stems(goal.clause)
        for d in self.no_param:
            if d.tool == view.name and d.param and d.param not in view.params \
                    and (stems(d.param) - view.name_stems) & words:
                note = f"I could not set `{d.param}`: `{view.name}` has no such parameter."
                if note not in self.notes:
                    self.notes.append(note)
        return passed

    def _done(self, tool: str) -> bool:
        return any(c.name == tool for c in self.history)

    def _numeric(self, view: ToolView) -> int:
        return sum(1 for p in view.params.values()
                   if {p.get("type")} & {"number", "integer"}
                   or any(a.get("type") in ("number", "integer") for a in p.get("anyOf", [])))

    def _resolve(self, view: ToolView, goal: _Goal) -> tuple[dict[str, Any], list[dict[str, Any]]]:
        """Argument values for ``view``; asks, guesses or looks up what is missing (may emit)."""
        texts = self._texts(goal)
        args: dict[str, Any] = {}
        rows: list[dict[str, Any]] = []
        pending: list[tuple[str, list[tuple[Any, dict[str, Any]]]]] = []
        for param, prop in view.params.items():
            required = param in view.required
            value = extract(param, prop, texts, self._numeric(view))
            if value is AMBIGUOUS:
                pending.append((param, [(v, {}) for v in _options(prop)]))
                continue
            if value is not None:
                args[param] = value
                continue
            if not _is_reference(param):
                if required:
                    pending.append((param, []))
                continue
            cands = self._candidates(param, texts)
            if len(cands) == 1:
                args[param] = cands[0][0]
                rows.append(cands[0][1])
                continue
            if len(cands) > 1:
                pending.append((param, cands))
                continue
            provider = self._provider(param, texts, need_all=required)
            if provider is not None:
                self._emit_call(provider[0], provider[1], f"looking up `{param}`")
            if required:
                pending.append((param, []))
        for param, cands in pending:
            value, row = self._ask_or_guess(view.name, param, view.params[param], cands)
            args[param] = value
            if row:
                rows.append(row)
        return args, rows

    def _candidates(self, param: str, texts: Sequence[str]) -> list[tuple[Any, dict[str, Any]]]:
        keys = _aliases(param)
        found: dict[str, tuple[Any, dict[str, Any]]] = {}
        for call in self.history:
            if not call.ok:
                continue
            for row in _rows(call.result):
                for key in keys:
                    if row.get(key) not in _UNKNOWN:
                        found.setdefault(_norm(row[key]), (row[key], row))
        cands = list(found.values())
        if len(cands) > 1:
            scored = [(_mentions(row, texts, exclude=keys), (v, row)) for v, row in cands]
            top = max(s for s, _ in scored)
            if top > 0:
                cands = [c for s, c in scored if s == top]
        return cands

    def _provider(self, param: str, texts: Sequence[str], need_all: bool) -> tuple[str, dict] | None:
        """A lookup, not yet called, whose description names ``param`` and whose inputs we have."""
        keys = _aliases(param)
        for view in self.tools.values():
            if not view.lookup or param in view.params or self._done(view.name):
                continue
            if not any(view.mentions(k) for k in keys):
                continue
            largs: dict[str, Any] = {}
            ok = True
            for p, prop in view.params.items():
                value = extract(p, prop, texts, self._numeric(view))
                if value is not None and value is not AMBIGUOUS:
                    largs[p] = value
                elif p in view.required:
                    ok = False
            if ok:
                return view.name, largs
        return None

    def _ask_or_guess(self, tool: str, param: str, prop: dict[str, Any],
                      cands: list[tuple[Any, dict[str, Any]]]) -> tuple[Any, dict[str, Any]]:
        told_to_ask = any(d.covers(tool, param) for d in self.ask_for)
        if not self.asked and (told_to_ask or self._u("guess", tool, param) >= self.p.p_guess_missing):
            self._emit_question(param, tool, [v for v, _ in cands] or _options(prop))
        return self._guess(tool, param, prop, cands)

    def _guess(self, tool: str, param: str, prop: dict[str, Any],
               cands: list[tuple[Any, dict[str, Any]]]) -> tuple[Any, dict[str, Any]]:
        u = self._u("pick", tool, param)
        if cands:
            return cands[int(u * len(cands))]
        options = _options(prop)
        if options:
            return options[int(u * len(options))], {}
        desc = prop.get("description") or ""
        kinds = {prop.get("type")} | {a.get("type") for a in prop.get("anyOf", [])}
        if kinds & {"number", "integer"}:
            bounds = [float(x) for x in re.findall(r"\d+(?:\.\d+)?", desc)] or [1.0, 10.0]
            lo, hi = min(bounds), max(bounds)
            return int(lo + u * (hi - lo + 1)) if hi > lo else int(lo), {}
        if "date" in param or "YYYY-MM-DD" in desc:
            return f"2025-{1 + int(u * 12):02d}-{1 + int(u * 28):02d}", {}
        if param == "time" or "HH:MM" in desc:
            return f"{9 + int(u * 8):02d}:00", {}
        if "email" in param:
            return "someone@example.com", {}
        if "address" in param:
            return f"{1 + int(u * 99)} Main Street", {}
        return "the usual", {}

    def _checks(self, tool: str) -> list[str]:
        checks: list[str] = []
        after: set[str] = set()
        for d in self.orders:
            if tool in d.tools:
                i = d.tools.index(tool)
                checks += [t for t in d.tools[:i] if t in self.tools and t != tool]
                after |= set(d.tools[i + 1:])
        checks += [d.check for d in self.check_first if d.action == tool and d.check in self.tools]
        follow_descriptions = any(d.check is None for d in self.check_first)
        for hinted in self.tools[tool].named_in_description(self.tools):
            if hinted in checks or hinted in after or not self.tools[hinted].lookup:
                continue
            if follow_descriptions or self._u("skip_check", tool, hinted) >= self.p.p_skip_check:
                checks.append(hinted)
        return list(dict.fromkeys(checks))

    def _check_args(self, view: ToolView, check: str, args: dict[str, Any],
                    rows: list[dict[str, Any]], goal: _Goal) -> dict[str, Any]:
        texts = self._texts(goal)
        out: dict[str, Any] = {}
        for p, prop in view.params.items():
            if p in args:
                out[p] = args[p]
                continue
            value = extract(p, prop, texts, self._numeric(view))
            if value is not None and value is not AMBIGUOUS:
                out[p] = value
                continue
            from_row = next((r[p] for r in rows if r.get(p) not in _UNKNOWN), None)
            if from_row is not None:
                out[p] = from_row
            elif p in view.required:
                out[p] = self._ask_or_guess(check, p, prop, [])[0]
        return out

    def _follow_ups(self, tool: str, goal: _Goal, args: dict[str, Any], rows: list[dict]) -> None:
        for d in self.orders:
            if tool not in d.tools:
                continue
            for nxt in d.tools[d.tools.index(tool) + 1:]:
                if nxt not in self.tools or self._done(nxt):
                    continue
                nargs = self._check_args(self.tools[nxt], nxt, args, rows, goal)
                self._emit_call(nxt, nargs, f"`{nxt}` after `{tool}`")

    def _unavailable(self, goal: _Goal) -> None:
        tool = goal.tool
        assert tool is not None
        if any(d.covers(tool) for d in self.unavailable) or self._done(tool):
            self.notes.append(f"I could not do that part: `{tool}` is unavailable.")
            return
        if self._u("call_unavailable", tool) < self.p.p_call_unavailable:
            self._emit_call(tool, {}, f"`{tool}`")
        if self._u("name_blocker", tool) < self.p.p_name_blocker:
            self.notes.append(f"I could not do that part: `{tool}` is unavailable.")
        else:
            self.notes.append("I could not do everything you asked.")

    # ------------------------------------------------------------------ questions

    def _query(self, goal: _Goal) -> None:
        texts = self._texts(goal)
        fillable = {}
        for name, view in self.tools.items():
            got = [p for p in view.required
                   if extract(p, view.params[p], texts, self._numeric(view)) not in (None, AMBIGUOUS)]
            fillable[name] = len(got) if len(got) == len(view.required) else -10
        ranked = rank_lookups(goal.clause, self.tools, fillable)
        if not ranked:
            self.notes.append("I have no tool that can answer that.")
            return
        view = self.tools[ranked[0]]
        largs: dict[str, Any] = {}
        for p, prop in view.params.items():
            value = extract(p, prop, texts, self._numeric(view))
            if value is not None and value is not AMBIGUOUS:
                largs[p] = value
            elif p in view.required:
                largs[p] = self._ask_or_guess(view.name, p, prop, [])[0]
        seen = [c for c in self.history if c.name == view.name and _args_match(c.args, largs)]
        if not seen:
            self._emit_call(view.name, largs, f"`{view.name}`")
        result = seen[-1]
        if not result.ok:
            self.notes.append(f"`{view.name}` failed: {_short(result.result)}.")
            return
        rows = _rows(result.result)
        if not rows:
            self.notes.append(f"`{view.name}` returned: {_short(result.result)}.")
            return
        scored = [(_mentions(r, texts), i, r) for i, r in enumerate(rows)]
        best = max(s for s, _, _ in scored)
        candidates = [r for s, _, r in scored if s == best]
        # The outer record of a list result is only a wrapper; prefer a real row.
        row = next((r for r in candidates if not any(isinstance(v, list) for v in r.values())),
                   candidates[0])
        field = _best_field(row, goal.clause, texts)
        if field is None:
            self.notes.append(f"Here is what I found: {_short(row)}.")
            return
        value = row.get(field)
        if value in _UNKNOWN or (isinstance(value, str) and value.lower() in _UNKNOWN):
            self._unknown(view.name, field)
        else:
            blob = " ".join(texts).lower()
            subject = next((v for k, v in row.items() if k != field and isinstance(v, str)
                            and len(v) >= 3 and v.lower() in blob), None)
            of = f" of {subject}" if subject else ""
            if self._u("misreport", view.name, field) < self.p.p_misreport:
                value = _misreported(value, [r.get(field) for r in rows if r is not row])
            self.notes.append(f"The {field}{of} is {value}.")

    def _unknown(self, tool: str, field: str) -> None:
        if any(d.covers(tool, field) for d in self.unknown_fields):
            self.notes.append(f"`{field}` is unknown: the tool returned no value, so I cannot tell you.")
        elif self._u("fabricate", field) < self.p.p_guess_missing:
            self.notes.append(f"The {field} is {_invent(field, self._u('invent', field))}.")
        elif self._u("name_blocker", field) < self.p.p_name_blocker:
            self.notes.append(f"`{field}` is unknown: the tool returned no value, so I cannot tell you.")
        else:
            self.notes.append("I could not find that information.")


class _Skip(Exception):
    pass


def _as_call(done: _Done, seed: int, n_ai: int) -> AIMessage:
    call_id = "call_" + hashlib.sha256(f"{seed}|{n_ai}|{done.name}|wander".encode()).hexdigest()[:12]
    return AIMessage(content="", tool_calls=[{"name": done.name, "args": dict(done.args),
                                              "id": call_id, "type": "tool_call"}])


def _misreported(value: Any, others: list[Any]) -> Any:
    """A wrong answer no lesson kind addresses: another record's value, or a number off by one."""
    other = next((o for o in others if o not in _UNKNOWN and o != value), None)
    if other is not None:
        return other
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return value + 1
    return value


def _options(prop: dict[str, Any]) -> list[Any]:
    if "enum" in prop:
        return list(prop["enum"])
    for p in prop.get("anyOf", []):
        if "enum" in p:
            return list(p["enum"])
    return []


def _mentions(row: dict[str, Any], texts: Sequence[str], exclude: set[str] = frozenset()) -> int:
    blob = " ".join(texts).lower()
    return sum(1 for k, v in row.items()
               if k not in exclude and isinstance(v, str) and len(v) >= 3 and v.lower() in blob)


def _best_field(row: dict[str, Any], clause: str, texts: Sequence[str]) -> str | None:
    words = stems(clause)
    blob = " ".join(texts).lower()
    best, best_score = None, 0
    for key, value in row.items():
        if isinstance(value, str) and len(value) >= 3 and value.lower() in blob:
            continue  # the thing asked about, not the answer
        score = len(stems(key) & words)
        if score > best_score:
            best, best_score = key, score
    return best


def _verdict(result: Any) -> str | None:
    if not isinstance(result, dict):
        return None
    for key in _VERDICT_KEYS:
        if result.get(key) is False:
            extra = result.get("reason") or result.get("conflict")
            return f"{key}=false" + (f" ({extra})" if extra else "")
    return None


def _invent(field: str, u: float) -> str:
    if field.endswith("_km"):
        return f"{int(40 + u * 400)} km"
    if field.endswith("_min"):
        return f"{int(15 + u * 90)} min"
    if field.endswith("_pct"):
        return f"{int(u * 100)}%"
    if "date" in field or "delivery" in field:
        return f"2025-{1 + int(u * 12):02d}-{1 + int(u * 28):02d}"
    return str(int(1 + u * 100))


def _fmt(args: dict[str, Any]) -> str:
    return ", ".join(f"{k}={v}" for k, v in args.items())


def _short(value: Any, limit: int = 160) -> str:
    text = value if isinstance(value, str) else json.dumps(value, default=str)
    return text if len(text) <= limit else text[: limit - 3] + "..."

