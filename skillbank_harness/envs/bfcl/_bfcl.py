"""The parts of BFCL (the ``bfcl-eval`` package) this harness runs, behind one import guard.

``bfcl-eval`` pins old releases (numpy 1.26, filelock 3.20, networkx 3.3) and ~30 model SDKs,
tree-sitter parsers and a CUDA torch for its leaderboard runner. Its multi-turn data loader,
executor, checker and API backends import only the standard library plus ``mpmath`` (MathAPI)
and ``filelock`` (the loader), so it is installed without its dependencies, next to those two::

    pip install 'skillbank[bfcl]' && pip install --no-deps 'bfcl-eval==2026.3.23'

(``pip check`` then lists bfcl-eval's unmet pins; nothing here imports the modules behind them.)

Everything BFCL-specific that is executed -- loading entries and ground truth, running a call
on the entry's API instances, judging a run -- is BFCL's own code, called from here.
"""

from __future__ import annotations

import importlib
import os
import re
import tempfile
import warnings
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from skillbank.errors import MissingExtraError

__all__ = [
    "TESTED_VERSION",
    "INSTALL",
    "BfclNotInstalledError",
    "MULTI_TURN_CLASSES",
    "MAXIMUM_STEP_LIMIT",
    "MORE_FUNCTIONS_PROMPT",
    "TYPE_TO_JSON_SCHEMA",
    "load_entries",
    "load_ground_truth",
    "execute",
    "instances",
    "check",
    "forget",
    "backend_method",
]

TESTED_VERSION = "2026.3.23"
INSTALL = f"pip install 'skillbank[bfcl]' && pip install --no-deps 'bfcl-eval=={TESTED_VERSION}'"

# The API classes of the multi-turn categories (web search and memory need the network or an
# embedding index and belong to other categories).
MULTI_TURN_CLASSES = (
    "GorillaFileSystem", "MathAPI", "MessageAPI", "TwitterAPI", "TicketAPI", "TradingBot",
    "TravelAPI", "VehicleControlAPI",
)


class BfclNotInstalledError(MissingExtraError):
    """BFCL's code (or one of the two packages it needs here) is not installed."""

    def __init__(self, missing: str):
        # MissingExtraError's message names one package; this install is two commands.
        super(MissingExtraError, self).__init__(
            f"the BFCL environment needs {missing}: {INSTALL}")


def _project_root() -> Path:
    # Importing bfcl_eval.utils creates result/, score/ and .file_locks/ (its loader's lock
    # files) under BFCL_PROJECT_ROOT, which defaults to the site-packages folder bfcl_eval is
    # installed in. Point it at a cache folder unless the user chose one.
    if "BFCL_PROJECT_ROOT" in os.environ:
        return Path(os.environ["BFCL_PROJECT_ROOT"])
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "skillbank" / "bfcl"
    try:
        cache.mkdir(parents=True, exist_ok=True)
    except OSError:  # no writable home
        cache = Path(tempfile.gettempdir()) / "skillbank-bfcl"
    return cache


os.environ["BFCL_PROJECT_ROOT"] = str(_project_root())

try:
    from bfcl_eval.constants.default_prompts import (
        DEFAULT_USER_PROMPT_FOR_ADDITIONAL_FUNCTION_FC as MORE_FUNCTIONS_PROMPT,
    )
    from bfcl_eval.constants.default_prompts import MAXIMUM_STEP_LIMIT
    from bfcl_eval.constants.executable_backend_config import CLASS_FILE_PATH_MAPPING
    from bfcl_eval.constants.type_mappings import GORILLA_TO_OPENAPI as TYPE_TO_JSON_SCHEMA
    from bfcl_eval.eval_checker.multi_turn_eval import multi_turn_utils
    from bfcl_eval.eval_checker.multi_turn_eval.multi_turn_checker import multi_turn_checker
    from bfcl_eval.utils import load_dataset_entry, load_ground_truth_entry

    # The backends are imported by name when a run first touches them; import them now so a
    # missing dependency (mpmath) fails here with the install line, not in the middle of a run.
    _BACKENDS = {name: importlib.import_module(CLASS_FILE_PATH_MAPPING[name]) for name in MULTI_TURN_CLASSES}
except ImportError as exc:
    raise BfclNotInstalledError(f"{exc.name or exc}") from exc

try:
    _installed = version("bfcl-eval")
except PackageNotFoundError:  # imported from a source checkout
    _installed = None
if _installed is not None and _installed != TESTED_VERSION:
    warnings.warn(f"bfcl-eval {_installed} is installed; skillbank's BFCL environment was checked "
                  f"against {TESTED_VERSION} (its data, ground truth and checker may differ)",
                  stacklevel=2)


def load_entries(category: str) -> list[dict[str, Any]]:
    """BFCL's entries of ``category`` (e.g. ``multi_turn_base``), loaded by BFCL's loader.

    Each entry carries its function docs in ``function`` and, in ``multi_turn_miss_func``, the
    withheld docs under ``missed_function`` keyed by the turn that adds them.
    """
    return load_dataset_entry(category)


def load_ground_truth(category: str) -> dict[str, list[list[str]]]:
    """Entry id -> the ground-truth calls, one list of call strings per turn."""
    return {row["id"]: row["ground_truth"] for row in load_ground_truth_entry(category)}


def _long_context(entry: dict[str, Any]) -> bool:
    # The same test BFCL's inference loop and checker apply to the entry's category.
    category = entry["id"].rsplit("_", 1)[0]
    return "long_context" in category or "composite" in category


def execute(calls: list[str], entry: dict[str, Any], run_name: str) -> list[str]:
    """Run call strings (``cd(folder='x')``) on the run's API instances, BFCL's way.

    BFCL keeps each run's instances in its executor module, named after ``run_name`` and the
    entry; the first call creates them from the entry's initial config, later calls continue
    on them. Results come back as BFCL formats them: JSON for dicts, the text of an
    exception as ``"Error during execution: ..."``.
    """
    results, _ = multi_turn_utils.execute_multi_turn_func_call(
        calls, entry["initial_config"], entry["involved_classes"], run_name, entry["id"],
        long_context=_long_context(entry))
    return results


def instances(entry: dict[str, Any], run_name: str) -> dict[str, Any]:
    """The run's API instances by class name (created from the initial config if new)."""
    _, found = multi_turn_utils.execute_multi_turn_func_call(
        [], entry["initial_config"], entry["involved_classes"], run_name, entry["id"],
        long_context=_long_context(entry))
    return found


def check(turns: list[list[list[str]]], ground_truth: list[list[str]], entry: dict[str, Any],
          check_name: str) -> dict[str, Any]:
    """BFCL's multi-turn verdict on the calls a run executed (per turn, per step).

    As BFCL's evaluation runner does: a run with fewer turns than the ground truth was
    force-terminated and fails; steps that executed nothing are left out; the rest is
    ``multi_turn_checker`` (state after every turn, and every ground-truth result among the
    run's results). The checker re-executes both sides on fresh instances named after
    ``check_name``; they are dropped afterwards.
    """
    if len(turns) != len(ground_truth):
        return {"valid": False, "error_type": "multi_turn:force_terminated",
                "error_message": f"The run has {len(turns)} turns; the ground truth has "
                                 f"{len(ground_truth)}."}
    decoded = [[step for step in turn if step] for turn in turns]
    try:
        return multi_turn_checker(decoded, ground_truth, entry, entry["id"].rsplit("_", 1)[0], check_name)
    finally:
        forget(check_name)


def forget(run_name: str) -> None:
    """Drop the API instances BFCL's executor keeps for ``run_name`` (it never frees them)."""
    prefix = re.sub(r"[-./:]", "_", f"{run_name}_")
    names = vars(multi_turn_utils)
    for key in [k for k in list(names) if k.startswith(prefix)]:
        names.pop(key, None)


def backend_method(class_name: str, method: str) -> Any:
    """The unbound method of a BFCL API class (for signatures)."""
    return getattr(getattr(_BACKENDS[class_name], class_name), method)
