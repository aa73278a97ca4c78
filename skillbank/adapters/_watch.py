"""Seeing how a graph run ends, from inside one of its nodes.

Middleware hooks run inside graph nodes, so they never see an error raised *between* nodes
(LangGraph's ``GraphRecursionError``) or in another middleware's node (a
``ModelCallLimitMiddleware`` with ``exit_behavior="error"``). The graph's own run does see it:
LangGraph reports every run's end or error to the callback handlers configured for it.

:class:`GraphWatcher` is one process-wide callback handler that LangChain adds to every
callback manager it configures, through ``register_configure_hook`` (the mechanism LangSmith
tracing uses). It notes which chain run each live chain run was started by (to learn which
graph run a hook is executing in, from the node it runs inside) and calls back at the end or
error of the graph runs an adapter asked it to watch. Its cost per chain run is a dictionary
entry while the run runs; it ignores model, tool and retriever events.
"""

from __future__ import annotations

import logging
import threading
from contextvars import ContextVar
from typing import Any, Hashable, Protocol
from uuid import UUID

from langchain_core.callbacks import BaseCallbackHandler

log = logging.getLogger("skillbank.adapters")

__all__ = ["GraphListener", "GraphWatcher", "watcher"]


class GraphListener(Protocol):
    def graph_ended(self, key: Hashable, outputs: Any) -> None: ...

    def graph_failed(self, key: Hashable, error: BaseException) -> None: ...


class GraphWatcher(BaseCallbackHandler):
    run_inline = True  # never hop to an executor for an async run
    raise_error = False
    ignore_llm = True
    ignore_chat_model = True
    ignore_retriever = True
    ignore_agent = True
    ignore_retry = True
    ignore_custom_event = True

    def __init__(self) -> None:
        self._node_names: frozenset[str] = frozenset()
        # Live chain runs -> their parent, and the live runs of known nodes -> their graph run.
        # Kept only while the runs run, so a code path inside a node (a wrapper, a prompt
        # function nested a few runnables deep) can find the graph run it belongs to.
        self._parent: dict[UUID, UUID] = {}
        self._node_graph: dict[UUID, UUID] = {}
        self._watched: dict[UUID, list[tuple[GraphListener, Hashable]]] = {}
        self._lock = threading.Lock()

    def add_node_names(self, *names: str) -> None:
        with self._lock:
            self._node_names = self._node_names | set(names)

    # -- callbacks ---------------------------------------------------------------------------

    def on_chain_start(self, serialized: Any, inputs: Any, *, run_id: UUID,
                       parent_run_id: UUID | None = None, name: str | None = None, **kwargs: Any) -> None:
        if parent_run_id is not None:
            self._parent[run_id] = parent_run_id
            if name in self._node_names:
                self._node_graph[run_id] = parent_run_id

    def on_chain_end(self, outputs: Any, *, run_id: UUID, **kwargs: Any) -> None:
        self._chain_over(run_id, "graph_ended", outputs, "end")

    def on_chain_error(self, error: BaseException, *, run_id: UUID, **kwargs: Any) -> None:
        self._chain_over(run_id, "graph_failed", error, "error")

    def _chain_over(self, run_id: UUID, method: str, result: Any, what: str) -> None:
        """A chain run ended or failed: one path for both, so they forget and notify alike."""
        self._parent.pop(run_id, None)
        if self._node_graph:
            self._node_graph.pop(run_id, None)
        if self._watched:
            with self._lock:
                listeners = self._watched.pop(run_id, None)
            for listener, key in listeners or ():
                try:
                    getattr(listener, method)(key, result)
                except Exception:
                    log.warning("skillbank: graph %s handling failed", what, exc_info=True)

    # -- used by hooks -----------------------------------------------------------------------

    def current_graph_run(self) -> UUID | None:
        """The graph run whose known node (see :meth:`add_node_names`) the caller runs inside."""
        try:
            from langgraph.config import get_config

            callbacks = get_config().get("callbacks")
        except Exception:
            return None
        run = getattr(callbacks, "parent_run_id", None)
        for _ in range(16):  # a node's own runnables nest a few levels at most
            if run is None:
                return None
            graph = self._node_graph.get(run)
            if graph is not None:
                return graph
            run = self._parent.get(run)
        return None

    def watch(self, graph_run: UUID, listener: GraphListener, key: Hashable) -> None:
        with self._lock:
            self._watched.setdefault(graph_run, []).append((listener, key))


_WATCHER: GraphWatcher | None = None
_INSTALL_LOCK = threading.Lock()


def watcher() -> GraphWatcher | None:
    """The process-wide watcher, installed on first use; ``None`` if LangChain lacks the hook."""
    global _WATCHER
    if _WATCHER is not None:
        return _WATCHER
    with _INSTALL_LOCK:
        if _WATCHER is None:
            try:
                from langchain_core.tracers.context import register_configure_hook
            except ImportError:  # pragma: no cover - present in every langchain-core >= 0.1
                return None
            instance = GraphWatcher()
            # A default value makes the hook active in every context, including new threads.
            var: ContextVar[GraphWatcher | None] = ContextVar("skillbank_graph_watcher", default=instance)
            # Inheritable: LangGraph hands nodes their parent's manager without configuring a new
            # one, so only inherited handlers see node runs.
            register_configure_hook(var, True)
            _WATCHER = instance
    return _WATCHER
