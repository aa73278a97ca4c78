"""Validating a candidate skill by re-running tasks with and without it (the evolution gate).

``evolve(bank, auto_promote=True, validate=...)`` calls ``validate(candidate, task_ids)`` for each
candidate, with the tasks of the candidate's evidence plus a sample of other tasks from the same
round. :func:`make_validator` builds that function from a way to run one trial: it runs each
task ``trials`` times against the bank as it is (``current``) and against the bank as it would be
with the candidate promoted (``candidate``: a :class:`CandidateView`), with paired seeds, and
reports the gain in pass^k and the tasks that got worse.

Nothing a validation runs is stored: trials use
:class:`~skillbank.adapters.injection_middleware.SkillInjectionMiddleware`, the injection part of
:class:`~skillbank.adapters.langchain.SkillBankMiddleware`, which records nothing, so validation
neither feeds the next evolution round nor moves the skills' statistics.
"""

from __future__ import annotations

import math
import threading
from dataclasses import dataclass, field, replace
from typing import Any, Callable, Iterable, Mapping, Sequence

import numpy as np

from skillbank.bank import SkillBank
from skillbank.consistency import metrics
from skillbank.consistency.config import MeasureConfig
from skillbank.consistency.measure import measure
from skillbank.evolution.seam import EvolutionBank
from skillbank.models import GENERAL_TAG, Skill, SkillStatus
from skillbank.queries import Candidate, SearchFilters, SkillHit
from skillbank.retrieval import take_within

__all__ = ["CandidateView", "make_validator", "ValidationLog"]


class CandidateView:
    """A read view of ``bank`` in which ``candidate`` is retrievable as if it were active.

    A draft (an edit of an active skill) replaces its target; a merge hides the skills it
    would absorb. Everything but :meth:`search` is the bank's own.
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

    def __getattr__(self, name: str) -> Any:
        return getattr(self._bank, name)

    def general_skills(self) -> list[Skill]:
        """The bank's general skills as they would be with the candidate promoted."""
        skills = [s for s in self._bank.general_skills() if s.id not in self.hidden]
        if GENERAL_TAG in self.candidate.tags:
            skills.append(self.candidate)
        return skills

    # The public searches are the bank's own (same keywords, and ``search`` embeds with the bank's
    # embedder); both end in :meth:`search_filtered`, which adds the candidate.
    search = SkillBank.search
    search_vector = SkillBank.search_vector

    def search_filtered(self, vector: np.ndarray, k: int, filters: SearchFilters) -> list[SkillHit]:
        """:meth:`SkillBank.search_filtered` over the active skills plus the candidate."""
        if k <= 0:
            return []
        vector = np.asarray(vector, dtype=np.float32)
        # the budget applies to the merged hits, below
        around = replace(filters, token_budget=None, exclude={*filters.exclude, *self.hidden})
        hits = list(self._bank.search_filtered(vector, k + len(self.hidden), around))
        similarity = float(np.dot(self._vector, vector))
        if similarity >= filters.min_score and filters.allow([Candidate(self.candidate, similarity, None)]):
            hits.append(SkillHit(self.candidate, similarity))  # no usage yet: blended == similarity
        hits.sort(key=lambda h: h.score, reverse=True)
        return take_within(hits, k, filters.token_budget, skill_of=lambda h: h.skill)


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
    *,
    trials: int = 2,
    concurrency: int = 2,
    seed: int = 10_000,
    max_tasks: int | None = None,
    log: ValidationLog | None = None,
    regression_margin: int = 1,
    k: int = 5,
    middleware_options: Mapping[str, Any] | None = None,
    min_gain: float = 0.0,
    sequential: bool = True,
) -> Callable[[Skill, list], dict[str, Any]]:
    """A ``validate(candidate, task_ids)`` for :func:`skillbank.evolution.evolve`.

    Each task id known in ``tasks`` (ids the validator does not know are skipped) is run
    ``trials`` times in two arms: ``current`` (``bank`` as it is) and ``candidate`` (a
    :class:`CandidateView`), with the same seeds in both arms. Returns the gate's dict:
    ``gain`` = the mean of two changes (candidate − current, averaged over tasks): in
    pass^trials and in the success rate; ``regressions`` = tasks whose successes dropped by at
    least ``regression_margin``; ``cost`` = trials run. The gate promotes for ``gain > min_gain``
    with no regression (pass the gate's ``min_gain`` here too; 0 by default in both).

    ``sequential`` (default): tasks are run one at a time, both arms, in the order given (the
    candidate's evidence first), and validation stops as soon as the verdict is settled: a
    regression was seen, or even all-pass (all-fail) outcomes on the tasks left could not lift
    the gain above (bring it down to) ``min_gain`` with no regression possible. The verdict is
    the one running every task would give; what is saved is the trials that could not change
    it. A stopped validation reports the bound that decided as ``gain`` and says so in
    ``detail``. ``sequential=False`` runs every task.

    A task whose candidate-arm trials made model calls but never put the candidate into a
    prompt (retrieval or the toolset kept it out) is *not reached*: both arms ran the same prompts, so any difference
    there is sampling noise, and the task counts neither for the gain nor as a regression
    (``detail`` says how many were not reached). A candidate that reaches no task is not
    promoted: nothing was measured.

    ``current`` results are cached per bank snapshot, so candidates of one round share them.
    ``seed`` keeps validation seeds apart from the measurement's. Trials inject like
    ``SkillBankMiddleware(bank, k=k, **middleware_options)`` would; one middleware serves all
    trials of an arm, so its query-embedding cache is shared.
    """
    from skillbank.adapters.injection_middleware import SkillInjectionMiddleware

    by_id = dict(tasks) if isinstance(tasks, Mapping) else {t.id: t for t in tasks}
    cache: dict[tuple[str, str], list[bool]] = {}
    log = log if log is not None else ValidationLog()
    options = {"k": k, **dict(middleware_options or {})}
    current_middleware = SkillInjectionMiddleware(bank, **options)
    # Each arm is its own measurement (the current arm's results are cached), all alike.
    arm_config = MeasureConfig(trials=trials, concurrency=concurrency, progress=False, seed=seed)

    def validate(candidate: Skill, task_ids: list) -> dict[str, Any]:
        import time

        t0 = time.perf_counter()
        chosen = [by_id[t] for t in dict.fromkeys(task_ids) if t in by_id]
        if max_tasks is not None:
            chosen = chosen[:max_tasks]
        if not chosen:
            return {"gain": 0.0, "passed": False, "cost": 0.0,
                    "detail": "no runnable task to validate on"}
        view = CandidateView.for_pending(bank, candidate)
        candidate_middleware = SkillInjectionMiddleware(view, **options)
        snapshot = bank.snapshot_id()

        def factory(arm: str, _bank: Any, task: Any) -> Callable[[Any], bool]:
            middleware = current_middleware if arm == "current" else candidate_middleware
            return lambda spec: trial_fn(task, middleware, spec.seed)

        def run(group: list[Any]) -> tuple[dict[str, list[bool]], int]:
            """Both arms on ``group`` (the current arm only where not cached)."""
            fresh = [t for t in group if (snapshot, t.id) not in cache]
            cost = 0
            if fresh:
                res = measure(factory, fresh, arms=("current",), config=arm_config)
                for task_id, outcomes in res.results("current").items():
                    cache[(snapshot, task_id)] = outcomes
                cost += len(res.records)
            res = measure(factory, group, arms=("candidate",), config=arm_config)
            return res.results("candidate"), cost + len(res.records)

        tally = _Tally(trials, regression_margin, min_gain, len(chosen))
        runs: dict[str, dict[str, list[bool]]] = {"current": {}, "candidate": {}}
        unreached: list[str] = []
        cost, verdict = 0, None
        groups = [[t] for t in chosen] if sequential else [chosen]
        for i, group in enumerate(groups):
            shown_before = candidate_middleware.injected[candidate.id]
            calls_before = candidate_middleware.model_calls
            new, spent = run(group)
            cost += spent
            # (a trial_fn that never calls the model through the middleware tells nothing of reach)
            if candidate_middleware.model_calls > calls_before and \
                    candidate_middleware.injected[candidate.id] == shown_before:
                unreached.extend(t.id for t in group)  # the same prompts in both arms: noise only
                tally.planned -= len(group)
            else:
                for task in group:
                    runs["current"][task.id] = cache[(snapshot, task.id)]
                    runs["candidate"][task.id] = new[task.id]
                    tally.add(task.id, runs["current"][task.id], new[task.id])
            left = [t for g in groups[i + 1:] for t in g]
            verdict = tally.decided([cache.get((snapshot, t.id)) for t in left])
            if verdict is not None:
                break

        ran = [t for t in chosen if t.id in runs["candidate"]]
        not_reached = f"; {len(unreached)} task(s) not reached" if unreached else ""
        if not ran:
            with log.lock:
                log.trials += cost
                log.seconds += time.perf_counter() - t0
            return {"gain": 0.0, "passed": False, "cost": float(cost), "checked": [],
                    "detail": f"the candidate reached no task's prompt ({len(unreached)} run): nothing measured"}
        k = trials
        hat_deltas = [metrics.pass_hat_k(sum(runs["candidate"][t.id]), len(runs["candidate"][t.id]), k)
                      - metrics.pass_hat_k(sum(runs["current"][t.id]), len(runs["current"][t.id]), k) for t in ran]
        rate_deltas = [(sum(runs["candidate"][t.id]) - sum(runs["current"][t.id])) / trials for t in ran]
        d_hat = math.fsum(hat_deltas) / len(ran)
        d_rate = math.fsum(rate_deltas) / len(ran)
        # pass^k over two or three trials is coarse: average it with the success rate so a
        # candidate that makes tasks pass more often counts, while all-trials success weighs in.
        gain = (d_hat + d_rate) / 2
        regressions = list(tally.regressions)
        rate_cur = sum(sum(runs["current"][t.id]) for t in ran) / (len(ran) * trials)
        rate_new = sum(sum(runs["candidate"][t.id]) for t in ran) / (len(ran) * trials)
        detail = (f"pass^{k} {d_hat:+.2f}, success {rate_cur:.0%} -> {rate_new:.0%} on "
                  f"{len(ran)} task(s){not_reached}")
        stopped = len(ran) + len(unreached) < len(chosen)
        if stopped and not regressions:
            # The verdict is settled by a bound over the tasks not run: report that bound, so the
            # gate decides as it would have with every task run.
            tried = {t.id for t in ran} | set(unreached)
            left = [cache.get((snapshot, t.id)) for t in chosen if t.id not in tried]
            all_pass, all_fail = [True] * trials, [False] * trials
            bound = math.fsum(tally.deltas) + math.fsum(
                (1.0 if c is None else tally.task_delta(c, all_pass)) if verdict == "rejected"
                else tally.task_delta(c, all_fail) for c in left)
            gain = bound / tally.planned
            detail += (f"; stopped after {len(tried)} of {len(chosen)} task(s): gain at "
                       f"{'most' if verdict == 'rejected' else 'least'} {gain:+.3f} whatever the rest do")
        elif stopped:
            detail += f"; stopped after {len(ran) + len(unreached)} of {len(chosen)} task(s): a regression"
        with log.lock:
            log.trials += cost
            log.seconds += time.perf_counter() - t0
            log.entries.append({"skill": candidate.name, "skill_id": candidate.id,
                                "tasks": [t.id for t in ran], "planned_tasks": [t.id for t in chosen],
                                "gain": gain, "pass_hat_k_change": d_hat, "success_change": d_rate,
                                "regressions": regressions, "success_current": rate_cur,
                                "success_candidate": rate_new, "trials": cost, "stopped_early": stopped,
                                "not_reached": unreached})
        if log.listener is not None:
            log.listener(log.entries[-1])
        return {"gain": gain, "regressions": regressions, "cost": float(cost), "detail": detail,
                "checked": [t.id for t in ran]}

    validate.log = log  # type: ignore[attr-defined]
    return validate
