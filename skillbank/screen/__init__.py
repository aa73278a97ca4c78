"""The screen of text entering the bank from outside an evolution round: the injection
patterns (:mod:`skillbank.screen.patterns`) and the embedding detector behind them
(:mod:`skillbank.screen.detector`). :func:`lint_incoming` is the bank's default ``screen``.
"""

from skillbank.screen.patterns import Finding, LintResult, lint_incoming

__all__ = ["Finding", "LintResult", "lint_incoming"]
