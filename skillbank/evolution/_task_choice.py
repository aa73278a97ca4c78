"""Which tasks the gate runs a candidate on, and in which order it measures candidates.

A validator that can simulate retrieval (:class:`ReachesTasks`, e.g. the one
:func:`skillbank.consistency.validation.make_validator` builds) tells the gate which tasks of its
pool would put a candidate into a prompt (:class:`Reach`). The gate then runs the candidate's own
evidence tasks (to convert: what it was learned for), then other tasks it reaches (to preserve:
where it would be injected too), and no task it cannot reach: those run the same prompts in both
arms, so they cost trials and measure nothing (:func:`choose_tasks`).

With an evaluation budget, each candidate still to be measured gets an equal share of what is
left (:func:`tasks_within`), its evidence tasks first, so one candidate cannot spend the round's
budget while the others wait; and a general lesson is measured after the candidates holding the
specific lessons it generalises (:func:`measuring_order`), against a bank that already has those
that passed, so it is promoted only for a gain beyond theirs. See
docs/decisions/0651-gate-budget-alternatives.md.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, Sequence, runtime_checkable

from skillbank.models import GENERAL_TAG, Skill

if TYPE_CHECKING:  # pragma: no cover
    from skillbank.evolution._review import Pending

__all__ = ["Reach", "ReachesTasks", "TaskChoice", "choose_tasks", "measuring_order", "tasks_within"]


@dataclass(frozen=True)
class Reach:
    """Which of a validator's tasks would put a candidate into a prompt.

    Attributes:
        reached: Task ids whose request retrieves the candidate, in the pool's order.
        unreached: Task ids whose request does not.
        trials_per_task: Trials one task costs to measure (both arms).
    """

    reached: tuple[str, ...]
    unreached: tuple[str, ...]
    trials_per_task: int

    @property
    def pool(self) -> tuple[str, ...]:
        return self.reached + self.unreached


@runtime_checkable
class ReachesTasks(Protocol):
    """A validator that can say, before running anything, which of its tasks a candidate reaches."""

    def reach(self, candidate: Skill) -> Reach: ...  # pragma: no cover - a protocol


@dataclass(frozen=True)
class TaskChoice:
    """The tasks chosen for one candidate by reach, and what choosing them saved.

    Attributes:
        own: Its evidence tasks in the pool, to convert (run whether or not the request alone
            reaches it: a run can pull it in later, when a tool fails).
        preserve: Other tasks it reaches, to preserve.
        unreached: Tasks of the pool it cannot reach: not run.
        cut: Evidence tasks and tasks it reaches that were left out (the ``holdout`` cap or the
            budget share).
        pool: Tasks in the pool.
        saved_trials: Trials not run against running every task of the pool.
        limited: The budget share left out tasks it would have run (so a measurement without a
            gain does not settle it: see :class:`~skillbank.evolution.gate.Gate`).
    """

    own: tuple[str, ...]
    preserve: tuple[str, ...]
    unreached: tuple[str, ...]
    cut: tuple[str, ...]
    pool: int
    saved_trials: int
    limited: bool = False

    @property
    def tasks(self) -> list[str]:
        return [*self.own, *self.preserve]

    def describe(self) -> str:
        return (f"{len(self.own)} evidence + {len(self.preserve)} reached of {self.pool} task(s)"
                f" ({len(self.unreached)} unreached" + (f", {len(self.cut)} cut" if self.cut else "")
                + f": {self.saved_trials} trials saved against running every task)")


def choose_tasks(pending: Pending, reach: Reach, holdout: int, limit: int | None = None) -> TaskChoice:
    """Evidence tasks, then up to ``holdout`` other reached tasks (a sample fixed per candidate),
    all within ``limit`` tasks (None: no limit)."""
    pool = set(reach.pool)
    own = [t for t in dict.fromkeys(pending.task_ids) if t in pool]
    others = [t for t in reach.reached if t not in set(own)]
    rng = random.Random(pending.proposal_hash or pending.skill.content_hash)
    preserve = rng.sample(others, min(holdout, len(others)))
    wanted = own + preserve
    chosen = wanted[:limit] if limit is not None else wanted
    kept_own = tuple(t for t in own if t in chosen)
    kept_preserve = tuple(t for t in preserve if t in chosen)
    cut = tuple(t for t in own + others if t not in set(chosen))
    unreached = tuple(t for t in reach.unreached if t not in set(own))
    return TaskChoice(own=kept_own, preserve=kept_preserve, unreached=unreached, cut=cut,
                      pool=len(pool), saved_trials=(len(pool) - len(chosen)) * reach.trials_per_task,
                      limited=len(chosen) < len(wanted))


def tasks_within(remaining_budget: float, candidates_left: int, trials_per_task: int) -> int:
    """How many tasks one candidate may run: an equal share of the budget left among the
    candidates still to be measured (this one included), at least one task."""
    share = remaining_budget / max(1, candidates_left)
    return max(1, int(share // max(1, trials_per_task)))


def measuring_order(candidates: Sequence[Pending]) -> list[Pending]:
    """Most evidence first, except that a general candidate (tagged ``general``) comes after
    every candidate holding a specific lesson of a kind it generalises: the alternatives it
    would replace are measured first."""
    ranked = sorted(candidates, key=lambda c: -len(c.evidence))
    general = [c for c in ranked if GENERAL_TAG in c.skill.content.tags]
    if not general:
        return ranked
    order = [c for c in ranked if c not in general]
    for g in general:
        kinds = {x.kind for x in g.skill.content.lessons}
        specific = [i for i, c in enumerate(order)
                    if any(x.kind in kinds and not x.general for x in c.skill.content.lessons)]
        if specific:
            order.insert(specific[-1] + 1, g)
        else:
            order.insert(next((i for i, c in enumerate(order) if len(c.evidence) < len(g.evidence)),
                              len(order)), g)
    return order
