"""Which split each task of a measurement is in: the task's own, given, or assigned.

The vocabulary (split names, which are held out) is :mod:`skillbank._splits`'.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from skillbank.errors import MeasureError
from skillbank._splits import SPLITS

__all__ = ["task_split", "assign_splits"]


def task_split(task: Any, splits: Mapping[str, str] | None) -> str | None:
    """The split of ``task``: ``splits[task.id]`` if given, else the task's own ``split``."""
    if splits is not None and task.id in splits:
        return splits[task.id]
    value = getattr(task, "split", None)
    return None if value is None else str(getattr(value, "value", value))


def assign_splits(
    tasks: Sequence[Any],
    held_out: float = 0.3,
    *,
    seed: int = 0,
    group: Callable[[Any], str] | None = None,
    names: tuple[str, str] = SPLITS,
) -> dict[str, str]:
    """Split tasks into an evolution set and a held-out set: ``task id -> split name``.

    Tasks are split by ``group`` (default: the task's ``template`` if it has one, else its id),
    so that variants of one task never land on both sides; within each task type about
    ``held_out`` of the groups go to the held-out set, chosen by ``seed``. Pass the mapping to
    :func:`~skillbank.consistency.runner.measure` as ``splits=``.
    """
    if not 0 < held_out < 1:
        raise MeasureError(f"held_out must be strictly between 0 and 1, got {held_out}")
    group = group or (lambda t: str(getattr(t, "template", None) or t.id))
    groups_by_type: dict[str, list[str]] = defaultdict(list)
    for task in tasks:
        key = group(task)
        if key not in groups_by_type[task.type]:
            groups_by_type[task.type].append(key)
    rng = np.random.default_rng(seed)
    held: set[tuple[str, str]] = set()
    for task_type in sorted(groups_by_type):
        keys = sorted(groups_by_type[task_type])
        n_held = int(round(held_out * len(keys)))
        if len(keys) > 1:
            n_held = min(max(n_held, 1), len(keys) - 1)
        else:
            n_held = 0
        for i in rng.permutation(len(keys))[:n_held]:
            held.add((task_type, keys[int(i)]))
    return {t.id: names[1] if (t.type, group(t)) in held else names[0] for t in tasks}
