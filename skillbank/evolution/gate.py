"""The gate (step 10 of a round): which candidates become active, and on what grounds.

- With ``auto_promote=True`` and a ``validate`` callable, each candidate (most evidence first)
  is validated on the tasks of its evidence plus a held-out sample of other tasks from the
  round, until ``eval_budget`` (total :attr:`GateResult.cost`, one per call by default) is
  spent. It is promoted only for an attributable gain (``gain > min_gain``; the validator
  compares with and without this candidate) with no regression on any task it was checked on;
  otherwise it is rejected and remembered. Candidates beyond the budget wait for review, or,
  with ``promote_policy="canary"``, go live in canary (the live monitor decides what the
  budget could not; so does one the budget share measured on too few tasks to show a gain,
  with no regression). Each measurement is kept with its decision, in the same transaction, as a
  :class:`~skillbank.store._gate_records.GateRecord` (``bank.gate_records``).
- A validator that simulates retrieval (:class:`~skillbank.evolution._task_choice.ReachesTasks`)
  has its tasks chosen by reach instead of the held-out sample: the evidence tasks, other tasks
  the candidate reaches, none it cannot; with a budget, each candidate gets an equal share of
  what is left, and a general lesson is measured after the specific ones it generalises (see
  :mod:`skillbank.evolution._task_choice`).
- Without a validator, candidates wait for review (``skillbank candidates promote|reject``),
  unless a ``promote_policy`` opts into promoting by policy: ``"all"`` (every lint-clean
  candidate), ``"guards"`` (template-written guard skills only), or a callable
  ``policy(pending) -> bool``.
- Quarantined candidates are never promoted automatically, and text an LLM distiller wrote is
  never promoted by a policy: only a measured gain or a person makes it active.
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Any, Callable, Sequence

from skillbank.errors import InvalidSkillError
from skillbank.evolution._review import Pending, promote, reject
from skillbank.evolution._seam import EvolutionBank
from skillbank.evolution._task_choice import ReachesTasks, TaskChoice, choose_tasks, measuring_order, tasks_within
from skillbank.live._canary import start_canary
from skillbank.models import Skill, SkillKind, SkillStatus
from skillbank._provenance import Source, text_source
from skillbank.store._gate_records import GateRecord, GateVerdict, TaskTrials


@dataclass(frozen=True)
class GateResult:
    """What a validation function reports for one candidate (the validator of
    :func:`skillbank.consistency.validation.make_validator` reports a ``GateMeasurement``, a
    ``GateResult`` with every field of the evidence filled).

    The gate decides on the first six fields; the rest is the evidence it keeps with its
    decision (``bank.gate_records``): a validate function of your own may leave it empty."""

    gain: float = 0.0  # e.g. pass^k with the candidate minus without it
    regressions: Sequence[str] = ()  # task ids that got worse
    passed: bool | None = None  # None: decided from gain and regressions
    cost: float = 1.0  # evaluation budget used (episodes, calls, ...)
    detail: str = ""
    checked: Sequence[str] = ()  # task ids evaluated
    trials: tuple[TaskTrials, ...] = ()  # each task's outcomes in both arms, in the order run
    planned: tuple[str, ...] = ()  # the tasks it was to run
    not_reached: tuple[str, ...] = ()  # run, but the candidate reached none of their prompts
    stopped_early: bool = False  # the verdict was settled before every planned task ran
    pass_hat_k_change: float | None = None  # candidate minus current, averaged over tasks
    success_change: float | None = None

    def accepted(self, min_gain: float = 0.0) -> bool:
        if self.passed is False or self.regressions:
            return False
        return self.gain > min_gain

    def describe(self) -> str:
        regress = f", regressions on {', '.join(map(str, self.regressions))}" if self.regressions else ""
        return f"gain {self.gain:+.3f}{regress}" + (f" ({self.detail})" if self.detail else "")


Validator = Callable[[Skill, list], Any]


# What a dict may set: the fields the gate decides on. The evidence is typed (a dict's "trials"
# was a count in the validator's old dict result); return a GateResult to report it.
_DICT_FIELDS = ("gain", "regressions", "passed", "cost", "detail", "checked")


def as_gate_result(value: Any) -> GateResult:
    """Accept a GateResult, a bool, a number (the gain), a dict (the fields the gate decides on)
    or a ``(gain, regressions)`` tuple."""
    if isinstance(value, GateResult):
        return value
    if isinstance(value, bool):
        return GateResult(gain=1.0 if value else 0.0, passed=value)
    if isinstance(value, (int, float)):
        return GateResult(gain=float(value))
    if isinstance(value, dict):
        return GateResult(**{k: v for k, v in value.items() if k in _DICT_FIELDS})
    if isinstance(value, tuple) and len(value) == 2:
        return GateResult(gain=float(value[0]), regressions=tuple(value[1] or ()))
    raise TypeError(f"a validation function must return GateResult, bool, a number or a dict, not {value!r}")


def resolve_policy(policy: Any) -> Callable[[Pending], bool] | None:
    if policy is None or policy is False:
        return None
    if policy is True or policy in ("all", "always"):
        return lambda p: True
    if policy == "guards":
        return lambda p: p.skill.kind == SkillKind.guard and p.kind == "add"
    if policy == "canary":  # every new skill goes live in canary (skillbank.live): the monitor decides
        return lambda p: not p.is_draft
    if callable(policy):
        return policy
    raise ValueError(f"unknown promote policy {policy!r}: use 'all', 'guards', 'canary' or a callable")


def _model_written(bank: EvolutionBank, pending: Pending) -> bool:
    """Whether the candidate's text came from an LLM distiller (see :mod:`skillbank._provenance`)."""
    found = text_source(bank.history(pending.skill.id))
    return found is not None and found.source == Source.llm_distiller


@dataclass
class GateDecision:
    skill_id: str
    decision: GateVerdict
    detail: str
    result: GateResult | None = None
    active_id: str | None = None  # the skill that became active (the target, for a draft)
    choice: TaskChoice | None = None  # the tasks chosen by reach, when the validator simulates it


@dataclass(frozen=True)
class GateConfig:
    """How a round's candidates are promoted (see the module's docstring).

    Attributes:
        validate: ``validate(candidate, task_ids)``, for ``auto_promote`` (see
            :func:`as_gate_result` for what it may return).
        auto_promote: Promote a candidate whose validation shows a gain.
        promote_policy: Promote without validation: ``"all"``, ``"guards"`` or a callable; or
            ``"canary"``: every new skill goes live in canary and the live monitor decides.
        eval_budget: Stop validating once this much :attr:`GateResult.cost` is spent.
        min_gain: The smallest gain that counts as a gain (strictly more is needed).
        holdout: Other tasks added to a candidate's own for validation: a sample of the
            round's tasks or, with a validator that simulates retrieval, of the tasks it reaches.
    """

    validate: Validator | None = None
    auto_promote: bool = False
    promote_policy: Any = None
    eval_budget: float | None = None
    min_gain: float = 0.0
    holdout: int = 5


class Gate:
    """One round's gate: decides as its :class:`GateConfig` says, keeping what it spent and
    decided (``spent``, ``decisions``).

    ``Gate(GateConfig(promote_policy="all"))``; ``evolve`` builds one per round.

    Args:
        config: How candidates are promoted (``None``: ``GateConfig()``, every candidate waits
            for review).
        room: ``room(pending)`` says why a candidate cannot be promoted now (e.g. the bank
            budget is full); it returns ``None`` when it can be. ``None``: always room.

    Raises:
        TypeError: Any other argument: a gate option is a field of ``config``
            (``Gate(GateConfig(auto_promote=True, validate=f))``).
    """

    def __init__(self, config: GateConfig | None = None, *,
                 room: Callable[[Pending], str | None] | None = None):
        self.config = config or GateConfig()
        self.room = room
        self.spent = 0.0
        self.decisions: list[GateDecision] = []

    def task_ids(self, pending: Pending, pool: Sequence[str]) -> list[str]:
        """The candidate's evidence tasks plus a held-out sample (deterministic per candidate)."""
        own = list(dict.fromkeys(t for t in pending.task_ids if t))
        rest = sorted(set(pool) - set(own))
        rng = random.Random(pending.proposal_hash or pending.skill.content_hash)
        return own + rng.sample(rest, min(self.config.holdout, len(rest)))

    def run(self, bank: EvolutionBank, candidates: list[Pending], pool: Sequence[str]) -> list[GateDecision]:
        policy = resolve_policy(self.config.promote_policy)
        order = measuring_order(candidates)
        for i, p in enumerate(order):
            if p.skill.status != SkillStatus.candidate:
                self.decisions.append(GateDecision(p.skill.id, GateVerdict.waiting, "quarantined: needs a person"))
                continue
            full = self.room(p) if self.room is not None else None
            if full and (self.config.auto_promote or policy is not None):
                self.decisions.append(GateDecision(p.skill.id, GateVerdict.waiting, full))
                continue
            if self.config.auto_promote and self.config.validate is not None:
                self.decisions.append(self._validate(bank, p, order[i:], pool, policy))
            elif policy is not None and _model_written(bank, p):
                self.decisions.append(GateDecision(
                    p.skill.id, GateVerdict.waiting, "written by an LLM distiller: only the gate's measured gain or a "
                    "person promotes it, never a policy alone"))
            elif policy is not None and policy(p) and self.config.promote_policy == "canary":
                self.decisions.append(self._into_canary(bank, p, "canary by policy: the live monitor promotes "
                                                        "or rejects it", "into canary"))
            elif policy is not None and policy(p):
                active = promote(bank, p.skill.id, author="policy",
                                 reason=f"promoted by policy {self.config.promote_policy!r}")
                self.decisions.append(GateDecision(p.skill.id, GateVerdict.promoted, "by policy", None, active.id))
            else:
                why = ("auto-promote needs a validation function or a promote policy"
                       if self.config.auto_promote else "waiting for review")
                self.decisions.append(GateDecision(p.skill.id, GateVerdict.waiting, why))
        return self.decisions

    def _validate(self, bank: EvolutionBank, p: Pending, rest: Sequence[Pending], pool: Sequence[str],
                  policy: Callable[[Pending], bool] | None) -> GateDecision:
        """Measure ``p`` (``rest``: it and the candidates after it) and decide; a candidate the
        budget or the task pool leaves unmeasured is undecided (:meth:`_undecided`)."""
        if self.config.eval_budget is not None and self.spent >= self.config.eval_budget:
            return self._undecided(bank, p, policy, "evaluation budget spent")
        validate = self.config.validate
        assert validate is not None
        try:
            choice = self._choice(p, rest)
            if choice is not None and not choice.tasks:
                decision = self._undecided(bank, p, policy, f"reaches none of the {choice.pool} task(s) "
                                           "it could be validated on: nothing to measure offline")
                decision.choice = choice
                return decision
            tasks = choice.tasks if choice is not None else self.task_ids(p, pool)
            result = as_gate_result(validate(p.skill, tasks))
        except Exception as exc:  # a broken validator leaves the candidate for review
            return GateDecision(p.skill.id, GateVerdict.waiting, f"validation failed: {type(exc).__name__}: {exc}")
        self.spent += result.cost
        if choice is not None and choice.limited and not result.regressions \
                and not result.accepted(self.config.min_gain):
            # Rejecting is remembered for good: not on a measurement the budget cut short.
            decision = self._undecided(bank, p, policy, f"no gain on the {len(result.planned or tasks)} "
                                       f"task(s) the budget allowed ({result.describe()})")
        else:
            decision = self._decide(bank, p, len(tasks), result)
        decision.choice = choice
        decision.result = decision.result or result
        return decision

    def _choice(self, p: Pending, rest: Sequence[Pending]) -> TaskChoice | None:
        """The tasks for ``p`` by reach, within its share of the budget left; None when the
        validator cannot simulate retrieval."""
        validate = self.config.validate
        if not isinstance(validate, ReachesTasks):
            return None
        reach = validate.reach(p.skill)
        limit = None
        if self.config.eval_budget is not None:
            left = sum(1 for c in rest if c.skill.status == SkillStatus.candidate)
            limit = tasks_within(self.config.eval_budget - self.spent, left, reach.trials_per_task)
        return choose_tasks(p, reach, self.config.holdout, limit)

    def _undecided(self, bank: EvolutionBank, p: Pending, policy: Callable[[Pending], bool] | None,
                   why: str) -> GateDecision:
        """A candidate the gate could not measure: into canary when the promote policy is
        ``"canary"`` (and would take it; never text an LLM distiller wrote), else waiting."""
        if self.config.promote_policy == "canary" and policy is not None and policy(p) \
                and not _model_written(bank, p):
            return self._into_canary(bank, p, f"canary: {why} before the gate could measure it; the live "
                                     "monitor promotes or rejects it", f"into canary: {why}")
        return GateDecision(p.skill.id, GateVerdict.waiting, why)

    def _into_canary(self, bank: EvolutionBank, p: Pending, reason: str, detail: str) -> GateDecision:
        with bank.transaction():
            live = start_canary(bank.skills, p.skill.id, author="policy", reason=reason)
            bank.drafts.drop_pending(p.skill.id)
        return GateDecision(p.skill.id, GateVerdict.promoted, detail, None, live.id)

    def _decide(self, bank: EvolutionBank, p: Pending, n_tasks: int, result: GateResult) -> GateDecision:
        """Promote or reject a measured candidate, its record written in the same transaction:
        a decision is never kept without the measurement behind it, nor the other way round."""
        measured = f"{result.describe()} on {n_tasks} task(s)"
        try:
            with bank.transaction():
                if result.accepted(self.config.min_gain):
                    reason = f"gate passed: {measured}"
                    active = promote(bank, p.skill.id, author="gate", reason=reason)
                    decision = GateDecision(p.skill.id, GateVerdict.promoted, result.describe(), result, active.id)
                else:
                    reason = f"gate failed: {measured}"
                    reject(bank, p.skill.id, author="gate", reason=reason)
                    decision = GateDecision(p.skill.id, GateVerdict.rejected, result.describe(), result)
                bank.gate_records.add(_record(p, decision.decision, reason, result))
            return decision
        except InvalidSkillError:
            # A person (the review page, the CLI) decided the candidate while it was being
            # measured: their decision stands, the round goes on, the measurement is kept.
            now = bank.get_skill(p.skill.id).status
            if now == SkillStatus.candidate:
                raise
            verb = "rejected" if now == SkillStatus.retired else now.value
            detail = f"a person {verb} it first; the gate measured {result.describe()}"
            bank.gate_records.add(_record(p, GateVerdict.decided, detail, result))
            return GateDecision(p.skill.id, GateVerdict.decided, detail, result)


def _record(p: Pending, decision: GateVerdict, reason: str, result: GateResult) -> GateRecord:
    """The record of ``result``, measured on the candidate version ``p`` holds."""
    return GateRecord(skill_id=p.skill.id, version=p.skill.version, decision=decision, reason=reason,
                      gain=result.gain, cost=result.cost, target_id=p.target, round=p.round,
                      pass_hat_k_change=result.pass_hat_k_change, success_change=result.success_change,
                      stopped_early=result.stopped_early, trials=tuple(result.trials),
                      planned=tuple(result.planned), not_reached=tuple(result.not_reached))
