"""The screen of text entering the bank from outside an evolution round: the injection
patterns (:mod:`skillbank._screen.patterns`) and, behind them, the detector
``SKILLBANK_INJECTION_DETECTOR`` chooses (:mod:`skillbank._screen.second_layer`): the embedding
detector (:mod:`skillbank._screen.detector`), the LLM detector
(:mod:`skillbank._screen.llm_detector`) or both. :func:`lint_incoming` is the bank's default
``screen``.
"""

from skillbank._screen.findings import Finding, LintResult
from skillbank._screen.patterns import lint_incoming

__all__ = ["Finding", "LintResult", "lint_incoming"]
