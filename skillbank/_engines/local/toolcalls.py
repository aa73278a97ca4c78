"""Tool calls out of a small model's text, however it wrote them.

Qwen2.5's template asks for ``<tool_call>{"name": …, "arguments": …}</tool_call>``; a small
model often writes instead the bare object, the object in a ```json fence, the object with the
template example's doubled braces (``{{"name": …}}``) copied literally, or a JSON list of
objects. All of these are calls (docs/decisions/0002). A JSON object without both ``name`` and
``arguments`` (or ``parameters``) is not a call and stays text.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any, Iterator

from skillbank._replies import reply_json

__all__ = ["parse_tool_calls"]

_TAGGED = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCED = re.compile(r"```[A-Za-z]*\s*(.*?)(?:```|$)", re.S)


def _spans(text: str) -> Iterator[tuple[int, int]]:
    """``(start, end)`` of every top-level balanced ``{…}`` or ``[…]`` in ``text``."""
    depth, start, in_string, escape = 0, -1, False, False
    for i, ch in enumerate(text):
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
            continue
        if ch == '"' and depth:
            in_string = True
        elif ch in "{[":
            if depth == 0:
                start = i
            depth += 1
        elif ch in "}]" and depth:
            depth -= 1
            if depth == 0:
                yield start, i + 1
    if depth and start >= 0:  # cut off before its closing brackets: let the repair close it
        yield start, len(text)


def _load(blob: str) -> Any:
    # The doubled braces copied from the template example, on both ends or only at the
    # start: ``{{"name": …, "arguments": {…}}``. Exact parses first:
    # a repair of the unbalanced text would "succeed" with something else.
    candidates = (blob, blob.replace("{{", "{").replace("}}", "}"), blob.replace("{{", "{", 1))
    for candidate in candidates:
        try:
            return json.loads(candidate)
        except ValueError:
            pass
    for candidate in candidates[:2]:
        try:
            return reply_json(candidate) if candidate.lstrip().startswith("{") else None
        except (ValueError, TypeError, SyntaxError, RecursionError):
            pass  # the literal fallback raises TypeError on {{...}} (a set of dicts)
    return None


def _as_call(obj: Any) -> dict[str, Any] | None:
    if not isinstance(obj, dict):
        return None
    if isinstance(obj.get("function"), dict):  # OpenAI's {"type": "function", "function": {...}}
        obj = obj["function"]
    name = obj.get("name")
    args = obj.get("arguments", obj.get("parameters"))
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_.\-]{0,127}", name):
        return None
    if isinstance(args, str):
        loaded = _load(args) if args.strip() else {}
        args = loaded if isinstance(loaded, dict) else None
    if args is None and ("arguments" in obj or "parameters" in obj):
        return None
    if not isinstance(args, dict):
        return None
    if _is_schema(args):
        args = _values_in_schema(args)
        if args is None:
            return None
    return {"name": name, "args": args, "id": f"call_{uuid.uuid4().hex[:12]}", "type": "tool_call"}


def _is_schema(args: dict[str, Any]) -> bool:
    """Arguments in the shape of the tool's JSON schema (``{"type": "object", "properties": …}``)."""
    return isinstance(args.get("properties"), dict) and (
        args.get("type") == "object" or "required" in args)


def _values_in_schema(args: dict[str, Any]) -> dict[str, Any] | None:
    """A small model copies the schema's shape and writes the values where the property
    definitions were (``"properties": {"city": "Oslo"}``): those values are the call. When the
    properties are definitions (``{"type": "string", ...}``), the model echoed the tool's
    definition and there is no call."""
    props = args["properties"]
    if any(isinstance(v, dict) for v in props.values()):
        return None
    return dict(props)


def _calls_in(blob: str) -> list[dict[str, Any]]:
    obj = _load(blob)
    items = obj if isinstance(obj, list) else [obj]
    calls = [_as_call(item) for item in items]
    return [c for c in calls if c is not None]


def _extract(text: str, regions: Iterator[tuple[int, int, str]]) -> tuple[str, list[dict[str, Any]]]:
    """The calls inside ``regions`` (``(start, end, inner text)`` of ``text``), and ``text``
    without the regions that held one."""
    calls: list[dict[str, Any]] = []
    kept, cursor = [], 0
    for start, end, inner in regions:
        found = [c for s, e in _spans(inner) for c in _calls_in(inner[s:e])]
        if found:
            calls.extend(found)
            kept.append(text[cursor:start])
            cursor = end
    kept.append(text[cursor:])
    return "".join(kept), calls


def parse_tool_calls(text: str) -> tuple[str, list[dict[str, Any]]]:
    """Split a completion into ``(text, tool_calls)`` (LangChain ``ToolCall`` dicts).

    Where the calls are looked for, in order, the first that finds any winning: inside
    ``<tool_call>`` tags, inside code fences, then bare objects anywhere. The text is what is
    left once every recognised call (with its tags or fence) is removed.
    """
    strategies = (
        lambda: ((m.start(), m.end(), m.group(1)) for m in _TAGGED.finditer(text)),
        lambda: ((m.start(), m.end(), m.group(1)) for m in _FENCED.finditer(text)),
        lambda: ((s, e, text[s:e]) for s, e in _spans(text)),
    )
    for regions in strategies:
        rest, calls = _extract(text, regions())
        if calls:
            return _tidy(rest), calls
    return text.strip(), []


_LEFTOVER = re.compile(r"^\s*(?:</?tools?(?:_call)?>|[{}\[\],<>]+)\s*$", re.M)


def _tidy(text: str) -> str:
    """The text around the calls, without the tags, list brackets or stray braces they left."""
    text = _LEFTOVER.sub("", text.replace("</tool_call>", "").replace("<tool_call>", ""))
    return re.sub(r"\n{3,}", "\n\n", text).strip()
