"""A small controlled language for the instructions inside skills.

The rule-based distiller writes skill bodies as plain English sentences in these patterns, and
the simulated policy (``skillbank.envs.policy``) acts on sentences in these patterns, literally,
wherever they come from: a distilled skill, a skill a person wrote, or a wrong skill. Anything
else in a skill is prose the simulator ignores (a real model would read it too). The patterns
are ordinary imperative English so the same text serves a real model.

Each directive renders to one sentence and parses back from it; ``parse`` finds every directive
in a block of text (e.g. a whole system message).

Five directives also have a *general* form, with the tool (and field or parameter) left out:
the lesson that several specific ones share, which the distiller writes once the specific lesson
has recurred for different tools (``skillbank.evolution.general``). ``CheckFirst(None, None)``
says to follow the "call X first" policies that tool descriptions state; ``Unavailable(None)``,
``NoParam(None, None)``, ``UnknownField(None, None)`` and ``AskFor(None, None)`` apply to any
tool, and ``AskFor(None, tool)`` to any value of one tool. A reader treats a general directive
as the specific one for every tool it covers.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

__all__ = [
    "Order",
    "CheckFirst",
    "Unavailable",
    "NoParam",
    "AskFor",
    "UnknownField",
    "StepBudget",
    "Directive",
    "is_general",
    "render",
    "parse",
]

_T = r"`([A-Za-z_][A-Za-z0-9_]*)`"


@dataclass(frozen=True)
class Order:
    """Call these tools in this order (a procedure)."""

    tools: tuple[str, ...]

    def sentence(self) -> str:
        return "Call the tools in this order: " + ", then ".join(f"`{t}`" for t in self.tools) + "."


@dataclass(frozen=True)
class CheckFirst:
    """A policy check: always call ``check`` before ``action``; both ``None``: follow every
    "call X first" policy a tool's description states."""

    check: str | None
    action: str | None

    def __post_init__(self) -> None:
        if (self.check is None) != (self.action is None):
            raise ValueError("CheckFirst takes both tools, or neither for the general form")

    def covers(self, check: str, action: str) -> bool:
        return self.check in (None, check) and self.action in (None, action)

    def sentence(self) -> str:
        if self.check is None:
            return ("Before calling a tool, always call every tool its description says to call "
                    "first, even when the request seems clear.")
        return f"Always call `{self.check}` before `{self.action}`."


@dataclass(frozen=True)
class Unavailable:
    """A capability limit: a needed tool may be missing (``None``: any tool)."""

    tool: str | None

    def covers(self, tool: str) -> bool:
        return self.tool in (None, tool)

    def sentence(self) -> str:
        if self.tool is None:
            return ("If the request needs a tool that is not among your tools, do not call it: do "
                    "the rest of the request, then tell the user which tool is unavailable, by name.")
        return (f"If `{self.tool}` is not among your tools, do not call it: do the rest of the "
                f"request, then tell the user that `{self.tool}` is unavailable.")


@dataclass(frozen=True)
class NoParam:
    """A capability limit: a tool may lack a parameter the request needs (both ``None``: any
    tool, any parameter)."""

    tool: str | None
    param: str | None

    def __post_init__(self) -> None:
        if (self.tool is None) != (self.param is None):
            raise ValueError("NoParam takes a tool and a parameter, or neither for the general form")

    def covers(self, tool: str, param: str) -> bool:
        return self.tool in (None, tool) and self.param in (None, param)

    def sentence(self) -> str:
        if self.tool is None:
            return ("If the request needs a setting that the tool has no parameter for, do not "
                    "pass it: do the rest of the request, then tell the user which parameter is "
                    "missing, by name.")
        return (f"If `{self.tool}` has no `{self.param}` parameter, do not pass it: do the rest "
                f"of the request, then tell the user that `{self.param}` cannot be set.")


@dataclass(frozen=True)
class AskFor:
    """Ask rather than guess when a required value is not given or is ambiguous (``param``
    ``None``: any value of ``tool``; both ``None``: any value of any tool)."""

    param: str | None
    tool: str | None

    def __post_init__(self) -> None:
        if self.param is not None and self.tool is None:
            raise ValueError("AskFor names a parameter only together with its tool")

    def covers(self, tool: str, param: str) -> bool:
        return self.tool in (None, tool) and self.param in (None, param)

    def sentence(self) -> str:
        if self.param is None:
            whose = f"`{self.tool}`" if self.tool else "a tool"
            return (f"If the request does not state every value {whose} needs unambiguously, ask "
                    "the user instead of guessing.")
        return (f"If the request does not state `{self.param}` for `{self.tool}` unambiguously, "
                f"ask the user for `{self.param}` instead of guessing.")


@dataclass(frozen=True)
class UnknownField:
    """A tool may return a field as unknown or null; never invent it (both ``None``: any
    field of any tool)."""

    tool: str | None
    field: str | None

    def __post_init__(self) -> None:
        if (self.tool is None) != (self.field is None):
            raise ValueError("UnknownField takes a tool and a field, or neither for the general form")

    def covers(self, tool: str, field: str) -> bool:
        return self.tool in (None, tool) and self.field in (None, field)

    def sentence(self) -> str:
        if self.tool is None:
            return ("If a tool returns a field as unknown or null, do not invent a value: tell the "
                    "user which field is unknown.")
        return (f"If `{self.tool}` returns `{self.field}` as unknown or null, do not invent a "
                f"value: tell the user that `{self.field}` is unknown.")


@dataclass(frozen=True)
class StepBudget:
    """Finish within a number of tool calls; stop repeating calls."""

    max_tool_calls: int

    def sentence(self) -> str:
        return (f"Finish within {self.max_tool_calls} tool calls: never repeat a call with the "
                "same arguments, and answer as soon as the needed facts are known.")


Directive = Union[Order, CheckFirst, Unavailable, NoParam, AskFor, UnknownField, StepBudget]

_PATTERNS: list[tuple[re.Pattern[str], type]] = [
    (re.compile(r"Call the tools in this order: ((?:`\w+`(?:, then )?)+)\."), Order),
    (re.compile(rf"Always call {_T} before {_T}\."), CheckFirst),
    (re.compile(r"Before calling a tool, always call every tool its description says to call first"),
     CheckFirst),
    (re.compile(rf"If {_T} is not among your tools, do not call it"), Unavailable),
    (re.compile(r"If the request needs a tool that is not among your tools, do not call it"), Unavailable),
    (re.compile(rf"If {_T} has no {_T} parameter, do not pass it"), NoParam),
    (re.compile(r"If the request needs a setting that the tool has no parameter for, do not pass it"),
     NoParam),
    (re.compile(rf"If the request does not state {_T} for {_T} unambiguously, ask the user"), AskFor),
    (re.compile(rf"If the request does not state every value (?:{_T}|a tool) needs unambiguously, "
                r"ask the user"), AskFor),
    (re.compile(rf"If {_T} returns {_T} as unknown or null, do not invent a value"), UnknownField),
    (re.compile(r"If a tool returns a field as unknown or null, do not invent a value"), UnknownField),
    (re.compile(r"Finish within (\d+) tool calls"), StepBudget),
]


def is_general(directive: Directive) -> bool:
    """True for the general form of a directive (no tool named)."""
    if isinstance(directive, CheckFirst):
        return directive.check is None
    return isinstance(directive, (Unavailable, NoParam, AskFor, UnknownField)) and directive.tool is None


def render(directive: Directive) -> str:
    return directive.sentence()


def parse(text: str) -> list[Directive]:
    """Every directive in ``text``, in order of appearance, without duplicates."""
    found: list[tuple[int, Directive]] = []
    for pattern, cls in _PATTERNS:
        for match in pattern.finditer(text):
            if cls is Order:
                directive: Directive = Order(tuple(re.findall(r"`(\w+)`", match.group(1))))
            elif cls is StepBudget:
                directive = StepBudget(int(match.group(1)))
            elif cls is AskFor and pattern.groups == 1:
                directive = AskFor(None, match.group(1))  # any value of one tool, or of any
            else:
                fields = match.groups()
                # A general form's pattern captures nothing: every field is None.
                directive = cls(*fields) if fields else cls(*([None] * len(cls.__dataclass_fields__)))
            found.append((match.start(), directive))
    found.sort(key=lambda item: item[0])
    return list(dict.fromkeys(d for _, d in found))
