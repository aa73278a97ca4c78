"""skillbank: a self-evolving, versioned skill bank for LangChain / LangGraph agents.

Importing this package is cheap: torch, sentence-transformers and Chroma load on first use.
"""

from skillbank.bank import PruneAction, SkillBank
from skillbank.chat import resolve_chat_model
from skillbank.embed import Embedder, HashEmbedder, MiniLMEmbedder, resolve_embedder
from skillbank.errors import (
    CorruptBankError,
    DuplicateSkillError,
    InvalidSkillError,
    LockedError,
    NotABankError,
    SchemaTooNewError,
    SkillBankError,
    SkillFileError,
    StorageFullError,
    SkillNotFoundError,
    TrajectoryNotFoundError,
    VersionNotFoundError,
)
from skillbank.models import (
    Injection,
    LimitEvent,
    LimitType,
    Outcome,
    Skill,
    SkillContent,
    SkillKind,
    SkillStatus,
    SkillVersion,
    Step,
    Trajectory,
)
from skillbank.retrieval import SkillHit, approx_tokens

__version__ = "0.1.0"

__all__ = [
    "SkillBank",
    "PruneAction",
    "SkillHit",
    "approx_tokens",
    "Embedder",
    "HashEmbedder",
    "MiniLMEmbedder",
    "resolve_embedder",
    "resolve_chat_model",
    "Skill",
    "SkillContent",
    "SkillKind",
    "SkillStatus",
    "SkillVersion",
    "Trajectory",
    "Step",
    "LimitEvent",
    "LimitType",
    "Injection",
    "Outcome",
    "SkillBankError",
    "NotABankError",
    "CorruptBankError",
    "SchemaTooNewError",
    "SkillNotFoundError",
    "TrajectoryNotFoundError",
    "VersionNotFoundError",
    "InvalidSkillError",
    "DuplicateSkillError",
    "SkillFileError",
    "LockedError",
    "StorageFullError",
    "__version__",
]
