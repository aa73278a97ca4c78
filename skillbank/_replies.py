"""Reading the JSON object out of a chat model's reply, with LangChain's parsers."""

from __future__ import annotations

import ast
import json
from typing import Any

from langchain_core.utils.json import parse_json_markdown, parse_partial_json

__all__ = ["reply_json"]


def reply_json(text: str) -> dict[str, Any]:
    """The JSON object in a chat model's reply.

    Read, in this order, by LangChain's ``parse_json_markdown`` (a code fence or the bare reply),
    ``ast.literal_eval`` (a Python-literal dict: single quotes, ``True``/``None``, trailing
    commas), then ``parse_json_markdown`` / ``parse_partial_json`` (a reply cut off before its
    closing brackets, raw newlines inside strings, prose before the object): complete readings
    first, since a partial one drops what follows the damage. String values are never
    rewritten. Anything else raises ``ValueError`` with the parser's message, which the caller
    feeds back to the model.
    """
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in the reply")
    error: Exception | None = None
    for parse in (lambda t: parse_json_markdown(t, parser=json.loads),
                  lambda t: ast.literal_eval(t[start:t.rfind("}") + 1]),
                  parse_json_markdown,
                  lambda t: parse_partial_json(t[start:])):
        try:
            value = parse(text)
        except (ValueError, SyntaxError, MemoryError, RecursionError) as exc:  # JSONDecodeError too
            error = error or exc
            continue
        if isinstance(value, dict):
            return value
    raise ValueError(f"not valid JSON: {error or 'not a JSON object'}")
