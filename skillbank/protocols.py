"""The seams between the layers: what one layer needs of another, as small protocols.

A caller types its argument as the protocol it uses, not as the class that happens to provide
it today: the skill injector reads a :class:`SkillSource`, the recorder writes to a
:class:`TrajectorySink` (a :class:`~skillbank.bank.SkillBank` is both: an :class:`AgentBank`, as
the middleware that does both takes it), the bank's search reads a
:class:`VectorIndex`, and the bank takes an :class:`Embedder`, a scrubber (:class:`ScrubsText`) and a
:class:`Screen`. These are structural: anything with the right attributes fits, a test double
included.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Awaitable, ContextManager, Iterable, Protocol, Sequence, runtime_checkable

import numpy as np
from typing_extensions import Unpack

from skillbank.models import Injection, LimitEvent, Outcome, Skill, SkillContent, Step, Trajectory
from skillbank.queries import FilterOptions, IndexHit, IndexState, SearchFilters, SkillHit, SolvedRequest

__all__ = ["Embedder", "QueryEmbedder", "ScrubsText", "Verifier", "Screen", "ScreenResult", "VectorIndex",
           "ChangeLog", "SkillReader", "SkillSource", "SolvedRequests", "TrajectoryLog", "TrajectorySink", "AgentBank"]


@runtime_checkable
class Embedder(Protocol):
    """Anything with a stable ``name`` and ``embed(texts) -> (n, d) array``.

    Attributes:
        name: Identifies the vectors it makes: the same name, the same vectors (a bank caches
            vectors by embedder name).
    """

    name: str

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed ``texts``, one row each.

        Args:
            texts: The texts to embed.

        Returns:
            An ``(n, d)`` array, row ``i`` for ``texts[i]`` (the bank normalises the rows).
        """
        ...


class QueryEmbedder(Embedder, Protocol):
    """An embedder as the bank resolves it: one query at a time too (cached where it can be)."""

    def embed_query(self, text: str) -> np.ndarray: ...


class ScrubsText(Protocol):
    """Text as it may be stored or shown: secrets and personal data redacted (the class
    :class:`skillbank._scrub.Scrubber` is one; so is any ``str -> str`` function)."""

    def __call__(self, text: str, /) -> str: ...


class Verifier(Protocol):
    """Labels a finished run from its final state: ``True``/``False``, a score in [0, 1], an
    :class:`~skillbank.models.Outcome`, or ``None`` when it cannot say; an ``async`` verifier
    returns an awaitable of the same."""

    def __call__(self, state: Any, /) -> bool | float | Outcome | None | Awaitable[Any]: ...


class ScreenResult(Protocol):
    """A screen's verdict: ``ok``, or the ``reason`` it is not."""

    @property
    def ok(self) -> bool: ...

    @property
    def reason(self) -> str: ...


class Screen(Protocol):
    """Checks text entering the bank from outside a round (added, edited, imported); lines it
    shares with ``previous`` (the version it replaces) were already let in."""

    def __call__(self, content: SkillContent, *, previous: SkillContent | None = None) -> ScreenResult: ...


class VectorIndex(Protocol):
    """What the bank needs of a search index (see ``SkillBank.sync_index``)."""

    @property
    def view(self) -> IndexState:
        """The change-log position this process's view reflects."""

    def ensure_fresh(self) -> IndexState: ...

    def write_lock(self) -> ContextManager[None]: ...

    def apply(self, upserts: list[tuple[str, np.ndarray, str]], deletes: list[str], seq: int) -> None: ...

    def entries(self) -> dict[str, str]: ...

    def query(self, vector: np.ndarray, n: int, filters: SearchFilters | None = None) -> list[IndexHit]: ...

    def destroy(self) -> None: ...

    def close(self) -> None: ...


class ChangeLog(Protocol):
    """The skills' change log, as far as a cache keyed on it needs."""

    def last_event_seq(self) -> int: ...


class SkillReader(ChangeLog, Protocol):
    def get(self, id_or_name: str) -> Skill: ...


@runtime_checkable
class SkillSource(Protocol):
    """What the skill injector reads from a bank."""

    @property
    def embedder(self) -> Embedder: ...

    @property
    def scrubber(self) -> ScrubsText: ...

    @property
    def skills(self) -> SkillReader: ...

    def general_skills(self) -> list[Skill]: ...

    def search(self, query: str, k: int = 5, **filters: Unpack[FilterOptions]) -> list[SkillHit]: ...

    def search_vector(self, vector: np.ndarray, k: int = 5, **filters: Unpack[FilterOptions]) -> list[SkillHit]: ...

    def render(self, hits: Sequence[SkillHit | Skill], token_budget: int | None = None) -> str: ...


@runtime_checkable
class SolvedRequests(Protocol):
    """A skill source that also knows what its recorded runs needed: the requests of the newest
    ``limit`` runs that succeeded, each with whether it called a tool. The injector scopes a
    no-tool lesson by them when the source has them (a :class:`~skillbank.bank.SkillBank` does)."""

    def solved_requests(self, limit: int) -> list[SolvedRequest]: ...


class TrajectoryLog(Protocol):
    """The runs a recorder writes, one trajectory at a time."""

    def start(self, traj: Trajectory) -> None: ...

    def append(self, trajectory_id: str, steps: Iterable[Step] = (), limit_events: Iterable[LimitEvent] = (),
               injections: Iterable[Injection] = (), *, model: str | None = None) -> None: ...

    def finish(self, trajectory_id: str, *, status: str = "complete", final_answer: str | None = None,
               error: str | None = None, ended_at: datetime | None = None) -> None: ...

    def discard(self, trajectory_id: str) -> None: ...

    def get(self, trajectory_id: str) -> Trajectory: ...

    def record_outcome(self, trajectory_id: str, outcome: Outcome) -> None: ...


@runtime_checkable
class TrajectorySink(Protocol):
    """What the recorder writes runs to: the trajectories, under the bank's scrubber, stamped
    with the bank's snapshot (cached on the skills' change log)."""

    @property
    def trajectories(self) -> TrajectoryLog: ...

    @property
    def skills(self) -> ChangeLog: ...

    @property
    def scrubber(self) -> ScrubsText: ...

    def snapshot_id(self) -> str: ...


@runtime_checkable
class AgentBank(SkillSource, TrajectorySink, Protocol):
    """Both sides of a bank an agent's middleware uses (``SkillBankMiddleware``): the skills it
    injects and the runs it records."""

    @property
    def skills(self) -> SkillReader: ...
