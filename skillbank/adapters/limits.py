"""Limit detection: which limit an exception, a tool result or a message is evidence of.

Every detector here works from a real signal the framework produces (an exception class, an
error ``ToolMessage`` that LangGraph's ``ToolNode`` wrote, the final message a limit middleware
appends), never from a guess about what the agent meant. Two detectors judge content, and both
are replaceable: :func:`find_unknown_fields` (a tool answered but left values unknown),
:func:`detect_refusal` (a policy refusal in a tool result or a final answer) and
:func:`find_result_error` (a tool that reported an error in its answer instead of raising).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Callable, Iterable

from langchain_core.messages import AIMessage, BaseMessage

from skillbank.messages import message_text
from skillbank.models import LimitType

if TYPE_CHECKING:  # langchain_core.tools is slow to import; it only annotates
    from langchain_core.tools import BaseTool

__all__ = [
    "LimitSignal",
    "Detectors",
    "classify_exception",
    "classify_tool_exception",
    "classify_tool_message",
    "limit_from_message",
    "budget_stop_message",
    "BUDGET_STOP_KEY",
    "find_unknown_fields",
    "detect_refusal",
    "find_result_error",
    "describe_exception",
    "is_interrupt",
    "NEED_MORE_STEPS",
]

# LangGraph's create_react_agent answers with exactly this when its step budget runs out.
NEED_MORE_STEPS = "Sorry, need more steps to process this request."

# Where the final message a run budget answers with instead of calling the model carries its
# limit (type, detail, data), for whoever records the run (response_metadata is never sent to a
# provider). See budget_stop_message and limit_from_message.
BUDGET_STOP_KEY = "skillbank_stop"

# ToolNode's error templates (langgraph.prebuilt.tool_node); matched by prefix/infix so a
# small wording change upstream degrades to "tool_error", never to a crash.
_INVALID_TOOL_RE = re.compile(r"^Error: (?P<tool>.+?) is not a valid tool", re.S)
_INVALID_ARGS_RE = re.compile(r"^Error invoking tool '(?P<tool>[^']*)' with kwargs", re.S)
# langchain.agents.middleware.{model,tool}_call_limit messages.
_MODEL_LIMIT_RE = re.compile(r"^Model call limits exceeded")
_TOOL_LIMIT_AI_RE = re.compile(r"call limit reached: .*(?:limit exceeded)")
_TOOL_LIMIT_TOOL_RE = re.compile(r"^Tool call limit exceeded")

_RATE_LIMIT_RE = re.compile(
    r"rate[ _-]?limit|too many requests|(?:status|http|code|error)\W{0,3}(?:code\W{0,3})?429\b"
    r"|quota exceeded|resource[ _]exhausted",
    re.I,
)
_CONTEXT_RE = re.compile(
    r"context[ _]length|maximum context|context[ _]window|too many tokens|prompt is too long"
    r"|input is too long|reduce the length of the messages|maximum prompt length"
    r"|exceeds the (?:model'?s )?(?:max(?:imum)? )?(?:context|token)",
    re.I,
)

_REFUSAL_RE = re.compile(
    r"\bnot (?:allowed|permitted|authori[sz]ed)\b|\bagainst (?:our |the |company |my )?polic(?:y|ies)\b"
    r"|\b(?:can ?not|can't|won't|will not|unable to) comply\b|\bviolates? (?:our |the )?polic(?:y|ies)\b"
    r"|\bprohibited by (?:the )?polic(?:y|ies)\b|\bpermission denied\b|\bforbidden\b"
    r"|\b(?:refused|denied|blocked|rejected) by (?:the |our |company )?polic(?:y|ies)\b",
    re.I,
)

_UNKNOWN_VALUES = frozenset({"unknown", "n/a", "na", "null", "none", "undefined", "?", "tbd", "not available"})


@dataclass(frozen=True)
class LimitSignal:
    type: LimitType
    detail: str
    tool: str | None = None
    data: dict[str, Any] | None = None  # structured facts (e.g. {"fields": [...]}) for the evolution loop


def is_interrupt(exc: BaseException) -> bool:
    """LangGraph's control-flow exceptions (an ``interrupt()``, a parent ``Command``): not failures."""
    return any(cls.__name__ == "GraphBubbleUp" for cls in type(exc).__mro__)


def describe_exception(exc: BaseException) -> str:
    if isinstance(exc, GeneratorExit):
        return "GeneratorExit: the caller stopped reading the stream before the run ended"
    if type(exc).__name__ == "CancelledError":
        return "CancelledError: the run was cancelled"
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _chain(exc: BaseException) -> Iterable[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _status_code(exc: BaseException) -> int | None:
    for obj in (exc, getattr(exc, "response", None)):
        code = getattr(obj, "status_code", None) or getattr(obj, "status", None)
        if isinstance(code, int):
            return code
    return None


def classify_exception(exc: BaseException) -> LimitSignal | None:
    """The budget limit an exception is evidence of, or ``None`` for an ordinary failure."""
    for err in _chain(exc):
        names = {cls.__name__ for cls in type(err).__mro__}
        text = str(err)
        if "GraphRecursionError" in names:
            return LimitSignal(LimitType.recursion_limit, describe_exception(err))
        if "ModelCallLimitExceededError" in names:
            return LimitSignal(LimitType.model_call_limit, describe_exception(err))
        if "ToolCallLimitExceededError" in names:
            return LimitSignal(LimitType.tool_call_limit, describe_exception(err),
                               getattr(err, "tool_name", None))
        if any("ContextWindow" in n or "ContextOverflow" in n or "ContextLength" in n for n in names) \
                or _CONTEXT_RE.search(text):
            return LimitSignal(LimitType.context_overflow, describe_exception(err))
        if any("RateLimit" in n for n in names) or _status_code(err) == 429 or _RATE_LIMIT_RE.search(text):
            return LimitSignal(LimitType.rate_limit, describe_exception(err))
    return None


def classify_tool_exception(exc: BaseException, tool: str | None = None) -> LimitSignal:
    """A tool that raised: bad arguments (a validation failure) or the tool itself failing."""
    for err in _chain(exc):
        names = {cls.__name__ for cls in type(err).__mro__}
        if names & {"ValidationError", "ToolInvocationError", "ValidationErrorV1"}:
            return LimitSignal(LimitType.invalid_tool_args, describe_exception(err), tool)
    budget = classify_exception(exc)
    if budget is not None and budget.type in (LimitType.rate_limit, LimitType.context_overflow):
        return LimitSignal(budget.type, budget.detail, tool)
    return _refusal_or_error(describe_exception(exc), tool)


def _refusal_or_error(text: str, tool: str | None) -> LimitSignal:
    """A tool's failure: a policy refusal when the tool says it refused by policy (the agent
    broke a rule, often one the message names: "refused by policy: call x first"), otherwise
    an error of the tool."""
    kind = LimitType.policy_refusal if detect_refusal(text) else LimitType.tool_error
    return LimitSignal(kind, text, tool)


def unknown_parameters(args: Any, tool: BaseTool) -> list[LimitSignal]:
    """Arguments the tool's schema has no parameter for.

    A tool's validation drops them without an error, so the part of the request they carried
    silently did not happen: a capability limit (the tool lacks that parameter). Schemas that
    accept extra arguments are left alone.
    """
    if not isinstance(args, dict) or not args:
        return []
    schema = getattr(tool, "args_schema", None)
    if isinstance(schema, type) and getattr(schema, "model_config", {}).get("extra") == "allow":
        return []
    try:
        declared = set(tool.args)
    except Exception:  # a tool whose schema cannot be read: nothing to compare with
        return []
    name = getattr(tool, "name", None)
    return [LimitSignal(LimitType.missing_parameter,
                        f"`{name}` has no parameter `{param}`; the argument was ignored", name,
                        {"param": param})
            for param in args if param not in declared]


def classify_tool_message(content: str, tool: str | None = None) -> LimitSignal:
    """An error ``ToolMessage`` (``status="error"``): which capability limit it reports."""
    if m := _INVALID_TOOL_RE.match(content):
        return LimitSignal(LimitType.missing_tool, content, tool or m.group("tool"))
    if _INVALID_ARGS_RE.match(content):
        return LimitSignal(LimitType.invalid_tool_args, content, tool)
    if _TOOL_LIMIT_TOOL_RE.match(content):
        return LimitSignal(LimitType.tool_call_limit, content, tool)
    return _refusal_or_error(content, tool)


def budget_stop_message(signal: LimitSignal, text: str) -> AIMessage:
    """The final answer of a run a budget ended: ``text`` for the user, ``signal`` for the record."""
    stop = {"type": signal.type.value, "detail": signal.detail, "data": signal.data}
    return AIMessage(content=text, response_metadata={BUDGET_STOP_KEY: stop})


def limit_from_message(message: BaseMessage) -> LimitSignal | None:
    """A message another component appended when a limit ended or cut the run short: a limit
    middleware's, ``create_react_agent``'s "need more steps", a run budget's stop."""
    kind = getattr(message, "type", None)
    if kind == "tool":
        text = message_text(message)
        return LimitSignal(LimitType.tool_call_limit, text, getattr(message, "name", None)) \
            if _TOOL_LIMIT_TOOL_RE.match(text) else None
    if kind != "ai":
        return None
    stop = (getattr(message, "response_metadata", None) or {}).get(BUDGET_STOP_KEY)
    if isinstance(stop, dict):
        return LimitSignal(LimitType(stop["type"]), str(stop["detail"]), None, stop.get("data"))
    if getattr(message, "tool_calls", None):  # the run goes on: nothing ended it
        return None
    text = message_text(message)
    if text.strip() == NEED_MORE_STEPS:
        return LimitSignal(LimitType.step_limit, text)
    if _MODEL_LIMIT_RE.match(text):
        return LimitSignal(LimitType.model_call_limit, text)
    if _TOOL_LIMIT_AI_RE.search(text):
        return LimitSignal(LimitType.tool_call_limit, text)
    return None


# -- content detectors (replaceable) ---------------------------------------------------------


def _is_unknown(value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, str) and value.strip().lower() in _UNKNOWN_VALUES


def find_unknown_fields(text: str) -> list[str]:
    """Fields of a JSON tool result whose value is null or says it is unknown (``"N/A"``...).

    Only JSON objects (and lists of them) are inspected: free text saying "unknown" is not
    evidence that a field the caller expected came back empty.

    Args:
        text: A tool's result as text.

    Returns:
        The fields' dotted paths (``a.b[0].c``), at most 50; empty for text that is no JSON.
    """
    stripped = text.strip() if isinstance(text, str) else ""
    if not stripped or stripped[0] not in "{[":
        return []
    try:
        data = json.loads(stripped)
    except ValueError:
        return []
    found: list[str] = []

    def walk(node: Any, path: str, depth: int) -> None:
        if depth > 6 or len(found) >= 50:
            return
        if isinstance(node, dict):
            for key, value in node.items():
                sub = f"{path}.{key}" if path else str(key)
                if _is_unknown(value):
                    found.append(sub)
                else:
                    walk(value, sub, depth + 1)
        elif isinstance(node, list):
            for i, item in enumerate(node[:100]):
                if isinstance(item, (dict, list)):
                    walk(item, f"{path}[{i}]", depth + 1)

    walk(data, "", 0)
    return found


# A tool that reports failure in its answer instead of raising: "Error during execution: ..."
# (BFCL's executor, many wrappers), "Error: ..." from tools that return their errors as text, or a
# JSON object whose top-level "error" says what went wrong.
_RESULT_ERROR_RE = re.compile(r"^\s*(?:Error(?: during execution)?|ERROR)\s*:\s*(?P<detail>.+)", re.S)
_MISSING_ARGUMENT_RE = re.compile(r"missing \d+ required (?:positional |keyword-only )?arguments?: (?P<names>.+)")
_ARGUMENT_NAME_RE = re.compile(r"'([A-Za-z_]\w*)'")


def find_result_error(text: str) -> LimitSignal | None:
    """The error a tool reported in a successful answer, as a limit (``tool`` left unset).

    A required argument the call left out is ``invalid_tool_args`` with its name in ``data``;
    anything else the tool says went wrong is ``tool_error``.

    Args:
        text: A tool's result as text.

    Returns:
        The limit; ``None`` when the text reports no error.
    """
    stripped = text.strip() if isinstance(text, str) else ""
    detail = None
    if (m := _RESULT_ERROR_RE.match(stripped)):
        detail = m.group("detail").strip()
    elif stripped.startswith("{"):
        try:
            data = json.loads(stripped)
        except ValueError:
            data = None
        error = data.get("error") if isinstance(data, dict) else None
        if error:
            detail = error if isinstance(error, str) else json.dumps(error, default=str)
    if not detail:
        return None
    if (m := _MISSING_ARGUMENT_RE.search(detail)):
        names = _ARGUMENT_NAME_RE.findall(m.group("names"))
        return LimitSignal(LimitType.invalid_tool_args, f"missing required argument: {detail}",
                           data={"param": names[0]} if names else None)
    return LimitSignal(LimitType.tool_error, f"the tool reported an error: {detail[:300]}")


def detect_refusal(text: str) -> str | None:
    """The phrase that marks ``text`` as a policy refusal, or ``None``.

    Args:
        text: A model's answer.

    Returns:
        The refusal phrase found; ``None`` when there is none.
    """
    if not isinstance(text, str) or not text:
        return None
    m = _REFUSAL_RE.search(text)
    return m.group(0) if m else None


UnknownFieldDetector = Callable[[str], Any]
RefusalDetector = Callable[[str], Any]
ResultErrorDetector = Callable[[str], Any]


@dataclass
class Detectors:
    """The content detectors; ``None`` switches one off.

    ``unknown_fields(text)`` returns the unknown fields (a list, a string or anything truthy)
    or something falsy; ``refusal(text)`` returns the refusal evidence or something falsy;
    ``result_error(text)`` returns a ``LimitSignal`` (or the error's text, a ``tool_error``) for
    a tool answer that reports a failure, or something falsy.
    """

    unknown_fields: UnknownFieldDetector | None = find_unknown_fields
    refusal: RefusalDetector | None = detect_refusal
    result_error: ResultErrorDetector | None = find_result_error

    def error_in(self, text: str, tool: str | None) -> LimitSignal | None:
        if self.result_error is None or not text:
            return None
        if self.refused(text):
            return None  # a refusal, reported by :meth:`refused` as a policy limit, not a tool error
        found = _safe(self.result_error, text)
        if not found:
            return None
        if isinstance(found, LimitSignal):
            return LimitSignal(found.type, found.detail, found.tool or tool, found.data)
        return LimitSignal(LimitType.tool_error, str(found), tool)

    def unknown(self, text: str, tool: str | None) -> LimitSignal | None:
        if self.unknown_fields is None or not text:
            return None
        found = _safe(self.unknown_fields, text)
        if not found:
            return None
        data = None
        if isinstance(found, (list, tuple, set)):
            fields = [str(f) for f in found]
            detail = f"tool result has unknown or null fields: {', '.join(fields)}"
            data = {"fields": fields}
        elif isinstance(found, str):
            detail = found
        else:
            detail = "tool result has unknown or null fields"
        return LimitSignal(LimitType.unknown_field, detail, tool, data)

    def refused(self, text: str, tool: str | None = None, *, where: str = "answer") -> LimitSignal | None:
        if self.refusal is None or not text:
            return None
        found = _safe(self.refusal, text)
        if not found:
            return None
        evidence = found if isinstance(found, str) else "refusal"
        return LimitSignal(LimitType.policy_refusal, f"policy refusal in {where}: {evidence!r}", tool)


def _safe(fn: Callable[[str], Any], text: str) -> Any:
    # A broken user detector must never break the agent it observes.
    try:
        return fn(text)
    except Exception:
        return None
