"""``SkillBankMiddleware``: skills in, trajectories out, for ``langchain.agents.create_agent``.

    agent = create_agent(model, tools, system_prompt="...",
                         middleware=[SkillBankMiddleware(bank, k=5, verifier=my_check)])
    result = agent.invoke({"messages": [("user", "turn on the AC")]})
    bank.trajectories.get(result["skillbank_trajectory_id"])

Per model turn the middleware retrieves skills for the task and the recent conversation, appends
the rendered block to the system message (the user's own prompt stays first) and records which
skill versions went in, with rank and score. It records every model turn and tool call, and every
limit the run runs into, from the real signal: the exception, the error ``ToolMessage`` LangGraph
wrote, or the message a limit middleware appended. It can enforce a token and a wall-clock budget
itself, ending the run with a final message instead of an error.

Per-run state lives under the trajectory id that ``before_agent`` puts into the graph state, so
concurrent runs of one agent (threads, asyncio tasks, ``batch``) never mix.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import threading
from collections import deque
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Sequence

from typing_extensions import NotRequired  # typing.NotRequired is 3.11+
from uuid import UUID

from langchain.agents.middleware import AgentMiddleware, AgentState, hook_config
from langchain_core.messages import AIMessage, ToolMessage

from skillbank.adapters._watch import watcher as _get_watcher
from skillbank.adapters.callbacks import SkillBankCallbackHandler
from skillbank.adapters.injection import GENERAL_K, SkillInjector, merge_system_message
from skillbank.adapters.limits import (
    Detectors,
    LimitSignal,
    detect_refusal,
    find_unknown_fields,
    is_interrupt,
    limit_from_message,
    unknown_parameters,
)
from skillbank.adapters.recorder import (
    TrajectoryRecorder,
    first_human_text,
    message_text,
    model_name_of,
)
from skillbank.models import LimitType, Skill

__all__ = ["SkillBankMiddleware", "SkillBankState", "TRAJECTORY_KEY"]

log = logging.getLogger("skillbank.adapters")

TRAJECTORY_KEY = "skillbank_trajectory_id"
_DEFAULT = object()


class SkillBankState(AgentState):
    """Adds the run's trajectory id to the agent state (and so to ``invoke``'s result)."""

    skillbank_trajectory_id: NotRequired[str | None]


@dataclass
class _Run:
    recorder: TrajectoryRecorder
    task: str
    seen: set[str] = field(default_factory=set)
    graph_run: UUID | None = None
    retrieval_seconds: float = 0.0


def _last_ai(messages: Sequence[Any]) -> Any:
    for message in reversed(messages):
        if getattr(message, "type", None) == "ai":
            return message
    return None


def _response_message(response: Any) -> Any:
    """The AIMessage inside whatever a model handler returned."""
    for _ in range(3):
        if isinstance(response, AIMessage):
            return response
        inner = getattr(response, "model_response", None)
        if inner is not None:
            response = inner
            continue
        result = getattr(response, "result", None)
        if isinstance(result, list):
            return _last_ai(result)
        return None
    return None


def _tool_message(result: Any) -> Any:
    if isinstance(result, ToolMessage):
        return result
    update = getattr(result, "update", None)  # a Command from a tool
    if isinstance(update, dict):
        for message in update.get("messages") or ():
            if isinstance(message, ToolMessage):
                return message
    return result


class SkillBankMiddleware(AgentMiddleware):
    """Injects skills per model turn and records the run as a trajectory.

    Retrieval: ``k`` skills at most within ``token_budget`` tokens, chosen from the task and the
    last ``history`` messages (the gist of each, ``message_chars`` at most: embedding cost grows
    with length; each text is embedded once and the vectors averaged); ``pinned`` skills (ids or
    names) always go first, then up to ``general_k`` general skills (lessons generalised across
    tools, injected on every turn; see :class:`~skillbank.adapters.injection.SkillInjector`);
    ``kinds``, ``tags``, ``tools``, ``min_score`` and ``filter(skill) -> bool`` narrow the choice.
    ``inject=False`` only records.

    Outcome: ``verifier(final_state)`` returning a bool, a score in [0, 1] or an ``Outcome``
    (an :class:`~skillbank.adapters.judge.LLMJudge` works too, as ``verifier`` or ``judge``).
    Without one the trajectory is stored unlabelled; label it later with
    ``bank.record_outcome(trajectory_id, ...)``.

    Budgets: ``max_tokens_per_run`` (input + output tokens the model reported) and
    ``max_seconds_per_run`` end the run gracefully before the next model call, with a final
    message saying so, and record a ``token_budget`` / ``time_budget`` limit event.

    Privacy: ``scrubber`` (default ``bank.scrubber``) is applied to every text stored.
    Detectors: ``unknown_field_detector(text)`` and ``refusal_detector(text)`` replace the
    defaults; pass ``None`` to switch one off.

    Per-run labels: put ``skillbank_task_id``, ``skillbank_task_type`` or ``skillbank_labels``
    in the invocation's ``config["metadata"]``.
    """

    state_schema = SkillBankState

    def __init__(
        self,
        bank: Any,
        *,
        k: int = 5,
        token_budget: int | None = 1200,
        history: int = 4,
        inject: bool = True,
        pinned: Iterable[str] = (),
        general_k: int = GENERAL_K,
        filter: Callable[[Skill], bool] | None = None,
        kinds: Sequence[str] | None = None,
        tags: Sequence[str] | None = None,
        tools: Sequence[str] | None = None,
        min_score: float = 0.0,
        verifier: Callable[[dict[str, Any]], Any] | None = None,
        judge: Any = None,
        scrubber: Callable[[str], str] | None = None,
        max_tokens_per_run: int | None = None,
        max_seconds_per_run: float | None = None,
        unknown_field_detector: Callable[[str], Any] | None | object = _DEFAULT,
        refusal_detector: Callable[[str], Any] | None | object = _DEFAULT,
        labels: dict[str, str] | None = None,
        task_type: str | None = None,
        model_name: str | None = None,
        flush_every: int = 1,
        message_chars: int = 100,
    ):
        super().__init__()
        self.bank = bank
        self.inject = inject
        self.injector = SkillInjector(bank, k=k, token_budget=token_budget, history=history,
                                      min_score=min_score, pinned=pinned, general_k=general_k, filter=filter,
                                      kinds=kinds, tags=tags, tools=tools, message_chars=message_chars)
        self.verifier = verifier
        self.judge = judge
        self.scrubber = scrubber
        self.max_tokens_per_run = max_tokens_per_run
        self.max_seconds_per_run = max_seconds_per_run
        self.detectors = Detectors(
            unknown_fields=find_unknown_fields if unknown_field_detector is _DEFAULT else unknown_field_detector,  # type: ignore[arg-type]
            refusal=detect_refusal if refusal_detector is _DEFAULT else refusal_detector,  # type: ignore[arg-type]
        )
        self.labels = dict(labels or {})
        self.task_type = task_type
        self.model_name = model_name
        self.flush_every = flush_every
        self.last_trajectory_id: str | None = None
        # The runs this middleware started, oldest first (the latest 10,000).
        self.trajectory_ids: deque[str] = deque(maxlen=10_000)
        self._runs: dict[str, _Run] = {}
        self._lock = threading.Lock()
        # Time spent in retrieval and in the recorder, for overhead reports.
        self.retrieval_seconds = 0.0
        self._closed_write_seconds = 0.0
        self._watcher = _get_watcher()
        if self._watcher is not None:
            self._watcher.add_node_names(f"{self.name}.before_agent", f"{self.name}.before_model")

    # -- per-run state -----------------------------------------------------------------------

    @property
    def logging_seconds(self) -> float:
        """Seconds spent writing trajectories so far (all runs of this middleware)."""
        with self._lock:
            return self._closed_write_seconds + sum(r.recorder.write_seconds for r in self._runs.values())

    def recorder(self, trajectory_id: str) -> TrajectoryRecorder | None:
        """The live recorder of a running trajectory (``None`` once it has finished)."""
        with self._lock:
            run = self._runs.get(trajectory_id)
        return run.recorder if run else None

    def _run_for(self, state: Any) -> _Run | None:
        tid = state.get(TRAJECTORY_KEY) if isinstance(state, dict) else getattr(state, TRAJECTORY_KEY, None)
        if not tid:
            return None
        with self._lock:
            run = self._runs.get(tid)
        return run if run is not None else self._reattach(tid, state)

    def _reattach(self, tid: str, state: Any) -> _Run | None:
        # A run resumed after an interrupt in a new process: continue its trajectory.
        try:
            traj = self.bank.trajectories.get(tid)
        except Exception:
            return None
        if traj.status != "running":
            return None
        recorder = TrajectoryRecorder(
            self.bank, task=traj.task, trajectory_id=tid, model=traj.model, scrubber=self.scrubber,
            detectors=self.detectors, snapshot=traj.bank_snapshot, flush_every=self.flush_every,
            resume_index=max((s.index for s in traj.steps), default=-1) + 1,
        )
        run = _Run(recorder, traj.task, seen={m.id for m in state.get("messages", []) if getattr(m, "id", None)})
        with self._lock:
            run = self._runs.setdefault(tid, run)
        return run

    def _start(self, state: Any) -> dict[str, Any]:
        messages = state.get("messages", [])
        metadata = self._metadata()
        labels = {**self.labels, **{str(k): str(v) for k, v in (metadata.get("skillbank_labels") or {}).items()}}
        # On a thread with history the newest human message is what this run is about.
        task = first_human_text(messages, last=True)
        recorder = TrajectoryRecorder(
            self.bank, task=task, model=self.model_name, task_id=metadata.get("skillbank_task_id"),
            task_type=metadata.get("skillbank_task_type") or self.task_type, labels=labels,
            scrubber=self.scrubber, detectors=self.detectors, flush_every=self.flush_every,
        )
        run = _Run(recorder, task, seen={m.id for m in messages if getattr(m, "id", None)})
        with self._lock:
            self._runs[recorder.id] = run
            self.last_trajectory_id = recorder.id
            self.trajectory_ids.append(recorder.id)
        # The row exists from now on: a process killed at any later point leaves it 'running'.
        recorder.start()
        self._link(run)
        return {TRAJECTORY_KEY: recorder.id}

    @staticmethod
    def _metadata() -> dict[str, Any]:
        try:
            from langgraph.config import get_config

            return dict(get_config().get("metadata") or {})
        except Exception:
            return {}

    def _link(self, run: _Run) -> None:
        """Called from each node hook: on the first in a graph run (a start, a resume), claim it."""
        if run.graph_run is not None:
            return
        self._claim(run)
        if self._watcher is not None:
            graph_run = self._watcher.current_graph_run()
            if graph_run is not None:
                run.graph_run = graph_run
                self._watcher.watch(graph_run, self, run.recorder.id)

    def _claim(self, run: _Run) -> None:
        # A SkillBankCallbackHandler on this bank in the same run's callbacks would record the
        # run a second time, less precisely: tell it this graph run is ours. The handlers this
        # node's callback manager carries are exactly the ones that see this run.
        try:
            from langgraph.config import get_config

            callbacks = get_config().get("callbacks")
        except Exception:
            return
        node_run = getattr(callbacks, "parent_run_id", None)
        if node_run is None:
            return
        for handler in getattr(callbacks, "handlers", None) or ():
            if isinstance(handler, SkillBankCallbackHandler) and _same_bank(handler.bank, self.bank):
                try:
                    handler.leave(node_run, run.recorder.id)
                except Exception:
                    log.warning("skillbank: could not tell a callback handler to leave this run", exc_info=True)

    def _release(self, run: _Run) -> None:
        with self._lock:
            self._runs.pop(run.recorder.id, None)
            self._closed_write_seconds += run.recorder.write_seconds
        if self._watcher is not None:
            self._watcher.unwatch(run.graph_run, run.recorder.id)

    # GraphListener: the graph run ended without after_agent (an interrupt) or raised.
    def graph_ended(self, key: str, outputs: Any) -> None:
        with self._lock:
            run = self._runs.get(key)
        if run is None or run.recorder.closed:
            return
        run.graph_run = None
        # A completed run always passes through after_agent, which closes the trajectory; a
        # graph that ends with it still open was interrupted (interrupt(), interrupt_before/
        # after) and continues, in this trajectory, when it is resumed.
        run.recorder.flush()

    def graph_failed(self, key: str, error: BaseException) -> None:
        with self._lock:
            run = self._runs.get(key)
        if run is None:
            return
        run.graph_run = None
        if is_interrupt(error):  # a subgraph agent pausing for input: it will resume
            run.recorder.flush()
            return
        run.recorder.fail(error)
        self._release(run)

    # -- shared hook bodies ------------------------------------------------------------------

    def _scan(self, run: _Run, messages: Sequence[Any]) -> None:
        """Record limits announced by messages other components appended since the last look."""
        fresh = []
        for message in reversed(messages):
            mid = getattr(message, "id", None)
            if mid is not None and mid in run.seen:
                break
            fresh.append(message)
        # One limit announces itself in several messages (ToolCallLimitMiddleware writes an error
        # ToolMessage per blocked call and a final AIMessage): one event per limit type per look,
        # with the most specific detail (the final message's) and the tool name if any gave it.
        found: dict[LimitType, LimitSignal] = {}
        for message in reversed(fresh):
            if getattr(message, "id", None) is not None:
                run.seen.add(message.id)
            signal = limit_from_message(message)
            if signal is not None:
                earlier = found.get(signal.type)
                tool = signal.tool or (earlier.tool if earlier else None)
                found[signal.type] = LimitSignal(signal.type, signal.detail, tool)
        for signal in found.values():
            run.recorder.add_limit(signal)

    def _budget_stop(self, run: _Run) -> dict[str, Any] | None:
        recorder = run.recorder
        signal = None
        if self.max_tokens_per_run is not None and recorder.total_tokens > self.max_tokens_per_run:
            used, budget = recorder.total_tokens, self.max_tokens_per_run
            signal = LimitSignal(LimitType.token_budget, f"token budget exceeded: {used} tokens used, budget {budget}")
            text = (f"Stopped before finishing: this run used {used} tokens, over its budget of "
                    f"{budget} tokens.")
            data = {"used": used, "budget": budget}
        elif self.max_seconds_per_run is not None and recorder.elapsed > self.max_seconds_per_run:
            used_s, budget_s = round(recorder.elapsed, 3), self.max_seconds_per_run
            signal = LimitSignal(LimitType.time_budget, f"time budget exceeded: {used_s}s elapsed, budget {budget_s}s")
            text = (f"Stopped before finishing: this run took {used_s} seconds, over its time budget "
                    f"of {budget_s} seconds.")
            data = {"used_seconds": used_s, "budget_seconds": budget_s}
        if signal is None:
            return None
        recorder.add_limit(signal, data=data)
        message = AIMessage(content=text, id=f"skillbank-stop-{recorder.id}",
                            response_metadata={"skillbank_stop": signal.type.value})
        run.seen.add(message.id)
        return {"jump_to": "end", "messages": [message]}

    def _before_model(self, state: Any) -> dict[str, Any] | None:
        run = self._run_for(state)
        if run is None:
            return None
        self._link(run)
        self._scan(run, state.get("messages", []))
        return self._budget_stop(run)

    def _prepare_call(self, run: _Run, request: Any, injection: Any) -> tuple[Any, Any]:
        recorder = run.recorder
        recorder.set_model(model_name_of(request.model))
        records: Sequence[tuple[str, int, float]] = ()
        if injection is not None:
            run.retrieval_seconds += injection.seconds
            with self._lock:
                self.retrieval_seconds += injection.seconds
            if injection:
                request = request.override(system_message=merge_system_message(request.system_message, injection.text))
                records = injection.records
        n_in = len(request.messages) + (1 if request.system_message is not None else 0)
        return request, recorder.begin_model(n_in, records)

    def _safe_inject(self, run: _Run, messages: Sequence[Any]) -> Any:
        try:
            return self.injector.inject(messages, task=run.task)
        except Exception:
            # Retrieval failing must not take the agent down: run this turn without skills.
            log.warning("skillbank: skill retrieval failed; this turn runs without skills", exc_info=True)
            return None

    def _model_done(self, run: _Run, turn: Any, response: Any) -> None:
        run.recorder.end_model(turn, _response_message(response))

    def _model_failed(self, run: _Run, turn: Any, error: BaseException) -> None:
        run.recorder.end_model(turn, error=error)
        if run.graph_run is None and not is_interrupt(error):  # nobody else will close it
            run.recorder.fail(error)
            self._release(run)

    def _tool_done(self, run: _Run, turn: Any, request: Any, result: Any) -> None:
        message = _tool_message(result)
        if request.tool is None:
            # ToolNode had no tool by that name: whatever answered, the tool is not in the toolset.
            run.recorder.end_tool(turn, result=message, status="error", limit=LimitType.missing_tool)
        else:
            run.recorder.end_tool(turn, result=message)
            for signal in unknown_parameters(request.tool_call.get("args"), request.tool):
                run.recorder.add_limit(signal, turn.index)

    def _tool_failed(self, run: _Run, turn: Any, error: BaseException) -> None:
        run.recorder.end_tool(turn, error=error)
        if run.graph_run is None and not is_interrupt(error):
            run.recorder.fail(error)
            self._release(run)

    def _finish(self, run: _Run, state: Any) -> Any:
        messages = state.get("messages", [])
        self._scan(run, messages)
        last = _last_ai(messages)
        answer = message_text(last.content) if last is not None else None
        if not answer and state.get("structured_response") is not None:  # response_format runs
            answer = _as_text(state["structured_response"])
        run.recorder.finish(answer)
        self._release(run)
        return self._outcome_callable()

    def _finish_state(self, state: Any) -> tuple[_Run | None, tuple[Any, str] | None]:
        """The sync and async ``after_agent`` alike: finish the state's run, return it and its scorer."""
        run = self._run_for(state)
        if run is None:
            return None, None
        return run, self._finish(run, state)

    @staticmethod
    def _begin_tool(run: _Run, request: Any) -> Any:
        """Open the tool turn for ``request`` (shared by the sync and async tool wrappers)."""
        call = request.tool_call
        return run.recorder.begin_tool(call.get("name") or "?", call.get("args"), call.get("id"))

    def _outcome_callable(self) -> tuple[Any, str] | None:
        if self.verifier is not None:
            return self.verifier, getattr(self.verifier, "source", "verifier")
        if self.judge is not None:
            return self.judge, getattr(self.judge, "source", "judge")
        return None

    def _store_outcome(self, run: _Run, value: Any, source: str) -> None:
        try:
            run.recorder.record_outcome(value, source)
        except Exception:
            log.warning("skillbank: the verifier's answer could not be used as an outcome", exc_info=True)

    # -- hooks: sync -------------------------------------------------------------------------

    def before_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._start(state)

    @hook_config(can_jump_to=["end"])
    def before_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._before_model(state)

    def wrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        run = self._run_for(request.state)
        if run is None:
            return handler(request)
        injection = self._safe_inject(run, request.messages) if self.inject else None
        request, turn = self._prepare_call(run, request, injection)
        try:
            response = handler(request)
        except BaseException as exc:
            self._model_failed(run, turn, exc)
            raise
        self._model_done(run, turn, response)
        return response

    def wrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        run = self._run_for(request.state)
        if run is None:
            return handler(request)
        turn = self._begin_tool(run, request)
        try:
            result = handler(request)
        except BaseException as exc:
            self._tool_failed(run, turn, exc)
            raise
        self._tool_done(run, turn, request, result)
        return result

    def after_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        run, scorer = self._finish_state(state)
        if run is not None and scorer is not None:
            fn, source = scorer
            try:
                value = fn(state)
                if inspect.isawaitable(value):  # an async verifier on a sync run
                    if _loop_running():
                        getattr(value, "close", lambda: None)()
                        log.warning("skillbank: an async verifier cannot run inside a running event "
                                    "loop on a sync run; use ainvoke. The run stays unlabelled.")
                        return None
                    value = asyncio.run(value)
            except Exception:
                log.warning("skillbank: verifier failed; the run stays unlabelled", exc_info=True)
                return None
            self._store_outcome(run, value, source)
        return None

    # -- hooks: async ------------------------------------------------------------------------

    async def abefore_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._start(state)

    @hook_config(can_jump_to=["end"])
    async def abefore_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._before_model(state)

    async def awrap_model_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        run = self._run_for(request.state)
        if run is None:
            return await handler(request)
        # Embedding the query is CPU work: keep it off the event loop.
        injection = await asyncio.to_thread(self._safe_inject, run, request.messages) if self.inject else None
        request, turn = self._prepare_call(run, request, injection)
        try:
            response = await handler(request)
        except BaseException as exc:
            self._model_failed(run, turn, exc)
            raise
        self._model_done(run, turn, response)
        return response

    async def awrap_tool_call(self, request: Any, handler: Callable[[Any], Any]) -> Any:
        run = self._run_for(request.state)
        if run is None:
            return await handler(request)
        turn = self._begin_tool(run, request)
        try:
            result = await handler(request)
        except BaseException as exc:
            self._tool_failed(run, turn, exc)
            raise
        self._tool_done(run, turn, request, result)
        return result

    async def aafter_agent(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        run, scorer = self._finish_state(state)
        if run is not None and scorer is not None:
            fn, source = scorer
            try:
                acall = getattr(fn, "acall", None)
                value = await acall(state) if acall is not None else fn(state)
                if inspect.isawaitable(value):
                    value = await value
            except Exception:
                log.warning("skillbank: verifier failed; the run stays unlabelled", exc_info=True)
                return None
            self._store_outcome(run, value, source)
        return None


def _same_bank(a: Any, b: Any) -> bool:
    if a is b:
        return True
    path_a, path_b = getattr(a, "path", None), getattr(b, "path", None)
    return path_a is not None and str(path_a) == str(path_b)


def _as_text(value: Any) -> str:
    if hasattr(value, "model_dump_json"):
        return value.model_dump_json()
    try:
        return json.dumps(value, default=str)
    except (TypeError, ValueError):
        return str(value)


def _loop_running() -> bool:
    try:
        asyncio.get_running_loop()
        return True
    except RuntimeError:
        return False
