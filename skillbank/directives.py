"""A small controlled language for the instructions inside skills.

The rule-based distiller writes skill bodies as plain English sentences in these patterns, and
the simulated policy (``skillbank.envs.policy``) acts on sentences in these patterns, literally,
wherever they come from: a distilled skill, a skill a person wrote, or a wrong skill. Anything
else in a skill is prose the simulator ignores (a real model would read it too). The patterns
are ordinary imperative English so the same text serves a real model.

Each directive renders to one sentence and parses back from it; ``parse`` finds every directive
in a block of text (e.g. a whole system message).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

__all__ = [
    "Order",
    "CheckFirst",
    "Unavailable",
    "AskFor",
    "UnknownField",
    "StepBudget",
    "Directive",
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
    """A policy check: always call ``check`` before ``action``."""

    check: str
    action: str

    def sentence(self) -> str:
        return f"Always call `{self.check}` before `{self.action}`."


@dataclass(frozen=True)
class Unavailable:
    """A capability limit: a needed tool may be missing."""

    tool: str

    def sentence(self) -> str:
        return (f"If `{self.tool}` is not among your tools, do not call it: do the rest of the "
                f"request, then tell the user that `{self.tool}` is unavailable.")


@dataclass(frozen=True)
class AskFor:
    """Ask rather than guess when a required value is not given or is ambiguous."""

    param: str
    tool: str

    def sentence(self) -> str:
        return (f"If the request does not state `{self.param}` for `{self.tool}` unambiguously, "
                f"ask the user for `{self.param}` instead of guessing.")


@dataclass(frozen=True)
class UnknownField:
    """A tool may return a field as unknown or null; never invent it."""

    tool: str
    field: str

    def sentence(self) -> str:
        return (f"If `{self.tool}` returns `{self.field}` as unknown or null, do not invent a "
                f"value: tell the user that `{self.field}` is unknown.")


@dataclass(frozen=True)
class StepBudget:
    """Finish within a number of tool calls; stop repeating calls."""

    max_tool_calls: int

    def sentence(self) -> str:
        return (f"Finish within {self.max_tool_calls} tool calls: never repeat a call with the "
                "same arguments, and answer as soon as the needed facts are known.")


Directive = Union[Order, CheckFirst, Unavailable, AskFor, UnknownField, StepBudget]

_PATTERNS: list[tuple[re.Pattern[str], type]] = [
    (re.compile(r"Call the tools in this order: ((?:`\w+`(?:, then )?)+)\."), Order),
    (re.compile(rf"Always call {_T} before {_T}\."), CheckFirst),
    (re.compile(rf"If {_T} is not among your tools, do not call it"), Unavailable),
    (re.compile(rf"If the request does not state {_T} for {_T} unambiguously, ask the user"), AskFor),
    (re.compile(rf"If {_T} returns {_T} as unknown or null, do not invent a value"), UnknownField),
    (re.compile(r"Finish within (\d+) tool calls"), StepBudget),
]


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
            else:
                directive = cls(*match.groups())
            found.append((match.start(), directive))
    found.sort(key=lambda item: item[0])
    return list(dict.fromkeys(d for _, d in found))
