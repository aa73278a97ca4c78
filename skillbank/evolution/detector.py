"""The embedding injection detector lives in :mod:`skillbank.screen.detector` (below the bank,
which screens every incoming skill with it); its names are importable from here too."""

from skillbank.screen.detector import ENV, WEIGHTS, InjectionDetector, Score, active_detector, chunks

__all__ = ["InjectionDetector", "WEIGHTS", "ENV", "Score", "active_detector", "chunks"]
