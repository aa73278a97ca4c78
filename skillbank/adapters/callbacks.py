"""``SkillBankCallbackHandler``: record any LangChain / LangGraph runnable as a trajectory.

    handler = SkillBankCallbackHandler(bank)
    graph.invoke({"messages": [("user", "...")]}, config={"callbacks": [handler]})
    bank.trajectories.get(handler.last_trajectory_id)

Each top-level run the handler sees becomes one trajectory: the task from its input, every chat
model call (messages in, response, tool calls, token usage, latency), every tool call (args,
result or error, latency), the final answer from its output, and the limits met on the way. A
model call whose system message was built by :func:`~skillbank.adapters.injection.inject_skills`
or :func:`~skillbank.adapters.langgraph.skillbank_hook` is recorded with the skill versions it
carried. Use it for ``create_react_agent``, custom ``StateGraph``s and plain chains; for
``create_agent`` use ``SkillBankMiddleware`` instead. Attaching both is harmless: a middleware
on the same bank tells the handler when it starts recording a graph run (:meth:`leave`), and the
handler drops that run (or, for an agent nested in a bigger graph, the agent's part of it), so
the run is recorded once, by the middleware.

Each trajectory's row is written as ``running`` when its top-level run starts, so a process that
dies at any point leaves a row saying the run started and never finished.

The handler is shared safely between threads and asyncio tasks: state is keyed by run id, and
it runs inline (``run_inline``), never in an executor, so events arrive in order.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict, deque
from dataclasses import dataclass, field
from typing import Any, Callable
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler
from langchain_core.messages import AIMessage, BaseMessage, convert_to_messages

from skillbank.adapters.config import RecordingConfig
from skillbank._config_keywords import with_options
from skillbank.adapters.injection import injections_from_messages
from skillbank.adapters.limits import is_interrupt, limit_from_message
from skillbank.adapters._recorder import TrajectoryRecorder
from skillbank.messages import first_human_text, last_message, message_text, messages_in, tool_result_message
from skillbank.protocols import TrajectorySink

__all__ = ["SkillBankCallbackHandler"]

log = logging.getLogger("skillbank.adapters")
_KEEP_IDS = 10_000
_INTERRUPTED = "interrupted: waiting for human input (a resumed run is recorded as a new trajectory)"


@dataclass
class _Root:
    recorder: TrajectoryRecorder
    interrupted: bool = False
    seen_tool_calls: set[str | None] = field(default_factory=set)  # None: a tool message without an id
    seen_messages: set[Any] = field(default_factory=set)
    known_ids: set[str] = field(default_factory=set)  # messages already in some run's input
    state: dict[str, Any] = field(default_factory=dict)  # the last full state a node was given
    tail: list[Any] = field(default_factory=list)  # messages nodes returned since

    def last_state(self) -> dict[str, Any]:
        """What a verifier gets when the graph raised before returning a final state."""
        return {**self.state, "messages": list(self.state.get("messages") or ()) + self.tail}


def _task_from(inputs: Any) -> str:
    if isinstance(inputs, str):
        return inputs
    raw = inputs.get("messages") if isinstance(inputs, dict) else inputs if isinstance(inputs, list) else None
    if raw is not None:
        try:
            return first_human_text(convert_to_messages(raw if isinstance(raw, list) else [raw]))
        except Exception:
            pass
    if isinstance(inputs, dict):
        for key in ("input", "question", "query", "task"):
            if isinstance(inputs.get(key), str):
                return inputs[key]
    return ""


def _model_name(serialized: Any, kwargs: dict[str, Any]) -> str | None:
    metadata = kwargs.get("metadata") or {}
    params = kwargs.get("invocation_params") or {}
    for value in (metadata.get("ls_model_name"), params.get("model"), params.get("model_name"),
                  params.get("model_id")):
        if isinstance(value, str) and value:
            return value
    if isinstance(serialized, dict):
        ident = serialized.get("id")
        if isinstance(ident, list) and ident:
            return str(ident[-1])
        return serialized.get("name")
    return kwargs.get("name")


class SkillBankCallbackHandler(BaseCallbackHandler):
    """Records each top-level run into ``bank``; see the module docstring.

    Args:
        bank: Anything a :class:`~skillbank.protocols.TrajectorySink`.
        recording: A whole :class:`~skillbank.adapters.config.RecordingConfig` (then
            ``verifier`` and ``judge`` are set on it, not here): ``scrubber`` defaults to
            ``bank.scrubber``, ``task_id``/``task_type``/``labels`` are stored on every
            trajectory (or per run: ``skillbank_task_id``/``skillbank_task_type``/
            ``skillbank_labels`` in the invocation's ``config["metadata"]``).
        verifier: ``verifier(final_output)`` labels the run when it ends (a run that ends at a
            limit is labelled even when the graph raised).
        judge: An :class:`~skillbank.adapters.judge.LLMJudge` that labels each run instead.

    Raises:
        TypeError: an unknown keyword, or ``verifier``/``judge`` given along with ``recording``.
    """

    run_inline = True
    raise_error = False
    ignore_retriever = True
    ignore_custom_event = True

    def __init__(self, bank: TrajectorySink, *, recording: RecordingConfig | None = None,
                 verifier: Callable[[Any], Any] | None = None, judge: Any = None):
        self.bank = bank
        self.recording = with_options(recording, RecordingConfig, owner="SkillBankCallbackHandler",
                                      argument="recording", options={"verifier": verifier, "judge": judge})
        self.detectors = self.recording.detectors()
        self.last_trajectory_id: str | None = None
        self.trajectory_ids: deque[str] = deque(maxlen=_KEEP_IDS)  # latest runs, oldest first
        self._roots: dict[UUID, _Root] = {}
        self._owner: dict[UUID, UUID] = {}  # any live run -> its top-level run
        self._turns: dict[UUID, Any] = {}  # live model / tool run -> its recorder turn
        self._by_run: OrderedDict[UUID, str] = OrderedDict()
        self._parent: dict[UUID, UUID] = {}  # live child run -> its parent run
        self._muted: set[UUID] = set()  # live runs a SkillBankMiddleware records (and their children)
        self._lock = threading.RLock()

    # -- lookup ------------------------------------------------------------------------------

    def trajectory_id_for(self, run_id: UUID | str) -> str | None:
        """The trajectory recorded for a top-level run (pass ``config["run_id"]``).

        Args:
            run_id: The top-level run's id, a UUID or its string.

        Returns:
            The trajectory's id; ``None`` when this handler recorded no such run (or forgot it:
            only the newest runs' ids are kept).

        Raises:
            ValueError: ``run_id`` is a string that is no UUID.
        """
        key = UUID(str(run_id)) if not isinstance(run_id, UUID) else run_id
        with self._lock:
            return self._by_run.get(key)

    def _root_of(self, run_id: UUID, parent_run_id: UUID | None, inputs: Any = None,
                 metadata: dict[str, Any] | None = None) -> _Root | None:
        """The root a starting run belongs to (a new one for a top-level run); ``None``: muted."""
        with self._lock:
            if parent_run_id is not None and parent_run_id in self._muted:
                self._muted.add(run_id)
                return None
            if parent_run_id is not None and parent_run_id in self._owner:
                root_id = self._owner[parent_run_id]
                self._owner[run_id] = root_id
                self._parent[run_id] = parent_run_id
                return self._roots.get(root_id)
            root = self._new_root(run_id, inputs, metadata or {})
        root.recorder.start()  # outside the lock: concurrent runs must not queue behind one write
        return root

    def _new_root(self, run_id: UUID, inputs: Any, metadata: dict[str, Any]) -> _Root:
        cfg = self.recording
        labels = {**cfg.labels, **{str(k): str(v) for k, v in (metadata.get("skillbank_labels") or {}).items()}}
        recorder = TrajectoryRecorder(
            self.bank, task=_task_from(inputs), model=cfg.model_name,
            task_id=metadata.get("skillbank_task_id") or cfg.task_id,
            task_type=metadata.get("skillbank_task_type") or cfg.task_type, labels=labels,
            scrubber=cfg.scrubber, detectors=self.detectors, flush_every=cfg.flush_every,
            clock=cfg.clock, today=cfg.today,
        )
        root = _Root(recorder)
        self._roots[run_id] = root
        self._owner[run_id] = run_id
        self._by_run[run_id] = recorder.id
        while len(self._by_run) > _KEEP_IDS:
            self._by_run.popitem(last=False)
        self.last_trajectory_id = recorder.id
        self.trajectory_ids.append(recorder.id)
        return root

    def _root_for_live(self, run_id: UUID) -> _Root | None:
        with self._lock:
            root_id = self._owner.get(run_id)
            return self._roots.get(root_id) if root_id is not None else None

    def _forget(self, run_id: UUID) -> None:
        with self._lock:
            self._owner.pop(run_id, None)
            self._turns.pop(run_id, None)
            self._parent.pop(run_id, None)
            self._muted.discard(run_id)

    def _ended_muted(self, run_id: UUID) -> bool:
        """True (and forgotten) if ``run_id`` is a run a middleware records: its end is not ours."""
        with self._lock:
            muted = run_id in self._muted
        if muted:
            self._forget(run_id)
        return muted

    # -- sharing a run with SkillBankMiddleware ----------------------------------------------

    def leave(self, node_run_id: UUID, trajectory_id: str | None = None) -> bool:
        """Hand the graph run of ``node_run_id`` (one of its nodes, now running) over to a middleware.

        Called by a ``SkillBankMiddleware`` on this bank from its first hook in a graph run. The
        graph run and everything that starts in it from now on is ignored; if it is a top-level
        run, its trajectory (written when it started) is deleted, and ``trajectory_id`` (the
        middleware's) is what :meth:`trajectory_id_for` and ``last_trajectory_id`` report.

        Args:
            node_run_id: The run id of the graph node the middleware's hook runs in.
            trajectory_id: The middleware's trajectory, reported for the run instead; ``None``:
                the run's ids are left as they are.

        Returns:
            ``False`` if this handler does not see that run (nothing changes), else ``True``.
        """
        with self._lock:
            graph_run = self._parent.get(node_run_id)
            if graph_run is None:
                return False
            self._muted.update((graph_run, node_run_id))
            root = self._roots.pop(graph_run, None)
            if root is not None and trajectory_id:
                self._point(graph_run, root.recorder.id, trajectory_id)
        if root is not None:
            root.recorder.discard()
        return True

    def _point(self, run_id: UUID, old: str, new: str) -> None:
        self._by_run[run_id] = new
        if self.last_trajectory_id == old:
            self.last_trajectory_id = new
        if old in self.trajectory_ids:
            self.trajectory_ids[self.trajectory_ids.index(old)] = new

    # -- chains ------------------------------------------------------------------------------

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, metadata: dict[str, Any] | None = None,
                       **kwargs: Any) -> None:
        """LangChain's hook for a chain (graph, node, runnable) starting: a top-level run
        starts a trajectory (its task read from ``inputs``), a nested one joins its root's.

        Args:
            serialized: The chain's serialized form (unused).
            inputs: The chain's input; a top-level run's task is read from it.
            run_id: The chain run's id.
            parent_run_id: The run it is nested in; ``None``: a top-level run.
            metadata: The run's metadata; ``skillbank_task_id``, ``skillbank_task_type`` and
                ``skillbank_labels`` override the recording config's for a new trajectory.
        """
        root = self._root_of(run_id, parent_run_id, inputs, metadata)
        if root is not None and parent_run_id is not None:
            self._mark_known(root, inputs)

    @staticmethod
    def _mark_known(root: _Root, inputs: Any) -> None:
        # What a node gets as input already existed: on a thread that includes earlier runs'
        # messages, which some runnables (a prompt, a subgraph) pass on as output. Only what
        # first appears in an output is this run's. Newest first, stopping at a known message.
        messages = inputs.get("messages") if isinstance(inputs, dict) else None
        if not isinstance(messages, list):
            return
        root.state, root.tail = dict(inputs), []
        for message in reversed(messages):
            mid = getattr(message, "id", None)
            if mid is not None:
                if mid in root.known_ids:
                    break
                root.known_ids.add(mid)
            if getattr(message, "type", None) == "tool":
                root.seen_tool_calls.add(getattr(message, "tool_call_id", None))

    def _scan(self, root: _Root, outputs: Any) -> None:
        for message in messages_in(outputs):
            if getattr(message, "id", None) in root.known_ids:
                continue
            kind = getattr(message, "type", None)
            if kind == "tool":
                call_id = getattr(message, "tool_call_id", None)
                if call_id in root.seen_tool_calls:
                    continue
                root.seen_tool_calls.add(call_id)
                # A tool result no tool run produced: ToolNode's answer for an unknown tool, or
                # a message a limit middleware wrote for a blocked call.
                if getattr(message, "status", None) == "error":
                    root.recorder.record_tool_message(message)
            elif kind == "ai":
                signal = limit_from_message(message)
                if signal is None:
                    continue
                # Keyed by content too: create_react_agent replaces the model's answer with its
                # "need more steps" message under the same id.
                key = (signal.type, getattr(message, "id", None), message_text(message))
                if key in root.seen_messages:
                    continue
                root.seen_messages.add(key)
                root.recorder.add_limit(signal)

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """LangChain's hook for a chain ending: a nested chain's output is scanned for limit
        messages and tool errors; a top-level run's trajectory is finished (incomplete if
        interrupted) with its last answer and labelled by the recording config's scorer.

        Args:
            outputs: The chain's output (a graph's final state, a message, a string, ...).
            run_id: The chain run's id.
        """
        if self._ended_muted(run_id):
            return
        with self._lock:
            root = self._roots.pop(run_id, None)
            if root is None:
                live = self._root_for_live(run_id)
        if root is None:
            if live is not None:
                self._scan(live, outputs)
                live.tail.extend(m for m in messages_in(outputs) if getattr(m, "id", None) not in live.known_ids)
            self._forget(run_id)
            return
        self._forget(run_id)
        # The final state holds the whole thread (earlier runs' messages too): only its last
        # answer can still announce a limit not seen in a node's output.
        final_messages = list(messages_in(outputs))
        last_ai = last_message(final_messages, "ai")
        if last_ai is not None:
            self._scan(root, [last_ai])
        if root.interrupted or (isinstance(outputs, dict) and "__interrupt__" in outputs):
            # A resumed run is a new top-level run to a callback handler: a new trajectory.
            root.recorder.finish(None, status="incomplete", error=_INTERRUPTED)
            return
        if last_ai is not None:
            answer: str | None = message_text(last_ai)
        elif isinstance(outputs, str):
            answer = outputs
        else:
            answer = None
        root.recorder.finish(answer)
        state = outputs if isinstance(outputs, dict) else {"messages": final_messages}
        root.recorder.label(self.recording.scorer(), outputs, root.recorder.ended_at_limit(state))

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """LangChain's hook for a chain failing: a top-level run's trajectory is marked failed
        (or incomplete, for an interrupt), and labelled when the error is a limit.

        Args:
            error: What the chain raised.
            run_id: The chain run's id.
        """
        if self._ended_muted(run_id):
            return
        with self._lock:
            root = self._roots.pop(run_id, None)
            if root is None and is_interrupt(error):
                live = self._root_for_live(run_id)
                if live is not None:
                    live.interrupted = True
        self._forget(run_id)
        if root is not None:
            if is_interrupt(error):
                root.recorder.finish(None, status="incomplete", error=_INTERRUPTED)
                return
            root.recorder.fail(error)
            limit = root.recorder.ended_at_limit(None, error=error)
            if limit is not None:
                root.recorder.label(self.recording.scorer(), root.last_state(), limit)

    # -- models ------------------------------------------------------------------------------

    def _begin_model(self, run_id: UUID, parent_run_id: UUID | None, serialized: Any,
                     messages: list[Any], n_in: int, kwargs: dict[str, Any]) -> None:
        root = self._root_of(run_id, parent_run_id, {"messages": messages}, kwargs.get("metadata"))
        if root is None:
            return
        recorder = root.recorder
        recorder.set_model(_model_name(serialized, kwargs))
        turn = recorder.begin_model(n_in, injections_from_messages(messages))
        with self._lock:
            self._turns[run_id] = turn

    def on_chat_model_start(self, serialized: Any, messages: list[list[BaseMessage]], *, run_id: UUID,
                            parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        """LangChain's hook for a chat model call starting: begins a model turn (with the
        skills injected into its messages) in the run's trajectory.

        Args:
            serialized: The model's serialized form, read for its name.
            messages: The call's message batches; the first is recorded.
            run_id: The model run's id.
            parent_run_id: The run it is nested in; ``None``: the model's own top-level run.
        """
        batch = messages[0] if messages else []
        self._begin_model(run_id, parent_run_id, serialized, batch, len(batch), kwargs)

    def on_llm_start(self, serialized: Any, prompts: list[str], *, run_id: UUID,
                     parent_run_id: UUID | None = None, **kwargs: Any) -> None:
        """LangChain's hook for a text-completion model call starting: begins a model turn.

        Args:
            serialized: The model's serialized form, read for its name.
            prompts: The call's prompts (counted, not recorded).
            run_id: The model run's id.
            parent_run_id: The run it is nested in; ``None``: the model's own top-level run.
        """
        self._begin_model(run_id, parent_run_id, serialized, [], len(prompts), kwargs)

    def on_llm_end(self, response: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """LangChain's hook for a model call ending: ends its turn with the first generation's
        message and token usage; a model run on its own is finished and labelled.

        Args:
            response: The model's ``LLMResult``.
            run_id: The model run's id.
        """
        root = self._root_for_live(run_id)
        with self._lock:
            turn = self._turns.pop(run_id, None)
        if root is None or turn is None:
            self._forget(run_id)
            return
        message = None
        try:
            generation = response.generations[0][0]
            message = getattr(generation, "message", None) or AIMessage(content=generation.text)
        except (AttributeError, IndexError):
            pass
        if message is not None and not getattr(message, "usage_metadata", None):
            usage = (getattr(response, "llm_output", None) or {}).get("token_usage") or {}
            if usage:
                message = message.model_copy(update={"usage_metadata": {
                    "input_tokens": int(usage.get("prompt_tokens") or usage.get("input_tokens") or 0),
                    "output_tokens": int(usage.get("completion_tokens") or usage.get("output_tokens") or 0),
                    "total_tokens": int(usage.get("total_tokens") or 0),
                }}) if isinstance(message, AIMessage) else message
        root.recorder.end_model(turn, message)
        self._finish_if_root(run_id, root, message)

    def on_llm_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """LangChain's hook for a model call failing: ends its turn with the error; a model run
        on its own marks its trajectory failed.

        Args:
            error: What the model raised.
            run_id: The model run's id.
        """
        root = self._root_for_live(run_id)
        with self._lock:
            turn = self._turns.pop(run_id, None)
        if root is not None and turn is not None:
            root.recorder.end_model(turn, error=error)
        with self._lock:
            is_root = self._roots.pop(run_id, None) is not None
        self._forget(run_id)
        if is_root and root is not None:
            root.recorder.fail(error)

    def _finish_if_root(self, run_id: UUID, root: _Root, message: Any) -> None:
        # A model invoked on its own (no chain around it) is its own top-level run.
        with self._lock:
            is_root = self._roots.pop(run_id, None) is not None
        self._forget(run_id)
        if is_root:
            root.recorder.finish(message_text(message) if message is not None else None)
            root.recorder.label(self.recording.scorer(), message, None)

    # -- tools -------------------------------------------------------------------------------

    def on_tool_start(self, serialized: Any, input_str: str, *, run_id: UUID,
                      parent_run_id: UUID | None = None, inputs: dict[str, Any] | None = None,
                      **kwargs: Any) -> None:
        """LangChain's hook for a tool call starting: begins a tool turn in the run's trajectory.

        Args:
            serialized: The tool's serialized form, read for its name.
            input_str: The tool's input as a string, recorded when ``inputs`` is ``None``.
            run_id: The tool run's id.
            parent_run_id: The run it is nested in; ``None``: the tool's own top-level run.
            inputs: The tool's input arguments.
        """
        root = self._root_of(run_id, parent_run_id, input_str, kwargs.get("metadata"))
        if root is None:
            return
        name = (serialized or {}).get("name") or kwargs.get("name") or "tool"
        call_id = kwargs.get("tool_call_id")
        if call_id:
            with self._lock:
                root.seen_tool_calls.add(call_id)
        turn = root.recorder.begin_tool(name, inputs if inputs is not None else input_str, call_id)
        with self._lock:
            self._turns[run_id] = turn

    def on_tool_end(self, output: Any, *, run_id: UUID, **kwargs: Any) -> None:
        """LangChain's hook for a tool call ending: ends its turn with the tool's result; a tool
        run on its own finishes its trajectory.

        Args:
            output: What the tool returned (a ``ToolMessage`` or any value).
            run_id: The tool run's id.
        """
        root = self._root_for_live(run_id)
        with self._lock:
            turn = self._turns.pop(run_id, None)
        if root is not None and turn is not None:
            root.recorder.end_tool(turn, result=tool_result_message(output))
        self._close_tool_root(run_id, root)

    def on_tool_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        """LangChain's hook for a tool call failing: ends its turn with the error (an interrupt
        marks the run interrupted).

        Args:
            error: What the tool raised.
            run_id: The tool run's id.
        """
        root = self._root_for_live(run_id)
        with self._lock:
            turn = self._turns.pop(run_id, None)
        if root is not None and turn is not None:
            root.recorder.end_tool(turn, error=error)
            if is_interrupt(error):
                root.interrupted = True
        with self._lock:
            is_root = self._roots.pop(run_id, None) is not None
        self._forget(run_id)
        if is_root and root is not None:
            root.recorder.fail(error)

    def _close_tool_root(self, run_id: UUID, root: _Root | None) -> None:
        with self._lock:
            is_root = self._roots.pop(run_id, None) is not None
        self._forget(run_id)
        if is_root and root is not None:
            root.recorder.finish(None)
