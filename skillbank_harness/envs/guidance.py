"""How the simulated policy reads guidance: by meaning, with the names of its own tools.

A real model reads a skill the way it reads any instruction: it understands what the sentence
asks and recognises the tools it is talking about. This module does the same with two pieces
that know nothing of how ``skillbank.lessons`` words its sentences:

* **What a unit asks** (a line of the system prompt, or a sentence of a longer line): the
  nearest neighbour, by cosine similarity of MiniLM embeddings (``skillbank.embed``), among
  :data:`INTENTS` -- a few plain descriptions per intent, written for this reader from how
  people phrase such advice, not from the library's sentences. A unit nearer to the
  ``none`` descriptions (a role prompt, a greeting, background) than to any intent, or below
  :data:`MIN_SIMILARITY`, is prose the policy does not act on.
* **Which names it is about**: identifiers it spells (``open_window``, in backticks or not) and
  the names of the policy's own tools and their parameters that it mentions in words ("create
  an event" names ``create_event``). The policy knows which names are its bound tools and which
  are their parameters; that decides the roles: a unit naming two of its tools can be a check
  or an order, not a missing tool; a unit naming a tool and one of its parameters can ask for
  that value, not say the parameter is missing. The embedding ranks the intents; the names rule
  out the ones that cannot apply, the way a reader would.

A unit that names nothing is the *general* form of its intent (applies to every tool). A unit
that names nothing and has the same intent as the unit before it elaborates that one (the
"why" line after a rule) and adds no directive.

Limits, documented rather than hidden: a paragraph that mixes two pieces of advice in one
sentence is read as its nearest intent only; a tool named only by a paraphrase of its purpose
("the window tool") is not recognised, so such a unit reads as the general form.
"""

from __future__ import annotations

import functools
import json
import re
import threading
from dataclasses import dataclass
from typing import Any, Iterable, Sequence

import numpy as np

from skillbank_harness.envs.directives import (
    AskFor,
    CheckFirst,
    Directive,
    NoParam,
    NoRepeat,
    Order,
    StepBudget,
    Unavailable,
    UnknownField,
)
from skillbank_harness.envs.reading import is_lookup, stem

__all__ = ["INTENTS", "MIN_SIMILARITY", "read", "units"]

# What each intent means, in a reader's own words. Each is a short description of the advice,
# phrased several ways; none is copied from skillbank.lessons.sentence.
INTENTS: dict[str, tuple[str, ...]] = {
    "check_first": (
        "Run the verification or lookup tool before you perform the action.",
        "Make sure the prerequisite check has been done; only act after it.",
        "Do not carry out the action until the required check has come back.",
        "Always look the thing up first, and only then change it.",
        "Verify with the checking tool prior to making the change.",
        "Never do the action without checking first.",
        "Obey the prerequisites that tool descriptions mention: call the required tool before the tool that needs it.",
        "Confirm it is allowed with the check, then act.",
    ),
    "order": (
        "Use the tools in a fixed sequence: this one first, that one next.",
        "The steps go in this order: one tool, then the other.",
        "Sequence: the lookup, followed by the update.",
        "Do it in three steps: first find it, next check it, finally change it.",
    ),
    "unavailable": (
        "A tool you need might not exist in your toolbox: do not try to use it, and tell the user it is not available.",
        "Some capability may be missing; never invoke a tool you were not given.",
        "If you cannot find a tool for that, skip it and say which tool is absent.",
        "That function is not supported here, so do not attempt it; do everything else and tell the user it is missing.",
        "Only call tools that you actually have.",
    ),
    "no_param": (
        "The function may not accept an argument for that setting: leave the argument out and tell the user it cannot be set.",
        "Do not send an option that the tool's parameters do not include; say the option is not supported.",
        "A setting the user asked for may have no matching parameter in the tool's schema.",
        "Omit arguments the tool does not define, and report that this setting cannot be changed.",
        "The tool has no field for that value, so call it without the value and explain it could not be set.",
    ),
    "ask_for": (
        "When a needed detail is unclear or missing from the request, ask the user a clarifying question instead of guessing.",
        "Do not pick a value yourself when the user did not specify it; ask them which one they mean.",
        "If more than one option fits what the user said, ask them to choose before acting.",
        "Ask the user for the missing value; never assume it.",
        "If you are not sure which item the user means, ask which one.",
        "Seek clarification from the user whenever an input is ambiguous.",
    ),
    "unknown_field": (
        "A lookup result may contain an empty or null value: do not make up a value for it, say that it is unknown.",
        "Never fabricate a number or date that the tool did not return; admit the information is missing.",
        "If the data comes back blank, tell the user it is not known rather than estimating it.",
        "Do not invent information a result leaves empty.",
    ),
    "budget": (
        "Use only a limited number of tool calls and avoid repeating the same call.",
        "Stay within a maximum of a few tool calls.",
        "Be efficient: no more than five calls in total.",
        "Keep the number of tool calls small and stop once you have the answer.",
    ),
    "no_repeat": (
        "Do not call the same tool again and again with identical inputs.",
        "A call that did not help will not help the second time; try something else.",
        "Avoid repeating a tool call you have already made.",
    ),
    # Advice this reader understands but the policy has no behaviour for: recognising it keeps
    # it from being mistaken for an intent it does act on.
    "retry": (
        "If a tool call fails with an error, try again once with fixed inputs, then report the failure.",
        "When a call returns an error message, correct the arguments and retry.",
    ),
    "none": (
        "You are a helpful assistant for our customers.",
        "Be polite and keep your answers brief.",
        "Here is some background information about the company and its products.",
        "Afterwards, reply to the user with what you found.",
        "Skills",
        "These notes come from earlier conversations and are only suggestions.",
        "We are open Monday to Friday.",
        "Answer in the language the user writes in.",
    ),
}

# Words that carry each intent, as a reader knows them: a unit using them leans that way. They
# are concepts (asking, emptiness, absence, order), not any library sentence's wording.
CUES: dict[str, tuple[str, ...]] = {
    "check_first": ("before", "first", "prior", "until", "verify", "confirm", "check", "ensure",
                    "without", "prerequisite", "only then", "ahead"),
    "order": ("then", "followed", "sequence", "in order", "this order", "next", "after", "step"),
    "unavailable": ("missing", "unavailable", "absent", "unsupported", "not available", "don't have",
                    "do not have", "no such tool", "not there", "not exist", "lack", "may not have"),
    "no_param": ("parameter", "argument", "slot", "option", "setting", "field", "pass", "send",
                 "include", "accept", "take", "leave out", "omit", "cannot be set", "can't be set"),
    "ask_for": ("ask", "clarif", "unclear", "which", "ambiguous", "guess", "not sure", "not stated",
                "didn't say", "doesn't say", "choose", "pick"),
    "unknown_field": ("null", "unknown", "empty", "blank", "invent", "fabricat", "make up", "made up",
                      "not known", "estimate", "fill"),
    "budget": ("at most", "within", "no more than", "maximum", "limit", "calls", "invocations"),
    "no_repeat": ("repeat", "again", "twice", "same", "redundant"),
}
CUE_WEIGHT = 0.08
"""Added to an intent's similarity for each distinct cue the unit uses (at most three)."""

MIN_SIMILARITY = 0.05
"""Below this cosine similarity to every description a unit is not read as guidance."""

_IDENT = re.compile(r"`([A-Za-z_][A-Za-z0-9_]*)`|(?<![A-Za-z0-9_`])([a-z][a-z0-9]*(?:_[a-z0-9]+)+)(?![A-Za-z0-9_`])")
_NUMBER = re.compile(r"(?<![\w.-])(\d{1,3})(?![\w.-])")


# ---------------------------------------------------------------------- embedding


class _Embeddings:
    """The MiniLM embedder and the intent descriptions' vectors, loaded once per process; the
    intent of a unit is cached by its text (a system prompt repeats on every turn)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._embedder: Any = None
        self._matrix: np.ndarray | None = None
        self._labels: list[str] = []
        self._cache: dict[str, dict[str, float]] = {}
        self._offset: Any = None

    def _ready(self) -> None:
        if self._embedder is None:
            from skillbank import MiniLMEmbedder

            embedder = MiniLMEmbedder()
            labels = [intent for intent, texts in INTENTS.items() for _ in texts]
            matrix = embedder.embed([t for texts in INTENTS.values() for t in texts])
            # A description that resembles every other one (all of them speak of tools and
            # calls) would win for any tool sentence: score against each description relative
            # to how close it is to the others on average.
            gram = matrix @ matrix.T
            self._offset = (gram.sum(0) - 1.0) / (len(labels) - 1)
            self._labels, self._matrix, self._embedder = labels, matrix, embedder

    def scores(self, texts: Sequence[str]) -> list[dict[str, float]]:
        """Per text: for each intent, the mean of the text's best cosine similarity to its
        descriptions and its best clause's (the clause that carries the advice, without the
        boilerplate around it)."""
        with self._lock:
            self._ready()
            todo = [t for t in dict.fromkeys(texts) if t not in self._cache]
            if todo:
                pieces = [[t, *_clauses(t)] for t in todo]
                flat = [p for group in pieces for p in group]
                sims = self._embedder.embed(flat) @ self._matrix.T - self._offset
                row = 0
                for text, group in zip(todo, pieces):
                    block = sims[row: row + len(group)]
                    row += len(group)
                    best: dict[str, float] = {}
                    for label in INTENTS:
                        cols = [j for j, lab in enumerate(self._labels) if lab == label]
                        whole = float(block[0, cols].max())
                        part = float(block[1:, cols].max()) if len(group) > 1 else whole
                        best[label] = (whole + part) / 2
                    if len(self._cache) > 20000:
                        self._cache.clear()
                    self._cache[text] = best
            return [self._cache[t] for t in texts]


def _clauses(text: str) -> list[str]:
    parts = re.split(r"[;:,.?!()]|\s(?:then|and|so|but|otherwise)\s", text)
    return [p.strip() for p in parts if len(p.split()) >= 3]


_EMBEDDINGS = _Embeddings()


# ---------------------------------------------------------------------- units and names


def units(text: str) -> list[str]:
    """The pieces of ``text`` read one at a time: its non-empty lines, without list markers,
    headings, the ``When:`` label of an injected skill, or tag lines."""
    out = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or re.fullmatch(r"</?[A-Za-z][^>]*>", line):
            continue
        line = re.sub(r"^(?:[-*•]\s+|\d+[.)]\s+|When:\s*)", "", line).strip()
        if line:
            out.append(line)
    return out


@dataclass(frozen=True)
class _Name:
    name: str
    at: int  # where in the unit it is first named
    spelled: bool  # written as an identifier (not only recognised from words)


def _word_stems(text: str) -> list[tuple[int, str]]:
    return [(m.start(), stem(m.group(0))) for m in re.finditer(r"[A-Za-z][A-Za-z']*", text)]


def _names(unit: str, vocabulary: Iterable[str]) -> list[_Name]:
    """Identifiers the unit spells, and names from ``vocabulary`` whose every word it uses
    (``create_event`` in "create an event"), in order of first mention."""
    return list(_names_once(unit, tuple(vocabulary)))


@functools.lru_cache(maxsize=65536)  # a pure function of two strings; units recur every turn
def _names_once(unit: str, vocabulary: tuple[str, ...]) -> tuple[_Name, ...]:
    found: dict[str, _Name] = {}
    for m in _IDENT.finditer(unit):
        name = m.group(1) or m.group(2)
        found.setdefault(name, _Name(name, m.start(), True))
    bare = _IDENT.sub(" ", unit)  # words inside a spelled name do not name another one
    words = _word_stems(bare)
    present = {s for _, s in words}
    for name in vocabulary:
        parts = {stem(p) for p in name.split("_") if p}
        if name in found or not parts or not parts <= present:
            continue
        found[name] = _Name(name, min(pos for pos, s in words if s in parts), False)
    return tuple(sorted(found.values(), key=lambda n: n.at))


class _Tools:
    """The reader's own tools: names, parameters, and which are lookups."""

    def __init__(self, specs: Sequence[dict[str, Any]]) -> None:
        self.params: dict[str, set[str]] = {}
        for spec in specs:
            props = (spec.get("parameters") or {}).get("properties") or {}
            self.params[spec["name"]] = set(props)
        self.all_params: set[str] = set().union(*self.params.values()) if self.params else set()

    def vocabulary(self) -> list[str]:
        return [*self.params, *sorted(self.all_params)]

    def role(self, name: str) -> str:
        """How the reader thinks of a spelled name: one of its tools, a parameter, or unknown."""
        if name in self.params:
            return "the tool"
        if name in self.all_params:
            return "the value"
        return "X"


def _masked(unit: str, known: _Tools) -> str:
    """The unit as the embedding sees it: spelled names replaced by what they are to the reader
    (its tool, a parameter, something unknown), so the names do not drown the advice."""
    return _IDENT.sub(lambda m: known.role(m.group(1) or m.group(2)), unit)


# ---------------------------------------------------------------------- reading

# Intents close in meaning are first compared as a group, then within it.
_GROUPS = {"check_first": "sequence", "order": "sequence", "budget": "budget", "no_repeat": "budget"}


@dataclass
class _Unit:
    text: str
    names: list[_Name]
    tools: list[str]  # the reader's tools it names, in order
    others: list[str]  # every other name, in order
    known: _Tools

    def unknown(self) -> list[str]:
        """Names that are neither the reader's tools nor their parameters."""
        return [o for o in self.others if o not in self.known.all_params]

    def feasible(self, intent: str) -> bool:
        """Whether the names can fill the intent's roles (no names: its general form)."""
        tools, others, known = self.tools, self.others, self.known
        named = bool(tools or others)
        if intent in ("none", "retry"):
            return True
        if intent in ("budget", "no_repeat"):
            # A name the reader does not have points to a missing capability, not to a budget.
            if known.params and self.unknown():
                return False
            return intent == "no_repeat" or _NUMBER.search(self.text) is not None
        if intent in ("check_first", "order"):
            n = len(tools) if known.params else len(self.names)
            return n >= 2 or (intent == "check_first" and not named)
        if not named:
            return True
        if not known.params:  # no schemas: roles by position only
            return intent in ("unavailable", "ask_for") or len(self.names) >= 2
        actions = [t for t in tools if not is_lookup(t)]
        lookups = [t for t in tools if is_lookup(t)]
        if intent == "unavailable":
            return bool(self.unknown())
        if intent == "ask_for":
            tool = (actions or tools or [None])[0]
            return tool is not None and all(o in known.params[tool] for o in others)
        if intent == "no_param":
            return bool(actions) and any(o not in known.params[actions[0]] for o in others)
        if intent == "unknown_field":
            return bool(lookups) and any(o not in known.params[lookups[0]] for o in others)
        return False

    def directive(self, intent: str) -> Directive | None:
        tools, others, known = self.tools, self.others, self.known
        positional = [n.name for n in self.names]
        named = bool(positional)
        if intent == "budget":
            return StepBudget(int(_NUMBER.search(self.text).group(1)))  # type: ignore[union-attr]
        if intent == "no_repeat":
            return NoRepeat()
        if intent == "check_first":
            if not named:
                return CheckFirst(None, None)
            return CheckFirst(*self._check_and_action(tools if known.params else positional))
        if intent == "order":
            return Order(tuple(dict.fromkeys(tools if known.params else positional)))
        if not named:
            return {"unavailable": Unavailable(None), "no_param": NoParam(None, None),
                    "unknown_field": UnknownField(None, None), "ask_for": AskFor(None, None)}[intent]
        if not known.params:
            if intent == "unavailable":
                return Unavailable(positional[0])
            if len(positional) < 2:
                return AskFor(None, positional[0]) if intent == "ask_for" else None
            first, second = positional[:2]
            return {"no_param": NoParam(first, second), "unknown_field": UnknownField(first, second),
                    "ask_for": AskFor(first, second)}[intent]
        if intent == "unavailable":
            return Unavailable(self.unknown()[0])
        if intent == "no_param":
            tool = next(t for t in tools if not is_lookup(t))
            return NoParam(tool, next(o for o in others if o not in known.params[tool]))
        if intent == "unknown_field":
            tool = next(t for t in tools if is_lookup(t))
            return UnknownField(tool, next(o for o in others if o not in known.params[tool]))
        if intent == "ask_for":
            tool = next((t for t in tools if not is_lookup(t)), tools[0])
            return AskFor(others[0] if others else None, tool)
        return None

    def _check_and_action(self, pair: list[str]) -> tuple[str, str]:
        """Which of two tools is the check: the lookup, if exactly one is; otherwise the one
        the unit names before "before"/"until"/"prior to" the other, or else the first."""
        first, second = pair[0], pair[1]
        looks = [t for t in (first, second) if is_lookup(t)]
        if len(looks) == 1:
            return (first, second) if looks[0] == first else (second, first)
        at = {n.name: n.at for n in self.names}
        marker = re.search(r"\b(?:before|prior to|until|ahead of)\b", self.text)
        if marker and at[first] > marker.start():
            return second, first  # "before B, call A"
        return first, second


def _spelled(unit: str) -> list[str]:
    return [m.group(1) or m.group(2) for m in _IDENT.finditer(unit)]


@functools.lru_cache(maxsize=65536)  # a pure function of two strings; units recur every turn
def _cue_hits(unit: str, intent: str) -> int:
    bare = " " + re.sub(r"[^a-z' ]+", " ", _IDENT.sub(" ", unit).lower()) + " "
    return sum(1 for c in CUES[intent] if re.search(rf"(?<![a-z']){re.escape(c)}", bare))


def _with_cues(unit: str, score: dict[str, float], known_tools: "_Tools | None" = None) -> dict[str, float]:
    out = dict(score)
    if known_tools and any(known_tools.role(n) == "the tool" for n in _spelled(unit)):
        # The reader has the tool this unit names, so the unit is less likely about a missing one.
        out["unavailable"] = out.get("unavailable", 0.0) - CUE_WEIGHT
    for intent in CUES:
        out[intent] = out.get(intent, 0.0) + CUE_WEIGHT * min(_cue_hits(unit, intent), 3)
    return out


def _intent(unit: _Unit, score: dict[str, float]) -> str:
    """The nearest intent whose roles the unit's names can fill: groups first, then members."""
    groups: dict[str, float] = {}
    for intent, s in score.items():
        if unit.feasible(intent):
            group = _GROUPS.get(intent, intent)
            groups[group] = max(groups.get(group, -1.0), s)
    if not groups:
        return "none"
    group = max(groups, key=lambda g: groups[g])
    members = [i for i in score if _GROUPS.get(i, i) == group and unit.feasible(i)]
    if group == "sequence" and "check_first" in members and not _cue_hits(unit.text, "order"):
        return "check_first"  # two tools without a word of sequence: a check before an action
    if group == "budget" and "budget" in members:
        return "budget"  # a number of calls says it all: no repeats is part of any budget
    return max(members, key=lambda i: score[i])


def read(text: str, tools: Sequence[dict[str, Any]] = (), fields: Iterable[str] = ()) -> list[Directive]:
    """Every directive ``text`` gives, in order, without duplicates.

    ``tools`` are the reader's own tool schemas (``name``, ``parameters``); ``fields`` are
    result fields it has seen, recognised when a unit mentions them in words. Without schemas
    every spelled name is unknown and roles go by position.
    """
    # The policy reads the same system prompt on every turn of every trial that injects the
    # same skills; reading is a pure function of its inputs (the directives are frozen), so a
    # reading is remembered, not redone.
    key = (text, json.dumps(list(tools), sort_keys=True, default=str), tuple(fields))
    return list(_read_once(*key))


@functools.lru_cache(maxsize=4096)
def _read_once(text: str, tools_json: str, fields: tuple[str, ...]) -> tuple[Directive, ...]:
    return tuple(_read(text, json.loads(tools_json), fields))


def _read(text: str, tools: Sequence[dict[str, Any]], fields: Iterable[str]) -> list[Directive]:
    known = _Tools(tools)
    pieces = units(text)
    if not pieces:
        return []
    vocabulary = known.vocabulary() + [f for f in fields if f not in known.all_params]
    scores = [_with_cues(p, sc, known) for p, sc in zip(pieces, _EMBEDDINGS.scores([_masked(p, known) for p in pieces]))]
    out: list[Directive] = []
    previous: str | None = None
    for text_, score in zip(pieces, scores):
        names = _names(text_, vocabulary)
        unit = _Unit(text_, names, [n.name for n in names if n.name in known.params],
                     [n.name for n in names if n.name not in known.params], known)
        intent = _intent(unit, score)
        if intent in ("none", "retry") or score[intent] < MIN_SIMILARITY:
            previous = None
            continue
        if not names and _GROUPS.get(intent, intent) == previous:
            continue  # the "why" line after a rule elaborates it
        previous = _GROUPS.get(intent, intent)
        directive = unit.directive(intent)
        if directive is not None and directive not in out:
            out.append(directive)
    return out
