"""How much of the failure mass a skill bank can address at all.

A failed trial fails for the reasons its verifier gives (``Task.explain``). Some reasons are
exactly what one lesson kind teaches against (a check skipped: ``check_first``; a tool called
that is not bound: ``missing_tool``; ...); others no lesson kind covers (a wrong value in the
final state, a wrong answer, a part of the request never done). :func:`failure_mass` re-runs
the failed trials of a measurement, reads their reasons and counts each trial as *addressable*
(every reason has a lesson kind), *partly* (some do) or *not addressable* (none do).

The reasons are the verifiers' sentences (``skillbank_harness.envs.base`` writes them; its
helpers are the only place those shapes come from). :data:`REASON_KINDS` maps each helper's
shape to the lesson kind that addresses it; a reason no shape matches is counted as not
addressable, which errs towards a smaller addressable share.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

__all__ = ["REASON_KINDS", "lesson_kind", "FailureMass", "failure_mass"]

# (shape of a verifier reason, the lesson kind that teaches against it), from the helpers of
# skillbank_harness.envs.base that write them.
REASON_KINDS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"ran without `\w+` first"), "check_first"),  # Environment.require_before
    (re.compile(r"ran before the agent asked the user"), "ask_for"),  # require_asked_before
    (re.compile(r"^invented a value for unknown `\w+`"), "unknown_field"),  # no_value_claim
    (re.compile(r"^passed `\w+` to `\w+`, which has no such parameter"), "missing_parameter"),
    (re.compile(r"^called `\w+`, which is not among the tools"), "missing_tool"),  # Task.explain
    (re.compile(r"^final answer does not name the blocker `\w+`"), "missing_tool/parameter/field"),
    (re.compile(r"^made \d+ tool calls; the budget is \d+"), "budget"),  # Task.explain
)


def lesson_kind(reason: str) -> str | None:
    """The lesson kind that addresses a verifier reason, or None if no kind does."""
    return next((kind for pattern, kind in REASON_KINDS if pattern.search(reason)), None)


@dataclass
class FailureMass:
    failed: int = 0
    addressable: int = 0  # every reason has a lesson kind
    partly: int = 0  # some reasons do
    unaddressable: int = 0  # none do
    replay_mismatches: int = 0  # re-runs whose outcome differed from the measured one
    by_reason: dict[str, int] = field(default_factory=dict)  # lesson kind (or "none") -> reasons

    def summary(self) -> str:
        if not self.failed:
            return "Failure mass: no failed baseline trial."
        pct = lambda n: f"{n} ({n / self.failed:.0%})"  # noqa: E731
        kinds = ", ".join(f"{k} {n}" for k, n in sorted(self.by_reason.items(), key=lambda kv: -kv[1]))
        text = (f"Failure mass (baseline, without the bank): of {self.failed} failed trials, "
                f"{pct(self.addressable)} failed only for reasons some lesson kind addresses, "
                f"{pct(self.partly)} partly, {pct(self.unaddressable)} for none (wrong values, "
                f"wrong answers, parts left undone). Reasons by lesson kind: {kinds}.")
        if self.replay_mismatches:
            text += f" ({self.replay_mismatches} re-run(s) did not reproduce the measured outcome.)"
        return text


def failure_mass(records: Iterable[Any], tasks: Sequence[Any], run: Callable[[Any, int], Any],
                 arm: str = "without") -> FailureMass:
    """Classify the failed trials of ``arm`` among ``records`` (``TrialRecord``-like: task_id,
    arm, seed, success) by re-running each with ``run(task, seed)`` (a ``RunResult``) and
    reading ``task.explain``. Trials of the simulated policy are deterministic given the seed,
    so a re-run reproduces the trial; ``replay_mismatches`` counts any that did not."""
    by_id = {t.id: t for t in tasks}
    mass = FailureMass()
    for record in records:
        if record.arm != arm or record.success or record.task_id not in by_id:
            continue
        task = by_id[record.task_id]
        result = run(task, record.seed)
        if result.success:
            mass.replay_mismatches += 1
            continue
        reasons = task.explain(result.env, result.final_answer, result.messages)
        kinds = [lesson_kind(r) for r in reasons]
        mass.failed += 1
        for kind in kinds:
            mass.by_reason[kind or "none"] = mass.by_reason.get(kind or "none", 0) + 1
        covered = sum(k is not None for k in kinds)
        if covered and covered == len(kinds):
            mass.addressable += 1
        elif covered:
            mass.partly += 1
        else:
            mass.unaddressable += 1
    return mass
