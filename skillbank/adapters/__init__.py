"""Adapters that connect skillbank to agents.

- :mod:`skillbank.adapters.langchain` -- ``SkillBankMiddleware`` for ``create_agent``: the four
  middlewares below in one.
- :mod:`skillbank.adapters._prompt_middleware`, :mod:`~skillbank.adapters._guidance_middleware`,
  :mod:`~skillbank.adapters._recording_middleware`, :mod:`~skillbank.adapters._budget_middleware`
  -- ``SkillPromptMiddleware`` (skills into each model call), ``SkillGuidanceMiddleware``
  (reminders at the tool and the answer), ``SkillRecordingMiddleware`` (the run as a
  trajectory), ``RunBudgetMiddleware`` (token and time budgets per run): in any order in a
  middleware list, through :mod:`skillbank.adapters._run_context` (one context per run, found
  once per call). ``SkillInjectionMiddleware`` is the prompt and guidance parts in one.
- :mod:`skillbank.adapters.langgraph` -- ``skillbank_prompt`` for ``create_react_agent`` and
  ``inject_skills`` for a custom graph's model node.
- :mod:`skillbank.adapters.config` -- ``InjectionConfig``, ``RecordingConfig`` and ``BudgetConfig``,
  shared by all.
- :mod:`skillbank.adapters.callbacks` -- ``SkillBankCallbackHandler``: records any runnable.
- :mod:`skillbank.adapters.judge` -- ``LLMJudge``: an outcome from any chat model.
- :mod:`skillbank.adapters._recorder` -- ``TrajectoryRecorder``, the framework-neutral core.
- :mod:`skillbank.adapters.testing` -- ``ScriptedChatModel`` for offline tests.

Names are imported lazily so ``import skillbank.adapters`` stays cheap.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    "SkillBankMiddleware": "skillbank.adapters.langchain",
    "SkillBankState": "skillbank.adapters.langchain",
    "SkillInjectionMiddleware": "skillbank.adapters._injection_middleware",
    "SkillPromptMiddleware": "skillbank.adapters._prompt_middleware",
    "SkillGuidanceMiddleware": "skillbank.adapters._guidance_middleware",
    "Intervention": "skillbank.adapters._interventions",
    "SkillRecordingMiddleware": "skillbank.adapters._recording_middleware",
    "RunBudgetMiddleware": "skillbank.adapters._budget_middleware",
    "skillbank_prompt": "skillbank.adapters.langgraph",
    "skillbank_hook": "skillbank.adapters.langgraph",
    "InjectionConfig": "skillbank.adapters.config",
    "RecordingConfig": "skillbank.adapters.config",
    "BudgetConfig": "skillbank.adapters.config",
    "Block": "skillbank.adapters.injection",
    "inject_skills": "skillbank.adapters.injection",
    "SkillInjector": "skillbank.adapters.injection",
    "InjectionResult": "skillbank.adapters.injection",
    "SkillBankCallbackHandler": "skillbank.adapters.callbacks",
    "LLMJudge": "skillbank.adapters.judge",
    "OutcomeVerdict": "skillbank.adapters.judge",
    "TrajectoryRecorder": "skillbank.adapters._recorder",
    "Detectors": "skillbank.adapters.limits",
    "classify_exception": "skillbank.adapters.limits",
    "find_unknown_fields": "skillbank.adapters.limits",
    "detect_refusal": "skillbank.adapters.limits",
    "ScriptedChatModel": "skillbank.adapters.testing",
    "tool_call": "skillbank.adapters.testing",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'skillbank.adapters' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_EXPORTS))
