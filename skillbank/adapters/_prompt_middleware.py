"""``SkillPromptMiddleware``: the bank's skills in the system message of every model call.

One concern, what the agent is shown. Per model call it puts the turn's skills into the system
message: a block that stays the same through the run unless a new skill becomes relevant (so a
prompt cache keeps the whole prefix; see :class:`~skillbank.adapters.injection.SkillInjector`),
with the injection's record attached to that system message (for a recorder that reads messages,
:func:`~skillbank.adapters.injection.injections_from_messages`) and to the call's
:class:`~skillbank.adapters.injection.ShownCall` (for the recording part, wherever it sits). A
model call a run budget answers shows nothing: what the turn added is dropped. It writes nothing
to the bank and never touches a tool call.

What a run was shown (:class:`RunSkills`) is the run's, in the agent's state: a private channel
(``skillbank_shown``, one entry per prompt part) that each model call writes as plain data, so a
checkpointer keeps it and a run resumed after an ``interrupt()`` (in this process or another)
goes on with the same block, the same exposure draw and the same call history. This process
keeps the live form of each run it has seen (bounded: a run it no longer holds is read back from
its record, each skill at the version first shown). The guidance part
(:class:`~skillbank.adapters._guidance_middleware.SkillGuidanceMiddleware`) checks calls and
replies against it. :attr:`SkillPromptMiddleware.injected` counts, per skill, the model calls it
went into and the answers guidance gave with it (its reach, as the evolution gate reads it).

It costs the agent no step: it works only inside ``wrap_model_call`` (and its async twin).
"""

from __future__ import annotations

import asyncio
import logging
import threading
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Any, Awaitable, NotRequired

from langchain.agents.middleware import (AgentMiddleware, AgentState, ExtendedModelResponse, ModelCallResult,
                                         ModelRequest, ModelResponse)
from langchain.agents.middleware.types import PrivateStateAttr
from langchain_core.messages import AIMessage
from langgraph.channels.untracked_value import UntrackedValue
from langgraph.types import Command

from skillbank._lru import LRU
from skillbank.adapters.config import InjectionConfig
from skillbank.adapters.injection import Block, InjectionResult, ShownCall, SkillInjector, skills_system_message
from skillbank.adapters.limits import BUDGET_STOP_KEY
from skillbank.adapters._tools import tool_names, tool_purposes
from skillbank.messages import first_human_text, last_message, response_message, state_messages
from skillbank.errors import VersionNotFoundError
from skillbank.models import Skill
from skillbank.protocols import SkillSource

__all__ = ["SkillPromptMiddleware", "SkillPromptState", "RunSkills", "SHOWN_KEY", "INVOKED_KEY", "newest_human",
           "answered_by_budget"]

log = logging.getLogger("skillbank.adapters")

# The state channel: prompt part's name -> its RunSkills.record().
SHOWN_KEY = "skillbank_shown"
# Set by every model call, never checkpointed: a state without it is a new graph run's (a new
# agent run, or one resumed after a pause).
INVOKED_KEY = "skillbank_invoked"
# Runs whose live form this process keeps (one read back from its record when it is gone).
_LIVE_RUNS = 2048


def _by_part(old: Mapping[str, Any] | None, new: Mapping[str, Any] | None) -> dict[str, Any]:
    """The channel's reducer: each prompt part's newest record (two parts may write in one step)."""
    return {**(old or {}), **(new or {})}


class SkillPromptState(AgentState):
    """The agent state with what each run was shown: private (never in the agent's input or
    output), checkpointed with the rest of the state, and a mark of the graph run in progress."""

    skillbank_shown: NotRequired[Annotated[dict[str, Any], PrivateStateAttr, _by_part]]
    skillbank_invoked: NotRequired[Annotated[bool, UntrackedValue(bool, guard=False), PrivateStateAttr]]


def newest_human(messages: list[Any]) -> str:
    """The id of the newest human message ("" when there is none, or it has no id)."""
    return str(getattr(last_message(messages, "human"), "id", None) or "")


def answered_by_budget(response: Any) -> bool:
    """Whether a run budget answered the model call instead of the model (its final message)."""
    message = response_message(response)
    return message is not None and BUDGET_STOP_KEY in (message.response_metadata or {})


@dataclass
class RunSkills:
    """What one run has been shown: its skills block, and which of its skills reached the model."""

    task: str  # what the run is about: its newest human message when it started
    block: Block = field(default_factory=Block)
    answer_reminded: bool = False  # a reply was asked again (once per run)
    # Skills of the block the model was shown: in the prompt, or by a reminder at the tool.
    reached: set[str] = field(default_factory=set)
    human: str = ""  # the newest human message's id at the run's latest model call

    def record(self) -> dict[str, Any]:
        """The run as plain data a LangGraph checkpointer can store (see :meth:`restore`)."""
        return {"human": self.human, "task": self.task, "answer_reminded": self.answer_reminded,
                "reached": sorted(self.reached), "block": self.block.record()}

    @classmethod
    def restore(cls, record: Mapping[str, Any], skill_at: Callable[[str, int], Skill | None]) -> "RunSkills":
        """The run :meth:`record` wrote, its skills read again with ``skill_at(id, version)``."""
        return cls(str(record["task"]), Block.restore(record["block"], skill_at),
                   bool(record.get("answer_reminded")), set(record.get("reached", ())), str(record.get("human", "")))


class SkillPromptMiddleware(AgentMiddleware[SkillPromptState]):
    """Puts the bank's relevant skills into each model call's system message.

    Args:
        bank: Any :class:`~skillbank.protocols.SkillSource` (a ``SkillBank``, the gate's
            ``CandidateView``).
        config: What to inject (:class:`~skillbank.adapters.config.InjectionConfig`; the
            defaults when ``None``).

    One instance serves many runs at once. A retrieval that fails is logged and that turn runs
    without skills.
    """

    state_schema = SkillPromptState

    def __init__(self, bank: SkillSource, config: InjectionConfig | None = None):
        super().__init__()
        self.bank = bank
        self.injector = SkillInjector(bank, config)
        self.config: InjectionConfig = self.injector.config
        self.injected: Counter[str] = Counter()  # skill id -> model calls it went into, answers given with it
        self.model_calls = 0  # every model call it wrapped, with skills or without
        self.retrieval_seconds = 0.0  # all retrieval so far (embedding, search, rendering)
        # ("run", run id) -> the run's live form; ("human", message id) while its first call is out
        self._live: LRU[tuple[str, str], RunSkills] = LRU(_LIVE_RUNS)
        self._lock = threading.Lock()

    def run_skills(self, state: Any) -> RunSkills | None:
        """What the run whose agent state is ``state`` has been shown so far (``None`` before its
        first model call, or outside an agent's state).

        The state's record is the run's while its graph run goes on (the state carries the mark
        every model call sets), and in a graph run that resumes it: one that starts from the
        newest human message the record saw (a resume adds none; the thread's next run does)."""
        if not isinstance(state, Mapping):
            return None
        return self._run_of(state, newest_human(state_messages(state)))

    def _run_of(self, state: Mapping[str, Any], human: str) -> RunSkills | None:
        record = (state.get(SHOWN_KEY) or {}).get(self.name)
        if not record or not (state.get(INVOKED_KEY) or record.get("human") == human):
            return self._live.get(("human", human)) if human else None  # its first model call is under way
        run_id = record["block"]["run_id"]
        live = self._live.get(("run", run_id))
        if live is None:
            with self._lock:  # a run resumed in a process that never saw it: parallel tool calls share one
                live = self._live.get(("run", run_id))
                if live is None:
                    live = RunSkills.restore(record, self._skill_at)
                    self._live.put(("run", run_id), live)
        return live

    def _skill_at(self, skill_id: str, version: int) -> Skill | None:
        """The skill as it was at ``version`` (left out when it is gone from the bank)."""
        try:
            skill = self.bank.skills.get(skill_id)
            if skill.version == version:
                return skill
            at = getattr(self.bank, "version", None)
            if at is None:
                return skill
            old = at(skill_id, version)
            return skill.model_copy(update={"version": old.version, "content": old.content})
        except (LookupError, VersionNotFoundError):  # deleted, or its history pruned
            return None

    def reach(self, run: RunSkills | None, *skill_ids: str) -> None:
        """``skill_ids`` reached the model (in the prompt, or by guidance): counted, and kept as the run's."""
        with self._lock:
            self.injected.update(skill_ids)
        if run is not None:
            run.reached.update(skill_ids)

    # -- one model call ------------------------------------------------------------------------

    def _run_for(self, request: ModelRequest) -> RunSkills:
        state = request.state if isinstance(request.state, Mapping) else {}
        messages = state_messages(state)
        human = newest_human(messages)
        run = self._run_of(state, human)
        if run is None:
            run = RunSkills(first_human_text(messages, last=True), human=human)
            self._live.put(("run", run.block.run_id), run)
            if human:
                self._live.put(("human", human), run)
        run.human = human
        return run

    def _retrieve(self, request: ModelRequest, run: RunSkills, block: Block) -> InjectionResult | None:
        """The turn's skills, grown into ``block`` (``None`` when retrieval failed: the agent must
        not go down with it)."""
        try:
            return self.injector.inject(request.messages, task=run.task, block=block,
                                        tools=tool_names(request.tools), purposes=tool_purposes(request.tools))
        except Exception:
            log.warning("skillbank: skill retrieval failed; this turn runs without skills", exc_info=True)
            return None

    def _show(self, run: RunSkills, block: Block, request: ModelRequest,
              result: InjectionResult | None) -> tuple[ModelRequest, "_Turn"]:
        """The request with the turn's skills, the turn made the run's (undone by :meth:`_done`
        when a budget answers the call instead of the model)."""
        shown, request = ShownCall.of(request)
        turn = _Turn(run, run.block, set(run.reached), shown)
        if result is None:
            return request, turn
        with self._lock:
            self.retrieval_seconds += result.seconds
        run.block = block
        turn.ids = tuple(h.skill.id for h in result.hits)
        run.reached.update(turn.ids)
        shown.exposures = result.exposures
        if not result:
            shown.records = ()
            return request, turn
        shown.records = tuple(result.records)
        shown.system_added = request.system_message is None
        return request.override(system_message=skills_system_message(request.system_message, result)), turn

    def _done(self, turn: "_Turn", response: Any) -> ModelCallResult:
        """The model's response, with the run's record for the state; when a budget answered the
        call instead, the response alone and the turn undone (the model saw nothing)."""
        run = turn.run
        if answered_by_budget(response):
            run.block, run.reached = turn.block, turn.reached
            turn.shown.clear()
            return response
        with self._lock:
            self.model_calls += 1
            self.injected.update(turn.ids)
        if isinstance(response, AIMessage):
            response = ModelResponse(result=[response])
        update = {SHOWN_KEY: {self.name: run.record()}, INVOKED_KEY: True}
        return ExtendedModelResponse(model_response=response, command=Command(update=update))

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> ModelCallResult:
        run = self._run_for(request)
        block = run.block.fork()
        request, turn = self._show(run, block, request, self._retrieve(request, run, block))
        return self._done(turn, handler(request))

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelCallResult:
        run = self._run_for(request)
        block = run.block.fork()
        # Embedding the query is CPU work: keep it off the event loop.
        result = await asyncio.to_thread(self._retrieve, request, run, block)
        request, turn = self._show(run, block, request, result)
        return self._done(turn, await handler(request))


@dataclass
class _Turn:
    """One model call's change to its run, kept until the call returns (to undo it when a
    budget answered the call)."""

    run: RunSkills
    block: Block  # the run's block before the turn
    reached: set[str]  # the run's reached skills before the turn
    shown: ShownCall
    ids: tuple[str, ...] = ()  # the skills the turn showed (counted as reach)
