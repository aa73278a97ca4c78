"""Pydantic records: skills and their versions, trajectories, steps, limit events and outcomes.

These are the shapes that cross module boundaries. Storage rows are converted to and from these
records in ``skillbank.store``; nothing outside the store sees a raw row.
"""

from __future__ import annotations

import re
import uuid
from datetime import date, datetime, timezone
from enum import Enum
from typing import Any, Mapping

from pydantic import BaseModel, ConfigDict, Field, SerializeAsAny, ValidationInfo, field_validator, model_validator

from skillbank._hashing import content_hash
from skillbank.lessons import Guidance, Lesson, parse_lesson, render_body

__all__ = [
    "SkillKind",
    "SkillStatus",
    "SkillContent",
    "SkillStats",
    "Skill",
    "SkillVersion",
    "LimitType",
    "LimitEvent",
    "Step",
    "ANSWER_REMINDER_STEP",
    "Injection",
    "Outcome",
    "Trajectory",
    "utcnow",
    "error_message",
    "new_id",
    "NAME_MAX",
    "DESCRIPTION_MAX",
    "BODY_MAX",
    "GENERAL_TAG",
]

# Limits follow the Agent Skills SKILL.md spec for name and description; the body cap keeps one
# skill from eating a prompt.
NAME_MAX = 64
DESCRIPTION_MAX = 1024
BODY_MAX = 20_000
_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
_TOOL_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_.\-]{0,127}$")


def error_message(err: Mapping[str, Any]) -> str:
    """One pydantic error's message without pydantic's "Value error, " style prefix."""
    msg = str(err.get("msg", "invalid"))
    for prefix in ("Value error, ", "Assertion failed, "):
        msg = msg.removeprefix(prefix)
    return msg


def utcnow() -> datetime:
    return datetime.now(timezone.utc)


def new_id(prefix: str) -> str:
    """Short random ids with a readable prefix (``sk_``, ``tr_``); random so processes never collide."""
    return f"{prefix}_{uuid.uuid4().hex[:16]}"


class SkillKind(str, Enum):
    """What sort of lesson a skill teaches.

    Attributes:
        procedure: How to do a recurring task.
        guard: What to do at a capability or budget limit.
        policy: A rule that constrains what the agent may do.
        pitfall: A mistake to avoid.
    """

    procedure = "procedure"
    guard = "guard"
    policy = "policy"
    pitfall = "pitfall"


# Skills with this tag hold a lesson generalised across tools (``skillbank.evolution._general``):
# they apply to any request, so the injector adds them to every turn instead of retrieving them.
GENERAL_TAG = "general"


class SkillStatus(str, Enum):
    """Where a skill stands in its life: only ``active`` skills are injected.

    Attributes:
        candidate: Proposed, not yet injected.
        active: Retrievable and injected.
        retired: Kept for history, never injected.
        quarantined: Flagged by a lint (the bank's screen); needs explicit human promotion.
    """

    candidate = "candidate"
    active = "active"
    retired = "retired"
    quarantined = "quarantined"


class SkillContent(BaseModel):
    """The part of a skill that versions cover and that the content hash is computed over.

    ``lessons`` are what the skill teaches, as data (``skillbank.lessons``); when given, the
    body is rendered from them (a body passed alongside must be that rendering). Without them
    the body is the skill's one lesson, free guidance (``all_lessons``). ``toolset`` lists the
    tools the agents it was learned from had: the injector keeps a skill away from an agent
    that has none of them. Both are hashed only when set, so versions written before they
    existed keep their hashes.

    Attributes:
        name: The skill's unique name: lower-case letters, digits and single hyphens.
        description: When the skill applies (what retrieval embeds, with the name); not empty.
        body: The guidance in markdown; rendered from ``lessons`` when they are given.
        kind: What sort of lesson it is (:class:`SkillKind`).
        tools: The tools the skill concerns (duplicates dropped, order kept).
        tags: Free labels, lower-cased (``general``: injected on every turn).
        lessons: What the skill teaches, as typed lessons; empty for a hand-written body.
        toolset: The tools the agents it was learned from had, sorted; empty: any agent.

    Raises:
        pydantic.ValidationError: On an invalid name, tool name, an empty or too long
            description or body, or a body that does not match its lessons.
    """

    model_config = ConfigDict(frozen=True)

    name: str
    description: str
    body: str = ""
    kind: SkillKind = SkillKind.procedure
    tools: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    lessons: tuple[SerializeAsAny[Lesson], ...] = ()
    toolset: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _render(cls, data: Any, info: ValidationInfo) -> Any:
        if isinstance(data, dict) and data.get("lessons"):
            lessons = tuple(parse_lesson(x) for x in data["lessons"])
            given = (data.get("body") or "").strip()
            # A stored version keeps the body it was hashed with, whatever today's renderer says.
            if given and (info.context or {}).get("stored"):
                return {**data, "lessons": lessons}
            rendered = render_body(lessons)
            if given and given != rendered.strip():
                raise ValueError("body does not match its lessons: a skill with lessons has the body "
                                 "rendered from them; change the lessons, or drop them to keep a "
                                 "hand-written body")
            data = {**data, "lessons": lessons, "body": rendered}
        return data

    @model_validator(mode="after")
    def _has_something_to_say(self) -> "SkillContent":
        if not self.body.strip():
            raise ValueError("the skill says nothing: give it a body (free guidance in markdown) "
                             "or lessons")
        return self

    @classmethod
    def stored(cls, data: dict[str, Any]) -> "SkillContent":
        """A version as it was written (its body is not re-rendered): for the store.

        Args:
            data: The stored content's fields, as :meth:`model_dump` wrote them.

        Returns:
            The content, validated.

        Raises:
            pydantic.ValidationError: ``data`` is no valid skill content.
        """
        return cls.model_validate(data, context={"stored": True})

    @field_validator("name")
    @classmethod
    def _name(cls, v: str) -> str:
        if not v or len(v) > NAME_MAX or not _NAME_RE.match(v):
            raise ValueError(
                f"invalid skill name {v!r}: use lower-case letters, digits and single hyphens, "
                f"at most {NAME_MAX} characters (e.g. 'decline-missing-tool')"
            )
        return v

    @field_validator("description")
    @classmethod
    def _description(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError("description is empty: say when the skill applies")
        if len(v) > DESCRIPTION_MAX:
            raise ValueError(f"description has {len(v)} characters; the limit is {DESCRIPTION_MAX}")
        return v

    @field_validator("body")
    @classmethod
    def _body(cls, v: str) -> str:
        v = v.strip()
        if not v:
            raise ValueError("body is empty: write the skill's instructions in markdown")
        if len(v) > BODY_MAX:
            raise ValueError(f"body has {len(v)} characters; the limit is {BODY_MAX}")
        return v

    @field_validator("tools")
    @classmethod
    def _tools(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        for tool in v:
            if not _TOOL_RE.match(tool):
                raise ValueError(f"invalid tool name {tool!r}")
        return tuple(dict.fromkeys(v))

    @field_validator("tags")
    @classmethod
    def _tags(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        cleaned = [t.strip().lower() for t in v if t.strip()]
        return tuple(dict.fromkeys(cleaned))

    @field_validator("toolset")
    @classmethod
    def _toolset(cls, v: tuple[str, ...]) -> tuple[str, ...]:
        return tuple(sorted(set(v)))

    @property
    def all_lessons(self) -> tuple[Lesson, ...]:
        """The lessons, or for a skill without structured ones its body as one guidance lesson."""
        return self.lessons or (Guidance(text=self.body),)

    def hash_payload(self) -> dict[str, Any]:
        """What :meth:`hash` hashes.

        Returns:
            The content as JSON-ready data (``model_dump(mode="json")``), without ``lessons``
            or ``toolset`` when they are empty.
        """
        data = self.model_dump(mode="json")
        for key in ("lessons", "toolset"):
            if not data[key]:
                del data[key]
        return data

    def hash(self) -> str:
        """The content's identity: equal content, equal hash.

        Returns:
            The content hash of :meth:`hash_payload`.
        """
        return content_hash(self.hash_payload())

    def embedding_text(self) -> str:
        """What the index embeds: when it applies weighs most, then the tools it concerns.

        Returns:
            The name (hyphens as spaces), the description, then ``tools: ...`` and ``tags: ...``
            when there are any, one a line.
        """
        parts = [self.name.replace("-", " "), self.description]
        if self.tools:
            parts.append("tools: " + ", ".join(self.tools))
        if self.tags:
            parts.append("tags: " + ", ".join(self.tags))
        return "\n".join(parts)


class SkillStats(BaseModel):
    """Usage counted from labelled trajectories in which the skill was injected."""

    model_config = ConfigDict(frozen=True)

    uses: int = 0
    successes: int = 0
    failures: int = 0
    last_used_at: datetime | None = None

    @property
    def success_rate(self) -> float | None:
        labelled = self.successes + self.failures
        return self.successes / labelled if labelled else None

    @property
    def usefulness(self) -> float:
        """Laplace-smoothed success rate: 0.5 with no evidence, moving toward the measured rate."""
        return (self.successes + 1) / (self.successes + self.failures + 2)


class Skill(BaseModel):
    """The current state of a skill: its latest version's content plus status and statistics.

    A snapshot, frozen: the bank changes a skill (``update``, ``retire``, ...) and a later read
    shows the change; reads share one object per state.

    Attributes:
        id: The skill's id (``sk_...``), stable across versions.
        content: The current version's content (``name``, ``body``, ... are shortcuts to it).
        status: Where the skill stands (only ``active`` skills are injected).
        pinned: Whether pruning and evolution rounds leave it alone.
        version: The current version's number, from 1.
        content_hash: The hash of ``content`` (``sha256:`` and the digest of its canonical JSON).
        created_at: When version 1 was written (UTC).
        updated_at: When the current version was written (UTC).
        stats: Uses, successes and failures counted from labelled runs that injected it.
        note: Why it is quarantined or retired, shown to reviewers; ``None``: no note.
    """

    model_config = ConfigDict(frozen=True)

    id: str
    content: SkillContent
    status: SkillStatus
    pinned: bool = False
    version: int
    content_hash: str
    created_at: datetime
    updated_at: datetime
    stats: SkillStats = Field(default_factory=SkillStats)
    note: str | None = None  # why it is quarantined/retired, shown to reviewers

    # Convenience accessors so callers can write skill.name rather than skill.content.name.
    @property
    def name(self) -> str:
        """The current version's name (``content.name``)."""
        return self.content.name

    @property
    def description(self) -> str:
        """The current version's description (``content.description``)."""
        return self.content.description

    @property
    def body(self) -> str:
        """The current version's body (``content.body``)."""
        return self.content.body

    @property
    def kind(self) -> SkillKind:
        """The current version's kind (``content.kind``)."""
        return self.content.kind

    @property
    def tools(self) -> tuple[str, ...]:
        """The tools the current version concerns (``content.tools``)."""
        return self.content.tools

    @property
    def tags(self) -> tuple[str, ...]:
        """The current version's tags (``content.tags``)."""
        return self.content.tags


class SkillVersion(BaseModel):
    """One immutable version. Rollback appends a new version equal in content to an old one.

    Attributes:
        skill_id: The skill it is a version of.
        version: Its number, from 1.
        content: The skill's content at this version.
        status: The skill's status at this version.
        pinned: Whether the skill was pinned at this version.
        content_hash: The hash of ``content``.
        parent_hash: The previous version's hash in the history chain; ``None`` for version 1.
        author: Who wrote it (``human``, ``import``, ``prune``, an evolution round's name, ...).
        reason: Why it was written.
        provenance: Where it came from: trajectory ids and source markers.
        created_at: When it was written (UTC).
    """

    skill_id: str
    version: int
    content: SkillContent
    status: SkillStatus
    pinned: bool = False
    content_hash: str
    parent_hash: str | None
    author: str
    reason: str
    provenance: tuple[str, ...] = ()
    created_at: datetime


class LimitType(str, Enum):
    """The limit a run hit; each is a budget limit or a capability limit (``category``).

    Attributes:
        recursion_limit: The graph's recursion limit (budget).
        model_call_limit: A cap on model calls per run (budget).
        tool_call_limit: A cap on tool calls per run or per tool (budget).
        step_limit: A cap on the agent's steps (budget).
        token_budget: The run's token budget (budget).
        time_budget: The run's time budget (budget).
        context_overflow: The model's context window (budget).
        rate_limit: The provider's rate limit (budget).
        missing_tool: A call to a tool the agent does not have (capability).
        missing_parameter: An argument the tool's schema has no parameter for (capability).
        invalid_tool_args: Arguments the tool rejected, such as a required one missing (capability).
        unknown_field: A JSON tool result with a field that is null or says it is unknown
            (capability).
        tool_error: An error the tool raised or reported in its answer (capability).
        policy_refusal: A refusal by policy, in a tool's result or the final answer (capability).
    """

    # budget limits
    recursion_limit = "recursion_limit"
    model_call_limit = "model_call_limit"
    tool_call_limit = "tool_call_limit"
    step_limit = "step_limit"
    token_budget = "token_budget"
    time_budget = "time_budget"
    context_overflow = "context_overflow"
    rate_limit = "rate_limit"
    # capability limits
    missing_tool = "missing_tool"
    missing_parameter = "missing_parameter"
    invalid_tool_args = "invalid_tool_args"
    unknown_field = "unknown_field"
    tool_error = "tool_error"
    policy_refusal = "policy_refusal"

    @property
    def category(self) -> str:
        return "capability" if self in _CAPABILITY else "budget"


_CAPABILITY = {
    LimitType.missing_tool,
    LimitType.missing_parameter,
    LimitType.invalid_tool_args,
    LimitType.unknown_field,
    LimitType.tool_error,
    LimitType.policy_refusal,
}


class LimitEvent(BaseModel):
    """A limit a run hit, at one step.

    Attributes:
        type: Which limit (its ``category``: budget or capability).
        step: The index of the step at which it was hit.
        detail: What happened, as the error or the tool's answer said it.
        tool: The tool concerned; ``None`` (a blank name too): none.
        data: Structured detail the detector found (e.g. the unknown field and the known ones).
    """

    type: LimitType
    step: int
    detail: str
    tool: str | None = None
    data: dict[str, Any] = Field(default_factory=dict)

    @field_validator("tool")
    @classmethod
    def _no_blank_tool(cls, v: str | None) -> str | None:
        # A blank name is no tool (a real run carried `policy_refusal:` beside
        # `policy_refusal:set_thermostat`, two situations for one): stored as None.
        return v.strip() or None if v is not None else None

    @property
    def category(self) -> str:
        """The category of the event's limit type (``type.category``)."""
        return self.type.category


# The kind of step a final reply asked again with a lesson's note is stored as (see Step.kind).
ANSWER_REMINDER_STEP = "answer_reminder"


class Step(BaseModel):
    """A model turn or a tool call, in the order they happened.

    Attributes:
        index: Its position in the run, from 0.
        kind: ``model``, ``tool``, ``reminder`` (a tool call answered with a lesson, not run) or
            ``answer_reminder`` (a final reply asked again with a lesson's note).
        started_at: When it began (UTC).
        latency_ms: How long it took, in milliseconds; ``None``: not measured.
        content: A model turn's text.
        tool_calls: A model turn's tool calls (``name``, ``args``, ``id``).
        input_messages: How many messages the model was given.
        input_tokens: Prompt tokens the model reported.
        output_tokens: Completion tokens the model reported.
        tools_offered: The tool names offered, when they differ from the previous model turn;
            ``None``: the same as before.
        tool: A tool call's tool name.
        args: A tool call's arguments.
        result: A tool call's result text.
        error: A tool call's error text.
        reason: Why a reminder's lesson was given (e.g. ``repeated guidance``).
    """

    index: int
    # "model" | "tool" | "reminder" (a tool call answered with a lesson, not run) |
    # "answer_reminder" (a final reply asked again with a lesson's note before it stood)
    kind: str
    started_at: datetime
    latency_ms: float | None = None
    # model turns
    content: str | None = None
    tool_calls: list[dict[str, Any]] = Field(default_factory=list)
    input_messages: int | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    # The tools the model was offered, recorded when they differ from the previous model turn
    # (``None``: the same as before): which toolset the run's lessons were learned with.
    tools_offered: list[str] | None = None
    # tool calls
    tool: str | None = None
    args: dict[str, Any] | None = None
    result: str | None = None
    error: str | None = None
    # reminders: why the lesson was given (an answer reminder's reason, e.g. "repeated guidance")
    reason: str | None = None


class Injection(BaseModel):
    """A skill version that was rendered into the system message at one model turn.

    Attributes:
        step: The index of the step it reached the model at (a model turn, or a reminder that
            gave one of its lessons).
        skill_id: The skill injected.
        version: The version of it injected.
        rank: Its position in the block, from 0 (0 for a reminder).
        score: Its score when chosen (1.0 for a pinned or general skill and for a reminder).
    """

    step: int
    skill_id: str
    version: int
    rank: int
    score: float


class Outcome(BaseModel):
    """How a run ended, as its verifier, a judge or a person labelled it.

    Attributes:
        success: Whether the run succeeded; ``None``: not said.
        score: A score in [0, 1]; ``None``: none given.
        source: Who labelled it: ``verifier``, ``manual``, ``judge`` or ``limit:<type>``.
        note: Free text about the label.
        recorded_at: When it was recorded (UTC).
    """

    success: bool | None = None
    score: float | None = None
    source: str = "manual"
    note: str | None = None
    recorded_at: datetime = Field(default_factory=utcnow)


class Trajectory(BaseModel):
    """One recorded agent run: its steps, the limits it hit, the skills injected and its outcome.

    Attributes:
        id: The run's id (``tr_...``).
        task: The request the run served (scrubbed).
        task_id: The caller's id for the task; ``None``: none given.
        task_type: The caller's type of task (e.g. an environment family).
        labels: Free tags (arm, split, ...).
        model: The model's name.
        bank_snapshot: The bank's snapshot id when the run began.
        status: ``running``, ``complete`` or ``incomplete`` (the run raised; ``error`` says what).
        error: What the graph raised, if it did.
        final_answer: The agent's last reply.
        started_at: When the run began (UTC).
        ended_at: When it ended (UTC); ``None`` while running.
        today: The date its agent took as today; ``None`` for runs recorded before it was kept.
        steps: Its model turns and tool calls, in order.
        limit_events: The limits it hit.
        injections: The skill versions injected, per model turn.
        outcome: Its label; ``None``: unlabelled.
    """

    id: str = Field(default_factory=lambda: new_id("tr"))
    task: str = ""
    task_id: str | None = None
    task_type: str | None = None
    labels: dict[str, str] = Field(default_factory=dict)
    model: str | None = None
    bank_snapshot: str | None = None
    status: str = "running"
    error: str | None = None
    final_answer: str | None = None
    started_at: datetime = Field(default_factory=utcnow)
    ended_at: datetime | None = None
    # The date the run's agent took as today (RecordingConfig.today; by default the machine's date
    # when the run began): what "tomorrow" in its request meant. None for runs recorded before.
    today: date | None = None
    steps: list[Step] = Field(default_factory=list)
    limit_events: list[LimitEvent] = Field(default_factory=list)
    injections: list[Injection] = Field(default_factory=list)
    outcome: Outcome | None = None

    @property
    def input_tokens(self) -> int:
        """Input tokens the run's steps reported, summed (a step that reported none counts 0)."""
        return sum(s.input_tokens or 0 for s in self.steps)

    @property
    def output_tokens(self) -> int:
        """Output tokens the run's steps reported, summed (a step that reported none counts 0)."""
        return sum(s.output_tokens or 0 for s in self.steps)

    @property
    def model_turns(self) -> int:
        """The run's model steps, counted."""
        return sum(1 for s in self.steps if s.kind == "model")

    @property
    def success(self) -> bool | None:
        """The outcome's ``success``; ``None`` while the run is unlabelled."""
        return self.outcome.success if self.outcome else None
