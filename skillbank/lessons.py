"""Lessons: what a skill teaches, as typed data, and the one place they become prose.

A skill version carries its lessons (``SkillContent.lessons``); its body is rendered from them
here and nowhere else. Every evolution step (contrast, guards, generalisation, de-duplication,
merge, lint) works on lessons, never by reading prose back. A skill a person wrote, or imported,
without structured lessons holds one *guidance* lesson: its text (``SkillContent.all_lessons``).

Kinds, with the fields each uses:

=================  ===========================================================================
procedure          ``steps``: the method, each step a tool and the shape of its arguments
check_first        ``check`` before ``tool`` (both ``None``: follow every check a tool's
                   description asks for)
missing_tool       ``tool`` may be missing (``None``: any tool)
missing_parameter  ``tool`` may lack ``parameter`` (both ``None``: any)
ask_for            ask for ``parameter`` of ``tool`` rather than guess (``parameter`` ``None``:
                   any value of ``tool``; both ``None``: any value of any tool)
unknown_field      ``tool`` may return ``field`` as unknown (both ``None``: any)
budget             finish within ``budget`` tool calls (``tool``: the one runs kept repeating)
pitfall            ``avoid``: ``skip`` ``tool``, ``call`` ``tool`` (with ``steps``: a call of that
                   shape), ``repeat`` identical calls
guidance           ``text``: free advice in a person's (or a model's) own words
tool_error         ``tool`` may fail: retry once, then report it
policy             check that policy allows ``tool`` (``None``: the request) before acting
wrong_tool_name    call ``tool`` by its exact name (runs called it by a name that is not a
                   tool; that name is never stored or shown)
no_tool            call no tool: the request (small talk, thanks, a compliment) asks for
                   nothing a tool does; no field (a statement about no tool, so it holds in
                   any toolset)
answer_unit        give ``field`` of ``tool``'s result divided by ``scale`` (cents as euros,
                   grams as kilograms, minutes as hours), never the raw number
stated_time        pass ``parameter`` of ``tool`` as the clock time the user said, on the
                   24-hour clock ("a quarter past two" is 14:15), never another time
stated_date        pass ``parameter`` of ``tool`` as the date the user said, counted from the
                   run's today ("the day after tomorrow" is today plus two days), never another
=================  ===========================================================================

The sentences are ordinary imperative English, one per lesson, so the same text serves a real
model and a person. Statistics and evidence live in a version's provenance, never here.

A procedure or check_first lesson may carry ``examples``: compact demonstrations from
successful runs (:class:`Example`), instance values replaced by placeholders. They are not part
of the body (nor of the lesson's identity, ``key``): the injector renders the one whose request
is closest to the current one (``InjectionConfig.examples``), with :func:`example_text`.
"""

from __future__ import annotations

import re
from enum import Enum
from typing import Any, Callable, Iterable, Literal, Sequence

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from skillbank.hashing import canonical_json
from skillbank.units import scaled

__all__ = ["LessonKind", "MethodStep", "Example", "Lesson", "GENERALISABLE", "sentence", "render_body",
           "general_form", "lesson_tools", "scrub_lesson", "example_text", "SECTIONS"]


class LessonKind(str, Enum):
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


# Lessons that have a general form naming no tool: learned for several tools, they become one.
GENERALISABLE = frozenset({LessonKind.check_first, LessonKind.missing_tool, LessonKind.missing_parameter,
                           LessonKind.ask_for, LessonKind.unknown_field})


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
    """One thing a skill teaches; see the module docstring for the fields each kind uses."""

    model_config = ConfigDict(frozen=True)

    kind: LessonKind
    tool: str | None = None
    check: str | None = None
    parameter: str | None = None
    field: str | None = None
    steps: tuple[MethodStep, ...] = ()
    budget: int | None = None
    avoid: Literal["skip", "call", "repeat"] | None = None
    text: str | None = None
    # answer_unit's divisor. Like examples, left out of the dump when unset, so every lesson
    # written before it existed hashes as it did.
    scale: int | None = Field(default=None, exclude_if=lambda scale: scale is None)
    # Lessons without examples dump (and so hash and store) exactly as before examples existed.
    examples: tuple[Example, ...] = Field(default=(), exclude_if=lambda examples: not examples)

    @field_validator("text")
    @classmethod
    def _text(cls, v: str | None) -> str | None:
        return " ".join(v.split()) if v is not None else None

    @model_validator(mode="after")
    def _fits_kind(self) -> "Lesson":
        k = self.kind
        problem = None
        if k == LessonKind.procedure and not self.steps:
            problem = "a procedure needs at least one step"
        elif k == LessonKind.check_first and (self.check is None) != (self.tool is None):
            problem = "check_first takes both a check and a tool, or neither for the general form"
        elif k == LessonKind.missing_parameter and (self.tool is None) != (self.parameter is None):
            problem = "missing_parameter takes a tool and a parameter, or neither"
        elif k == LessonKind.ask_for and self.parameter is not None and self.tool is None:
            problem = "ask_for names a parameter only together with its tool"
        elif k == LessonKind.unknown_field and (self.tool is None) != (self.field is None):
            problem = "unknown_field takes a tool and a field, or neither"
        elif k == LessonKind.budget and (self.budget is None or self.budget < 1):
            problem = "a budget lesson needs a budget of at least one tool call"
        elif k == LessonKind.pitfall and (self.avoid is None or (self.avoid != "repeat" and not self.tool)):
            problem = "a pitfall needs what to avoid (skip, call or repeat) and, unless repeat, a tool"
        elif k == LessonKind.guidance and not self.text:
            problem = "guidance needs its text"
        elif k == LessonKind.tool_error and not self.tool:
            problem = "a tool_error lesson names its tool"
        elif k == LessonKind.wrong_tool_name and not self.tool:
            problem = "a wrong_tool_name lesson names the tool to call"
        elif k == LessonKind.no_tool and (self.tool or self.check or self.parameter or self.steps):
            problem = "a no_tool lesson names no tool"
        elif k == LessonKind.answer_unit and not (self.tool and self.field and self.scale and self.scale > 1):
            problem = "an answer_unit lesson names its tool, its field and a scale above 1"
        elif k in (LessonKind.stated_time, LessonKind.stated_date) and not (self.tool and self.parameter):
            problem = f"a {k.value} lesson names its tool and the parameter that takes the {k.value[7:]}"
        elif k != LessonKind.answer_unit and self.scale is not None:
            problem = "only an answer_unit lesson has a scale"
        if problem:
            raise ValueError(problem)
        return self

    @property
    def key(self) -> str:
        """Identity: two lessons with the same key teach the same thing (examples aside)."""
        return canonical_json(self.model_dump(mode="json", exclude_defaults=True, exclude={"examples"}))

    @property
    def general(self) -> bool:
        """The general form of a generalisable lesson (no tool named)."""
        return self.kind in GENERALISABLE and self.tool is None

    def covers(self, other: "Lesson") -> bool:
        """Whether this lesson says ``other`` too: equal, or its general form."""
        if self.key == other.key:
            return True
        return self.general and other.kind == self.kind

    def tools(self) -> set[str]:
        return lesson_tools([self])


def lesson_tools(lessons: Iterable[Lesson]) -> set[str]:
    """Every tool the lessons name."""
    out: set[str] = set()
    for lesson in lessons:
        out.update(t for t in (lesson.tool, lesson.check) if t)
        out.update(step.tool for step in lesson.steps)
    return out


def scrub_lesson(lesson: Any, scrubber: Callable[[str], str]) -> Lesson:
    """``lesson`` (a ``Lesson`` or its dict) with every free text in it passed through ``scrubber``."""
    lesson = lesson if isinstance(lesson, Lesson) else Lesson.model_validate(lesson)
    steps = tuple(step.model_copy(update={"args": {k: scrubber(v) for k, v in step.args.items()}})
                  for step in lesson.steps)
    text = scrubber(lesson.text) if lesson.text else lesson.text
    return lesson.model_copy(update={"steps": steps, "text": text})


def general_form(lesson: Lesson) -> Lesson | None:
    """The general lesson a specific one is an instance of (``None`` if it has none)."""
    if lesson.kind not in GENERALISABLE or lesson.general:
        return None
    return Lesson(kind=lesson.kind)


# -- rendering: the one place lessons become prose --------------------------------------------------


def _t(name: str | None) -> str:
    return f"`{name}`"


_ORDINALS = ("first", "second", "third", "fourth", "fifth")


def _nth_in_request(param: str, shape: str) -> str | None:
    """``<room_2>`` for ``room``: "the second `room` the request names" (values apart by role)."""
    found = re.fullmatch(rf"<{re.escape(param.lower())}_(\d+)>", shape)
    if found is None:
        return None
    n = int(found.group(1))
    return f"the {_ORDINALS[n - 1] if n <= len(_ORDINALS) else f'number {n}'} `{param}` the request names"


def _step_text(step: MethodStep, verb: str = "Call") -> str:
    args = []
    for param, shape in step.args.items():
        value = f"`{shape}`" if not (shape.startswith("<") and shape.endswith(">")) else shape
        source = step.sources.get(param)
        if source == "request":
            value += f" ({_nth_in_request(param, shape) or 'from the request'})"
        elif source:
            value += f" (from the result of `{source}`)"
        args.append(f"`{param}`={value}")
    # Where the numbered slots inside argument templates come from ("take <value_1>").
    by_source: dict[str, list[str]] = {}
    for slot in dict.fromkeys(re.findall(r"<(value_\d+)>", " ".join(step.args.values()))):
        if slot in step.sources:
            by_source.setdefault(step.sources[slot], []).append(f"<{slot}>")
    origins = "; ".join(", ".join(slots) + (" from the request" if source == "request"
                                             else f" from the result of `{source}`")
                        for source, slots in by_source.items())
    return (f"{verb} `{step.tool}`" + (" with " + ", ".join(args) if args else "")
            + (f" ({origins})" if origins else ""))


def sentence(lesson: Lesson) -> str:
    """The lesson as one imperative sentence (a procedure: its steps, one per line)."""
    k, t = lesson.kind, lesson.tool
    if k == LessonKind.procedure:
        tools = [s.tool for s in lesson.steps]
        lines = []
        if len(set(tools)) >= 2:
            order = list(dict.fromkeys(_collapse(tools)))
            if order == _collapse(tools):
                lines.append("Call the tools in this order: " + ", then ".join(map(_t, order)) + ".")
        lines += [f"{i}. {_step_text(s)}." for i, s in enumerate(lesson.steps, 1)]
        lines.append("Then answer the user with the results.")
        return "\n".join(lines)
    if k == LessonKind.check_first:
        if t is None:
            return ("Before calling a tool, always call every tool its description says to call first, "
                    "even when the request seems clear.")
        return f"Always call {_t(lesson.check)} before {_t(t)}."
    if k == LessonKind.missing_tool:
        if t is None:
            return ("If the request needs a tool that is not among your tools, do not call it: do the rest "
                    "of the request, then tell the user which tool is unavailable, by name.")
        return (f"If {_t(t)} is not among your tools, do not call it: do the rest of the request, then "
                f"tell the user that {_t(t)} is unavailable.")
    if k == LessonKind.missing_parameter:
        if t is None:
            return ("If the request needs a setting that the tool has no parameter for, do not pass it: do "
                    "the rest of the request, then tell the user which parameter is missing, by name.")
        return (f"If {_t(t)} has no {_t(lesson.parameter)} parameter, do not pass it: do the rest of the "
                f"request, then tell the user that {_t(lesson.parameter)} cannot be set.")
    if k == LessonKind.ask_for:
        if lesson.parameter is None:
            whose = _t(t) if t else "a tool"
            return (f"If the request does not state every value {whose} needs unambiguously, ask the user "
                    "instead of guessing.")
        return (f"If the request does not state {_t(lesson.parameter)} for {_t(t)} unambiguously, ask the "
                f"user for {_t(lesson.parameter)} instead of guessing.")
    if k == LessonKind.unknown_field:
        if t is None:
            return ("If a tool returns a field as unknown or null, do not invent a value: tell the user "
                    "which field is unknown.")
        return (f"If {_t(t)} returns {_t(lesson.field)} as unknown or null, do not invent a value: tell "
                f"the user that {_t(lesson.field)} is unknown.")
    if k == LessonKind.budget:
        text = (f"Finish within {lesson.budget} tool calls: never repeat a call with the same arguments, "
                "and answer as soon as the needed facts are known.")
        if t:
            text += (f" Do not keep calling {_t(t)}: if two calls did not find it, a third will not; answer "
                     "with what is known and say what is still missing.")
        return text
    if k == LessonKind.pitfall:
        if lesson.avoid == "repeat":
            return ("Never repeat a tool call with the same arguments: if it did not help, change the "
                    "arguments or answer with what is known.")
        if lesson.avoid == "skip":
            return f"Do not skip {_t(t)}: every successful run called it."
        if lesson.steps:
            return (f"Do not {_step_text(lesson.steps[0], 'call')}: runs that did failed and no "
                    "successful run did.")
        return (f"Do not call {_t(t)} for this kind of request: runs that called it failed and no "
                "successful run needed it.")
    if k == LessonKind.tool_error:
        return (f"If {_t(t)} returns an error, retry at most once with corrected arguments; if it fails "
                f"again, do the rest of the request and tell the user that {_t(t)} failed.")
    if k == LessonKind.wrong_tool_name:
        return (f"To do this, call {_t(t)} by exactly that name: a tool name that is not among your "
                "tools fails.")
    if k == LessonKind.no_tool:
        return ("If the user only makes conversation and asks for nothing a tool does, call no tool: "
                "reply in one or two sentences.")
    if k == LessonKind.answer_unit:
        return (f"When {_t(t)} returns {_t(lesson.field)}, tell the user that number divided by "
                f"{lesson.scale} (for example {lesson.scale * 3 // 4} is "
                f"{scaled(lesson.scale * 3 // 4, lesson.scale)}), never the raw number.")
    if k == LessonKind.stated_time:
        return (f"Pass {_t(lesson.parameter)} to {_t(t)} as the clock time the user said, on the 24-hour "
                "clock (for example, twenty to nine in the evening is 20:40), never another time.")
    if k == LessonKind.stated_date:
        return (f"Pass {_t(lesson.parameter)} to {_t(t)} as the date the user said, counted from today's "
                "date (\"the day after tomorrow\" is today plus two days), never another date.")
    if k == LessonKind.policy:
        subject = _t(t) if t else "an action"
        return (f"Before calling {subject}, check that policy allows it for this request; if it does not, "
                "decline that part, state the rule in one sentence and do the rest.")
    return lesson.text or ""


def example_text(example: Example) -> str:
    """A worked example as the model reads it: a few short lines."""
    lines = [f"Example, for a request like \"{example.request}\":"]
    for i, step in enumerate(example.calls, 1):
        line = f"{i}. {_step_text(step)}"
        if step.tool == example.result_tool and example.result and \
                not any(s.tool == step.tool for s in example.calls[: i - 1]):
            shown = ", ".join(f"`{k}`=" + (v if v.startswith("<") else f"`{v}`") for k, v in example.result.items())
            line += f"; it returned {shown}"
        lines.append(line + ".")
    if example.answer:
        lines.append(f"Then the answer: \"{example.answer}\"")
    return "\n".join(lines)


# Prose a person (or a real model) gets after a general lesson: why, in one sentence.
_GENERAL_ADVICE = {
    LessonKind.check_first: "A skipped check fails the request even when the action itself succeeds; the "
                            "check's result decides whether to act at all.",
    LessonKind.missing_tool: "Do not claim the step was done and do not substitute a different tool; the "
                             "missing tool's name is the blocker to report.",
    LessonKind.missing_parameter: "Do not pass an argument the tool's schema does not declare (it is dropped "
                                  "silently) and do not claim that part was done.",
    LessonKind.unknown_field: "Answer the parts that are known and name the unknown field as the blocker.",
    LessonKind.ask_for: "A guessed value is a wrong action the user must undo; ask once, then act on the answer.",
}
_SPECIFIC_ADVICE = {
    LessonKind.missing_tool: "Do not claim the step was done and do not substitute a different tool for it; "
                             "name the missing capability as the blocker.",
    LessonKind.missing_parameter: "Do not claim that part was done; name the missing parameter as the blocker.",
    LessonKind.unknown_field: "Answer the parts that are known and name the unknown field as the blocker.",
}

# Sections of a rendered body, in order, and the kinds each holds.
SECTIONS: tuple[tuple[str, frozenset[LessonKind]], ...] = (
    ("Method", frozenset({LessonKind.procedure})),
    ("Checks", frozenset({LessonKind.check_first, LessonKind.ask_for, LessonKind.policy, LessonKind.no_tool,
                          LessonKind.stated_time, LessonKind.stated_date})),
    ("Answer", frozenset({LessonKind.answer_unit})),
    ("When a tool is missing or falls short", frozenset({LessonKind.missing_tool, LessonKind.missing_parameter,
                                                        LessonKind.unknown_field, LessonKind.tool_error})),
    ("Budget", frozenset({LessonKind.budget})),
    ("Common mistakes", frozenset({LessonKind.pitfall, LessonKind.wrong_tool_name})),
    ("Guidance", frozenset({LessonKind.guidance})),
)


def render_body(lessons: Sequence[Lesson]) -> str:
    """The markdown a model reads: lessons grouped into sections, one bullet each, no duplicates.

    A body of nothing but guidance is that guidance as written (a person's skill reads as they
    wrote it).
    """
    unique = list({lesson.key: lesson for lesson in lessons}.values())
    if unique and all(lesson.kind == LessonKind.guidance for lesson in unique):
        return "\n\n".join(lesson.text or "" for lesson in unique)
    parts = []
    for title, kinds in SECTIONS:
        members = [lesson for lesson in unique if lesson.kind in kinds]
        if not members:
            continue
        if title == "Method":
            text = "\n\n".join(sentence(lesson) for lesson in members)
        else:
            lines: list[str] = []
            for lesson in members:
                lines.append(sentence(lesson))
                advice = (_GENERAL_ADVICE if lesson.general else _SPECIFIC_ADVICE).get(lesson.kind)
                if advice:
                    lines.append(advice)
            text = "\n".join(f"- {line}" for line in dict.fromkeys(lines))
        parts.append(f"## {title}\n{text}")
    return "\n\n".join(parts)


def _collapse(tools: Sequence[str]) -> list[str]:
    out: list[str] = []
    for tool in tools:
        if not out or out[-1] != tool:
            out.append(tool)
    return out
