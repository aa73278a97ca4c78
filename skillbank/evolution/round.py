"""``evolve``: one evolution round (after TRACE), a pipeline of stages run in the order below.

1. Read labelled trajectories not consumed by an earlier round (``since`` re-reads a window);
   runs labelled with a held-out split are left out. Group them by the skills injected into
   them; runs that used none are the uncovered pile.
2. Route limit events, as situations: each goes to the used skill that owns it, if any.
3. For each used skill: retire it if its use is measurably harmful (``_harm.py``), flag it if its
   successes look like exploits, else let the distiller contrast successes and failures (with
   the situations it owns: its revision gains their lessons).
4. Situations no used skill owns become guard skills, one per limit type and situation.
5. Cluster the uncovered pile; induce a skill only from a cluster with ``min_support`` successes.
6. A lesson learned for several different tools also becomes one general skill (``_general.py``).
   Evidence is what the agent saw (``_evidence.py``).
7. Plan (``_plan.py``): lint every new or edited version (``_lint.py``: rejected ones are
   recorded, injection-like ones are quarantined) and de-duplicate new skills into existing
   ones (``_dedupe.py``), combining proposals per target.
8. Retire at most a fraction of the bank in one round (``_budget.py``).
9. Write every change as a new version with provenance, author and reason, in one transaction
   with the watermark (``_watermark.py``); new and edited versions start as candidates (edits of
   active skills as drafts, see ``_review.py``).
10. Gate the candidates (``gate.py``).
11. Keep the bank within its budget after promotions (``_budget.py``).
"""

from __future__ import annotations

from functools import partial

import contextlib
import functools
import time
from collections import Counter, defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any, Callable, Mapping, Sequence

from skillbank._config_keywords import with_options
from skillbank.errors import SkillNotFoundError
from skillbank.evolution import _budget as budget_mod
from skillbank.evolution._batch import Batch, load_batch
from skillbank.evolution._cluster import cluster_runs
from skillbank.evolution.config import EvolutionConfig
from skillbank.evolution._dedupe import Deduper
from skillbank.evolution._distiller import Distiller, SkillEvidence
from skillbank.evolution._evidence import Run
from skillbank.evolution._exploit import flag_exploits
from skillbank.evolution.gate import Gate, GateConfig, Validator
from skillbank.evolution._general import general_proposals
from skillbank.evolution._guards import Situation, situations
from skillbank.evolution._harm import assess_harm
from skillbank.evolution._lock import evolution_lock
from skillbank.evolution._plan import Planned, Planner, with_content
from skillbank.evolution._proposals import ChangeKind, Proposal
from skillbank.evolution.report import Change, EvolutionReport
from skillbank.evolution._review import Pending
from skillbank.evolution._seam import EvolutionBank
from skillbank.evolution._watermark import finish_round
from skillbank.lessons import Lesson
from skillbank.models import GENERAL_TAG, Skill, SkillContent, SkillStatus, utcnow
from skillbank.store._drafts import free_draft_name

__all__ = ["Change", "EvolutionReport", "evolve", "resolve_distiller"]


def resolve_distiller(spec: Any) -> Distiller:
    """``None``/``"rule"`` -> RuleDistiller; a chat model or ``"provider:model"`` -> LLMDistiller;
    a list or tuple of these -> a CombinedDistiller of them, in that order."""
    from skillbank.evolution.rule import RuleDistiller

    if spec is None or spec == "rule":
        return RuleDistiller()
    if isinstance(spec, Distiller):
        return spec
    if isinstance(spec, (list, tuple)):
        from skillbank.evolution.combined import CombinedDistiller

        return CombinedDistiller(*(resolve_distiller(part) for part in spec))
    from skillbank.evolution.llm import LLMDistiller

    return LLMDistiller(spec)


def evolve(
    bank: EvolutionBank,
    distiller: Distiller | Any = None,
    *,
    dry_run: bool = False,
    since: datetime | None = None,
    config: EvolutionConfig | None = None,
    gate: GateConfig | None = None,
    lock_timeout: float | None = 10.0,
    validate: Validator | None = None,
    auto_promote: bool | None = None,
    promote_policy: Any = None,
    eval_budget: float | None = None,
    min_support: int | None = None,
    min_general_tools: int | None = None,
    examples_per_lesson: int | None = None,
    max_active: int | None = None,
    max_rendered_tokens: int | None = None,
) -> EvolutionReport:
    """Run one evolution round on ``bank`` and return what it did (or, dry, would do).

    ``evolve(bank, auto_promote=True, validate=f, eval_budget=10)``. The options callers set
    most are keywords; every other option is a field of the whole config passed as ``config=``
    (:class:`~skillbank.evolution.config.EvolutionConfig`, the round's thresholds) or ``gate=``
    (:class:`~skillbank.evolution.gate.GateConfig`, how its candidates are promoted). A keyword
    left ``None`` keeps its config's default. Two rounds on one bank never run at once: the
    second waits up to ``lock_timeout`` seconds. A dry run takes no lock and writes nothing.

    Args:
        bank: The bank whose labelled runs are read and whose skills are changed.
        distiller: What writes the proposals (see :func:`resolve_distiller`): ``None`` or
            ``"rule"``, a ``Distiller``, a chat model or ``"provider:model"``, or a list of these.
        dry_run: Plan the round and report it; write nothing.
        since: Re-read labelled runs from this time on, including runs earlier rounds consumed.
        config: A whole ``EvolutionConfig`` (then ``min_support``, ``min_general_tools``,
            ``examples_per_lesson``, ``max_active`` and ``max_rendered_tokens`` are set on it,
            not here).
        gate: A whole ``GateConfig`` (then ``validate``, ``auto_promote``, ``promote_policy``
            and ``eval_budget`` are set on it, not here).
        lock_timeout: Seconds to wait for another round on the bank (``None``: wait as long
            as it takes).
        validate: ``validate(candidate, task_ids)``, measuring a candidate for the gate
            (``GateConfig.validate``).
        auto_promote: Promote a candidate whose validation shows a gain
            (``GateConfig.auto_promote``, default ``False``).
        promote_policy: Promote without validation: ``"all"``, ``"guards"``, ``"canary"`` or a
            callable (``GateConfig.promote_policy``).
        eval_budget: Stop validating once this much cost is spent (``GateConfig.eval_budget``).
        min_support: Runs a pattern needs before it becomes a skill
            (``EvolutionConfig.min_support``, default 2).
        min_general_tools: Tools a lesson must be learned for to become a general skill; ``0``
            turns general skills off (``EvolutionConfig.min_general_tools``, default 2).
        examples_per_lesson: Worked examples kept on each lesson the rule distiller writes
            (``EvolutionConfig.examples_per_lesson``, default 0).
        max_active: Active skills the bank keeps at most (``EvolutionConfig.max_active``).
        max_rendered_tokens: Rendered tokens of the active skills at most
            (``EvolutionConfig.max_rendered_tokens``).

    Returns:
        The round's :class:`~skillbank.evolution.report.EvolutionReport`.

    Raises:
        TypeError: A keyword the round does not take (set it on ``config=`` or ``gate=``), or
            a keyword given beside the whole config it belongs to.
        LockedError: Another round held the bank's lock for ``lock_timeout`` seconds
            (:class:`~skillbank.errors.LockedError`).
    """
    config = with_options(config, EvolutionConfig, owner="evolve", argument="config", options={
        "min_support": min_support, "min_general_tools": min_general_tools,
        "examples_per_lesson": examples_per_lesson, "max_active": max_active,
        "max_rendered_tokens": max_rendered_tokens})
    gate = with_options(gate, GateConfig, owner="evolve", argument="gate", options={
        "validate": validate, "auto_promote": auto_promote, "promote_policy": promote_policy,
        "eval_budget": eval_budget})
    # Why a candidate cannot be promoted now: the bank's budget, as it is when the gate asks.
    room = functools.partial(_no_room, bank, config)
    lock = contextlib.nullcontext() if dry_run else evolution_lock(bank, timeout=lock_timeout)
    with lock:
        return _Round(bank, resolve_distiller(distiller), config, Gate(gate, room=room),
                      dry_run, since).run()


def _no_room(bank: EvolutionBank, config: EvolutionConfig, pending: Pending) -> str | None:
    return budget_mod.no_room(bank.skills.list(status=SkillStatus.active), pending, config)


# -- what the stages hand each other ----------------------------------------------------------------


@dataclass(frozen=True)
class _Reading:
    """Stage 1: the round's number and evidence, and the skills as the round found them."""

    round_no: int
    batch: Batch
    runs: dict[str, Run]  # the batch's runs by trajectory id
    used: dict[str, Skill]  # the skills injected into the batch's runs
    active_at_start: list[Skill]


@dataclass(frozen=True)
class _Routing:
    """Stage 2: limit situations, by the used skill that owns them, and those no skill owns."""

    owned: dict[str, list[Situation]]
    free: list[Situation]

    @property
    def count(self) -> int:
        return sum(map(len, self.owned.values())) + len(self.free)


@dataclass(frozen=True)
class _Clusters:
    """Stage 5: how many uncovered clusters there were, and the recurring ones' proposals."""

    clusters: int
    recurring: int
    proposals: list[Proposal]


class _Round:
    """One round: :meth:`run` calls the stages of the module's docstring, one method each, in
    that order; each takes what the stages before it returned."""

    def __init__(self, bank: EvolutionBank, distiller: Distiller, config: EvolutionConfig, gate: Gate,
                 dry_run: bool, since: datetime | None):
        self.bank = bank
        self.distiller = distiller
        self.config = config
        self.gate = gate
        self.dry_run = dry_run
        self.since = since
        self.started = time.perf_counter()

    # -- the round ------------------------------------------------------------------------------

    def run(self) -> EvolutionReport:
        self.distiller.begin_round(scrubber=self.bank.scrubber)
        reading = self._read()
        report = EvolutionReport(round=reading.round_no, dry_run=self.dry_run,
                                 distiller=self.distiller.author)
        runs = reading.batch.runs
        report.trajectories = len(runs)
        report.successes = sum(r.success for r in runs)
        report.failures = report.trajectories - report.successes
        report.exploits = flag_exploits(runs, min_peers=self.config.exploit_min_peers)

        routing = self._route(reading)
        report.situations = routing.count
        usable = self._usable(reading)
        report.touched_skills = len(usable)
        proposals = self._revise(reading, usable, routing)
        proposals += self._guard(routing)
        clusters = self._induce(reading)
        report.clusters, report.recurring_clusters = clusters.clusters, clusters.recurring
        proposals += clusters.proposals
        live = [s for s in self.bank.skills.list() if s.status in (SkillStatus.active, SkillStatus.candidate)]
        proposals += self._generalise(reading, proposals, live)

        planned = self._plan(reading, proposals, live, report)
        allowance = self._cap_retirements(reading, planned, report)
        written = self._write_all(reading, planned, report)
        self._gate_candidates(reading, written, report)
        self._keep_within_budget(reading, planned, allowance, report)

        report.usage = self.distiller.usage
        report.seconds = time.perf_counter() - self.started
        return report

    # -- the stages, in order -------------------------------------------------------------------

    def _read(self) -> _Reading:
        """Stage 1."""
        round_no = self.bank.rounds.current() + 1
        batch = load_batch(self.bank, since=self.since, include_heldout=self.config.include_heldout)
        return _Reading(round_no=round_no, batch=batch, runs={r.id: r for r in batch.runs},
                        used=self.bank.skills.get_many(batch.by_skill),
                        active_at_start=self.bank.skills.list(status=SkillStatus.active))

    def _route(self, reading: _Reading) -> _Routing:
        """Stage 2. A model may call a skill it was shown as if it were a tool: never a missing tool."""
        sits = situations(reading.batch.runs, near_share=self.config.near_budget_share,
                          skill_names=[s.name for s in self.bank.skills.list()])
        owned: dict[str, list[Situation]] = defaultdict(list)
        free: list[Situation] = []
        for sit in sits:
            owner = self._owner(sit, reading.used)
            (owned[owner].append(sit) if owner else free.append(sit))
        return _Routing(owned=dict(owned), free=free)

    @staticmethod
    def _usable(reading: _Reading) -> dict[str, Skill]:
        """The used skills a round may change: active or candidate, not pinned."""
        return {sid: s for sid, s in reading.used.items()
                if s.status in (SkillStatus.active, SkillStatus.candidate) and not s.pinned}

    def _revise(self, reading: _Reading, usable: dict[str, Skill], routing: _Routing) -> list[Proposal]:
        """Stage 3: retire, flag or revise each usable used skill, the most used first."""
        cfg, batch = self.config, reading.batch
        harm = assess_harm(self.bank, [s for s in reading.used.values() if s.status == SkillStatus.active],
                           cfg, groups={r.id: r.group for r in batch.runs})
        proposals: list[Proposal] = []
        for sid in sorted(usable, key=lambda i: (-len(batch.by_skill[i]), i)):
            skill = usable[sid]
            runs = batch.by_skill[sid]
            verdict = harm.get(sid)
            if verdict is not None and verdict.harmful:
                proposals.append(Proposal(kind=ChangeKind.retire, target=sid, origin="harm",
                                          reason=f"harmful: {verdict.describe()}",
                                          evidence=verdict.evidence))
                continue
            suspects = [r for r in runs if r.success and r.suspect]
            honest = [r for r in runs if r.success and not r.suspect]
            if len(suspects) >= cfg.min_support and len(suspects) > len(honest):
                proposals.append(Proposal(kind=ChangeKind.flag, target=sid, origin="exploit",
                                          reason=f"possible environment exploit: {len(suspects)} of its "
                                                 f"{len(suspects) + len(honest)} successes look like "
                                                 f"shortcuts ({suspects[0].suspect})",
                                          evidence=tuple(r.id for r in suspects)))
                continue
            if GENERAL_TAG in skill.tags:
                # Injected into every run, so its runs contrast everything with everything: a
                # revision would only add tool-specific bullets to a lesson meant to have none.
                continue
            evidence = SkillEvidence(skill=skill, runs=runs, situations=routing.owned.get(sid, []))
            proposals.extend(self._call(partial(self.distiller.revise, evidence, cfg), f"revise {skill.name}"))
        return proposals

    def _guard(self, routing: _Routing) -> list[Proposal]:
        """Stage 4: guards for the situations no used skill owns, where there is enough support."""
        cfg = self.config
        proposals: list[Proposal] = []
        for sit in routing.free:
            enough = (len(sit.failures) >= cfg.guard_min_support
                      or (sit.is_budget and len(sit.successes) >= cfg.min_support))
            if enough:
                proposals.extend(self._call(partial(self.distiller.guard, sit, cfg), f"guard {sit.key}"))
        return proposals

    def _induce(self, reading: _Reading) -> _Clusters:
        """Stage 5: a skill induced from each recurring cluster of the uncovered pile."""
        cfg, uncovered = self.config, reading.batch.uncovered
        clusters = cluster_runs(uncovered, self.bank.embedder, threshold=cfg.cluster_threshold,
                                max_embed=cfg.max_embed, min_support=cfg.min_support) if uncovered else []
        recurring = [c for c in clusters if len(c.successes) >= cfg.min_support]
        proposals: list[Proposal] = []
        for cluster in recurring:
            proposals.extend(self._call(partial(self.distiller.induce, cluster, cfg), f"induce {cluster.key}"))
        return _Clusters(clusters=len(clusters), recurring=len(recurring), proposals=proposals)

    def _generalise(self, reading: _Reading, proposals: list[Proposal], live: list[Skill]) -> list[Proposal]:
        """Stage 6: a lesson learned for several different tools becomes one general skill."""
        if not self.config.min_general_tools:
            return []
        by_skill = reading.batch.by_skill
        sources: list[tuple[Sequence[Lesson], Sequence[str]]] = [
            (p.content.all_lessons, p.evidence) for p in proposals if p.content is not None]
        sources += [(s.content.all_lessons, [r.id for r in by_skill.get(s.id, ())])
                    for s in reading.active_at_start]
        have = [x for s in live for x in s.content.all_lessons]
        return general_proposals(sources, have, self.config.min_general_tools)

    def _plan(self, reading: _Reading, proposals: list[Proposal], live: list[Skill],
              report: EvolutionReport) -> list[Planned]:
        """Stage 7: lint and de-duplicate, combining proposals per target; then merge active
        skills that already duplicate each other."""
        cfg = self.config
        pool = [s for s in live if not (self.bank.drafts.pending(s.id) or {}).get("target")]
        deduper = Deduper(self.bank, pool, threshold=cfg.dedupe_threshold,
                          structural_threshold=cfg.structural_threshold)
        deduper.prime(p.content for p in proposals if p.target is None)
        planner = Planner(self.bank, self.distiller, cfg, self.dry_run, reading.batch, deduper)
        planned = planner.plan(proposals, report)
        planned.extend(planner.existing_duplicates(pool, planned, report))
        return planned

    def _cap_retirements(self, reading: _Reading, planned: list[Planned], report: EvolutionReport) -> int:
        """Stage 8: harm retirements within the round's retire allowance (the planned ones past
        it are skipped); returns what is left of the allowance for stage 11."""
        active_at_start = reading.active_at_start
        allowance = budget_mod.retire_allowance(len(active_at_start), self.config.max_retire_fraction)
        retiring = [p for p in planned if p.proposal.kind == ChangeKind.retire]
        for p in retiring[allowance:]:
            planned.remove(p)
            p.change.status, p.change.note = "skipped", (
                f"retire cap: a round may retire at most {allowance} of {len(active_at_start)} active skills")
            report.skipped.append(p.change)
        return allowance - min(allowance, len(retiring))

    def _write_all(self, reading: _Reading, planned: list[Planned], report: EvolutionReport) -> list[Pending]:
        """Stage 9: write, in one transaction with the watermark: a round happens or it does not."""
        report.changes.extend(p.change for p in planned)
        written: list[Pending] = []
        if self.dry_run:
            return written
        with self.bank.transaction():
            for p in planned:
                pending = self._write(p, reading.round_no, reading.runs)
                if pending is not None:
                    written.append(pending)
            finish_round(self.bank, reading.round_no, reading.batch.ids, utcnow())
        return written

    def _gate_candidates(self, reading: _Reading, written: list[Pending], report: EvolutionReport) -> None:
        """Stage 10: the gate decides on the candidates written; their report lines follow."""
        if self.dry_run or not written:
            return
        pool_tasks = sorted({r.task_id for r in reading.batch.runs if r.task_id})
        report.gate = self.gate.run(self.bank, written, pool_tasks)
        by_candidate = {c.candidate_id: c for c in report.changes if c.candidate_id}
        for d in report.gate:
            change = by_candidate.get(d.skill_id)
            if change is None:
                continue
            if d.decision == "promoted":
                change.status = "active"
                assert d.active_id is not None  # the gate names the skill each promotion made active
                active = self.bank.get_skill(d.active_id)
                change.skill_id, change.version = active.id, active.version
                change.note = (change.note + "; " if change.note else "") + f"gate: {d.detail}"
            elif d.decision == "rejected":
                change.status = "rejected"
                change.note = (change.note + "; " if change.note else "") + f"gate: {d.detail}"
            elif d.decision == "decided":
                change.note = (change.note + "; " if change.note else "") + f"gate: {d.detail}"

    def _keep_within_budget(self, reading: _Reading, planned: list[Planned], allowance: int,
                            report: EvolutionReport) -> None:
        """Stage 11: the bank budget, after promotions, within what is left of the allowance."""
        cfg, bank = self.config, self.bank
        leaving = {p.target.id for p in planned if p.content is None and p.target is not None}
        active_now = bank.skills.list(status=SkillStatus.active) if not self.dry_run else \
            [s for s in reading.active_at_start if s.id not in leaving]
        promoted_ids = {c.skill_id for c in report.changes if c.status == "active" and c.skill_id is not None}
        for skill, reason in budget_mod.over_budget(active_now, cfg, protect=promoted_ids, limit=allowance):
            change = Change(kind="retire", skill=skill.name, reason=reason, skill_id=skill.id,
                            origin="budget", status="planned" if self.dry_run else "retired")
            if not self.dry_run:
                updated = bank.skills.new_version(skill.id, status=SkillStatus.retired, reason=reason,
                                                  author=self.distiller.author, note=reason,
                                                  action="status:retired")
                change.version = updated.version
            report.changes.append(change)

    # -- helpers --------------------------------------------------------------------------------

    def _call(self, fn: Callable[[], list[Proposal]], what: str) -> list[Proposal]:
        try:
            return list(fn() or [])
        except Exception as exc:  # one bad distillation must not sink the round
            self.distiller.usage.failures.append(f"{what}: {type(exc).__name__}: {exc}")
            return []

    @staticmethod
    def _owner(sit: Situation, skills: dict[str, Skill]) -> str | None:
        if sit.tool is None:
            return None
        counts: Counter = Counter()
        runs = sit.failures + sit.successes
        for run in runs:
            for sid in run.skills:
                skill = skills.get(sid)
                if skill and sit.tool in skill.tools and skill.status != SkillStatus.retired and not skill.pinned:
                    counts[sid] += 1
        if not counts:
            return None
        sid, n = counts.most_common(1)[0]
        return sid if n * 2 >= len(runs) else None

    # -- writing --------------------------------------------------------------------------------

    def _write(self, item: Planned, round_no: int, runs: Mapping[str, Run]) -> Pending | None:
        """Write one planned change as a new version (a new skill, a draft, or a status)."""
        bank, prop, change = self.bank, item.proposal, item.change
        author = prop.author or self.distiller.author
        if item.content is None:  # retire or flag
            assert item.target is not None  # the planner gives every status change its skill
            updated = bank.skills.new_version(item.target.id, status=item.status, reason=prop.reason,
                                              author=author, provenance=prop.evidence, note=prop.reason,
                                              action=f"status:{item.status.value}")
            change.version = updated.version
            return None
        task_ids = sorted({t for i in prop.evidence if i in runs and (t := runs[i].task_id)})
        info: dict[str, Any] = {"kind": change.kind, "evidence": list(prop.evidence), "task_ids": task_ids,
                "reason": prop.reason, "author": author, "round": round_no,
                "proposal_hash": item.content.hash(), "absorb": list(prop.absorb),
                "parent": prop.parent, "target": None, "name": item.content.name, "base_hash": None}
        target = item.target
        with bank.transaction():
            if target is None:
                try:
                    existing = bank.get_skill(item.content.name)
                except SkillNotFoundError:
                    existing = None
                if existing is None:
                    skill = bank.add_skill(**_fields(item.content), status=item.status, author=author,
                                           reason=f"{change.kind}: {prop.reason}", provenance=prop.evidence,
                                           note=item.note)
                else:  # a retired namesake comes back as a candidate
                    skill = bank.skills.new_version(existing.id, content=item.content, status=item.status,
                                                    author=author, reason=f"{change.kind}: {prop.reason}",
                                                    provenance=prop.evidence, note=item.note,
                                                    action=f"evolve:{change.kind}")
                change.skill_id = change.candidate_id = skill.id
                change.version = skill.version
            elif target.status == SkillStatus.active:
                skill = self._write_draft(target, item, author)
                info.update(target=target.id, base_hash=target.content_hash, name=target.name)
                change.skill_id, change.candidate_id, change.version = target.id, skill.id, skill.version
            else:  # a candidate or retired skill is edited in place
                skill = bank.skills.new_version(target.id, content=item.content, status=item.status,
                                                author=author, reason=f"{change.kind}: {prop.reason}",
                                                provenance=prop.evidence, note=item.note,
                                                action=f"evolve:{change.kind}")
                change.skill_id = change.candidate_id = skill.id
                change.version = skill.version
            bank.drafts.save_pending(skill.id, info)
        p = Pending(skill=bank.get_skill(skill.id),
                    **{k: v for k, v in info.items() if k in Pending.__dataclass_fields__})
        return p

    def _write_draft(self, target: Skill, item: Planned, author: str) -> Skill:
        bank, prop, change = self.bank, item.proposal, item.change
        assert item.content is not None  # _write drafts only versions with content
        reason = f"{change.kind} of {target.name} v{target.version}: {prop.reason}"
        draft_id = bank.drafts.draft_for(target.id)
        if draft_id is not None:
            with contextlib.suppress(SkillNotFoundError):
                draft = bank.get_skill(draft_id)
                content = with_content(item.content, name=draft.name)
                return bank.skills.new_version(draft.id, content=content, status=item.status,
                                               author=author, reason=reason, provenance=prop.evidence,
                                               note=item.note, action=f"evolve:{change.kind}")
        name = free_draft_name(target.name, exists=lambda n: _named(bank, n))
        content = with_content(item.content, name=name)
        return bank.add_skill(**_fields(content), status=item.status, author=author, reason=reason,
                              provenance=prop.evidence, note=item.note)



def _named(bank: Any, name: str) -> bool:
    try:
        bank.get_skill(name)
    except SkillNotFoundError:
        return False
    return True


def _fields(content: SkillContent) -> dict[str, Any]:
    data = content.model_dump()
    fields = {key: data[key] for key in ("name", "description", "kind", "tools", "tags", "lessons", "toolset")}
    if not content.lessons:
        fields["body"] = content.body
    return fields
