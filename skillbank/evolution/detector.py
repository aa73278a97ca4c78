"""The injection detectors live in :mod:`skillbank.screen` (below the bank, which screens every
incoming skill with them); the embedding detector's names and the choice of detector are
importable from here too."""

from skillbank.screen.detector import WEIGHTS, InjectionDetector, Score, chunks
from skillbank.screen.second_layer import ENV, active_detector

__all__ = ["InjectionDetector", "WEIGHTS", "ENV", "Score", "active_detector", "chunks"]
