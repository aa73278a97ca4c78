"""BFCL function docs as LangChain tools.

A tool's schema is BFCL's function doc with BFCL's types (``dict``, ``float``, ``tuple``,
``any``) cast to JSON Schema the way BFCL's own ``convert_to_tool`` casts them for
OpenAI-style function-calling models (``_cast_to_openai_type``, with its type table). That
function lives in a module that loads tree-sitter parsers for Java and JavaScript when
imported (pinned to tree-sitter 0.21), so its casting is followed here; a test compares the
result with a snapshot of BFCL's own output.

A tool call becomes the call string BFCL executes (``name(k=repr(v),...)``, as BFCL's
``convert_to_function_call`` writes it) and its result is whatever BFCL's executor returns,
errors included: BFCL's backends answer many mistakes with ``{"error": ...}`` and the executor
turns an exception into ``"Error during execution: ..."``. Arguments are not validated against
the schema first, as in BFCL: a missing required argument reaches the backend and fails there.
"""

from __future__ import annotations

import copy
from typing import Any, Callable

from langchain_core.tools import StructuredTool

from skillbank_harness.envs.bfcl._bfcl import TYPE_TO_JSON_SCHEMA

__all__ = ["json_schema", "call_string", "make_tool"]


def _cast(properties: dict[str, Any]) -> dict[str, Any]:
    for prop in properties.values():
        kind = prop.get("type")
        if kind is None:
            prop["type"] = "string"
        else:
            if kind == "float":
                prop["format"] = "float"
                prop["description"] = prop.get("description", "") + " This is a float type value."
            prop["type"] = TYPE_TO_JSON_SCHEMA.get(kind, "string")
        if prop["type"] in ("array", "object"):
            if "properties" in prop:
                prop["properties"] = _cast(prop["properties"])
            elif "items" in prop:
                items = prop["items"]
                items["type"] = TYPE_TO_JSON_SCHEMA[items["type"]]
                if items["type"] == "array" and "items" in items:
                    items["items"]["type"] = TYPE_TO_JSON_SCHEMA[items["items"]["type"]]
                elif items["type"] == "object" and "properties" in items:
                    items["properties"] = _cast(items["properties"])
    return properties


def json_schema(doc: dict[str, Any]) -> dict[str, Any]:
    """The JSON Schema of a BFCL function doc's parameters (the doc is not modified)."""
    params = copy.deepcopy(doc["parameters"])
    params["type"] = "object"
    params["properties"] = _cast(params.get("properties", {}))
    return params


def call_string(name: str, args: dict[str, Any]) -> str:
    """The call BFCL executes for a tool call: ``name(k1=v1,k2=v2)`` with Python literals."""
    return f"{name}({','.join(f'{k}={v!r}' for k, v in args.items())})"


def make_tool(doc: dict[str, Any], run: Callable[[str], str]) -> StructuredTool:
    """A tool for one BFCL function; ``run(call_string)`` executes it and returns BFCL's result."""
    name = doc["name"]

    def invoke(**kwargs: Any) -> str:
        return run(call_string(name, kwargs))

    return StructuredTool(name=name, description=doc["description"], args_schema=json_schema(doc),
                          func=invoke)
