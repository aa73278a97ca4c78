"""``LocalChatModel``: a LangChain chat model over llama-cpp-python, for small GGUF models.

Why not ``ChatLlamaCpp``: its tool support goes through llama-cpp-python's
``chatml-function-calling`` format, which drops every tool-result message from the prompt. This
model renders the GGUF's own chat template (:mod:`skillbank._engines.local.template`) and parses tool
calls however a small model writes them (:mod:`skillbank._engines.local.toolcalls`).

- One loaded model per file and settings, shared by every instance and thread
  (:func:`engine_for`); ``bind_tools``, ``with_seed`` and ``with_structured_output`` make cheap
  copies that share it. Generation holds the engine's lock: llama.cpp has one context.
- The prompt cache is that context's KV cache, bounded by ``n_ctx``: llama.cpp keeps the tokens
  of the previous prompt and re-evaluates only what follows the longest common prefix, so turn
  ``n + 1`` of a run (its prompt extends turn ``n``'s) and the next run of the same agent (same
  system prompt and tools) pay only for the new tokens, rounded to whole batches (below). No
  ``LlamaCache`` is attached:
  ``LlamaRAMCache`` copies a ~300 MB logits buffer per entry and leaves it out of its capacity.
  ``usage_metadata["input_token_details"]["cache_read"]`` says how many prompt tokens were
  reused. Interleaving two conversations on one model defeats the reuse; run trials one at a
  time (generation is serialised anyway).
- A seeded call is reproducible whatever the context held before: llama.cpp's numbers depend on
  how a prompt was cut into batches, so the engine evaluates prompts in batches of ``n_batch``
  tokens aligned to the start of the context and reuses only whole batches that a fresh read
  would have cut the same way. The reuse changes the time a call takes, never its reply
  (docs/decisions/0001).
- Sampling: per-call ``seed`` and ``temperature`` (``model.invoke(msgs, seed=7)``), defaults
  from Qwen2.5's generation config (temperature 0.7, top-p 0.8, top-k 20, repetition
  penalty 1.05).
- ``with_structured_output`` and a forced ``tool_choice`` constrain decoding with a grammar
  built from the JSON schema, so a small model's reply always parses.
"""

from __future__ import annotations

import atexit
import json
import os
import threading
import time
from dataclasses import dataclass, field
from operator import itemgetter
from pathlib import Path
from typing import Any, Sequence

from langchain_core.language_models import BaseChatModel
from langchain_core.messages import AIMessage, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatResult
from langchain_core.runnables import Runnable, RunnableMap, RunnablePassthrough
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel, ConfigDict, Field

from skillbank.errors import ContextWindowExceededError, LocalModelError, MissingExtraError
from skillbank._engines.local.template import ChatTemplate, to_template_messages
from skillbank._engines.local.toolcalls import parse_tool_calls

__all__ = ["LocalChatModel", "Engine", "engine_for", "ContextWindowExceededError", "LocalModelError"]


def _import_llama() -> Any:
    try:
        import llama_cpp
    except ImportError as exc:
        raise MissingExtraError("the local chat model (LocalChatModel)", "local",
                                "llama-cpp-python") from exc
    return llama_cpp


# Prompts are read in batches of this many tokens and only whole batches are reused (Engine): a
# smaller batch reuses more of a shared prefix at no measurable cost per token
# (docs/decisions/0001).
DEFAULT_BATCH = 64


def default_threads() -> int:
    # llama.cpp's own default is half the logical CPUs (one per physical core on SMT machines);
    # on a small machine (CI's two cores) that would leave a core idle.
    n = os.cpu_count() or 1
    return n if n <= 4 else max(4, n // 2)


@dataclass
class EngineStats:
    """What the engine did, summed over calls: prompt tokens sent, reused and evaluated."""

    calls: int = 0
    prompt_tokens: int = 0
    reused_tokens: int = 0
    completion_tokens: int = 0
    seconds: float = 0.0

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


@dataclass
class Completion:
    text: str
    prompt_tokens: int
    completion_tokens: int
    reused_tokens: int
    seconds: float
    finish_reason: str | None


@dataclass(eq=False)
class Engine:
    """One loaded model and its single context; ``complete`` is serialised by ``lock``."""

    path: str
    llama: Any
    template: ChatTemplate
    lock: threading.Lock = field(default_factory=threading.Lock)
    stats: EngineStats = field(default_factory=EngineStats)
    _grammars: dict[str, Any] = field(default_factory=dict)
    # The cached tokens evaluated as whole aligned batches (a prompt's last partial batch and the
    # tokens generated one at a time after it are not): only these are reused.
    _whole_batches: int = 0

    @property
    def n_ctx(self) -> int:
        return int(self.llama.n_ctx())

    @property
    def n_batch(self) -> int:
        return int(self.llama.n_batch)

    def _reusable(self, tokens: list[int]) -> int:
        """How many leading ``tokens`` to read from the cache: the common prefix with what it
        holds, cut to whole batches evaluated as such (a fresh read cuts the prompt at the same
        places, so the reply is the same), and never the last token (llama.cpp re-evaluates it
        to refresh the logits)."""
        from llama_cpp import Llama

        cached = self.llama._input_ids[:int(self.llama.n_tokens)].tolist()
        common = min(Llama.longest_token_prefix(cached, tokens), len(tokens) - 1)
        return min(common // self.n_batch * self.n_batch, self._whole_batches)

    def metadata(self) -> dict[str, str]:
        return dict(self.llama.metadata)

    def grammar(self, schema: dict[str, Any]) -> Any:
        key = json.dumps(schema, sort_keys=True)
        if key not in self._grammars:
            from llama_cpp import LlamaGrammar

            self._grammars[key] = LlamaGrammar.from_json_schema(key, verbose=False)
        return self._grammars[key]

    def tokenize(self, text: str) -> list[int]:
        # The template already wrote every special token (and a BOS where the model wants one).
        return self.llama.tokenize(text.encode("utf-8"), add_bos=False, special=True)

    def complete(self, prompt: str, *, max_tokens: int, temperature: float, top_p: float,
                 top_k: int, min_p: float, repeat_penalty: float, seed: int | None,
                 stop: Sequence[str] = (), grammar: Any = None,
                 reuse_prefix: bool = True) -> Completion:
        tokens = self.tokenize(prompt)
        if len(tokens) >= self.n_ctx:
            raise ContextWindowExceededError(
                f"the prompt has {len(tokens)} tokens; the model's context window is {self.n_ctx} "
                "(raise n_ctx, or shorten the conversation)")
        with self.lock:
            t0 = time.perf_counter()
            reused = self._reusable(tokens) if reuse_prefix else 0
            if reused == 0:
                self.llama.reset()
            else:
                self.llama.n_tokens = reused  # llama.cpp drops the rest of the cache, then reads on
            self._whole_batches = len(tokens) // self.n_batch * self.n_batch
            out = self.llama.create_completion(
                tokens, max_tokens=max_tokens, temperature=temperature, top_p=top_p, top_k=top_k,
                min_p=min_p, repeat_penalty=repeat_penalty, seed=seed, stop=list(stop) or [],
                grammar=grammar)
            seconds = time.perf_counter() - t0
            usage = out.get("usage") or {}
            choice = out["choices"][0]
            result = Completion(text=choice.get("text") or "",
                                prompt_tokens=int(usage.get("prompt_tokens", len(tokens))),
                                completion_tokens=int(usage.get("completion_tokens", 0)),
                                reused_tokens=max(0, reused), seconds=seconds,
                                finish_reason=choice.get("finish_reason"))
            s = self.stats
            s.calls += 1
            s.prompt_tokens += result.prompt_tokens
            s.reused_tokens += result.reused_tokens
            s.completion_tokens += result.completion_tokens
            s.seconds += seconds
        return result


_ENGINES: dict[tuple[Any, ...], Engine] = {}
_ENGINES_LOCK = threading.Lock()


@atexit.register
def _close_engines() -> None:
    # Freed by the garbage collector at interpreter exit, a Llama calls into a llama.cpp library
    # that is already unloaded and prints a TypeError; close them while it is still there.
    with _ENGINES_LOCK:
        for engine in _ENGINES.values():
            engine.llama.close()
        _ENGINES.clear()


def engine_for(model_path: str | os.PathLike[str], *, n_ctx: int = 8192, n_threads: int | None = None,
               n_batch: int = DEFAULT_BATCH) -> Engine:
    """The shared engine for this file and these settings, loading the model on first use."""
    path = Path(model_path).expanduser()
    if not path.is_file():
        raise LocalModelError(f"no model file at {path}: fetch one with `skillbank model fetch` "
                              "(or pass the path of a GGUF file)")
    threads = n_threads or default_threads()
    key = (str(path.resolve()), n_ctx, threads, n_batch)
    with _ENGINES_LOCK:
        engine = _ENGINES.get(key)
        if engine is None:
            llama_cpp = _import_llama()
            try:
                llama = llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_threads=threads,
                                        n_threads_batch=threads, n_batch=n_batch, verbose=False)
            except (ValueError, RuntimeError) as exc:
                raise LocalModelError(f"llama.cpp could not load {path}: {exc}") from exc
            meta = llama.metadata
            source = meta.get("tokenizer.chat_template")
            if not source:
                raise LocalModelError(f"{path.name} carries no chat template "
                                      "(tokenizer.chat_template); LocalChatModel needs one")

            def special(token_id: int) -> str:
                if token_id < 0:
                    return ""
                return llama.detokenize([token_id], special=True).decode("utf-8", "replace")

            template = ChatTemplate(source, bos_token=special(llama.token_bos()),
                                    eos_token=special(llama.token_eos()))
            engine = _ENGINES[key] = Engine(path=str(path), llama=llama, template=template)
        return engine


def _tool_choice(choice: Any, names: Sequence[str]) -> str | None:
    """LangChain's tool_choice forms -> None (auto), "none", "any", or one tool's name."""
    if choice in (None, "auto", False):
        return None
    if choice in ("any", "required", True):
        return "any"
    if choice == "none":
        return "none"
    if isinstance(choice, dict):
        choice = (choice.get("function") or {}).get("name") or choice.get("name")
    if isinstance(choice, str) and choice in names:
        return choice
    raise ValueError(f"tool_choice {choice!r} is not one of auto, any, none or a bound tool "
                     f"({', '.join(names)})")


def _call_schema(tools: Sequence[dict[str, Any]], only: str | None) -> dict[str, Any]:
    """The JSON schema of one ``{"name", "arguments"}`` call to any (or one) of ``tools``."""
    options = []
    for tool in tools:
        fn = tool["function"]
        if only not in (None, "any") and fn["name"] != only:
            continue
        options.append({"type": "object", "properties": {
            "name": {"const": fn["name"]},
            "arguments": fn.get("parameters") or {"type": "object"}},
            "required": ["name", "arguments"]})
    return options[0] if len(options) == 1 else {"anyOf": options}


class LocalChatModel(BaseChatModel):
    """A GGUF chat model run in-process by llama.cpp; see the module docstring.

    >>> model = LocalChatModel(model_path="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf")
    >>> agent = create_agent(model.with_seed(3), tools, middleware=[SkillBankMiddleware(bank)])
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    model_path: str
    n_ctx: int = 8192
    n_threads: int | None = None
    n_batch: int = DEFAULT_BATCH
    temperature: float = 0.7
    top_p: float = 0.8
    top_k: int = 20
    min_p: float = 0.0
    repeat_penalty: float = 1.05
    max_tokens: int = 512
    seed: int | None = None
    reuse_prefix: bool = True
    """False resets the context before every call (only to measure what the reuse saves)."""
    tools: list[dict[str, Any]] = Field(default_factory=list)
    tool_choice: str | None = None
    json_schema: dict[str, Any] | None = None

    @property
    def _llm_type(self) -> str:
        return "skillbank-local-llama-cpp"

    @property
    def model_name(self) -> str:
        return "local:" + Path(self.model_path).name

    @property
    def _identifying_params(self) -> dict[str, Any]:
        return {"model_path": self.model_path, "n_ctx": self.n_ctx, "temperature": self.temperature,
                "top_p": self.top_p, "top_k": self.top_k, "seed": self.seed}

    def engine(self) -> Engine:
        """The shared loaded model (loads it on first use)."""
        return engine_for(self.model_path, n_ctx=self.n_ctx, n_threads=self.n_threads,
                          n_batch=self.n_batch)

    # -- copies ----------------------------------------------------------------------------------

    def with_seed(self, seed: int | None) -> "LocalChatModel":
        """A copy that samples with ``seed`` (same loaded model)."""
        return self.model_copy(update={"seed": seed})

    def bind_tools(self, tools: Sequence[Any], *, tool_choice: Any = None,
                   **kwargs: Any) -> "LocalChatModel":
        schemas = [convert_to_openai_tool(t) for t in tools]
        names = [s["function"]["name"] for s in schemas]
        return self.model_copy(update={"tools": schemas,
                                       "tool_choice": _tool_choice(tool_choice, names)})

    def with_structured_output(self, schema: Any, *, include_raw: bool = False,
                               **kwargs: Any) -> Runnable:
        """Replies constrained to ``schema`` (a pydantic model or a JSON schema dict)."""
        from langchain_core.output_parsers import JsonOutputParser, PydanticOutputParser

        if isinstance(schema, type) and issubclass(schema, BaseModel):
            json_schema = schema.model_json_schema()
            parser: Runnable = PydanticOutputParser(pydantic_object=schema)
        elif isinstance(schema, dict):
            json_schema = schema.get("parameters", schema) if "name" in schema and "parameters" in schema \
                else schema
            parser = JsonOutputParser()
        else:
            raise ValueError(f"with_structured_output takes a pydantic model or a JSON schema, "
                             f"not {schema!r}")
        llm = self.model_copy(update={"json_schema": json_schema, "tools": [], "tool_choice": None})
        if not include_raw:
            return llm | parser
        parsed = RunnablePassthrough.assign(parsed=itemgetter("raw") | parser,
                                            parsing_error=lambda _: None)
        fallback = RunnablePassthrough.assign(parsed=lambda _: None)
        return RunnableMap(raw=llm) | parsed.with_fallbacks([fallback], exception_key="parsing_error")

    # -- one call ----------------------------------------------------------------------------------

    def render(self, messages: Sequence[BaseMessage]) -> str:
        """The exact prompt text this model would send for ``messages``."""
        tools = self.tools if self.tool_choice != "none" else []
        return self.engine().template.render(to_template_messages(messages), tools or None)

    def _generate(self, messages: list[BaseMessage], stop: list[str] | None = None,
                  run_manager: Any = None, **kwargs: Any) -> ChatResult:
        engine = self.engine()
        prompt = self.render(messages)
        schema = self.json_schema
        if schema is None and self.tools and self.tool_choice not in (None, "none"):
            schema = _call_schema(self.tools, self.tool_choice)
        stops = list(stop or [])
        if self.tools:
            stops.append("<tool_response>")  # a model that starts inventing the tool's answer
        out = engine.complete(
            prompt, max_tokens=int(kwargs.get("max_tokens", self.max_tokens)),
            temperature=float(kwargs.get("temperature", self.temperature)),
            top_p=float(kwargs.get("top_p", self.top_p)), top_k=int(kwargs.get("top_k", self.top_k)),
            min_p=self.min_p, repeat_penalty=self.repeat_penalty,
            seed=kwargs.get("seed", self.seed), stop=stops,
            grammar=engine.grammar(schema) if schema is not None else None,
            reuse_prefix=self.reuse_prefix)
        text, calls = (parse_tool_calls(out.text) if self.tools and self.tool_choice != "none"
                       else (out.text.strip(), []))
        message = AIMessage(
            content=text, tool_calls=calls,
            usage_metadata={"input_tokens": out.prompt_tokens, "output_tokens": out.completion_tokens,
                            "total_tokens": out.prompt_tokens + out.completion_tokens,
                            "input_token_details": {"cache_read": out.reused_tokens}},
            response_metadata={"model_name": self.model_name, "finish_reason": out.finish_reason,
                               "seconds": round(out.seconds, 3), "raw_text": out.text})
        return ChatResult(generations=[ChatGeneration(message=message)])
