"""Rendering: the one place lessons become prose (a skill's body, a worked example).

Each kind's sentence lives in its own module; this module orders them into the sections of a
skill's body and renders the pieces several kinds share (a method step, a worked example).
"""

from __future__ import annotations

import re
from typing import Sequence

from skillbank.lessons._base import Example, Lesson, LessonKind, MethodStep
from skillbank.lessons._registry import spec_of

__all__ = ["sentence", "render_body", "example_text", "step_text", "tool_ref", "SECTION_ORDER"]

# The sections of a rendered body, in order (each kind names the one it goes in).
SECTION_ORDER = ("Method", "Checks", "Answer", "When a tool is missing or falls short", "Budget",
                 "Common mistakes", "Guidance")

_ORDINALS = ("first", "second", "third", "fourth", "fifth")


def tool_ref(name: str | None) -> str:
    """A tool (or parameter, or field) name as the prose shows it: in backticks."""
    return f"`{name}`"


def _nth_in_request(param: str, shape: str) -> str | None:
    """``<room_2>`` for ``room``: "the second `room` the request names" (values apart by role)."""
    found = re.fullmatch(rf"<{re.escape(param.lower())}_(\d+)>", shape)
    if found is None:
        return None
    n = int(found.group(1))
    return f"the {_ORDINALS[n - 1] if n <= len(_ORDINALS) else f'number {n}'} `{param}` the request names"


def step_text(step: MethodStep, verb: str = "Call") -> str:
    """One method step as an instruction: the tool, its arguments' shapes and where each comes from."""
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
    return spec_of(lesson.kind).sentence(lesson)


def example_text(example: Example) -> str:
    """A worked example as the model reads it: a few short lines."""
    lines = [f"Example, for a request like \"{example.request}\":"]
    for i, step in enumerate(example.calls, 1):
        line = f"{i}. {step_text(step)}"
        if step.tool == example.result_tool and example.result and \
                not any(s.tool == step.tool for s in example.calls[: i - 1]):
            shown = ", ".join(f"`{k}`=" + (v if v.startswith("<") else f"`{v}`") for k, v in example.result.items())
            line += f"; it returned {shown}"
        lines.append(line + ".")
    if example.answer:
        lines.append(f"Then the answer: \"{example.answer}\"")
    return "\n".join(lines)


def render_body(lessons: Sequence[Lesson]) -> str:
    """The markdown a model reads: lessons grouped into sections, one bullet each, no duplicates.

    A body of nothing but guidance is that guidance as written (a person's skill reads as they
    wrote it). The method section holds each lesson's lines as they are; every other section
    one bullet per sentence, each followed by its kind's advice where it has one.
    """
    unique = list({lesson.key: lesson for lesson in lessons}.values())
    if unique and all(lesson.kind == LessonKind.guidance for lesson in unique):
        return "\n\n".join(lesson.text or "" for lesson in unique)
    parts = []
    for title in SECTION_ORDER:
        members = [lesson for lesson in unique if spec_of(lesson.kind).section == title]
        if not members:
            continue
        if title == "Method":
            text = "\n\n".join(sentence(lesson) for lesson in members)
        else:
            lines: list[str] = []
            for lesson in members:
                lines.append(sentence(lesson))
                advice = spec_of(lesson.kind).advice(lesson)
                if advice:
                    lines.append(advice)
            text = "\n".join(f"- {line}" for line in dict.fromkeys(lines))
        parts.append(f"## {title}\n{text}")
    return "\n\n".join(parts)
