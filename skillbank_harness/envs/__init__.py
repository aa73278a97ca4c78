"""Verifiable synthetic tool-use environments and a simulated policy to drive them.

* :func:`generate_tasks` / :func:`split_tasks` -- seeded tasks from templates in three families
  (``car``, ``retail``, ``calendar``), three types (``base``, ``capability``,
  ``disambiguation``) and a budget variant of each, split by template, seed or family; and an
  opt-in ``simple`` tier of one- and two-tool requests that a small real model can play.
* :class:`Task` / :class:`Environment` -- the user's request, a fresh in-memory world with
  LangChain tools over it, a scripted user, and a verifier on the final state and answer.
* :class:`SimulatedPolicy` -- a chat model that plays a sloppy agent and follows skills written
  in :mod:`skillbank_harness.envs.directives` (the library's rendered lesson sentences, read back). It sees only messages and tool schemas. Numbers measured with
  it show the machinery working; they are not a claim about any real model.
* :func:`run_task` -- one run through a real ``create_agent`` loop, verified.

``skillbank_harness.envs.bfcl`` (imported on its own; it needs BFCL's code) turns BFCL's multi-turn
entries into tasks ``run_task`` runs the same way; ``skillbank_harness.envs.tau2`` (it needs
τ²-bench's code) runs τ²-bench's domains with τ²'s own user simulator prompt and evaluator.
"""

from skillbank_harness.envs.base import Environment, EnvError, RefStep, Task, final_answer
from skillbank_harness.envs.families import EXTRA_FAMILIES, FAMILIES
from skillbank_harness.envs.measure import measure_env
from skillbank_harness.envs.policy import SimulatedPolicy
from skillbank_harness.envs.runner import ReferenceModel, RunResult, ScriptedUserMiddleware, run_task, skills_prompt
from skillbank_harness.envs.tasks import (
    EXTRA_FAMILY_NAMES,
    FAMILY_NAMES,
    TASK_TYPES,
    generate_tasks,
    list_templates,
    split_tasks,
    take_spread,
)

__all__ = [
    "measure_env",
    "Task",
    "Environment",
    "EnvError",
    "RefStep",
    "FAMILIES",
    "FAMILY_NAMES",
    "EXTRA_FAMILIES",
    "EXTRA_FAMILY_NAMES",
    "TASK_TYPES",
    "generate_tasks",
    "split_tasks",
    "take_spread",
    "list_templates",
    "SimulatedPolicy",
    "run_task",
    "RunResult",
    "ScriptedUserMiddleware",
    "ReferenceModel",
    "skills_prompt",
    "final_answer",
]
