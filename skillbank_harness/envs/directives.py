"""How the simulated policy reads skills: the sentences the library renders, parsed back.

The library writes lessons as data and renders them into sentences in exactly one place
(``skillbank.lessons.sentence``). The simulated policy is a stand-in for a model, so it reads
only the rendered prompt, as a model would: this module finds, in a block of text (a whole
system message), the sentences it knows and turns each into a *directive*, the simulator's own
reading of it. Anything else in a skill is prose the simulator ignores (a real model would
read it too). ``tests/test_envs_policy.py`` renders every lesson kind with the library and
checks that this parser reads it back.

Five directives also have a *general* form, with the tool (and field or parameter) left out.
``CheckFirst(None, None)`` says to follow the "call X first" policies that tool descriptions
state; ``Unavailable(None)``, ``NoParam(None, None)``, ``UnknownField(None, None)`` and
``AskFor(None, None)`` apply to any tool, and ``AskFor(None, tool)`` to any value of one tool.
The policy treats a general directive as the specific one for every tool it covers.
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
    "parse",
]

_T = r"`([A-Za-z_][A-Za-z0-9_]*)`"


@dataclass(frozen=True)
class Order:
    """Call these tools in this order (a procedure)."""

    tools: tuple[str, ...]


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


@dataclass(frozen=True)
class Unavailable:
    """A capability limit: a needed tool may be missing (``None``: any tool)."""

    tool: str | None

    def covers(self, tool: str) -> bool:
        return self.tool in (None, tool)


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


@dataclass(frozen=True)
class StepBudget:
    """Finish within a number of tool calls; stop repeating calls."""

    max_tool_calls: int


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
