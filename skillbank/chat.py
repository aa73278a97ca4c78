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

    Args:
        spec: A chat-model object (anything with ``invoke``, returned as it is),
            ``"provider:model"`` (LangChain's ``init_chat_model``) or ``"local:PATH.gguf"`` /
            ``"local:<size>"`` (a local GGUF model, a known size once fetched).
        temperature: The sampling temperature of a model built from a string; ``None``: the
            model's default. Ignored for an object.

    Returns:
        The chat model.

    Raises:
        ModelSpecError: ``spec`` is empty, names no usable provider or model, no GGUF file, a
            known size not fetched yet, or is not a chat model; the message says what to do.
        MissingProviderError: The provider's LangChain package is not installed (the message
            names it; a :class:`~skillbank.errors.MissingExtraError`).
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
    """``model`` sampling with ``seed`` where the model supports a seed (a copy), else ``model``.

    Args:
        model: A chat model; one with a ``with_seed(seed)`` method supports a seed.
        seed: The sampling seed.

    Returns:
        ``model.with_seed(seed)`` where the model has that method, else ``model`` unchanged.
    """
    method = getattr(model, "with_seed", None)
    return method(seed) if callable(method) else model
