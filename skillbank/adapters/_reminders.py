"""Reminders at the tool boundary: a call that breaks a shown lesson is answered, not run.

Where a lesson can be checked at the call itself (its kind registers a
:class:`~skillbank.lessons.CallCheck`, and ``InjectionConfig`` delivers it at the tool), the
guidance middleware answers a call that breaks it with a reminder that asks the model to act
(the next call to make, the question to ask) instead of running it, at most once per lesson per
run. The call the model made is never changed and never run in another form; a second call runs.

Which calls a lesson is checked on comes from its kind (``CallCheck.scope``): calls of the tool
it names, every call, or calls of a tool the agent lacks. A check a lesson asks for is never held
back (``CallCheck.never_held``). A kind whose reminder holds the model's whole turn
(``CallCheck.holds_turn``) answers every call of that turn with it. Everything here is data at
hand: the per-call cost is a dict lookup for the tool and a few set lookups.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable, Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from skillbank.adapters.limits import unknown_parameters
from skillbank.adapters._tools import DeclaredParameters
from skillbank._hashing import canonical_json
from skillbank.adapters._interventions import Intervention
from skillbank.lessons import Lesson, LessonKind, sentence, spec_of
from skillbank.messages import state_messages
from skillbank.queries import SkillHit
from skillbank._units import converts, numbers_in

if TYPE_CHECKING:  # langchain.agents and langchain_core.tools are slow to import; the CLI's search needs neither
    from langchain.agents.middleware import ToolCallRequest
    from langchain_core.tools import BaseTool

    from skillbank.adapters._tools import OfferedTool

__all__ = ["Reminder", "ReminderRules", "CallHistory", "ToolReminders", "reminder_text", "words", "call_key",
           "user_words"]

_WORD = re.compile(r"[^\W_]+")  # words and numbers: what a value and a request are compared by
_NAME = re.compile(r"[^\W\d_]+(?:[ '’.-][^\W\d_]+)*")  # letters only: a place, a person, a thing
# A word the user capitalised inside a sentence (not its first word), or written in a script
# other than Latin: how a request names a place or a person.
_NAMED = re.compile(r"(?<![.!?]\s)(?<!^)\b[^\W\d_a-z][^\W\d_]+|\b[^\W\d_\u0000-\u024f]+", re.M)


def words(text: str) -> list[str]:
    """The words and numbers of ``text``, lower-cased: what a value and a request (and, at the
    answer, a reply and the guidance) are compared by."""
    return _WORD.findall(text.lower())


def _named(text: str) -> list[str]:
    return [w for w in _NAMED.findall(text.strip()) if not w.isupper() or len(w) > 1]


def _fold(text: str) -> str:
    """Latin letters without accents, lower case ("" for a word in another script)."""
    decomposed = unicodedata.normalize("NFKD", text.lower())
    return "".join(c for c in decomposed if "a" <= c <= "z")


def _spelled_alike(a: str, b: str) -> bool:
    # Wien/Vienna 0.60, München/Munich 0.62, Ann/Bob 0.0: a rendering keeps about half its letters.
    return difflib.SequenceMatcher(None, a, b).ratio() >= 0.5


@dataclass(frozen=True)
class Reminder:
    """The lesson a call broke and the skill version it came from."""

    skill_id: str
    version: int
    lesson: Lesson
    key: tuple[str, str] = field(init=False)  # (skill id, lesson key): what "once per run" counts by

    def __post_init__(self) -> None:
        object.__setattr__(self, "key", (self.skill_id, self.lesson.key))  # a lesson key is not free

    @property
    def text(self) -> str:
        return sentence(self.lesson)


def reminder_text(reminder: Reminder, call: "_Call") -> str:
    """What the model reads in place of the tool's result: that the call did not run, and the
    next step, concretely (the check to call and with what, the question to ask)."""
    check = spec_of(reminder.lesson.kind).call_check
    if check is None:
        return f"`{call.tool}` was not run. {reminder.text}"
    return check.reminder(reminder.lesson, call)


@dataclass
class CallHistory:
    """The calls one run has run so far: what the checks below compare a new call with."""

    tools: set[str] = field(default_factory=set)  # tools that have run
    calls: Counter = field(default_factory=Counter)  # (tool, canonical args) -> times run
    reminded: set[tuple[str, str]] = field(default_factory=set)  # (skill id, lesson key)

    def ran(self, tool: str, args: Any) -> None:
        self.tools.add(tool)
        self.calls[call_key(tool, args)] += 1


def call_key(tool: str, args: Any) -> tuple[str, str]:
    """``(tool, its arguments as canonical JSON)``: equal for equal calls."""
    try:
        return tool, canonical_json(args or {})
    except (TypeError, ValueError):
        return tool, repr(args)


@dataclass
class ReminderRules:
    """The checkable lessons of a run's block, indexed by the tool a call names."""

    size: int = -1  # how many block hits these rules were built from
    by_tool: dict[str, list[Reminder]] = field(default_factory=dict)
    any_tool: list[Reminder] = field(default_factory=list)  # lessons about every call
    unknown_tool: list[Reminder] = field(default_factory=list)  # about calls to tools the agent lacks
    checks: frozenset[str] = frozenset()  # tools a check_first lesson names as the check
    _declared: dict = field(default_factory=dict)  # (tool, argument names) -> undeclared ones

    @classmethod
    def from_hits(cls, hits: Sequence[SkillHit], at_tool: Callable[[LessonKind], bool] = lambda kind: True
                  ) -> "ReminderRules":
        """The rules of ``hits``' lessons whose kind ``at_tool`` says is checked at the tool."""
        by_tool: dict[str, list[Reminder]] = {}
        any_tool: list[Reminder] = []
        unknown_tool: list[Reminder] = []
        checks: set[str] = set()
        for hit in hits:
            skill = hit.skill
            for lesson in skill.content.lessons:
                check = spec_of(lesson.kind).call_check
                if check is None or not at_tool(lesson.kind):
                    continue
                scope = check.scope(lesson)
                reminder = Reminder(skill.id, skill.version, lesson)
                checks.update(check.never_held(lesson))
                if scope == "its_tool":
                    by_tool.setdefault(lesson.tool, []).append(reminder)
                elif scope == "unknown_tool":
                    unknown_tool.append(reminder)
                elif scope == "any_tool":
                    any_tool.append(reminder)
        return cls(len(hits), by_tool, any_tool, unknown_tool, frozenset(checks))

    def broken(self, tool: str, args: Any, tool_obj: BaseTool | None, history: CallHistory,
               messages: Sequence[Any] = (), today: dt.date | None = None) -> Reminder | None:
        """The first lesson this call breaks that has not been reminded of in this run.
        ``tool_obj`` is the agent's tool of that name (``None``: the agent has none);
        ``messages``, the run's conversation so far (what the user said); ``today``, the date
        the agent takes as today (for the dates the user said)."""
        return self.first_broken(_Call(tool, args, tool_obj, self._declared, messages, today, history), history)

    def first_broken(self, call: "_Call", history: CallHistory) -> Reminder | None:
        """The first lesson ``call`` breaks that has not been reminded of in this run."""
        if call.tool in self.checks:
            return None  # a check is read-only: never held back
        unknown = self.unknown_tool if not call.offered else ()
        for reminder in (*self.by_tool.get(call.tool, ()), *unknown, *self.any_tool):
            check = spec_of(reminder.lesson.kind).call_check
            if reminder.key not in history.reminded and check is not None and check.breaks(reminder.lesson, call):
                return reminder
        return None


class _Call:
    """One call as the kinds' call checks see it (:class:`~skillbank.lessons.CallView`), with
    what they derive from it computed at most once."""

    def __init__(self, tool: str, args: Any, tool_obj: BaseTool | None, declared: dict,
                 messages: Sequence[BaseMessage] = (), today: dt.date | None = None,
                 history: CallHistory | None = None, params: DeclaredParameters | None = None):
        self.tool, self.args, self.tool_obj, self._declared = tool, args, tool_obj, declared
        self._messages, self.today = messages, today or dt.date.today()
        self._history = history or CallHistory()
        self._params = params
        self._key: tuple[str, str] | None = None
        self._said: str | None = None

    @property
    def offered(self) -> bool:
        return self.tool_obj is not None

    def tool_ran(self, name: str) -> bool:
        return name in self._history.tools

    def ran_before(self) -> bool:
        return self._history.calls[self.key] > 0

    def declared(self, name: str) -> frozenset[str] | None:
        return self._params.get(name) if self._params is not None else None

    @property
    def key(self) -> tuple[str, str]:
        if self._key is None:
            self._key = call_key(self.tool, self.args)
        return self._key

    def undeclared(self) -> set[str]:
        """Arguments the tool's schema does not declare (reading a schema is slow: cached by
        the tool and the argument names)."""
        if self.tool_obj is None or not isinstance(self.args, dict) or not self.args:
            return set()
        names = (self.tool, tuple(sorted(self.args)))
        if names not in self._declared:
            self._declared[names] = {(s.data or {}).get("param") for s in unknown_parameters(self.args, self.tool_obj)}
        return self._declared[names]

    def guessed(self, parameter: str | None) -> bool:
        """Whether the call passes a value (``parameter``'s, or any but a yes/no) that shares
        no word or number with what the user said or a tool returned in this run, and is no
        unit conversion of a number the user said (20 °C for 68 °F, 1.5 for 150 cents): a
        value the model made up."""
        if not isinstance(self.args, dict):
            return False
        if parameter is None:
            values = [v for v in self.args.values() if v is not None and not isinstance(v, bool)]
        else:
            values = [self.args[parameter]] if self.args.get(parameter) is not None else []
        if not values:
            return False
        known = set(words(f"{self.said} {self.results}"))
        return any(not (set(words(str(v))) & known) and not self._converted(v)
                   and not self._renders_a_name(v) for v in values)

    def _renders_a_name(self, value: Any) -> bool:
        """Whether ``value`` is a name that renders one the user said in other words (Vienna for
        Wien, Munich for München, Tokyo for 東京): a value of letters only, close in spelling to
        something the user named (a capitalised word inside a sentence) that no argument of this
        call passes as it is, or standing for a name written in another script. A name with
        nothing named to stand for (Bob where the user said Ann) is still a guess."""
        if not isinstance(value, str) or not _NAME.fullmatch(value.strip()):
            return False
        passed = set(words(" ".join(str(v) for v in self.args.values())))
        folded = _fold(value)
        return any(word.lower() not in passed and (not _fold(word) or _spelled_alike(_fold(word), folded))
                   for word in _named(self.said))

    def _converted(self, value: Any) -> bool:
        try:
            number = float(value)
        except (TypeError, ValueError):
            return False
        return converts(number, numbers_in(self.said))

    @property
    def results(self) -> str:
        """Everything the tools returned in the run so far (a looked-up id is not a guess)."""
        return " ".join(str(m.text) for m in self._messages if isinstance(m, ToolMessage))

    @property
    def said(self) -> str:
        """Everything the user said in the run so far."""
        if self._said is None:
            self._said = user_words(self._messages)
        return self._said


def user_words(messages: Sequence[Any]) -> str:
    """Everything the user said in ``messages``."""
    return " ".join(m.text for m in messages if isinstance(m, BaseMessage) and m.type == "human")


class ToolReminders:
    """One run's reminders: its calls so far and the checkable lessons of its block. Every
    middleware that answers tool calls with lessons keeps one per run (on the run's ``Block``)."""

    def __init__(self) -> None:
        self.calls = CallHistory()
        self.rules = ReminderRules()
        self.params = DeclaredParameters()  # each offered tool's declared parameters
        # The other calls of a turn a no_tool reminder answered, by call id: answered with it too.
        self._turn_held: dict[str, Reminder] = {}
        self._lock = threading.Lock()  # a turn's calls are intercepted at once (ToolNode runs them in parallel)

    def know_tools(self, tools: Sequence[OfferedTool] | None) -> None:
        """The tools a model call offers (``BaseTool`` objects or JSON schemas), so a reminder
        can fill a check's arguments from the parameters the check declares."""
        self.params.offer(tools)

    def intercept(self, hits: Sequence[SkillHit], request: ToolCallRequest, today: dt.date | None = None,
                  at_tool: Callable[[LessonKind], bool] = lambda kind: True) -> tuple[Reminder, ToolMessage] | None:
        """For a call that breaks a lesson of ``hits`` (the run's block): the lesson, and the
        message to answer the call with instead of running it, marked with its
        :class:`~skillbank.adapters._interventions.Intervention`. ``today``: the date the agent
        takes as today (the machine's when ``None``); ``at_tool``: which kinds are checked."""
        if not hits:
            return None
        if self.rules.size != len(hits):  # the block grew: index its lessons again
            self.rules = ReminderRules.from_hits(hits, at_tool)
        tool_call = request.tool_call
        name = tool_call.get("name") or "?"
        messages = state_messages(request.state)
        call = _Call(name, tool_call.get("args"), request.tool, self.rules._declared, messages, today,
                     self.calls, self.params)
        with self._lock:
            reminder = self._turn_held.pop(tool_call.get("id") or "", None)
            if reminder is None:  # not a call of a turn already answered: does it break a lesson?
                reminder = self.rules.first_broken(call, self.calls)
                if reminder is None:
                    return None
                self.calls.reminded.add(reminder.key)
                check = spec_of(reminder.lesson.kind).call_check
                if check is not None and check.holds_turn:
                    self._turn_held.update(dict.fromkeys(_turn_of(tool_call.get("id"), messages), reminder))
        record = Intervention(kind="reminder", skill_id=reminder.skill_id, version=reminder.version, tool=name)
        return reminder, ToolMessage(content=reminder_text(reminder, call), tool_call_id=tool_call.get("id") or "",
                                     name=name, response_metadata=record.metadata())

    def ran(self, request: ToolCallRequest) -> None:
        """The request's call ran (whatever its outcome)."""
        call = request.tool_call
        self.calls.ran(call.get("name") or "?", call.get("args"))


def _turn_of(call_id: str | None, messages: Sequence[Any]) -> list[str]:
    """The ids of the other calls the model made in the turn that made call ``call_id``."""
    for message in reversed(messages):
        if isinstance(message, AIMessage) and any(c.get("id") == call_id for c in message.tool_calls):
            return [i for c in message.tool_calls if (i := c.get("id")) and i != call_id]
    return []
