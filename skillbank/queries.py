"""What a skill search asks and what it gets back: the filters, and the hits at each stage.

A search's filters mean one thing wherever they are applied. :meth:`SearchFilters.clauses` is
that meaning, normalised once: each non-empty ``kinds``/``tags``/``tools`` option is a
:class:`Clause` ("the skill's kind, or one of its tags or tools, is one of these values"), every
clause must hold, and ``exclude`` drops skills by id. Three places evaluate it: Python, over
skills (:meth:`SearchFilters.admits`, for hits an index does not filter); the exact index's row
masks (:mod:`skillbank.store._index`); and pgvector's SQL (:mod:`skillbank.store._vectors`). Each
reads the clauses instead of the raw options, and a conformance test holds all three to the
same answers on both backends.

The answers, by stage: an index returns :class:`IndexHit` rows; the bank turns them into
:class:`ScoredHit` skills with their similarity (and vector, for ranking); ranking keeps
:class:`SkillHit` pairs.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property
from typing import Callable, Iterable, Literal, NamedTuple, Sequence, TypedDict

import numpy as np

from skillbank.models import Skill, SkillKind

__all__ = ["SearchFilters", "FilterOptions", "Clause", "IndexHit", "IndexState", "ScoredHit", "SkillHit",
           "SolvedRequest", "filter_hits"]

FilterField = Literal["kind", "tags", "tools"]


@dataclass(frozen=True)
class Clause:
    """The skill's ``field`` (its kind, or any one of its tags or tools) is one of ``values``."""

    field: FilterField
    values: frozenset[str]

    def holds(self, skill: Skill) -> bool:
        if self.field == "kind":
            return skill.kind.value in self.values
        return not self.values.isdisjoint(skill.tags if self.field == "tags" else skill.tools)


@dataclass(frozen=True)
class SearchFilters:
    """The keyword-only options of a skill search, in one place.

    :meth:`SkillBank.search` and :meth:`SkillBank.search_vector` spell them out as explicit
    keywords (for users, IDEs and the CLI) and hand them on as one of these; a view that searches
    differently (the evolution gate's ``CandidateView``) overrides
    :meth:`SkillBank.search_filtered` alone and keeps both public signatures.

    ``min_score`` bounds raw similarity; ``kinds``/``tags``/``tools`` keep skills of those kinds, with
    one of those tags, or naming one of those tools; ``token_budget`` caps the rendered size of the
    hits; ``exclude`` drops skills by id; ``accept(skill)``, for callers in Python (the injector's
    ``filter`` and toolset match), keeps the skills it returns true for.

    Attributes:
        min_score: The lowest raw similarity (cosine) a hit may have; usefulness never lifts one.
        kinds: Keep skills of these kinds only; ``None`` or empty: any kind.
        tags: Keep skills with one of these tags (any case); ``None`` or empty: any.
        tools: Keep skills naming one of these tools; ``None`` or empty: any.
        token_budget: The most tokens (:func:`~skillbank.retrieval.approx_tokens`) the rendered
            hits may take; ``None``: no cap.
        exclude: Skill ids to drop (stored as a frozenset).
        accept: ``accept(skill) -> bool``; keeps the skills it returns true for; ``None``: all.
    """

    min_score: float = 0.0
    kinds: Sequence[str] | None = None
    tags: Sequence[str] | None = None
    tools: Sequence[str] | None = None
    token_budget: int | None = None
    exclude: Iterable[str] = ()
    accept: Callable[[Skill], bool] | None = None

    def __post_init__(self) -> None:
        object.__setattr__(self, "exclude", frozenset(self.exclude))  # an iterator is read once

    @cached_property
    def clauses(self) -> tuple[Clause, ...]:
        """The kind, tag and tool options as clauses: kinds by their enum value (an unknown kind
        raises ``ValueError``), tags in lower case (as skills store them), tools as given."""
        options: list[tuple[FilterField, frozenset[str]]] = [
            ("kind", frozenset(SkillKind(k).value for k in self.kinds or ())),
            ("tags", frozenset(t.lower() for t in self.tags or ())),
            ("tools", frozenset(self.tools or ())),
        ]
        return tuple(Clause(field, values) for field, values in options if values)

    @property
    def narrows(self) -> bool:
        """Whether kinds/tags/tools filter in the database (pgvector then reads more neighbours)."""
        return bool(self.kinds or self.tags or self.tools)

    def admits(self, skill: Skill) -> bool:
        """Whether ``skill`` passes ``exclude``, every clause and ``accept``.

        Args:
            skill: The skill to test.

        Returns:
            ``True`` when it is not excluded, matches every kind, tag and tool clause and
            ``accept`` (if any) returns true for it.

        Raises:
            ValueError: ``kinds`` names an unknown kind.
        """
        return (skill.id not in self.exclude and all(c.holds(skill) for c in self.clauses)
                and (self.accept is None or self.accept(skill)))

    def allow(self, hits: Iterable["ScoredHit"]) -> list["ScoredHit"]:
        """The hits ``exclude``/``kinds``/``tags``/``tools``/``accept`` let through.

        Args:
            hits: Scored hits, each with its skill.

        Returns:
            The hits whose skill :meth:`admits` passes, in their order.

        Raises:
            ValueError: ``kinds`` names an unknown kind.
        """
        return [h for h in hits if self.admits(h.skill)]


class FilterOptions(TypedDict, total=False):
    """:class:`SearchFilters` as the keywords a search takes (for typing ``**filters``)."""

    min_score: float
    kinds: Sequence[str] | None
    tags: Sequence[str] | None
    tools: Sequence[str] | None
    token_budget: int | None
    exclude: Iterable[str]
    accept: Callable[[Skill], bool] | None


@dataclass
class IndexState:
    seq: int = 0  # change-log position the index files reflect
    count: int = 0  # entries expected in the collection at that position
    embedder: str = ""


@dataclass
class IndexHit:
    skill_id: str
    similarity: float
    content_hash: str
    vector: np.ndarray | None
    skill: Skill | None = None  # filled by an index that reads the skill in the same query


@dataclass
class ScoredHit:
    """A skill a search found, with its similarity to the query (not yet ranked)."""

    skill: Skill
    similarity: float
    vector: np.ndarray | None


class SkillHit(NamedTuple):
    """A skill a search or the injector chose, with its score; unpacks as ``(skill, score)``.

    Attributes:
        skill: The skill, as it stood when read.
        score: Its ranking score: the similarity to the query, moved toward the skill's measured
            usefulness as labelled uses accrue; ``1.0`` for a pinned or general skill the
            injector adds without retrieval.
    """

    skill: Skill
    score: float


class SolvedRequest(NamedTuple):
    """A request of a recorded run that succeeded, and whether that run called a tool: what the
    bank has seen a request like it need (the injector's scope for no-tool lessons reads these)."""

    text: str
    called_tool: bool


def filter_hits(
    hits: Iterable[ScoredHit],
    *,
    exclude: Iterable[str] = (),
    kinds: Sequence[str] | None = None,
    tags: Sequence[str] | None = None,
    tools: Sequence[str] | None = None,
) -> list[ScoredHit]:
    """The hits a search's ``exclude``/``kinds``/``tags``/``tools`` allow: every search filters alike."""
    return SearchFilters(kinds=kinds, tags=tags, tools=tools, exclude=exclude).allow(hits)
