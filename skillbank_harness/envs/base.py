"""Tasks, environments and the pieces their verifiers are built from.

An :class:`Environment` is in-memory state plus LangChain ``StructuredTool`` objects over it. It
keeps a hidden log of every tool call and every clarifying question, which only verifiers read:
the agent sees tool results, never the log. A :class:`Task` is one seeded instance of a template:
the user's request, a factory for a fresh environment, a budget when it is a budget variant, and
``verify(env, final_answer, messages)``.

Families (``skillbank_harness.envs.families``) subclass :class:`Environment`, register tools with
:meth:`Environment.tool` and task templates with :func:`template`.
"""

from __future__ import annotations

import copy
import json
import re
from dataclasses import dataclass, field
from typing import Any, Callable, ClassVar, Iterable, Literal, Sequence

from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.tools import StructuredTool, ToolException
from pydantic import BaseModel, create_model

from skillbank import Lesson

__all__ = [
    "TaskType",
    "Split",
    "Call",
    "Ask",
    "ToolDef",
    "EnvError",
    "Environment",
    "RefStep",
    "Spec",
    "Template",
    "Task",
    "TEMPLATES",
    "template",
    "names",
    "no_value_claim",
    "attempted_tools",
    "passed_param",
    "blocker_named",
    "param_not_passed",
    "tool_call_count",
    "final_answer",
    "GENERIC_REPLY",
]

TaskType = Literal["base", "capability", "disambiguation"]
Split = Literal["train", "heldout"]

GENERIC_REPLY = "I have nothing to add; please go ahead with what I asked."
"""What the scripted user says to a question in a task that needs no clarification."""


class NoArgs(BaseModel):
    """The argument schema of a tool that takes none."""


class EnvError(Exception):
    """A tool refused its input (bad value, unknown id); surfaces to the agent as a tool error."""


@dataclass
class Call:
    """One executed tool call, as the environment saw it (hidden from the agent)."""

    seq: int
    tool: str
    args: dict[str, Any]
    result: Any = None
    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


@dataclass
class Ask:
    """A question the agent put to the scripted user, and the reply it got."""

    seq: int
    question: str
    reply: str | None


@dataclass(frozen=True)
class ToolDef:
    name: str
    description: str
    args: type[BaseModel]
    fn: Callable[..., dict[str, Any]]  # fn(env, **args) -> JSON-able dict; raise EnvError to refuse


class Environment:
    """In-memory state, tools over it, a scripted user, and a hidden event log.

    ``removed`` tool names are left out of :meth:`tools`, and ``removed_params`` (``(tool,
    parameter)`` pairs) out of those tools' schemas (capability-limit tasks). ``reply`` is
    what the scripted user answers to the first clarifying question; ``None`` means the task
    needs no clarification and the user answers with :data:`GENERIC_REPLY`. There is at most one
    clarification round: later questions get no reply.
    """

    family: ClassVar[str] = ""
    system_prompt: ClassVar[str] = "You are a helpful assistant. Use the tools to act."
    TOOLDEFS: ClassVar[dict[str, ToolDef]]

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls.TOOLDEFS = {}

    @classmethod
    def tool(cls, name: str, description: str, args: type[BaseModel]) -> Callable:
        """Register ``fn(env, **args)`` as a tool of every environment of this class."""

        def register(fn: Callable[..., dict[str, Any]]) -> Callable[..., dict[str, Any]]:
            cls.TOOLDEFS[name] = ToolDef(name, description, args, fn)
            return fn

        return register

    def __init__(
        self,
        state: dict[str, Any],
        *,
        removed: Iterable[str] = (),
        removed_params: Iterable[tuple[str, str]] = (),
        reply: str | None = None,
    ) -> None:
        self.state = copy.deepcopy(state)
        self.removed = frozenset(removed)
        unknown = self.removed - set(self.TOOLDEFS)
        if unknown:
            raise ValueError(f"cannot remove unknown tools {sorted(unknown)} from {self.family}")
        self.removed_params = frozenset(removed_params)
        for tool, param in self.removed_params:
            if tool not in self.TOOLDEFS or param not in self.TOOLDEFS[tool].args.model_fields:
                raise ValueError(f"cannot remove unknown parameter {param!r} of {tool!r} from {self.family}")
        self._reply = reply
        self.log: list[Call | Ask] = []

    # ------------------------------------------------------------------ what the agent gets

    def tool_names(self) -> list[str]:
        return [name for name in self.TOOLDEFS if name not in self.removed]

    def tools(self) -> list[StructuredTool]:
        return [self._make_tool(self.TOOLDEFS[name]) for name in self.tool_names()]

    def _make_tool(self, spec: ToolDef) -> StructuredTool:
        def run(**kwargs: Any) -> str:
            args = {k: v for k, v in kwargs.items() if v is not None}
            try:
                result = spec.fn(self, **args)
            except EnvError as exc:
                self.log.append(Call(len(self.log), spec.name, args, error=str(exc)))
                raise ToolException(f"Error: {exc}") from None
            except Exception as exc:  # noqa: BLE001 - a bug in a tool fails its call, not the run
                # Templates and tools are frozen once a bank has run on them, so a tool that
                # crashes on a state its template never set up (protocol v9's run died on the
                # clinic's get_booking where the task had no booking) is answered as a failed
                # call: the model reads an error, the verifier sees the call, the run goes on.
                error = f"the tool failed: {type(exc).__name__}: {exc}"
                self.log.append(Call(len(self.log), spec.name, args, error=error))
                raise ToolException(f"Error: {error}") from None
            self.log.append(Call(len(self.log), spec.name, args, result=copy.deepcopy(result)))
            return json.dumps(result)

        return StructuredTool.from_function(
            func=run,
            name=spec.name,
            description=spec.description,
            args_schema=self._schema(spec),
            handle_tool_error=True,
        )

    def _schema(self, spec: ToolDef) -> type[BaseModel]:
        """The tool's argument model, without the parameters this task removed."""
        drop = {param for tool, param in self.removed_params if tool == spec.name}
        if not drop:
            return spec.args
        fields = {name: (f.annotation, f) for name, f in spec.args.model_fields.items() if name not in drop}
        return create_model(spec.args.__name__, __doc__=spec.args.__doc__, **fields)

    def user_reply(self, question: str) -> str | None:
        """The scripted user's answer to the agent's question (one round at most)."""
        asked_before = any(isinstance(e, Ask) for e in self.log)
        reply = None if asked_before else (self._reply if self._reply is not None else GENERIC_REPLY)
        self.log.append(Ask(len(self.log), question, reply))
        return reply

    # ------------------------------------------------------------------ what verifiers read

    def calls(self, tool: str | None = None, *, ok_only: bool = True) -> list[Call]:
        return [
            e for e in self.log
            if isinstance(e, Call) and (tool is None or e.tool == tool) and (e.ok or not ok_only)
        ]

    def asks(self) -> list[Ask]:
        return [e for e in self.log if isinstance(e, Ask)]

    def require_before(
        self,
        check: str,
        action: str,
        same: Sequence[str] | Callable[[Call, Call], bool] = (),
    ) -> list[str]:
        """Every successful ``action`` call has a successful ``check`` call before it.

        ``same`` names arguments that must be equal in both calls (e.g. ``order_id``), or is a
        predicate ``(check_call, action_call) -> bool``.
        """
        reasons = []
        for act in self.calls(action):
            earlier = [c for c in self.calls(check) if c.seq < act.seq]
            if callable(same):
                ok = any(same(c, act) for c in earlier)
            else:
                ok = any(all(_eq(c.args.get(k), act.args.get(k)) for k in same) for c in earlier)
            if not ok:
                reasons.append(f"`{action}` ran without `{check}` first (policy)")
        return reasons

    def require_asked_before(self, action: str) -> list[str]:
        """The agent asked the user something before any ``action`` call."""
        first_ask = next((a.seq for a in self.asks()), None)
        acts = self.calls(action, ok_only=False)
        if not acts:
            return []
        if first_ask is None or first_ask > acts[0].seq:
            return [f"`{action}` ran before the agent asked the user (it guessed)"]
        return []


def _eq(a: Any, b: Any) -> bool:
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return float(a) == float(b)
    return a == b


# ---------------------------------------------------------------------- answer/message helpers


def names(answer: str, name: str) -> bool:
    """Whether ``answer`` mentions the identifier ``name`` exactly (``open_window``, ``range_km``)."""
    return re.search(rf"(?<![A-Za-z0-9_]){re.escape(name)}(?![A-Za-z0-9_])", answer or "") is not None


def no_value_claim(answer: str, field_name: str, concept: Sequence[str], value_re: str) -> list[str]:
    """The answer asserts no value for an unknown field.

    A sentence that mentions the field (or one of the ``concept`` words) and contains something
    matching ``value_re`` counts as an invented value.
    """
    words = [re.escape(field_name)] + [re.escape(w) for w in concept]
    topic = re.compile(rf"(?<![A-Za-z0-9])(?:{'|'.join(words)})", re.IGNORECASE)
    for sentence in re.split(r"(?<=[.!?])\s+", answer or ""):
        if topic.search(sentence) and re.search(value_re, sentence, re.IGNORECASE):
            return [f"invented a value for unknown `{field_name}`: {sentence.strip()!r}"]
    return []


def attempted_tools(messages: Sequence[BaseMessage]) -> list[str]:
    """Names of every tool call the model emitted, in order."""
    out = []
    for m in messages or ():
        if isinstance(m, AIMessage):
            out.extend(tc["name"] for tc in m.tool_calls)
    return out


def passed_param(messages: Sequence[BaseMessage], tool: str, param: str) -> bool:
    """Whether the model passed ``param`` in any call of ``tool`` (even one the schema dropped)."""
    return any(tc["name"] == tool and param in (tc.get("args") or {})
               for m in messages or () if isinstance(m, AIMessage) for tc in m.tool_calls)


def blocker_named(answer: str, name: str) -> list[str]:
    """A capability answer names the exact blocker (a tool, parameter or field)."""
    return [] if names(answer, name) else [f"final answer does not name the blocker `{name}`"]


def param_not_passed(messages: Sequence[BaseMessage], tool: str, param: str) -> list[str]:
    """The model did not pass a parameter the tool lacks (the tool would drop it silently)."""
    if passed_param(messages, tool, param):
        return [f"passed `{param}` to `{tool}`, which has no such parameter"]
    return []


def tool_call_count(messages: Sequence[BaseMessage]) -> int:
    return len(attempted_tools(messages))


def final_answer(messages: Sequence[BaseMessage]) -> str:
    """The text of the last AI message (the agent's final answer), or ``""``."""
    for m in reversed(list(messages or ())):
        if isinstance(m, AIMessage):
            return m.text if isinstance(m.text, str) else str(m.content)
    return ""


# ---------------------------------------------------------------------- tasks and templates


@dataclass(frozen=True)
class RefStep:
    """One step of a scripted correct run: a tool call, a clarifying question, or the answer."""

    kind: Literal["call", "ask", "answer"]
    tool: str | None = None
    args: dict[str, Any] = field(default_factory=dict)
    text: str = ""
    role: Literal["check", "lookup", "action", ""] = ""

    @classmethod
    def call(cls, tool: str, args: dict[str, Any] | None = None,
             role: Literal["check", "lookup", "action", ""] = "action") -> "RefStep":
        return cls("call", tool, dict(args or {}), role=role)

    @classmethod
    def ask(cls, text: str) -> "RefStep":
        return cls("ask", text=text)

    @classmethod
    def answer(cls, text: str) -> "RefStep":
        return cls("answer", text=text)


Checker = Callable[[Environment, str, Sequence[BaseMessage]], list[str]]


@dataclass
class Spec:
    """What a template builds from its RNG: the request, the world, and how to judge a run."""

    input: str
    state: dict[str, Any]
    reference: list[RefStep]
    check: Checker
    hints: tuple[Lesson, ...] = ()
    removed: tuple[str, ...] = ()
    removed_params: tuple[tuple[str, str], ...] = ()
    reply: str | None = None
    system_prompt: str | None = None  # None: the environment's own


@dataclass(frozen=True)
class Template:
    id: str
    family: str
    type: TaskType
    heldout: bool
    env_cls: type[Environment]
    build: Callable[[Any], Spec]
    # Which variants exist: plain (False) and budget (True). A template about the budget itself
    # has only the budget variant.
    variants: tuple[bool, ...] = (False, True)


TEMPLATES: dict[str, Template] = {}


def template(env_cls: type[Environment], id: str, type: TaskType, *, heldout: bool = False,
             budget_only: bool = False, budget_variant: bool = True):
    """Register a template builder ``build(rng) -> Spec`` under ``id`` (``family.type.name``).

    ``budget_only``: the template exists only as its budget variant (a request about finishing
    within a tool-call budget); ``budget_variant=False``: only as its plain one.
    """
    if budget_only and not budget_variant:
        raise ValueError("a template is budget_only or has no budget variant, not both")

    def register(build: Callable[[Any], Spec]) -> Callable[[Any], Spec]:
        if id in TEMPLATES:
            raise ValueError(f"duplicate template id {id!r}")
        TEMPLATES[id] = Template(id, env_cls.family, type, heldout, env_cls, build,
                                 variants=(True,) if budget_only else (False, True) if budget_variant
                                 else (False,))
        return build

    return register


@dataclass(frozen=True, eq=False)
class Task:
    """One seeded task. Hidden from the agent: everything except ``input`` and the tools.

    ``hints`` are the lessons a correct skill for this template would contain; they exist
    for oracle baselines and tests and reach a policy only if someone renders them into its
    system prompt. ``reference`` is a scripted correct run.
    """

    id: str
    family: str
    template: str
    type: TaskType
    budget: bool
    split: Split
    input: str
    seed: int
    instance: int
    max_tool_calls: int | None
    system_prompt: str
    tools: tuple[str, ...]
    hints: tuple[Lesson, ...]
    reference: tuple[RefStep, ...]
    _factory: Callable[[], Environment] = field(repr=False)
    _check: Checker = field(repr=False)

    @property
    def kind(self) -> str:
        """``base``, ``capability``, ``disambiguation``, or one of those plus ``+budget``."""
        return f"{self.type}+budget" if self.budget else self.type

    def make_env(self) -> Environment:
        return self._factory()

    def explain(
        self,
        env: Environment,
        final_answer: str | None,
        messages: Sequence[BaseMessage] = (),
    ) -> list[str]:
        """Why a run failed; an empty list means it passed."""
        reasons = list(self._check(env, final_answer or "", messages))
        available = set(env.tool_names())
        for name in dict.fromkeys(attempted_tools(messages)):
            if name not in available:
                reasons.append(f"called `{name}`, which is not among the tools")
        if self.max_tool_calls is not None:
            n = tool_call_count(messages) if messages else len(env.calls(ok_only=False))
            if n > self.max_tool_calls:
                reasons.append(f"made {n} tool calls; the budget is {self.max_tool_calls}")
        return reasons

    def verify(
        self,
        env: Environment,
        final_answer: str | None,
        messages: Sequence[BaseMessage] = (),
    ) -> bool:
        return not self.explain(env, final_answer, messages)
