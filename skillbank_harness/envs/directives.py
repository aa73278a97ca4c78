"""The simulated policy's directives: what it takes a piece of guidance to ask of it.

A directive is the simulator's own reading of advice in its system prompt, as typed data. The
reading itself is done by meaning (:mod:`skillbank_harness.envs.guidance`: MiniLM nearest
neighbours over descriptions of each intent, plus the names of the policy's own tools), not by
the sentences ``skillbank.lessons`` writes: a person's SKILL.md or an LLM distiller's phrasing
gives the same directives as the bank's own sentence (``tests/harness/test_envs_guidance.py``).

Five directives also have a *general* form, with the tool (and field or parameter) left out.
``CheckFirst(None, None)`` says to follow the "call X first" policies that tool descriptions
state; ``Unavailable(None)``, ``NoParam(None, None)``, ``UnknownField(None, None)`` and
``AskFor(None, None)`` apply to any tool, and ``AskFor(None, tool)`` to any value of one tool.
The policy treats a general directive as the specific one for every tool it covers.
"""

from __future__ import annotations

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
    "NoRepeat",
    "Directive",
]

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


@dataclass(frozen=True)
class NoRepeat:
    """Never repeat a tool call that was already made (a budget without a number)."""


Directive = Union[Order, CheckFirst, Unavailable, NoParam, AskFor, UnknownField, StepBudget, NoRepeat]

# The reading (text -> directives) is skillbank_harness.envs.guidance.read, which imports these
# classes: this module stays the vocabulary only, so the two never import each other.
