"""The split vocabulary: which set a task belongs to, and which sets are measured on only.

A measurement splits its tasks into an evolution set (``train``) and a held-out set
(``heldout``); a run's ``labels["split"]`` carries the name. Runs of a held-out split are what
a bank is measured on, so evolution never learns from them. Every layer that needs these names
(the runner, the report, the round, the command line) reads them here; the store only filters on
the label values it is given.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from skillbank.errors import MeasureError

__all__ = ["ALL_SPLITS", "TRAIN", "HELD_OUT", "SPLITS", "HELD_OUT_SPLITS", "describe_split",
           "task_split", "assign_splits"]

ALL_SPLITS = "all"
"""The pseudo-split that pools every task."""
TRAIN = "train"
HELD_OUT = "heldout"
SPLITS = (TRAIN, HELD_OUT)
"""The two sets :func:`assign_splits` makes (and ``skillbank eval --split`` takes)."""

# Split labels that mean "measured on, never learned from" (a run's ``labels["split"]``):
# the names other tools and older banks use as well as ours.
HELD_OUT_SPLITS = frozenset({"held_out", HELD_OUT, "held-out", "test", "eval"})

# split -> (its name in headings, its name in a narrow column)
_NAMES = {
    None: ("all tasks", "all"),
    ALL_SPLITS: ("all tasks", "all"),
    TRAIN: ("evolution set (train)", TRAIN),
    HELD_OUT: ("held-out set", "held-out"),
    "held_out": ("held-out set", "held-out"),
}


def describe_split(split: str | None, *, short: bool = False) -> str:
    """A split's name for people: ``"held-out set"`` (``short``: ``"held-out"``)."""
    names = _NAMES.get(split)
    return str(split) if names is None else names[1 if short else 0]


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
