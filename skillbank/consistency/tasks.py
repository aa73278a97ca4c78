"""What a measurement needs from a task, and how a task's input reaches an agent."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Protocol, Sequence, runtime_checkable

from skillbank.errors import MeasureError

__all__ = ["EvalTask", "SimpleTask", "task_text", "agent_input", "check_tasks", "task_meta"]


@runtime_checkable
class EvalTask(Protocol):
    """What the runner needs from a task: an id, a type and an input; ``verify`` is optional.

    The environments' ``Task`` satisfies it as it is; so does :class:`SimpleTask`. A task may
    also carry ``split`` (e.g. ``"train"`` / ``"held_out"``), which the runner reports
    separately, and ``family``.

    Attributes:
        id: The task's id, unique among the tasks measured.
        type: Its type (a task group; trajectories are labelled with it).
        input: What the agent is given: a string (one user message) or a mapping (the agent's
            own input state).
    """

    id: str
    type: str
    input: Any


@dataclass(frozen=True)
class SimpleTask:
    """A minimal task record: ``verify(result) -> bool`` judges what the agent returned.

    ``data`` carries whatever else the task's verifier needs (a task file's whole line).

    Attributes:
        id: The task's id, unique among the tasks measured.
        type: Its type (a task group; trajectories are labelled with it).
        input: What the agent is given: a string (one user message) or a mapping (the agent's
            own input state).
        verify: ``verify(result) -> bool``: whether the agent's final state succeeded; ``None``:
            none, which an agent run through ``invoke`` cannot be measured without.
        split: The task's split (e.g. ``"train"`` / ``"held_out"``), reported separately;
            ``None``: none.
        data: Whatever else the verifier needs (a task file's whole line).
    """

    id: str
    type: str
    input: Any
    verify: Callable[[Any], bool] | None = None
    split: str | None = None
    data: Mapping[str, Any] = field(default_factory=dict)


def task_text(value: Any) -> str:
    """A task input as the text a person asked: the string, or a mapping's text-like field."""
    if isinstance(value, str):
        return value
    if isinstance(value, Mapping):
        for key in ("text", "prompt", "input", "request", "message"):
            if isinstance(value.get(key), str):
                return value[key]
    return str(value)


def agent_input(value: Any) -> Any:
    """What a LangChain agent is invoked with for a task input: a mapping as it is (the agent's
    own state), anything else as one user message."""
    if isinstance(value, Mapping):
        return value
    return {"messages": [{"role": "user", "content": task_text(value)}]}


def check_tasks(tasks: Sequence[Any]) -> None:
    """Raise :class:`MeasureError` unless there are tasks, each with an id, a type and an
    input, and no two with one id."""
    if not tasks:
        raise MeasureError("no tasks to measure")
    seen: set[str] = set()
    for task in tasks:
        for attr in ("id", "type", "input"):
            if not hasattr(task, attr):
                raise MeasureError(f"task {task!r} has no {attr!r}; a task needs id, type and input")
        if task.id in seen:
            raise MeasureError(f"duplicate task id {task.id!r}")
        seen.add(task.id)


def task_meta(task: Any, split: str | None) -> dict[str, Any]:
    """What a result keeps of a task: its type, split and, when it has them, family and template."""
    meta: dict[str, Any] = {"type": str(task.type), "split": split}
    for attr in ("family", "template"):
        value = getattr(task, attr, None)
        if value is not None:
            meta[attr] = str(value)
    return meta
