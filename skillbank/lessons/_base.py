"""The shape every lesson shares: its kind, worked examples, identity, and the stored form.

A lesson is one instance of a kind class (``skillbank.lessons._kinds``), each holding only its own
fields. :class:`Lesson` is their common base: ``Lesson(kind=..., **fields)`` builds the class the
kind names, ``isinstance(x, Lesson)`` holds for every kind, and :data:`AnyLesson` is the
discriminated union to annotate a field with or parse stored data by (:func:`parse_lesson`).

The stored (and hashed) form of every lesson has the same keys whatever its kind: ``kind``,
``tool``, ``check``, ``parameter``, ``field``, ``steps``, ``budget``, ``avoid`` and ``text``
(``None`` or empty where a kind has no such field), plus ``scale`` and ``examples`` only when set.
So a version's content hash does not depend on which kinds exist. Reading such a field on a kind
without it gives its empty value (``None``, or ``()`` for ``steps``), so code that looks at any
lesson's tool or steps needs no branch per kind.
"""

from __future__ import annotations

from enum import Enum
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, Field, SerializationInfo, model_serializer, model_validator

from skillbank._hashing import canonical_json

__all__ = ["LessonKind", "MethodStep", "Example", "Lesson", "STORED_FIELDS", "class_of", "CLASSES"]


class LessonKind(str, Enum):
    """Every kind a lesson can be; each has one module in :mod:`skillbank.lessons._kinds`.

    Attributes:
        procedure: the method: each step a tool and the shape of its arguments.
        check_first: call ``check`` before ``tool``.
        missing_tool: ``tool`` may be missing (learnt from a ``missing_tool`` limit).
        missing_parameter: ``tool`` may lack ``parameter``.
        ask_for: ask the user for ``parameter`` of ``tool`` rather than guess it.
        unknown_field: ``tool`` may return ``field`` as unknown.
        budget: finish within ``budget`` tool calls.
        pitfall: avoid one thing: skipping ``tool``, calling it (in a step's shape), or repeating calls.
        guidance: free advice in a person's (or a model's) own words.
        tool_error: ``tool`` may fail: retry once, then report it.
        policy: check that policy allows ``tool`` before acting.
        wrong_tool_name: call ``tool`` by its exact name.
        no_tool: call no tool: the request asks for nothing a tool does.
        answer_unit: give ``field`` of ``tool``'s result divided by ``scale``, never the raw number.
        stated_time: pass ``parameter`` of ``tool`` as the clock time the user said.
        stated_date: pass ``parameter`` of ``tool`` as the date the user said.
    """

    procedure = "procedure"
    check_first = "check_first"
    missing_tool = "missing_tool"
    missing_parameter = "missing_parameter"
    ask_for = "ask_for"
    unknown_field = "unknown_field"
    budget = "budget"
    pitfall = "pitfall"
    guidance = "guidance"
    tool_error = "tool_error"
    policy = "policy"
    wrong_tool_name = "wrong_tool_name"
    no_tool = "no_tool"
    answer_unit = "answer_unit"
    stated_time = "stated_time"
    stated_date = "stated_date"


# The keys every stored lesson has, and their value when its kind has no such field.
STORED_FIELDS: dict[str, Any] = {"tool": None, "check": None, "parameter": None, "field": None,
                                 "steps": (), "budget": None, "avoid": None, "text": None}


class MethodStep(BaseModel):
    """One step of a method: a tool and the shape of its arguments.

    ``args`` maps a parameter to its value's shape: a literal the successes all passed
    (``"open"``), a placeholder for a value that changes with the request (``"<order_id>"``), or
    a template mixing both (``"take <value_1> from <value_2>"``). ``sources`` says where a
    placeholder's value comes from: ``"request"`` or the name of an earlier step's tool, keyed by
    parameter for a whole-value placeholder and by slot (``"value_1"``) for a numbered one.
    """

    model_config = ConfigDict(frozen=True)

    tool: str
    args: dict[str, str] = Field(default_factory=dict)
    sources: dict[str, str] = Field(default_factory=dict)

    @property
    def shape(self) -> str:
        """The step as one comparable string (tool and argument shapes)."""
        return canonical_json([self.tool, self.args])


class Example(BaseModel):
    """One successful run of a lesson, compact: the request's shape, the calls with their
    argument shapes (``MethodStep``: placeholders say where a value came from), the key result
    (``result_tool`` returned ``result``: field -> value shape) and the answer's shape. Every
    instance value (ids, names, numbers, e-mail addresses, dates, the request's free text) is a
    placeholder."""

    model_config = ConfigDict(frozen=True)

    request: str
    calls: tuple[MethodStep, ...] = ()
    result_tool: str | None = None
    result: dict[str, str] = Field(default_factory=dict)
    answer: str | None = None


class Lesson(BaseModel):
    """One thing a skill teaches: the base of every kind class.

    ``Lesson(kind="budget", budget=4)`` returns the kind's own class (``Budget``); a field the
    kind does not have is refused. Each kind class adds its own fields (``Budget.budget``,
    ``CheckFirst.check`` and ``.tool``, ...).

    Attributes:
        kind: which kind of lesson this is (fixed by the kind class).
        examples: compact demonstrations from successful runs (procedure and check_first lessons);
            not part of the lesson's identity (:attr:`key`).
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    kind: LessonKind
    examples: tuple[Example, ...] = Field(default=(), exclude_if=lambda examples: not examples)

    # Set by each kind class: whether the lesson can name no tool and hold for every tool.
    generalisable: ClassVar[bool] = False

    def __new__(cls, *args: Any, **data: Any) -> "Lesson":
        if cls is Lesson and "kind" in data:
            return super().__new__(class_of(data["kind"]))
        return super().__new__(cls)

    def __getattr__(self, name: str) -> Any:
        if name in STORED_FIELDS:
            return STORED_FIELDS[name]
        return super().__getattr__(name)  # type: ignore[misc]

    @model_validator(mode="before")
    @classmethod
    def _from_stored_form(cls, data: Any) -> Any:
        """Stored lessons carry every key of :data:`STORED_FIELDS`: drop the empty ones this kind
        does not have (a non-empty one is refused as a field the kind does not take)."""
        if not isinstance(data, dict):
            return data
        own = cls.model_fields
        return {k: v for k, v in data.items()
                if k in own or k not in STORED_FIELDS or not (v is None or v == () or v == [])}

    @model_serializer(mode="wrap")
    def _stored_form(self, handler: Any, info: SerializationInfo) -> Any:
        data = handler(self)
        if not isinstance(data, dict) or info.exclude_defaults or info.exclude_unset:
            return data
        excluded = info.exclude or set()
        for name, empty in STORED_FIELDS.items():
            if name not in data and name not in excluded:
                data[name] = [] if (empty == () and info.mode == "json") else empty
        return data

    @property
    def key(self) -> str:
        """Identity: two lessons with the same key teach the same thing (examples aside)."""
        data = self.model_dump(mode="json", exclude_defaults=True, exclude={"examples"})
        return canonical_json({**data, "kind": self.model_dump(mode="json", include={"kind"})["kind"]})

    @property
    def general(self) -> bool:
        """The general form of a generalisable lesson (no tool named)."""
        return self.generalisable and self.tool is None

    def covers(self, other: "Lesson") -> bool:
        """Whether this lesson says ``other`` too: equal, or its general form.

        Args:
            other: Another lesson.

        Returns:
            ``True`` when the two have the same :attr:`key`, or this one is :attr:`general` and
            of ``other``'s kind.
        """
        if self.key == other.key:
            return True
        return self.general and other.kind == self.kind

    def tools(self) -> set[str]:
        """Every tool the lesson names.

        Returns:
            Its ``tool``, its ``check`` and each step's tool, those that are set.
        """
        out = {t for t in (self.tool, self.check) if t}
        out.update(step.tool for step in self.steps)
        return out


CLASSES: dict[str, type[Lesson]] = {}
"""Each registered kind's class, by the kind's name (filled by the registry)."""


def class_of(kind: LessonKind | str) -> type[Lesson]:
    """The class of ``kind``'s lessons.

    Raises:
        ValueError: ``kind`` is no registered lesson kind.
    """
    name = kind.value if isinstance(kind, LessonKind) else str(kind)
    cls = CLASSES.get(name)
    if cls is None:
        raise ValueError(f"unknown lesson kind {name!r}; the kinds are: {', '.join(CLASSES)}")
    return cls
