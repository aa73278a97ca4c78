"""BFCL multi-turn entries as tasks the runner measures, and their train/held-out split.

Every entry of a category becomes a :class:`BfclTask`: its ``input`` is the first user turn,
``make_env()`` gives a fresh :class:`~skillbank_harness.envs.bfcl.env.BfclEnv` (which also plays the
later turns), and ``verify`` is BFCL's multi-turn checker on the calls the run executed. It
fits :func:`skillbank_harness.envs.run_task` and :func:`skillbank.consistency.runner.measure_env` as the
bundled environments' tasks do.

The split is by API class. One scenario appears in every category under the same index
(``multi_turn_base_7``, ``multi_turn_miss_param_7``, ... share their classes and, but for long
context, their initial state), so a split by entry would put the same conversation on both
sides. Holding out API classes instead means no held-out task uses a tool the skills were
learned on alone: an entry is held out when any of its classes is held out
(``VehicleControlAPI`` by default: 50 of the 200 scenarios, 19 of them with it alone).
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field
from typing import Any, ClassVar, Iterable, Sequence

from langchain_core.messages import BaseMessage

from skillbank_harness.envs.bfcl import _bfcl
from skillbank_harness.envs.bfcl.env import BfclEnv

__all__ = [
    "CATEGORIES",
    "DEFAULT_CATEGORIES",
    "HELDOUT_CLASSES",
    "BfclTask",
    "load_tasks",
    "parse_categories",
    "spread",
]

CATEGORIES = ("base", "miss_func", "miss_param", "long_context")
"""BFCL's offline multi-turn categories, by their short names (``multi_turn_<name>``)."""

DEFAULT_CATEGORIES = ("base", "miss_func", "miss_param")
HELDOUT_CLASSES = ("VehicleControlAPI",)

# Supersteps per model step in a run_task agent (model, a capture middleware's before_model,
# this env's after_model, tools) and per turn BFCL's step limit plus the closing answer: the
# recursion limit must never stop a run before BFCL's own limit does.
_SUPERSTEPS_PER_STEP = 4


@dataclass(frozen=True, eq=False)
class BfclTask:
    """One BFCL multi-turn entry. Hidden from the agent: everything but ``input`` and the tools."""

    id: str  # BFCL's entry id, e.g. "multi_turn_miss_func_12"
    type: str  # the category's short name: base, miss_func, miss_param, long_context
    split: str  # "train" or "heldout"
    input: str  # the first user turn
    classes: tuple[str, ...]
    entry: dict[str, Any] = field(repr=False)
    ground_truth: list[list[str]] = field(repr=False)

    family: ClassVar[str] = "bfcl"
    budget: ClassVar[bool] = False
    max_tool_calls: ClassVar[None] = None
    # As in BFCL's function-calling mode: no system prompt; the tools carry the function docs.
    system_prompt: ClassVar[None] = None

    @property
    def kind(self) -> str:
        return self.type

    @property
    def template(self) -> str:
        """The entry's API classes: tasks on the same tools group together (``take_spread``)."""
        return "bfcl." + "+".join(sorted(self.classes))

    @property
    def scenario(self) -> int:
        """The index BFCL gives the same conversation in every category."""
        return int(self.id.rsplit("_", 1)[1])

    @property
    def recursion_limit(self) -> int:
        turns = len(self.entry["question"])
        return _SUPERSTEPS_PER_STEP * turns * (_bfcl.MAXIMUM_STEP_LIMIT + 2) + 10

    def make_env(self) -> BfclEnv:
        return BfclEnv(self.entry)

    def explain(self, env: BfclEnv, final_answer: str | None = None,
                messages: Sequence[BaseMessage] = ()) -> list[str]:
        """Why BFCL's checker failed the run; an empty list means it passed.

        The checker's whole answer stays on ``env.last_check``.
        """
        result = _bfcl.check(env.turns, self.ground_truth, self.entry, f"skillbank_{uuid.uuid4().hex}")
        env.last_check = result
        if result.get("valid"):
            return []
        return [f"{result.get('error_type', 'multi_turn')}: {result.get('error_message', '')}"]

    def verify(self, env: BfclEnv, final_answer: str | None = None,
               messages: Sequence[BaseMessage] = ()) -> bool:
        return not self.explain(env, final_answer, messages)


def parse_categories(categories: str | Iterable[str]) -> tuple[str, ...]:
    """``"base,miss_func"`` or names (``multi_turn_`` prefix optional) -> short category names."""
    names = categories.split(",") if isinstance(categories, str) else list(categories)
    out = []
    for raw in names:
        name = raw.strip().removeprefix("multi_turn_")
        if not name:
            continue
        if name not in CATEGORIES:
            raise ValueError(f"unknown BFCL category {raw.strip()!r}: choose from {', '.join(CATEGORIES)}")
        if name not in out:
            out.append(name)
    if not out:
        raise ValueError(f"no BFCL category given: choose from {', '.join(CATEGORIES)}")
    return tuple(out)


def _first_turn(entry: dict[str, Any]) -> str:
    first = entry["question"][0]
    if not first:
        raise ValueError(f"{entry['id']}: the first turn has no user message")
    return "\n\n".join(m["content"] for m in first)


def load_tasks(
    categories: str | Iterable[str] = DEFAULT_CATEGORIES,
    *,
    heldout_classes: Iterable[str] = HELDOUT_CLASSES,
) -> list[BfclTask]:
    """Every entry of the categories, as tasks, split by API class (see the module doc)."""
    held = frozenset(heldout_classes)
    unknown = held - set(_bfcl.MULTI_TURN_CLASSES)
    if unknown:
        raise ValueError(f"unknown BFCL API classes {sorted(unknown)}: choose from "
                         f"{', '.join(_bfcl.MULTI_TURN_CLASSES)}")
    tasks = []
    for category in parse_categories(categories):
        full = f"multi_turn_{category}"
        truth = _bfcl.load_ground_truth(full)
        for entry in _bfcl.load_entries(full):
            classes = tuple(entry["involved_classes"])
            tasks.append(BfclTask(
                id=entry["id"], type=category,
                split="heldout" if held.intersection(classes) else "train",
                input=_first_turn(entry), classes=classes, entry=entry,
                ground_truth=truth[entry["id"]],
            ))
    return tasks


def spread(tasks: Sequence[BfclTask], scenarios: int | None) -> list[BfclTask]:
    """The tasks of ``scenarios`` scenarios, taken round-robin over API-class combinations.

    The same scenarios are kept in every category, so categories compare like with like; the
    round-robin keeps a small subset from being all one API.
    """
    if scenarios is None:
        return list(tasks)
    by_combo: dict[str, list[int]] = {}
    for task in sorted(tasks, key=lambda t: t.scenario):
        group = by_combo.setdefault(task.template, [])
        if task.scenario not in group:
            group.append(task.scenario)
    chosen: list[int] = []
    while len(chosen) < scenarios and any(by_combo.values()):
        for group in by_combo.values():
            if group and len(chosen) < scenarios:
                chosen.append(group.pop(0))
    keep = set(chosen)
    return [t for t in tasks if t.scenario in keep]
