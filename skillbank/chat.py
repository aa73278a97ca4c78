"""One way to name a chat model everywhere one is taken (``eval --model``, the LLM distiller, the
judge): a chat-model object, ``"provider:model"`` (LangChain's ``init_chat_model``), or a local
GGUF model, ``"local:PATH.gguf"`` or ``"local:1.5b"`` / ``"local:0.5b"`` (fetched with
``skillbank model fetch``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from skillbank.errors import MissingProviderError, ModelSpecError

__all__ = ["resolve_chat_model", "with_seed", "ModelSpecError", "MissingProviderError", "LOCAL_PREFIX"]

LOCAL_PREFIX = "local:"


def _local(target: str, temperature: float | None) -> Any:
    from skillbank._engines.local.fetch import KNOWN_MODELS, find_model, model_file

    if target.lower() in KNOWN_MODELS:
        path = find_model(target)
        if path is None:
            raise ModelSpecError(f"the {target} model is not fetched yet ({model_file(target)}): "
                                 f"run `skillbank model fetch --size {target.lower()}`")
    else:
        path = Path(target).expanduser()
        if not path.is_file():
            sizes = ", ".join(f"local:{s}" for s in KNOWN_MODELS)
            raise ModelSpecError(f"no GGUF file at {path}: give the path of one, or {sizes} "
                                 "for a model fetched with `skillbank model fetch`")
    from skillbank._engines.local.chat import LocalChatModel

    kwargs: dict[str, Any] = {"temperature": temperature} if temperature is not None else {}
    return LocalChatModel(model_path=str(path), **kwargs)


def _provider(spec: str, temperature: float | None) -> Any:
    from langchain.chat_models import init_chat_model

    kwargs: dict[str, Any] = {"temperature": temperature} if temperature is not None else {}
    try:
        return init_chat_model(spec, **kwargs)
    except ImportError as exc:
        provider = spec.split(":", 1)[0] if ":" in spec else "<provider>"
        raise MissingProviderError(spec, f"langchain-{provider.replace('_', '-')}") from exc
    except ValueError as exc:  # an unknown provider, or a model name it cannot infer one from
        raise ModelSpecError(" ".join(str(exc).split())) from exc


def resolve_chat_model(spec: Any, *, temperature: float | None = None) -> Any:
    """A LangChain chat model from ``spec``; see the module docstring.

    ``temperature`` applies to models built from a string; an object is returned as it is.
    Raises :class:`ModelSpecError` (or :class:`~skillbank.errors.MissingExtraError` naming the
    package to install) with a message that says what to do.
    """
    if isinstance(spec, str):
        text = spec.strip()
        if not text:
            raise ModelSpecError("empty model spec: use provider:model or local:PATH.gguf")
        if text.startswith(LOCAL_PREFIX):
            return _local(text[len(LOCAL_PREFIX):], temperature)
        return _provider(text, temperature)
    if hasattr(spec, "invoke"):
        return spec
    raise ModelSpecError(f"not a chat model: {spec!r}; pass a LangChain chat model, "
                         "'provider:model' or 'local:PATH.gguf'")


def with_seed(model: Any, seed: int) -> Any:
    """``model`` sampling with ``seed`` where the model supports a seed (a copy), else ``model``."""
    method = getattr(model, "with_seed", None)
    return method(seed) if callable(method) else model
