"""skillbank: a self-evolving, versioned skill bank for LangChain / LangGraph agents.

Everything a user needs is importable from here::

    from skillbank import SkillBank, SkillBankMiddleware, InjectionConfig, evolve, measure

``PUBLIC`` below is the public surface, in one place: each name and the module that defines it
(the README's "Public API" lists the same names; tests/unit/test_public_api.py compares them). A
name is imported on first use (module ``__getattr__``), so ``import skillbank`` loads nothing
but this file: LangChain, torch, sentence-transformers and Chroma load when a name needs them.
Besides the few modules public for extensions (the README's "Public API" lists them), every other
module is private: its name, or its package's, starts with ``_``, and its names may move without
notice before 1.0.
"""

from __future__ import annotations

import importlib
import os
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# ONNX Runtime (1.29 on; the MiniLM engine's, and Chroma's) records usage telemetry on Linux and
# macOS, with a device id under ~/.cache/Microsoft, and uploads it, unless this is set before
# its first session. skillbank sends nothing anywhere; a user who sets it keeps their choice.
os.environ.setdefault("ORT_DISABLE_TELEMETRY", "1")

# name -> the module that defines it (never a module that merely re-exports it).
PUBLIC: dict[str, str] = {
    # the bank
    "SkillBank": "skillbank.bank",
    "PruneAction": "skillbank.prune",
    "SearchFilters": "skillbank.queries",
    "SkillHit": "skillbank.queries",
    "approx_tokens": "skillbank.retrieval",
    # models: embeddings and chat
    "Embedder": "skillbank.protocols",
    "HashEmbedder": "skillbank.embed",
    "MiniLMEmbedder": "skillbank.embed",
    "resolve_embedder": "skillbank.embed",
    "resolve_chat_model": "skillbank.chat",
    "with_seed": "skillbank.chat",
    # data
    "Skill": "skillbank.models",
    "SkillContent": "skillbank.models",
    "SkillKind": "skillbank.models",
    "SkillStatus": "skillbank.models",
    "SkillVersion": "skillbank.models",
    "Trajectory": "skillbank.models",
    "Step": "skillbank.models",
    "LimitEvent": "skillbank.models",
    "LimitType": "skillbank.models",
    "Injection": "skillbank.models",
    "Outcome": "skillbank.models",
    "Lesson": "skillbank.lessons",
    "LessonKind": "skillbank.lessons",
    # agents: injection, recording, outcomes
    "SkillBankMiddleware": "skillbank.adapters.langchain",
    "InjectionConfig": "skillbank.adapters.config",
    "RecordingConfig": "skillbank.adapters.config",
    "BudgetConfig": "skillbank.adapters.config",
    "SkillBankCallbackHandler": "skillbank.adapters.callbacks",
    "skillbank_prompt": "skillbank.adapters.langgraph",
    "inject_skills": "skillbank.adapters.injection",
    "LLMJudge": "skillbank.adapters.judge",
    "ScriptedChatModel": "skillbank.adapters.testing",
    "tool_call": "skillbank.adapters.testing",
    # evolution
    "evolve": "skillbank.evolution.round",
    "EvolutionConfig": "skillbank.evolution.config",
    "EvolutionReport": "skillbank.evolution.report",
    "GateConfig": "skillbank.evolution.gate",
    "RuleDistiller": "skillbank.evolution.rule",
    "LLMDistiller": "skillbank.evolution.llm",
    "CombinedDistiller": "skillbank.evolution.combined",
    # measurement
    "measure": "skillbank.consistency.measure",
    "measure_agent": "skillbank.consistency.agents",
    "MeasureConfig": "skillbank.consistency.config",
    "MeasureResult": "skillbank.consistency.result",
    "EvalTask": "skillbank.consistency.tasks",
    "SimpleTask": "skillbank.consistency.tasks",
    # errors
    "SkillBankError": "skillbank.errors",
    "NotABankError": "skillbank.errors",
    "CorruptBankError": "skillbank.errors",
    "SchemaTooNewError": "skillbank.errors",
    "SkillNotFoundError": "skillbank.errors",
    "TrajectoryNotFoundError": "skillbank.errors",
    "VersionNotFoundError": "skillbank.errors",
    "InvalidSkillError": "skillbank.errors",
    "DuplicateSkillError": "skillbank.errors",
    "SkillFileError": "skillbank.errors",
    "LockedError": "skillbank.errors",
    "StorageFullError": "skillbank.errors",
    "MeasureError": "skillbank.errors",
}

__all__ = [*PUBLIC, "__version__"]


def __getattr__(name: str) -> Any:
    module = PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'skillbank' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value  # the next access is a plain attribute lookup
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(PUBLIC))


if TYPE_CHECKING:  # pragma: no cover - what type checkers and IDEs see; mirrors PUBLIC
    from skillbank.adapters.callbacks import SkillBankCallbackHandler
    from skillbank.adapters.config import BudgetConfig, InjectionConfig, RecordingConfig
    from skillbank.adapters.injection import inject_skills
    from skillbank.adapters.judge import LLMJudge
    from skillbank.adapters.langchain import SkillBankMiddleware
    from skillbank.adapters.langgraph import skillbank_prompt
    from skillbank.adapters.testing import ScriptedChatModel, tool_call
    from skillbank.bank import SkillBank
    from skillbank.chat import resolve_chat_model, with_seed
    from skillbank.consistency.agents import measure_agent
    from skillbank.consistency.config import MeasureConfig
    from skillbank.consistency.measure import measure
    from skillbank.consistency.result import MeasureResult
    from skillbank.consistency.tasks import EvalTask, SimpleTask
    from skillbank.embed import HashEmbedder, MiniLMEmbedder, resolve_embedder
    from skillbank.errors import (
        CorruptBankError,
        DuplicateSkillError,
        InvalidSkillError,
        LockedError,
        MeasureError,
        NotABankError,
        SchemaTooNewError,
        SkillBankError,
        SkillFileError,
        SkillNotFoundError,
        StorageFullError,
        TrajectoryNotFoundError,
        VersionNotFoundError,
    )
    from skillbank.evolution.combined import CombinedDistiller
    from skillbank.evolution.config import EvolutionConfig
    from skillbank.evolution.gate import GateConfig
    from skillbank.evolution.llm import LLMDistiller
    from skillbank.evolution.report import EvolutionReport
    from skillbank.evolution.round import evolve
    from skillbank.evolution.rule import RuleDistiller
    from skillbank.lessons import Lesson, LessonKind
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
    from skillbank.protocols import Embedder
    from skillbank.prune import PruneAction
    from skillbank.queries import SearchFilters, SkillHit
    from skillbank.retrieval import approx_tokens
