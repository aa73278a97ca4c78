"""τ²'s tasks as tasks the runner measures, split by τ²'s own split files.

Every task of a domain becomes a :class:`Tau2Task` whose ``split`` is the split τ²'s
``split_tasks.json`` puts it in: ``train`` or ``test`` for airline, retail and telecom (the mock
domain's file has one split, ``base``). ``test`` is one of the held-out split names
(``skillbank.splits.HELD_OUT_SPLITS``): runs labelled with it are measured on and never learned
from, so evolution only ever learns from ``train`` runs (and mock's).

The agent sees none of a task but what τ² shows its agent: the policy, the tools and the
conversation (solo mode: the ticket). ``input`` is only the task's name, which the runner
stores when a run never reached the agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from skillbank_harness.envs.tau2 import _tau2

__all__ = ["ENV_PREFIX", "ENV_NAMES", "Tau2Task", "load_tasks", "parse_env", "task_splits"]

ENV_PREFIX = "tau2:"
ENV_NAMES = (*(f"{ENV_PREFIX}{d}" for d in _tau2.DOMAINS),
             *(f"{ENV_PREFIX}{d}:solo" for d in _tau2.SOLO_DOMAINS))
"""The ``skillbank eval --env`` names: ``tau2:<domain>``, and ``tau2:<domain>:solo`` for the
domains with a solo mode."""

# Graph supersteps per τ² step (the model, the bank's and this harness's hooks, the tools), so
# the recursion limit never stops a run before τ²'s own max_steps does.
_SUPERSTEPS_PER_STEP = 4


def parse_env(name: str) -> tuple[str, bool]:
    """``"tau2:retail"`` -> ``("retail", False)``; ``"tau2:mock:solo"`` -> ``("mock", True)``."""
    if not name.startswith(ENV_PREFIX):
        raise ValueError(f"not a τ² environment name: {name!r} (use tau2:<domain>)")
    domain, _, mode = name[len(ENV_PREFIX):].partition(":")
    if domain not in _tau2.DOMAINS:
        raise ValueError(f"unknown τ² domain {domain!r}: choose from {', '.join(_tau2.DOMAINS)}")
    if mode not in ("", "solo"):
        raise ValueError(f"unknown τ² mode {mode!r} in {name!r}: only ':solo'")
    solo = mode == "solo"
    if solo and domain not in _tau2.SOLO_DOMAINS:
        raise ValueError(f"τ²'s {domain} domain has no solo mode (only {', '.join(_tau2.SOLO_DOMAINS)})")
    return domain, solo


@dataclass(frozen=True, eq=False)
class Tau2Task:
    """One τ² task in one mode. Hidden from the agent: everything but what τ² shows it."""

    id: str  # "tau2.<domain>.<τ² id>" ("tau2.<domain>.solo.<τ² id>" in solo mode)
    type: str  # the domain
    split: str  # "train" or "test" (τ²'s split file); "base" in the mock domain
    input: str
    domain: str
    solo: bool
    task: Any = field(repr=False)  # τ²'s Task

    family: ClassVar[str] = "tau2"
    budget: ClassVar[bool] = False
    max_tool_calls: ClassVar[None] = None

    @property
    def kind(self) -> str:
        return self.type

    @property
    def template(self) -> str:
        return f"tau2.{self.domain}" + (".solo" if self.solo else "")

    @property
    def tau2_id(self) -> str:
        return str(self.task.id)

    def recursion_limit(self, max_steps: int) -> int:
        return _SUPERSTEPS_PER_STEP * (max_steps + 2) + 20

    def make_env(self, user_model: Any = None, **limits: Any) -> Any:
        """A fresh :class:`~skillbank_harness.envs.tau2.env.Tau2Env` (a new database)."""
        from skillbank_harness.envs.tau2.env import Tau2Env

        return Tau2Env(self, user_model, **limits)


def task_splits(domain: str) -> dict[str, str]:
    """τ² task id -> its split: ``train``/``test`` where the split file has them, else ``base``."""
    files = _tau2.splits(domain)
    named = {name: ids for name, ids in files.items() if name in ("train", "test")}
    if not named:
        return {tid: "base" for tid in files.get("base", ())}
    out: dict[str, str] = {}
    for name, ids in named.items():
        for tid in ids:
            if tid in out:
                raise ValueError(f"τ² {domain} task {tid} is in both {out[tid]} and {name}")
            out[tid] = name
    return out


def load_tasks(domain: str, split: str | None = None, *, solo: bool = False) -> list[Tau2Task]:
    """The tasks of ``domain`` (only ``split``'s if given), in τ²'s order.

    ``solo``: only the tasks τ²'s solo agent can run (``LLMSoloAgent.check_valid_task``), in
    the domains with a solo mode.
    """
    if domain not in _tau2.DOMAINS:
        raise ValueError(f"unknown τ² domain {domain!r}: choose from {', '.join(_tau2.DOMAINS)}")
    if solo and domain not in _tau2.SOLO_DOMAINS:
        raise ValueError(f"τ²'s {domain} domain has no solo mode (only {', '.join(_tau2.SOLO_DOMAINS)})")
    split_of = task_splits(domain)
    known = sorted(set(split_of.values()), key=lambda s: (s != "train", s))
    if split is not None and split not in known:
        raise ValueError(f"τ²'s {domain} domain has no split {split!r}: choose {' or '.join(known)}")
    out = []
    for task in _tau2.tasks(domain):
        where = split_of.get(str(task.id))
        if where is None or (split is not None and where != split):
            continue
        if solo and not _tau2.solo_ready(task):
            continue
        mode = ".solo" if solo else ""
        out.append(Tau2Task(id=f"tau2.{domain}{mode}.{task.id}", type=domain, split=where,
                            input=f"τ² {domain}{' (solo)' if solo else ''} task {task.id}",
                            domain=domain, solo=solo, task=task))
    return out
