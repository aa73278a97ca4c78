"""What an evolution round did (or, dry, would do): :class:`EvolutionReport`, one
:class:`Change` per line."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, Iterable

from skillbank.evolution.gate import GateDecision
from skillbank.evolution._proposals import ChangeKind, Usage

__all__ = ["Change", "EvolutionReport"]


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
    """What one round read, proposed, wrote and decided; ``str(report)`` is the CLI's summary.

    Attributes:
        round: The round's number in this bank.
        dry_run: Whether it was a dry run (nothing written).
        distiller: The distiller's author name.
        trajectories: Labelled runs the round read.
        successes: Of those, how many succeeded.
        failures: Of those, how many did not.
        touched_skills: Skills used in those runs that the round may change (active or
            candidate, not pinned).
        clusters: Clusters of runs no skill covered.
        recurring_clusters: Of those, how many recur often enough to learn a skill from.
        situations: Limit situations found (limits hit, or budgets come close to): each goes to
            the used skill it belongs to, or to a new guard.
        changes: The changes planned or written, one :class:`Change` each.
        rejected: Proposals the lint rejected.
        skipped: Proposals not written, each with why in its note.
        exploits: Runs suspected of exploiting the environment, not learned from: id -> why.
        gate: The gate's decision on each candidate.
        usage: The distiller's model calls and tokens.
        seconds: The round's wall time, in seconds.
    """

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
        """The round's changes of one kind.

        Args:
            kind: A :class:`ChangeKind` or its value (``add``, ``update``, ...).

        Returns:
            The changes of that kind, in the report's order (rejected and skipped ones aside).
        """
        kind = kind.value if isinstance(kind, ChangeKind) else kind
        return [c for c in self.changes if c.kind == kind]

    @property
    def promoted(self) -> list[Change]:
        """The changes whose skill ended the round active."""
        return [c for c in self.changes if c.status == "active"]

    def to_dict(self) -> dict[str, Any]:
        """The report as JSON-ready data.

        Returns:
            Every field by name, changes, gate decisions and usage as dicts, ``seconds``
            rounded to milliseconds.
        """
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
                         + (f"  [candidate {c.candidate_id}]"
                            if c.candidate_id and c.candidate_id != c.skill_id else "")
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
        lines.extend(self._task_choice_lines())
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

    def _task_choice_lines(self) -> list[str]:
        """The gate's tasks chosen by reach, per candidate, and the trials that saved."""
        chosen = [d for d in self.gate if d.choice is not None]
        if not chosen:
            return []
        names = {c.candidate_id: c.skill for c in self.changes if c.candidate_id}
        saved = sum(d.choice.saved_trials for d in chosen if d.choice is not None)
        lines = [f"Gate tasks chosen by reach: {saved} trials saved against running every task"]
        for d in chosen:
            assert d.choice is not None
            lines.append(f"  {names.get(d.skill_id, d.skill_id):<40} {d.choice.describe()}")
        return lines


def _ids(ids: Iterable[str], n: int = 4) -> str:
    ids = list(ids)
    if not ids:
        return "-"
    return ", ".join(ids[:n]) + (f" (+{len(ids) - n})" if len(ids) > n else "")
