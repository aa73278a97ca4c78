"""all-MiniLM-L6-v2 on ONNX Runtime: the query embedding of every model turn, faster than the
numpy engine (docs/decisions/0003).

The graph is written here from the checkpoint's weights, op for op the forward pass of
:class:`skillbank._engines.minilm.NumpyMiniLM` (so no torch and no tracing are needed, and the two
engines compute the same vectors; a test compares both with sentence-transformers). It is built
once, in about a second, and kept in skillbank's cache folder (``~/.cache/skillbank/models``,
``$SKILLBANK_MODELS`` to move it); later processes only load it.

onnxruntime and onnx are core dependencies; where either cannot be imported the numpy engine
serves (see :func:`available`).
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from skillbank._engines.minilm import NumpyMiniLM, fused_weights

__all__ = ["OnnxMiniLM", "available", "build_graph", "graph_file"]

log = logging.getLogger("skillbank.embed")

# Bump when the graph below changes: the cached file's name carries it.
GRAPH_VERSION = 1
OPSET = 17  # LayerNormalization is an ONNX op from 17 on


def available() -> bool:
    """Whether the engine can run: onnxruntime and onnx (which writes the graph the first time)
    both importable. chromadb brings onnxruntime alone; without onnx the numpy engine serves."""
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in ("onnxruntime", "onnx"))


def graph_file(model_dir: Path, cache_dir: Path | None = None) -> Path:
    """Where the graph of the checkpoint in ``model_dir`` is cached: named after the weights
    file's path, size and modification time, so a reinstalled model gets a new graph."""
    from skillbank._engines.local.fetch import models_dir

    weights = Path(model_dir) / "model.safetensors"
    stat = weights.stat()
    key = hashlib.sha256(f"{weights.resolve()}|{stat.st_size}|{stat.st_mtime_ns}".encode()).hexdigest()[:16]
    return (cache_dir or models_dir()) / "onnx" / f"minilm-v{GRAPH_VERSION}-{key}.onnx"


def build_graph(model: NumpyMiniLM) -> bytes:
    """The serialized ONNX model of ``model``'s forward pass (weights in ``model.w``).

    Inputs ``input_ids`` and ``attention_mask`` (int64, batch x length); output ``pooled``
    (float32, batch x hidden): mean-pooled over the mask, not normalised (the caller does that).
    """
    from onnx import TensorProto, helper, numpy_helper

    w = model.w
    hidden, heads = model.hidden, model.heads
    head_dim = hidden // heads
    inits: list[Any] = []
    nodes: list[Any] = []

    def const(name: str, value: Any, dtype: Any = np.float32) -> str:
        inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), name))
        return name

    def node(op: str, inputs: list[str], out: str, **attrs: Any) -> str:
        nodes.append(helper.make_node(op, inputs, [out], name=out, **attrs))
        return out

    def weight(key: str) -> str:
        return const(key, w[key])

    def layer_norm(x: str, prefix: str, out: str) -> str:
        return node("LayerNormalization", [x, weight(prefix + ".weight"), weight(prefix + ".bias")],
                    out, axis=-1, epsilon=model.eps)

    def dense(x: str, prefix: str, out: str) -> str:
        return node("Add", [node("MatMul", [x, weight(prefix + ".weight")], out + "_mm"),
                            weight(prefix + ".bias")], out)

    # -- embeddings: word + position[:length] + token type 0, then LayerNorm -------------------
    word = node("Gather", [weight("embeddings.word_embeddings.weight"), "input_ids"], "word", axis=0)
    length = node("Slice", [node("Shape", ["input_ids"], "ids_shape"), const("one", [1], np.int64),
                            const("two", [2], np.int64)], "length")
    position = node("Slice", [weight("embeddings.position_embeddings.weight"), const("zero", [0], np.int64),
                              length], "position")
    token_type = const("token_type", w["embeddings.token_type_embeddings.weight"][0])
    summed = node("Add", [node("Add", [word, position], "word_pos"), token_type], "embedded")
    x = layer_norm(summed, "embeddings.LayerNorm", "x0")

    # -- attention bias from the mask: 0 for tokens, -1e9 for padding; batch x 1 x 1 x length ---
    mask = node("Cast", ["attention_mask"], "mask", to=TensorProto.FLOAT)
    bias = node("Mul", [node("Sub", [const("one_f", 1.0), mask], "inverse_mask"), const("neg", -1e9)], "bias_flat")
    attn_bias = node("Unsqueeze", [bias, const("axes_12", [1, 2], np.int64)], "attn_bias")
    qkv_shape = const("qkv_shape", [0, 0, 3, heads, head_dim], np.int64)
    ctx_shape = const("ctx_shape", [0, 0, hidden], np.int64)
    scale = const("scale", 1.0 / np.sqrt(head_dim))
    sqrt2 = const("sqrt2", np.sqrt(2.0))
    half, one = const("half", 0.5), "one_f"

    for i in range(model.layers):
        p = f"encoder.layer.{i}."
        qkv = node("Reshape", [dense(x, p + "qkv", f"l{i}_qkv"), qkv_shape], f"l{i}_qkv5")
        qkv = node("Transpose", [qkv], f"l{i}_qkvT", perm=[2, 0, 3, 1, 4])  # 3 x B x heads x L x d
        q, k, v = (node("Gather", [qkv, const(f"l{i}_idx{j}", j, np.int64)], f"l{i}_{n}", axis=0)
                   for j, n in enumerate("qkv"))
        k_t = node("Transpose", [k], f"l{i}_kT", perm=[0, 1, 3, 2])
        scores = node("Add", [node("Mul", [node("MatMul", [q, k_t], f"l{i}_qk"), scale], f"l{i}_scaled"),
                              attn_bias], f"l{i}_scores")
        probs = node("Softmax", [scores], f"l{i}_probs", axis=-1)
        context = node("Transpose", [node("MatMul", [probs, v], f"l{i}_ctx4")], f"l{i}_ctxT", perm=[0, 2, 1, 3])
        context = node("Reshape", [context, ctx_shape], f"l{i}_ctx")
        attn = dense(context, p + "attention.output.dense", f"l{i}_attn")
        x = layer_norm(node("Add", [x, attn], f"l{i}_res1"), p + "attention.output.LayerNorm", f"l{i}_x1")
        inter = dense(x, p + "intermediate.dense", f"l{i}_inter")
        # exact GELU, x/2 (1 + erf(x/sqrt 2)), as BERT and the numpy engine compute it
        erf = node("Erf", [node("Div", [inter, sqrt2], f"l{i}_div")], f"l{i}_erf")
        gelu = node("Mul", [node("Mul", [inter, half], f"l{i}_halfx"),
                            node("Add", [erf, one], f"l{i}_erf1")], f"l{i}_gelu")
        ffn = dense(gelu, p + "output.dense", f"l{i}_ffn")
        x = layer_norm(node("Add", [x, ffn], f"l{i}_res2"), p + "output.LayerNorm", f"l{i}_x2")

    # -- mean pooling over the mask ---------------------------------------------------------------
    mask3 = node("Unsqueeze", [mask, const("axes_2", [2], np.int64)], "mask3")
    axis1 = const("axis_1", [1], np.int64)
    total = node("ReduceSum", [node("Mul", [x, mask3], "masked"), axis1], "total", keepdims=0)
    count = node("Max", [node("ReduceSum", [mask3, axis1], "count_raw", keepdims=0), const("tiny", 1e-9)], "count")
    node("Div", [total, count], "pooled")

    ids_type = helper.make_tensor_type_proto(TensorProto.INT64, ["batch", "length"])
    graph = helper.make_graph(
        nodes, "minilm",
        [helper.make_value_info("input_ids", ids_type), helper.make_value_info("attention_mask", ids_type)],
        [helper.make_tensor_value_info("pooled", TensorProto.FLOAT, ["batch", hidden])],
        inits)
    proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="skillbank")
    # (No onnx.checker pass: it takes seconds on 90 MB of weights, and ONNX Runtime checks
    # the graph as it loads it.)
    return proto.SerializeToString()


def _cached_graph(model_dir: Path, cache_dir: Path | None, build: Any) -> bytes | str:
    """The graph's file path if cached (or cacheable now), else its bytes (unwritable cache)."""
    path = graph_file(model_dir, cache_dir)
    if path.exists():
        return str(path)
    data = build()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # Written aside and moved into place: a process reading the cache never sees half a file.
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
        return str(path)
    except OSError as exc:
        log.info("cannot cache the ONNX graph at %s (%s); building it in memory each time", path, exc)
        return data


class OnnxMiniLM(NumpyMiniLM):
    """:class:`NumpyMiniLM` with the forward pass on an ONNX Runtime session.

    ``threads`` is the session's intra-op thread count: one by default, as for the numpy engine
    (a query is too small for a second thread to pay on a busy machine). Sessions are safe to
    call from several threads at once.
    """

    def __init__(self, model_dir: str | Path, *, threads: int = 1, cache_dir: str | Path | None = None):
        import onnxruntime as ort

        self._read_config(model_dir)

        def build() -> bytes:
            self.w = fused_weights(self.model_dir, self.layers)
            try:
                return build_graph(self)
            finally:
                del self.w  # the session holds its own copy

        source = _cached_graph(self.model_dir, Path(cache_dir) if cache_dir else None, build)
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        options.inter_op_num_threads = 1
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
        # Idle pool threads spin waiting for work by default: on a shared machine that burns
        # the other core for nothing between queries.
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        self.threads = threads
        self.session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        return self._encode(texts, batch_size)  # no BLAS to limit: the session has its own pool

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        return self.session.run(None, {"input_ids": ids, "attention_mask": mask.astype(np.int64)})[0]
