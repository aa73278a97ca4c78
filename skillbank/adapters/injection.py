"""Choosing the skills for one model turn and putting them into the system message.

The retrieval query is the task plus the last ``history`` messages of the conversation, so what
is injected follows the run: a tool that just failed pulls in the guard skill about it. The
result records every injected skill version with its rank and score; that record is what the
evolution loop groups trajectories by.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from langchain_core.messages import BaseMessage, SystemMessage

from skillbank.adapters.recorder import first_human_text, message_text
from skillbank.models import Skill, SkillStatus
from skillbank.retrieval import FOOTER, HEADER, SkillHit, approx_tokens, render_one

__all__ = ["SkillInjector", "InjectionResult", "merge_system_message", "inject_skills",
           "INJECTION_METADATA_KEY", "injections_from_messages"]

# Where an injected system message carries its record, for a callback handler to pick up.
# response_metadata is never sent to a provider, unlike additional_kwargs for some integrations.
INJECTION_METADATA_KEY = "skillbank_injections"

_MESSAGE_CHARS = 400  # per message in the query: enough for the gist, keeps embedding cheap
_QUERY_CHARS = 2000


@dataclass
class InjectionResult:
    """What one turn injects: the rendered block and the skills in it, best first."""

    text: str
    hits: list[SkillHit] = field(default_factory=list)
    query: str = ""
    seconds: float = 0.0

    @property
    def records(self) -> list[tuple[str, int, float]]:
        """``(skill_id, version, score)`` in rank order (rank = position)."""
        return [(h.skill.id, h.skill.version, float(h.score)) for h in self.hits]

    def as_metadata(self) -> list[dict[str, Any]]:
        return [{"skill_id": sid, "version": v, "rank": r, "score": s, "name": h.skill.name}
                for r, ((sid, v, s), h) in enumerate(zip(self.records, self.hits))]

    def __bool__(self) -> bool:
        return bool(self.text)


def _role(message: Any) -> str:
    return {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}.get(
        getattr(message, "type", ""), getattr(message, "type", "message"))


def _describe(message: Any) -> str:
    text = message_text(getattr(message, "content", "")).strip()
    parts = [text[:_MESSAGE_CHARS]] if text else []
    for call in getattr(message, "tool_calls", None) or []:
        args = ", ".join(f"{k}={str(v)[:40]}" for k, v in (call.get("args") or {}).items())
        parts.append(f"calls {call.get('name')}({args})")
    if getattr(message, "type", None) == "tool":
        name = getattr(message, "name", None) or "tool"
        status = " failed" if getattr(message, "status", None) == "error" else ""
        return f"{name}{status}: {' '.join(parts)}"
    return f"{_role(message)}: {' '.join(parts)}" if parts else ""


class SkillInjector:
    """Selects and renders skills for a turn.

    ``k`` retrieved skills at most, plus the ``pinned`` ones (ids or names, always first);
    ``token_budget`` caps the whole rendered block; ``kinds``/``tags``/``tools`` filter in the
    index; ``filter(skill) -> bool`` filters after retrieval; ``min_score`` drops weak matches.
    """

    def __init__(
        self,
        bank: Any,
        *,
        k: int = 5,
        token_budget: int | None = 1200,
        history: int = 6,
        min_score: float = 0.0,
        pinned: Iterable[str] = (),
        filter: Callable[[Skill], bool] | None = None,
        kinds: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        tools: Sequence[str] | None = None,
    ):
        self.bank = bank
        self.k = k
        self.token_budget = token_budget
        self.history = history
        self.min_score = min_score
        self.pinned_refs = tuple(pinned)
        self.filter = filter
        self.kinds = kinds
        self.tags = tags
        self.tools = tools
        self._pinned_cache: tuple[int, list[Skill]] | None = None
        self._lock = threading.Lock()

    # -- query -------------------------------------------------------------------------------

    def build_query(self, messages: Sequence[Any], task: str | None = None) -> str:
        """The task, then the last ``history`` non-system messages, newest last."""
        convo = [m for m in messages if getattr(m, "type", None) != "system"]
        task = task if task is not None else first_human_text(convo)
        recent = convo[-self.history:] if self.history > 0 else []
        lines = [task.strip()[:_MESSAGE_CHARS * 2]] if task and task.strip() else []
        for message in recent:
            line = _describe(message)
            # The first human message often is the task itself; do not say it twice.
            if line and not (getattr(message, "type", None) == "human"
                             and message_text(message.content).strip() == (task or "").strip()):
                lines.append(line)
        query = "\n".join(lines)
        return query[-_QUERY_CHARS:] if len(query) > _QUERY_CHARS else query

    # -- selection ---------------------------------------------------------------------------

    def pinned(self) -> list[Skill]:
        if not self.pinned_refs:
            return []
        seq = self.bank.skills.last_event_seq()
        with self._lock:
            if self._pinned_cache and self._pinned_cache[0] == seq:
                return self._pinned_cache[1]
        skills = []
        for ref in self.pinned_refs:
            try:
                skill = self.bank.skills.get(ref)
            except Exception:
                continue  # a pinned skill that was deleted or renamed is simply not injected
            if skill.status == SkillStatus.active:
                skills.append(skill)
        with self._lock:
            self._pinned_cache = (seq, skills)
        return skills

    def select(self, query: str) -> list[SkillHit]:
        pinned = self.pinned()
        hits: list[SkillHit] = [SkillHit(s, 1.0) for s in pinned]
        used = approx_tokens(HEADER) + approx_tokens(FOOTER) + 2
        for hit in hits:
            used += approx_tokens(render_one(hit.skill)) + 1
        if self.k <= 0 or not query.strip():
            return hits
        exclude = [s.id for s in pinned]
        remaining = None if self.token_budget is None else self.token_budget - used
        if remaining is not None and remaining <= 0:
            return hits
        search_kwargs = dict(min_score=self.min_score, kinds=self.kinds, tags=self.tags,
                             tools=self.tools, exclude=exclude)
        if self.filter is None:
            # select() counts the header again: a few tokens of slack, never an overflow.
            budget = None if remaining is None else remaining + approx_tokens(HEADER) + approx_tokens(FOOTER) + 2
            found = self.bank.search(query, self.k, token_budget=budget, **search_kwargs)
            return hits + list(found)
        found = self.bank.search(query, max(self.k * 4, self.k + 8), **search_kwargs)
        chosen: list[SkillHit] = []
        for hit in found:
            if len(chosen) >= self.k:
                break
            try:
                keep = self.filter(hit.skill)
            except Exception:
                keep = False
            if not keep:
                continue
            cost = approx_tokens(render_one(hit.skill)) + 1
            if remaining is not None:
                if cost > remaining:
                    continue
                remaining -= cost
            chosen.append(hit)
        return hits + chosen

    def inject(self, messages: Sequence[Any], task: str | None = None) -> InjectionResult:
        t0 = time.perf_counter()
        query = self.build_query(messages, task)
        hits = self.select(query)
        text = self.bank.render(hits) if hits else ""
        return InjectionResult(text=text, hits=hits if text else [], query=query,
                               seconds=time.perf_counter() - t0)

    # -- message helpers ---------------------------------------------------------------------

    def inject_messages(self, messages: Sequence[BaseMessage], *, task: str | None = None,
                        system_prompt: str | None = None) -> list[BaseMessage]:
        """``messages`` with the skills in the system message (merged into an existing one)."""
        messages = list(messages)
        result = self.inject(messages, task)
        existing = messages[0] if messages and getattr(messages[0], "type", None) == "system" else None
        rest = messages[1:] if existing is not None else messages
        if system_prompt is not None:
            base: SystemMessage | None = SystemMessage(content=system_prompt)
            if existing is not None:
                base = merge_system_message(existing, message_text(base.content))
        else:
            base = existing
        if not result:
            return ([base] if base is not None else []) + rest
        merged = merge_system_message(base, result.text)
        merged.response_metadata = {**merged.response_metadata,
                                    INJECTION_METADATA_KEY: result.as_metadata()}
        return [merged, *rest]


def merge_system_message(system: SystemMessage | None, block: str) -> SystemMessage:
    """The user's system message with ``block`` appended; the original is left untouched."""
    if system is None:
        return SystemMessage(content=block)
    content = system.content
    if isinstance(content, str):
        new_content: Any = f"{content}\n\n{block}" if content else block
    else:
        new_content = [*content, {"type": "text", "text": "\n\n" + block}]
    return system.model_copy(update={"content": new_content,
                                     "response_metadata": dict(system.response_metadata)})


def injections_from_messages(messages: Sequence[Any]) -> list[tuple[str, int, float]]:
    """The injection record a :class:`SkillInjector` left on a system message, if any."""
    for message in messages:
        if getattr(message, "type", None) != "system":
            continue
        meta = (getattr(message, "response_metadata", None) or {}).get(INJECTION_METADATA_KEY)
        if meta:
            return [(m["skill_id"], int(m["version"]), float(m["score"]))
                    for m in sorted(meta, key=lambda m: m.get("rank", 0))]
    return []


def inject_skills(bank: Any, messages: Sequence[BaseMessage], *, task: str | None = None,
                  system_prompt: str | None = None, **options: Any) -> list[BaseMessage]:
    """Skills for this turn put into ``messages``' system message: for a custom graph's model node.

    ``options`` are :class:`SkillInjector`'s. Pass the returned list to the model; do not
    store it in the graph state. A :class:`~skillbank.adapters.callbacks.SkillBankCallbackHandler`
    watching the model call records which skill versions were injected.
    """
    injector = bank if isinstance(bank, SkillInjector) else SkillInjector(bank, **options)
    return injector.inject_messages(messages, task=task, system_prompt=system_prompt)
