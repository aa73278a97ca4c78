"""Run a task through a real ``langchain.agents.create_agent`` loop and verify the outcome."""

from __future__ import annotations

from typing import Any, NamedTuple, Sequence

from langchain.agents import create_agent
from langchain.agents.middleware import AgentMiddleware, ToolCallLimitMiddleware
from langchain.agents.middleware.types import hook_config
from langchain_core.language_models.fake_chat_models import FakeMessagesListChatModel
from langchain_core.messages import AIMessage, BaseMessage, HumanMessage
from langgraph.errors import GraphRecursionError

from skillbank.lessons import Lesson, sentence
from skillbank_harness.envs.base import Environment, Task, final_answer

__all__ = [
    "RunResult",
    "ScriptedUserMiddleware",
    "ReferenceModel",
    "run_task",
    "skills_prompt",
    "is_clarifying_question",
]


def is_clarifying_question(message: BaseMessage) -> bool:
    """A final AI message that asks the user something (no tool calls, ends with '?')."""
    if not isinstance(message, AIMessage) or message.tool_calls:
        return False
    text = message.content if isinstance(message.content, str) else str(message.text)
    return text.strip().endswith("?")


class ScriptedUserMiddleware(AgentMiddleware):
    """Plays the user: when the agent ends its turn with a question, answers it and continues.

    The reply comes from ``env.user_reply`` (one clarification round at most), is appended as a
    ``HumanMessage`` and the loop jumps back to the model, so the whole exchange is one run and
    one trajectory. Put it first in the middleware list so its ``after_model`` runs last and
    other middleware see the question turn.
    """

    def __init__(self, env: Environment) -> None:
        super().__init__()
        self._env = env

    def _reply(self, state: dict[str, Any]) -> dict[str, Any] | None:
        messages = state.get("messages") or []
        if not messages or not is_clarifying_question(messages[-1]):
            return None
        reply = self._env.user_reply(str(messages[-1].content))
        if reply is None:
            return None
        return {"messages": [HumanMessage(reply)], "jump_to": "model"}

    @hook_config(can_jump_to=["model"])
    def after_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._reply(state)

    @hook_config(can_jump_to=["model"])
    async def aafter_model(self, state: Any, runtime: Any) -> dict[str, Any] | None:
        return self._reply(state)


class RunResult(NamedTuple):
    state: dict[str, Any] | None
    env: Environment
    success: bool

    @property
    def messages(self) -> list[BaseMessage]:
        return list((self.state or {}).get("messages", []))

    @property
    def final_answer(self) -> str:
        return final_answer(self.messages)


def skills_prompt(skills: str | Sequence[Lesson | str]) -> str:
    """Render skills (text, or lessons in the library's own sentences) as a system-prompt section."""
    if isinstance(skills, str):
        body = skills
    else:
        body = "\n".join(f"- {s if isinstance(s, str) else sentence(s)}" for s in skills)
    return "## Skills\n" + body


def run_task(
    task: Task,
    model: Any,
    middleware: Sequence[AgentMiddleware] = (),
    *,
    recursion_limit: int | None = None,
    system_prompt: str | None = None,
    skills: str | Sequence[Lesson | str] | None = None,
    config: dict[str, Any] | None = None,
) -> RunResult:
    """Run ``task`` once with ``model`` in a fresh environment; returns ``(state, env, success)``.

    The agent is a real ``create_agent(model, env.tools(), system_prompt=..., middleware=...)``.
    A budget variant adds ``ToolCallLimitMiddleware(run_limit=task.max_tool_calls,
    exit_behavior="end")``. A question from the agent is answered by the scripted user within
    the same run. A recursion-limit stop counts as a failure (``state`` is ``None``).
    ``skills`` are appended to the system prompt (for runs without a skill-bank middleware).

    An environment that plays the user itself (a benchmark whose user turns are scripted)
    provides ``user_middleware()``, used instead of the scripted user; a task may set its own
    ``recursion_limit`` (default 100).
    """
    env = task.make_env()
    prompt = task.system_prompt if system_prompt is None else system_prompt
    if skills:
        prompt = "\n\n".join(p for p in (prompt, skills_prompt(skills)) if p)
    user = getattr(env, "user_middleware", None)
    stack: list[AgentMiddleware] = list(user()) if user is not None else [ScriptedUserMiddleware(env)]
    if task.max_tool_calls is not None:
        stack.append(ToolCallLimitMiddleware(run_limit=task.max_tool_calls, exit_behavior="end"))
    stack.extend(middleware)
    agent = create_agent(model, env.tools(), system_prompt=prompt, middleware=stack)
    limit = recursion_limit or getattr(task, "recursion_limit", None) or 100
    run_config: dict[str, Any] = {"recursion_limit": limit, **(config or {})}
    # Labels a capture middleware or callback can record with the trajectory.
    run_config["metadata"] = {
        "task_id": task.id, "task_type": task.kind, "family": task.family,
        "template": task.template, "split": task.split, **run_config.get("metadata", {}),
    }
    try:
        state = agent.invoke({"messages": [HumanMessage(task.input)]}, config=run_config)
    except GraphRecursionError:
        return RunResult(None, env, False)
    messages = state.get("messages", [])
    return RunResult(state, env, task.verify(env, final_answer(messages), messages))


class ReferenceModel(FakeMessagesListChatModel):
    """Replays a task's scripted correct run (or a mutated copy of it) as model turns."""

    def bind_tools(self, tools: Any, **kwargs: Any) -> "ReferenceModel":
        return self

    @classmethod
    def from_steps(cls, steps: Sequence[Any]) -> "ReferenceModel":
        responses: list[BaseMessage] = []
        for i, step in enumerate(steps):
            if step.kind == "call":
                responses.append(AIMessage(content="", tool_calls=[{
                    "name": step.tool, "args": dict(step.args), "id": f"ref_{i}", "type": "tool_call"}]))
            elif step.kind == "ask":
                text = step.text if step.text.endswith("?") else step.text + "?"
                responses.append(AIMessage(content=text))
            else:
                responses.append(AIMessage(content=step.text))
        return cls(responses=responses)

    @classmethod
    def for_task(cls, task: Task) -> "ReferenceModel":
        return cls.from_steps(task.reference)
