"""The option sets the adapters share: what to inject, how to record, when a run has had enough.

    SkillBankMiddleware(bank, k=5, verifier=check, max_tokens_per_run=20_000)   # the common options
    SkillBankMiddleware(bank, injection=InjectionConfig(k=3, token_budget=600),
                        recording=RecordingConfig(verifier=check),
                        budget=BudgetConfig(max_tokens_per_run=20_000))

The middleware takes all three; ``skillbank_prompt``, ``skillbank_hook``, ``inject_skills`` and
``SkillInjector`` take an :class:`InjectionConfig`; ``SkillBankCallbackHandler`` takes a
:class:`RecordingConfig`; ``RunBudgetMiddleware`` a :class:`BudgetConfig`. Each also names the
options users set most as explicit keywords (``k``, ``verifier``, ...), applied with
:func:`~skillbank._config_keywords.with_options`; any other option is set on the config. Defaults live here once.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime as dt
import functools
import time
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Callable, Iterable, Mapping

from skillbank.adapters.limits import Detectors, detect_refusal, find_result_error, find_unknown_fields
from skillbank.lessons import Delivery, LessonKind, spec_of
from skillbank.live._config import LiveConfig
from skillbank.models import Skill

__all__ = ["InjectionConfig", "RecordingConfig", "BudgetConfig", "MESSAGE_CHARS", "GENERAL_K",
           "LEAN_TOKEN_BUDGET"]

# A turn's query is the task plus the gist of each recent message, at most this many characters
# each: a MiniLM pass costs more the longer the text, and the gist is what retrieval reacts to.
MESSAGE_CHARS = 100
# General skills injected per turn at most: one per kind of general lesson the rule distiller
# writes, each a few dozen tokens.
GENERAL_K = 5
# The cap a lean block stays within: about two learned skills with the header, for a small
# model that follows a short block better than a long one. A starting point to measure against
# (benchmarks/bench_real_model.py), not a measured optimum.
LEAN_TOKEN_BUDGET = 500


def _tuple(value: Iterable[str] | None) -> tuple[str, ...] | None:
    if value is None:
        return None
    if isinstance(value, str):
        return (value,)
    return tuple(value)


@dataclass(frozen=True)
class InjectionConfig:
    """What goes into the system message on each model turn.

    ``k`` retrieved skills at most, chosen from the task and the last ``history`` messages (the
    gist of each, ``message_chars`` at most), within ``token_budget`` tokens for the whole block;
    ``pinned`` skills (ids or names) always go first, then up to ``general_k`` general skills
    (lessons generalised across tools, injected on every turn; ``0`` leaves them to retrieval).
    ``kinds``, ``tags``, ``tools``, ``min_score`` and ``filter(skill) -> bool`` narrow the choice.
    ``match_toolset`` (on by default) keeps out skills learned by agents with a different set of
    tools than the agent in front of it (see :func:`~skillbank.adapters.injection.fits_toolset`;
    it applies where the adapter sees the agent's tools, as the middleware does).

    ``lean`` is the block for a small model, one switch: general skills compete by relevance
    like any other skill instead of riding on every turn (``general_k`` counts as ``0``), and
    the block stays within ``LEAN_TOKEN_BUDGET`` tokens or ``token_budget``, whichever is
    smaller. ``lean=True`` is ``general_k=0, token_budget=min(token_budget, LEAN_TOKEN_BUDGET)``;
    to measure another cap, set those two instead.

    ``reminders`` (read by :class:`~skillbank.adapters._guidance_middleware.SkillGuidanceMiddleware`,
    part of ``SkillBankMiddleware``): a tool call that breaks a lesson of the run's block where it
    can be checked at the call is answered with a reminder that asks the model to act (the call
    is not run), at most once per lesson per run, and recorded as a ``reminder`` step; a final
    reply the block contradicts is asked again once. The model's own call is never rewritten and
    no answer is computed for it. ``reminders=False`` leaves every tool call to run.

    ``deliver``: where each lesson kind reaches the model, ``{kind: "prompt" | "tool"}``;
    ``"tool"`` (with ``reminders``) also checks its tool calls. A kind left out takes its
    registered default (:class:`~skillbank.lessons.KindSpec`, ``delivery``): at the tool for the
    kinds a call can break without reading the user's words in one language, the prompt only
    for the rest (``stated_time``, ``stated_date``, whose check reads English times and dates).

    ``examples``: a skill whose lessons carry worked examples (written by a round with
    ``EvolutionConfig.examples_per_lesson``) is shown with the one whose request is most like
    the run's, inside its block and counted in the token budget.

    ``today``: the date the agent takes as today (a ``date`` or ISO text), what "tomorrow" in a
    request means to the checks of ``stated_date`` lessons; ``None`` (the default) is the
    machine's date when the call is checked. Set it where the agent's today is not the
    machine's (a replay, a test world, a user in another time zone).

    ``live``: randomized exposure (:class:`~skillbank.live._config.LiveConfig`): each run shows or
    holds back every eligible canary (and, with a holdout, every eligible active skill) by a
    draw of its own, recorded for the live monitor. ``None`` (the default): canaries only, at the
    default exposure; active skills are always shown.

    Attributes:
        k: Retrieved skills per turn at most (pinned and general skills come on top).
        token_budget: The block's cap in tokens (:func:`~skillbank.retrieval.approx_tokens`);
            ``None``: no cap.
        history: How many recent non-system messages join the task in the turn's query.
        message_chars: The most characters of each such message the query takes.
        pinned: Skill ids or names injected first on every turn.
        general_k: General skills (tagged ``general``) injected on every turn at most; ``0``:
            they are retrieved like any other.
        kinds: Retrieved and general skills only of these kinds (pinned ones always go in);
            ``None``: any kind.
        tags: Retrieved and general skills only with one of these tags; ``None``: any.
        tools: Retrieved and general skills only naming one of these tools; ``None``: any.
        min_score: The lowest raw similarity a retrieved skill may have.
        filter: ``filter(skill) -> bool``: retrieved and general skills only where it returns
            true (one that raises counts as false).
        match_toolset: Keep out skills learned by agents with none of this agent's tools.
        lean: The small-model block: general skills retrieved, the cap at most ``LEAN_TOKEN_BUDGET``.
        reminders: Answer a tool call or final reply that breaks a lesson with a reminder.
        deliver: Where each lesson kind reaches the model, ``{kind: "prompt" | "tool"}``.
        examples: Show each skill with the worked example most like the run's request.
        today: The date the agent takes as today (a ``date`` or ISO text); ``None``: the machine's.
        live: Randomized exposure of canaries (and, with a holdout, active skills); ``None``:
            canaries only, at the default exposure.

    Raises:
        ValueError: ``deliver`` names an unknown lesson kind, a place other than ``"prompt"`` or
            ``"tool"``, or ``"tool"`` for a kind no call breaks; ``today`` is not a date.
    """

    k: int = 5
    token_budget: int | None = 1200
    history: int = 4
    message_chars: int = MESSAGE_CHARS
    pinned: tuple[str, ...] = ()
    general_k: int = GENERAL_K
    kinds: tuple[str, ...] | None = None
    tags: tuple[str, ...] | None = None
    tools: tuple[str, ...] | None = None
    min_score: float = 0.0
    filter: Callable[[Skill], bool] | None = None
    match_toolset: bool = True
    lean: bool = False
    reminders: bool = True
    deliver: Mapping[str, Delivery] = field(default_factory=dict)
    examples: bool = False
    today: dt.date | None = None
    live: LiveConfig | None = None

    def __reduce__(self) -> tuple[Any, ...]:
        # ``deliver`` is kept read-only in a mappingproxy, which pickle refuses: a config is
        # pickled as the call that builds it again (a process pool's trials take one).
        fields = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        return functools.partial(InjectionConfig, **{**fields, "deliver": dict(self.deliver)}), ()

    @property
    def standing_general_k(self) -> int:
        """General skills injected on every turn: none in a lean block."""
        return 0 if self.lean else self.general_k

    def checked_at_tool(self, kind: LessonKind | str) -> bool:
        """Whether a tool call that breaks a lesson of ``kind`` is answered with a reminder.

        Args:
            kind: A registered lesson kind.

        Returns:
            ``True`` when reminders are on, the kind has a tool-call check and its lessons are
            delivered at the tool (``deliver``, else the kind's default delivery).

        Raises:
            ValueError: ``kind`` is no registered lesson kind.
        """
        spec = spec_of(kind)
        if not self.reminders or spec.call_check is None:
            return False
        return self.deliver.get(spec.name, spec.delivery) == "tool"

    @property
    def run_today(self) -> dt.date:
        """The date the agent takes as today, now."""
        return self.today or dt.date.today()

    @property
    def block_token_budget(self) -> int | None:
        """The token cap of the whole block (``None``: none)."""
        if not self.lean:
            return self.token_budget
        return LEAN_TOKEN_BUDGET if self.token_budget is None else min(self.token_budget, LEAN_TOKEN_BUDGET)

    def __post_init__(self) -> None:
        deliver = {}
        for kind, where in dict(self.deliver or {}).items():
            name = spec_of(kind).name  # an unknown kind raises, naming the known ones
            if where not in ("prompt", "tool"):
                raise ValueError(f"deliver[{name!r}] must be 'prompt' or 'tool', not {where!r}")
            if where == "tool" and spec_of(kind).call_check is None:
                raise ValueError(f"a {name} lesson cannot be checked at the tool (no call breaks it); "
                                 "deliver it in the prompt")
            deliver[name] = where
        object.__setattr__(self, "deliver", MappingProxyType(deliver))
        object.__setattr__(self, "today", a_date(self.today, "InjectionConfig.today"))
        # Any iterable is accepted; stored as tuples so a config is hashable and never shared mutably.
        for name in ("kinds", "tags", "tools"):
            object.__setattr__(self, name, _tuple(getattr(self, name)))
        object.__setattr__(self, "pinned", _tuple(self.pinned) or ())


@dataclass(frozen=True)
class RecordingConfig:
    """How a run is recorded and labelled.

    Outcome: ``verifier(final_state)`` returning a bool, a score in [0, 1] or an ``Outcome``
    (an :class:`~skillbank.adapters.judge.LLMJudge` works too, as ``verifier`` or ``judge``; not
    both: giving both is an error). An async verifier (``async def``) is awaited to completion.
    A run that ends at a limit is labelled even when the graph raised: the verifier gets the
    last state the adapter saw, and without a verifier (or when it raises) the run is a failure
    with source ``limit:<type>``. Other runs without a verifier stay unlabelled; label them
    later with ``bank.record_outcome(trajectory_id, ...)``.

    Run budgets are a :class:`BudgetConfig`'s (a recording records the limit event a budget's
    stop carries). ``clock`` (default ``time.monotonic``) is what step latencies are measured
    with. ``today`` (a ``date`` or ISO text; default ``None``, the machine's date when a run
    begins) is stored on every trajectory as the date its agent took as today, so a lesson
    about the dates requests said reads "tomorrow" as the run meant it (``SkillBankMiddleware``
    passes one ``today`` to both its recording and its injection).

    ``scrubber`` (default ``bank.scrubber``) is applied to every text stored;
    ``unknown_field_detector(text)``, ``refusal_detector(text)`` and ``result_error_detector(text)``
    (a tool that reports an error in its answer) replace the default detectors, ``None``
    switches one off. ``labels``, ``task_id``, ``task_type`` are stored on
    every trajectory (per run: ``skillbank_task_id``, ``skillbank_task_type`` and
    ``skillbank_labels`` in the invocation's ``config["metadata"]``).

    Attributes:
        verifier: ``verifier(final_state)`` -> a bool, a score in [0, 1] or an ``Outcome``;
            ``None``: runs stay unlabelled (unless they end at a limit).
        judge: An :class:`~skillbank.adapters.judge.LLMJudge` that labels runs, instead of a
            ``verifier``.
        scrubber: Applied to every text stored; ``None``: the bank's.
        unknown_field_detector: Finds an unknown field in a tool's answer; ``None``: off.
        refusal_detector: Finds a policy refusal in a text; ``None``: off.
        result_error_detector: Finds an error a tool reports in its answer; ``None``: off.
        labels: Free tags stored on every trajectory.
        task_id: The task id stored on every trajectory.
        task_type: The task type stored on every trajectory.
        model_name: The model name stored on every trajectory; ``None``: the name the first
            model call reports.
        flush_every: Completed steps buffered before a write (1: each at once).
        clock: What step latencies are measured with (seconds).
        today: The date stored as the run's today (a ``date`` or ISO text); ``None``: the
            machine's date when the run begins.

    Raises:
        ValueError: Both ``verifier`` and ``judge`` given; ``today`` is not a date.
        TypeError: ``max_tokens_per_run`` or ``max_seconds_per_run`` given (they are a
            :class:`BudgetConfig`'s).
    """

    verifier: Callable[[Any], Any] | None = None
    judge: Any = None
    scrubber: Callable[[str], str] | None = None
    unknown_field_detector: Callable[[str], Any] | None = find_unknown_fields
    refusal_detector: Callable[[str], Any] | None = detect_refusal
    result_error_detector: Callable[[str], Any] | None = find_result_error
    labels: Mapping[str, str] = field(default_factory=dict)
    task_id: str | None = None
    task_type: str | None = None
    model_name: str | None = None
    flush_every: int = 1
    clock: Callable[[], float] = time.monotonic
    today: dt.date | None = None
    # Not options any more: given here, they fail with where they went (BudgetConfig).
    max_tokens_per_run: dataclasses.InitVar[Any] = None
    max_seconds_per_run: dataclasses.InitVar[Any] = None

    def __post_init__(self, max_tokens_per_run: Any = None, max_seconds_per_run: Any = None) -> None:
        object.__setattr__(self, "today", a_date(self.today, "RecordingConfig.today"))
        given = {"max_tokens_per_run": max_tokens_per_run, "max_seconds_per_run": max_seconds_per_run}
        _refuse_moved({k: v for k, v in given.items() if v is not None}, "RecordingConfig")
        # Two scorers would disagree sooner or later, and which one labels the run would be a
        # rule nobody reads: one scorer per run (an LLMJudge is a verifier too).
        if self.verifier is not None and self.judge is not None:
            raise ValueError("give verifier= or judge=, not both: one scorer labels a run (to combine "
                             "them, pass one verifier that calls both and decides)")

    def detectors(self) -> Detectors:
        """The content detectors a recorder runs on tool results and answers.

        Returns:
            This config's unknown-field, refusal and result-error detectors (``None`` for one
            switched off).
        """
        return Detectors(unknown_fields=self.unknown_field_detector, refusal=self.refusal_detector,
                         result_error=self.result_error_detector)

    def scorer(self) -> tuple[Any, str] | None:
        """The callable that labels a finished run, and the source its outcomes are stored with.

        Returns:
            ``(verifier, source)`` or ``(judge, source)``, the source being the scorer's
            ``source`` attribute (else ``verifier`` / ``judge``); ``None`` when neither is set.
        """
        if self.verifier is not None:
            return self.verifier, getattr(self.verifier, "source", "verifier")
        if self.judge is not None:
            return self.judge, getattr(self.judge, "source", "judge")
        return None


@dataclass(frozen=True)
class BudgetConfig:
    """When a run has had enough: ``max_tokens_per_run`` (input + output tokens its model calls
    reported) and ``max_seconds_per_run`` (since its first model call, measured with ``clock``,
    default ``time.monotonic``); ``None`` is no budget. A run over one is ended before its next
    model call with a final message saying so, which carries a ``token_budget`` /
    ``time_budget`` limit for whoever records the run.

    Attributes:
        max_tokens_per_run: The most input + output tokens a run's model calls may report;
            ``None``: no budget.
        max_seconds_per_run: The most seconds since the run's first model call; ``None``: no
            budget.
        clock: What ``max_seconds_per_run`` is measured with (seconds).
    """

    max_tokens_per_run: int | None = None
    max_seconds_per_run: float | None = None
    clock: Callable[[], float] = time.monotonic

    @property
    def enabled(self) -> bool:
        """Whether either budget is set."""
        return self.max_tokens_per_run is not None or self.max_seconds_per_run is not None


# Options that moved from one config to another: named in the error, so the fix is one read away.
_MOVED = {"max_tokens_per_run": "BudgetConfig", "max_seconds_per_run": "BudgetConfig"}


def _refuse_moved(options: Mapping[str, Any], owner: str) -> None:
    moved = sorted(name for name in options if name in _MOVED)
    if moved:
        raise TypeError(f"{owner} got {', '.join(moved)}: run budgets moved from RecordingConfig to "
                        f"BudgetConfig; give them to SkillBankMiddleware (budget=BudgetConfig(...) or "
                        f"as keywords) or to RunBudgetMiddleware")


def a_date(value: Any, owner: str) -> dt.date | None:
    """``value`` as a date: a ``date`` as it is, ISO text read, ``None`` kept."""
    if value is None or (isinstance(value, dt.date) and not isinstance(value, dt.datetime)):
        return value
    if isinstance(value, str):
        with contextlib.suppress(ValueError):  # not ISO: the error below says what is
            return dt.date.fromisoformat(value)
    raise ValueError(f"{owner} must be a date or ISO text such as '2027-03-08', not {value!r}")
