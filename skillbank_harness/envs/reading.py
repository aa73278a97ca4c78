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
* Names the model half-knows come from its own reading of the request, never from a list of
  what an environment lacks. A clause that asks for an action no bound tool fits ("book a
  meeting room") is a request for a tool it does not have, named the way it names tools: the
  clause's verb (as its tools spell verbs: ``turn`` -> ``set``) and the head noun of its object
  (``book_room``; ``refund_order`` for "refund order ORD-1", whatever the missing tool is really
  called). A tool a skill names as unavailable is recognised by the words of its name. Likewise
  a setting the clause names with a value ("with fan speed 4") that the tool's schema has no
  parameter for is, to the model, a parameter called after those words (``fan_speed``).
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
    "ACTION_VERBS",
    "derived_tool",
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

# Verbs that open an imperative clause asking for an action (world knowledge of a model), and
# how the model's tool names spell them.
ACTION_VERBS = {stem(v) for v in """
open close book refund cancel move reschedule send play call lock unlock turn set start stop
schedule add change update create navigate buy return exchange remind reserve invite share
""".split()}
_VERB_SPELLING = {stem(k): v for k, v in {
    "turn": "set", "switch": "set", "adjust": "set", "schedule": "create", "add": "create",
    "reschedule": "move", "change": "update", "navigate": "start",
}.items()}
_PREPOSITIONS = set("to with on at for from of in by into about as".split())

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


_WITH_VALUE = re.compile(r"\bwith (?:the |a |an )?([a-z]+(?: [a-z]+)?) (\d+(?:\.\d+)?)\b")
_NOTE_THE = re.compile(r"\b(?:note|record|include|add) the ([a-z]+(?: [a-z]+)?)\s*(?::\s*(.+))?$")


def requested_params(clause: str, view: ToolView, request: str = "") -> dict[str, dict[str, Any]]:
    """Settings ``clause`` names for ``view``'s tool that its schema has no parameter for, as the
    model would call them (``fan_speed`` for "with fan speed 4", ``cancel_reason`` for "note the
    cancel reason: ..."), each with the value the request gives (``"value"`` in the schema the
    model assumes). A setting whose words the tool's name, description or parameters already
    explain is not missing."""
    explained = set(view.name_stems) | view.topic
    for param, prop in view.params.items():
        explained |= stems(param) | stems(prop.get("description") or "")
    out: dict[str, dict[str, Any]] = {}
    phrases: list[tuple[str, Any]] = []
    for m in _WITH_VALUE.finditer(clause):
        number = float(m.group(2))
        phrases.append((m.group(1), int(number) if number.is_integer() else number))
    m = _NOTE_THE.search(clause)
    if m:
        rest = m.group(2)
        if not rest and ":" in request:
            rest = request.split(":", 1)[1].strip()  # the value was split off as its own clause
        phrases.append((m.group(1), (rest or m.group(1)).rstrip(".")))
    for words, value in phrases:
        if not stems(words) or stems(words) <= explained:
            continue
        name = "_".join(w for w in words.split() if w not in STOP)
        out[name] = {"description": words, "value": value}
    return out


def derived_tool(clause: str, bound: dict[str, ToolView]) -> str | None:
    """The name the model gives a tool for an imperative clause: verb + head noun of the object
    (``book_room`` for "book a meeting room"); None if the clause does not open with an action
    verb. With no object noun (the object is a quoted title) the noun is the one its own tools'
    names use most (``move_event`` for 'Move "Standup" to 10:00' next to ``create_event``)."""
    bare = re.sub(r"\b[A-Z]{2,5}-\d+\b|\d[\d:.-]*", " ", _QUOTE.sub(" ", clause))
    tokens = re.findall(r"[A-Za-z][A-Za-z']*", bare)
    while tokens and tokens[0].lower() in STOP:
        tokens = tokens[1:]
    if not tokens or stem(tokens[0]) not in ACTION_VERBS:
        return None
    verb = _VERB_SPELLING.get(stem(tokens[0]), tokens[0].lower())
    noun = None
    for tok in tokens[1:]:
        low = tok.lower()
        if low in _PREPOSITIONS:
            break
        if low in STOP or tok[0].isupper():
            continue
        noun = low
    if noun is None:
        nouns = [n.split("_", 1)[1] for n in bound if "_" in n and not is_lookup(n)]
        noun = max(sorted(set(nouns)), key=nouns.count) if nouns else None
    return f"{verb}_{noun}" if noun else None


def _fits_object(view: ToolView, raw: set[str], expanded: set[str]) -> bool:
    """Whether the clause speaks of what the tool acts on, not only of its verb: "turn the seat
    heater" shares ``turn``/``set`` with ``set_climate`` but nothing it acts on."""
    verbs = ACTION_VERBS | {view.verb}
    return bool(((view.name_stems - {view.verb}) & expanded) or ((view.topic - verbs) & (raw - verbs)))


def match_action(
    clause: str, bound: dict[str, ToolView], extra_heard: dict[str, str] | None = None
) -> tuple[str | None, bool]:
    """The action tool a clause asks for, and whether it is among the bound tools.

    A bound tool matches only if the clause contains its verb (``set`` in ``set_climate``) or a
    synonym of it, with a score of at least 3. A tool named in ``extra_heard`` (tools a skill
    says may be missing, described by their name's words) must beat every bound tool. A clause
    that no tool fits but that opens with an action verb asks for a tool the model derives
    (:func:`derived_tool`), not bound.
    """
    raw = stems(clause)
    expanded = _expand(raw)
    best_bound, best_score = None, 0
    for view in bound.values():
        if view.lookup or not _fits_object(view, raw, expanded):
            continue
        s = _score(view, raw, expanded)
        if s > best_score:
            best_bound, best_score = view.name, s
    best_heard, heard_score = None, 0
    for name, desc in (extra_heard or {}).items():
        if name in bound:
            continue
        s = _score(ToolView({"name": name, "description": desc}), raw, expanded)
        if s > heard_score:
            best_heard, heard_score = name, s
    if best_heard is not None and heard_score >= 2 and heard_score > best_score:
        return best_heard, False
    if best_bound is not None and best_score >= 3:
        return best_bound, True
    derived = derived_tool(clause, bound)
    if derived is not None:
        return derived, derived in bound  # 'Move "Standup" to 10:00' -> move_event, bound
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
