"""Tasks from a JSON Lines file, for measuring your own agent (``skillbank eval --tasks``).

Each line is one JSON object: ``id`` (unique), ``type`` (what the report groups by), ``input``
(the user's request, or a dict the agent is invoked with), optionally ``split`` (e.g. ``train``
/ ``heldout``), and anything else the verifier needs (``expect``, ``must_call``, ...), which the
task keeps as ``task.data`` (the whole line). Blank lines are skipped.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from skillbank.consistency.tasks import SimpleTask
from skillbank.errors import MeasureError

__all__ = ["load_tasks"]


def load_tasks(path: str | Path) -> list[SimpleTask]:
    """Every task in ``path``; a bad line raises :class:`MeasureError` naming the line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise MeasureError(f"no tasks file at {path}") from None
    tasks: list[SimpleTask] = []
    seen: dict[str, int] = {}
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{lineno}"
        try:
            record: Any = json.loads(line)
        except ValueError as exc:
            raise MeasureError(f"{where}: not valid JSON ({exc})") from None
        if not isinstance(record, dict):
            raise MeasureError(f"{where}: a task is a JSON object with id, type and input")
        missing = [key for key in ("id", "type", "input") if key not in record]
        if missing:
            raise MeasureError(f"{where}: the task has no {', '.join(missing)}")
        task_id, task_type, split = record["id"], record["type"], record.get("split")
        if not isinstance(task_id, str) or not task_id.strip():
            raise MeasureError(f"{where}: id must be a non-empty string")
        if not isinstance(task_type, str) or not task_type.strip():
            raise MeasureError(f"{where}: type must be a non-empty string")
        if not isinstance(record["input"], (str, dict)):
            raise MeasureError(f"{where}: input must be a string or an object")
        if split is not None and not isinstance(split, str):
            raise MeasureError(f"{where}: split must be a string")
        if task_id in seen:
            raise MeasureError(f"{where}: duplicate id {task_id!r} (first on line {seen[task_id]})")
        seen[task_id] = lineno
        tasks.append(SimpleTask(id=task_id, type=task_type, input=record["input"], split=split,
                                data=record))
    if not tasks:
        raise MeasureError(f"{path} has no tasks")
    return tasks
