"""``SkillInjectionMiddleware``: the prompt and guidance parts as one middleware.

The short form for an agent that records elsewhere (the evolution gate's trials, say):
:class:`~skillbank.adapters._prompt_middleware.SkillPromptMiddleware` puts the skills into each
model call, and, with ``InjectionConfig.reminders``,
:class:`~skillbank.adapters._guidance_middleware.SkillGuidanceMiddleware` holds the run to them at
the tool and at the answer. Each part keeps its one concern; this only composes them (guidance
inside the prompt on a model call, so it sees the request the skills went into).
"""

from __future__ import annotations

import datetime as dt
from typing import Any, Awaitable, Callable

from langchain.agents.middleware import AgentMiddleware, ModelCallResult, ModelRequest, ModelResponse, ToolCallRequest
from langchain_core.messages import ToolMessage
from langgraph.types import Command

from skillbank.adapters._compose import athrough, through
from skillbank.adapters.config import InjectionConfig
from skillbank._config_keywords import with_options
from skillbank.adapters._guidance_middleware import SkillGuidanceMiddleware
from skillbank.adapters._prompt_middleware import SkillPromptMiddleware, SkillPromptState
from skillbank.live._config import LiveConfig
from skillbank.protocols import SkillSource

__all__ = ["SkillInjectionMiddleware"]


class SkillInjectionMiddleware(AgentMiddleware[SkillPromptState]):
    """Injects skills into each model call and, with ``reminders``, reminds at the tool and answer.

    Args:
        bank: Any :class:`~skillbank.protocols.SkillSource`.
        injection: A whole :class:`~skillbank.adapters.config.InjectionConfig` (then the
            keywords below are set on it, not here); every other option is set there.
        k: Retrieved skills per model call at most (``InjectionConfig.k``, default 5).
        reminders: Remind at the tool and at the answer (``InjectionConfig.reminders``, on).
        lean: The block for a small model (``InjectionConfig.lean``, off).
        examples: Show a lesson's closest worked example (``InjectionConfig.examples``, off).
        live: Randomized exposure for the live monitor (``InjectionConfig.live``).
        today: The date the agent takes as today (a ``date`` or ISO text; ``None``: the
            machine's date).

    A keyword left ``None`` keeps the config's default.

    Raises:
        TypeError: an unknown keyword, or an option given both as a keyword and in ``injection``.

    :attr:`prompt` and :attr:`guidance` are the parts; :attr:`injected`, :attr:`model_calls` and
    :attr:`retrieval_seconds` are the prompt part's counts.
    """

    state_schema = SkillPromptState

    def __init__(self, bank: SkillSource, injection: InjectionConfig | None = None, *, k: int | None = None,
                 reminders: bool | None = None, lean: bool | None = None, examples: bool | None = None,
                 live: LiveConfig | None = None, today: dt.date | str | None = None):
        super().__init__()
        injection = with_options(injection, InjectionConfig, owner="SkillInjectionMiddleware", argument="injection",
                                 options={"k": k, "reminders": reminders, "lean": lean, "examples": examples,
                                          "live": live, "today": today})
        self.prompt = SkillPromptMiddleware(bank, injection)
        self.guidance = SkillGuidanceMiddleware(self.prompt)
        self.config: InjectionConfig = self.prompt.config
        self.injector = self.prompt.injector
        parts: list[Any] = [self.prompt, self.guidance] if self.config.reminders else [self.prompt]
        self._model_calls = [p.wrap_model_call for p in parts]
        self._amodel_calls = [p.awrap_model_call for p in parts]

    @property
    def injected(self) -> Any:
        return self.prompt.injected

    @property
    def model_calls(self) -> int:
        return self.prompt.model_calls

    @property
    def retrieval_seconds(self) -> float:
        return self.prompt.retrieval_seconds

    @retrieval_seconds.setter
    def retrieval_seconds(self, value: float) -> None:
        self.prompt.retrieval_seconds = value

    def wrap_model_call(self, request: ModelRequest,
                        handler: Callable[[ModelRequest], ModelResponse]) -> ModelCallResult:
        return through(self._model_calls, handler)(request)

    async def awrap_model_call(self, request: ModelRequest,
                               handler: Callable[[ModelRequest], Awaitable[ModelResponse]]) -> ModelCallResult:
        return await athrough(self._amodel_calls, handler)(request)

    def wrap_tool_call(self, request: ToolCallRequest,
                       handler: Callable[[ToolCallRequest], ToolMessage | Command[Any]]) -> ToolMessage | Command[Any]:
        return self.guidance.wrap_tool_call(request, handler)

    async def awrap_tool_call(self, request: ToolCallRequest,
                              handler: Callable[[ToolCallRequest], Awaitable[ToolMessage | Command[Any]]]
                              ) -> ToolMessage | Command[Any]:
        return await self.guidance.awrap_tool_call(request, handler)

