"""Composing middleware parts into one middleware, in the order ``create_agent`` would.

A layer gets from its handler what ``create_agent`` would give it: the inner layers' model
response without the state updates they attached (an ``ExtendedModelResponse``'s command).
Those are kept aside, every one of them (a layer that calls its handler twice keeps the first
call's too), and the composite returns them with the outermost layer's response as one command,
inner layers first, so an outer layer's write to a key wins.
"""

from __future__ import annotations

from functools import partial
from typing import Any, Awaitable, Callable

from langchain.agents.middleware import ExtendedModelResponse
from langgraph.types import Command

__all__ = ["through", "athrough"]


class _Updates:
    """The state updates of one composed call, in the order the layers returned them."""

    __slots__ = ("commands",)

    def __init__(self) -> None:
        self.commands: list[Command[Any]] = []

    def keep_aside(self, result: Any) -> Any:
        """``result`` as the layer around it sees it; its update kept."""
        if isinstance(result, ExtendedModelResponse):
            if result.command is not None:
                self.commands.append(result.command)
            return result.model_response
        return result

    def with_them(self, response: Any) -> Any:
        """The composite's answer: ``response`` with every update kept."""
        if not self.commands:
            return response
        update: dict[str, Any] = {}
        for command in self.commands:
            update.update(command.update or {})
        return ExtendedModelResponse(model_response=response, command=Command(update=update))


def through(layers: list[Callable[..., Any]], handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``handler`` wrapped by each of ``layers`` (``layer(request, handler)``), the first outermost."""
    updates = _Updates()

    def layered(layer: Callable[..., Any], inner: Callable[[Any], Any], request: Any) -> Any:
        return updates.keep_aside(layer(request, handler=inner))

    for layer in reversed(layers):
        handler = partial(layered, layer, handler)
    return lambda request: updates.with_them(handler(request))


def athrough(layers: list[Callable[..., Awaitable[Any]]],
             handler: Callable[[Any], Awaitable[Any]]) -> Callable[[Any], Awaitable[Any]]:
    """The async twin of :func:`through` (``await layer(request, handler)``)."""
    updates = _Updates()

    async def layered(layer: Callable[..., Awaitable[Any]], inner: Callable[[Any], Awaitable[Any]],
                      request: Any) -> Any:
        return updates.keep_aside(await layer(request, handler=inner))

    for layer in reversed(layers):
        handler = partial(layered, layer, handler)

    async def composed(request: Any) -> Any:
        return updates.with_them(await handler(request))

    return composed
