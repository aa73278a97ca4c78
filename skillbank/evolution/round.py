"""``evolve``: one evolution round (after TRACE), and its report.

1. Read labelled trajectories not consumed by an earlier round (``since`` re-reads a window).
2. Group them by the skills injected into them; runs that used none are the uncovered pile.
3. For each used skill: retire it if its use is measurably harmful (``harm.py``), flag it if its
   successes look like exploits, else let the distiller contrast successes and failures.
4. Cluster the uncovered pile; induce a skill only from a cluster with ``min_support`` successes.
5. Limit events become guard skills, one per limit type and situation, unless a used skill owns
   the situation (then its revision gains the lesson).
6. Evidence is what the agent saw (``evidence.py``). A lesson learned for several different
   tools also becomes one general skill (``general.py``).
7. Lint every new or edited version (``lint.py``): rejected ones are recorded, injection-like
   ones are quarantined.
8. De-duplicate new skills into existing ones (``dedupe.py``).
9. Keep the bank within budget, retiring at most a fraction of it (``budget.py``).
10. Write every change as a new version with provenance, author and reason; new and edited
    versions start as candidates (edits of active skills as drafts, see ``review.py``).
11. Gate the candidates (``gate.py``).
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Iterable

from skillbank.errors import DuplicateSkillError, InvalidSkillError, SkillNotFoundError
from skillbank.evolution import budget as budget_mod
from skillbank.evolution.cluster import cluster_runs
from skillbank.evolution.config import EvolutionConfig
from skillbank.evolution.dedupe import Deduper
from skillbank.evolution.distiller import Distiller, SkillEvidence
from skillbank.evolution.evidence import (
    Run,
    current_round,
    finish_round,
    instance_literals,
    load_batch,
    request_words,
)
from skillbank.evolution.exploit import flag_exploits
from skillbank.evolution.gate import Gate, GateDecision
from skillbank.evolution.general import general_proposals
from skillbank.evolution.guards import Situation, situations
from skillbank.evolution.harm import assess_harm
from skillbank.evolution.lint import LintContext, LintResult, lint_content
from skillbank.evolution.lock import evolution_lock
from skillbank.evolution.proposals import ChangeKind, Proposal, Usage
from skillbank.evolution.review import (
    DRAFT_PREFIX,
    Pending,
    draft_id_for,
    is_rejected,
    pending_info,
    remember_rejection,
    save_pending,
)
from skillbank.models import GENERAL_TAG, Skill, SkillContent, SkillStatus, utcnow

FLAG = ChangeKind.flag.value


@dataclass
class Change:
    """One line of the report."""

    kind: str  # add | update | merge | split | retire | flag
    skill: str  # the skill's name
    reason: str
    evidence: tuple[str, ...] = ()
    status: str = "planned"  # planned | candidate | quarantined | active | retired | rejected | skipped
    skill_id: str | None = None  # the skill changed (the target, for an edit)
    candidate_id: str | None = None  # where the proposed version waits (a draft, for an edit)
    version: int | None = None
    note: str | None = None  # lint findings, gate result, why skipped
    origin: str = ""

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


@dataclass
class EvolutionReport:
    round: int
    dry_run: bool
    distiller: str
    trajectories: int = 0
    successes: int = 0
    failures: int = 0
    touched_skills: int = 0
    clusters: int = 0
    recurring_clusters: int = 0
    situations: int = 0
    changes: list[Change] = field(default_factory=list)
    rejected: list[Change] = field(default_factory=list)
    skipped: list[Change] = field(default_factory=list)
    exploits: dict[str, str] = field(default_factory=dict)
    gate: list[GateDecision] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    seconds: float = 0.0

    def by_kind(self, kind: str | ChangeKind) -> list[Change]:
        kind = kind.value if isinstance(kind, ChangeKind) else kind
        return [c for c in self.changes if c.kind == kind]

    @property
    def promoted(self) -> list[Change]:
        return [c for c in self.changes if c.status == "active"]

    def to_dict(self) -> dict[str, Any]:
        return {
            "round": self.round, "dry_run": self.dry_run, "distiller": self.distiller,
            "trajectories": self.trajectories, "successes": self.successes, "failures": self.failures,
            "touched_skills": self.touched_skills, "clusters": self.clusters,
            "recurring_clusters": self.recurring_clusters, "situations": self.situations,
            "changes": [c.to_dict() for c in self.changes],
            "rejected": [c.to_dict() for c in self.rejected],
            "skipped": [c.to_dict() for c in self.skipped],
            "exploits": self.exploits,
            "gate": [dataclasses.asdict(d) for d in self.gate],
            "usage": self.usage.as_dict(), "seconds": round(self.seconds, 3),
        }

    def __str__(self) -> str:
        head = (f"Evolution round {self.round} ({self.distiller}{', dry run' if self.dry_run else ''}): "
                f"{self.trajectories} trajectories ({self.successes} succeeded, {self.failures} failed), "
                f"{self.touched_skills} used skill(s), {self.recurring_clusters} recurring of "
                f"{self.clusters} uncovered cluster(s), {self.situations} limit situation(s) "
                f"in {self.seconds:.2f}s")
        lines = [head]
        if not self.changes:
            lines.append("  no changes")
        for c in self.changes:
            lines.append(f"  {c.kind:<7} {c.skill:<40} {c.status:<11} {c.reason}")
            lines.append(f"  {'':7} evidence: {_ids(c.evidence)}"
                         + (f"  [candidate {c.candidate_id}]" if c.candidate_id and c.candidate_id != c.skill_id else "")
                         + (f"  note: {c.note}" if c.note else ""))
        if self.rejected:
            lines.append(f"Rejected by lint ({len(self.rejected)}):")
            for c in self.rejected:
                lines.append(f"  {c.kind:<7} {c.skill:<40} {c.note}")
        if self.skipped:
            lines.append(f"Skipped ({len(self.skipped)}):")
            for c in self.skipped:
                lines.append(f"  {c.kind:<7} {c.skill:<40} {c.note}")
        if self.exploits:
            lines.append(f"Possible environment exploits, not learned from ({len(self.exploits)}):")
            for tid, why in list(self.exploits.items())[:10]:
                lines.append(f"  {tid}: {why}")
        waiting = [d for d in self.gate if d.decision == "waiting"]
        if waiting:
            lines.append(f"{len(waiting)} candidate(s) waiting: `skillbank candidates list`")
        u = self.usage
        if u.calls or u.failures:
            lines.append(f"Model calls: {u.calls} (input {u.input_tokens:,} tokens, output "
                         f"{u.output_tokens:,} tokens); one reflection call per trajectory would "
                         f"be {self.trajectories}")
            for f in u.failures:
                lines.append(f"  skipped: {f}")
        if self.dry_run:
            lines.append("Dry run: nothing was written.")
        return "\n".join(lines)


def _ids(ids: Iterable[str], n: int = 4) -> str:
    ids = list(ids)
    if not ids:
        return "-"
    return ", ".join(ids[:n]) + (f" (+{len(ids) - n})" if len(ids) > n else "")


def resolve_distiller(spec: Any) -> Distiller:
    """``None``/``"rule"`` -> RuleDistiller; a chat model or ``"provider:model"`` -> LLMDistiller."""
    from skillbank.evolution.rule import RuleDistiller

    if spec is None or spec == "rule":
        return RuleDistiller()
    if isinstance(spec, Distiller):
        return spec
    from skillbank.evolution.llm import LLMDistiller

    return LLMDistiller(spec)


def evolve(
    bank: Any,
    distiller: Distiller | Any = None,
    *,
    dry_run: bool = False,
    since: datetime | None = None,
    validate: Callable[[Skill, list], Any] | None = None,
    auto_promote: bool = False,
    promote_policy: Any = None,
    eval_budget: float | None = None,
    config: EvolutionConfig | None = None,
    lock_timeout: float | None = 10.0,
    **overrides: Any,
) -> EvolutionReport:
    """Run one evolution round on ``bank`` and return what it did (or, dry, would do).

    ``overrides`` set single :class:`EvolutionConfig` fields (``min_support=3``). Two rounds on
    one bank never run at once: the second waits up to ``lock_timeout`` seconds, then raises
    :class:`~skillbank.errors.LockedError`. A dry run takes no lock and writes nothing.
    """
    config = dataclasses.replace(config or EvolutionConfig(), **overrides)
    gate = Gate(validate=validate, auto_promote=auto_promote, promote_policy=promote_policy,
                eval_budget=eval_budget, min_gain=config.min_gain, holdout=config.holdout)
    lock = contextlib.nullcontext() if dry_run else evolution_lock(bank, timeout=lock_timeout)
    with lock:
        return _Round(bank, resolve_distiller(distiller), config, gate, dry_run, since).run()


@dataclass
class _Planned:
    proposal: Proposal
    content: SkillContent | None
    status: SkillStatus  # candidate | quarantined (for content), retired/quarantined (status only)
    note: str | None
    change: Change
    target: Skill | None = None


class _Round:
    def __init__(self, bank: Any, distiller: Distiller, config: EvolutionConfig, gate: Gate,
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
        bank, cfg = self.bank, self.config
        self.distiller.begin_round(scrubber=bank.scrubber)
        round_no = current_round(bank) + 1
        report = EvolutionReport(round=round_no, dry_run=self.dry_run, distiller=self.distiller.author)
        batch = load_batch(bank, since=self.since, include_heldout=cfg.include_heldout)
        self.batch = batch
        self.runs_by_id = {r.id: r for r in batch.runs}
        report.trajectories = len(batch.runs)
        report.successes = sum(r.success for r in batch.runs)
        report.failures = report.trajectories - report.successes
        report.exploits = flag_exploits(batch.runs, min_peers=cfg.exploit_min_peers)

        skills = bank.skills.get_many(batch.by_skill)
        active_start = bank.skills.list(status=SkillStatus.active)
        proposals: list[Proposal] = []

        # Step 5 routing: a limit situation goes to the used skill that owns it, if any.
        # A model may call a skill it was shown as if it were a tool: never a missing tool.
        sits = situations(batch.runs, near_share=cfg.near_budget_share,
                          skill_names=[s.name for s in bank.skills.list()])
        report.situations = len(sits)
        owned: dict[str, list[Situation]] = defaultdict(list)
        free: list[Situation] = []
        for sit in sits:
            owner = self._owner(sit, skills)
            (owned[owner].append(sit) if owner else free.append(sit))

        # Step 3: used skills.
        harm = assess_harm(bank, [s for s in skills.values() if s.status == SkillStatus.active], cfg,
                           groups={r.id: r.group for r in batch.runs})
        usable = {sid: s for sid, s in skills.items()
                  if s.status in (SkillStatus.active, SkillStatus.candidate) and not s.pinned}
        report.touched_skills = len(usable)
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
            evidence = SkillEvidence(skill=skill, runs=runs, situations=owned.get(sid, []))
            proposals.extend(self._call(lambda: self.distiller.revise(evidence, cfg), f"revise {skill.name}"))

        # Step 5: guards for situations no used skill owns.
        for sit in free:
            enough = (len(sit.failures) >= cfg.guard_min_support
                      or (sit.is_budget and len(sit.successes) >= cfg.min_support))
            if enough:
                proposals.extend(self._call(lambda: self.distiller.guard(sit, cfg), f"guard {sit.key}"))

        # Step 4: the uncovered pile.
        clusters = cluster_runs(batch.uncovered, bank.embedder, threshold=cfg.cluster_threshold,
                                max_embed=cfg.max_embed, min_support=cfg.min_support) if batch.uncovered else []
        recurring = [c for c in clusters if len(c.successes) >= cfg.min_support]
        report.clusters, report.recurring_clusters = len(clusters), len(recurring)
        for cluster in recurring:
            proposals.extend(self._call(lambda: self.distiller.induce(cluster, cfg), f"induce {cluster.key}"))

        live = [s for s in bank.skills.list() if s.status in (SkillStatus.active, SkillStatus.candidate)]
        # Step 6: a lesson learned for several different tools becomes one general skill.
        if cfg.min_general_tools:
            sources = [(p.content.all_lessons, p.evidence) for p in proposals if p.content is not None]
            sources += [(s.content.all_lessons, [r.id for r in batch.by_skill.get(s.id, ())])
                        for s in active_start]
            have = [x for s in live for x in s.content.all_lessons]
            proposals.extend(general_proposals(sources, have, cfg.min_general_tools))

        # Steps 7, 8: lint and de-duplicate, combining proposals per target.
        pool = [s for s in live if not (pending_info(bank, s.id) or {}).get("target")]
        self.deduper = Deduper(bank, pool, threshold=cfg.dedupe_threshold,
                               structural_threshold=cfg.structural_threshold)
        self.deduper.prime(p.content for p in proposals if p.target is None)
        planned = self._plan(proposals, report)
        planned.extend(self._existing_duplicates(pool, planned, report))

        # Step 9 (first half): harm retirements within the round's retire allowance.
        allowance = budget_mod.retire_allowance(len(active_start), cfg.max_retire_fraction)
        retiring = [p for p in planned if p.proposal.kind == ChangeKind.retire]
        for p in retiring[allowance:]:
            planned.remove(p)
            p.change.status, p.change.note = "skipped", (
                f"retire cap: a round may retire at most {allowance} of {len(active_start)} active skills")
            report.skipped.append(p.change)
        allowance -= min(allowance, len(retiring))

        # Step 10: write, in one transaction with the watermark: a round happens or it does not.
        written: list[Pending] = []
        report.changes.extend(p.change for p in planned)
        if not self.dry_run:
            with bank.store.transaction():
                for p in planned:
                    pending = self._write(p, round_no)
                    if pending is not None:
                        written.append(pending)
                finish_round(bank, round_no, batch.ids, utcnow())

        # Step 11: gate.
        if not self.dry_run and written:
            pool_tasks = sorted({r.task_id for r in batch.runs if r.task_id})
            self.gate.room = lambda pending: budget_mod.no_room(
                bank.skills.list(status=SkillStatus.active), pending, cfg)
            report.gate = self.gate.run(bank, written, pool_tasks)
            by_candidate = {c.candidate_id: c for c in report.changes if c.candidate_id}
            for d in report.gate:
                change = by_candidate.get(d.skill_id)
                if change is None:
                    continue
                if d.decision == "promoted":
                    change.status = "active"
                    active = bank.get_skill(d.active_id)
                    change.skill_id, change.version = active.id, active.version
                    change.note = (change.note + "; " if change.note else "") + f"gate: {d.detail}"
                elif d.decision == "rejected":
                    change.status = "rejected"
                    change.note = (change.note + "; " if change.note else "") + f"gate: {d.detail}"

        # Step 9 (second half): the bank budget, after promotions.
        leaving = {p.target.id for p in planned if p.content is None and p.target is not None}
        active_now = bank.skills.list(status=SkillStatus.active) if not self.dry_run else \
            [s for s in active_start if s.id not in leaving]
        promoted_ids = {c.skill_id for c in report.changes if c.status == "active"}
        for skill, reason in budget_mod.over_budget(active_now, cfg, protect=promoted_ids, limit=allowance):
            change = Change(kind="retire", skill=skill.name, reason=reason, skill_id=skill.id,
                            origin="budget", status="planned" if self.dry_run else "retired")
            if not self.dry_run:
                updated = bank.skills.new_version(skill.id, status=SkillStatus.retired, reason=reason,
                                                  author=self.distiller.author, note=reason,
                                                  action="status:retired")
                change.version = updated.version
            report.changes.append(change)

        report.usage = self.distiller.usage
        report.seconds = time.perf_counter() - self.started
        return report

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

    def _runs(self, ids: Iterable[str]) -> list[Run]:
        return [self.runs_by_id[i] for i in ids if i in self.runs_by_id]

    def _lint(self, content: SkillContent, evidence: tuple[str, ...], previous: SkillContent | None) -> LintResult:
        runs = self._runs(evidence)
        # Hidden literals of the whole round, and the values that vary among the runs behind
        # this skill: what is constant there is its method, what varies is an instance value.
        hidden = self.batch.hidden.merge(instance_literals(runs))
        ctx = LintContext.for_runs(runs, hidden, request_words=request_words(runs), scrubber=self.bank.scrubber,
                                   max_body_chars=self.config.max_body_chars,
                                   max_description_chars=self.config.max_description_chars)
        if previous is not None:
            ctx.known_tools |= set(previous.tools)
        return lint_content(content, ctx, previous=previous)

    def _plan(self, proposals: list[Proposal], report: EvolutionReport) -> list[_Planned]:
        bank = self.bank
        by_target: dict[str, _Planned] = {}
        new_names: dict[str, _Planned] = {}
        planned: list[_Planned] = []
        for prop in proposals:
            kind = prop.kind.value if isinstance(prop.kind, ChangeKind) else str(prop.kind)
            if kind in (ChangeKind.retire.value, FLAG):
                target = bank.get_skill(prop.target)
                status = SkillStatus.retired if kind == ChangeKind.retire.value else SkillStatus.quarantined
                change = Change(kind=kind, skill=target.name, reason=prop.reason, evidence=prop.evidence,
                                skill_id=target.id, origin=prop.origin,
                                status="planned" if self.dry_run else status.value)
                planned.append(_Planned(prop, None, status, prop.reason, change, target))
                continue
            content = prop.content
            if content is None:
                continue
            target = None
            if prop.target:
                with contextlib.suppress(SkillNotFoundError):
                    target = bank.get_skill(prop.target)
                if target is None:
                    continue
                # An edit keeps the skill's name: names are how people refer to skills.
                content = _with(content, name=target.name)
            else:
                match = self.deduper.match(content)
                if match is not None:
                    merged_into = new_names.get(match.ref) if match.ref.startswith("new:") else None
                    if merged_into is not None:
                        base = merged_into.content
                        merged = self.distiller.merge(base, content)
                        merged_into.content = merged
                        merged_into.proposal.evidence = tuple(dict.fromkeys(merged_into.proposal.evidence + prop.evidence))
                        merged_into.change.evidence = merged_into.proposal.evidence
                        merged_into.change.reason += f"; merged a similar proposal ({match.how} {match.score:.2f})"
                        continue
                    existing = bank.get_skill(match.ref)
                    if existing.pinned:
                        self._skip(report, kind, content.name, f"similar to pinned skill {existing.name}", prop)
                        continue
                    base = by_target[existing.id].content if existing.id in by_target else existing.content
                    merged = self.distiller.merge(base, content)
                    if merged.hash() == base.hash():
                        self._skip(report, kind, content.name,
                                   f"already covered by {existing.name} ({match.how} {match.score:.2f})", prop)
                        continue
                    prop = dataclasses.replace(prop, kind=ChangeKind.merge, target=existing.id,
                                               reason=f"{prop.reason}; merged into similar skill "
                                                      f"{existing.name} ({match.how} {match.score:.2f})")
                    target, content, kind = existing, merged, ChangeKind.merge.value
                else:
                    content = self._free_name(content, new_names)
            # Combine several proposals for one target into one version.
            if target is not None and target.id in by_target:
                prior = by_target[target.id]
                prior.content = self.distiller.merge(prior.content, content) if prior.content else content
                prior.proposal.evidence = tuple(dict.fromkeys(prior.proposal.evidence + prop.evidence))
                prior.change.evidence = prior.proposal.evidence
                prior.change.reason += "; " + prop.reason
                if kind == ChangeKind.merge.value:
                    prior.change.kind = kind
                continue
            change = Change(kind=kind, skill=content.name, reason=prop.reason, evidence=prop.evidence,
                            skill_id=target.id if target else None, origin=prop.origin)
            item = _Planned(dataclasses.replace(prop, kind=ChangeKind(kind)), content,
                            SkillStatus.candidate, None, change, target)
            planned.append(item)
            if target is not None:
                by_target[target.id] = item
            else:
                new_names["new:" + content.name] = item
                self.deduper.register("new:" + content.name, content)
        # Lint the final content of every planned version.
        out: list[_Planned] = []
        for item in planned:
            if item.content is None:
                out.append(item)
                continue
            previous = item.target.content if item.target is not None else None
            chash = item.content.hash()
            change = item.change
            if is_rejected(self.bank, item.content):
                self._skip(report, change.kind, change.skill, "the same edit was rejected or rolled back before",
                           item.proposal)
                continue
            if item.target is not None and chash == item.target.content_hash:
                continue
            waiting = self._waiting_draft(item)
            if waiting is not None:
                self._skip(report, change.kind, change.skill,
                           f"the same edit is already waiting for review as candidate {waiting}", item.proposal)
                continue
            result = self._lint(item.content, item.proposal.evidence, previous)
            if result.rejected:
                change.status, change.note = "rejected", f"lint: {result.reason}"
                report.rejected.append(change)
                if not self.dry_run:
                    remember_rejection(self.bank, item.content, item.target.id if item.target else None,
                                       f"lint: {result.reason}")
                continue
            suspects = [r for r in self._runs(item.proposal.evidence) if r.success and r.suspect]
            honest = [r for r in self._runs(item.proposal.evidence) if r.success and not r.suspect]
            if result.quarantined or (suspects and len(suspects) >= len(honest)):
                why = result.reason if result.quarantined else (
                    f"possible environment exploit: {len(suspects)} of its supporting successes look "
                    f"like shortcuts ({suspects[0].suspect})")
                if self.config.quarantine_flagged:
                    item.status, item.note = SkillStatus.quarantined, f"quarantined: {why}"
                    change.note = item.note
                else:
                    change.status, change.note = "rejected", f"lint: {why}"
                    report.rejected.append(change)
                    continue
            change.status = "planned" if self.dry_run else item.status.value
            out.append(item)
        return out

    def _existing_duplicates(self, pool: list[Skill], planned: list[_Planned],
                             report: EvolutionReport) -> list[_Planned]:
        """Merge proposals for active skills that already duplicate each other."""
        busy = {p.target.id for p in planned if p.target is not None}
        active = {s.id: s for s in pool if s.status == SkillStatus.active and not s.pinned}
        out: list[_Planned] = []
        for a, b, score, how in self.deduper.duplicate_pairs(set(active)):
            if a in busy or b in busy:
                continue
            keep, drop = sorted((active[a], active[b]), key=lambda s: (-s.stats.usefulness, -s.stats.uses, s.created_at))
            content = self.distiller.merge(keep.content, drop.content)
            prop = Proposal(kind=ChangeKind.merge, target=keep.id, absorb=(drop.id,), content=content,
                            origin="dedupe", reason=f"{keep.name} and {drop.name} are near-duplicates "
                                                    f"({how} {score:.2f}); merge and retire {drop.name}")
            if is_rejected(self.bank, content):
                continue
            item = _Planned(prop, content, SkillStatus.candidate, None, Change("merge", keep.name, ""), keep)
            if self._waiting_draft(item) is not None:
                busy.update((a, b))
                continue
            change = Change(kind="merge", skill=keep.name, reason=prop.reason, skill_id=keep.id,
                            origin="dedupe", status="planned" if self.dry_run else "candidate")
            out.append(_Planned(prop, content, SkillStatus.candidate, None, change, keep))
            busy.update((a, b))
        return out

    def _waiting_draft(self, item: _Planned) -> str | None:
        """The id of a pending draft that already holds this edit of an active skill."""
        target = item.target
        if target is None or target.status != SkillStatus.active or item.content is None:
            return None
        draft_id = draft_id_for(self.bank, target.id)
        if draft_id is None:
            return None
        try:
            draft = self.bank.get_skill(draft_id)
        except SkillNotFoundError:
            return None
        if draft.status not in (SkillStatus.candidate, SkillStatus.quarantined):
            return None
        same = _with(item.content, name=draft.name).hash() == draft.content_hash
        return draft.id if same else None

    def _skip(self, report: EvolutionReport, kind: str, name: str, why: str, prop: Proposal) -> None:
        report.skipped.append(Change(kind=kind, skill=name, reason=prop.reason, evidence=prop.evidence,
                                     status="skipped", note=why, origin=prop.origin))

    def _free_name(self, content: SkillContent, new_names: dict[str, _Planned]) -> SkillContent:
        """A name no other skill (or proposal this round) has; a retired namesake is reused."""
        base = content.name
        for n in range(1, 100):
            name = base if n == 1 else f"{base[:60]}-{n}"
            if "new:" + name in new_names:
                continue
            try:
                existing = self.bank.get_skill(name)
            except SkillNotFoundError:
                return _with(content, name=name)
            if existing.name == name and existing.status == SkillStatus.retired and \
                    self.bank.store.get_meta(DRAFT_PREFIX + existing.id) is None and \
                    not (pending_info(self.bank, existing.id) or {}).get("target") and \
                    not existing.name.endswith("-next"):
                return _with(content, name=name)
        raise InvalidSkillError(f"no free name for {base!r}")

    # -- writing --------------------------------------------------------------------------------

    def _write(self, item: _Planned, round_no: int) -> Pending | None:
        bank, prop, change = self.bank, item.proposal, item.change
        author = self.distiller.author
        if item.content is None:  # retire or flag
            updated = bank.skills.new_version(item.target.id, status=item.status, reason=prop.reason,
                                              author=author, provenance=prop.evidence, note=prop.reason,
                                              action=f"status:{item.status.value}")
            change.version = updated.version
            return None
        task_ids = sorted({r.task_id for r in self._runs(prop.evidence) if r.task_id})
        info = {"kind": change.kind, "evidence": list(prop.evidence), "task_ids": task_ids,
                "reason": prop.reason, "author": author, "round": round_no,
                "proposal_hash": item.content.hash(), "absorb": list(prop.absorb),
                "parent": prop.parent, "target": None, "name": item.content.name, "base_hash": None}
        target = item.target
        with bank.store.transaction():
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
            save_pending(bank, skill.id, info)
        p = Pending(skill=bank.get_skill(skill.id),
                    **{k: v for k, v in info.items() if k in Pending.__dataclass_fields__})
        return p

    def _write_draft(self, target: Skill, item: _Planned, author: str) -> Skill:
        bank, prop, change = self.bank, item.proposal, item.change
        reason = f"{change.kind} of {target.name} v{target.version}: {prop.reason}"
        draft_id = draft_id_for(bank, target.id)
        if draft_id is not None:
            with contextlib.suppress(SkillNotFoundError):
                draft = bank.get_skill(draft_id)
                content = _with(item.content, name=draft.name)
                return bank.skills.new_version(draft.id, content=content, status=item.status,
                                               author=author, reason=reason, provenance=prop.evidence,
                                               note=item.note, action=f"evolve:{change.kind}")
        for n in range(1, 100):
            suffix = "-next" if n == 1 else f"-next{n}"
            name = target.name[: 64 - len(suffix)].rstrip("-") + suffix
            try:
                bank.get_skill(name)
            except SkillNotFoundError:
                break
        else:
            raise DuplicateSkillError(f"no free draft name for {target.name}")
        content = _with(item.content, name=name)
        return bank.add_skill(**_fields(content), status=item.status, author=author, reason=reason,
                              provenance=prop.evidence, note=item.note)


def _with(content: SkillContent, **changes: Any) -> SkillContent:
    return content.model_copy(update=changes)


def _fields(content: SkillContent) -> dict[str, Any]:
    data = content.model_dump()
    fields = {key: data[key] for key in ("name", "description", "kind", "tools", "tags", "lessons", "toolset")}
    if not content.lessons:
        fields["body"] = content.body
    return fields
