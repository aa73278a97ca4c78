"""Reminders at the tool boundary: a call that breaks an injected lesson gets the lesson back.

A small model reads "Always call `get_order` before `refund`" in its system prompt and still
calls ``refund`` first. Where the lesson can be checked at the call itself, the middleware
(``InjectionConfig.reminders``) answers that call with the lesson's sentence instead of
running it, at most once per lesson per run, so the rule arrives where the mistake is made:

- ``check_first``: the action is called and its check has not run in this run;
- ``pitfall`` ``call``: a call of the shape the lesson warns about (its step's literal values);
- ``missing_parameter``: an argument the tool's schema does not declare (the lesson's own
  parameter, or any for the general form);
- ``budget`` and ``pitfall`` ``repeat``: a call identical to one already run (its answer is
  above; a new call, even past the budget, runs);
- ``ask_for``: a call of the lesson's tool passes a value (for the lesson's parameter, or any
  value but a yes/no when it names none) of which neither the user's messages nor the run's
  tool results hold one word or number, and that is no unit conversion of a number the user
  said: a guess;
- ``stated_time``: a call of the lesson's tool passes the lesson's parameter a value that is
  no 24-hour reading of a clock time the user said ("14:00" for "a quarter past two"); the
  reminder gives the said time back on the 24-hour clock (:mod:`skillbank.clock`);
  ``stated_date`` the same for a date the user said, counted from the run's today
  ("2027-03-09" for "the day after tomorrow" on 8 March; :mod:`skillbank.dates`);
- ``missing_tool``: a call to a tool the agent does not have (the lesson's tool, or any for the
  general form); ``wrong_tool_name``: a call to a name the agent does not have that the
  lesson's tool fits (``add_event`` for ``create_event``: :func:`skillbank.toolnames.fits`);
- ``no_tool``: any call. The lesson is in the block only when the request was read as asking
  for nothing a tool does (:meth:`SkillInjector.select` scopes it by the request's nearest
  neighbours), and in protocol v20 the 1.5B still called a tool on small talk in 5 of the 27
  runs it was shown in (booking a table on "Thanks for a lovely evening"). Once per run, as
  every reminder: a second call runs, so a lesson shown by mistake costs a turn, not the call.
  "A call" is the model's turn: every call of the turn the reminder answers is answered with it
  (protocol v22: the 1.5B asked for two tools at once on "thanks"; the reminder answered the
  first and the second, a refill with a made-up prescription id, ran).

A check itself is never held back (it is read-only, and holding it back would break the very
lesson that names it). Everything here is data already at hand: the per-call cost is a dict
lookup for the tool and a few set lookups.
"""

from __future__ import annotations

import datetime as dt
import difflib
import re
import threading
import unicodedata
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping, Sequence

from langchain_core.messages import AIMessage, BaseMessage, ToolMessage

from skillbank.adapters.limits import unknown_parameters
from skillbank.adapters.tools import DeclaredParameters
from skillbank.hashing import canonical_json
from skillbank.lessons import Lesson, LessonKind, MethodStep, sentence
from skillbank.messages import state_messages
from skillbank.queries import SkillHit
from skillbank.said import WHAT_IS_SAID, read_as, said_values, value_reading
from skillbank.toolnames import fits
from skillbank.units import converts, numbers_in

if TYPE_CHECKING:  # langchain.agents and langchain_core.tools are slow to import; the CLI's search needs neither
    from langchain.agents.middleware import ToolCallRequest
    from langchain_core.tools import BaseTool

    from skillbank.adapters.tools import OfferedTool

__all__ = ["Reminder", "ReminderRules", "CallHistory", "ToolReminders", "reminder_text", "reminded_by",
           "REMINDER_METADATA_KEY", "words", "call_key"]

# Where a call's answer says which lesson answered it (its skill id and version), for whoever
# records the run: ``response_metadata`` is never sent to a provider.
REMINDER_METADATA_KEY = "skillbank_reminder"

_PLACEHOLDER = re.compile(r"<[a-z][a-z0-9_]*>")
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


def reminder_text(tool: str, reminder: Reminder, args: Any = None,
                  params: Mapping[str, frozenset[str]] | None = None, said: str = "",
                  today: dt.date | None = None) -> str:
    """What the model reads in place of the tool's result: that the call did not run, and the
    next step, concretely.

    A small model reads a rule as something to tell the user ("you should first call X"); told
    the next call to make, with its arguments, it makes it. So the reminder names the next step
    (the check to call, and with what; the question to ask; the answer to give) rather than
    restating the rule. ``args`` are the held-back call's arguments; ``params``, the parameters
    each of the agent's tools declares (to fill the check's arguments from the call's);
    ``said``, what the user said in the run (the time a ``stated_time`` lesson gives back, the
    date a ``stated_date`` one does, counted from ``today``).
    """
    lesson = reminder.lesson
    kind = lesson.kind
    head = f"`{tool}` was not run."
    if kind == LessonKind.check_first and lesson.check:
        given = args if isinstance(args, dict) else {}
        takes = (params or {}).get(lesson.check)
        shared = {k: v for k, v in given.items() if takes is not None and k in takes}
        with_args = f" with {canonical_json(shared)}" if shared else ""
        return f"{head} Call `{lesson.check}` now{with_args}; then call `{tool}` again."
    if kind == LessonKind.ask_for:
        what = f"`{lesson.parameter}`" if lesson.parameter else "the values it needs"
        return (f"{head} The user has not said {what}. Ask the user for it now, and call "
                f"`{tool}` after they answer.")
    if kind in WHAT_IS_SAID:
        return f"{head} {_said_value(kind, tool, lesson.parameter or '', said, today)}"
    if kind == LessonKind.missing_tool:
        return (f"{head} You have no tool named `{tool}`. Do the rest of the request, and tell "
                "the user you cannot do that part.")
    if kind == LessonKind.wrong_tool_name:
        return f"{head} There is no tool by that name. Call `{lesson.tool}` instead."
    if kind == LessonKind.missing_parameter:
        extra = lesson.parameter or "that argument"
        return (f"{head} It has no `{extra}` parameter. Call `{tool}` again without it if the "
                f"rest is still needed, and tell the user `{extra}` cannot be set.")
    if kind == LessonKind.no_tool:
        return (f"{head} The user's message asks for nothing a tool does. Reply to it yourself now, "
                "in one or two sentences, without calling a tool.")
    if kind in (LessonKind.budget, LessonKind.pitfall) and lesson.avoid != "call":
        return (f"{head} You already have what this call would give (its result is above). "
                "Answer the user now with what you know.")
    return f"{head} {reminder.text}"


def _said_value(kind: LessonKind, tool: str, parameter: str, said: str, today: dt.date | None) -> str:
    """The time (or date) the user said, as the tool takes it, and the call to make with it. A
    phrase with two readings gives both, the likelier first."""
    found = said_values(kind, said, today)
    what = WHAT_IS_SAID[kind]
    said_as = "; ".join(f'"{s.phrase}" is {s.readings[0]}'
                        + (f" (or {', '.join(s.readings[1:])})" if len(s.readings) > 1 else "")
                        for s in found)
    if len(found) == 1:
        call = f'Call `{tool}` again with `{parameter}`="{found[0].readings[0]}"'
        if len(found[0].readings) > 1:
            call += f' (or "{found[0].readings[1]}" if that is what the user meant)'
    else:
        call = f"Call `{tool}` again with `{parameter}` set to the {what} the user meant"
    return f"The user said a {what}: {said_as}, {read_as(kind, today)}. {call}."


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


def _shape_matches(step: MethodStep, args: Any) -> bool:
    """Whether a call's arguments have ``step``'s shape: every literal value equal (placeholders
    match any value, a template matches its literal words around them)."""
    if not isinstance(args, dict):
        return not step.args
    for param, shape in step.args.items():
        if param not in args:
            return False
        value = str(args[param]).lower()
        if not _PLACEHOLDER.search(shape):
            if value != shape.lower():
                return False
            continue
        pattern = "".join(".+" if _PLACEHOLDER.fullmatch(part) else re.escape(part.lower())
                          for part in re.split(r"(<[a-z][a-z0-9_]*>)", shape) if part)
        if not re.fullmatch(pattern, value, re.S):
            return False
    return True


# Lessons about calls of the one tool they name, checked when that name is called.
_ABOUT_ITS_TOOL = frozenset({LessonKind.missing_parameter, LessonKind.ask_for, LessonKind.missing_tool,
                             LessonKind.stated_time, LessonKind.stated_date})


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
    def from_hits(cls, hits: Sequence[SkillHit]) -> "ReminderRules":
        by_tool: dict[str, list[Reminder]] = {}
        any_tool: list[Reminder] = []
        unknown_tool: list[Reminder] = []
        checks: set[str] = set()
        for hit in hits:
            skill = hit.skill
            for lesson in skill.content.lessons:
                reminder = Reminder(skill.id, skill.version, lesson)
                kind = lesson.kind
                if kind == LessonKind.check_first and lesson.tool and lesson.check:
                    checks.add(lesson.check)
                    by_tool.setdefault(lesson.tool, []).append(reminder)
                elif lesson.tool and (kind in _ABOUT_ITS_TOOL or
                                      (kind == LessonKind.pitfall and lesson.avoid == "call")):
                    by_tool.setdefault(lesson.tool, []).append(reminder)
                elif kind in (LessonKind.missing_tool, LessonKind.wrong_tool_name):
                    unknown_tool.append(reminder)  # the general missing_tool; every wrong name
                elif kind in (LessonKind.missing_parameter, LessonKind.budget, LessonKind.no_tool) or \
                        (kind == LessonKind.pitfall and lesson.avoid == "repeat"):
                    any_tool.append(reminder)
        return cls(len(hits), by_tool, any_tool, unknown_tool, frozenset(checks))

    def broken(self, tool: str, args: Any, tool_obj: BaseTool | None, history: CallHistory,
               messages: Sequence[Any] = (), today: dt.date | None = None) -> Reminder | None:
        """The first lesson this call breaks that has not been reminded of in this run.
        ``tool_obj`` is the agent's tool of that name (``None``: the agent has none);
        ``messages``, the run's conversation so far (what the user said); ``today``, the date
        the agent takes as today (for the dates the user said)."""
        if tool in self.checks:
            return None  # a check is read-only: never held back
        call = _Call(tool, args, tool_obj, self._declared, messages, today)
        unknown = self.unknown_tool if tool_obj is None else ()
        for reminder in (*self.by_tool.get(tool, ()), *unknown, *self.any_tool):
            if reminder.key not in history.reminded and _breaks(reminder.lesson, call, history):
                return reminder
        return None


class _Call:
    """One call, with what the checks derive from it computed at most once."""

    def __init__(self, tool: str, args: Any, tool_obj: BaseTool | None, declared: dict,
                 messages: Sequence[BaseMessage] = (), today: dt.date | None = None):
        self.tool, self.args, self.tool_obj, self._declared = tool, args, tool_obj, declared
        self._messages, self.today = messages, today
        self._key: tuple[str, str] | None = None
        self._said: str | None = None

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
            self._declared[names] = {s.data.get("param") for s in unknown_parameters(self.args, self.tool_obj)}
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

    def other_said(self, kind: LessonKind, parameter: str | None) -> bool:
        """Whether the call passes ``parameter`` a value that is no reading of a time (or date,
        by ``kind``) the user said (nothing to judge when the user said none)."""
        if not isinstance(self.args, dict) or parameter is None or self.args.get(parameter) is None:
            return False
        said = {r for s in said_values(kind, self.said, self.today) for r in s.readings}
        return bool(said) and value_reading(kind, self.args[parameter]) not in said

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


def _breaks(lesson: Lesson, call: _Call, history: CallHistory) -> bool:
    kind = lesson.kind
    if kind == LessonKind.no_tool:
        return True
    if kind == LessonKind.check_first:
        return lesson.check not in history.tools
    if kind == LessonKind.missing_tool:  # by name (the specific form) or any (general): the agent lacks it
        return call.tool_obj is None
    if kind == LessonKind.wrong_tool_name:
        # The round's own test of which tool a wrong name meant (skillbank.toolnames).
        return call.tool_obj is None and fits(call.tool, lesson.tool or "", call.said)
    if kind == LessonKind.ask_for:
        return call.guessed(lesson.parameter)
    if kind in WHAT_IS_SAID:
        return call.other_said(kind, lesson.parameter)
    if kind == LessonKind.pitfall and lesson.avoid == "call":
        return not lesson.steps or _shape_matches(lesson.steps[0], call.args)
    if kind == LessonKind.missing_parameter:
        if lesson.parameter is not None and not (isinstance(call.args, dict) and lesson.parameter in call.args):
            return False
        extra = call.undeclared()  # a tool the agent lacks has none: ToolNode answers that call
        return bool(extra) if lesson.parameter is None else lesson.parameter in extra
    if kind in (LessonKind.pitfall, LessonKind.budget):  # pitfall: avoid == "repeat"
        # Only a call identical to one already run: its answer is truly at hand. A new call past
        # a budget is not held back: it may be the very action the user asked for, and a general
        # budget lesson rides on tasks that have no budget of their own.
        return history.calls[call.key] > 0
    return False


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

    def intercept(self, hits: Sequence[SkillHit], request: ToolCallRequest,
                  today: dt.date | None = None) -> tuple[Reminder, ToolMessage] | None:
        """For a call that breaks a lesson of ``hits`` (the run's block): the lesson, and the
        message to answer the call with instead of running it (see :func:`reminded_by`).
        ``today``: the date the agent takes as today (the machine's when ``None``)."""
        today = today or dt.date.today()
        if not hits:
            return None
        if self.rules.size != len(hits):  # the block grew: index its lessons again
            self.rules = ReminderRules.from_hits(hits)
        call = request.tool_call
        name = call.get("name") or "?"
        messages = state_messages(request.state)
        with self._lock:
            reminder = self._turn_held.pop(call.get("id") or "", None)
            if reminder is None:  # not a call of a turn already answered: does it break a lesson?
                reminder = self.rules.broken(name, call.get("args"), request.tool, self.calls, messages, today)
                if reminder is None:
                    return None
                self.calls.reminded.add(reminder.key)
                if reminder.lesson.kind == LessonKind.no_tool:
                    self._turn_held.update(dict.fromkeys(_turn_of(call.get("id"), messages), reminder))
        said = user_words(messages) if reminder.lesson.kind in WHAT_IS_SAID else ""  # only these quote the user
        text = reminder_text(name, reminder, call.get("args"), self.params, said, today)
        marker = {"skill_id": reminder.skill_id, "version": reminder.version}
        return reminder, ToolMessage(content=text, tool_call_id=call.get("id") or "", name=name,
                                     response_metadata={REMINDER_METADATA_KEY: marker})

    def ran(self, request: ToolCallRequest) -> None:
        """The request's call ran (whatever its outcome)."""
        call = request.tool_call
        self.calls.ran(call.get("name") or "?", call.get("args"))


def _turn_of(call_id: str | None, messages: Sequence[Any]) -> list[str]:
    """The ids of the other calls the model made in the turn that made call ``call_id``."""
    for message in reversed(messages):
        if isinstance(message, AIMessage) and any(c.get("id") == call_id for c in message.tool_calls):
            return [c["id"] for c in message.tool_calls if c.get("id") and c.get("id") != call_id]
    return []


def reminded_by(message: object) -> tuple[str, int] | None:
    """``(skill_id, version)`` of the lesson a tool call was answered with instead of being run,
    or ``None`` for any other answer."""
    marker = (getattr(message, "response_metadata", None) or {}).get(REMINDER_METADATA_KEY)
    if not isinstance(marker, dict):
        return None
    return str(marker["skill_id"]), int(marker["version"])
