"""What the tools a model call offers declare: their names and their parameters.

A model request carries ``BaseTool`` objects or OpenAI-style JSON schemas (``{"name": ...}`` or
``{"function": {"name": ..., "parameters": ...}}``); both read alike here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Iterator, Sequence

if TYPE_CHECKING:  # langchain_core.tools is slow to import; these only annotate
    from langchain_core.tools import BaseTool

    OfferedTool = BaseTool | dict[str, Any]

__all__ = ["tool_name", "tool_names", "tool_purposes", "declared_parameters", "DeclaredParameters"]


def tool_name(tool: OfferedTool) -> str:
    """The tool's name (``""`` when it has none)."""
    if isinstance(tool, dict):
        name = tool.get("name") or (tool.get("function") or {}).get("name")
    else:
        name = getattr(tool, "name", None)
    return name if isinstance(name, str) else ""


def tool_names(tools: Sequence[OfferedTool] | None) -> tuple[str, ...]:
    """The names of the tools a model request carries, in its order."""
    names = []
    for tool in tools or ():
        if name := tool_name(tool):
            names.append(name)
    return tuple(names)


def tool_purpose(tool: OfferedTool) -> str:
    """What a tool is for, as text a request can be compared with: its name in words and the
    first line of its description (``""`` when it has no name)."""
    name = tool_name(tool)
    if isinstance(tool, dict):
        description = tool.get("description") or (tool.get("function") or {}).get("description")
    else:
        description = getattr(tool, "description", None)
    first_line = description.strip().splitlines()[0] if isinstance(description, str) and description.strip() else ""
    words = name.replace("_", " ").replace("-", " ")
    return f"{words}: {first_line}" if first_line and words else words


def tool_purposes(tools: Sequence[OfferedTool] | None) -> tuple[str, ...]:
    """:func:`tool_purpose` of each named tool a model request carries, in its order."""
    return tuple(p for tool in tools or () if (p := tool_purpose(tool)))


def declared_parameters(tool: OfferedTool) -> frozenset[str]:
    """The parameter names a tool declares."""
    if isinstance(tool, dict):
        schema = (tool.get("function") or tool).get("parameters") or {}
        return frozenset((schema.get("properties") or {}).keys())
    try:
        return frozenset((getattr(tool, "args", None) or {}).keys())
    except Exception:  # a tool whose schema cannot be read: it declares nothing we can use
        return frozenset()


class DeclaredParameters(Mapping[str, frozenset[str]]):
    """Tool name -> the parameters it declares, for the tools a model call offers, each read
    only when first asked for: reading a ``BaseTool``'s parameters builds its JSON schema
    (about a millisecond a tool), and a run asks for one tool's at most, when a reminder
    fills a check's arguments."""

    def __init__(self) -> None:
        self._tools: dict[str, OfferedTool] = {}
        self._read: dict[str, frozenset[str]] = {}

    def offer(self, tools: Sequence[OfferedTool] | None) -> None:
        """The tools the latest model call offers; what was read stays while a tool of that
        name is the same object."""
        offered = {name: tool for tool in tools or () if (name := tool_name(tool))}
        self._read = {n: p for n, p in self._read.items() if offered.get(n) is self._tools.get(n)}
        self._tools = offered

    def __getitem__(self, name: str) -> frozenset[str]:
        if name not in self._read:
            self._read[name] = declared_parameters(self._tools[name])
        return self._read[name]

    def __iter__(self) -> Iterator[str]:
        return iter(self._tools)

    def __len__(self) -> int:
        return len(self._tools)
