"""The public face of a measurement: every name of the runner, from the module that holds it.

A measurement is a pipeline of small modules, one job each:

- :mod:`.tasks`: what a task must have, and how its input reaches an agent;
- :mod:`.splits`: the split vocabulary and :func:`assign_splits`;
- :mod:`.trials`: one trial's seed, spec, outcome, record and state;
- :mod:`.config`: :class:`MeasureConfig`, how a measurement runs;
- :mod:`.measure`: :func:`measure`, which runs the trials on :mod:`.engine`'s thread pool,
  resumes (:mod:`.resume`) and shows its progress (:mod:`.progress`);
- :mod:`.result`: :class:`MeasureResult` and the numbers computed from it;
- :mod:`.agents`: :func:`measure_agent` and :func:`logged_factory`, the LangChain wiring.
"""

from __future__ import annotations

from skillbank.consistency.agents import logged_factory, measure_agent
from skillbank.consistency.config import MeasureConfig
from skillbank.consistency.measure import AgentFactory, measure
from skillbank.consistency.result import MeasureResult
from skillbank.consistency._splits import assign_splits
from skillbank.consistency.tasks import EvalTask, SimpleTask
from skillbank.consistency._trials import (
    ARM_WITH,
    ARM_WITHOUT,
    TrialOutcome,
    TrialRecord,
    TrialSpec,
    TrialState,
    key_k,
    new_run_id,
    trial_seed,
)
from skillbank.errors import MeasureError
from skillbank._splits import ALL_SPLITS

__all__ = [
    "ARM_WITHOUT",
    "ARM_WITH",
    "ALL_SPLITS",
    "AgentFactory",
    "EvalTask",
    "SimpleTask",
    "TrialSpec",
    "TrialOutcome",
    "TrialRecord",
    "TrialState",
    "MeasureConfig",
    "MeasureResult",
    "MeasureError",
    "measure",
    "logged_factory",
    "measure_agent",
    "trial_seed",
    "assign_splits",
    "new_run_id",
    "key_k",
]
