"""Validating a candidate skill by re-running tasks with and without it (the evolution gate).

``evolve(bank, auto_promote=True, validate=...)`` calls ``validate(candidate, task_ids)`` for each
candidate. The validator :func:`make_validator` builds also simulates retrieval
(:meth:`TrialValidator.reach`), so the gate gives it the candidate's evidence tasks and other
tasks the candidate reaches, never one it cannot reach
(:mod:`skillbank.evolution._task_choice`).
:func:`make_validator` builds that function from a way to run one trial: it runs each
task ``trials`` times against the bank as it is (``current``) and against the bank as it would be
with the candidate promoted (``candidate``: a :class:`CandidateView`), with paired seeds, and
reports a :class:`GateMeasurement`: the gain in pass^k, the tasks that got worse and each task's
trials in both arms. How it runs is a :class:`ValidationConfig`; the ``min_gain`` it decides
against is the gate's (:class:`~skillbank.evolution.gate.GateConfig`).

No trial a validation runs is stored as a run: trials use
:class:`~skillbank.adapters._injection_middleware.SkillInjectionMiddleware`, the injection part of
:class:`~skillbank.adapters.langchain.SkillBankMiddleware`, which records nothing, so validation
neither feeds the next evolution round nor moves the skills' statistics. What the gate decides
on is kept: the measurement, each task's outcomes included, as a gate record beside the decision
(``bank.gate_records``, :mod:`skillbank.store._gate_records`, where :class:`TaskTrials` lives).
"""

from __future__ import annotations

import dataclasses
import math
import threading
import time
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from skillbank.consistency import _metrics as metrics
from skillbank.consistency.agents import middleware_keywords
from skillbank.consistency.config import MeasureConfig
from skillbank.consistency.measure import measure
from skillbank.evolution.gate import GateConfig, GateResult
from skillbank.evolution._seam import EvolutionBank
from skillbank.evolution._task_choice import Reach
from skillbank.models import GENERAL_TAG, Skill, SkillStatus
from skillbank.protocols import QueryEmbedder, ScrubsText, SkillReader
from skillbank.queries import ScoredHit, SearchFilters, SkillHit, SolvedRequest
from skillbank.retrieval import take_within
from skillbank._search import Searchable
from skillbank.store._gate_records import TaskTrials

__all__ = ["CandidateView", "GateMeasurement", "TaskTrials", "TrialValidator", "ValidationConfig", "ValidationLog",
           "make_validator"]


class CandidateView(Searchable):
    """A read view of ``bank`` in which ``candidate`` is retrievable as if it were active: what
    the injection middleware reads of a bank (a :class:`~skillbank.protocols.SkillSource`),
    nothing more.

    A draft (an edit of an active skill) replaces its target; a merge hides the skills it
    would absorb. The searches are :class:`~skillbank._search.Searchable`'s, ending in
    :meth:`search_filtered`, which adds the candidate; the rest reads the bank as it is.
    """

    def __init__(self, bank: EvolutionBank, candidate: Skill, *, replaces: str | None = None,
                 name: str | None = None, hides: Iterable[str] = ()):
        self._bank = bank
        update: dict[str, Any] = {"status": SkillStatus.active}
        if name:
            update["content"] = candidate.content.model_copy(update={"name": name})
        self.candidate = candidate.model_copy(update=update)
        self.hidden = {candidate.id, *(i for i in [replaces, *hides] if i)}
        self._vector = np.asarray(bank.embedder.embed([candidate.content.embedding_text()])[0],
                                  dtype=np.float32)

    @classmethod
    def for_pending(cls, bank: EvolutionBank, candidate: Skill) -> "CandidateView":
        """The view for a candidate as the evolution round left it (draft target, absorbs)."""
        info = bank.drafts.pending(candidate.id) or {}
        return cls(bank, candidate, replaces=info.get("target"), name=info.get("name"),
                   hides=info.get("absorb") or ())

    @property
    def embedder(self) -> QueryEmbedder:  # type: ignore[override]
        return self._bank.embedder

    @property
    def scrubber(self) -> ScrubsText:  # type: ignore[override]
        return self._bank.scrubber

    @property
    def skills(self) -> SkillReader:
        """The bank's skills as they are (pinned skills are read by reference through it)."""
        return self._bank.skills

    def render(self, hits: Sequence[SkillHit | Skill], token_budget: int | None = None) -> str:
        return self._bank.render(hits, token_budget=token_budget)

    def solved_requests(self, limit: int) -> list[SolvedRequest]:
        """The bank's recorded requests as they are (the no-tool scope reads them)."""
        return self._bank.trajectories.solved_requests(limit)

    def general_skills(self) -> list[Skill]:
        """The bank's general skills as they would be with the candidate promoted."""
        skills = [s for s in self._bank.general_skills() if s.id not in self.hidden]
        if GENERAL_TAG in self.candidate.tags:
            skills.append(self.candidate)
        return skills

    def search_filtered(self, vector: np.ndarray, k: int, filters: SearchFilters) -> list[SkillHit]:
        """:meth:`SkillBank.search_filtered` over the active skills plus the candidate."""
        if k <= 0:
            return []
        vector = np.asarray(vector, dtype=np.float32)
        # the budget applies to the merged hits, below
        around = replace(filters, token_budget=None, exclude={*filters.exclude, *self.hidden})
        hits = list(self._bank.search_filtered(vector, k + len(self.hidden), around))
        similarity = float(np.dot(self._vector, vector))
        if similarity >= filters.min_score and filters.allow([ScoredHit(self.candidate, similarity, None)]):
            hits.append(SkillHit(self.candidate, similarity))  # no usage yet: blended == similarity
        hits.sort(key=lambda h: h.score, reverse=True)
        return take_within(hits, k, filters.token_budget, skill_of=lambda h: h.skill)


@dataclass(frozen=True)
class ValidationConfig:
    """How :func:`make_validator` runs a candidate's tasks (the gate's own settings, its
    ``min_gain`` included, are :class:`~skillbank.evolution.gate.GateConfig`'s).

    Attributes:
        trials: Trials of each task in each arm (the k of the pass^k compared).
        concurrency: Trials run at once.
        seed: The trials' first seed: keeps validation seeds apart from a measurement's.
        max_tasks: Validate on at most this many of the tasks asked for (None: every one).
        regression_margin: Successes a task must lose to count as a regression.
        k: Skills injected per model call (``SkillBankMiddleware(k=...)``).
        middleware_options: Other ``SkillInjectionMiddleware`` keywords, for both arms (a
            whole ``InjectionConfig`` as ``injection``, or its explicit keywords such as
            ``reminders``; ``k`` is set on it).
        sequential: Run the tasks one at a time and stop once the verdict is settled.
    """

    trials: int = 2
    concurrency: int = 2
    seed: int = 10_000
    max_tasks: int | None = None
    regression_margin: int = 1
    k: int = 5
    middleware_options: Mapping[str, Any] = field(default_factory=dict)
    sequential: bool = True


@dataclass(frozen=True)
class GateMeasurement(GateResult):
    """What validating one candidate measured: a :class:`GateResult` whose evidence (``trials``,
    ``planned``, ``not_reached``, ``stopped_early``, ``pass_hat_k_change``, ``success_change``) is
    set whenever a task was measured, and the success rate of each arm."""

    success_current: float = 0.0
    success_candidate: float = 0.0

    def log_entry(self, candidate: Skill) -> dict[str, Any]:
        """The measurement as :class:`ValidationLog` keeps it (plain JSON values)."""
        return {"skill": candidate.name, "skill_id": candidate.id, "tasks": list(self.checked),
                "planned_tasks": list(self.planned), "gain": self.gain,
                "pass_hat_k_change": self.pass_hat_k_change, "success_change": self.success_change,
                "regressions": list(self.regressions), "success_current": self.success_current,
                "success_candidate": self.success_candidate, "trials": int(self.cost),
                "stopped_early": self.stopped_early, "not_reached": list(self.not_reached)}


@dataclass
class ValidationLog:
    """What each validation did, for the evolution report."""

    entries: list[dict[str, Any]] = field(default_factory=list)
    trials: int = 0
    seconds: float = 0.0
    lock: threading.Lock = field(default_factory=threading.Lock, repr=False)
    listener: Callable[[dict[str, Any]], None] | None = field(default=None, repr=False)


TrialFn = Callable[[Any, Any, int], bool]
"""``trial_fn(task, middleware, seed) -> success``: one trial of ``task`` with ``middleware``
(a ``SkillInjectionMiddleware``) in the agent, seeded with ``seed``."""


@dataclass
class _Tally:
    """One validation's outcomes so far, and the bounds on its final verdict (see
    :func:`make_validator`: it stops as soon as the remaining trials cannot change it)."""

    trials: int
    margin: int
    min_gain: float
    planned: int  # tasks to check in all
    deltas: list[float] = field(default_factory=list)  # per task run: (Δpass^trials + Δrate) / 2
    regressions: list[str] = field(default_factory=list)

    def task_delta(self, cur: list[bool], new: list[bool]) -> float:
        k = self.trials
        d_hat = metrics.pass_hat_k(sum(new), len(new), k) - metrics.pass_hat_k(sum(cur), len(cur), k)
        return (d_hat + (sum(new) - sum(cur)) / k) / 2

    def add(self, task_id: str, cur: list[bool], new: list[bool]) -> None:
        self.deltas.append(self.task_delta(cur, new))
        if sum(cur) - sum(new) >= self.margin:
            self.regressions.append(task_id)

    def decided(self, remaining_current: list[list[bool] | None]) -> str | None:
        """``"rejected"``/``"accepted"`` if no outcome of the tasks left can change the verdict
        (``remaining_current``: their current-arm outcomes where already known), else None."""
        if len(self.deltas) == self.planned:
            return None  # all run: the verdict is the plain one
        if self.regressions:
            return "rejected"
        all_pass, all_fail = [True] * self.trials, [False] * self.trials
        best = worst = math.fsum(self.deltas)
        regression_possible = False
        for cur in remaining_current:
            if cur is None:  # unknown: the candidate arm could gain or lose everything
                best += 1.0
                worst -= 1.0
                regression_possible = regression_possible or self.trials >= self.margin
            else:
                best += self.task_delta(cur, all_pass)
                worst += self.task_delta(cur, all_fail)
                regression_possible = regression_possible or sum(cur) >= self.margin
        if best / self.planned <= self.min_gain:
            return "rejected"
        if worst / self.planned > self.min_gain and not regression_possible:
            return "accepted"
        return None


def make_validator(
    bank: EvolutionBank,
    tasks: Mapping[str, Any] | Sequence[Any],
    trial_fn: TrialFn,
    config: ValidationConfig | None = None,
    *,
    gate: GateConfig | None = None,
    log: ValidationLog | None = None,
) -> "TrialValidator":
    """A ``validate(candidate, task_ids)`` for :func:`skillbank.evolution.evolve` (its ``gate``'s
    ``validate``), run as ``config`` says; ``log`` keeps what every call did.

    Each task id known in ``tasks`` (ids the validator does not know are skipped) is run
    ``config.trials`` times in two arms: ``current`` (``bank`` as it is) and ``candidate`` (a
    :class:`CandidateView`), with the same seeds in both arms. Returns a :class:`GateMeasurement`:
    ``gain`` = the mean of two changes (candidate − current, averaged over tasks): in
    pass^trials and in the success rate; ``regressions`` = tasks whose successes dropped by at
    least ``config.regression_margin``; ``cost`` = trials run; ``trials`` = each task's outcomes
    in both arms. The gate promotes for ``gain > min_gain`` with no regression; ``gate`` is the
    :class:`~skillbank.evolution.gate.GateConfig` whose ``min_gain`` that is (default: 0).

    ``config.sequential`` (default): tasks are run one at a time, both arms, in the order given
    (the candidate's evidence first), and validation stops as soon as the verdict is settled: a
    regression was seen, or even all-pass (all-fail) outcomes on the tasks left could not lift
    the gain above (bring it down to) ``min_gain`` with no regression possible. The verdict is
    the one running every task would give; what is saved is the trials that could not change
    it. A stopped validation reports the bound that decided as ``gain`` and says so in
    ``detail``. ``sequential=False`` runs every task.

    A task whose candidate-arm trials made model calls but never put the candidate into a
    prompt (retrieval or the toolset kept it out) is *not reached*: both arms ran the same
    prompts, so any difference there is sampling noise, and the task counts neither for the
    gain nor as a regression (``detail`` says how many were not reached). A candidate that
    reaches no task is not promoted: nothing was measured.

    ``current`` results are cached per bank snapshot, so candidates of one round share them.
    ``config.seed`` keeps validation seeds apart from the measurement's. Trials inject like
    ``SkillInjectionMiddleware(bank, k=config.k, **config.middleware_options)`` would; one middleware
    serves all trials of an arm, so its query-embedding cache is shared.
    """
    return TrialValidator(bank, tasks, trial_fn, config or ValidationConfig(),
                          min_gain=(gate or GateConfig()).min_gain,
                          log=log if log is not None else ValidationLog())


class TrialValidator:
    """The validator :func:`make_validator` returns: call it with a candidate and task ids."""

    def __init__(self, bank: EvolutionBank, tasks: Mapping[str, Any] | Sequence[Any], trial_fn: TrialFn,
                 config: ValidationConfig, *, min_gain: float, log: ValidationLog):
        from skillbank.adapters._injection_middleware import SkillInjectionMiddleware

        self.bank = bank
        self.by_id = dict(tasks) if isinstance(tasks, Mapping) else {t.id: t for t in tasks}
        self.trial_fn = trial_fn
        self.config = config
        self.min_gain = min_gain
        self.log = log
        self.middleware_options = middleware_keywords(config.k, config.middleware_options)
        self.current_middleware = SkillInjectionMiddleware(bank, **self.middleware_options)
        self.injection = self.current_middleware.config
        # Each arm is its own measurement (the current arm's results are cached), all alike.
        self.arm_config = MeasureConfig(trials=config.trials, concurrency=config.concurrency,
                                        progress=False, seed=config.seed)
        # The current arm's outcomes by (bank snapshot, task id): shared by a round's candidates.
        self.current_outcomes: dict[tuple[str, str], list[bool]] = {}

    def __call__(self, candidate: Skill, task_ids: list) -> GateMeasurement:
        started = time.perf_counter()
        chosen = [self.by_id[t] for t in dict.fromkeys(task_ids) if t in self.by_id]
        chosen = chosen[:self.config.max_tasks] if self.config.max_tasks is not None else chosen
        if not chosen:
            return GateMeasurement(passed=False, cost=0.0, detail="no runnable task to validate on")
        validation = _Validation(self, candidate, chosen)
        validation.run()
        measured = validation.measurement()
        self._record(candidate, measured, time.perf_counter() - started)
        return measured

    def reach(self, candidate: Skill) -> Reach:
        """Which tasks' requests would put ``candidate`` into the first prompt: the injector's
        own selection (:meth:`~skillbank.adapters.injection.SkillInjector.inject`) over a
        :class:`CandidateView`, as the candidate arm's first model call makes it. The agent's
        tools are not known before it is built, so nothing is kept out by toolset here (the
        trials still count a task the toolset kept it out of as not reached)."""
        from skillbank.adapters.injection import SkillInjector

        injector = SkillInjector(CandidateView.for_pending(self.bank, candidate), self.injection)
        reached: list[str] = []
        unreached: list[str] = []
        for task_id, task in self.by_id.items():
            hits = injector.inject(_request_messages(task.input)).hits
            (reached if any(h.skill.id == candidate.id for h in hits) else unreached).append(task_id)
        return Reach(reached=tuple(reached), unreached=tuple(unreached),
                     trials_per_task=2 * self.config.trials)

    def _record(self, candidate: Skill, measured: GateMeasurement, seconds: float) -> None:
        entry = measured.log_entry(candidate) if measured.trials else None
        with self.log.lock:
            self.log.trials += int(measured.cost)
            self.log.seconds += seconds
            if entry is not None:
                self.log.entries.append(entry)
        if entry is not None and self.log.listener is not None:
            self.log.listener(entry)


class _Validation:
    """One candidate's validation: its tasks run group by group (one task each when sequential)
    until the verdict is settled, then measured."""

    def __init__(self, validator: TrialValidator, candidate: Skill, chosen: list[Any]):
        from skillbank.adapters._injection_middleware import SkillInjectionMiddleware

        config = validator.config
        self.validator = validator
        self.candidate = candidate
        self.chosen = chosen
        self.snapshot = validator.bank.snapshot_id()
        self.middleware = SkillInjectionMiddleware(CandidateView.for_pending(validator.bank, candidate),
                                                   injection=validator.injection)
        self.tally = _Tally(config.trials, config.regression_margin, validator.min_gain, len(chosen))
        self.measured: dict[str, TaskTrials] = {}
        self.unreached: list[str] = []
        self.cost = 0
        self.verdict: str | None = None

    def current(self, task_id: str) -> list[bool] | None:
        return self.validator.current_outcomes.get((self.snapshot, task_id))

    def run(self) -> None:
        groups = [[t] for t in self.chosen] if self.validator.config.sequential else [self.chosen]
        for i, group in enumerate(groups):
            self._run_group(group)
            left = [t for g in groups[i + 1:] for t in g]
            self.verdict = self.tally.decided([self.current(t.id) for t in left])
            if self.verdict is not None:
                break

    def _run_group(self, group: list[Any]) -> None:
        shown_before = self.middleware.injected[self.candidate.id]
        calls_before = self.middleware.model_calls
        new = self._both_arms(group)
        # (a trial_fn that never calls the model through the middleware tells nothing of reach)
        if self.middleware.model_calls > calls_before and \
                self.middleware.injected[self.candidate.id] == shown_before:
            self.unreached.extend(t.id for t in group)  # the same prompts in both arms: noise only
            self.tally.planned -= len(group)
            return
        for task in group:
            current = self.validator.current_outcomes[(self.snapshot, task.id)]
            self.measured[task.id] = TaskTrials(task.id, tuple(current), tuple(new[task.id]))
            self.tally.add(task.id, current, new[task.id])

    def _both_arms(self, group: list[Any]) -> dict[str, list[bool]]:
        """Both arms on ``group`` (the current arm only where not cached); the candidate arm's
        outcomes by task id."""
        config = self.validator.arm_config
        fresh = [t for t in group if self.current(t.id) is None]
        if fresh:
            res = measure(self._agent, fresh, config=dataclasses.replace(config, arms=("current",)))
            for task_id, outcomes in res.results("current").items():
                self.validator.current_outcomes[(self.snapshot, task_id)] = outcomes
            self.cost += len(res.records)
        res = measure(self._agent, group, config=dataclasses.replace(config, arms=("candidate",)))
        self.cost += len(res.records)
        return res.results("candidate")

    def _agent(self, arm: str, _bank: Any, task: Any) -> Callable[[Any], bool]:
        middleware = self.validator.current_middleware if arm == "current" else self.middleware
        return lambda spec: self.validator.trial_fn(task, middleware, spec.seed)

    def measurement(self) -> GateMeasurement:
        ran = tuple(self.measured[t.id] for t in self.chosen if t.id in self.measured)
        common: dict[str, Any] = {"cost": float(self.cost), "planned": tuple(t.id for t in self.chosen),
                  "not_reached": tuple(self.unreached)}
        if not ran:
            return GateMeasurement(passed=False, **common, detail=(
                f"the candidate reached no task's prompt ({len(self.unreached)} run): nothing measured"))
        trials = self.validator.config.trials
        d_hat = math.fsum(metrics.pass_hat_k(sum(t.candidate), len(t.candidate), trials)
                          - metrics.pass_hat_k(sum(t.current), len(t.current), trials) for t in ran) / len(ran)
        d_rate = math.fsum((sum(t.candidate) - sum(t.current)) / trials for t in ran) / len(ran)
        # pass^k over two or three trials is coarse: average it with the success rate so a
        # candidate that makes tasks pass more often counts, while all-trials success weighs in.
        gain = (d_hat + d_rate) / 2
        rate_cur = sum(sum(t.current) for t in ran) / (len(ran) * trials)
        rate_new = sum(sum(t.candidate) for t in ran) / (len(ran) * trials)
        not_reached = f"; {len(self.unreached)} task(s) not reached" if self.unreached else ""
        detail = (f"pass^{trials} {d_hat:+.2f}, success {rate_cur:.0%} -> {rate_new:.0%} on "
                  f"{len(ran)} task(s){not_reached}")
        tried = len(ran) + len(self.unreached)
        stopped = tried < len(self.chosen)
        if stopped and not self.tally.regressions:
            # The verdict is settled by a bound over the tasks not run: report that bound, so the
            # gate decides as it would have with every task run.
            gain = self._bound()
            detail += (f"; stopped after {tried} of {len(self.chosen)} task(s): gain at "
                       f"{'most' if self.verdict == 'rejected' else 'least'} {gain:+.3f} whatever the rest do")
        elif stopped:
            detail += f"; stopped after {tried} of {len(self.chosen)} task(s): a regression"
        return GateMeasurement(gain=gain, regressions=tuple(self.tally.regressions), detail=detail,
                               checked=tuple(t.task_id for t in ran), trials=ran, stopped_early=stopped,
                               pass_hat_k_change=d_hat, success_change=d_rate, success_current=rate_cur,
                               success_candidate=rate_new, **common)

    def _bound(self) -> float:
        """The gain at most (rejected) or at least (accepted) whatever the tasks not run do."""
        tried = set(self.measured) | set(self.unreached)
        left = [self.current(t.id) for t in self.chosen if t.id not in tried]
        trials = self.validator.config.trials
        # As _Tally.decided bounds it: each task left at its best (rejected) or its worst
        # (accepted); one whose current arm is not known yet may gain or lose everything.
        if self.verdict == "rejected":
            rest = [1.0 if c is None else self.tally.task_delta(c, [True] * trials) for c in left]
        else:
            rest = [-1.0 if c is None else self.tally.task_delta(c, [False] * trials) for c in left]
        return (math.fsum(self.tally.deltas) + math.fsum(rest)) / self.tally.planned


def _request_messages(value: Any) -> list[Any]:
    """A task input as the messages an agent's first model call sees (the request)."""
    from langchain_core.messages import convert_to_messages

    from langchain_core.messages import HumanMessage

    from skillbank.consistency.tasks import agent_input, task_text

    given = agent_input(value)
    messages = given.get("messages") if isinstance(given, Mapping) else None
    fallback = [HumanMessage(task_text(value))]  # the task's text, when its input is not messages
    if not isinstance(messages, (list, tuple)) or not messages:
        return fallback
    try:
        return list(convert_to_messages(messages))
    except (ValueError, TypeError, NotImplementedError):
        return fallback
