"""The screen of text entering the bank from outside an evolution round: the injection
patterns (:mod:`skillbank.screen.patterns`) and, behind them, the detector
``SKILLBANK_INJECTION_DETECTOR`` chooses (:mod:`skillbank.screen.second_layer`): the embedding
detector (:mod:`skillbank.screen.detector`), the LLM detector
(:mod:`skillbank.screen.llm_detector`) or both. :func:`lint_incoming` is the bank's default
``screen``.
"""

from skillbank.screen.findings import Finding, LintResult
from skillbank.screen.patterns import lint_incoming

__all__ = ["Finding", "LintResult", "lint_incoming"]
