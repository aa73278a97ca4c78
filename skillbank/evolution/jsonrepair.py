"""Pulling one JSON object out of a chat model's reply, repairing the usual small-model damage.

Handled: code fences, prose around the object, smart quotes, trailing commas, Python literals
(``True``/``None``), single-quoted strings, raw newlines inside strings, and a reply cut off
before its closing brackets. Anything else raises ``ValueError`` with the parser's message, which
the caller feeds back to the model.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.S)


def _balanced(text: str) -> str:
    """From the first ``{`` to its matching ``}``; closes brackets a truncated reply left open."""
    start = text.find("{")
    if start < 0:
        raise ValueError("no JSON object in the reply")
    stack: list[str] = []
    in_string: str | None = None
    escape = False
    for i in range(start, len(text)):
        ch = text[i]
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == in_string:
                in_string = None
            continue
        if ch in "\"'":
            # A single quote inside an unquoted word (don't) is not a string delimiter.
            if ch == "'" and i > 0 and text[i - 1].isalnum():
                continue
            in_string = ch
        elif ch in "{[":
            stack.append("}" if ch == "{" else "]")
        elif ch in "}]":
            if stack:
                stack.pop()
            if not stack:
                return text[start:i + 1]
    tail = text[start:]
    if in_string:
        tail += in_string
    return tail + "".join(reversed(stack))


def _escape_newlines(text: str) -> str:
    out, in_string, escape = [], False, False
    for ch in text:
        if in_string:
            if escape:
                escape = False
            elif ch == "\\":
                escape = True
            elif ch == '"':
                in_string = False
            elif ch == "\n":
                out.append("\\n")
                continue
            elif ch == "\t":
                out.append("\\t")
                continue
        elif ch == '"':
            in_string = True
        out.append(ch)
    return "".join(out)


def extract_json(text: str) -> Any:
    """The JSON object in ``text``, repaired if needed."""
    if not isinstance(text, str):
        text = str(text)
    fenced = _FENCE.search(text)
    candidate = fenced.group(1) if fenced else text
    candidate = candidate.replace("“", '"').replace("”", '"').replace("‘", "'").replace("’", "'")
    snippet = _balanced(candidate)
    attempts = [snippet]
    fixed = re.sub(r",\s*([}\]])", r"\1", re.sub(r",(\s*,)+", ",", snippet))
    attempts.append(fixed)
    attempts.append(_escape_newlines(fixed))
    py = re.sub(r"\btrue\b", "True", re.sub(r"\bfalse\b", "False", re.sub(r"\bnull\b", "None", fixed)))
    error: Exception | None = None
    for attempt in attempts:
        try:
            return json.loads(attempt)
        except json.JSONDecodeError as exc:
            error = error or exc
    try:
        value = ast.literal_eval(py)
        if isinstance(value, dict):
            return value
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        pass
    raise ValueError(f"not valid JSON: {error}")
