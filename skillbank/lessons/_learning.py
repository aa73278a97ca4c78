"""How evolution learns a kind from runs: the seams between evolution and a kind.

Two ways, each a learner on the kind's ``KindSpec``:

- **From a limit situation.** Evolution groups the limit events of runs into *situations* (a
  family, such as ``"missing_tool"`` or ``"budget:steps"``, plus the tool and detail it is
  about). What a situation teaches is up to the kind that learns from its family: a kind's
  :class:`LimitLearner` names the families it learns from and says which lessons the situation
  teaches, how its guard skill is named and described, and how what happened reads in a round's
  report. It reads a situation through :class:`LimitSituation`.
- **From the contrast of successes and failures.** For the runs of one kind of request,
  evolution asks every kind's :class:`ContrastLearner` what the successes did that the failures
  did not (an answer in the user's unit, the time the user said): ``[(lesson, why)]``. It reads
  the runs through :class:`ContrastRun`.

So a kind module never imports the evolution layer (which sits above the lessons package):
evolution's ``Situation`` and ``Run`` satisfy these protocols structurally.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import AbstractSet, Any, Callable, Literal, Protocol, Sequence

from skillbank.lessons._base import Lesson

__all__ = ["LimitSituation", "LimitLearner", "RunCalls", "CallKey", "ContrastLearner", "ContrastRun",
           "ContrastCall"]

SkillKindName = Literal["guard", "policy", "pitfall"]
"""The kind of skill a learner's guard is (a ``skillbank.models.SkillKind`` value)."""


class CallKey(Protocol):
    """One tool call of a run, as far as a learner reads it."""

    @property
    def key(self) -> tuple[str, str]:
        """The tool's name and the call's arguments as canonical JSON: equal for identical calls."""


class RunCalls(Protocol):
    """One run of a situation's evidence, as far as a learner reads it."""

    @property
    def calls(self) -> Sequence[CallKey]:
        """The run's tool calls, in order."""


class LimitSituation(Protocol):
    """What a limit learner may read of a situation (evolution's ``Situation`` implements it)."""

    @property
    def family(self) -> str:
        """A capability limit type's value (``"missing_tool"``), ``"budget:<budget>"``
        (``"budget:steps"``, ``"budget:tokens"``, ``"budget:time"``), or a family evolution derives
        (``"wrong_tool_name"``, ``"check_first"``)."""

    @property
    def tool(self) -> str | None:
        """The tool the situation is about (for a budget: the one runs kept repeating), if any."""

    @property
    def detail(self) -> str | None:
        """The field or parameter it is about, or the tool to call first (``check_first``)."""

    @property
    def limit(self) -> int | None:
        """The smallest budget the runs hit, where recorded."""

    @property
    def hit_type(self) -> str | None:
        """The limit type (a ``LimitType`` value) hit most often in the situation, if any."""

    @property
    def called(self) -> AbstractSet[str]:
        """The names runs called instead of the tool (``wrong_tool_name``)."""

    @property
    def failures(self) -> Sequence[RunCalls]:
        """The failed runs that hit the limit."""

    @property
    def successes(self) -> Sequence[RunCalls]:
        """The successful runs that hit the limit (coped with it) or came close to a budget."""


@dataclass(frozen=True)
class LimitLearner:
    """How evolution learns from a limit situation of one of ``families``.

    For a situation of one of its ``families``:

    - ``lessons(sit)``: the lessons the guard teaches (its whole content; any kinds);
    - ``name(sit, tool, detail)``: the guard's name as parts, given the tool and detail already
      slugged (``None`` parts are dropped; evolution joins and fits them);
    - ``what_happened(sit)``: what the runs ran into, for a round's report
      (``"`open_window` was unavailable"``; evolution adds the counts of runs);
    - ``description(sit, tool)``: the guard's description (when it applies), given the tool as
      the description names it (```` `get_status` (get status) ````); evolution adds the
      requests it was seen with;
    - ``skill_kind``: the kind of skill the guard is.

    No two learners may learn from the same family.
    """

    families: tuple[str, ...]
    lessons: Callable[[LimitSituation], list[Lesson]]
    name: Callable[[LimitSituation, str | None, str | None], list[str | None]]
    what_happened: Callable[[LimitSituation], str]
    description: Callable[[LimitSituation, str], str]
    skill_kind: SkillKindName = "guard"


# -- from the contrast of successes and failures ------------------------------------------------


class ContrastCall(Protocol):
    """One tool call of a run, as far as a contrast learner reads it."""

    @property
    def tool(self) -> str:
        """The name the model called."""

    @property
    def args(self) -> Any:
        """The arguments the model passed, as recorded (a mapping of parameter to value)."""

    @property
    def ok(self) -> bool:
        """Whether the call ran without an error."""

    @property
    def result(self) -> str | None:
        """What the tool returned, as text (``None``: nothing was recorded)."""


class ContrastRun(Protocol):
    """One run of a kind of request, as far as a contrast learner reads it (evolution's ``Run``
    implements it)."""

    @property
    def task(self) -> str:
        """The request, as the user wrote it."""

    @property
    def today(self) -> dt.date | None:
        """The date the run took as today (``None``: not recorded)."""

    @property
    def calls(self) -> Sequence[ContrastCall]:
        """The run's tool calls, in order."""

    @property
    def answer(self) -> str | None:
        """The run's final reply to the user."""


@dataclass(frozen=True)
class ContrastLearner:
    """How evolution learns a kind from what a kind of request's successes did that its failures
    did not.

    - ``learn(successes, failures, min_support)``: ``[(lesson, why)]``, each lesson with one
      sentence of why it was learned (counts of runs, for a round's report). A lesson needs at
      least ``min_support`` successes behind it, and a cause: what the failures did differently.
    - ``explains(lesson, tool, parameter, value)``: whether one of the learner's lessons explains
      a value a call of ``tool`` passed as ``parameter`` (the value as a step of the runs' method
      holds it: text, the request's own words blanked). A pitfall about a call whose telling
      value a lesson explains would only be the same mistake seen as a correlation, so evolution
      does not propose it beside the lesson. A learner with ``explains`` is asked before the
      pitfalls are contrasted, and its lessons come before them; the others' come after every
      contrast of calls (checks, questions, pitfalls, repeated calls).
    - ``opt_in``: learned only when the round asks for it (``EvolutionConfig.learn_stated_values``):
      the learner reads the user's words with a grammar of one language.

    Learners are asked in the order their kinds are registered.
    """

    learn: Callable[[Sequence[ContrastRun], Sequence[ContrastRun], int], list[tuple[Lesson, str]]]
    # Takes a lesson of the kind's own class (typed Any: one learner per class).
    explains: Callable[[Any, str, str, Any], bool] | None = None
    opt_in: bool = False
