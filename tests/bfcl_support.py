"""Shared by the BFCL tests: the skip rule and the entries whose replay cannot pass."""

from __future__ import annotations

import importlib.util

from conftest import unavailable


def require_bfcl() -> None:
    """Skip the module when bfcl-eval is absent, except in CI, which installs it: there an
    absent package is a failure (conftest's ``unavailable``)."""
    if importlib.util.find_spec("bfcl_eval") is None:
        unavailable("bfcl-eval is not installed: pip install 'skillbank[bfcl]' && "
                    "pip install --no-deps 'bfcl-eval==2026.3.23'", allow_module_level=True)


# Entries whose ground truth cannot pass BFCL's checker through our tools, and why.
UNPASSABLE = {
    # The ground truth calls `tail` in turn 1, but the entry withholds `tail` until turn 3: the
    # function is not in the toolset yet, so the call is refused (BFCL's own executor would run
    # a function the model was never shown).
    "multi_turn_miss_func_49": "ground truth uses a withheld function before its turn",
}
# One call per model message: a turn of 34 ground-truth calls takes 34 steps, over BFCL's limit
# of 20 steps per turn, so BFCL's rule force-quits the run. Replayed as one message per turn
# (parallel calls), they pass.
UNPASSABLE_ONE_CALL_PER_STEP = {
    "multi_turn_long_context_38": "a turn of 34 calls exceeds BFCL's 20 steps per turn",
    "multi_turn_long_context_46": "a turn of 34 calls exceeds BFCL's 20 steps per turn",
}
# Altering the chosen argument does not change what BFCL's checker compares (state and results).
CHECKER_BLIND_TO_ALTERATION = {
    # estimate_drive_feasibility_by_mileage answers {"canDrive": false} for 987.0 as for 980.0
    "multi_turn_base_63", "multi_turn_miss_func_63", "multi_turn_miss_param_63",
    "multi_turn_long_context_63",
    # ZETA is on the initial watch list already (not in miss_func_139's): add_to_watchlist
    # leaves it as it is for 'ZETA' and ignores the unknown 'ZETA_x', with the same answer
    "multi_turn_base_139", "multi_turn_miss_param_139", "multi_turn_long_context_139",
}
