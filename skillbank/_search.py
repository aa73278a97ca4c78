"""Searching a bank's active skills: the index's neighbours, the skills changed since it last
synced, the filters, then the ranking (:func:`skillbank.retrieval.select`).

:class:`Searchable` is the public face (``search`` and ``search_vector``); :class:`SkillSearch`
does the work behind ``search_filtered``.
"""

from __future__ import annotations

from typing import Callable, Iterable, Sequence

import numpy as np

from skillbank import retrieval
from skillbank.errors import DamagedIndexError
from skillbank.models import GENERAL_TAG, Skill, SkillStatus
from skillbank.protocols import QueryEmbedder, ScrubsText
from skillbank.queries import ScoredHit, SearchFilters, SkillHit
from skillbank.store._skills import SkillRepo
from skillbank.store._sync import IndexSync

__all__ = ["Searchable", "SkillSearch", "MAX_CANDIDATES"]

# The most hits one search reads from the index while its filters leave fewer than k.
MAX_CANDIDATES = 4096


class Searchable:
    """The two public searches, both ending in :meth:`search_filtered`.

    They spell the options of :class:`~skillbank.queries.SearchFilters` out as explicit keywords
    (for users, IDEs and the CLI). A class that has ``embedder`` (with ``embed_query``),
    ``scrubber`` and ``search_filtered`` gets both: the bank, and any view that searches
    differently (the evolution gate's ``CandidateView``) by overriding ``search_filtered`` alone.
    """

    embedder: QueryEmbedder
    scrubber: ScrubsText

    def search_filtered(self, vector: np.ndarray, k: int, filters: SearchFilters) -> list[SkillHit]:
        raise NotImplementedError

    def search(
        self,
        query: str,
        k: int = 5,
        *,
        min_score: float = 0.0,
        kinds: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        tools: Sequence[str] | None = None,
        token_budget: int | None = None,
        exclude: Iterable[str] = (),
        accept: Callable[[Skill], bool] | None = None,
    ) -> list[SkillHit]:
        """The top ``k`` active skills for ``query`` as ``(skill, score)`` pairs, best first.

        The keyword options are those of :class:`SearchFilters`.

        Args:
            query: The text to match (scrubbed before it is embedded).
            k: Skills returned at most.
            min_score: The lowest raw similarity (cosine) a hit may have.
            kinds: Only skills of these kinds; ``None``: any.
            tags: Only skills with one of these tags; ``None``: any.
            tools: Only skills naming one of these tools; ``None``: any.
            token_budget: The most tokens the rendered hits may take; ``None``: no cap.
            exclude: Skill ids to leave out.
            accept: ``accept(skill) -> bool``; keeps the skills it returns true for.

        Returns:
            The hits, best first; empty for ``k <= 0`` or a blank query.

        Raises:
            ValueError: ``kinds`` names an unknown kind.
        """
        if k <= 0 or not query.strip():
            return []
        vector = self.embedder.embed_query(self.scrubber(query))
        return self.search_filtered(vector, k, SearchFilters(min_score, kinds, tags, tools, token_budget, exclude,
                                                             accept))

    def search_vector(
        self,
        vector: np.ndarray,
        k: int = 5,
        *,
        min_score: float = 0.0,
        kinds: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        tools: Sequence[str] | None = None,
        token_budget: int | None = None,
        exclude: Iterable[str] = (),
        accept: Callable[[Skill], bool] | None = None,
    ) -> list[SkillHit]:
        """:meth:`search` for a query already embedded (a normalised vector).

        Args:
            vector: The embedded query.
            k: Skills returned at most.
            min_score: The lowest raw similarity (cosine) a hit may have.
            kinds: Only skills of these kinds; ``None``: any.
            tags: Only skills with one of these tags; ``None``: any.
            tools: Only skills naming one of these tools; ``None``: any.
            token_budget: The most tokens the rendered hits may take; ``None``: no cap.
            exclude: Skill ids to leave out.
            accept: ``accept(skill) -> bool``; keeps the skills it returns true for.

        Returns:
            The hits, best first; empty for ``k <= 0``.

        Raises:
            ValueError: ``kinds`` names an unknown kind.
        """
        return self.search_filtered(vector, k, SearchFilters(min_score, kinds, tags, tools, token_budget, exclude,
                                                             accept))


class SkillSearch:
    def __init__(self, indexing: IndexSync, skills: SkillRepo):
        self.indexing = indexing
        self.skills = skills

    def filtered(self, vector: np.ndarray, k: int, filters: SearchFilters) -> list[SkillHit]:
        """The top ``k`` skills for an embedded query under ``filters``."""
        if k <= 0:
            return []
        vector = np.asarray(vector, dtype=np.float32)
        # Read a few more hits than k (filters, exclusions and the blend with usage reorder
        # them), and more again while the filters leave fewer than k and the index has more.
        n = k * 4 + len(frozenset(filters.exclude))  # a frozenset already (SearchFilters)
        while True:
            try:
                found = self.nearest(vector, n, filters)
            except DamagedIndexError as exc:
                self.indexing.rebuild_damaged(exc)
                found = self.nearest(vector, n, filters)
            allowed = filters.allow(found)
            if len(allowed) >= k or len(found) < n or n >= MAX_CANDIDATES:
                break
            n = min(n * 4, MAX_CANDIDATES)
        return retrieval.select(allowed, k=k, min_score=filters.min_score,
                                token_budget=filters.token_budget)

    def nearest(self, vector: np.ndarray, n: int, filters: SearchFilters | None = None) -> list[ScoredHit]:
        """About ``n`` nearest active skills: the index's hits (filtered where the index can), and
        every skill changed since it synced, scored exactly."""
        changed = self.indexing.changed()
        hits = [h for h in self.indexing.index.query(vector, n + len(changed), filters)
                if h.skill_id not in changed]
        skills = {h.skill_id: h.skill for h in hits if h.skill is not None}
        skills.update(self.skills.get_many([h.skill_id for h in hits if h.skill is None] + list(changed)))
        out = []
        for hit in hits:
            skill = skills.get(hit.skill_id)
            # Defensive: an entry the index kept for a skill the store no longer calls active.
            if skill and skill.status == SkillStatus.active and skill.content_hash == hit.content_hash:
                out.append(ScoredHit(skill, hit.similarity, hit.vector))
        fresh = [skills[i] for i in changed if i in skills and skills[i].status == SkillStatus.active]
        if fresh:
            vectors = self.indexing.vectors(fresh)
            for skill in fresh:
                vec = vectors[skill.content_hash]
                out.append(ScoredHit(skill, float(np.dot(vec, vector)), vec))
        return out

    def general_skills(self) -> list[Skill]:
        """Active skills tagged ``general``, most useful first."""
        skills = self.skills.list(status=SkillStatus.active, tag=GENERAL_TAG)
        return sorted(skills, key=lambda s: (-retrieval.blended_score(s, 0.0), s.name))
