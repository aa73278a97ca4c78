"""Choosing the skills for one model turn and putting them into the system message.

The retrieval query is the task plus the last ``history`` messages of the conversation, so what
is injected follows the run: a tool that just failed pulls in the guard skill about it. Each of
those texts is embedded once and the query is their weighted average (see ``query_vector``), so
a turn only embeds what is new. The result records every injected skill version with its rank
and score; that record is what the evolution loop groups trajectories by.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from operator import itemgetter
from dataclasses import dataclass, field
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Iterable, Sequence

import numpy as np
from langchain_core.messages import BaseMessage, SystemMessage

from skillbank.adapters._agent_runs import AgentRuns
from skillbank.adapters.config import InjectionConfig
from skillbank._config_keywords import with_options
from skillbank.adapters._reminders import ToolReminders
from skillbank.adapters._tools import tool_names
from skillbank.lessons import Example, LessonKind, sentence
from skillbank.live._config import LiveConfig
from skillbank.live._exposure import Arm, Exposure, ExposureDraw
from skillbank._lru import LRU
from skillbank.messages import first_human_text, message_text
from skillbank.models import Skill, SkillStatus
from skillbank.protocols import SkillSource, SolvedRequests
from skillbank.queries import ScoredHit, SkillHit, filter_hits
from skillbank.retrieval import ExampleChooser, TokenBudget, render, render_one

if TYPE_CHECKING:
    from langchain.agents.middleware import ModelRequest

__all__ = ["SkillInjector", "InjectionResult", "ShownCall", "SHOWN_CALL_KEY", "Block", "RunBlocks", "fits_toolset",
           "calls_no_tool", "tool_names",
           "merge_system_message", "skills_system_message", "inject_skills", "INJECTION_METADATA_KEY",
           "injections_from_messages"]

# Where an injected system message carries its record, for whoever records the model call (a
# callback handler, the recording middleware). response_metadata is never sent to a provider,
# unlike additional_kwargs for some integrations.
INJECTION_METADATA_KEY = "skillbank_injections"
# Where a model call's request state carries its ShownCall, for the parts inside the one that
# put it there.
SHOWN_CALL_KEY = "skillbank_shown_call"
_RANK = itemgetter("rank")
_MAKING_REMINDERS = threading.Lock()

# A turn's retrieval has a budget of a few milliseconds, and a MiniLM forward pass costs several
# milliseconds however short the text (it reads all 40 MB of weights), more for long texts. So the query is not one
# long text re-embedded every turn: it is the task and the gist of each recent message, each
# embedded once (cached) and averaged; a turn embeds only what is new, in one batch.
_TASK_CHARS = 200
_VECTOR_CACHE = 2048  # texts; a run re-reads its task and recent messages every turn
_JSON_NOISE = re.compile(r'[{}\[\]"\\,]+')
# Recorded requests the no-tool scope compares a query with: the newest runs that succeeded,
# enough to hold a few of each kind of request an agent sees; each is embedded once (cached).
_SOLVED_REQUESTS = 200


@dataclass
class InjectionResult:
    """What one turn injects: the rendered block and the skills in it, best first."""

    text: str
    hits: list[SkillHit] = field(default_factory=list)
    query: str = ""
    seconds: float = 0.0  # all of retrieval: embedding, search, rendering
    embed_seconds: float = 0.0  # the part spent embedding query texts
    # Randomized eligible skills first drawn this turn, shown or held back (skillbank.live), for
    # the recording to keep with the run.
    exposures: tuple[Exposure, ...] = ()

    @property
    def records(self) -> list[tuple[str, int, float]]:
        """``(skill_id, version, score)`` in rank order (rank = position)."""
        return [(h.skill.id, h.skill.version, float(h.score)) for h in self.hits]

    def as_metadata(self) -> list[dict[str, Any]]:
        """The record a system message carries (see :func:`injections_from_messages`). Built on
        every injected model call, so straight from the hits."""
        return [{"skill_id": h.skill.id, "version": h.skill.version, "rank": rank, "score": float(h.score),
                 "name": h.skill.content.name} for rank, h in enumerate(self.hits)]

    def __bool__(self) -> bool:
        return bool(self.text)


@dataclass
class ShownCall:
    """What one model call went out with, handed from the injection part to the recording part
    on the call's request state (under :data:`SHOWN_CALL_KEY`), whichever of them is outside.

    The outermost of them puts an empty one there (:meth:`of`); the injection part fills it
    before the model is called; the recording part reads it when the call has returned.
    """

    records: tuple[tuple[str, int, float], ...] | None = None  # (skill id, version, score); None: no injection part
    exposures: tuple[Exposure, ...] = ()  # randomized skills first drawn in this call
    system_added: bool = False  # the injection made the system message (the agent had none)

    @classmethod
    def of(cls, request: "ModelRequest") -> "tuple[ShownCall, ModelRequest]":
        """The call's record, and the request to hand on: the same one when its state already
        carries a record, else one whose state carries a new, empty record."""
        state = request.state
        found = state.get(SHOWN_CALL_KEY) if isinstance(state, Mapping) else None
        if isinstance(found, cls):
            return found, request
        shown = cls()
        handed: dict[str, Any] = {**(state or {}), SHOWN_CALL_KEY: shown}
        return shown, request.override(state=handed)  # type: ignore[arg-type]  # AgentState plus one key

    def clear(self) -> None:
        """Nothing was shown after all (a budget answered the call)."""
        self.records, self.exposures, self.system_added = None, (), False


def _role(message: BaseMessage) -> str:
    return {"human": "user", "ai": "assistant", "tool": "tool", "system": "system"}.get(
        getattr(message, "type", ""), getattr(message, "type", "message"))


def _describe(message: BaseMessage, limit: int) -> str:
    """A message's gist in at most ``limit`` characters, or "" if it adds nothing.

    An assistant message that only calls tools adds nothing of its own: each call shows up in
    its tool result's gist (``name failed: ...``), which is what retrieval should react to.
    Skipping it halves what a tool-calling turn has to embed.
    """
    kind = getattr(message, "type", None)
    text = message_text(message)
    if kind == "tool":
        # JSON punctuation costs tokens (and embedding time) and carries no meaning here.
        text = _JSON_NOISE.sub(" ", text)
    text = " ".join(text.split())
    if kind == "tool":
        name = getattr(message, "name", None) or "tool"
        status = " failed" if getattr(message, "status", None) == "error" else ""
        return f"{name}{status}: {text}"[:limit]
    if not text:
        return ""
    return f"{_role(message)}: {text}"[:limit]


def fits_toolset(skill: Skill, tools: Iterable[str] | None) -> bool:
    """Whether ``skill`` was learned with (some of) the tools the agent in front of it has.

    A learned skill records the tools its agents were offered (``toolset``): it fits when one of
    them is among ``tools``, so a car agent's guard never reaches a calendar agent. That counts
    a missing-tool guard too: its own tool is by definition absent, the tools it was learned
    beside are not. A skill without a recorded toolset (written by a person, or before toolsets
    were recorded) fits when it names no tool or one of ``tools``; a guard about a missing tool
    always does, and so does a skill whose every lesson is to call no tool: calling no tool is
    right or wrong by the request, not by the tools, so the injector scopes those by the request
    instead (see :meth:`SkillInjector.select`). ``tools`` ``None`` (not known): everything fits.
    """
    if tools is None or calls_no_tool(skill):
        return True
    have = set(tools)
    context = set(skill.content.toolset)
    if context:
        return bool(context & have)
    if any(x.kind == LessonKind.missing_tool for x in skill.content.lessons) or not skill.tools:
        return True
    return bool(set(skill.tools) & have)


def calls_no_tool(skill: Skill) -> bool:
    """Whether every lesson of ``skill`` is to call no tool (and it has at least one)."""
    lessons = skill.content.lessons
    return bool(lessons) and all(x.kind == LessonKind.no_tool for x in lessons)


@dataclass
class Block:
    """The skills one run has been shown so far, in the order they first went in.

    Passing the same block to every turn of a run keeps the injected text stable: a skill that
    was in stays in, in its place and at the version first shown, and a skill that becomes
    relevant later is appended. The system message then changes only when the selection really
    does, so a provider's prompt cache (or llama.cpp's KV cache) keeps the whole prefix.
    """

    hits: list[SkillHit] = field(default_factory=list)
    # The run's tool calls and the block's checkable lessons, for reminders at the tool
    # (InjectionConfig.reminders): they live as long as the block does, made when first asked for.
    _reminders: ToolReminders | None = field(default=None, repr=False)
    # The run's own id for the exposure draw, and each randomized eligible skill's arm, drawn on
    # the first turn it was eligible (skillbank.live); held-back skills never enter ``hits``.
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    exposures: dict[str, Exposure] = field(default_factory=dict)
    unrecorded: list[Exposure] = field(default_factory=list)

    @property
    def reminders(self) -> ToolReminders:
        """The run's reminders at the tool (made on first use: guidance asks for them after each
        model call, before the tool calls that share them)."""
        if self._reminders is None:
            with _MAKING_REMINDERS:  # a resumed run's parallel tool calls may ask at once
                if self._reminders is None:
                    self._reminders = ToolReminders()
        return self._reminders

    def ids(self) -> set[str]:
        return {h.skill.id for h in self.hits}

    def fork(self) -> "Block":
        """A copy a turn can grow and the run can drop (when a budget answers the turn): the
        same run id and reminders, its own hits and draws."""
        return Block(hits=list(self.hits), _reminders=self._reminders, run_id=self.run_id,
                     exposures=dict(self.exposures), unrecorded=list(self.unrecorded))

    def record(self) -> dict[str, Any]:
        """The block as plain data a LangGraph checkpointer can store: each skill as ``(id,
        version, score)``, the draws as rows, the run's calls as keys (see :meth:`restore`)."""
        record: dict[str, Any] = {
            "run_id": self.run_id,
            "hits": [[h.skill.id, h.skill.version, float(h.score)] for h in self.hits],
            "exposures": [[e.skill_id, e.version, e.arm.value, e.p_shown] for e in self.exposures.values()]}
        if self._reminders is not None:
            calls = self._reminders.calls
            record.update(tools=sorted(calls.tools), calls=[[tool, args, n] for (tool, args), n in calls.calls.items()],
                          reminded=[list(key) for key in sorted(calls.reminded)])
        return record

    @classmethod
    def restore(cls, record: Mapping[str, Any], skill_at: Callable[[str, int], Skill | None]) -> "Block":
        """The block :meth:`record` wrote, each skill read again at the version it was shown
        (``skill_at(id, version)``; a skill it returns ``None`` for is left out)."""
        block = cls(run_id=str(record["run_id"]))
        for skill_id, version, score in record.get("hits", ()):
            if (skill := skill_at(skill_id, int(version))) is not None:
                block.hits.append(SkillHit(skill, float(score)))
        for skill_id, version, arm, p_shown in record.get("exposures", ()):
            block.exposures[skill_id] = Exposure(skill_id, int(version), Arm(arm), float(p_shown))
        if "calls" not in record:
            return block
        calls = block.reminders.calls
        calls.tools.update(record.get("tools", ()))
        calls.calls.update({(tool, args): int(n) for tool, args, n in record.get("calls", ())})
        calls.reminded.update((skill_id, key) for skill_id, key in record.get("reminded", ()))
        return block

    def retrieved_floor(self, standing: set[str], k: int) -> float | None:
        """The score a newly retrieved skill must reach to join: none while the block holds
        fewer than ``k`` retrieved (not standing) skills, then the lowest of theirs (``k=0``:
        nothing is retrieved, so there is no floor)."""
        scores = [float(h.score) for h in self.hits if h.skill.id not in standing]
        return min(scores) if scores and len(scores) >= k else None


class RunBlocks(AgentRuns[Block]):
    """One stable :class:`Block` per graph run, for injectors that keep no per-run record of
    their own (``skillbank_prompt``, ``skillbank_hook``): the block of the graph run the calling
    node belongs to, dropped when that run ends.

    ``node_names`` are the nodes the injector runs inside (``"agent"`` for
    ``create_react_agent``'s prompt, ``"pre_model_hook"`` for its hook); outside them, or when the
    graph run cannot be seen, :meth:`current` is ``None`` and each turn selects afresh.
    """

    def __init__(self, *node_names: str):
        super().__init__(lambda state: Block(), node_names=node_names)


class SkillInjector:
    """Selects and renders skills for a turn, as an :class:`InjectionConfig` says.

    Pinned skills come first, then the general skills (tagged ``general``: lessons the bank
    generalised across tools, such as "ask instead of guessing"; they apply to any request and
    so go into every turn rather than being retrieved), then up to ``k`` retrieved for the
    turn's query; the whole block within ``token_budget``. Pinned and general skills are recorded
    with score 1.0.

    Args:
        bank: Any :class:`~skillbank.protocols.SkillSource`.
        config: What to inject (the defaults when ``None``); every option but ``k`` is set there.
        k: Retrieved skills per turn at most (``InjectionConfig.k``; ``None``: the config's).

    Raises:
        TypeError: an unknown keyword, or ``k`` given along with ``config``.
    """

    def __init__(self, bank: SkillSource, config: InjectionConfig | None = None, *, k: int | None = None):
        self.bank = bank
        self.config = with_options(config, InjectionConfig, owner="SkillInjector", argument="config",
                                   options={"k": k})
        self._standing_cache: tuple[int, tuple[list[Skill], list[Skill]]] | None = None
        # Canaries are drawn whatever the config; the standing holdout only when it asks.
        self._exposure = ExposureDraw(self.config.live or LiveConfig(holdout=0.0))
        self._lock = threading.Lock()
        self._vectors: LRU[str, np.ndarray] = LRU(_VECTOR_CACHE)  # text -> embedding
        self.cache_hits = 0
        self.cache_misses = 0
        self.embed_batches = 0

    # -- query -------------------------------------------------------------------------------

    def query_parts(self, messages: Sequence[BaseMessage], task: str | None = None) -> list[str]:
        """The texts a turn's query is made of: the task, then the gist of each of the last
        ``history`` non-system messages (at most ``message_chars`` each; tool-call-only assistant
        messages have none), oldest first."""
        history = self.config.history
        convo = [m for m in messages if getattr(m, "type", None) != "system"]
        task = self._task_text(convo, task)
        parts = [task] if task else []
        for message in (convo[-history:] if history > 0 else []):
            # The first human message usually is the task itself; do not count it twice.
            if getattr(message, "type", None) == "human" and \
                    " ".join(message_text(message).split())[:_TASK_CHARS] == task:
                continue
            line = _describe(message, self.config.message_chars)
            if line:
                parts.append(line)
        return parts

    @staticmethod
    def _task_text(convo: Sequence[BaseMessage], task: str | None) -> str:
        task = task if task is not None else first_human_text(convo)
        return " ".join((task or "").split())[:_TASK_CHARS]

    def build_query(self, messages: Sequence[BaseMessage], task: str | None = None) -> str:
        """The query as one text (what :meth:`query_parts` embeds, for display and debugging)."""
        return "\n".join(self.query_parts(messages, task))

    def _embed_parts(self, parts: Sequence[str]) -> list[np.ndarray]:
        """Vectors for ``parts``: cached ones from the cache, all new ones in one batch.

        One batch, because a MiniLM forward pass on a short text is bound by reading the
        weights, not by the text: two texts in one pass cost about what one costs.
        """
        cached = {t: self._vectors.get(t) for t in parts}
        found: dict[str, np.ndarray] = {t: v for t, v in cached.items() if v is not None}
        missing = [t for t in cached if t not in found]
        self.cache_hits += len(parts) - len(missing)
        if missing:
            self.cache_misses += len(missing)
            self.embed_batches += 1
            # Scrubbed before embedding, as SkillBank.search does; the cache (in memory only) is
            # keyed by the raw text so a cached text is not scrubbed again every turn.
            vectors = np.asarray(self.bank.embedder.embed([self.bank.scrubber(t) for t in missing]),
                                 dtype=np.float32)
            for t, v in zip(missing, vectors):
                found[t] = v
                self._vectors.put(t, v)
        return [found[t] for t in parts]

    def query_vector(self, parts: Sequence[str], *, task_first: bool = True) -> np.ndarray | None:
        """The task's embedding and the recent messages' (newer ones weigh more), averaged.

        The task (``parts[0]`` when ``task_first``) weighs as much as all the messages
        together: it says what the run is for; the messages say where it stands (a tool that
        just failed pulls in the guard for it).
        """
        if not parts:
            return None
        vectors = self._embed_parts(parts)
        if len(vectors) == 1:
            return vectors[0]
        task_vec, recent = (vectors[0], vectors[1:]) if task_first else (None, vectors)
        ramp = np.arange(1, len(recent) + 1, dtype=np.float32)
        combined = (ramp / ramp.sum()) @ np.stack(recent)
        if task_vec is not None:
            combined = 0.5 * task_vec + 0.5 * combined
        norm = float(np.linalg.norm(combined))
        return combined / norm if norm > 0 else vectors[0]

    # -- selection ---------------------------------------------------------------------------

    def standing(self) -> tuple[list[Skill], list[Skill]]:
        """The skills injected on every turn: the pinned ones and the general ones."""
        cfg = self.config
        general_k = cfg.standing_general_k
        if not cfg.pinned and general_k <= 0:
            return [], []
        seq = self.bank.skills.last_event_seq()
        with self._lock:
            if self._standing_cache and self._standing_cache[0] == seq:
                return self._standing_cache[1]
        pinned = []
        for ref in cfg.pinned:
            try:
                skill = self.bank.skills.get(ref)
            except Exception:
                continue  # a pinned skill that was deleted or renamed is simply not injected
            if skill.status == SkillStatus.active:
                pinned.append(skill)
        general: list[Skill] = []
        if general_k > 0:
            have = {s.id for s in pinned}
            allowed = filter_hits([ScoredHit(s, 1.0, None) for s in self.bank.general_skills()],
                                        exclude=have, kinds=cfg.kinds, tags=cfg.tags, tools=cfg.tools)
            general = [c.skill for c in allowed if self._allowed(c.skill)][:general_k]
        with self._lock:
            self._standing_cache = (seq, (pinned, general))
        return pinned, general

    def _allowed(self, skill: Skill) -> bool:
        if self.config.filter is None:
            return True
        try:
            return bool(self.config.filter(skill))
        except Exception:
            return False

    def select(self, query: str | np.ndarray | None, *, block: Block | None = None,
               tools: Sequence[str] | None = None, purposes: Sequence[str] | None = None,
               examples: ExampleChooser | None = None) -> list[SkillHit]:
        """The skills for a turn with ``query`` (a text or a query vector), in block order.

        Without a ``block``: pinned skills, general skills, then up to ``k`` retrieved, as far
        as the token budget allows. With one (a run's earlier turns): the block's skills as they
        were, then whichever of this turn's selection is new, appended. While the block holds
        fewer than ``k`` retrieved skills any of this turn's joins; once it holds ``k``, a
        newcomer must score at least as well as the weakest of them (it would have made the cut
        on the turn that filled the block), so a full block does not churn with every small
        change in the query. ``tools``: the agent's tool names, for ``match_toolset``;
        ``purposes``: what each of them is for (:func:`~skillbank.adapters._tools.tool_purposes`;
        the names when not given); ``examples``: the worked example each skill will be shown
        with, counted in its cost.

        A retrieved skill that only says to call no tool fits every toolset, so it is scoped by
        the request instead (:meth:`_asks_no_tool`): it goes in only when the query's nearest
        neighbour is on its side, so a small-talk lesson does not ride on every request
        (docs/decisions/0101-no-tool-lessons-scoped-by-request.md).
        """
        cfg = self.config
        pinned, general = self.standing()
        standing_ids = {s.id for s in pinned + general}
        kept = list(block.hits) if block is not None else []
        in_block = {h.skill.id for h in kept}
        floor = block.retrieved_floor(standing_ids, cfg.k) if block is not None else None
        budget = TokenBudget(cfg.block_token_budget)

        def shown(skill: Skill) -> str | None:  # the skill's block, when it differs from its default
            return render_one(skill, examples(skill)) if examples is not None else None

        for hit in kept:
            budget.spend(hit.skill, shown(hit.skill))  # already shown: stays, whatever it costs
        chosen: list[SkillHit] = []
        for skill in pinned:  # pinned: always in
            if skill.id not in in_block:
                budget.spend(skill, shown(skill))
                chosen.append(SkillHit(skill, 1.0))
        agent_tools = tools if cfg.match_toolset else None
        for skill in general:
            if skill.id not in in_block and fits_toolset(skill, agent_tools) and budget.take(skill, shown(skill)):
                chosen.append(SkillHit(skill, 1.0))
        if cfg.k > 0 and query is not None and not (isinstance(query, str) and not query.strip()):
            exclude = standing_ids | in_block | {h.skill.id for h in chosen}
            for hit in self._retrieve(query, exclude, agent_tools):
                if floor is not None and float(hit.score) < floor:
                    continue
                if agent_tools and calls_no_tool(hit.skill) and not self._asks_no_tool(
                        query, hit.skill, purposes if purposes is not None else agent_tools):
                    continue
                if budget.take(hit.skill, shown(hit.skill)):
                    chosen.append(hit)
        chosen = self._exposed(chosen, block, {s.id for s in pinned})
        if block is not None:
            block.hits.extend(chosen)
            return list(block.hits)
        return chosen

    def _exposed(self, chosen: list[SkillHit], block: Block | None, exempt: set[str]) -> list[SkillHit]:
        """``chosen`` without the randomized skills the run's draw holds back (skillbank.live).

        A skill's arm is drawn the first turn it is eligible and kept on the block, so a run
        sees one arm for its whole life; the draws new this turn wait in ``block.unrecorded``
        for :meth:`inject` to hand to the recording. Held-back skills never enter the block, so
        nothing that reads it (reminders, notes at the tool, examples) reaches them. ``exempt``
        (the config's pinned skills) are always shown; so is a skill the bank pins.
        """
        drawn = self._exposure.assign(block.run_id if block is not None else None,
                                      [h.skill for h in chosen if h.skill.id not in exempt])
        if not drawn:
            return chosen
        arms = {}
        for exposure in drawn:
            if block is not None:
                known = block.exposures.get(exposure.skill_id)
                if known is None:
                    block.exposures[exposure.skill_id] = known = exposure
                    block.unrecorded.append(exposure)
                exposure = known
            arms[exposure.skill_id] = exposure.arm
        return [h for h in chosen if arms.get(h.skill.id, "shown") == "shown"]

    def _asks_no_tool(self, query: str | np.ndarray, skill: Skill, purposes: Sequence[str]) -> bool:
        """Whether ``query``'s nearest neighbour is on the no-tool side: labelled texts on both.

        No tool: what ``skill`` says it is for (its description, its lessons' sentences) and the
        requests of recorded runs that succeeded without calling a tool. A tool: what each of
        ``purposes`` is for and the requests of recorded runs that succeeded with a call (the
        bank's :class:`~skillbank.protocols.SolvedRequests`, when it has them). A nearest
        neighbour, not a threshold, so it holds for any embedding model's scale; a tie leaves
        the lesson out.

        Why both sides hold requests: the embedder's similarity follows the subject, so small
        talk that names a tool's subject ("thanks for the forecast") is nearer that tool's
        purpose than the lesson's description, and a request for the tool
        ("when is high tide?") is nearer a learned "thanks for the tide times" than the tool's
        purpose. Against requests of both kinds, each is nearest its own kind.
        """
        solved = self.bank.solved_requests(_SOLVED_REQUESTS) if isinstance(self.bank, SolvedRequests) else []
        said = [skill.content.description or skill.content.name, *map(sentence, skill.content.lessons),
                *(r.text for r in solved if not r.called_tool)]
        tools = [*purposes, *(r.text for r in solved if r.called_tool)]
        texts = [*said, *tools] + ([query] if isinstance(query, str) else [])
        vectors = self._embed_parts(texts)
        target = vectors[-1] if isinstance(query, str) else query
        scores = [_cosine(target, v) for v in vectors[:len(said) + len(tools)]]
        return max(scores[:len(said)]) > max(scores[len(said):], default=-1.0)

    def _retrieve(self, query: str | np.ndarray, exclude: set[str],
                  tools: Sequence[str] | None) -> list[SkillHit]:
        """This turn's top ``k`` retrieved skills (after ``filter`` and the toolset), best first."""
        cfg = self.config
        accept = None
        if cfg.filter is not None or tools is not None:
            def accept(skill: Skill) -> bool:
                return self._allowed(skill) and fits_toolset(skill, tools)
        options: dict[str, Any] = dict(min_score=cfg.min_score, kinds=cfg.kinds, tags=cfg.tags, tools=cfg.tools,
                       exclude=exclude, accept=accept)
        if isinstance(query, str):
            return self.bank.search(query, cfg.k, **options)
        return self.bank.search_vector(query, cfg.k, **options)

    def inject(self, messages: Sequence[BaseMessage], task: str | None = None, *,
               block: Block | None = None, tools: Sequence[str] | None = None,
               purposes: Sequence[str] | None = None) -> InjectionResult:
        """The rendered block for a turn with ``messages``; ``block`` keeps it stable over a run,
        ``tools`` (the agent's tool names) keeps out skills learned with other tools, and with
        ``purposes`` (what each tool is for) scopes no-tool lessons (see :meth:`select`)."""
        t0 = time.perf_counter()
        parts = self.query_parts(messages, task)
        convo = [m for m in messages if getattr(m, "type", None) != "system"]
        task_first = bool(parts) and parts[0] == self._task_text(convo, task) != ""
        vector = self.query_vector(parts, task_first=task_first) if self.config.k > 0 else None
        t1 = time.perf_counter()
        chooser = self.example_chooser(parts[0] if task_first else None, vector) if self.config.examples else None
        hits = self.select(vector, block=block, tools=tools, purposes=purposes, examples=chooser)
        if not hits:
            text = ""
        else:
            text = render(hits, examples=chooser) if chooser is not None else self.bank.render(hits)
        exposures: tuple[Exposure, ...] = ()
        if block is not None and block.unrecorded:
            exposures, block.unrecorded[:] = tuple(block.unrecorded), []
        return InjectionResult(text=text, hits=hits if text else [], query="\n".join(parts),
                               seconds=time.perf_counter() - t0, embed_seconds=t1 - t0, exposures=exposures)

    def example_chooser(self, task: str | None, query: np.ndarray | None = None) -> ExampleChooser:
        """For each skill, the worked example whose request is most like ``task`` (cosine of
        their embeddings; ``query``, the turn's vector, when there is no task text).

        The task's vector is the one the turn's query was built from (a cache hit, no new
        embedding); each example's request is embedded once, on the first turn that shows its
        skill, and cached like every query text. A skill with one example needs no embedding.
        """
        target: list[np.ndarray | None] = []  # the task's vector, looked up once, when needed
        picked: dict[tuple[str, int], Example | None] = {}

        def choose(skill: Skill) -> Example | None:
            key = (skill.id, skill.version)
            if key in picked:
                return picked[key]
            pool = [e for lesson in skill.content.lessons for e in lesson.examples]
            best = pool[0] if pool else None
            if len(pool) > 1:
                if not target:
                    target.append(self._embed_parts([task])[0] if task else query)
                if target[0] is not None:
                    vectors = self._embed_parts([e.request for e in pool])
                    scores = [_cosine(target[0], v) for v in vectors]
                    best = pool[int(np.argmax(scores))]
            picked[key] = best
            return best

        return choose

    # -- message helpers ---------------------------------------------------------------------

    def inject_messages(self, messages: Sequence[BaseMessage], *, task: str | None = None,
                        system_prompt: str | None = None, block: Block | None = None) -> list[BaseMessage]:
        """``messages`` with the skills in the system message (merged into an existing one)."""
        messages = list(messages)
        result = self.inject(messages, task, block=block)
        first = messages[0] if messages else None
        existing = first if isinstance(first, SystemMessage) and first.type == "system" else None
        rest = messages[1:] if existing is not None else messages
        if system_prompt is not None:
            base: SystemMessage | None = SystemMessage(content=system_prompt)
            if existing is not None:
                base = merge_system_message(existing, system_prompt)
        else:
            base = existing
        if not result:
            return ([base] if base is not None else []) + rest
        return [skills_system_message(base, result), *rest]


def _cosine(a: np.ndarray, b: np.ndarray) -> float:
    norm = float(np.linalg.norm(a) * np.linalg.norm(b))
    return float(np.dot(a, b)) / norm if norm > 0 else 0.0


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


def skills_system_message(system: SystemMessage | None, result: InjectionResult) -> SystemMessage:
    """The system message with ``result``'s block appended and its record attached (see
    :func:`injections_from_messages`): what the model call is made with."""
    merged = merge_system_message(system, result.text)
    merged.response_metadata[INJECTION_METADATA_KEY] = result.as_metadata()  # the copy's own dict
    return merged


def injections_from_messages(messages: Sequence[BaseMessage]) -> list[tuple[str, int, float]]:
    """The injection record a :class:`SkillInjector` left on a system message, if any."""
    for message in messages:
        if getattr(message, "type", None) != "system":
            continue
        meta = (getattr(message, "response_metadata", None) or {}).get(INJECTION_METADATA_KEY)
        if meta:
            return [(m["skill_id"], int(m["version"]), float(m["score"])) for m in sorted(meta, key=_RANK)]
    return []


def inject_skills(bank: SkillSource | SkillInjector, messages: Sequence[BaseMessage], *, task: str | None = None,
                  system_prompt: str | None = None, block: Block | None = None,
                  injection: InjectionConfig | None = None, k: int | None = None) -> list[BaseMessage]:
    """Skills for this turn put into ``messages``' system message: for a custom graph's model node.

    ``bank`` may be a :class:`SkillInjector` (reuse one: it caches query embeddings);
    ``injection`` (an :class:`InjectionConfig`) and ``k`` configure a new one (as
    :class:`SkillInjector` takes them; given with an injector, they are an error). Pass the same
    ``block`` on every turn of a run to keep the injected text stable (prompt caches stay warm).
    Pass the returned list to the model; do not store it in the graph state. A
    :class:`~skillbank.adapters.callbacks.SkillBankCallbackHandler` watching the model call
    records which skill versions were injected.

    Args:
        bank: A :class:`~skillbank.protocols.SkillSource` (a bank), or a :class:`SkillInjector`.
        messages: The conversation the model is about to get.
        task: The text retrieval starts from; ``None``: the first human message's.
        system_prompt: A system prompt to put first (merged into the conversation's own leading
            system message, if any); ``None``: the conversation's own, if any.
        block: The run's :class:`Block`, the same object on every turn; ``None``: a fresh
            selection each turn.
        injection: The options of a new injector; ``None``: the defaults (with ``k``).
        k: Retrieved skills per turn at most (``InjectionConfig.k``); ``None``: the config's.

    Returns:
        The messages with one leading system message holding the prompt and the skills (the
        input messages are not changed); without skills to inject, the prompt and messages.

    Raises:
        TypeError: ``injection`` or ``k`` given with a :class:`SkillInjector`, ``k`` given with
            ``injection``, or an option ``InjectionConfig`` does not accept.
    """
    if isinstance(bank, SkillInjector):
        if injection is not None or k is not None:
            raise TypeError("inject_skills got a SkillInjector and injection= or k=: the injector's own "
                            "config applies; configure the injector instead")
        injector = bank
    else:
        injector = SkillInjector(bank, with_options(injection, InjectionConfig, owner="inject_skills",
                                                    argument="injection", options={"k": k}))
    return injector.inject_messages(messages, task=task, system_prompt=system_prompt, block=block)

