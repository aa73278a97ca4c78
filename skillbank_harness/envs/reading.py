"""How the simulated policy reads text and tool schemas: crude, documented heuristics.

Everything here works on strings and JSON tool schemas only (what a real model is given). It
must never import an environment, a task or a verifier; a test checks the imports.

* Words are compared by a crude stem: lower-case, one common suffix stripped, first five letters.
* A request is split into clauses (sentences, then ``and``/``then``/``also``/``:``/``;``); a clause
  is a question if it ends in ``?`` or starts with a question word.
* A clause is matched to an action tool only if it contains the tool's verb (or a synonym), then
  by word overlap with the tool's name (weight 2) and description
  (weight 1), after expanding the clause with a few synonyms (``turn`` → ``set``/``start``,
  ``schedule``/``add`` → ``create``/``event``, ...). A verb whose antonym is in the clause
  disqualifies a tool (``close_window`` for "open the window").
* Tools the model has "heard of" but may not have: :data:`HEARD_OF`, a catalogue of common
  assistant tool names. A clause that matches one of them better than any bound tool is a
  request for a tool the model does not have. Likewise :data:`HEARD_OF_PARAMS`, parameters
  common tools usually take: a clause that asks for one that the bound tool's schema lacks is a
  request for a parameter the tool does not have.
* Argument values come from the text: enum values named in it, ids shaped like the example in
  the parameter description (``e.g. ORD-1234``), ISO dates, ``HH:MM`` times, numbers next to a
  word of the parameter's name or description, quoted strings, capitalised names.
"""

from __future__ import annotations

import re
from typing import Any, Iterable

__all__ = [
    "stem",
    "stems",
    "split_clauses",
    "is_question",
    "quoted",
    "capitalised_names",
    "HEARD_OF",
    "HEARD_OF_PARAMS",
    "requested_params",
    "LOOKUP_PREFIXES",
    "is_lookup",
    "ToolView",
    "match_action",
    "rank_lookups",
    "extract",
    "AMBIGUOUS",
]

STOP = set("""
a an the my your our their his her its this that these those to of for on in at by with from and
or but if then also please pls can could would will shall should i me we us you it is are was
be been do does did have has had any some all just now right up down out so as into about there
here what when where which who how why tell let know like want need id i'd i'm it's don't
hey hi thanks thank one ones bit
""".split())

_SUFFIXES = ("ations", "ation", "ings", "ing", "ied", "ies", "ity", "ed", "es", "s", "e")


def stem(word: str) -> str:
    w = word.lower().strip("'")
    for suf in _SUFFIXES:
        if w.endswith(suf) and len(w) - len(suf) >= 3:
            w = w[: -len(suf)]
            break
    return w[:5]


_WORD = re.compile(r"[A-Za-z][A-Za-z']*")


def stems(text: str) -> set[str]:
    """Content-word stems of ``text``; identifiers are split on underscores."""
    out = set()
    for w in _WORD.findall(text.replace("_", " ")):
        if w.lower() not in STOP and len(w) > 1:
            out.add(stem(w))
    return out


def _syn(mapping: dict[str, tuple[str, ...]]) -> dict[str, set[str]]:
    return {stem(k): {stem(v) for v in vs} for k, vs in mapping.items()}


# World knowledge a language model has: which verbs mean the same action.
SYNONYMS = _syn({
    "turn": ("set", "start"), "switch": ("set", "start"), "change": ("set", "update"),
    "adjust": ("set",), "warm": ("set", "climate"), "cool": ("set", "climate"),
    "navigate": ("navigation", "start", "route"), "take": ("navigation",),
    "schedule": ("create", "event", "meeting"), "add": ("create", "event"),
    "meeting": ("event",), "reschedule": ("move",), "refund": ("issue", "refund"),
    "lower": ("open",), "raise": ("close",), "shut": ("close",),
})

_ANTONYMS = {stem(a): stem(b) for a, b in [
    ("open", "close"), ("close", "open"), ("start", "stop"), ("stop", "start"),
    ("lock", "unlock"), ("unlock", "lock"), ("create", "cancel"), ("cancel", "create"),
]}

# Tool names a model has seen in many assistants; used only to notice that the user asked for
# something the bound tools cannot do, and to name it. Descriptions are the model's own gloss.
HEARD_OF: dict[str, str] = {
    "open_window": "Open a car window.",
    "close_window": "Close a car window.",
    "open_sunroof": "Open the sunroof.",
    "set_climate": "Set the climate control temperature.",
    "set_seat_heater": "Set a seat heater level.",
    "start_navigation": "Navigate to a place.",
    "lock_doors": "Lock the doors.",
    "unlock_doors": "Unlock the doors.",
    "play_music": "Play music or a song.",
    "call_contact": "Phone a person.",
    "send_message": "Send a text message to a person.",
    "send_email": "Send an email.",
    "issue_refund": "Refund an order.",
    "cancel_order": "Cancel an order.",
    "return_item": "Start a return for an item.",
    "exchange_item": "Exchange an item for another size or colour.",
    "update_address": "Change the shipping address of an order.",
    "create_event": "Create or schedule a calendar event.",
    "move_event": "Move or reschedule a calendar event.",
    "cancel_event": "Cancel a calendar event.",
    "book_room": "Book a meeting room.",
    "book_flight": "Book a flight.",
    "book_hotel": "Book a hotel.",
    "set_alarm": "Set an alarm.",
    "set_reminder": "Set a reminder.",
}

HEARD_OF_PARAMS: dict[str, dict[str, dict[str, Any]]] = {
    "set_climate": {"fan_speed": {"type": "integer", "description": "Fan speed, 1 (low) to 5 (high)."}},
    "cancel_order": {"cancel_reason": {"enum": ["ordered_by_mistake", "found_cheaper", "arrives_too_late"],
                                       "description": "Why the order is cancelled."}},
    "create_event": {"attendee_email": {"type": "string", "description": "Email of an invited attendee."}},
    "open_window": {"percent": {"type": "integer", "description": "How far to open it, in percent."}},
    "issue_refund": {"amount": {"type": "number", "description": "Amount to refund."}},
}

LOOKUP_PREFIXES = ("get_", "check_", "list_", "find_", "search_", "lookup_")


def is_lookup(name: str) -> bool:
    return name.startswith(LOOKUP_PREFIXES)


# ---------------------------------------------------------------------- clauses


_QUOTE = re.compile(r'"([^"]+)"')
_QUESTION_START = re.compile(
    r"^(what|when|where|which|who|how|is|are|does|do|can you tell|tell me|show me|let me know)\b",
    re.IGNORECASE,
)


def quoted(text: str) -> list[str]:
    return _QUOTE.findall(text)


def split_clauses(text: str) -> list[str]:
    """Sentences, then coordinated parts; quoted strings are never split."""
    slots: list[str] = []

    def hide(m: re.Match[str]) -> str:
        slots.append(m.group(0))
        return f"\x00{len(slots) - 1}\x00"

    hidden = _QUOTE.sub(hide, text)
    parts: list[str] = []
    for sentence in re.split(r"(?<=[.?!])\s+", hidden):
        for piece in re.split(r"\s*[:;]\s+|,?\s+(?:and then|and|then|also)\s+", sentence):
            piece = re.sub(r"^(?:also|then|and|please|hey)\b[,]?\s*", "", piece.strip(), flags=re.I)
            if piece:
                parts.append(piece)
    return [re.sub(r"\x00(\d+)\x00", lambda m: slots[int(m.group(1))], p) for p in parts]


def is_question(clause: str) -> bool:
    c = clause.strip()
    return c.endswith("?") or bool(_QUESTION_START.match(c))


_SENTENCE_WORDS = STOP | {"schedule", "move", "add", "cancel", "refund", "open", "close", "set",
                          "turn", "navigate", "order", "change", "book", "the"}


def capitalised_names(text: str) -> list[str]:
    """Runs of capitalised words outside quotes that are not ordinary sentence words."""
    bare = _QUOTE.sub(" | ", text)
    names, run = [], []
    for tok in re.findall(r"[A-Za-z][A-Za-z'-]*|[^A-Za-z\s]", bare):
        if tok[0].isupper() and tok.lower() not in _SENTENCE_WORDS and len(tok) > 1:
            run.append(tok)
        else:
            if run:
                names.append(" ".join(run))
            run = []
    if run:
        names.append(" ".join(run))
    return names


# ---------------------------------------------------------------------- tools


class ToolView:
    """A tool as the model sees it: name, description and JSON parameter schema."""

    def __init__(self, spec: dict[str, Any]) -> None:
        self.name: str = spec["name"]
        self.description: str = spec.get("description") or ""
        params = spec.get("parameters") or {}
        self.params: dict[str, dict[str, Any]] = dict(params.get("properties") or {})
        self.required: list[str] = list(params.get("required") or [])
        # The description without its policy sentence, for topic matching only.
        self.topic = stems(re.split(r"\bPolicy:", self.description)[0])
        self.name_stems = stems(self.name)
        self.verb = stem(self.name.split("_")[0])

    @property
    def lookup(self) -> bool:
        return is_lookup(self.name)

    def mentions(self, word: str) -> bool:
        """Whether the description names ``word`` as an identifier (``order_id``, ``email``)."""
        return re.search(rf"(?<![A-Za-z0-9_]){re.escape(word)}(?![A-Za-z0-9_])",
                         self.description) is not None

    def named_in_description(self, names: Iterable[str]) -> list[str]:
        return [n for n in names if n != self.name and self.mentions(n)]


def _expand(clause_stems: set[str]) -> set[str]:
    out = set(clause_stems)
    for s in clause_stems:
        out |= SYNONYMS.get(s, set())
    return out


def _score(view: ToolView, raw: set[str], expanded: set[str]) -> int:
    """Overlap score of an action tool with a clause; 0 unless the clause asks for its verb."""
    anti = _ANTONYMS.get(view.verb)
    if anti and anti in raw and view.verb not in raw:
        return 0
    if view.verb not in expanded:
        return 0
    return 2 * len(view.name_stems & expanded) + len(view.topic & expanded)


def requested_params(clause: str, view: ToolView) -> dict[str, dict[str, Any]]:
    """Parameters of :data:`HEARD_OF_PARAMS` that ``clause`` asks ``view``'s tool for but that
    its schema does not declare, with the schema the model assumes for each."""
    words = stems(clause)
    out = {}
    for param, prop in HEARD_OF_PARAMS.get(view.name, {}).items():
        if param in view.params:
            continue
        cues = (stems(param) | stems(prop.get("description", ""))) - view.name_stems
        if cues & words:
            out[param] = prop
    return out


def match_action(
    clause: str, bound: dict[str, ToolView], extra_heard: dict[str, str] | None = None
) -> tuple[str | None, bool]:
    """The action tool a clause asks for, and whether it is among the bound tools.

    A tool matches only if the clause contains its verb (``set`` in ``set_climate``) or a
    synonym of it, with a score of at least 3. A tool the model has only heard of (``HEARD_OF``
    plus ``extra_heard``, e.g. tools a skill names) must beat every bound tool.
    """
    raw = stems(clause)
    expanded = _expand(raw)
    best_bound, best_score = None, 0
    for view in bound.values():
        if view.lookup:
            continue
        s = _score(view, raw, expanded)
        if s > best_score:
            best_bound, best_score = view.name, s
    best_heard, heard_score = None, 0
    for name, desc in {**(extra_heard or {}), **HEARD_OF}.items():
        if name in bound:
            continue
        s = _score(ToolView({"name": name, "description": desc}), raw, expanded)
        if s > heard_score:
            best_heard, heard_score = name, s
    if best_heard is not None and heard_score >= 3 and heard_score > best_score:
        return best_heard, False
    if best_bound is not None and best_score >= 3:
        return best_bound, True
    return None, False


def rank_lookups(clause: str, bound: dict[str, ToolView], fillable: dict[str, int]) -> list[str]:
    """Lookup tools by relevance to a question; ``fillable`` adds one per argument the clause gives."""
    raw = stems(clause)
    expanded = _expand(raw)
    scored = []
    for view in bound.values():
        if not view.lookup:
            continue
        s = 2 * len(view.name_stems & expanded) + len(view.topic & expanded)
        if s > 0:
            scored.append((s + fillable.get(view.name, 0), view.name))
    scored.sort(key=lambda x: -x[0])
    return [name for _, name in scored]


# ---------------------------------------------------------------------- argument values


AMBIGUOUS = object()
"""Sentinel: the text names more than one value for a parameter."""

_DATE = re.compile(r"\b\d{4}-\d{2}-\d{2}\b")
_TIME = re.compile(r"\b\d{1,2}:\d{2}\b")
_EMAIL = re.compile(r"\b[\w.+-]+@[\w-]+\.[\w.]+\b")
_NUMBER = re.compile(r"(?<![\w:.-])\d+(?:\.\d+)?(?![\w:-]|\.\d)")


def _types(prop: dict[str, Any]) -> set[str]:
    if "type" in prop:
        return {prop["type"]}
    return {p.get("type") for p in prop.get("anyOf", []) if p.get("type") != "null"}


def _enum(prop: dict[str, Any]) -> list[str] | None:
    if "enum" in prop:
        return list(prop["enum"])
    for p in prop.get("anyOf", []):
        if "enum" in p:
            return list(p["enum"])
    return None


def _one(values: list[Any]) -> Any:
    distinct = list(dict.fromkeys(values))
    if len(distinct) == 1:
        return distinct[0]
    return AMBIGUOUS if distinct else None


def _numbers(text: str, param: str, desc: str, numeric_params: int) -> list[Any]:
    cues = stems(param) | stems(desc)
    words = re.findall(r"\S+", text)
    found: list[tuple[int, str]] = []
    for i, w in enumerate(words):
        m = _NUMBER.fullmatch(w.strip(",.;!?()"))
        if not m:
            continue
        near = " ".join(words[max(0, i - 2): i] + words[i + 1: i + 3])
        found.append((len(stems(near) & cues), m.group(0)))
    hits = [v for s, v in found if s > 0]
    if hits:
        return hits[:1]
    if len(found) == 1 and numeric_params == 1:
        return [found[0][1]]
    return []


def _extract_one(param: str, prop: dict[str, Any], text: str, numeric_params: int) -> Any:
    desc = prop.get("description") or ""
    enum = _enum(prop)
    if enum:
        hits = [v for v in enum
                if re.search(rf"\b{re.escape(str(v)).replace('_', '[ _]')}\b", text, re.IGNORECASE)]
        return _one(hits)
    types = _types(prop)
    if "email" in param:
        return _one(_EMAIL.findall(text))
    example = re.search(r"\b([A-Z]{2,5})-\d+\b", desc)
    if example:
        return _one(re.findall(rf"\b{example.group(1)}-\d+\b", text, re.IGNORECASE))
    if "date" in param or "YYYY-MM-DD" in desc:
        return _one(_DATE.findall(text))
    if param == "time" or param.endswith("_time") or "HH:MM" in desc:
        return _one(_TIME.findall(text))
    if types & {"number", "integer"}:
        nums = _numbers(text, param, desc, numeric_params)
        if not nums:
            return None
        value = float(nums[0])
        return int(value) if "integer" in types or value.is_integer() else value
    if "name" in param:
        return _one(capitalised_names(text)[:1])
    return _one(quoted(text)[:1])


def extract(param: str, prop: dict[str, Any], texts: Iterable[str], numeric_params: int = 1) -> Any:
    """The value of ``param`` stated in ``texts`` (first text that names one), ``AMBIGUOUS`` or None."""
    for text in texts:
        value = _extract_one(param, prop, text, numeric_params)
        if value is not None:
            return value
    return None
