"""BFCL multi-turn as a third-party benchmark for the runner (harness; needs BFCL's code).

The Berkeley Function-Calling Leaderboard's multi-turn categories (``base``, ``miss_func``,
``miss_param``, ``long_context``; 200 entries each) with BFCL's own data, API backends,
ground truth and checker, from the ``bfcl-eval`` package. Install it without its pins::

    pip install 'skillbank[bfcl]' && pip install --no-deps 'bfcl-eval==2026.3.23'

* :func:`load_tasks` -- the entries as tasks, split by API class; ``run_task`` and
  ``measure_env`` run them like the bundled environments' tasks.
* :class:`BfclEnv` / :class:`BfclUserMiddleware` -- one run's API instances and tools, and
  BFCL's side of the conversation (user turns in order, withheld functions at their turn).
* :class:`GroundTruthModel` -- replays the ground truth through the agent (the adapter's proof).

``skillbank eval --env bfcl --categories base,miss_func,miss_param --model ...`` measures a model.
"""

from skillbank_harness.envs.bfcl._bfcl import INSTALL, TESTED_VERSION, BfclNotInstalledError
from skillbank_harness.envs.bfcl.env import FORCE_QUIT_MESSAGE, BfclEnv, BfclUserMiddleware
from skillbank_harness.envs.bfcl.reference import TURN_DONE, GroundTruthModel, parse_call
from skillbank_harness.envs.bfcl.tasks import (
    CATEGORIES,
    DEFAULT_CATEGORIES,
    HELDOUT_CLASSES,
    BfclTask,
    load_tasks,
    parse_categories,
    spread,
)
from skillbank_harness.envs.bfcl.tools import call_string, json_schema, make_tool

__all__ = [
    "INSTALL",
    "TESTED_VERSION",
    "BfclNotInstalledError",
    "CATEGORIES",
    "DEFAULT_CATEGORIES",
    "HELDOUT_CLASSES",
    "BfclTask",
    "BfclEnv",
    "BfclUserMiddleware",
    "FORCE_QUIT_MESSAGE",
    "GroundTruthModel",
    "TURN_DONE",
    "load_tasks",
    "parse_categories",
    "parse_call",
    "spread",
    "call_string",
    "json_schema",
    "make_tool",
]
