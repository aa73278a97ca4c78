"""How evolution learns a kind from a limit situation: the seam between evolution and a kind.

Evolution groups the limit events of runs into *situations* (a family, such as
``"missing_tool"`` or ``"budget:steps"``, plus the tool and detail it is about). What a situation
teaches is up to the kind that learns from its family: a kind's :class:`LimitLearner` (on its
``KindSpec``) names the families it learns from and says which lessons the situation teaches,
how its guard skill is named and described, and how what happened reads in a round's report.

A learner reads a situation only through :class:`LimitSituation`, so a kind module never imports
the evolution layer (which sits above the lessons package).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import AbstractSet, Callable, Literal, Protocol, Sequence

from skillbank.lessons._base import Lesson

__all__ = ["LimitSituation", "LimitLearner", "RunCalls", "CallKey"]

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
