"""Which agent run a middleware's wrapped call belongs to, and what the middleware keeps for it.

A middleware that keeps something per run (the injected block, the recorder, the budget spent)
cannot key it by anything a wrapper is handed: ``create_agent`` runs each model and tool call
inside a graph node, and only the graph run says which run that is. :class:`AgentRuns` finds it
through the process-wide watcher (:mod:`skillbank.adapters._watch`), makes the middleware's
per-run value on the run's first wrapped call and lets go of it when the graph run ends, so the
agent pays no node for it and concurrent runs (threads, asyncio tasks, ``batch``) never mix.

An agent run can outlive its graph run: one that pauses (an ``interrupt()``, a breakpoint, a
human-in-the-loop middleware) ends its graph run, and the graph run that resumes it continues
it. A paused run is kept under its thread, its graph's namespace and the newest human message it
started from; the next graph run there whose newest human message is that one (a resume adds
none) continues it, in the same value.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Callable, Generic, Hashable, TypeVar
from uuid import UUID

from skillbank.adapters._watch import watcher
from skillbank.adapters.limits import is_interrupt
from skillbank.messages import last_message, state_messages

__all__ = ["AgentRuns", "CREATE_AGENT_NODES", "run_config"]

T = TypeVar("T")

# create_agent's node names: the middleware's wrappers run inside these nodes.
CREATE_AGENT_NODES = ("model", "tools")

ResumeKey = tuple[str, str, str]


@dataclass
class _Entry(Generic[T]):
    value: T
    key: ResumeKey | None  # where it waits if it pauses (None: it cannot be resumed)
    interrupted: bool = False  # a wrapped call raised an interrupt: the graph run pauses it


class AgentRuns(Generic[T]):
    """The agent runs a middleware is in, each with the value ``start(state)`` made for it.

    :meth:`current` is the value of the run the calling wrapper belongs to (``None`` when the
    graph run cannot be seen: outside ``node_names``, or without LangChain callbacks). The owner
    hears of a run's life through the optional hooks: ``resume(state)`` may continue a run this
    process never saw (a value, or ``None`` to start one); like ``start``, it only makes a value
    (one made for a graph run another call took up first is dropped). ``attached(value)`` runs
    when a graph run takes the run up (its first call, or its resume); ``ended(value, outputs)``
    and ``failed(value, error)`` when that graph run ends or raises; ``paused(value, kept)`` when
    it pauses the run instead (``kept``: the run waits here to be resumed). Wrappers make their
    call inside ``with runs.calling:`` (or report what it raised to :meth:`interrupted`), so a
    run paused inside a call is not taken for an ended one.
    """

    def __init__(self, start: Callable[[Mapping[str, Any]], T], *,
                 node_names: tuple[str, ...] = CREATE_AGENT_NODES,
                 resume: Callable[[Mapping[str, Any]], T | None] | None = None,
                 attached: Callable[[T], None] | None = None,
                 ended: Callable[[T, Any], None] | None = None,
                 failed: Callable[[T, BaseException], None] | None = None,
                 paused: Callable[[T, bool], None] | None = None):
        self._start, self._resume, self._attached = start, resume, attached
        self._ended, self._failed, self._paused_hook = ended, failed, paused
        self._watcher = watcher()
        if self._watcher is not None:
            self._watcher.add_node_names(*node_names)
        # Keyed by the graph run's UUID as an int: hashing a UUID runs Python code, on every call.
        self._live: dict[int, _Entry[T]] = {}
        self._paused: dict[ResumeKey, _Entry[T]] = {}
        self._lock = threading.Lock()
        self.calling = _Calling(self)

    def __len__(self) -> int:
        """How many runs are live (in a graph run) now."""
        return len(self._live)

    def current(self, state: Mapping[str, Any] | None = None) -> T | None:
        """The value of the run the calling wrapper belongs to; ``state`` (the request's) tells a
        resume from a new run."""
        graph_run = self._watcher.current_graph_run() if self._watcher is not None else None
        if graph_run is None:
            return None
        with self._lock:
            entry = self._live.get(graph_run.int)
        if entry is not None:
            return entry.value
        return self._take_up(graph_run, state if isinstance(state, Mapping) else {})

    def interrupted(self, error: BaseException) -> None:
        """A wrapped call raised ``error``: if it is an interrupt, the current graph run pauses
        its run rather than end it."""
        if not is_interrupt(error) or self._watcher is None:
            return
        graph_run = self._watcher.current_graph_run()
        with self._lock:
            entry = self._live.get(graph_run.int) if graph_run is not None else None
        if entry is not None:
            entry.interrupted = True

    def _take_up(self, graph_run: UUID, state: Mapping[str, Any]) -> T:
        """The graph run's first call: the paused run it resumes, or a new one."""
        key = _resume_key(state)
        with self._lock:
            entry = self._live.get(graph_run.int)
            if entry is not None:
                return entry.value
            entry = self._paused.pop(key, None) if key is not None else None
            if entry is not None:
                self._live[graph_run.int] = entry
        if entry is None:
            # Made outside the lock (the owner may read its store); two calls starting one graph
            # run at once (parallel tool calls resuming at the tools node) keep the first made.
            value = self._resume(state) if self._resume is not None else None
            made = _Entry(self._start(state) if value is None else value, key)
            with self._lock:
                entry = self._live.setdefault(graph_run.int, made)
            if entry is not made:
                return entry.value
        entry.interrupted = False
        self._watcher.watch(graph_run, self, graph_run.int)  # type: ignore[union-attr]  # seen by current()
        if self._attached is not None:
            self._attached(entry.value)
        return entry.value

    def _pause(self, entry: _Entry[T]) -> None:
        kept = entry.key is not None
        if kept:
            with self._lock:
                self._paused[entry.key] = entry  # type: ignore[index]  # kept: not None
        if self._paused_hook is not None:
            self._paused_hook(entry.value, kept)

    # -- GraphListener: the watcher calls these when a graph run this tracks ends ----------

    def graph_ended(self, key: Hashable, outputs: Any) -> None:
        entry = self._end(key)
        if entry is None:
            return
        if entry.interrupted or _awaits_tool_results(outputs):
            self._pause(entry)
        elif self._ended is not None:
            self._ended(entry.value, outputs)

    def graph_failed(self, key: Hashable, error: BaseException) -> None:
        entry = self._end(key)
        if entry is None:
            return
        if is_interrupt(error):  # an agent inside a bigger graph, pausing for input
            self._pause(entry)
        elif self._failed is not None:
            self._failed(entry.value, error)

    def _end(self, key: Hashable) -> _Entry[T] | None:
        """The run a graph run that ended had taken up (``key``, as ``watch`` was given it)."""
        with self._lock:
            return self._live.pop(key, None)  # type: ignore[call-overload]  # the graph run's int


class _Calling:
    """``with runs.calling:`` around a wrapped call: an interrupt it raises pauses the run
    rather than ends it. (A class, not a generator: it runs on every call.)"""

    __slots__ = ("_runs",)

    def __init__(self, runs: AgentRuns[Any]):
        self._runs = runs

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: Any) -> None:
        if error is not None:
            self._runs.interrupted(error)


def run_config() -> Mapping[str, Any]:
    """The config of the graph node the caller runs in (``{}`` outside one)."""
    try:
        from langgraph.config import get_config

        return get_config()
    except Exception:
        return {}


def _resume_key(state: Mapping[str, Any]) -> ResumeKey | None:
    """Where a run paused with ``state`` waits: its thread, its graph's checkpoint namespace
    (the node's own, less the node: an agent inside a bigger graph has one of its own) and the
    newest human message (``None`` without one: such a run cannot be told from a new one)."""
    newest = last_message(state_messages(state), "human")
    message_id = getattr(newest, "id", None)
    if message_id is None:
        return None
    configurable = run_config().get("configurable") or {}
    namespace = str(configurable.get("checkpoint_ns") or "").rpartition("|")[0]
    return str(configurable.get("thread_id") or ""), namespace, str(message_id)


def _awaits_tool_results(outputs: Any) -> bool:
    """Whether a graph that returned ``outputs`` stopped before answering (a breakpoint, an
    interrupt in a tool): its last message is a tool call still waiting for its result."""
    messages = outputs.get("messages") if isinstance(outputs, Mapping) else None
    last = messages[-1] if messages else None
    return getattr(last, "type", None) == "ai" and bool(getattr(last, "tool_calls", None))
