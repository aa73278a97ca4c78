"""What evolution needs of a bank: :class:`EvolutionBank`, the one door a round, its gate and the
review go through.

A round reads labelled runs (``evidence``), writes skill versions (``skills``, ``add_skill``),
candidates and drafts (``drafts``), the round watermark (``rounds``) and the gate's measurements
(``gate_records``), all in transactions opened through the bank (``transaction()``), never on its
store. The gate's validation also injects skills as an agent's middleware would, so the protocol
is a :class:`~skillbank.protocols.SkillSource` too. :class:`~skillbank.bank.SkillBank` is the one
implementation; a test double needs only these attributes.
"""

from __future__ import annotations

from typing import Any, ContextManager, Iterable, Protocol, runtime_checkable

import numpy as np

from skillbank.models import Skill, SkillKind, SkillStatus, SkillVersion
from skillbank.protocols import QueryEmbedder, SkillSource
from skillbank._provenance import Source
from skillbank.queries import SearchFilters, SkillHit
from skillbank.store._drafts import DraftRepo
from skillbank.store._embeddings import EmbeddingCache
from skillbank.store._evidence import EvidenceRepo
from skillbank.store._gate_records import GateRecordRepo
from skillbank.store._rounds import RoundRepo
from skillbank.store._skills import SkillRepo
from skillbank.store._trajectories import TrajectoryRepo

__all__ = ["EvolutionBank"]


@runtime_checkable
class EvolutionBank(SkillSource, Protocol):
    """A bank as an evolution round, the gate and the review use it."""

    location: str  # where the bank is, for messages (a folder or a database URL)

    @property
    def skills(self) -> SkillRepo: ...

    @property
    def trajectories(self) -> TrajectoryRepo: ...

    @property
    def evidence(self) -> EvidenceRepo: ...

    @property
    def embeddings(self) -> EmbeddingCache: ...

    @property
    def drafts(self) -> DraftRepo: ...

    @property
    def rounds(self) -> RoundRepo: ...

    @property
    def gate_records(self) -> GateRecordRepo: ...

    @property
    def embedder(self) -> QueryEmbedder: ...

    def transaction(self) -> ContextManager[Any]: ...

    def lock(self, name: str, *, timeout: float | None, what: str, busy: Any = None) -> ContextManager[Any]: ...

    def get_skill(self, skill_id: str) -> Skill: ...

    def add_skill(self, name: str, description: str, body: str = "", *, kind: SkillKind | str = ...,
                  tools: Iterable[str] = (), tags: Iterable[str] = (), status: SkillStatus | str = ...,
                  pinned: bool = False, author: str = "human", reason: str = "created",
                  provenance: Iterable[str] = (), note: str | None = None, lessons: Iterable[Any] = (),
                  toolset: Iterable[str] = (), allow_unsafe: bool = False,
                  source: Source | None = None) -> Skill: ...

    def history(self, skill_id: str) -> list[SkillVersion]: ...

    def snapshot_id(self) -> str: ...

    def search_filtered(self, vector: np.ndarray, k: int, filters: SearchFilters) -> list[SkillHit]: ...
