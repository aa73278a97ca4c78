"""Calls to names that are not among the agent's tools: a wrong name, a skill, or a missing tool.

A small model calls ``add_event`` when its tool is ``create_event``, ``turn_light`` for
``set_lights``, or the name of a skill it was shown. Only the third kind of call, to a name no
tool of the toolset fits, is evidence that the request needs a capability the agent lacks.

A tool *fits* a called name when their names say the same thing: they share a content word
(``event``, ``light``), their verbs do not contradict (``add`` and ``create`` both make
something; ``get`` reads, ``issue`` writes), and every content word of the called name that
the tool's name lacks is absent from the request (``open_window`` does not fit
``close_window`` on "open the driver window"). Among fitting tools, the one sharing more words
wins, then the one whose calls elsewhere took the same argument names; a tie fits none.
"""

from __future__ import annotations

import re
from typing import Iterable, Mapping

__all__ = ["name_words", "fitting_tool", "fits", "is_skill_name", "names_tool"]

# Verbs that say only what kind of thing a tool does; two names whose verbs fall in different
# classes do different things.
_VERB_CLASSES = {
    "create": {"add", "create", "make", "new", "insert", "book", "schedule", "issue", "register", "post"},
    "change": {"set", "turn", "switch", "update", "change", "adjust", "modify", "put", "toggle", "configure",
               "edit", "apply"},
    "read": {"get", "fetch", "read", "find", "lookup", "look", "check", "show", "list", "query", "search",
             "retrieve", "view", "describe"},
    "delete": {"delete", "remove", "cancel", "clear", "drop", "erase", "unset"},
}
_VERB = {verb: cls for cls, verbs in _VERB_CLASSES.items() for verb in verbs}
# Words that carry no capability of their own in a tool name.
_PARTICLES = frozenset("on off up down in out to for of by the a an all my at from with".split())


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def name_words(name: str) -> list[str]:
    """``setDoorLocks`` / ``set_door_locks`` -> ``["set", "door", "lock"]`` (lower case, plural -s dropped)."""
    spaced = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", name or "")
    return [_stem(w) for w in re.split(r"[^a-z0-9]+", spaced.lower()) if w]


def _split(name: str) -> tuple[set[str], set[str]]:
    """The verb classes and the content words of a name."""
    words = name_words(name)
    return ({_VERB[w] for w in words if w in _VERB},
            {w for w in words if w not in _VERB and w not in _PARTICLES and not w.isdigit()})


def _fit(called: str, tool: str, request_words: set[str]) -> float:
    """How well ``tool`` fits a call to ``called`` (0: not at all)."""
    verbs_a, words_a = _split(called)
    verbs_b, words_b = _split(tool)
    shared = words_a & words_b
    if not shared or (verbs_a and verbs_b and not verbs_a & verbs_b):
        return 0.0
    if (words_a - words_b) & request_words:
        return 0.0  # the request asks for what the called name says and the tool's does not
    return len(shared) / len(words_a | words_b)


def request_words(text: str) -> set[str]:
    return {_stem(w) for w in re.findall(r"[a-z0-9]+", (text or "").lower())}


def fits(called: str, tool: str, request: str) -> bool:
    """Whether ``tool`` could be what a call to ``called`` (not among the tools) meant."""
    return called != tool and _fit(called, tool, request_words(request)) > 0


def fitting_tool(called: str, request: str, toolset: Iterable[str],
                 known_args: Mapping[str, set[str]] | None = None, args: Iterable[str] = ()) -> str | None:
    """The tool of ``toolset`` that a call to ``called`` (not among them) meant, or ``None``.

    ``known_args`` maps a tool to the argument names its calls took (anywhere in the batch), and
    ``args`` are the argument names of the call to ``called``: they break a tie between names.
    """
    words = request_words(request)
    arg_names = set(args)
    scored = []
    for tool in dict.fromkeys(toolset):
        if tool == called:
            continue
        score = _fit(called, tool, words)
        if score > 0:
            overlap = len(arg_names & (known_args or {}).get(tool, set()))
            scored.append(((score, overlap), tool))
    if not scored:
        return None
    scored.sort(key=lambda x: x[0], reverse=True)
    if len(scored) > 1 and scored[0][0] == scored[1][0]:
        return None  # two tools fit equally: no lesson can say which was meant
    return scored[0][1]


def _norm(name: str) -> str:
    return "_".join(re.split(r"[^a-z0-9]+", (name or "").lower())).strip("_")


def is_skill_name(called: str, skill_names: Iterable[str]) -> bool:
    """Whether ``called`` is a skill's name written as a tool name (``turn_light_brightness`` for
    the skill ``turn-light-brightness``): the model called what it was shown, not a missing tool."""
    key = _norm(called)
    return bool(key) and any(key == _norm(s) for s in skill_names)


def names_tool(text: str | None, tool: str) -> bool:
    """Whether ``text`` names ``tool`` as a word of its own (``find_trains``, not ``find``): a
    reply that describes a call instead of making it."""
    if not text:
        return False
    return re.search(rf"(?<![\w-]){re.escape(tool)}(?![\w-])", text) is not None
