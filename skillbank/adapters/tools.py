"""What the tools a model call offers declare: their names and their parameters.

A model request carries ``BaseTool`` objects or OpenAI-style JSON schemas (``{"name": ...}`` or
``{"function": {"name": ..., "parameters": ...}}``); both read alike here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Sequence

if TYPE_CHECKING:  # langchain_core.tools is slow to import; these only annotate
    from langchain_core.tools import BaseTool

    OfferedTool = BaseTool | dict[str, Any]

__all__ = ["tool_name", "tool_names", "declared_parameters"]


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


def declared_parameters(tool: OfferedTool) -> frozenset[str]:
    """The parameter names a tool declares."""
    if isinstance(tool, dict):
        schema = (tool.get("function") or tool).get("parameters") or {}
        return frozenset((schema.get("properties") or {}).keys())
    try:
        return frozenset((getattr(tool, "args", None) or {}).keys())
    except Exception:  # a tool whose schema cannot be read: it declares nothing we can use
        return frozenset()
