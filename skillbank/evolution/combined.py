"""``CombinedDistiller``: several distillers on the same evidence, their proposals pooled.

The rule distiller finds what the runs *show* (limits, a contrast of calls, a unit the
successes stated); an LLM distiller can say what they *mean* (how an argument is derived from
the request). Run together, both see every skill's evidence and every uncovered cluster; the
round's planner then folds proposals for one skill into one version, as it does for any two
proposals. Each proposal keeps the author of the part that wrote it, so provenance still tells
model-written text from rule-written text (and a merge of the two counts as model-written).
Guards are template-written by every distiller alike, so they are written once.
"""

from __future__ import annotations

from typing import Callable

from skillbank.evolution._cluster import Cluster
from skillbank.evolution.config import EvolutionConfig
from skillbank.evolution._distiller import Distiller, SkillEvidence
from skillbank.evolution._proposals import Proposal

__all__ = ["CombinedDistiller"]


class CombinedDistiller(Distiller):
    """``CombinedDistiller(RuleDistiller(), LLMDistiller(model))``: every part on every piece of
    evidence, in the order given; one usage count for the round.

    Args:
        *parts: The distillers, two or more, run in this order; the name joins theirs with ``+``.

    Raises:
        ValueError: Fewer than two distillers given.
    """

    def __init__(self, *parts: Distiller):
        if len(parts) < 2:
            raise ValueError("CombinedDistiller needs at least two distillers; pass the one "
                             "distiller itself to evolve() otherwise")
        super().__init__()
        self.parts = parts
        self.name = "+".join(part.name for part in parts)

    def begin_round(self, scrubber: Callable[[str], str] | None = None) -> None:
        """Reset the round's counters, here and in every part, which then count into this
        distiller's ``usage``.

        Args:
            scrubber: Applied to the text a model is sent from now on, by every part; ``None``:
                keep the current ones.
        """
        super().begin_round(scrubber)
        for part in self.parts:
            part.begin_round(scrubber)
            part.usage = self.usage  # one count: the round reports the combined usage

    def revise(self, evidence: SkillEvidence, config: EvolutionConfig) -> list[Proposal]:
        """Every part's edits for one used skill, in the parts' order; a part that raises is
        noted in ``usage.failures`` and the others' proposals are kept.

        Args:
            evidence: The skill and the labelled runs it was injected into.
            config: The round's settings.

        Returns:
            The parts' proposals, each with its part's author unless it named one.
        """
        return self._pooled(lambda part: part.revise(evidence, config), f"revise {evidence.skill.name}")

    def induce(self, cluster: Cluster, config: EvolutionConfig) -> list[Proposal]:
        """Every part's new skills for one cluster, pooled as in :meth:`revise`.

        Args:
            cluster: Similar runs into which no skill was injected (from the uncovered pile).
            config: The round's settings.

        Returns:
            The parts' proposals, each with its part's author unless it named one.
        """
        return self._pooled(lambda part: part.induce(cluster, config), f"induce {cluster.key}")

    def _pooled(self, call: Callable[[Distiller], list[Proposal]], what: str) -> list[Proposal]:
        out: list[Proposal] = []
        for part in self.parts:
            try:
                proposals = list(call(part) or [])
            except Exception as exc:  # one part failing must not lose the other parts' proposals
                self.usage.failures.append(f"{part.name}: {what}: {type(exc).__name__}: {exc}")
                continue
            for proposal in proposals:
                proposal.author = proposal.author or part.author
            out.extend(proposals)
        return out
