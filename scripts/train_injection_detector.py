#!/usr/bin/env python
"""Train the injection detector's weights (skillbank/_screen/injection_detector.npz).

    HF_HUB_OFFLINE=1 python scripts/train_injection_detector.py

Training set: scripts/data/injection_training.tsv plus tests/injection_corpus.py (the lint's own
dev and held-out lines and its clean lines) plus every line a quick demo learns with seed 1. The
held-out corpora of issue 20 (tests/data/heldout) are never read here. A logistic regression
(scikit-learn, a dev-time tool; the library scores with numpy alone) over MiniLM embeddings; the
threshold is the lowest that keeps the cross-validated false-positive rate on the training
negatives at or below 2%.
"""

from __future__ import annotations

import contextlib
import io
import sys
import tempfile
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests"))
TRAINING = ROOT / "scripts" / "data" / "injection_training.tsv"
MAX_FP = 0.02


def demo_lines(seed: int) -> list[str]:
    from skillbank import SkillBank
    from skillbank_harness.demo import QUICK, run_demo

    with tempfile.TemporaryDirectory() as tmp, contextlib.redirect_stdout(io.StringIO()):
        demo = run_demo(Path(tmp) / "demo", config=QUICK, embedder="hash", progress=False, seed=seed)
        with SkillBank.open(demo.bank_path, embedder="hash", create=False) as bank:
            versions = [v for s in bank.list_skills() for v in bank.history(s.id)]
    lines = [line for v in versions for line in [v.content.description, *v.content.body.splitlines()]]
    return list(dict.fromkeys(x.strip() for x in lines if x.strip() and not x.startswith("#")))


def training_set() -> tuple[list[str], np.ndarray]:
    from injection_corpus import CLEAN, DEV, HELD_OUT

    texts, labels = [], []
    for line in TRAINING.read_text(encoding="utf-8").splitlines():
        if line and not line.startswith("#"):
            label, text = line.split("\t", 1)
            texts.append(text)
            labels.append(int(label))
    for _, text in DEV + HELD_OUT:
        texts.append(text)
        labels.append(1)
    for text in CLEAN + demo_lines(seed=1):
        texts.append(text)
        labels.append(0)
    return texts, np.array(labels)


def main() -> int:
    from sklearn.linear_model import LogisticRegression
    from sklearn.model_selection import cross_val_predict

    from skillbank.embed import MiniLMEmbedder
    from skillbank._screen.detector import WEIGHTS

    texts, y = training_set()
    embedder = MiniLMEmbedder()
    x = np.asarray(embedder.embed(texts), dtype=np.float32)
    model = LogisticRegression(C=100.0, class_weight="balanced", max_iter=2000)
    cv = cross_val_predict(model, x, y, cv=5, method="predict_proba")[:, 1]
    negatives = np.sort(cv[y == 0])
    threshold = float(negatives[int(np.floor(len(negatives) * (1 - MAX_FP)))]) + 1e-6
    threshold = max(threshold, 0.5)
    recall = float((cv[y == 1] >= threshold).mean())
    fp = float((cv[y == 0] >= threshold).mean())
    model.fit(x, y)
    np.savez(WEIGHTS, coef=model.coef_[0].astype(np.float32), intercept=np.float32(model.intercept_[0]),
             threshold=np.float32(threshold), embedder=np.str_(embedder.name))
    print(f"training lines: {int(y.sum())} injections, {int((y == 0).sum())} clean")
    print(f"cross-validated on the training set: recall {recall:.1%}, FP {fp:.1%} at threshold {threshold:.3f}")
    print(f"wrote {WEIGHTS.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
