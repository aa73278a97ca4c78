"""Evolution: distil successes and limit-aware failures into versioned skills, with a gate.

    from skillbank.evolution import evolve, RuleDistiller, LLMDistiller
    report = evolve(bank)                                   # rule-based, no model needed
    report = evolve(bank, distiller=LLMDistiller(model))    # any LangChain chat model
    report = evolve(bank, distiller=["rule", model])        # both, proposals pooled
    report = evolve(bank, dry_run=True)                     # the plan, nothing written
    print(report)

Candidates wait for review unless a validation function (``validate=``, with
``auto_promote=True``) or a ``promote_policy`` promotes them (keywords of ``evolve``, or a whole
``gate=GateConfig(...)``): see :mod:`.gate` and :mod:`.review`. Any other option is a field of
``config=EvolutionConfig(...)`` or ``gate=GateConfig(...)``.
"""

from skillbank.evolution._cluster import Cluster
from skillbank.evolution.combined import CombinedDistiller
from skillbank.evolution.config import EvolutionConfig
from skillbank.evolution._distiller import Distiller, SkillEvidence
from skillbank.evolution._evidence import Run, ToolCall
from skillbank.evolution.gate import GateConfig, GateResult
from skillbank.evolution._lint import LintContext, LintResult, lint_content
from skillbank.evolution.llm import LLMDistiller
from skillbank.evolution._lock import evolution_lock
from skillbank.evolution._proposals import ChangeKind, Proposal, Usage
from skillbank.evolution._review import Pending, list_candidates, promote, reject
from skillbank.evolution.round import Change, EvolutionReport, evolve, resolve_distiller
from skillbank.evolution.rule import RuleDistiller
from skillbank.evolution._templates import task_template

__all__ = [
    "evolve",
    "EvolutionReport",
    "Change",
    "ChangeKind",
    "EvolutionConfig",
    "Distiller",
    "RuleDistiller",
    "LLMDistiller",
    "CombinedDistiller",
    "SkillEvidence",
    "Cluster",
    "Run",
    "ToolCall",
    "Proposal",
    "Usage",
    "GateConfig",
    "GateResult",
    "Pending",
    "list_candidates",
    "promote",
    "reject",
    "lint_content",
    "LintContext",
    "LintResult",
    "evolution_lock",
    "resolve_distiller",
    "task_template",
]
