"""Planning a round's changes (step 7): lint every proposed version, de-duplicate it
into existing skills or this round's other proposals, and combine proposals per target.

A :class:`Planner` turns the round's proposals into :class:`Planned` changes; what it skips or
rejects goes into the report with the reason.
"""

from __future__ import annotations

import contextlib
import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable

from skillbank.errors import InvalidSkillError, SkillNotFoundError
from skillbank.evolution._batch import Batch
from skillbank.evolution.config import EvolutionConfig
from skillbank.evolution._dedupe import Deduper
from skillbank.evolution._distiller import Distiller
from skillbank.evolution._evidence import Run, instance_literals, request_words
from skillbank.evolution._lint import LintContext, LintResult, lint_content
from skillbank.evolution._proposals import ChangeKind, Proposal, joint_author
from skillbank.evolution.report import Change, EvolutionReport
from skillbank.evolution._review import is_rejected, remember_rejection
from skillbank.evolution._seam import EvolutionBank
from skillbank.models import Skill, SkillContent, SkillStatus

__all__ = ["Planned", "Planner", "with_content"]

FLAG = ChangeKind.flag.value


@dataclass
class Planned:
    """One change the round will write: a version's content (None for a status change), the
    status it starts in, and its line in the report."""

    proposal: Proposal
    content: SkillContent | None
    status: SkillStatus  # candidate | quarantined (for content), retired/quarantined (status only)
    note: str | None
    change: Change
    target: Skill | None = None


@dataclass
class Planner:
    """Plans one round's proposals against the bank as the round found it."""

    bank: EvolutionBank
    distiller: Distiller
    config: EvolutionConfig
    dry_run: bool
    batch: Batch
    deduper: Deduper
    runs_by_id: dict[str, Run] = field(init=False)

    def __post_init__(self) -> None:
        self.runs_by_id = {r.id: r for r in self.batch.runs}

    def runs(self, ids: Iterable[str]) -> list[Run]:
        return [self.runs_by_id[i] for i in ids if i in self.runs_by_id]

    def _lint(self, content: SkillContent, evidence: tuple[str, ...], previous: SkillContent | None) -> LintResult:
        runs = self.runs(evidence)
        # Hidden literals of the whole round, and the values that vary among the runs behind
        # this skill: what is constant there is its method, what varies is an instance value.
        hidden = self.batch.hidden.merge(instance_literals(runs))
        ctx = LintContext.for_runs(runs, hidden, request_words=request_words(runs), scrubber=self.bank.scrubber,
                                   max_body_chars=self.config.max_body_chars,
                                   max_description_chars=self.config.max_description_chars)
        if previous is not None:
            ctx.known_tools |= set(previous.tools)
        return lint_content(content, ctx, previous=previous)

    def plan(self, proposals: list[Proposal], report: EvolutionReport) -> list[Planned]:
        bank = self.bank
        by_target: dict[str, Planned] = {}
        new_names: dict[str, Planned] = {}
        planned: list[Planned] = []
        target: Skill | None
        for prop in proposals:
            kind = prop.kind.value if isinstance(prop.kind, ChangeKind) else str(prop.kind)
            if kind in (ChangeKind.retire.value, FLAG):
                if prop.target is None:
                    raise SkillNotFoundError(f"a {kind} proposal names no skill")
                target = bank.get_skill(prop.target)
                status = SkillStatus.retired if kind == ChangeKind.retire.value else SkillStatus.quarantined
                change = Change(kind=kind, skill=target.name, reason=prop.reason, evidence=prop.evidence,
                                skill_id=target.id, origin=prop.origin,
                                status="planned" if self.dry_run else status.value)
                planned.append(Planned(prop, None, status, prop.reason, change, target))
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
                content = with_content(content, name=target.name)
            else:
                match = self.deduper.match(content)
                if match is not None:
                    merged_into = new_names.get(match.ref) if match.ref.startswith("new:") else None
                    if merged_into is not None:
                        base = merged_into.content
                        assert base is not None  # new_names holds only versions with content
                        merged = self.distiller.merge(base, content)
                        merged_into.content = merged
                        evidence = merged_into.proposal.evidence + prop.evidence
                        merged_into.proposal.evidence = tuple(dict.fromkeys(evidence))
                        merged_into.proposal.author = joint_author(merged_into.proposal.author, prop.author)
                        merged_into.change.evidence = merged_into.proposal.evidence
                        merged_into.change.reason += f"; merged a similar proposal ({match.how} {match.score:.2f})"
                        continue
                    existing = bank.get_skill(match.ref)
                    if existing.pinned:
                        self._skip(report, kind, content.name, f"similar to pinned skill {existing.name}", prop)
                        continue
                    base = by_target[existing.id].content if existing.id in by_target else existing.content
                    assert base is not None  # by_target holds only versions with content
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
                prior.proposal.author = joint_author(prior.proposal.author, prop.author)
                prior.change.evidence = prior.proposal.evidence
                prior.change.reason += "; " + prop.reason
                if kind == ChangeKind.merge.value:
                    prior.change.kind = kind
                continue
            change = Change(kind=kind, skill=content.name, reason=prop.reason, evidence=prop.evidence,
                            skill_id=target.id if target else None, origin=prop.origin)
            item = Planned(dataclasses.replace(prop, kind=ChangeKind(kind)), content,
                            SkillStatus.candidate, None, change, target)
            planned.append(item)
            if target is not None:
                by_target[target.id] = item
            else:
                new_names["new:" + content.name] = item
                self.deduper.register("new:" + content.name, content)
        # Lint the final content of every planned version.
        out: list[Planned] = []
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
            suspects = [r for r in self.runs(item.proposal.evidence) if r.success and r.suspect]
            honest = [r for r in self.runs(item.proposal.evidence) if r.success and not r.suspect]
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

    def existing_duplicates(self, pool: list[Skill], planned: list[Planned],
                             report: EvolutionReport) -> list[Planned]:
        """Merge proposals for active skills that already duplicate each other."""
        busy = {p.target.id for p in planned if p.target is not None}
        active = {s.id: s for s in pool if s.status == SkillStatus.active and not s.pinned}
        out: list[Planned] = []
        for a, b, score, how in self.deduper.duplicate_pairs(set(active)):
            if a in busy or b in busy:
                continue
            keep, drop = sorted((active[a], active[b]),
                                key=lambda s: (-s.stats.usefulness, -s.stats.uses, s.created_at))
            content = self.distiller.merge(keep.content, drop.content)
            prop = Proposal(kind=ChangeKind.merge, target=keep.id, absorb=(drop.id,), content=content,
                            origin="dedupe", reason=f"{keep.name} and {drop.name} are near-duplicates "
                                                    f"({how} {score:.2f}); merge and retire {drop.name}")
            if is_rejected(self.bank, content):
                continue
            item = Planned(prop, content, SkillStatus.candidate, None, Change("merge", keep.name, ""), keep)
            if self._waiting_draft(item) is not None:
                busy.update((a, b))
                continue
            change = Change(kind="merge", skill=keep.name, reason=prop.reason, skill_id=keep.id,
                            origin="dedupe", status="planned" if self.dry_run else "candidate")
            out.append(Planned(prop, content, SkillStatus.candidate, None, change, keep))
            busy.update((a, b))
        return out

    def _waiting_draft(self, item: Planned) -> str | None:
        """The id of a pending draft that already holds this edit of an active skill."""
        target = item.target
        if target is None or target.status != SkillStatus.active or item.content is None:
            return None
        draft_id = self.bank.drafts.draft_for(target.id)
        if draft_id is None:
            return None
        try:
            draft = self.bank.get_skill(draft_id)
        except SkillNotFoundError:
            return None
        if draft.status not in (SkillStatus.candidate, SkillStatus.quarantined):
            return None
        same = with_content(item.content, name=draft.name).hash() == draft.content_hash
        return draft.id if same else None

    def _skip(self, report: EvolutionReport, kind: str, name: str, why: str, prop: Proposal) -> None:
        report.skipped.append(Change(kind=kind, skill=name, reason=prop.reason, evidence=prop.evidence,
                                     status="skipped", note=why, origin=prop.origin))

    def _free_name(self, content: SkillContent, new_names: dict[str, Planned]) -> SkillContent:
        """A name no other skill (or proposal this round) has; a retired namesake is reused."""
        base = content.name
        for n in range(1, 100):
            name = base if n == 1 else f"{base[:60]}-{n}"
            if "new:" + name in new_names:
                continue
            try:
                existing = self.bank.get_skill(name)
            except SkillNotFoundError:
                return with_content(content, name=name)
            if existing.name == name and existing.status == SkillStatus.retired and \
                    self.bank.drafts.draft_for(existing.id) is None and \
                    not (self.bank.drafts.pending(existing.id) or {}).get("target") and \
                    not existing.name.endswith("-next"):
                return with_content(content, name=name)
        raise InvalidSkillError(f"no free name for {base!r}")


def with_content(content: SkillContent, **changes: Any) -> SkillContent:
    return content.model_copy(update=changes)
