"""The LLM injection detector: a classifier prompt (:mod:`skillbank._screen.llm_prompt`) on a chat
model, by default the local ``1.5b`` model (``skillbank[local]``, in process, greedy), one
call per incoming version, answering ``{"asks": ..., "reason": ..., "verdict": ...}``: what the
text asks the assistant to do, why that is or is not an injection, then ``clean``, ``injection`` or
``unsure``.

It sits behind the patterns, alone or behind the embedding detector as a first stage
(:mod:`skillbank._screen.second_layer` chooses): it sees only what the layers before it let through,
and only a version's added text. Versions are rare, so seconds per call are affordable where
milliseconds per line are not the point; a verdict is kept (by text) for the process, so the
evolution round's lint and the bank's screen of the same proposal cost one call.

An ``unsure`` verdict is routed to review: a quarantine finding of its own
(``injection-llm-unsure``, "the detector was unsure"), distinct from an injection finding, so a
reviewer sees which held versions the model flagged and which it could not call.

On the local model the verdict is decoded under a grammar built from its schema, so it parses.
A reply that still cannot be read, or a call that fails, is asked again once (with what was
wrong); after that the text is **held**: a quarantine finding says the detector could not judge
it. Held rather than passed, because a screen that lets through whatever it cannot judge is
bypassed by any text that makes the judge stumble (an overlong reply, a reply in prose), while
holding loses nothing: the version is stored, quarantined, with the reason in its note, and a
person promotes it (``skillbank candidates promote NAME --force``) or ``skillbank lint``
re-checks it. A model that cannot run at all (no ``skillbank[local]``, no fetched model) is found
when the detector is built, and the screen says once that it runs without it.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any

from skillbank._lru import LRU
from skillbank._replies import reply_json
from skillbank._screen.findings import QUARANTINE, Finding
from skillbank._screen.llm_prompt import VERDICT_SCHEMA, InjectionVerdict, messages, retry_messages

__all__ = ["LLMDetector", "LLMStats", "DEFAULT_MODEL"]

DEFAULT_MODEL = "local:1.5b"
ATTEMPTS = 2  # the first ask and one retry
# A local model's context is 8192 tokens; the prompt takes ~2,700 of them and some scripts need
# a token a character, so longer texts are judged in pieces of at most this many characters.
MAX_CHARS = 4000
_CACHE_SIZE = 1024


@dataclass
class LLMStats:
    """What the detector did: texts judged by the model (not from the cache), model calls
    (retries included), retries, texts it could not judge, texts it was unsure about, verdicts
    from the cache, and the seconds the model calls took."""

    judged: int = 0
    calls: int = 0
    retries: int = 0
    unjudged: int = 0
    unsure: int = 0
    cached: int = 0
    seconds: float = 0.0


def pieces(text: str, max_chars: int = MAX_CHARS) -> list[str]:
    """``text`` in whole lines, at most ``max_chars`` characters a piece (a longer line is cut)."""
    out: list[str] = []
    current = ""
    for line in text.splitlines():
        for start in range(0, max(len(line), 1), max_chars):
            part = line[start:start + max_chars]
            if current and len(current) + 1 + len(part) > max_chars:
                out.append(current)
                current = ""
            current = f"{current}\n{part}" if current else part
    if current.strip():
        out.append(current)
    return out


def _is_local(model: Any) -> bool:
    from skillbank._engines.local.chat import LocalChatModel

    return isinstance(model, LocalChatModel)


def _held_to_schema(model: Any) -> Any:
    """``model`` decoding only replies that fit the verdict's schema where it can (the local
    model, with a llama.cpp grammar); another model is held to it by the prompt and the retry."""
    if _is_local(model):
        return model.model_copy(update={"json_schema": VERDICT_SCHEMA, "tools": [], "tool_choice": None})
    return model


def _said(verdict: InjectionVerdict) -> str:
    """The verdict's two sentences, for a finding's message: what the text asks, and why."""
    return f"{verdict.asks.strip()[:200]} ({verdict.reason.strip()[:200]})"


class LLMDetector:
    """``findings(text)``: a quarantine finding when the model judges ``text`` an injection, is
    unsure about it, or could not judge it; see the module docstring."""

    def __init__(self, model: Any, *, label: str | None = None, max_chars: int = MAX_CHARS):
        self.model = _held_to_schema(model)
        self.label = label or getattr(model, "model_name", None) or type(model).__name__
        self.name = f"LLM detector ({self.label})"
        self.max_chars = max_chars
        self.stats = LLMStats()
        self._verdicts: LRU[str, InjectionVerdict] = LRU(_CACHE_SIZE)
        self._lock = threading.Lock()

    @classmethod
    def from_spec(cls, spec: str = DEFAULT_MODEL) -> "LLMDetector":
        """The detector on the chat model ``spec`` names (:func:`skillbank.chat.resolve_chat_model`),
        sampling greedily. A local model is loaded here, so a missing ``skillbank[local]`` or an
        unfetched or damaged model file raises now, saying what to install or fetch, instead of
        holding every version that comes in."""
        from skillbank.chat import resolve_chat_model

        model = resolve_chat_model(spec, temperature=0.0)
        if _is_local(model):
            model.engine()
        return cls(model, label=spec)

    def findings(self, text: str) -> list[Finding]:
        """An injection in any piece wins; else a piece it could not judge, else one it was unsure
        about, holds the whole text for a person."""
        unjudged: list[str] = []
        unsure: list[InjectionVerdict] = []
        for piece in pieces(text, self.max_chars):
            verdict = self.verdict(piece)
            if isinstance(verdict, str):
                unjudged.append(verdict)
            elif verdict.verdict == "injection":
                return [Finding("injection-llm", QUARANTINE,
                                f"the {self.name} judged it an injection: {_said(verdict)}")]
            elif verdict.verdict == "unsure":
                unsure.append(verdict)
        if unjudged:
            return [Finding("injection-llm-unjudged", QUARANTINE,
                            f"the {self.name} could not judge it ({unjudged[0][:200]}); held until a person "
                            "reads it")]
        if unsure:
            return [Finding("injection-llm-unsure", QUARANTINE,
                            f"the detector was unsure ({self.name}: {_said(unsure[0])}); held for review until "
                            "a person reads it")]
        return []

    def verdict(self, text: str) -> InjectionVerdict | str:
        """The model's verdict on ``text``, or why there is none after :data:`ATTEMPTS` asks."""
        cached = self._verdicts.get(text)
        if cached is not None:
            with self._lock:
                self.stats.cached += 1
            return cached
        asked = messages(text)
        error = "no reply"
        for attempt in range(ATTEMPTS):
            started = time.perf_counter()
            try:
                reply = self.model.invoke(asked).text
            except Exception as exc:  # noqa: BLE001 - a failing model must not crash a way in
                reply, error = None, f"{type(exc).__name__}: {exc}"
            finally:
                self._count(time.perf_counter() - started, retry=attempt > 0)
            if reply is None:
                continue
            try:
                verdict = InjectionVerdict.model_validate(reply_json(reply))
            except ValueError as exc:  # unreadable JSON, or not the verdict's fields (ValidationError)
                error = f"unreadable verdict: {' '.join(str(exc).split())[:200]}"
                asked = retry_messages(asked, reply, error)
                continue
            self._verdicts.put(text, verdict)
            if verdict.verdict == "unsure":
                with self._lock:
                    self.stats.unsure += 1
            return verdict
        with self._lock:
            self.stats.unjudged += 1
        return error

    def _count(self, seconds: float, *, retry: bool) -> None:
        with self._lock:
            self.stats.calls += 1
            self.stats.judged += not retry
            self.stats.retries += retry
            self.stats.seconds += seconds

