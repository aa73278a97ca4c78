"""The registry of lesson kinds: what each kind knows, looked up by everything that handles lessons.

Each module of :mod:`skillbank.lessons._kinds` defines its kind's class and registers one
:class:`KindSpec`: its sentence, the section of a skill's body it goes in, the advice that follows
it, where it is delivered by default, for a kind a tool call can break its :class:`CallCheck`,
for a kind a final reply can break its :class:`AnswerCheck` list, and how evolution learns it
(from a limit situation, from the contrast of successes and failures:
``skillbank.lessons._learning``). Rendering, validation, the lint, evolution and the adapters loop
over :data:`KINDS`; none of them branches on a kind. A new kind is one new module (plus its tests)
and its line in ``skillbank/lessons/_kinds/__init__.py``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Literal, Protocol, Sequence

from skillbank.lessons._base import CLASSES, Lesson, LessonKind
from skillbank.lessons._learning import ContrastLearner, LimitLearner, LimitSituation

__all__ = ["KindSpec", "CallCheck", "CallView", "AnswerCheck", "AnswerView", "Delivery", "KINDS", "register",
           "kind_class", "spec_of", "limit_learner", "learner_of", "contrast_learners"]

Scope = Literal["its_tool", "any_tool", "unknown_tool"]
"""Which tool calls a lesson's call check reads."""

Delivery = Literal["prompt", "tool"]
"""Where a kind's lessons reach the model: in the skills block of the prompt, or, in addition,
at the tool call that breaks them (a reminder that asks the model to act; the call is not run)."""

class CallView(Protocol):
    """What a call check may ask of one tool call (the adapters implement it)."""

    @property
    def tool(self) -> str:
        """The name the model called."""

    @property
    def args(self) -> Any:
        """The arguments the model passed, as it passed them."""

    @property
    def offered(self) -> bool:
        """Whether the agent has a tool of that name."""

    @property
    def said(self) -> str:
        """Everything the user said in the run so far."""

    @property
    def today(self) -> Any:
        """The date the agent takes as today (``datetime.date``)."""

    def declared(self, name: str) -> frozenset[str] | None:
        """The parameters the agent's tool ``name`` declares (``None``: not known)."""

    def tool_ran(self, name: str) -> bool:
        """Whether ``name`` has run in this run."""

    def ran_before(self) -> bool:
        """Whether an identical call (same tool, same arguments) already ran in this run."""

    def undeclared(self) -> set[str]:
        """Arguments the tool's schema does not declare."""

    def guessed(self, parameter: str | None) -> bool:
        """Whether the call passes a value (``parameter``'s, or any) that nothing the user said
        or a tool returned in this run holds: a value the model made up."""


@dataclass(frozen=True)
class CallCheck:
    """How a tool call breaks a kind's lesson, and what the model is told instead of the result.

    ``scope(lesson)`` says which calls are checked (:data:`Scope`): ``"its_tool"`` (calls of the
    tool the lesson names), ``"any_tool"`` (every call), ``"unknown_tool"`` (calls of a tool the
    agent lacks), or ``None`` (this lesson is not checked at the tool). ``breaks(lesson, call)`` decides;
    ``reminder(lesson, call)`` is the next step the model is asked to take (never a value the
    library worked out for it). ``never_held(lesson)`` names tools whose calls are never held back
    (a check the lesson asks for).
    """

    # Each callable takes a lesson of the kind's own class (typed Any: one spec per class).
    scope: Callable[[Any], str | None]
    breaks: Callable[[Any, CallView], bool]
    reminder: Callable[[Any, CallView], str]
    never_held: Callable[[Any], tuple[str, ...]] = lambda lesson: ()
    holds_turn: bool = False  # answer every call of the model's turn with the reminder


class AnswerView(Protocol):
    """What an answer check may ask of a final reply and the run it ends (the adapters implement it)."""

    @property
    def text(self) -> str:
        """The reply's text."""

    @property
    def said(self) -> str:
        """Everything the user said in the run, their messages joined by spaces."""

    def results(self, tool: str | None = None) -> Sequence[str]:
        """The text of every tool result of the run (of ``tool``'s calls only, when given), in order."""

    def offered(self, tool: str) -> bool:
        """Whether the agent has a tool of that name."""

    def called(self, tool: str) -> bool:
        """Whether the model called ``tool`` in this run."""


@dataclass(frozen=True)
class AnswerCheck:
    """How a final reply breaks a kind's lesson, and what the model is told before it stands.

    ``note(lesson, answer)`` is the note the model reads with its draft when the reply breaks the
    lesson: the next step it is asked to take (answer again as the lesson says, call the tool the
    number comes from), never an answer or a value the library worked out for it; ``None`` when
    the reply does not break it. ``reason`` names the check in the run's record
    (``"raw number"``). A kind's checks are asked in order, before the reply is checked for a
    call it describes instead of making (``KindSpec.tools_to_call``).
    """

    reason: str
    # Takes a lesson of the kind's own class (typed Any: one spec per class).
    note: Callable[[Any, AnswerView], str | None]


@dataclass(frozen=True)
class KindSpec:
    """Everything one lesson kind knows, in one place."""

    kind: LessonKind | str  # a built-in kind, or a plug-in's own name
    cls: type[Lesson]
    section: str  # the heading of the skill body's section its sentence goes in
    sentence: Callable[[Any], str]  # the lesson as one imperative sentence (or a few lines)
    advice: Callable[[Any], str | None] = lambda lesson: None  # one sentence of why, after it
    # Where it reaches the model unless the user says otherwise ("tool" needs a call check; a
    # kind whose check reads the user's words in one language stays "prompt" by default).
    delivery: Delivery = "prompt"
    call_check: CallCheck | None = None
    tools_to_call: Callable[[Any], tuple[str, ...]] = lambda lesson: ()  # tools it says to call, in order
    limit_learner: LimitLearner | None = None  # how evolution learns it from a limit situation
    # How evolution learns it from what successes did and failures did not.
    contrast_learner: ContrastLearner | None = None
    answer_checks: tuple[AnswerCheck, ...] = ()  # how a final reply breaks it

    @property
    def name(self) -> str:
        """The kind's name, as stored (``"budget"``)."""
        return _name(self.kind)


KINDS: dict[str, KindSpec] = {}
"""Every registered kind's spec, by the kind's name (``"budget"``)."""


def _name(kind: LessonKind | str) -> str:
    return kind.value if isinstance(kind, LessonKind) else str(kind)


def register(spec: KindSpec) -> KindSpec:
    """Add ``spec`` to the registry (once per kind).

    Raises:
        ValueError: the kind is registered already, its class's ``kind`` default is another
            kind, it is delivered at the tool without a call check, or its limit learner learns
            from a family another kind's learner learns from.
    """
    name = _name(spec.kind)
    if name in KINDS and KINDS[name] is not spec:
        raise ValueError(f"lesson kind {name!r} is registered twice")
    default = spec.cls.model_fields["kind"].default
    if _name(default) != name:
        raise ValueError(f"the class of lesson kind {name!r} must default its kind to {name!r}")
    if spec.delivery == "tool" and spec.call_check is None:
        raise ValueError(f"lesson kind {name!r} is delivered at the tool but has no call check")
    if spec.limit_learner is not None:
        taken = {family: other for other, spec_other in KINDS.items() if spec_other is not spec
                 and spec_other.limit_learner is not None for family in spec_other.limit_learner.families}
        shared = [f for f in spec.limit_learner.families if f in taken]
        if shared:
            raise ValueError(f"lesson kind {name!r} learns from the limit family {shared[0]!r}, which lesson "
                             f"kind {taken[shared[0]]!r} learns from already; one kind learns from each family")
    KINDS[name] = spec
    CLASSES[name] = spec.cls
    return spec


def spec_of(kind: LessonKind | str) -> KindSpec:
    """The registered spec of ``kind``.

    Raises:
        ValueError: ``kind`` is no registered lesson kind.
    """
    spec = KINDS.get(_name(kind))
    if spec is None:
        raise ValueError(f"unknown lesson kind {_name(kind)!r}; the kinds are: {', '.join(KINDS)}")
    return spec


def kind_class(kind: LessonKind | str) -> type[Lesson]:
    """The class of ``kind``'s lessons."""
    return spec_of(kind).cls


def learner_of(family: str) -> LimitLearner | None:
    """The registered learner of the limit situation family ``family`` (``None``: no kind learns
    from it, so it teaches nothing)."""
    for spec in KINDS.values():
        if spec.limit_learner is not None and family in spec.limit_learner.families:
            return spec.limit_learner  # register() lets one kind only learn from a family
    return None


def limit_learner(sit: LimitSituation) -> LimitLearner:
    """The one registered learner that takes the limit situation ``sit``.

    Raises:
        ValueError: no registered kind learns from ``sit``'s family (register a kind whose
            ``limit_learner`` lists it).
    """
    learner = learner_of(sit.family)
    if learner is not None:
        return learner
    raise ValueError(f"no lesson kind learns from the limit situation family {sit.family!r} "
                     f"(tool {sit.tool!r}, detail {sit.detail!r}); register a kind whose limit learner lists it")


def contrast_learners(opt_in: bool = False) -> list[ContrastLearner]:
    """Every registered kind's contrast learner, in the order the kinds were registered; the
    opt-in ones (``ContrastLearner.opt_in``) only with ``opt_in``."""
    return [spec.contrast_learner for spec in KINDS.values()
            if spec.contrast_learner is not None and (opt_in or not spec.contrast_learner.opt_in)]
