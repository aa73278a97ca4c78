"""Composing middleware parts into one middleware, in the order ``create_agent`` would."""

from __future__ import annotations

from functools import partial
from typing import Any, Callable

__all__ = ["through"]


def through(layers: list[Callable[..., Any]], handler: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """``handler`` wrapped by each of ``layers`` (``layer(request, handler)``), the first outermost:
    the order ``create_agent`` composes a middleware list in. A layer's result reaches the one
    around it as it is, so the composite answers what its innermost part did."""
    for layer in reversed(layers):
        handler = partial(layer, handler=handler)
    return handler
